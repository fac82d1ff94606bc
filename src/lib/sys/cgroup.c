// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* cgroup v2 discovery (see cgroup.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/internal.h"
#include "sys/cgroup.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

/*
 * One mountinfo line: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL
 * FIELDS...] - FSTYPE SOURCE SUPEROPTIONS".  The optional fields are
 * variable in number: the type is the field after the lone "-".
 */
static bool parse_line(char *line, char **root, char **mnt, char **type)
{
	char *save = NULL, *tok;
	int field = 0;
	bool dash = false;

	*root = *mnt = *type = NULL;
	for (tok = strtok_r(line, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save), field++) {
		if (field == 3)
			*root = tok;
		else if (field == 4)
			*mnt = tok;
		else if (field > 5 && !dash && !strcmp(tok, "-"))
			dash = true;
		else if (dash) {
			*type = tok;
			break;
		}
	}
	return *root && *mnt && *type;
}

int pc_cgroup2_mount(const char *mountinfo, char *out, size_t size)
{
	char *line = NULL, *root, *mnt, *type;
	size_t cap = 0;
	bool found = false, at_root = false;
	FILE *f;
	int err = 0;

	f = fopen(mountinfo ? mountinfo : "/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	while (!at_root && getline(&line, &cap, f) > 0) {
		if (!parse_line(line, &root, &mnt, &type) ||
		    strcmp(type, "cgroup2"))
			continue;
		/* A bind mount of a sub-cgroup is a cgroup too, but paths
		 * relative to the mount would then not be the cgroup paths
		 * of /proc/PID/cgroup: the hierarchy's root wins. */
		if (found && strcmp(root, "/"))
			continue;
		unescape(mnt);
		if (pc_strlcpy(out, mnt, size) >= size) {
			err = -ENAMETOOLONG;
			break;
		}
		found = true;
		at_root = !strcmp(root, "/");
	}
	free(line);
	fclose(f);
	if (err)
		return err;
	return found ? 0 : -ENOMEDIUM;
}

static bool on_cgroup2(int fd)
{
	struct statfs sfs;

	return !fstatfs(fd, &sfs) && sfs.f_type == CGROUP2_SUPER_MAGIC;
}

int pc_cgroup2_open(const char *path, char *out, size_t size)
{
	char mnt[4096], full[4096];
	int fd, err, n;

	if (!path)
		path = "";
	if (path[0] == '/') {
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0 && on_cgroup2(fd)) {
			if (out && pc_strlcpy(out, path, size) >= size) {
				close(fd);
				return -ENAMETOOLONG;
			}
			return fd;
		}
		if (fd >= 0)
			close(fd);
	}
	err = pc_cgroup2_mount(NULL, mnt, sizeof(mnt));
	if (err)
		return err;
	while (*path == '/')
		path++;
	n = snprintf(full, sizeof(full), "%s%s%s", mnt, *path ? "/" : "",
		     path);
	if (n < 0 || (size_t)n >= sizeof(full))
		return -ENAMETOOLONG;
	fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!on_cgroup2(fd)) {
		/* Something mounted over a directory of the hierarchy. */
		close(fd);
		return -ENOTDIR;
	}
	if (out && pc_strlcpy(out, full, size) >= size) {
		close(fd);
		return -ENAMETOOLONG;
	}
	return fd;
}

int pc_cgroup2_id(int fd, uint64_t *id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h;
	struct stat st;
	int mount_id;

	/* kernfs hands out the node id, which is the cgroup id that BPF's
	 * cgroup helpers return, as the file handle of a cgroup directory. */
	h.fh.handle_bytes = sizeof(h.id);
	if (!name_to_handle_at(fd, "", &h.fh, &mount_id, AT_EMPTY_PATH) &&
	    h.fh.handle_bytes == sizeof(h.id)) {
		memcpy(id, h.fh.f_handle, sizeof(*id));
		return 0;
	}
	/* On 64-bit kernels the inode number is the same id. */
	if (fstat(fd, &st))
		return -errno;
	*id = st.st_ino;
	return 0;
}
