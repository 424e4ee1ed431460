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
# Each "full" build also yields its debug twins (tests/debug-kernel/build.sh
# SERIES VARIANT): release <upstream>-vmamerge-VARIANT, UTS version "#1 SMP
# PREEMPT_DYNAMIC Debian <debian-version> vmamerge-VARIANT", tier "debug";
# VARIANT "debug" (KASAN, make check boots it) and "kcsan" (the data-race
# detector, built and booted on demand: docs/testing.md).
/^[ \t]*(#|$)/ { next }
NF < 5 { printf "builds.list:%d: too few columns\n", NR > "/dev/stderr"; exit 1 }
series != "all" && $1 != series { next }
{
	uts = $0
	for (i = 1; i <= 4; i++)
		sub(/^[ \t]*[^ \t]+[ \t]+/, "", uts)
	add($1, $2, uts, $3, $4)
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
	S[n] = s; R[n] = r; U[n] = u; V[n] = v; T[n] = t
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
		printf "\t{ \"%s\", \"%s\", \"%s\", \"%s\", \"%s\" }, \\\n",
		       S[i], R[i], U[i], V[i], T[i]
	print "\t/* end */"
	if (out == "module")
		for (i = 1; i <= n; i++)
			printf "MODULE_INFO(validated, \"%s %s\");\n", R[i], U[i]
}
