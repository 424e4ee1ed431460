// SPDX-License-Identifier: GPL-2.0
/*
 * cli.c - command line and text helpers of the vmamerge CLI (pure).
 */
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>

#include "vmamerge.h"	/* module/uapi */
#include "cli.h"

/* Long-only options. */
enum {
	OPT_JSON = 256,
	OPT_NO_EXEC,
	OPT_SUMMARY,
	OPT_ALL,
	OPT_IMAGE,
	OPT_CONFIG,
};

#define O_HELP		{ "help",	no_argument,		NULL, 'h' }
#define O_PID		{ "pid",	required_argument,	NULL, 'p' }
#define O_JSON		{ "json",	no_argument,		NULL, OPT_JSON }
#define O_NO_EXEC	{ "no-exec",	no_argument,		NULL, OPT_NO_EXEC }
#define O_SUMMARY	{ "summary",	no_argument,		NULL, OPT_SUMMARY }
#define O_ALL		{ "all",	no_argument,		NULL, OPT_ALL }
#define O_IMAGE		{ "image",	required_argument,	NULL, OPT_IMAGE }
#define O_CONFIG	{ "config",	required_argument,	NULL, OPT_CONFIG }
#define O_END		{ NULL, 0, NULL, 0 }

static const struct option opts_help[] = { O_HELP, O_END };
static const struct option opts_json[] = { O_HELP, O_JSON, O_END };
static const struct option opts_enable[] = { O_HELP, O_PID, O_NO_EXEC, O_END };
static const struct option opts_disable[] = { O_HELP, O_PID, O_END };
static const struct option opts_run[] = { O_HELP, O_NO_EXEC, O_END };
static const struct option opts_stats[] = { O_HELP, O_PID, O_JSON, O_ALL, O_END };
static const struct option opts_maps[] = { O_HELP, O_PID, O_JSON, O_SUMMARY, O_END };
static const struct option opts_pid_json[] = { O_HELP, O_PID, O_JSON, O_END };
static const struct option opts_check_kernel[] = {
	O_HELP, O_JSON, O_IMAGE, O_CONFIG, O_END
};

