/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The validated builds (module/builds.list) and the choice of the nearest
 * one, shared by the module (validated_builds.c) and the CLI (status).
 * Both include the table generated from builds.list by builds.awk:
 * VMAMERGE_VALIDATED_BUILDS.  Only strcmp()/strstr()/strncmp() are used,
 * which the kernel and libc both have.
 */
#ifndef _VMAMERGE_BUILDS_H
#define _VMAMERGE_BUILDS_H

struct vmamerge_build {
	const char *series;	/* "6.12" */
	const char *release;	/* utsname()->release */
	const char *version;	/* utsname()->version, exactly */
	const char *debver;	/* the Debian package version */
	/* "full", "smoke", "debug" (a full build's twins) or "equivalent" */
	const char *tier;
	const char *equivalent_to; /* equivalent: the listed build; else "" */
	/* NT_GNU_BUILD_ID of the image checked or validated, in hex; "" for twins */
	const char *build_id;
};

/*
 * vmamerge_upstream - the upstream version a..b..c of the first "A.B.C" in
 * @s, as one number (a << 20 | b << 10 | c), or -1.
 */
static inline long vmamerge_upstream(const char *s)
{
	long part[3] = { 0, 0, 0 };
	int i = 0;

	while (*s && (*s < '0' || *s > '9'))
		s++;
	for (; *s && i < 3; s++) {
		if (*s >= '0' && *s <= '9')
			part[i] = part[i] * 10 + (*s - '0');
		else if (*s == '.' && i < 2)
			i++;
		else
			break;
	}
	if (i != 2 || part[1] > 1023 || part[2] > 1023)
		return -1;
	return part[0] << 20 | part[1] << 10 | part[2];
}

/* The Debian generation a release is built for: "+deb13" -> '3'; 6.1: '2' */
static inline char vmamerge_debian_gen(const char *release)
{
	const char *p = strstr(release, "+deb1");

	return p ? p[5] : '2';
}

/*
 * vmamerge_nearest_build - the validated build a port of @release (UTS
 * version @version) would be compared with: a stock build of the same
 * series, the closest upstream version (from "Debian A.B.C" in @version),
 * preferring the same Debian generation (+deb12, +deb13), then the newer.
 * Returns an index into @b, or -1 when the series has no build.
 */
static inline int vmamerge_nearest_build(const struct vmamerge_build *b,
					 int n, const char *release,
					 const char *version)
{
	const char *deb = strstr(version, "Debian ");
	long want = vmamerge_upstream(deb ? deb : "");
	long dist, best_dist = -1, up;
	int i, best = -1;

	for (i = 0; i < n; i++) {
		if (!strcmp(b[i].tier, "debug") || !strcmp(b[i].tier, "equivalent") ||
		    strncmp(release, b[i].series, strlen(b[i].series)) ||
		    release[strlen(b[i].series)] != '.')
			continue;
		up = vmamerge_upstream(b[i].debver);
		/* unknown upstream version: the newest build */
		dist = want < 0 ? ((1L << 30) - up) * 4 :
		       (up > want ? up - want : want - up) * 4 + (up < want);
		if (vmamerge_debian_gen(release) != vmamerge_debian_gen(b[i].release))
			dist += 2;
		if (best < 0 || dist < best_dist) {
			best = i;
			best_dist = dist;
		}
	}
	return best;
}

#endif /* _VMAMERGE_BUILDS_H */
