// SPDX-License-Identifier: GPL-2.0
/*
 * The exact kernel builds this module was validated against.
 *
 * The replacement functions mirror the stock functions of particular
 * builds, and the private declarations of internal structures describe
 * their layout, so the module refuses every other build at load time.
 * The builds come from module/builds.list, the one list (make check, dkms,
 * the CLI and the README read it too): Kbuild generates
 * validated-builds.h from it for the series being built, with the table
 * below and one "validated" modinfo line per build, so that tools can tell
 * before loading (modinfo -F validated vmamerge).  A build is added with
 * `make port KVER=<release>` (tools/port.sh), never by hand.
 *
 * Each "full" build has two debug twins: the same Debian linux-source,
 * built by tests/debug-kernel/build.sh with the project's debug
 * configuration (KASAN, lockdep, DEBUG_VM, ...; the KCSAN twin has the
 * data-race detector instead of KASAN).  The replacement functions are written
 * from those sources and compiled against the tree they load into, so the
 * twin runs the same code under the checkers; build.sh stamps its UTS
 * version with the Debian version it was built from.
 *
 * A build that is not listed gets into the table when module/admit.sh
 * proved its image equivalent to a listed build's at build time (tier
 * "equivalent"): every function, struct and config option of that
 * build's fingerprint identical.  The build id of the image it checked
 * is recorded, as is that of every listed build's image
 * (module/fingerprints/), and the module compares it with the running
 * kernel's: the release and UTS version alone do not prove that the
 * running text is the image that was compared.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/utsname.h>
#include <linux/buildid.h>
#include <linux/kobject.h>
#include <linux/sysfs.h>
#include <generated/utsrelease.h>

#include "vmamerge.h"
#include "builds.h"
#include "validated-builds.h"	/* generated: VMAMERGE_VALIDATED_BUILDS */

static const struct vmamerge_build vmamerge_validated_builds[] = {
	VMAMERGE_VALIDATED_BUILDS
};

/* The table entry of the running kernel, once the load check passed. */
static const struct vmamerge_build *vmamerge_running;

static bool vmamerge_build_matches(const struct vmamerge_build *b)
{
	return !strcmp(b->release, init_utsname()->release) &&
	       !strcmp(b->version, init_utsname()->version);
}

/*
 * The running kernel's build id, which it reads from its own .notes at
 * boot; NULL when its config keeps none.
 */
static const unsigned char *vmamerge_kernel_build_id(void)
{
#if VMAMERGE_HAVE_VMLINUX_BUILD_ID
	return vmlinux_build_id;
#else
	return NULL;
#endif
}

/*
 * Is the running kernel's build id the one recorded for @b?  An empty
 * record (the debug twins, built on the test machine) is not checked; a
 * record for a kernel that keeps no build id cannot be proven.
 */
static bool vmamerge_build_id_matches(const struct vmamerge_build *b)
{
	const unsigned char *id = vmamerge_kernel_build_id();
	u8 want[BUILD_ID_SIZE_MAX];
	size_t len = strlen(b->build_id) / 2;

	if (!*b->build_id)
		return true;
	if (!id || len > BUILD_ID_SIZE_MAX || hex2bin(want, b->build_id, len))
		return false;
	return !memcmp(want, id, len);
}

/* Why the running kernel is refused although its release and version match. */
static void vmamerge_report_build_id(const struct vmamerge_build *b)
{
	const unsigned char *id = vmamerge_kernel_build_id();

	if (!id) {
		pr_err("refusing to load: kernel %s keeps no build id, so it cannot be shown to be the image with build id %s\n",
		       b->release, b->build_id);
		return;
	}
	pr_err("refusing to load: kernel %s has build id %*phN, but the image %s had %s\n",
	       b->release, BUILD_ID_SIZE_MAX, id,
	       !strcmp(b->tier, "equivalent") ? "checked when this module was built" :
	       "validated", b->build_id);
	pr_err("the running kernel is another image of the same release: rebuild the module for it ('dkms install vmamerge/%s -k %s --force' or 'make KVER=%s')\n",
	       VMAMERGE_VERSION_STR, b->release, b->release);
}

static ssize_t build_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	const struct vmamerge_build *b = vmamerge_running;

	if (!*b->equivalent_to)
		return sysfs_emit(buf, "%s\n", b->tier);
	return sysfs_emit(buf, "%s %s\n", b->tier, b->equivalent_to);
}

/*
 * /sys/module/vmamerge/build: the tier of the running build ("full",
 * "smoke", "debug", or "equivalent REFERENCE"), readable under lockdown.
 */
static struct kobj_attribute vmamerge_build_attr = __ATTR_RO(build);

int vmamerge_build_sysfs_init(void)
{
	return sysfs_create_file(&THIS_MODULE->mkobj.kobj,
				 &vmamerge_build_attr.attr);
}

void vmamerge_build_sysfs_exit(void)
{
	sysfs_remove_file(&THIS_MODULE->mkobj.kobj, &vmamerge_build_attr.attr);
}

/* The tier line of the load message. */
static void vmamerge_report_tier(const struct vmamerge_build *b)
{
	if (*b->equivalent_to)
		pr_info("kernel %s: tier %s (to the validated build %s; build id %s)\n",
			b->release, b->tier, b->equivalent_to, b->build_id);
	else
		pr_info("kernel %s: tier %s\n", b->release, b->tier);
}

/*
 * Say which build runs, which validated build is nearest, and how to port
 * this one (docs/testing.md, "Porting to a new build").
 */
static void vmamerge_report_unvalidated(void)
{
	const char *rel = init_utsname()->release;
	int i;

	pr_err("refusing to load: kernel %s %s is not a validated build\n",
	       rel, init_utsname()->version);
	i = vmamerge_nearest_build(vmamerge_validated_builds,
				   ARRAY_SIZE(vmamerge_validated_builds), rel,
				   init_utsname()->version);
	if (i >= 0)
		pr_err("nearest validated build: %s (%s)\n",
		       vmamerge_validated_builds[i].release,
		       vmamerge_validated_builds[i].debver);
	pr_err("rebuild the module for it so that its image is checked for equivalence ('dkms install vmamerge/%s -k %s'); if that refuses, port it: make port KVER=%s (docs/testing.md); validated builds: modinfo -F validated vmamerge\n",
	       VMAMERGE_VERSION_STR, rel, rel);
}

/*
 * vmamerge_check_running_build - is the running kernel one we know?
 *
 * Also refuses a module built against the headers of a different release
 * than the one running: the glue was chosen for the headers' series.
 */
int vmamerge_check_running_build(void)
{
	int i;

	if (strcmp(UTS_RELEASE, init_utsname()->release)) {
		pr_err("refusing to load: built for %s but running %s; rebuild with 'make KVER=%s' or 'dkms install'\n",
		       UTS_RELEASE, init_utsname()->release,
		       init_utsname()->release);
		return -ENOEXEC;
	}
	for (i = 0; i < ARRAY_SIZE(vmamerge_validated_builds); i++) {
		const struct vmamerge_build *b = &vmamerge_validated_builds[i];

		if (!vmamerge_build_matches(b))
			continue;
		if (!vmamerge_build_id_matches(b)) {
			vmamerge_report_build_id(b);
			return -ENOEXEC;
		}
		vmamerge_running = b;
		vmamerge_report_tier(b);
		return 0;
	}
	vmamerge_report_unvalidated();
	return -ENOEXEC;
}
