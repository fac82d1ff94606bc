// SPDX-License-Identifier: LGPL-2.1
/*
 * Targets: what a session counts, as a list of (thread, cpu) units.
 *
 * A command target is a forked child held before exec: it blocks reading a
 * pipe until perfctr_target__start() writes to it, so that counters can be
 * attached to its pid (with enable_on_exec) first.  An exec failure is sent
 * back through a second, close-on-exec pipe: end of file on it means the
 * exec succeeded, four bytes are the errno of execve().
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/internal.h"
#include "core/target-internal.h"
#include "sys/sys.h"

extern char **environ;

enum command_state {
	COMMAND_HELD,		/* forked, waiting to be released */
	COMMAND_RUNNING,	/* released (exec'ed or failed to) */
	COMMAND_REAPED,		/* waited for: status is known */
};

struct target_unit {
	pid_t tid;
	int cpu;
};

struct perfctr_target {
	enum perfctr_target_kind kind;
	pid_t pid;
	struct target_unit *units;
	size_t nr_units;

	/* Command targets only. */
	enum command_state state;
	int go_fd;		/* write end: one byte releases the child */
	int exec_err_fd;	/* read end: the exec's errno, or EOF */
	int status;		/* wait status once reaped */
};

static struct perfctr_target *target_alloc(enum perfctr_target_kind kind,
					   pid_t pid, size_t nr_units)
{
	struct perfctr_target *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->units = calloc(nr_units ? nr_units : 1, sizeof(*t->units));
	if (!t->units) {
		free(t);
		return NULL;
	}
	t->kind = kind;
	t->pid = pid;
	t->nr_units = nr_units;
	t->go_fd = -1;
	t->exec_err_fd = -1;
	return t;
}

static bool task_exists(pid_t tid)
{
	char path[64];

	/* /proc/TID exists for every thread id, listed or not. */
	snprintf(path, sizeof(path), "/proc/%d", (int)tid);
	return access(path, F_OK) == 0;
}

struct perfctr_target *perfctr_target__new_self(void)
{
	struct perfctr_target *t;
	pid_t tid = (pid_t)syscall(SYS_gettid);

	t = target_alloc(PERFCTR_TARGET_SELF, tid, 1);
	if (!t)
		return NULL;
	t->units[0].tid = tid;
	t->units[0].cpu = -1;
	return t;
}

struct perfctr_target *perfctr_target__new_thread(pid_t tid)
{
	struct perfctr_target *t;

	if (tid <= 0) {
		errno = EINVAL;
		return NULL;
	}
	if (!task_exists(tid)) {
		errno = ESRCH;
		return NULL;
	}
	t = target_alloc(PERFCTR_TARGET_THREAD, tid, 1);
	if (!t)
		return NULL;
	t->units[0].tid = tid;
	t->units[0].cpu = -1;
	return t;
}

struct perfctr_target *perfctr_target__new_thread_on_cpus(pid_t tid,
							  const char *cpulist)
{
	struct perfctr_target *t;
	int *cpus = NULL;
	int n, i;

	if (tid <= 0) {
		errno = EINVAL;
		return NULL;
	}
	n = pc_parse_cpulist(cpulist, &cpus);
	if (n < 0) {
		errno = -n;
		return NULL;
	}
	if (!task_exists(tid)) {
		free(cpus);
		errno = ESRCH;
		return NULL;
	}
	t = target_alloc(PERFCTR_TARGET_THREAD, tid, (size_t)n);
	if (t) {
		for (i = 0; i < n; i++) {
			t->units[i].tid = tid;
			t->units[i].cpu = cpus[i];
		}
	}
	free(cpus);
	return t;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/* The threads of @pid now, the main thread first, the rest by tid. */
static int list_threads(pid_t pid, pid_t **out)
{
	char path[64];
	DIR *dir;
	struct dirent *de;
	pid_t *tids = NULL, *grown;
	size_t n = 0, cap = 0, i;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(dir))) {
		uint64_t v;

		if (pc_parse_u64(de->d_name, 10, &v) || !v || v > INT_MAX)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			grown = realloc(tids, cap * sizeof(*tids));
			if (!grown) {
				free(tids);
				closedir(dir);
				return -ENOMEM;
			}
			tids = grown;
		}
		tids[n++] = (pid_t)v;
	}
	closedir(dir);
	if (!n) {
		free(tids);
		return -ESRCH;	/* a zombie: no thread left to count */
	}
	qsort(tids, n, sizeof(*tids), cmp_pid);
	for (i = 0; i < n; i++) {
		if (tids[i] == pid) {
			memmove(tids + 1, tids, i * sizeof(*tids));
			tids[0] = pid;
			break;
		}
	}
	*out = tids;
	return (int)n;
}

