// SPDX-License-Identifier: GPL-2.0
/*
 * The exact kernel builds this module was validated against.
 *
 * The replacement functions mirror the stock functions of one particular
 * build, and the private declarations of internal structures describe that
 * build's layout, so the module refuses every other build at load time.
 * tests/matrix pins the same builds for "make check"; adding a build means
 * adding it to both (README: "Adding a kernel build").
 *
 * Each Debian build has a debug twin: the same Debian linux-source, built
 * by tests/debug-kernel/build.sh with the project's debug configuration
 * (KASAN, lockdep, DEBUG_VM, ...).  The replacement functions are written
 * from those sources and compiled against the tree they load into, so the
 * twin runs the same code under the checkers; build.sh stamps its UTS
 * version with the Debian version it was built from.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/utsname.h>
#include <generated/utsrelease.h>

#include "vmamerge.h"

struct vmamerge_build {
	const char *release;	/* utsname()->release */
	const char *version;	/* utsname()->version, exactly */
};

static const struct vmamerge_build vmamerge_validated_builds[] = {
	{ "6.1.0-56-amd64",
	  "#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-11-16)" },
	{ "6.12.117+deb12-amd64",
	  "#1 SMP PREEMPT_DYNAMIC Debian 6.12.117-1~deb12u1 (2026-11-14)" },
	/* debug twins (tests/debug-kernel/build.sh) */
	{ "6.1.192-vmamerge-debug",
	  "#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 vmamerge-debug" },
	{ "6.12.117-vmamerge-debug",
	  "#1 SMP PREEMPT_DYNAMIC Debian 6.12.117-1~deb12u1 vmamerge-debug" },
};

static bool vmamerge_build_matches(const struct vmamerge_build *b)
{
	return !strcmp(b->release, init_utsname()->release) &&
	       !strcmp(b->version, init_utsname()->version);
}

static void vmamerge_report_unvalidated(void)
{
	int i;

	pr_err("refusing to load: kernel %s %s is not a validated build\n",
	       init_utsname()->release, init_utsname()->version);
	for (i = 0; i < ARRAY_SIZE(vmamerge_validated_builds); i++)
		pr_err("validated: %s %s\n",
		       vmamerge_validated_builds[i].release,
		       vmamerge_validated_builds[i].version);
	pr_err("install a validated kernel, or validate this one (README: \"Adding a kernel build\")\n");
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
	for (i = 0; i < ARRAY_SIZE(vmamerge_validated_builds); i++)
		if (vmamerge_build_matches(&vmamerge_validated_builds[i]))
			return 0;
	vmamerge_report_unvalidated();
	return -ENOEXEC;
}
