# SPDX-License-Identifier: GPL-2.0
#
# builds.awk - module/builds.list to C, for one kernel series.
#
#   awk -v series=6.12 -v out=module -f builds.awk builds.list
#       the module's table and modinfo lines (Kbuild: validated-builds.h)
#   awk -v series=all -v out=cli -f builds.awk builds.list
#       the CLI's table (userspace/Makefile: builds.h)
#   awk -v series=all -v out=releases -f builds.awk builds.list
#       the releases, one a line (dkms.conf, tools/kernel-postinst)
#
# -v fpdir=DIR: each listed build's build id from DIR/RELEASE.kfp (its
# fingerprint's "build-id" line), which the module checks at load.
# A second file, admitted.list (module/admit.sh writes it when it admits
# an unlisted build by equivalence), adds that build:
#   admitted SERIES RELEASE DEBIAN-VERSION REFERENCE BUILD-ID UTS-VERSION...
# with tier "equivalent" (to REFERENCE, a listed build).
#
# Each "full" build also yields its debug twins (tests/debug-kernel/build.sh
# SERIES VARIANT): release <upstream>-vmamerge-VARIANT, UTS version "#1 SMP
# PREEMPT_DYNAMIC Debian <debian-version> vmamerge-VARIANT", tier "debug";
# VARIANT "debug" (KASAN, make check boots it) and "kcsan" (the data-race
# detector, built and booted on demand: docs/testing.md).
/^[ \t]*(#|$)/ { next }
$1 == "admitted" {
	if (NF < 7) {
		printf "%s:%d: too few columns\n", FILENAME, FNR > "/dev/stderr"
		exit 1
	}
	if (series != "all" && $2 != series)
		next
	uts = $0
	for (i = 1; i <= 6; i++)
		sub(/^[ \t]*[^ \t]+[ \t]+/, "", uts)
	add($2, $3, uts, $4, "equivalent")
	E[n] = $5; B[n] = $6
	next
}
NF < 5 { printf "builds.list:%d: too few columns\n", NR > "/dev/stderr"; exit 1 }
series != "all" && $1 != series { next }
{
	uts = $0
	for (i = 1; i <= 4; i++)
		sub(/^[ \t]*[^ \t]+[ \t]+/, "", uts)
	add($1, $2, uts, $3, $4)
	B[n] = build_id($2)
	if ($4 == "full") {
		up = $3
		sub(/-.*/, "", up)
		twin($1, up, $3, "debug")
		twin($1, up, $3, "kcsan")
	}
}
function twin(s, up, v, variant) {
	add(s, up "-vmamerge-" variant,
	    "#1 SMP PREEMPT_DYNAMIC Debian " v " vmamerge-" variant, v, "debug")
}
function add(s, r, u, v, t) {
	n++
	S[n] = s; R[n] = r; U[n] = u; V[n] = v; T[n] = t; E[n] = ""; B[n] = ""
}
# the build id in fpdir/RELEASE.kfp, "" without fpdir or file
function build_id(r,	f, line, id) {
	if (fpdir == "")
		return ""
	f = fpdir "/" r ".kfp"
	id = ""
	while ((getline line < f) > 0)
		if (line ~ /^build-id [0-9a-f]+$/) {
			id = substr(line, 10)
			break
		}
	close(f)
	return id
}
END {
	if (out == "releases") {
		for (i = 1; i <= n; i++)
			print R[i]
		exit
	}
	print "/* generated from module/builds.list: do not edit */"
	print "#define VMAMERGE_VALIDATED_BUILDS \\"
	for (i = 1; i <= n; i++)
		printf "\t{ \"%s\", \"%s\", \"%s\", \"%s\", \"%s\", \"%s\", \"%s\" }, \\\n",
		       S[i], R[i], U[i], V[i], T[i], E[i], B[i]
	print "\t/* end */"
	if (out == "module")
		for (i = 1; i <= n; i++) {
			if (T[i] == "equivalent")
				printf "MODULE_INFO(equivalent, \"%s %s = %s, build id %s\");\n",
				       R[i], U[i], E[i], B[i]
			else
				printf "MODULE_INFO(validated, \"%s %s\");\n", R[i], U[i]
			if (R[i] == release)
				printf "MODULE_INFO(tier, \"%s%s\");\n", T[i],
				       E[i] == "" ? "" : " " E[i]
		}
}
