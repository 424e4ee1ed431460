// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs vmamerge/{mode,features,stats}: formats, every accepted write,
 * malformed writes (EINVAL, nothing changes, all-or-nothing), read-only
 * stats, unprivileged writes.  Cross-checks each state with GET_CONFIG.
 * Leaves the defaults (optin, all features) behind.
 */
#include "tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME_(id, name) name,
static const char *const counter_names[] = { VMAMERGE_COUNTERS(NAME_) };
#undef NAME_

static int dev = -1;

static const char *const mode_str[] = {
	"always optin [never]", "always [optin] never", "[always] optin never",
};
static const char *const feat_str[] = {
	"renumber transplant", "[renumber] transplant",
	"renumber [transplant]", "[renumber] [transplant]",
};

static void show(const char *s, char *out, size_t len)
{
	size_t i, n = 0;

	for (i = 0; s[i] && n + 4 < len; i++) {
		if (s[i] == '\n') {
			out[n++] = '\\';
			out[n++] = 'n';
		} else {
			out[n++] = s[i];
		}
	}
	out[n] = 0;
}

/* File reads want; GET_CONFIG agrees (field: 0 mode, 1 features). */
static int expect_read(const char *path, const char *want, int field,
		       uint32_t value, const char *ctx)
{
	struct vmamerge_config c;
	char b[256];
	int r = read_file(path, b, sizeof(b)), good;

	good = r >= 0 && !strcmp(b, want);
	if (!ok(good, "%s: %s reads '%s'", ctx, strrchr(path, '/') + 1, want))
		diag("got %s'%s'", r < 0 ? errname(-r) : "", r < 0 ? "" : b);
	if (dev >= 0) {
		r = vm_get_config(dev, &c);
		if (r || (field == 0 ? c.mode : c.features) != value) {
			ok(0, "%s: GET_CONFIG agrees with debugfs", ctx);
			diag("GET_CONFIG: %s mode %u features %#x, want %s %u", errname(-r),
			     c.mode, c.features, field ? "features" : "mode", value);
			good = 0;
		}
	}
	return good;
}

static void good_write(const char *path, const char *data, const char *want,
		       int field, uint32_t value)
{
	char d[128], s[64];
	int r = write_file(path, data, strlen(data));

	show(data, s, sizeof(s));
	snprintf(d, sizeof(d), "write '%s' to %s", s, strrchr(path, '/') + 1);
	expect_errno(r, 0, "%s", d);
	expect_read(path, want, field, value, d);
}

static void bad_write(const char *path, const char *data, size_t len,
		      const char *want, int field, uint32_t value)
{
	char d[128], s[64];
	int r = write_file(path, data, len);

	show(data, s, sizeof(s));
	snprintf(d, sizeof(d), "write '%s' to %s", s, strrchr(path, '/') + 1);
	expect_errno(r, EINVAL, "%s", d);
	expect_read(path, want, field, value, d);
}

static void test_mode(void)
{
	static const char *const bad[] = {
		"bogus", "\n", " ", "optin extra", "optin extra\n", "alwaysx",
		"alway", "[optin]", "OPTIN", "never never", "1",
	};
	unsigned int i;
	int r;

	expect_read(DBG_MODE, mode_str[1], 0, VMAMERGE_MODE_OPTIN, "default");
	good_write(DBG_MODE, "always", mode_str[2], 0, VMAMERGE_MODE_ALWAYS);
	good_write(DBG_MODE, "never\n", mode_str[0], 0, VMAMERGE_MODE_NEVER);
	good_write(DBG_MODE, "optin", mode_str[1], 0, VMAMERGE_MODE_OPTIN);
	good_write(DBG_MODE, "always\n", mode_str[2], 0, VMAMERGE_MODE_ALWAYS);
	good_write(DBG_MODE, "optin\n", mode_str[1], 0, VMAMERGE_MODE_OPTIN);
	good_write(DBG_MODE, "never", mode_str[0], 0, VMAMERGE_MODE_NEVER);
	/* from never, so that a half-parsed "optin extra" would show */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		bad_write(DBG_MODE, bad[i], strlen(bad[i]), mode_str[0], 0,
			  VMAMERGE_MODE_NEVER);
	r = write_file(DBG_MODE, "", 0);
	expect_errno2(r, 0, EINVAL, "write of 0 bytes to mode");
	expect_read(DBG_MODE, mode_str[0], 0, VMAMERGE_MODE_NEVER, "0-byte write");
	good_write(DBG_MODE, "optin\n", mode_str[1], 0, VMAMERGE_MODE_OPTIN);
}

