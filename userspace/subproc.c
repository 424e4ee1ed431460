// SPDX-License-Identifier: GPL-2.0
/*
 * subproc.c - run a helper program without a shell, capture its output.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "subproc.h"

extern char **environ;

/* One captured stream: grows up to SPAWN_MAX_OUTPUT, then drops the rest. */
struct stream {
	int fd;		/* -1 once at its end */
	char *buf;
	size_t len, cap;
	bool truncated;
};

static int stream_keep(struct stream *s, const char *data, size_t n)
{
	size_t room = SPAWN_MAX_OUTPUT - s->len;
	char *tmp;

	if (n > room) {
		s->truncated = true;
		n = room;
	}
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;

		while (cap < s->len + n + 1)
			cap *= 2;
		tmp = realloc(s->buf, cap);
		if (!tmp)
			return -ENOMEM;
		s->buf = tmp;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, data, n);
	s->len += n;
	s->buf[s->len] = '\0';
	return 0;
}

/* Read what is there: 0 (also at the end: fd closed), or -errno. */
static int stream_read(struct stream *s)
{
	char chunk[4096];
	ssize_t n = read(s->fd, chunk, sizeof(chunk));

	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -errno;
	if (!n) {
		close(s->fd);
		s->fd = -1;
		return 0;
	}
	return stream_keep(s, chunk, n);
}

/*
 * Both pipes until the program closed them (it exited, usually).  Both
 * are read as they fill: a program that fills one while we wait on the
 * other would otherwise block for ever.
 */
static int drain(struct stream s[2])
{
	struct pollfd p[2];
	int i, n, ret;

	while (s[0].fd >= 0 || s[1].fd >= 0) {
		for (i = 0; i < 2; i++) {
			p[i].fd = s[i].fd;	/* poll() skips a negative fd */
			p[i].events = POLLIN;
			p[i].revents = 0;
		}
		n = poll(p, 2, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (i = 0; i < 2; i++) {
			if (s[i].fd < 0 || !p[i].revents)
				continue;
			ret = stream_read(&s[i]);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* posix_spawn() with stdin /dev/null, stdout and stderr into the pipes. */
static int start(const char *path, char *const argv[], int out_fd, int err_fd,
		 pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	int ret = posix_spawn_file_actions_init(&fa);

	if (ret)
		return ret;
	ret = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (!ret)
		ret = posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	if (!ret)
		ret = posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	if (!ret)
		ret = posix_spawn(pid, path, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return ret;
}

int spawn_capture(const char *path, char *const argv[], struct spawn_out *o)
{
	struct stream s[2] = { { .fd = -1 }, { .fd = -1 } };
	int out[2] = { -1, -1 }, err[2] = { -1, -1 };
	pid_t pid;
	int ret;

	memset(o, 0, sizeof(*o));
	/* O_CLOEXEC: the program gets them as 1 and 2 only (dup2 clears it) */
	if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
		ret = errno;
		goto close_all;
	}
	ret = start(path, argv, out[1], err[1], &pid);
	/* our copies of the write ends: the pipes end when the program's do */
	close_fd(&out[1]);
	close_fd(&err[1]);
	if (ret)
		goto close_all;
	s[0].fd = out[0];
	s[1].fd = err[0];
	out[0] = err[0] = -1;
	ret = -drain(s);
	/* a program still writing gets EPIPE instead of blocking our wait */
	close_fd(&s[0].fd);
	close_fd(&s[1].fd);
	while (waitpid(pid, &o->status, 0) < 0) {
		if (errno != EINTR) {
			ret = ret ? ret : errno;
			break;
		}
	}
	if (!ret && (stream_keep(&s[0], "", 0) || stream_keep(&s[1], "", 0)))
		ret = ENOMEM;	/* an empty stream still gets its "" */
	if (ret) {
		free(s[0].buf);
		free(s[1].buf);
		memset(o, 0, sizeof(*o));
		return ret;
	}
	o->out = s[0].buf;
	o->out_len = s[0].len;
	o->err = s[1].buf;
	o->err_len = s[1].len;
	o->truncated = s[0].truncated || s[1].truncated;
	return 0;
close_all:
	close_fd(&out[0]);
	close_fd(&out[1]);
	close_fd(&err[0]);
	close_fd(&err[1]);
	return ret;
}

void spawn_out_free(struct spawn_out *o)
{
	free(o->out);
	free(o->err);
	memset(o, 0, sizeof(*o));
}

static bool executable(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

/* The first of the ':'-separated @dirs that has @name (empty ones skipped). */
static int find_in(const char *dirs, const char *name, char *buf, size_t len)
{
	const char *p = dirs, *end;
	int n;

	while (p && *p) {
		end = strchrnul(p, ':');
		n = snprintf(buf, len, "%.*s/%s", (int)(end - p), p, name);
		if (end > p && n > 0 && (size_t)n < len && executable(buf))
			return 0;
		p = *end ? end + 1 : end;
	}
	return -1;
}

int spawn_find(const char *name, const char *dirs, char *buf, size_t len)
{
	const char *path = getenv("PATH");

	if (path && !find_in(path, name, buf, len))
		return 0;
	return find_in(dirs, name, buf, len);
}
