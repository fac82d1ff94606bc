// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* tracefs discovery (see tracefs.h). */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/internal.h"
#include "sys/broker.h"
#include "sys/dirlist.h"
#include "sys/tracefs.h"

/* Is a tracefs mounted at @path?  (For callers who cannot look inside.) */
static bool tracefs_mounted_at(const char *path)
{
	char line[1024], dir[512], type[64];
	bool found = false;
	FILE *f = fopen("/proc/self/mounts", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*s %511s %63s", dir, type) == 2 &&
			!strcmp(dir, path) && !strcmp(type, "tracefs");
	fclose(f);
	return found;
}

static int root_ok(const char *root)
{
	char path[4096];
	int n;

	n = snprintf(path, sizeof(path), "%s/events", root);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	if (!access(path, R_OK | X_OK))
		return 0;
	/*
	 * tracefs is mode 0700: an unprivileged caller cannot even see
	 * whether events/ exists, so ask the mount table.
	 */
	if (errno == EACCES)
		return tracefs_mounted_at(root) ? -EACCES : -ENOTDIR;
	return -ENOTDIR;
}

int pc_tracefs_root(const char *root, char *out, size_t size)
{
	static const char *const defaults[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	int ret = -ENOTDIR;
	size_t i;

	if (root) {
		ret = root_ok(root);
		if (!ret && pc_strlcpy(out, root, size) >= size)
			ret = -ENAMETOOLONG;
		return ret;
	}
	for (i = 0; i < ARRAY_SIZE(defaults); i++) {
		int r = root_ok(defaults[i]);

		if (!r) {
			pc_strlcpy(out, defaults[i], size);
			return 0;
		}
		/* EACCES on any candidate says more than "not mounted". */
		if (r == -EACCES)
			ret = r;
	}
	if (ret == -EACCES && pc_broker_enabled()) {
		pc_strlcpy(out, PC_TRACEFS_BROKER, size);
		return 0;
	}
	return ret;
}

int pc_tracefs_id(const char *root, const char *sys, const char *name,
		  uint64_t *id)
{
	char path[4096], buf[32];
	int n;

	if (strchr(sys, '/') || strchr(name, '/') || !*sys || !*name)
		return -ENOENT;
	if (!strcmp(root, PC_TRACEFS_BROKER))
		return pc_broker_tp_id(sys, name, id);
	n = snprintf(path, sizeof(path), "%s/events/%s/%s/id", root, sys, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	n = pc_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n == -ENOTDIR ? -ENOENT : n;
	return pc_parse_u64(buf, 10, id) ? -EINVAL : 0;
}

static int walk_sys(const char *root, const char *sys, const char *name_glob,
		    pc_tracepoint_cb cb, void *ctx)
{
	struct pc_dirlist names;
	char path[4096];
	size_t i;
	int ret, n;

	n = snprintf(path, sizeof(path), "%s/events/%s", root, sys);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	ret = pc_dirlist_read(path, PC_DIRLIST_DIRS, &names);
	if (ret)
		return ret;
	for (i = 0; i < names.nr && !ret; i++)
		if (!name_glob || !fnmatch(name_glob, names.names[i], 0))
			ret = cb(sys, names.names[i], ctx);
	pc_dirlist_free(&names);
	return ret;
}

struct broker_walk {
	const char *sys_glob, *name_glob;
	pc_tracepoint_cb cb;
	void *ctx;
};

static int broker_walk_one(const char *full, void *ctx)
{
	const struct broker_walk *w = ctx;
	const char *colon = strchr(full, ':');
	char sys[256];

	if (!colon || (size_t)(colon - full) >= sizeof(sys))
		return 0;
	memcpy(sys, full, (size_t)(colon - full));
	sys[colon - full] = '\0';
	if ((w->sys_glob && fnmatch(w->sys_glob, sys, 0)) ||
	    (w->name_glob && fnmatch(w->name_glob, colon + 1, 0)))
		return 0;
	return w->cb(sys, colon + 1, w->ctx);
}

int pc_tracefs_walk(const char *root, const char *sys_glob,
		    const char *name_glob, pc_tracepoint_cb cb, void *ctx)
{
	struct pc_dirlist systems;
	char path[4096];
	size_t i;
	int ret, n;

	if (!strcmp(root, PC_TRACEFS_BROKER)) {
		struct broker_walk w = { sys_glob, name_glob, cb, ctx };

		return pc_broker_tp_list(broker_walk_one, &w);
	}

	n = snprintf(path, sizeof(path), "%s/events", root);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	ret = pc_dirlist_read(path, PC_DIRLIST_DIRS, &systems);
	if (ret)
		return ret;
	for (i = 0; i < systems.nr && !ret; i++) {
		if (sys_glob && fnmatch(sys_glob, systems.names[i], 0))
			continue;
		ret = walk_sys(root, systems.names[i], name_glob, cb, ctx);
		/* A subsystem that vanished or is unreadable is skipped. */
		if (ret == -ENOENT || ret == -EACCES)
			ret = 0;
	}
	pc_dirlist_free(&systems);
	return ret;
}
