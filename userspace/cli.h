/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cli.h - the pure parts of the vmamerge CLI: command line, numbers,
 * counter/mode/feature names, debugfs text, JSON strings.  No I/O on the
 * system, so test_maps.c can test them.
 */
#ifndef VMAMERGE_CLI_H
#define VMAMERGE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

enum cli_cmd {
	CMD_NONE,
	CMD_HELP,
	CMD_VERSION,
	CMD_STATUS,
	CMD_MODE,
	CMD_FEATURES,
	CMD_ENABLE,
	CMD_DISABLE,
	CMD_RUN,
	CMD_STATS,
	CMD_MAPS,
	CMD_VERIFY,
	CMD_COMPACT,
	CMD_CHECK_KERNEL,
	CMD_SELFTEST,
};

struct cli {
	enum cli_cmd cmd;
	enum cli_cmd help_cmd;	/* CMD_HELP: about this command (NONE: all) */
	enum cli_cmd err_cmd;	/* the command a usage error is about */
	bool have_pid;
	pid_t pid;
	bool json;
	bool no_exec;
	bool summary;
	bool all;
	const char *image;	/* check-kernel --image, or NULL */
	const char *config;	/* check-kernel --config, or NULL */
	int nargs;		/* positional arguments */
	char **args;		/* points into argv; args[nargs] == NULL */
};

/*
 * Parse argv (getopt_long; argv may be permuted).  Returns 0, or -1 with a
 * one-line message in err that ends in a pointer to the help (a usage
 * error; exit with cli_usage_status()).  "COMMAND -h" and "help COMMAND"
 * give cmd CMD_HELP with help_cmd COMMAND.
 */
int cli_parse(int argc, char **argv, struct cli *c, char *err, size_t errlen);

/* Exit status of a usage error: 125 for run (like env, nice), else 2. */
int cli_usage_status(const struct cli *c);

/* The help of one command, or of all (CMD_NONE). */
void cli_help(FILE *f, enum cli_cmd cmd);

/* A command's name ("stats"), or NULL. */
const char *cli_cmd_name(enum cli_cmd cmd);

/*
 * A counter's name (VMAMERGE_COUNTERS: "merge_attempts", ...); one this
 * tool does not know (a newer module) as "counter_N" in buf.
 */
const char *counter_name(unsigned int i, char *buf, size_t len);

/*
 * A kernel release as uname -r prints it, safe to put into a path:
 * letters, digits and "._+~-", not starting with '.' or '-', at most 64
 * characters (the kernel's limit).
 */
bool release_valid(const char *s);

/* Strict decimal: digits only, no sign/space, <= max.  0 or -1. */
int parse_ull_strict(const char *s, unsigned long long max,
		     unsigned long long *out);
/* A pid: 1..INT_MAX.  0 or -1. */
int parse_pid(const char *s, pid_t *pid);

/* Mode names (enum vmamerge_mode). */
int mode_from_name(const char *s);	/* -1 if unknown */
const char *mode_name(unsigned int mode);	/* NULL if unknown */
/* "always [optin] never" */
void format_mode(char *buf, size_t len, unsigned int mode);

/* Feature names (VMAMERGE_FEATURE_*). */
unsigned int feature_from_name(const char *s, size_t len);	/* 0: unknown */
/* "[renumber] [transplant]" */
void format_features(char *buf, size_t len, unsigned int features);
/* {"renumber": true, "transplant": false} */
void json_features(FILE *f, unsigned int features);
/*
 * Apply feature tokens (all, none, name, +name, -name; an argument may
 * hold several separated by blanks or commas) to *mask, left to right.
 * Returns 0, or -1 with the bad token in bad (NUL-terminated).
 */
int features_apply(unsigned int *mask, int ntok, char **tok,
		   char *bad, size_t badlen);

/* Parse debugfs "always [optin] never": the bracketed one, or -1. */
int debugfs_parse_mode(const char *text);
/* Parse debugfs "[renumber] transplant": 0 or -1 (unknown token). */
int debugfs_parse_features(const char *text, unsigned int *features);

/* Write s as a JSON string (quoted; invalid UTF-8 bytes as \u00XX). */
void json_string(FILE *f, const char *s);

#endif /* VMAMERGE_CLI_H */