static void test_features(void)
{
	static const char *const bad[] = {
		"foo", "+foo", "-foo", "renumber foo", "foo renumber",
		"+renumber +foo\n", "\n", "+", "-", "renumberx", "all foo",
		"RENUMBER", "[renumber]",
	};
	unsigned int i;
	int r;

	expect_read(DBG_FEATURES, feat_str[3], 1, VMAMERGE_FEATURES_ALL, "default");
	good_write(DBG_FEATURES, "none", feat_str[0], 1, 0);
	good_write(DBG_FEATURES, "+renumber", feat_str[1], 1, VMAMERGE_FEATURE_RENUMBER);
	good_write(DBG_FEATURES, "-renumber", feat_str[0], 1, 0);
	good_write(DBG_FEATURES, "all", feat_str[3], 1, VMAMERGE_FEATURES_ALL);
	good_write(DBG_FEATURES, "renumber -transplant", feat_str[1], 1,
		   VMAMERGE_FEATURE_RENUMBER);
	good_write(DBG_FEATURES, "transplant\n", feat_str[3], 1, VMAMERGE_FEATURES_ALL);
	good_write(DBG_FEATURES, "-renumber -transplant\n", feat_str[0], 1, 0);
	good_write(DBG_FEATURES, "+transplant", feat_str[2], 1,
		   VMAMERGE_FEATURE_TRANSPLANT);
	good_write(DBG_FEATURES, "renumber\n", feat_str[3], 1, VMAMERGE_FEATURES_ALL);
	good_write(DBG_FEATURES, "none\n", feat_str[0], 1, 0);
	/* from none, so that any partly applied write would show */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		bad_write(DBG_FEATURES, bad[i], strlen(bad[i]), feat_str[0], 1, 0);
	r = write_file(DBG_FEATURES, "", 0);
	expect_errno2(r, 0, EINVAL, "write of 0 bytes to features");
	expect_read(DBG_FEATURES, feat_str[0], 1, 0, "0-byte write");
	good_write(DBG_FEATURES, "all\n", feat_str[3], 1, VMAMERGE_FEATURES_ALL);
}

static void test_stats(void)
{
	char b[4096], *line, *save, name[64], extra[8];
	unsigned long long v;
	unsigned int n = 0;
	int r, names_ok = 1, zero = 1, format = 1;

	r = read_file(DBG_STATS, b, sizeof(b));
	if (!ok(r > 0, "stats is readable")) {
		diag("read stats: %s", errname(-r));
		return;
	}
	for (line = strtok_r(b, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%63s %llu %7s", name, &v, extra) != 2) {
			if (format)
				diag("bad stats line '%s'", line);
			format = 0;
			continue;
		}
		if (n >= VMAMERGE_NR_COUNTERS || strcmp(name, counter_names[n])) {
			if (names_ok)
				diag("stats line %u is '%s', want '%s'", n + 1, name,
				     n < VMAMERGE_NR_COUNTERS ? counter_names[n] : "(none)");
			names_ok = 0;
		}
		/* renumber/transplant counters: nothing fills them yet */
		if (v && n >= VMAMERGE_C_AV_MERGE_DIFFERENT &&
		    n < VMAMERGE_NR_COUNTERS) {
			if (zero)
				diag("counter %s = %llu", name, v);
			zero = 0;
		}
		n++;
	}
	ok(format, "stats: every line is 'name value'");
	ok(names_ok && n == VMAMERGE_NR_COUNTERS,
	   "stats: %d lines, the VMAMERGE_COUNTERS names in order", VMAMERGE_NR_COUNTERS);
	if (n != VMAMERGE_NR_COUNTERS)
		diag("stats has %u lines", n);
	ok(zero, "stats: renumber/transplant counters zero (milestone 1)");
	r = write_file(DBG_STATS, "0\n", 2);
	if (!ok(r < 0, "stats is not writable"))
		diag("write to stats succeeded");
}

static int unpriv(void *arg)
{
	int r;

	(void)arg;
	r = write_file(DBG_MODE, "never\n", 6);
	ok(r < 0, "unprivileged: write to debugfs mode fails");
	diag("unprivileged mode write: %s", r < 0 ? errname(-r) : "succeeded");
	r = write_file(DBG_FEATURES, "none\n", 5);
	ok(r < 0, "unprivileged: write to debugfs features fails");
	r = write_file(DBG_FEATURES, "-renumber", 9);
	ok(r < 0, "unprivileged: write '-renumber' to debugfs features fails");
	return 0;
}

int main(void)
{
	tap_init("t_debugfs", 120);
	if (!ok(access(DBG_DIR, F_OK) == 0, "%s exists", DBG_DIR)) {
		diag("is debugfs mounted at /sys/kernel/debug?");
		return tap_exit();
	}
	dev = vm_open(O_RDONLY);
	if (dev < 0)
		diag("no %s (%s): no GET_CONFIG cross-check", VMAMERGE_DEVICE,
		     errname(-dev));
	test_mode();
	test_features();
	test_stats();
	run_unprivileged(unpriv, NULL);
	expect_read(DBG_MODE, mode_str[1], 0, VMAMERGE_MODE_OPTIN,
		    "after unprivileged writes");
	expect_read(DBG_FEATURES, feat_str[3], 1, VMAMERGE_FEATURES_ALL,
		    "after unprivileged writes");
	if (dev >= 0)
		close(dev);
	return tap_exit();
}