static const struct command {
	const char *name;
	enum cli_cmd cmd;
	const char *shortopts;	/* ":" first: we print the errors */
	const struct option *longopts;
	const char *synopsis;
	const char *text;
} commands[] = {
	{ "status", CMD_STATUS, ":h", opts_json, "status [--json]",
"module, livepatch, kernel and the tier of its build (validated,\n"
"equivalent to a validated build, or refused: then see check-kernel),\n"
"ABI version, mode, features and this process's opt-in state.  Exit 1\n"
"when the module is not loaded.\n" },
	{ "mode", CMD_MODE, ":h", opts_json, "mode [--json] [always|optin|never]",
"show the global mode, or set it (CAP_SYS_ADMIN):\n"
"  always  every process\n"
"  optin   opted-in processes only (the default)\n"
"  never   nobody, whatever was opted in\n" },
	{ "features", CMD_FEATURES, NULL, NULL, "features [--json] [TOKEN...]",
"show the features, or change them (CAP_SYS_ADMIN); tokens apply left to\n"
"right to the current set (several in one argument: separated by blanks or\n"
"commas; a token starting with '-' is a token, not an option):\n"
"  all | none | NAME | +NAME (enable) | -NAME (disable)\n"
"  NAME: renumber   (update anonymous pgoffs so VMAs moved by mremap merge)\n"
"        transplant (merge VMAs with different anon_vmas)\n" },
	{ "enable", CMD_ENABLE, ":hp:", opts_enable, "enable -p PID [--no-exec]",
"opt process PID in; with --no-exec the opt-in ends when PID calls\n"
"execve(), otherwise it is kept across execve() too.  Acting on another\n"
"process needs ptrace rights over it.\n" },
	{ "disable", CMD_DISABLE, ":hp:", opts_disable, "disable -p PID",
"opt process PID out.\n" },
	{ "run", CMD_RUN, "+:h", opts_run, "run [--no-exec] [--] CMD [ARG...]",
"run CMD opted in: vmamerge opts itself in and execs CMD with exactly the\n"
"ARGs given.  Options end at CMD (everything after it is CMD's).  Without\n"
"--no-exec CMD and everything it forks or executes is opted in; with\n"
"--no-exec CMD and its forks are, the programs CMD executes are not.\n"
"Exit status: CMD's; 125 if vmamerge itself fails (usage, device, opt-in),\n"
"126 if CMD cannot be executed, 127 if it is not found.\n" },
	{ "stats", CMD_STATS, ":hp:", opts_stats, "stats [-p PID | --all] [--json]",
"counters: the global ones; with -p PID's state (opted in, exec-keep,\n"
"active) and its counters; with --all every opted-in process (the ones\n"
"this user may read) with its state and counters.\n" },
	{ "maps", CMD_MAPS, ":hp:", opts_maps, "maps -p PID [--summary] [--json]",
"list PID's VMAs (from /proc/PID/smaps, or maps) and the adjacent private\n"
"anonymous VMAs that are separate although their permissions, VmFlags\n"
"(except sd), names and NUMA policies match.  With the module loaded, its\n"
"VMA report adds the real pgoff of anonymous VMAs and whether neighbours\n"
"share an anon_vma, and each such pair is classified exactly: 'pgoff' (not\n"
"linear; renumber fixes it), 'anon_vma' (their anon_vmas differ;\n"
"transplant fixes it), 'pgoff and anon_vma' (both) or 'unknown' (neither\n"
"explains it; please report).  Without the module only /proc is read,\n"
"which shows no pgoff for anonymous VMAs (the offset column is 0), so such\n"
"a pair is 'pgoff or anon_vma'.  VMAs side by side kept apart for one\n"
"reason print as one line per run.  --summary prints only the counts, the\n"
"missed merges and the distance to vm.max_map_count.\n" },
	{ "compact", CMD_COMPACT, ":hp:", opts_pid_json, "compact -p PID [--json]",
"merge PID's adjacent private anonymous VMAs that differ only in page\n"
"offset and/or anon_vma, in one walk over its address space: the cheaper\n"
"side of each pair is rewritten, what cannot be proven safe is refused and\n"
"counted.  mmap_lock is taken in slices of a few ms, so PID keeps running.\n"
"Splits by protections, flags, names or policies stay.  PID must be opted\n"
"in and the mode not never; needs ptrace rights over PID.  Prints the VMAs\n"
"before -> after, merges, pages rewritten, refusals by reason, and how\n"
"often mmap_lock was taken with its longest hold.\n" },
	{ "verify", CMD_VERIFY, ":hp:", opts_pid_json, "verify -p PID [--json]",
"check the kernel's rmap invariants over PID's memory (root only): every\n"
"anonymous page's anon_vma root and index, the anon_vma chains, interval\n"
"trees and counts.  Exit 0 when they hold, 1 when a violation is found\n"
"(the first is described), 2 on errors.\n" },
	{ "check-kernel", CMD_CHECK_KERNEL, ":h", opts_check_kernel,
	  "check-kernel [RELEASE] [--image PATH] [--config PATH] [--json]",
"whether a kernel build (default: the running one) is supported: one of the\n"
"validated builds this tool was built with, or a build whose image kfp\n"
"proves identical to one of theirs wherever the module depends on it (the\n"
"functions, structs and config options of the validated builds'\n"
"fingerprints).  Exit 0 supported, 1 refused (with what differs and how to\n"
"port it), 2 error (kfp or the fingerprints missing, unreadable image).\n" },
	{ "selftest", CMD_SELFTEST, ":h", opts_json, "selftest [--json]",
"check that the module works here, in a few seconds: a child process opts\n"
"itself in, faults two neighbouring ranges, moves one next to the other\n"
"(renumber: halves of one mapping swapped; transplant: two mappings with\n"
"different anon_vmas), expects one VMA each time and reads every byte\n"
"back.  Prints ok with the counters the cases moved, or the step that\n"
"failed and what it saw.  Exit 0 ok, 1 failed or module not loaded.\n" },
	{ "help", CMD_HELP, ":h", opts_help, "help [COMMAND]",
"this text, or the help of COMMAND (also: vmamerge COMMAND --help).\n" },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

static const struct command *command_of(enum cli_cmd cmd)
{
	size_t i;

	for (i = 0; i < NR_COMMANDS; i++)
		if (commands[i].cmd == cmd)
			return &commands[i];
	return NULL;
}

const char *cli_cmd_name(enum cli_cmd cmd)
{
	const struct command *d = command_of(cmd);

	return d ? d->name : NULL;
}

static void print_indented(FILE *f, const char *text, const char *indent)
{
	const char *p = text, *nl;

	while (*p) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		fprintf(f, "%s%.*s\n", nl > p ? indent : "", (int)(nl - p), p);
		p = *nl ? nl + 1 : nl;
	}
}

