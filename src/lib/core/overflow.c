// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Overflow signals for one counter group: see overflow.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "core/overflow.h"
#include "sys/sys.h"

/* Words of the largest group read we accept: nr, enabled, running, and a
 * value and an id per member. */
#define READ_WORDS_MAX (3 + 2 * (PC_OVF_MAX_COUNTERS + 8))

struct pc_ovf {
	struct pc_ovf_desc desc;
	struct pc_ovf_counter counters[PC_OVF_MAX_COUNTERS];
	int suspend_fds[PC_OVF_MAX_COUNTERS + 1];
	/* Next overflow point of each counter, in its kernel count. */
	uint64_t next[PC_OVF_MAX_COUNTERS];
	_Atomic uint64_t overflows[PC_OVF_MAX_COUNTERS];
	_Atomic uint64_t mask;
	atomic_bool suspended;
	/* One processor at a time (the handler, or an accessor called from
	 * another thread); the loser returns "nothing new". */
	atomic_flag busy;
};

/*
 * fd -> pc_ovf, readable in a signal handler: two levels, the chunks are
 * allocated under the mutex and never freed.
 */
#define CHUNK_BITS 10
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define NR_CHUNKS 64
typedef _Atomic(struct pc_ovf *) ovf_slot;
static _Atomic(ovf_slot *) table[NR_CHUNKS];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

/* Handlers between table lookup and their last use of a pc_ovf: delete
 * waits for this to drain after unpublishing. */
static atomic_int in_flight;

/* Per signal number: the handler we replaced, and how many pc_ovf use it. */
struct sig_slot {
	struct sigaction prev;
	unsigned int users;
	bool installed;
};
static struct sig_slot sigs[_NSIG];

static ovf_slot *slot_of(int fd, bool create)
{
	ovf_slot *chunk;
	unsigned int c;

	if (fd < 0)
		return NULL;
	c = (unsigned int)fd >> CHUNK_BITS;
	if (c >= NR_CHUNKS)
		return NULL;
	chunk = atomic_load_explicit(&table[c], memory_order_acquire);
	if (!chunk && create) {
		/* Caller holds table_lock. */
		chunk = calloc(CHUNK_SIZE, sizeof(*chunk));
		if (!chunk)
			return NULL;
		atomic_store_explicit(&table[c], chunk, memory_order_release);
	}
	if (!chunk)
		return NULL;
	return &chunk[(unsigned int)fd & (CHUNK_SIZE - 1)];
}

static void call_prev(int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *prev = &sigs[sig].prev;

	if (prev->sa_flags & SA_SIGINFO) {
		if (prev->sa_sigaction)
			prev->sa_sigaction(sig, si, uc);
		return;
	}
	if (prev->sa_handler == SIG_DFL || prev->sa_handler == SIG_IGN)
		return;
	prev->sa_handler(sig);
}

static void ovf_signal_handler(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;
	struct pc_ovf *ovf = NULL;
	uint64_t fresh;

	fresh = pc_ovf__handle(si, &ovf);
	if (!ovf) {
		/* Not one of our fds: the application's own use of the
		 * signal. */
		call_prev(sig, si, uc);
	} else if (fresh && ovf->desc.chain) {
		call_prev(sig, si, uc);
	}
	errno = saved_errno;
}

/* Disable or enable the suspend fds; the first error is returned. */
static int toggle_suspend_fds(struct pc_ovf *ovf, bool enable)
{
	int rc = 0, r;
	size_t i;

	for (i = 0; i < ovf->desc.nr_suspend; i++) {
		r = enable ? sys_perf_enable(ovf->suspend_fds[i], false)
			   : sys_perf_disable(ovf->suspend_fds[i], false);
		if (r < 0 && !rc)
			rc = r;
	}
	return rc;
}

