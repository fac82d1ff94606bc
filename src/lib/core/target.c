// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Targets: what a session counts, as a list of (thread, cpu) units.
 *
 * A command target is a child held before exec: it blocks reading a
 * socket until perfctr_target__start() writes to it, so that counters can be
 * attached to its pid (with enable_on_exec) first.  An exec failure is sent
 * back through a second, close-on-exec pipe: end of file on it means the
 * exec succeeded, four bytes are the errno of execve().
 *
 * On x86-64 and arm64 the child is not a fork: it is a clone that shares
 * our memory (CLONE_VM) and runs on a small stack of its own until its
 * exec.  A fork copies the page tables and write-protects every page of
 * the caller, which then takes a fault at each first write: about 1.3 ms
 * of a `perfex -- true` that costs 2.5 ms in all.  The shared-memory child
 * must not touch anything of ours: it makes raw system calls only (no
 * errno, no libc state, no sanitizer runtime), starts with every signal
 * blocked and resets the handlers it inherited before it unblocks them.
 * Its stack is freed once the exec has replaced its memory (end of file on
 * the error pipe) or the child has been reaped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/internal.h"
#include "core/target-internal.h"
#include "sys/cgroup.h"
#include "sys/cpulist.h"
#include "sys/sys.h"

extern char **environ;

static void reap(pid_t pid, int *status);

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
	void *stack;		/* the held child's stack (CLONE_VM), or NULL */
	size_t stack_size;

	/* Cgroup targets only: the directory (every unit's tid) and its path. */
	int cgroup_fd;
	char *cgroup_path;
	struct perfctr_bpf_counters *bpf;	/* not owned, or NULL */
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
	t->cgroup_fd = -1;
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

int pc_list_threads(pid_t pid, pid_t **out)
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
	n = pc_list_threads(pid, &tids);
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

/* A target of @kind with one unit (@tid, cpu) per CPU of @cpulist, which
 * must be online (NULL or "": every online CPU). */