static const char *option_help(int val)
{
	switch (val) {
	case 'h':
		return "-h, --help     this text ('vmamerge help': all commands)";
	case 'p':
		return "-p, --pid PID  the target process (decimal, > 0)";
	case OPT_JSON:
		return "--json         one JSON object on stdout; on errors {\"error\": \"...\"}";
	case OPT_NO_EXEC:
		return "--no-exec      the opt-in does not survive execve()";
	case OPT_SUMMARY:
		return "--summary      only the counts, no VMA list";
	case OPT_ALL:
		return "--all          every opted-in process";
	case OPT_IMAGE:
		return "--image PATH   the kernel image (default /boot/vmlinuz-RELEASE)";
	case OPT_CONFIG:
		return "--config PATH  its config (default /boot/config-RELEASE)";
	default:
		return "";
	}
}

void cli_help(FILE *f, enum cli_cmd cmd)
{
	const struct command *d = command_of(cmd);
	const struct option *o;
	size_t i;

	if (d && cmd != CMD_HELP) {
		fprintf(f, "usage: vmamerge %s\n\n", d->synopsis);
		print_indented(f, d->text, "");
		fputs("\nOptions:\n", f);
		for (o = d->longopts; o && o->name; o++)
			fprintf(f, "  %s\n", option_help(o->val));
		if (cmd == CMD_FEATURES)
			fprintf(f, "  %s\n  %s\n", option_help(OPT_JSON),
				option_help('h'));
		return;
	}
	fputs("usage: vmamerge COMMAND [OPTIONS] [ARGS]\n"
	      "       vmamerge help [COMMAND] | --help | --version\n"
	      "\n"
	      "Control the vmamerge livepatch module, which lets more anonymous VMAs merge\n"
	      "for processes that opt in (or for all processes in mode 'always').\n"
	      "\nCommands:\n", f);
	for (i = 0; i < NR_COMMANDS; i++) {
		fprintf(f, "  %s\n", commands[i].synopsis);
		print_indented(f, commands[i].text, "      ");
	}
	fputs("\n"
"Options:\n"
"  -p, --pid PID   the target process (decimal, > 0)\n"
"  --json          machine-readable output: one JSON object on stdout; on\n"
"                  errors {\"error\": \"...\"} (and the message on stderr)\n"
"  --no-exec       the opt-in does not survive execve()\n"
"  --image PATH, --config PATH\n"
"                  check-kernel: the kernel image and config to check\n"
"  -h, --help      help (of the command it follows)\n"
"  -V, --version   the version of vmamerge and of its ABI\n"
"\n"
"Permissions: /dev/vmamerge is normally mode 0666.  Opting yourself in is\n"
"allowed to anyone; acting on another process needs ptrace rights over it\n"
"(same user and not restricted by Yama, or CAP_SYS_PTRACE); reading another\n"
"process's state needs the rights that reading its /proc/PID/smaps needs;\n"
"changing mode or features needs CAP_SYS_ADMIN.  The ioctl interface works\n"
"under Secure Boot lockdown; debugfs is only used to read when the device\n"
"cannot be opened.\n"
"\n"
"Loading: 'sudo make install' in the source tree, then 'sudo modprobe vmamerge'.\n"
"\n"
"Exit status: 0 success, 1 runtime error, 2 usage error; run: CMD's status,\n"
"125 for its own failures, 126/127 when CMD cannot be run; verify: 0 clean,\n"
"1 violation, 2 error; check-kernel: 0 supported, 1 refused, 2 error;\n"
"selftest: 0 ok, 1 failed.\n", f);
}

