// SPDX-License-Identifier: GPL-2.0
/*
 * t_asuser UID CMD [ARG...]: run CMD as UID (group UID, no supplementary
 * groups), with exactly the arguments given.  busybox's setpriv cannot
 * change ids and the guest has no user database for su.  Exit 99 when
 * the ids cannot be changed, 127 when CMD cannot be executed.
 */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	uid_t id;

	if (argc < 3) {
		fprintf(stderr, "usage: t_asuser UID CMD [ARG...]\n");
		return 99;
	}
	id = (uid_t)strtoul(argv[1], NULL, 10);
	if (setgroups(0, NULL) || setgid(id) || setuid(id)) {
		perror("t_asuser: changing ids");
		return 99;
	}
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
