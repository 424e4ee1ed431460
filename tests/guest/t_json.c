// SPDX-License-Identifier: GPL-2.0
/*
 * A JSON checker for the busybox guest (no python, no jq there).
 *
 *   t_json [PATH...] < TEXT
 *
 * Exit 0 when TEXT is exactly one JSON value (RFC 8259; blanks around
 * it), 1 when it is not (why on stderr), 2 when a PATH is missing.  Each
 * PATH prints the text of the value it names, one line each: components
 * separated by '.', names of object members or array indexes
 * (".state.opted_in", ".vmas.0.start"; "." is the whole value).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *text;
static size_t pos;
static const char *why;

/* The path being looked up: its components, and what was found. */
static char *comp[16];
static int ncomp;
static const char *found;
static size_t found_len;

static void blanks(void)
{
	while (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n' ||
	       text[pos] == '\r')
		pos++;
}

static int fail(const char *what)
{
	if (!why)
		why = what;
	return -1;
}

static int value(int depth, int match);

static int string(void)
{
	if (text[pos] != '"')
		return fail("string expected");
	for (pos++; text[pos] != '"'; pos++) {
		unsigned char ch = text[pos];

		if (!ch || ch < 0x20)
			return fail("unterminated string or control character");
		if (ch != '\\')
			continue;
		pos++;
		if (text[pos] == 'u') {
			int i;

			for (i = 1; i <= 4; i++)
				if (!strchr("0123456789abcdefABCDEF", text[pos + i]) ||
				    !text[pos + i])
					return fail("bad \\u escape");
			pos += 4;
		} else if (!text[pos] || !strchr("\"\\/bfnrt", text[pos])) {
			return fail("bad escape");
		}
	}
	pos++;
	return 0;
}

static int number(void)
{
	size_t start = pos;

	if (text[pos] == '-')
		pos++;
	if (text[pos] == '0')
		pos++;
	else if (text[pos] >= '1' && text[pos] <= '9')
		while (text[pos] >= '0' && text[pos] <= '9')
			pos++;
	else
		return fail("bad number");
	if (text[pos] == '.') {
		pos++;
		if (text[pos] < '0' || text[pos] > '9')
			return fail("bad fraction");
		while (text[pos] >= '0' && text[pos] <= '9')
			pos++;
	}
	if (text[pos] == 'e' || text[pos] == 'E') {
		pos++;
		if (text[pos] == '+' || text[pos] == '-')
			pos++;
		if (text[pos] < '0' || text[pos] > '9')
			return fail("bad exponent");
		while (text[pos] >= '0' && text[pos] <= '9')
			pos++;
	}
	return pos > start ? 0 : -1;
}

/* Does the member name at text[start..end) (quotes excluded) match? */
static int name_is(size_t start, size_t end, const char *want)
{
	return strlen(want) == end - start && !strncmp(text + start, want, end - start);
}

/* match: depth up to which the path has matched so far (-1: off path) */
static int members(int depth, int match, int object)
{
	char idx[24];
	long n = 0;
	size_t ks, ke;
	int m;

	pos++;
	blanks();
	if (text[pos] == (object ? '}' : ']')) {
		pos++;
		return 0;
	}
	for (;;) {
		m = -1;
		if (object) {
			ks = pos + 1;
			if (string())
				return -1;
			ke = pos - 1;
			blanks();
			if (text[pos++] != ':')
				return fail("':' expected");
			blanks();
			if (match == depth && depth < ncomp && name_is(ks, ke, comp[depth]))
				m = depth + 1;
		} else {
			snprintf(idx, sizeof(idx), "%ld", n++);
			if (match == depth && depth < ncomp && !strcmp(idx, comp[depth]))
				m = depth + 1;
		}
		if (value(depth + 1, m))
			return -1;
		blanks();
		if (text[pos] == ',') {
			pos++;
			blanks();
			continue;
		}
		if (text[pos] == (object ? '}' : ']')) {
			pos++;
			return 0;
		}
		return fail(object ? "',' or '}' expected" : "',' or ']' expected");
	}
}

static int value(int depth, int match)
{
	size_t start = pos;
	int ret;

	if (depth > 64)
		return fail("nested too deeply");
	switch (text[pos]) {
	case '{':
		ret = members(depth, match, 1);
		break;
	case '[':
		ret = members(depth, match, 0);
		break;
	case '"':
		ret = string();
		break;
	case 't':
		ret = strncmp(text + pos, "true", 4) ? fail("bad literal") : 0;
		pos += 4;
		break;
	case 'f':
		ret = strncmp(text + pos, "false", 5) ? fail("bad literal") : 0;
		pos += 5;
		break;
	case 'n':
		ret = strncmp(text + pos, "null", 4) ? fail("bad literal") : 0;
		pos += 4;
		break;
	default:
		ret = number();
	}
	if (!ret && match == ncomp && match == depth) {
		found = text + start;
		found_len = pos - start;
	}
	return ret;
}

static char *slurp(void)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	size_t n;

	while (buf && (n = fread(buf + len, 1, cap - len - 1, stdin)) > 0) {
		len += n;
		if (cap - len < 2)
			buf = realloc(buf, cap *= 2);
	}
	if (buf)
		buf[len] = '\0';
	return buf;
}

int main(int argc, char **argv)
{
	char *in = slurp(), *p, *tok;
	int i;

	if (!in)
		return 1;
	text = in;
	for (i = 0; i <= argc - 1; i++) {
		/* i == 0: validate only */
		ncomp = 0;
		if (i > 0) {
			p = strdup(argv[i]);
			for (tok = strtok(p, "."); tok && ncomp < 16; tok = strtok(NULL, "."))
				comp[ncomp++] = tok;
		}
		found = NULL;
		why = NULL;
		pos = 0;
		blanks();
		if (!value(0, 0)) {
			blanks();
			if (text[pos])
				fail("text after the value");
		}
		if (why) {
			fprintf(stderr, "t_json: invalid JSON at byte %zu: %s\n", pos, why);
			return 1;
		}
		if (i > 0 && !found) {
			fprintf(stderr, "t_json: no %s\n", argv[i]);
			return 2;
		}
		if (i > 0)
			printf("%.*s\n", (int)found_len, found);
	}
	return 0;
}
