/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The output file of perfex record, created so that nobody else's file is
 * ever written: perfex often runs as root, in directories others can write
 * to (/tmp, a shared project directory).
 *
 * The file is always a new one, made with O_CREAT | O_EXCL | O_NOFOLLOW:
 * that neither follows a symbolic link nor opens anything that is already
 * there, so a link planted at the path -- before the start or at any moment
 * during it (a race) -- can only make the creation fail, never redirect it.
 * What was at the path is first moved to PATH.old, as perf does: rename(2)
 * moves a link, not its target, and never opens a FIFO or a device.  A
 * symbolic link owned by another user and a file that is not a regular one
 * are refused instead of moved: they are either an attack or a mistake.
 * Everything happens relative to one descriptor of the directory, so the
 * directory cannot be swapped between the steps.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfex.h"

static const char *file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO: return "a FIFO";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFSOCK: return "a socket";
	case S_IFDIR: return "a directory";
	default: return "not a regular file";
	}
}

int perfex_create_output(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir, *old = NULL;
	const char *base;
	int dfd, fd = -1, tries;

	if (slash) {
		dir = strndup(path, (size_t)(slash - path) + 1);
		base = slash + 1;
	} else {
		dir = strdup(".");
		base = path;
	}
	if (!dir || asprintf(&old, "%s.old", base) < 0) {
		free(dir);
		perfex_error("out of memory");
		return -1;
	}
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		perfex_error("cannot create '%s': it names a directory", path);
		goto out;
	}
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		perfex_error("cannot create '%s': %s", path, strerror(errno));
		goto out;
	}
	for (tries = 0; tries < 3; tries++) {
		struct stat st;

		fd = openat(dfd, base, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
			    O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST) {
			if (fd < 0)
				perfex_error("cannot create '%s': %s", path,
					     strerror(errno));
			break;
		}
		if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;	/* gone meanwhile: try again */
			perfex_error("cannot create '%s': %s", path, strerror(errno));
			break;
		}
		if (S_ISLNK(st.st_mode) && st.st_uid != geteuid()) {
			perfex_error("'%s' is a symbolic link owned by another user (uid %u): not followed, not replaced",
				     path, (unsigned int)st.st_uid);
			perfex_hint("remove it, or give another output file with -o");
			break;
		}
		if (!S_ISLNK(st.st_mode) && !S_ISREG(st.st_mode)) {
			perfex_error("cannot write '%s': it is %s, not a regular file",
				     path, file_kind(st.st_mode));
			perfex_hint("give a regular file with -o");
			break;
		}
		/* Kept as perf keeps it; a link is moved, never followed. */
		if (renameat(dfd, base, dfd, old) < 0 && errno != ENOENT) {
			perfex_error("cannot keep the existing '%s' as '%s.old': %s",
				     path, path, strerror(errno));
			break;
		}
	}
	if (tries == 3)
		perfex_error("cannot create '%s': something else keeps creating it",
			     path);
	close(dfd);
out:
	free(dir);
	free(old);
	return fd;
}