static uint64_t identify(struct pc_ovf *ovf)
{
	uint64_t buf[READ_WORDS_MAX], fresh = 0;
	size_t want = ovf->desc.read_words * sizeof(uint64_t);
	ssize_t n;
	size_t i;

	n = read(ovf->desc.read_fd, buf, want);
	if (n < 0 || (size_t)n < want)
		return 0;
	for (i = 0; i < ovf->desc.nr_counters; i++) {
		const struct pc_ovf_counter *c = &ovf->counters[i];
		uint64_t value, times;

		if (!c->period)
			continue;
		value = buf[c->value_pos];
		if (value < ovf->next[i])
			continue;
		times = (value - ovf->next[i]) / c->period + 1;
		ovf->next[i] += times * c->period;
		atomic_fetch_add(&ovf->overflows[i], times);
		fresh |= 1ull << i;
	}
	return fresh;
}

uint64_t pc_ovf__handle(const siginfo_t *si, struct pc_ovf **out)
{
	struct pc_ovf *ovf = NULL;
	uint64_t fresh = 0;
	ovf_slot *slot;

	if (out)
		*out = NULL;
	if (!si || si->si_code != POLL_IN)
		return 0;
	atomic_fetch_add(&in_flight, 1);
	slot = slot_of(si->si_fd, false);
	if (slot)
		ovf = atomic_load_explicit(slot, memory_order_acquire);
	if (ovf && ovf->desc.signo == si->si_signo &&
	    !atomic_flag_test_and_set(&ovf->busy)) {
		fresh = identify(ovf);
		if (fresh) {
			if (ovf->desc.nr_suspend &&
			    !atomic_exchange(&ovf->suspended, true))
				toggle_suspend_fds(ovf, false);
			atomic_fetch_or(&ovf->mask, fresh);
			if (ovf->desc.notify)
				ovf->desc.notify(ovf, fresh, si,
						 ovf->desc.ctx);
		}
		atomic_flag_clear(&ovf->busy);
	}
	if (out)
		*out = ovf;
	atomic_fetch_sub(&in_flight, 1);
	return fresh;
}

uint64_t pc_ovf__mask(const struct pc_ovf *ovf)
{
	return ovf ? atomic_load(&ovf->mask) : 0;
}

bool pc_ovf__suspended(const struct pc_ovf *ovf)
{
	return ovf && atomic_load(&ovf->suspended);
}

int pc_ovf__resume(struct pc_ovf *ovf)
{
	if (!ovf)
		return pc_err(EINVAL);
	atomic_store(&ovf->mask, 0);
	if (atomic_exchange(&ovf->suspended, false)) {
		int rc = toggle_suspend_fds(ovf, true);

		if (ovf->desc.kick_leader) {
			sys_perf_disable(ovf->desc.read_fd, false);
			sys_perf_enable(ovf->desc.read_fd, false);
		}
		return rc;
	}
	return 0;
}

void pc_ovf__rearm(struct pc_ovf *ovf)
{
	size_t i;

	while (atomic_flag_test_and_set(&ovf->busy))
		sched_yield();
	for (i = 0; i < ovf->desc.nr_counters; i++) {
		ovf->next[i] = ovf->counters[i].period;
		atomic_store(&ovf->overflows[i], 0);
	}
	atomic_store(&ovf->mask, 0);
	atomic_store(&ovf->suspended, false);
	atomic_flag_clear(&ovf->busy);
}

uint64_t pc_ovf__overflows(const struct pc_ovf *ovf, size_t i)
{
	if (!ovf || i >= ovf->desc.nr_counters)
		return 0;
	return atomic_load(&ovf->overflows[i]);
}

void pc_ovf__set_next(struct pc_ovf *ovf, size_t i, uint64_t next)
{
	if (ovf && i < ovf->desc.nr_counters)
		ovf->next[i] = next;
}

static int install_handler(int signo)
{
	struct sig_slot *s = &sigs[signo];
	struct sigaction sa;

	if (s->installed) {
		s->users++;
		return 0;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = ovf_signal_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(signo, &sa, &s->prev) < 0)
		return -errno;
	s->installed = true;
	s->users = 1;
	pr_debug("overflow signals: handler installed for signal %d\n", signo);
	return 0;
}