static struct perfctr_target *new_on_cpus(enum perfctr_target_kind kind,
					  pid_t tid, const char *cpulist)
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
	t = target_alloc(kind, -1, (size_t)n);
	if (!t) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < n; i++) {
		t->units[i].tid = tid;
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

struct perfctr_target *perfctr_target__new_cpus(const char *cpulist)
{
	return new_on_cpus(PERFCTR_TARGET_CPUS, -1, cpulist);
}

struct perfctr_target *perfctr_target__new_cgroup(const char *path,
						  const char *cpulist)
{
	return perfctr_target__new_cgroup_opts(path, cpulist, NULL);
}

struct perfctr_target *
perfctr_target__new_cgroup_opts(const char *path, const char *cpulist,
				const struct perfctr_cgroup_opts *opts)
{
	struct perfctr_target *t;
	char full[4096];
	int fd, err;

	if (!pc_opts_valid(opts, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	fd = pc_cgroup2_open(path, full, sizeof(full));
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	t = new_on_cpus(PERFCTR_TARGET_CGROUP, fd, cpulist);
	if (!t) {
		err = errno;
		close(fd);
		errno = err;
		return NULL;
	}
	t->cgroup_fd = fd;
	t->bpf = PC_OPTS_GET(opts, bpf, NULL);
	t->cgroup_path = strdup(full);
	if (!t->cgroup_path) {
		perfctr_target__delete(t);
		errno = ENOMEM;
		return NULL;
	}
	return t;
}

struct perfctr_bpf_counters *pc_target_bpf(const struct perfctr_target *target)
{
	return target && target->kind == PERFCTR_TARGET_CGROUP ?
	       target->bpf : NULL;
}

int pc_target_cgroup_fd(const struct perfctr_target *target)
{
	return target && target->kind == PERFCTR_TARGET_CGROUP ?
	       target->cgroup_fd : -1;
}

const char *perfctr_target__cgroup_path(const struct perfctr_target *target)
{
	return target && target->kind == PERFCTR_TARGET_CGROUP ?
	       target->cgroup_path : NULL;
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

/* What the held child needs, read by it after the release. */
struct child_args {
	const char *path;
	char *const *argv;
	char *const *envp;
	int go_fd, err_fd;
	int parent_fds[2];	/* our ends of the socket and pipe: closed first */
	int std_fds[3];
	uint64_t sigmask;	/* the caller's, restored before the exec (CLONE_VM) */
	int death_signal;	/* PR_SET_PDEATHSIG, 0 = none */
};

/* Under ThreadSanitizer the child's code is instrumented and would share
 * its per-thread state with the thread that cloned it: a plain fork. */
#if defined(__SANITIZE_THREAD__)
#define PC_TSAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PC_TSAN_BUILD 1
#endif
#endif

#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(PC_TSAN_BUILD)
#define PC_SHARED_VM_CHILD 1

/* A system call that leaves errno alone: -errno on failure. */
static inline __attribute__((always_inline)) long
raw_call(long nr, long a, long b, long c, long d)
{
#if defined(__x86_64__)
	long ret;
	register long r10 __asm__("r10") = d;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
#else
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3)
			 : "memory");
	return x0;
#endif
}

/* The kernel's struct sigaction on both architectures. */
struct raw_sigaction {
	unsigned long handler;
	unsigned long flags;
	unsigned long restorer;
	uint64_t mask;
};

#define CHILD_STACK_SIZE (64 * 1024)

static inline void __attribute__((noreturn)) __attribute__((always_inline))
child_fail(int err_fd, long err)
{
	int errnum = (int)-err;

	raw_call(SYS_write, err_fd, (long)&errnum, sizeof(errnum), 0);
	for (;;)
		raw_call(SYS_exit_group, 127, 0, 0, 0);
}

/*
 * In the child, in the caller's memory: raw system calls only.  Entered
 * with every signal blocked.
 */
__attribute__((no_sanitize("address", "undefined"))) __attribute__((noinline))
static int command_child(void *arg)
{
	const struct child_args *a = arg;
	struct raw_sigaction old, dfl = { 0 };
	long n;
	char go;
	int i;

	/* Without our write end, a target deleted unstarted reads as EOF. */
	raw_call(SYS_close, a->parent_fds[0], 0, 0, 0);
	raw_call(SYS_close, a->parent_fds[1], 0, 0, 0);
	for (i = 0; i < 3; i++) {
		if (a->std_fds[i] < 0 || a->std_fds[i] == i)
			continue;
		n = raw_call(SYS_dup3, a->std_fds[i], i, 0, 0);
		if (n < 0)
			child_fail(a->err_fd, n);
	}
	/* A handler of the caller must never run here: back to the default
	 * for every handled signal (ignored ones stay ignored, as across an
	 * exec). */
	for (i = 1; i <= 64; i++) {
		if (i == SIGKILL || i == SIGSTOP)
			continue;
		if (raw_call(SYS_rt_sigaction, i, 0, (long)&old, 8) == 0 &&
		    old.handler != (unsigned long)SIG_DFL &&
		    old.handler != (unsigned long)SIG_IGN)
			raw_call(SYS_rt_sigaction, i, (long)&dfl, 0, 8);
	}
	raw_call(SYS_rt_sigprocmask, SIG_SETMASK, (long)&a->sigmask, 0, 8);
	/* Before the wait: a caller that died before this call has closed
	 * the socket, and the read below sees it. */
	if (a->death_signal)
		raw_call(SYS_prctl, PR_SET_PDEATHSIG, a->death_signal, 0, 0);
	do
		n = raw_call(SYS_read, a->go_fd, (long)&go, 1, 0);
	while (n == -EINTR);
	if (n != 1)
		for (;;)	/* the target was deleted without a start */
			raw_call(SYS_exit_group, 127, 0, 0, 0);
	raw_call(SYS_close, a->go_fd, 0, 0, 0);
	n = raw_call(SYS_execve, (long)a->path, (long)a->argv,
		     (long)a->envp, 0);
	child_fail(a->err_fd, n);
}

/* Bytes for a copy of a NULL-terminated string vector. */
static size_t vector_size(char *const *v)
{
	size_t n = sizeof(char *);

	for (; *v; v++)
		n += sizeof(char *) + strlen(*v) + 1;
	return n;
}

/* Copy @v to @mem (pointers first, then the strings); returns the copy. */
static char **vector_copy(char *const *v, char *mem)
{
	char **out = (char **)(void *)mem;
	size_t i, n = 0;
	char *p;

	while (v[n])
		n++;
	p = mem + (n + 1) * sizeof(char *);
	for (i = 0; i < n; i++) {
		size_t len = strlen(v[i]) + 1;

		memcpy(p, v[i], len);
		out[i] = p;
		p += len;
	}
	out[n] = NULL;
	return out;
}

/*
 * Start the held child on a stack of its own; its pid, or -errno.  The
 * child reads its arguments after we have returned: the mapping holds a
 * copy of them, of the path and of argv and envp as they are now (what a
 * fork would have kept), then the stack.
 */
static pid_t spawn_held(struct perfctr_target *t, struct child_args *a)
{
	size_t path_len = strlen(a->path) + 1;
	size_t data = sizeof(*a) + path_len + vector_size(a->argv) +
		      vector_size(a->envp) + 16;	/* + alignment */
	struct child_args *copy;
	sigset_t all, old;
	char *p;
	pid_t pid;
	int err;

	data = (data + 63) & ~(size_t)63;
	t->stack_size = data + CHILD_STACK_SIZE;
	t->stack = mmap(NULL, t->stack_size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (t->stack == MAP_FAILED) {
		t->stack = NULL;
		return -errno;
	}
	copy = t->stack;
	*copy = *a;
	p = (char *)(copy + 1);
	memcpy(p, a->path, path_len);
	copy->path = p;
	p += path_len;
	p += ((uintptr_t)p & 7) ? 8 - ((uintptr_t)p & 7) : 0;
	copy->argv = vector_copy(a->argv, p);
	p += vector_size(a->argv);
	p += ((uintptr_t)p & 7) ? 8 - ((uintptr_t)p & 7) : 0;
	copy->envp = vector_copy(a->envp, p);

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	memcpy(&copy->sigmask, &old, sizeof(copy->sigmask));
	/* The stack grows down from the end of the mapping. */
	pid = clone(command_child, (char *)t->stack + t->stack_size,
		    CLONE_VM | SIGCHLD, copy);
	err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		munmap(t->stack, t->stack_size);
		t->stack = NULL;
		return -err;
	}
	return pid;
}

static void free_stack(struct perfctr_target *t)
{
	if (t->stack) {
		munmap(t->stack, t->stack_size);
		t->stack = NULL;
	}
}

#else /* another architecture, or a TSan build: a plain fork */

/* In the child between fork and exec: async-signal-safe calls only. */
static void __attribute__((noreturn)) command_child(const struct child_args *a)
{
	char go;
	int i, errnum;
	ssize_t n;

	close(a->parent_fds[0]);
	close(a->parent_fds[1]);
	for (i = 0; i < 3; i++) {
		if (a->std_fds[i] < 0 || a->std_fds[i] == i)
			continue;
		if (dup2(a->std_fds[i], i) < 0) {
			errnum = errno;
			(void)!write(a->err_fd, &errnum, sizeof(errnum));
			_exit(127);
		}
	}
	if (a->death_signal)
		prctl(PR_SET_PDEATHSIG, a->death_signal, 0, 0, 0);
	do
		n = read(a->go_fd, &go, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127);	/* the target was deleted without a start */
	close(a->go_fd);
	execve(a->path, a->argv, a->envp);
	errnum = errno;
	(void)!write(a->err_fd, &errnum, sizeof(errnum));
	_exit(127);
}

static pid_t spawn_held(struct perfctr_target *t, struct child_args *a)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0)
		command_child(a);
	return pid;
}

