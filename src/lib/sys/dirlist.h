/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* A sorted listing of one directory, for sysfs and tracefs discovery. */
#ifndef PERFCTR_SYS_DIRLIST_H
#define PERFCTR_SYS_DIRLIST_H

#include <stddef.h>

enum pc_dirlist_what {
	PC_DIRLIST_ALL,		/* every entry but . and .. */
	PC_DIRLIST_DIRS,	/* directories (symlinks followed) */
	PC_DIRLIST_FILES,	/* regular files */
};

struct pc_dirlist {
	char **names;
	size_t nr;
};

/* Read @path's entries, sorted by strcmp.  Return 0 or -errno. */
int pc_dirlist_read(const char *path, enum pc_dirlist_what what,
		    struct pc_dirlist *out);
void pc_dirlist_free(struct pc_dirlist *list);

#endif /* PERFCTR_SYS_DIRLIST_H */