struct perfctr_target *perfctr_target__new_process(pid_t pid)
{
	struct perfctr_target *t;
	pid_t *tids = NULL;
	int n, i;

	if (pid <= 0) {
		errno = EINVAL;
		return NULL;
	}
	n = list_threads(pid, &tids);
	if (n < 0) {
		errno = -n;
		return NULL;
	}
	t = target_alloc(PERFCTR_TARGET_PROCESS, pid, (size_t)n);
	if (t) {
		for (i = 0; i < n; i++) {
			t->units[i].tid = tids[i];
			t->units[i].cpu = -1;
		}
	}
	free(tids);
	return t;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

static int parse_cpu(const char **s, int *cpu)
{
	const char *p = *s;
	long v = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (*p - '0');
		if (v > 1 << 20)	/* far beyond any CONFIG_NR_CPUS */
			return -EINVAL;
		p++;
	}
	*s = p;
	*cpu = (int)v;
	return 0;
}

int pc_parse_cpulist(const char *list, int **cpus)
{
	const char *p = list;
	int *out = NULL, *grown;
	size_t n = 0, cap = 0, i, j;

	if (!list || !*list)
		return -EINVAL;
	for (;;) {
		int first, last, c;

		if (parse_cpu(&p, &first))
			goto inval;
		last = first;
		if (*p == '-') {
			p++;
			if (parse_cpu(&p, &last) || last < first)
				goto inval;
		}
		for (c = first; c <= last; c++) {
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				grown = realloc(out, cap * sizeof(*out));
				if (!grown) {
					free(out);
					return -ENOMEM;
				}
				out = grown;
			}
			out[n++] = c;
		}
		if (!*p)
			break;
		if (*p != ',')
			goto inval;
		p++;
	}
	qsort(out, n, sizeof(*out), cmp_int);
	for (i = j = 0; i < n; i++)
		if (!j || out[j - 1] != out[i])
			out[j++] = out[i];
	*cpus = out;
	return (int)j;
inval:
	free(out);
	return -EINVAL;
}

struct perfctr_target *perfctr_target__new_cpus(const char *cpulist)
{
	struct perfctr_target *t = NULL;
	char online_buf[4096];
	int *cpus = NULL, *online = NULL;
	int n, n_online, i, k, err;

	err = sys_online_cpus(online_buf, sizeof(online_buf));
	if (err < 0)
		goto fail;
	n_online = pc_parse_cpulist(online_buf, &online);
	if (n_online < 0) {
		err = n_online;
		goto fail;
	}
	if (cpulist && *cpulist) {
		n = pc_parse_cpulist(cpulist, &cpus);
		if (n < 0) {
			err = n;
			goto fail;
		}
		/* Both lists are sorted: one merge pass checks membership. */
		for (i = k = 0; i < n; i++) {
			while (k < n_online && online[k] < cpus[i])
				k++;
			if (k == n_online || online[k] != cpus[i]) {
				err = -ENODEV;
				goto fail;
			}
		}
	} else {
		cpus = online;
		online = NULL;
		n = n_online;
	}
	t = target_alloc(PERFCTR_TARGET_CPUS, -1, (size_t)n);
	if (!t) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < n; i++) {
		t->units[i].tid = -1;
		t->units[i].cpu = cpus[i];
	}
	free(cpus);
	free(online);
	return t;
fail:
	free(cpus);
	free(online);
	errno = -err;
	return NULL;
}

/*
 * The file execve() will run for @name: @name itself when it holds a '/',
 * otherwise the first match in the caller's PATH, as execvp() looks.
 * Return 0, -ENOENT or -EACCES (found, but no file we may execute).
 */