int cli_usage_status(const struct cli *c)
{
	return c->err_cmd == CMD_RUN ? 125 : 2;
}

/*
 * A usage error about command d (NULL: about the command line as such):
 * the message and where to read more, on one line.
 */
static int usage_err(char *err, size_t len, const struct command *d,
		     const char *fmt, ...)
{
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	n = strlen(err);
	if (d)
		snprintf(err + n, len - n, "; see 'vmamerge help %s'", d->name);
	else
		snprintf(err + n, len - n, "; see 'vmamerge --help'");
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

bool release_valid(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz"
			     "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+~-");

	return n && !s[n] && n <= 64 && s[0] != '.' && s[0] != '-';
}

int parse_pid(const char *s, pid_t *pid)
{
	unsigned long long v;

	if (parse_ull_strict(s, INT_MAX, &v) || v == 0)
		return -1;
	*pid = (pid_t)v;
	return 0;
}

/*
 * features: its tokens may start with '-', so only -h, --help, --json and
 * "--" are options; the tokens are moved to the front, NULL after them.
 */
static int parse_features(int argc, char **argv, struct cli *c)
{
	bool opts_done = false;
	int i, n = 0;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!opts_done && !strcmp(a, "--")) {
			opts_done = true;
		} else if (!opts_done && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
			c->help_cmd = CMD_FEATURES;
			c->cmd = CMD_HELP;
		} else if (!opts_done && !strcmp(a, "--json")) {
			c->json = true;
		} else {
			argv[1 + n++] = argv[i];	/* 1 + n <= i */
		}
	}
	argv[1 + n] = NULL;	/* 1 + n <= argc: at most argv's own NULL */
	c->args = argv + 1;
	c->nargs = n;
	return 0;
}

/* The option that getopt_long() just refused, for the message. */
static void bad_option(char *buf, size_t len, char **argv)
{
	const char *a = argv[optind - 1];

	if (optopt)
		snprintf(buf, len, "-%c", optopt);
	else
		snprintf(buf, len, "%.*s", (int)strcspn(a, "="), a);
}

/* --image PATH, --config PATH: once each, not empty. */
static int path_option(struct cli *c, int o, const char *path,
		       const struct command *d, char *err, size_t len)
{
	const char **p = o == OPT_IMAGE ? &c->image : &c->config;
	const char *name = o == OPT_IMAGE ? "--image" : "--config";

	if (*p)
		return usage_err(err, len, d, "%s given twice", name);
	if (!*path)
		return usage_err(err, len, d, "%s needs a path, not ''", name);
	*p = path;
	return 0;
}

static int parse_options(int argc, char **argv, const struct command *d,
			 struct cli *c, char *err, size_t len)
{
	char opt[64];
	int o;

	optind = 0;	/* glibc: start afresh (tests parse many times) */
	opterr = 0;
	while ((o = getopt_long(argc, argv, d->shortopts, d->longopts,
				NULL)) != -1) {
		switch (o) {
		case 'h':
			c->help_cmd = d->cmd;
			c->cmd = CMD_HELP;
			break;
		case 'p':
			if (c->have_pid)
				return usage_err(err, len, d, "-p given twice");
			if (parse_pid(optarg, &c->pid))
				return usage_err(err, len, d, "invalid PID '%s'",
						 optarg);
			c->have_pid = true;
			break;
		case OPT_JSON:
			c->json = true;
			break;
		case OPT_NO_EXEC:
			c->no_exec = true;
			break;
		case OPT_SUMMARY:
			c->summary = true;
			break;
		case OPT_ALL:
			c->all = true;
			break;
		case OPT_IMAGE:
		case OPT_CONFIG:
			if (path_option(c, o, optarg, d, err, len))
				return -1;
			break;
		case ':':
			return usage_err(err, len, d, "option '%s' needs an argument",
					 argv[optind - 1]);
		default:
			bad_option(opt, sizeof(opt), argv);
			return usage_err(err, len, d, "unknown option '%s' for '%s'",
					 opt, d->name);
		}
	}
	c->args = argv + optind;
	c->nargs = argc - optind;
	return 0;
}