static void uninstall_handler(int signo)
{
	struct sig_slot *s = &sigs[signo];
	struct sigaction cur;

	if (!s->installed || --s->users)
		return;
	/* Give the signal back only if nobody replaced our handler since:
	 * otherwise the application's own choice stays. */
	if (sigaction(signo, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
	    cur.sa_sigaction == ovf_signal_handler)
		sigaction(signo, &s->prev, NULL);
	s->installed = false;
}

static int arm_fd(int fd, int signo, pid_t tid)
{
	struct f_owner_ex owner = { F_OWNER_TID, tid };
	int flags;

	/* F_SETSIG first: without it the signal carries no fd. */
	if (fcntl(fd, F_SETSIG, signo) < 0 ||
	    fcntl(fd, F_SETOWN_EX, &owner) < 0)
		return -errno;
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_ASYNC) < 0)
		return -errno;
	return 0;
}

static void disarm_fd(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_ASYNC);
}

static void unpublish(struct pc_ovf *ovf, size_t upto)
{
	size_t i;

	for (i = 0; i < upto; i++) {
		const struct pc_ovf_counter *c = &ovf->counters[i];
		ovf_slot *slot;

		if (!c->period)
			continue;
		disarm_fd(c->fd);
		slot = slot_of(c->fd, false);
		if (slot && atomic_load(slot) == ovf)
			atomic_store(slot, NULL);
	}
}

struct pc_ovf *pc_ovf__new(const struct pc_ovf_desc *desc)
{
	struct pc_ovf *ovf;
	size_t i, armed = 0;
	int err = 0;

	if (!desc || !desc->nr_counters ||
	    desc->nr_counters > PC_OVF_MAX_COUNTERS ||
	    desc->nr_suspend > PC_OVF_MAX_COUNTERS + 1 ||
	    desc->signo <= 0 || desc->signo >= _NSIG ||
	    desc->signo == SIGKILL || desc->signo == SIGSTOP ||
	    desc->read_words == 0 || desc->read_words > READ_WORDS_MAX ||
	    desc->read_fd < 0 || desc->tid <= 0) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < desc->nr_counters; i++)
		if (desc->counters[i].value_pos >= desc->read_words) {
			errno = EINVAL;
			return NULL;
		}
	ovf = calloc(1, sizeof(*ovf));
	if (!ovf)
		return NULL;
	ovf->desc = *desc;
	memcpy(ovf->counters, desc->counters,
	       desc->nr_counters * sizeof(desc->counters[0]));
	if (desc->nr_suspend)
		memcpy(ovf->suspend_fds, desc->suspend_fds,
		       desc->nr_suspend * sizeof(int));
	ovf->desc.counters = ovf->counters;
	ovf->desc.suspend_fds = ovf->suspend_fds;
	atomic_flag_clear(&ovf->busy);
	for (i = 0; i < desc->nr_counters; i++)
		ovf->next[i] = ovf->counters[i].period;

	pthread_mutex_lock(&table_lock);
	err = install_handler(desc->signo);
	for (i = 0; !err && i < desc->nr_counters; i++) {
		const struct pc_ovf_counter *c = &ovf->counters[i];
		ovf_slot *slot;

		if (!c->period)
			continue;
		slot = slot_of(c->fd, true);
		if (!slot) {
			err = c->fd < 0 ? -EBADF : -EMFILE;
			break;
		}
		if (atomic_load(slot)) {
			err = -EBUSY;	/* already watched by another group */
			break;
		}
		atomic_store_explicit(slot, ovf, memory_order_release);
		armed = i + 1;
		err = arm_fd(c->fd, desc->signo, desc->tid);
	}
	if (err) {
		unpublish(ovf, armed);
		uninstall_handler(desc->signo);
	}
	pthread_mutex_unlock(&table_lock);
	if (err) {
		free(ovf);
		errno = -err;
		return NULL;
	}
	return ovf;
}

void pc_ovf__delete(struct pc_ovf *ovf)
{
	if (!ovf)
		return;
	pthread_mutex_lock(&table_lock);
	unpublish(ovf, ovf->desc.nr_counters);
	uninstall_handler(ovf->desc.signo);
	pthread_mutex_unlock(&table_lock);
	/* A handler that looked the object up before it was unpublished may
	 * still use it. */
	while (atomic_load(&in_flight))
		sched_yield();
	free(ovf);
}