static void free_stack(struct perfctr_target *t)
{
}
#endif

struct perfctr_target *
perfctr_target__new_command(char *const argv[],
			    const struct perfctr_command_opts *opts)
{
	struct perfctr_target *t;
	char path[PATH_MAX];
	char *const *envp;
	struct child_args args;
	int go[2], err_pipe[2], std_fds[3], err;
	pid_t pid;

	if (!argv || !argv[0] || !pc_opts_valid(opts, sizeof(*opts)) ||
	    PC_OPTS_GET(opts, parent_death_signal, 0) < 0 ||
	    PC_OPTS_GET(opts, parent_death_signal, 0) > SIGRTMAX) {
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
	/* A socket pair rather than a pipe: releasing a child that died
	 * while held must be an error (ECHILD), not our death by SIGPIPE. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go)) {
		err = errno;
		goto fail_free;
	}
	if (pipe2(err_pipe, O_CLOEXEC)) {
		err = errno;
		goto fail_go;
	}
	/* The child's copies of our ends of the pipes close at its exec
	 * (O_CLOEXEC): end of file on the error pipe still means "exec'ed". */
	args.path = path;
	args.argv = argv;
	args.envp = envp;
	args.go_fd = go[0];
	args.err_fd = err_pipe[1];
	args.parent_fds[0] = go[1];
	args.parent_fds[1] = err_pipe[0];
	memcpy(args.std_fds, std_fds, sizeof(args.std_fds));
	args.death_signal = PC_OPTS_GET(opts, parent_death_signal, 0);
	pid = spawn_held(t, &args);
	if (pid < 0) {
		err = (int)-pid;
		goto fail_pipes;
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
	n = send(target->go_fd, "g", 1, MSG_NOSIGNAL);
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
	if (n == (ssize_t)sizeof(errnum) && errnum > 0) {
		/* The child exits at once (127); reap it now, so that its
		 * stack is no longer in use when we free it. */
		reap(target->pid, &target->status);
		target->state = COMMAND_REAPED;
		free_stack(target);
		return pc_err(errnum);
	}
	/* End of file: the exec has replaced the child's memory. */
	free_stack(target);
	return 0;
}

/*
 * Wait for our child @pid to end.  A traced child (perfctr/tree.h) also
 * reports its ptrace stops here: let it run on until it is gone, so that
 * the status is its end, not a stop.
 */
static void reap(pid_t pid, int *status)
{
	int st = 0;
	pid_t rc;

	for (;;) {
		rc = waitpid(pid, &st, __WALL);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			break;
		if (WIFSTOPPED(st)) {
			ptrace(PTRACE_CONT, pid, 0, 0);
			continue;
		}
		break;
	}
	if (status)
		*status = st;
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
		free_stack(target);
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
		reap(target->pid, NULL);
	} else if (target->stack && target->state == COMMAND_RUNNING) {
		/* Released but failed before its exec (start() said so):
		 * it is exiting on our stack; wait for it before the unmap. */
		reap(target->pid, NULL);
	}
	free_stack(target);
	if (target->go_fd >= 0)
		close(target->go_fd);
	if (target->exec_err_fd >= 0)
		close(target->exec_err_fd);
	if (target->cgroup_fd >= 0)
		close(target->cgroup_fd);
	free(target->cgroup_path);
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

unsigned long pc_target_open_flags(const struct perfctr_target *target)
{
	return target->kind == PERFCTR_TARGET_CGROUP ? PERF_FLAG_PID_CGROUP : 0;
}

bool pc_target_units_may_vanish(const struct perfctr_target *target)
{
	return target->kind == PERFCTR_TARGET_PROCESS;
}

void pc_target_set_reaped(struct perfctr_target *target, int status)
{
	if (target->kind != PERFCTR_TARGET_COMMAND)
		return;
	target->status = status;
	target->state = COMMAND_REAPED;
	free_stack(target);
}