static int resolve_command(const char *name, char *path, size_t size)
{
	const char *dirs, *p;
	int err = -ENOENT;
	struct stat st;

	if (!*name)
		return -ENOENT;
	if (strchr(name, '/')) {
		if (stat(name, &st))
			return -errno;
		if (!S_ISREG(st.st_mode) || access(name, X_OK))
			return -EACCES;
		if (pc_strlcpy(path, name, size) >= size)
			return -ENAMETOOLONG;
		return 0;
	}
	dirs = getenv("PATH");
	if (!dirs || !*dirs)
		dirs = "/usr/local/bin:/usr/bin:/bin";
	for (p = dirs; ; ) {
		const char *end = strchrnul(p, ':');
		int len = (int)(end - p);
		int n;

		/* An empty PATH element means the current directory. */
		if (len)
			n = snprintf(path, size, "%.*s/%s", len, p, name);
		else
			n = snprintf(path, size, "%s", name);
		if (n > 0 && (size_t)n < size && !stat(path, &st)) {
			if (S_ISREG(st.st_mode) && !access(path, X_OK))
				return 0;
			err = -EACCES;
		}
		if (!*end)
			break;
		p = end + 1;
	}
	return err;
}

/* In the child between fork and exec: async-signal-safe calls only. */
static void __attribute__((noreturn))
command_child(const char *path, char *const argv[], char *const envp[],
	      int go_fd, int err_fd, const int std_fds[3])
{
	char go;
	int i, errnum;
	ssize_t n;

	for (i = 0; i < 3; i++) {
		if (std_fds[i] < 0 || std_fds[i] == i)
			continue;
		if (dup2(std_fds[i], i) < 0) {
			errnum = errno;
			(void)!write(err_fd, &errnum, sizeof(errnum));
			_exit(127);
		}
	}
	do
		n = read(go_fd, &go, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127);	/* the target was deleted without a start */
	close(go_fd);
	execve(path, argv, envp);
	errnum = errno;
	(void)!write(err_fd, &errnum, sizeof(errnum));
	_exit(127);
}

