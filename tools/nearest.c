// SPDX-License-Identifier: GPL-2.0
/*
 * nearest RELEASE UTS-VERSION: the validated build (module/builds.list) a
 * port of RELEASE starts from, by the rule the module and the CLI use
 * (module/builds.h).  Prints its release; exit 1 when the series has none.
 * Built by tools/port.sh with the table builds.awk generates.
 */
#include <stdio.h>
#include <string.h>

#include "builds.h"
#include "validated-builds.h"

static const struct vmamerge_build builds[] = { VMAMERGE_VALIDATED_BUILDS };

int main(int argc, char **argv)
{
	int i;

	if (argc != 3) {
		fprintf(stderr, "usage: nearest RELEASE UTS-VERSION\n");
		return 2;
	}
	i = vmamerge_nearest_build(builds, sizeof(builds) / sizeof(builds[0]),
				   argv[1], argv[2]);
	if (i < 0)
		return 1;
	printf("%s\n", builds[i].release);
	return 0;
}
