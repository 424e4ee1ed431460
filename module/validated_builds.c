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
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/utsname.h>
#include <generated/utsrelease.h>

#include "vmamerge.h"
#include "builds.h"
#include "validated-builds.h"	/* generated: VMAMERGE_VALIDATED_BUILDS */

static const struct vmamerge_build vmamerge_validated_builds[] = {
	VMAMERGE_VALIDATED_BUILDS
};

static bool vmamerge_build_matches(const struct vmamerge_build *b)
{
	return !strcmp(b->release, init_utsname()->release) &&
	       !strcmp(b->version, init_utsname()->version);
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
	pr_err("port it from the vmamerge source: make port KVER=%s (docs/testing.md); validated builds: modinfo -F validated vmamerge\n",
	       rel);
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