struct perfctr_target *
perfctr_target__new_command(char *const argv[],
			    const struct perfctr_command_opts *opts)
{
	struct perfctr_target *t;
	char path[PATH_MAX];
	char *const *envp;
	int go[2], err_pipe[2], std_fds[3], err;
	pid_t pid;

	if (!argv || !argv[0] || !pc_opts_valid(opts, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	err = resolve_command(argv[0], path, sizeof(path));
	if (err) {
		errno = -err;
		return NULL;
	}
	envp = PC_OPTS_GET(opts, envp, NULL);
	if (!envp)
		envp = environ;
	/* 0 means "inherit" for stdout and stderr too, so that a zeroed opts
	 * struct changes nothing; stdin 0 is stdin anyway. */
	std_fds[0] = PC_OPTS_GET(opts, stdin_fd, -1);
	std_fds[1] = PC_OPTS_GET(opts, stdout_fd, -1);
	std_fds[2] = PC_OPTS_GET(opts, stderr_fd, -1);
	if (std_fds[1] == 0)
		std_fds[1] = -1;
	if (std_fds[2] == 0)
		std_fds[2] = -1;

	t = target_alloc(PERFCTR_TARGET_COMMAND, -1, 1);
	if (!t)
		return NULL;
	if (pipe2(go, O_CLOEXEC)) {
		err = errno;
		goto fail_free;
	}
	if (pipe2(err_pipe, O_CLOEXEC)) {
		err = errno;
		goto fail_go;
	}
	pid = fork();
	if (pid < 0) {
		err = errno;
		goto fail_pipes;
	}
	if (pid == 0) {
		close(go[1]);
		close(err_pipe[0]);
		command_child(path, argv, envp, go[0], err_pipe[1], std_fds);
	}
	close(go[0]);
	close(err_pipe[1]);
	t->pid = pid;
	t->units[0].tid = pid;
	t->units[0].cpu = -1;
	t->state = COMMAND_HELD;
	t->go_fd = go[1];
	t->exec_err_fd = err_pipe[0];
	return t;

fail_pipes:
	close(err_pipe[0]);
	close(err_pipe[1]);
fail_go:
	close(go[0]);
	close(go[1]);
fail_free:
	free(t->units);
	free(t);
	errno = err;
	return NULL;
}

int perfctr_target__start(struct perfctr_target *target)
{
	int errnum = 0;
	ssize_t n;

	if (!target || target->kind != PERFCTR_TARGET_COMMAND)
		return pc_err(EINVAL);
	if (target->state != COMMAND_HELD)
		return pc_err(EALREADY);
	target->state = COMMAND_RUNNING;
	n = write(target->go_fd, "g", 1);
	close(target->go_fd);
	target->go_fd = -1;
	if (n != 1) {
		/* The child is gone already (killed while held). */
		close(target->exec_err_fd);
		target->exec_err_fd = -1;
		return pc_err(ECHILD);
	}
	do
		n = read(target->exec_err_fd, &errnum, sizeof(errnum));
	while (n < 0 && errno == EINTR);
	close(target->exec_err_fd);
	target->exec_err_fd = -1;
	if (n == (ssize_t)sizeof(errnum) && errnum > 0)
		return pc_err(errnum);
	return 0;
}

/* Wait for a process we did not fork: its pidfd becomes readable when it
 * exits.  The exit status is not ours to collect. */
static int wait_foreign(pid_t pid)
{
	struct pollfd pfd;
	int fd, rc;

	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return errno == ESRCH ? 0 : -errno;
	pfd.fd = fd;
	pfd.events = POLLIN;
	do
		rc = poll(&pfd, 1, -1);
	while (rc < 0 && errno == EAGAIN);
	rc = rc < 0 ? -errno : 0;
	close(fd);
	return rc;
}

int perfctr_target__wait(struct perfctr_target *target, int *status)
{
	pid_t rc;
	int st;

	if (!target)
		return pc_err(EINVAL);
	if (target->kind == PERFCTR_TARGET_PROCESS) {
		int err = wait_foreign(target->pid);

		return err ? pc_err(-err) : 0;
	}
	if (target->kind != PERFCTR_TARGET_COMMAND)
		return pc_err(ECHILD);
	if (target->state == COMMAND_HELD)
		return pc_err(EINVAL);	/* it would wait for ever */
	if (target->state == COMMAND_RUNNING) {
		rc = waitpid(target->pid, &st, 0);
		if (rc < 0)
			return pc_err(errno);
		target->status = st;
		target->state = COMMAND_REAPED;
	}
	if (status)
		*status = target->status;
	return 0;
}

int perfctr_target__kill(struct perfctr_target *target, int sig)
{
	if (!target)
		return pc_err(EINVAL);
	if (target->kind != PERFCTR_TARGET_COMMAND &&
	    target->kind != PERFCTR_TARGET_PROCESS)
		return pc_err(EINVAL);
	if (target->kind == PERFCTR_TARGET_COMMAND &&
	    target->state == COMMAND_REAPED)
		return pc_err(ESRCH);
	if (kill(target->pid, sig))
		return pc_err(errno);
	return 0;
}

void perfctr_target__delete(struct perfctr_target *target)
{
	if (!target)
		return;
	if (target->kind == PERFCTR_TARGET_COMMAND &&
	    target->state == COMMAND_HELD) {
		/* Never let a held child run: kill it, then reap it. */
		kill(target->pid, SIGKILL);
		while (waitpid(target->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (target->go_fd >= 0)
		close(target->go_fd);
	if (target->exec_err_fd >= 0)
		close(target->exec_err_fd);
	free(target->units);
	free(target);
}

enum perfctr_target_kind perfctr_target__kind(const struct perfctr_target *target)
{
	return target->kind;
}

pid_t perfctr_target__pid(const struct perfctr_target *target)
{
	return target->pid;
}

size_t perfctr_target__nr_units(const struct perfctr_target *target)
{
	return target->nr_units;
}

int perfctr_target__unit(const struct perfctr_target *target, size_t idx,
			 pid_t *tid, int *cpu)
{
	if (!target || idx >= target->nr_units)
		return pc_err(EINVAL);
	if (tid)
		*tid = target->units[idx].tid;
	if (cpu)
		*cpu = target->units[idx].cpu;
	return 0;
}

bool pc_target_is_held(const struct perfctr_target *target)
{
	return target->kind == PERFCTR_TARGET_COMMAND &&
	       target->state == COMMAND_HELD;
}

bool pc_target_inherits(const struct perfctr_target *target)
{
	return target->kind == PERFCTR_TARGET_PROCESS ||
	       target->kind == PERFCTR_TARGET_COMMAND;
}