static int check_args(const struct command *d, struct cli *c, char *err,
		      size_t len)
{
	unsigned int mask = 0;
	char bad[64];

	switch (c->cmd) {
	case CMD_HELP:
		if (c->nargs > 1)
			return usage_err(err, len, d, "help takes at most one command");
		if (c->nargs == 1) {
			const struct command *h = find_command(c->args[0]);

			if (!h)
				return usage_err(err, len, NULL, "unknown command '%s'",
						 c->args[0]);
			c->help_cmd = h->cmd;
		}
		return 0;
	case CMD_MODE:
		if (c->nargs > 1)
			return usage_err(err, len, d, "mode takes at most one argument");
		if (c->nargs == 1 && mode_from_name(c->args[0]) < 0)
			return usage_err(err, len, d,
					 "unknown mode '%s' (always, optin, never)",
					 c->args[0]);
		return 0;
	case CMD_FEATURES:
		if (features_apply(&mask, c->nargs, c->args, bad, sizeof(bad)))
			return usage_err(err, len, d,
					 "unknown feature '%s' (all, none, [+|-]renumber, [+|-]transplant)",
					 bad);
		return 0;
	case CMD_ENABLE:
	case CMD_DISABLE:
	case CMD_MAPS:
	case CMD_VERIFY:
	case CMD_COMPACT:
		if (!c->have_pid)
			return usage_err(err, len, d, "%s needs -p PID", d->name);
		break;
	case CMD_STATS:
		if (c->have_pid && c->all)
			return usage_err(err, len, d, "-p and --all exclude each other");
		break;
	case CMD_RUN:
		if (!c->nargs)
			return usage_err(err, len, d, "run needs a command");
		return 0;
	case CMD_CHECK_KERNEL:
		if (c->nargs > 1)
			return usage_err(err, len, d, "check-kernel takes at most one release");
		if (c->nargs && !release_valid(c->args[0]))
			return usage_err(err, len, d, "invalid kernel release '%s'",
					 c->args[0]);
		return 0;
	default:
		break;
	}
	if (c->nargs)
		return usage_err(err, len, d, "unexpected argument '%s'",
				 c->args[0]);
	return 0;
}

int cli_parse(int argc, char **argv, struct cli *c, char *err, size_t len)
{
	const struct command *d;

	memset(c, 0, sizeof(*c));
	err[0] = '\0';
	if (argc < 2)
		return usage_err(err, len, NULL, "missing command");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		c->cmd = CMD_HELP;
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		c->cmd = CMD_VERSION;
		return 0;
	}
	if (argv[1][0] == '-')
		return usage_err(err, len, NULL, "unknown option '%s'", argv[1]);
	d = find_command(argv[1]);
	if (!d)
		return usage_err(err, len, NULL, "unknown command '%s'", argv[1]);
	c->cmd = d->cmd;
	c->err_cmd = d->cmd;
	/* the command's own argv: argv[0] is its name */
	if (d->cmd == CMD_FEATURES)
		parse_features(argc - 1, argv + 1, c);
	else if (parse_options(argc - 1, argv + 1, d, c, err, len))
		return -1;
	if (c->cmd == CMD_HELP && c->help_cmd != CMD_NONE)
		return 0;	/* "CMD --help": nothing else matters */
	return check_args(d, c, err, len);
}

static const char *const counter_names[] = {
#define VMAMERGE_COUNTER_NAME_(id, name) [VMAMERGE_C_##id] = name,
	VMAMERGE_COUNTERS(VMAMERGE_COUNTER_NAME_)
#undef VMAMERGE_COUNTER_NAME_
};

const char *counter_name(unsigned int i, char *buf, size_t len)
{
	if (i < VMAMERGE_NR_COUNTERS)
		return counter_names[i];
	snprintf(buf, len, "counter_%u", i);
	return buf;
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

void json_features(FILE *f, unsigned int features)
{
	unsigned int known = 0;
	size_t i;

	fputc('{', f);
	for (i = 0; i < NR_FEATURES; i++) {
		known |= feature_names[i].bit;
		fprintf(f, "%s\"%s\": %s", i ? ", " : "", feature_names[i].name,
			features & feature_names[i].bit ? "true" : "false");
	}
	if (features & ~known)
		fprintf(f, ", \"unknown\": %u", features & ~known);
	fputc('}', f);
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
