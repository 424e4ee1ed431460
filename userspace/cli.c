// SPDX-License-Identifier: GPL-2.0
/*
 * cli.c - command line and text helpers of the vmamerge CLI (pure).
 */
#include <limits.h>
#include <stdarg.h>
#include <string.h>

#include "vmamerge.h"	/* module/uapi */
#include "cli.h"

static const struct {
	const char *name;
	enum cli_cmd cmd;
} commands[] = {
	{ "help",	CMD_HELP },
	{ "status",	CMD_STATUS },
	{ "mode",	CMD_MODE },
	{ "features",	CMD_FEATURES },
	{ "enable",	CMD_ENABLE },
	{ "disable",	CMD_DISABLE },
	{ "run",	CMD_RUN },
	{ "stats",	CMD_STATS },
	{ "maps",	CMD_MAPS },
	{ "verify",	CMD_VERIFY },
};

/* Options each command accepts. */
#define OPT_PID		(1U << 0)
#define OPT_JSON	(1U << 1)
#define OPT_NO_EXEC	(1U << 2)

static unsigned int cmd_options(enum cli_cmd cmd)
{
	switch (cmd) {
	case CMD_ENABLE:	return OPT_PID | OPT_NO_EXEC;
	case CMD_DISABLE:	return OPT_PID;
	case CMD_RUN:		return OPT_NO_EXEC;
	case CMD_STATS:		return OPT_PID | OPT_JSON;
	case CMD_MAPS:		return OPT_PID | OPT_JSON;
	case CMD_VERIFY:	return OPT_PID | OPT_JSON;
	default:		return 0;
	}
}

static int usage_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

int parse_ull_strict(const char *s, unsigned long long max,
		     unsigned long long *out)
{
	unsigned long long v = 0;
	const char *p;

	if (!s || !*s)
		return -1;
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		if (v > (max - (*p - '0')) / 10)
			return -1;
		v = v * 10 + (*p - '0');
	}
	*out = v;
	return 0;
}

int parse_pid(const char *s, pid_t *pid)
{
	unsigned long long v;

	if (parse_ull_strict(s, INT_MAX, &v) || v == 0)
		return -1;
	*pid = (pid_t)v;
	return 0;
}

static int set_pid(struct cli *c, const char *val, char *err, size_t len)
{
	if (c->have_pid)
		return usage_err(err, len, "-p given twice");
	if (!val)
		return usage_err(err, len, "-p needs a PID");
	if (parse_pid(val, &c->pid))
		return usage_err(err, len, "invalid PID '%s'", val);
	c->have_pid = true;
	return 0;
}

/*
 * One option at argv[*i]; may consume argv[*i + 1].  Returns 0, -1 (usage
 * error).
 */
static int parse_option(int argc, char **argv, int *i, struct cli *c,
			char *err, size_t len)
{
	unsigned int allowed = cmd_options(c->cmd);
	const char *a = argv[*i];
	const char *next = *i + 1 < argc ? argv[*i + 1] : NULL;

	if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
		c->help = true;
		return 0;
	}
	if ((allowed & OPT_PID) && (!strcmp(a, "-p") || !strcmp(a, "--pid"))) {
		(*i)++;
		return set_pid(c, next, err, len);
	}
	if ((allowed & OPT_PID) && !strncmp(a, "--pid=", 6))
		return set_pid(c, a + 6, err, len);
	if ((allowed & OPT_PID) && !strncmp(a, "-p", 2))
		return set_pid(c, a + 2, err, len);
	if ((allowed & OPT_JSON) && !strcmp(a, "--json")) {
		c->json = true;
		return 0;
	}
	if ((allowed & OPT_NO_EXEC) && !strcmp(a, "--no-exec")) {
		c->no_exec = true;
		return 0;
	}
	return usage_err(err, len, "unknown option '%s' for '%s'", a, argv[1]);
}

