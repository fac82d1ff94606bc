// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Sorted directory listings (see dirlist.h). */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sys/dirlist.h"

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* d_type is DT_UNKNOWN on some filesystems and DT_LNK for sysfs devices. */
static bool wanted(DIR *dir, const struct dirent *de, enum pc_dirlist_what what)
{
	struct stat st;

	if (what == PC_DIRLIST_ALL)
		return true;
	if (de->d_type == DT_DIR)
		return what == PC_DIRLIST_DIRS;
	if (de->d_type == DT_REG)
		return what == PC_DIRLIST_FILES;
	if (fstatat(dirfd(dir), de->d_name, &st, 0))
		return false;
	return what == PC_DIRLIST_DIRS ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
}

static int push(struct pc_dirlist *out, size_t *cap, const char *name)
{
	if (out->nr == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		char **names = realloc(out->names, ncap * sizeof(*names));

		if (!names)
			return -ENOMEM;
		out->names = names;
		*cap = ncap;
	}
	out->names[out->nr] = strdup(name);
	if (!out->names[out->nr])
		return -ENOMEM;
	out->nr++;
	return 0;
}

int pc_dirlist_read(const char *path, enum pc_dirlist_what what,
		    struct pc_dirlist *out)
{
	struct dirent *de;
	size_t cap = 0;
	int ret = 0;
	DIR *dir;

	out->names = NULL;
	out->nr = 0;
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!wanted(dir, de, what))
			continue;
		ret = push(out, &cap, de->d_name);
		if (ret)
			break;
	}
	closedir(dir);
	if (ret) {
		pc_dirlist_free(out);
		return ret;
	}
	if (out->nr)
		qsort(out->names, out->nr, sizeof(*out->names), cmp_names);
	return 0;
}

void pc_dirlist_free(struct pc_dirlist *list)
{
	size_t i;

	for (i = 0; i < list->nr; i++)
		free(list->names[i]);
	free(list->names);
	list->names = NULL;
	list->nr = 0;
}