static int check_args(struct cli *c, char *err, size_t len)
{
	const char *cmd = NULL;
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (commands[i].cmd == c->cmd)
			cmd = commands[i].name;
	switch (c->cmd) {
	case CMD_MODE:
		if (c->nargs > 1)
			return usage_err(err, len, "mode takes at most one argument");
		if (c->nargs == 1 && mode_from_name(c->args[0]) < 0)
			return usage_err(err, len, "unknown mode '%s' (always, optin, never)",
					 c->args[0]);
		return 0;
	case CMD_FEATURES:
		return 0;	/* tokens are checked by features_apply() */
	case CMD_ENABLE:
	case CMD_DISABLE:
	case CMD_MAPS:
	case CMD_VERIFY:
		if (!c->have_pid)
			return usage_err(err, len, "%s needs -p PID", cmd);
		break;
	case CMD_RUN:
		if (!c->nargs)
			return usage_err(err, len, "run needs a command");
		return 0;
	default:
		break;
	}
	if (c->nargs)
		return usage_err(err, len, "unexpected argument '%s'", c->args[0]);
	return 0;
}

int cli_parse(int argc, char **argv, struct cli *c, char *err, size_t len)
{
	bool opts_done = false;
	size_t k;
	int i;

	memset(c, 0, sizeof(*c));
	err[0] = '\0';
	if (argc < 2)
		return usage_err(err, len, "missing command");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		c->cmd = CMD_HELP;
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		c->cmd = CMD_VERSION;
		return 0;
	}
	for (k = 0; k < sizeof(commands) / sizeof(commands[0]); k++)
		if (!strcmp(argv[1], commands[k].name))
			c->cmd = commands[k].cmd;
	if (c->cmd == CMD_NONE)
		return usage_err(err, len, "unknown command '%s'", argv[1]);

	c->args = argv + 2;
	for (i = 2; i < argc; i++) {
		const char *a = argv[i];
		bool is_opt = a[0] == '-' && a[1] && !opts_done;

		/* "features -renumber": a token, not an option */
		if (is_opt && c->cmd == CMD_FEATURES &&
		    strcmp(a, "-h") && strcmp(a, "--help") && strcmp(a, "--"))
			is_opt = false;
		if (is_opt && !strcmp(a, "--")) {
			opts_done = true;
			continue;
		}
		if (is_opt) {
			if (parse_option(argc, argv, &i, c, err, len))
				return -1;
			continue;
		}
		/* positional: compact them to the front of args */
		c->args[c->nargs++] = argv[i];
		if (c->cmd == CMD_RUN) {
			/* the command and its arguments, untouched */
			for (i++; i < argc; i++)
				c->args[c->nargs++] = argv[i];
			break;
		}
	}
	if (c->help)
		return 0;
	return check_args(c, err, len);
}

static const char *const mode_names[] = {
	[VMAMERGE_MODE_NEVER]	= "never",
	[VMAMERGE_MODE_OPTIN]	= "optin",
	[VMAMERGE_MODE_ALWAYS]	= "always",
};

/* Display order, as in debugfs: always [optin] never */
static const unsigned int mode_order[] = {
	VMAMERGE_MODE_ALWAYS, VMAMERGE_MODE_OPTIN, VMAMERGE_MODE_NEVER,
};

int mode_from_name(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
		if (!strcmp(s, mode_names[i]))
			return i;
	return -1;
}

const char *mode_name(unsigned int mode)
{
	return mode < sizeof(mode_names) / sizeof(mode_names[0]) ?
	       mode_names[mode] : NULL;
}

static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

void format_mode(char *buf, size_t len, unsigned int mode)
{
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < sizeof(mode_order) / sizeof(mode_order[0]); i++) {
		const char *sep = i ? " " : "";

		if (mode_order[i] == mode)
			append(buf, len, "%s[%s]", sep, mode_names[mode_order[i]]);
		else
			append(buf, len, "%s%s", sep, mode_names[mode_order[i]]);
	}
	if (!mode_name(mode))
		append(buf, len, " [unknown mode %u]", mode);
}

static const struct {
	const char *name;
	unsigned int bit;
} feature_names[] = {
	{ "renumber",	VMAMERGE_FEATURE_RENUMBER },
	{ "transplant",	VMAMERGE_FEATURE_TRANSPLANT },
};

#define NR_FEATURES (sizeof(feature_names) / sizeof(feature_names[0]))

unsigned int feature_from_name(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < NR_FEATURES; i++)
		if (strlen(feature_names[i].name) == len &&
		    !strncmp(s, feature_names[i].name, len))
			return feature_names[i].bit;
	return 0;
}

void format_features(char *buf, size_t len, unsigned int features)
{
	unsigned int known = 0;
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < NR_FEATURES; i++) {
		const char *sep = i ? " " : "";

		known |= feature_names[i].bit;
		if (features & feature_names[i].bit)
			append(buf, len, "%s[%s]", sep, feature_names[i].name);
		else
			append(buf, len, "%s%s", sep, feature_names[i].name);
	}
	if (features & ~known)
		append(buf, len, " [unknown 0x%x]", features & ~known);
}

static int apply_token(unsigned int *mask, const char *t, size_t n)
{
	unsigned int bit;
	char op = '+';

	if (n == 3 && !strncmp(t, "all", 3)) {
		*mask |= VMAMERGE_FEATURES_ALL;
		return 0;
	}
	if (n == 4 && !strncmp(t, "none", 4)) {
		*mask &= ~VMAMERGE_FEATURES_ALL;
		return 0;
	}
	if (n && (t[0] == '+' || t[0] == '-')) {
		op = t[0];
		t++;
		n--;
	}
	bit = feature_from_name(t, n);
	if (!bit)
		return -1;
	if (op == '+')
		*mask |= bit;
	else
		*mask &= ~bit;
	return 0;
}

int features_apply(unsigned int *mask, int ntok, char **tok,
		   char *bad, size_t badlen)
{
	unsigned int m = *mask;
	const char *p, *t;
	int i;

	for (i = 0; i < ntok; i++) {
		p = tok[i];
		while (*p) {
			while (*p == ' ' || *p == ',' || *p == '\t')
				p++;
			t = p;
			while (*p && *p != ' ' && *p != ',' && *p != '\t')
				p++;
			if (t == p)
				continue;
			if (apply_token(&m, t, p - t)) {
				snprintf(bad, badlen, "%.*s", (int)(p - t), t);
				return -1;
			}
		}
	}
	*mask = m;
	return 0;
}

int debugfs_parse_mode(const char *text)
{
	const char *open = strchr(text, '['), *close;
	char name[16];
	size_t n;

	if (!open || !(close = strchr(open, ']')))
		return -1;
	n = close - open - 1;
	if (n >= sizeof(name))
		return -1;
	memcpy(name, open + 1, n);
	name[n] = '\0';
	return mode_from_name(name);
}

int debugfs_parse_features(const char *text, unsigned int *features)
{
	const char *p = text, *t;
	unsigned int f = 0, bit;
	bool on;
	size_t n;

	while (*p) {
		while (*p == ' ' || *p == '\n' || *p == '\t')
			p++;
		t = p;
		while (*p && *p != ' ' && *p != '\n' && *p != '\t')
			p++;
		n = p - t;
		if (!n)
			continue;
		on = n >= 2 && t[0] == '[' && t[n - 1] == ']';
		bit = on ? feature_from_name(t + 1, n - 2) :
			   feature_from_name(t, n);
		if (!bit)
			return -1;
		if (on)
			f |= bit;
	}
	*features = f;
	return 0;
}

/* Length of a valid UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;
	unsigned int cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	fputc('"', f);
	while (*p) {
		if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p);
			p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p);
			p++;
		} else if ((n = utf8_len(p))) {
			fwrite(p, 1, n, f);
			p += n;
		} else {
			/* not UTF-8: keep it valid JSON, as Latin-1 */
			fprintf(f, "\\u%04x", *p);
			p++;
		}
	}
	fputc('"', f);
}
