/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The counter engine (internal): the one place that opens, toggles, reads
 * and closes counters.  Sessions, event sets, the sampler and vperfctr are
 * policies over it.  Not installed.
 *
 * An engine is a matrix of events x units:
 *   - units: the (tid, cpu) positions of a perfctr_target, copied when the
 *     engine is made (a thread, every thread of a process, a command's
 *     child, each CPU of a list, a thread on each CPU of a list);
 *   - events: perf_event_attr's added in order, each naming its group's
 *     leader (the first event of the group; an event that leads itself is
 *     a group of one);
 *   - slots: one event on one unit: its fd, id, user page and last count,
 *     event-major (slot(e, u) = slots[e * nr_units + u]);
 *   - a leader fd per (group, unit): the fd of the first member that could
 *     be opened there.  It led the perf group on that unit and every later
 *     member was opened into it; it is the fd that is toggled and, with
 *     PERF_FORMAT_GROUP, read.
 *
 * Life cycle:  new (target) -> add events -> open -> enable / disable /
 * reset / read ... -> close (counts and units stay readable) -> delete.
 * An engine is opened once; to count on another target, make another
 * engine (a failed open of the new one leaves the old one untouched).
 *
 * What the engine decides in each attr it opens (everything else is the
 * caller's, read_format included):
 *   - the event that leads a group on a unit is opened disabled (so that
 *     tracepoint filters are set before it counts, and every group starts
 *     together), with enable_on_exec as the group's first event has it;
 *   - members are opened enabled, without enable_on_exec: a member cannot
 *     count while its leader is off, and ENABLE with PERF_IOC_FLAG_GROUP
 *     would skip a disabled member of another PMU (docs/kernel-notes.md 4);
 *   - inherit is dropped on a CPU-wide unit (tid -1, or a cgroup's fd),
 *     where the kernel refuses it for some PMUs and it means nothing;
 *   - attr.size is this library's.
 * So toggling means one ioctl on each leader fd, without the group flag.
 *
 * When an event cannot be opened on a unit:
 *   - its PMU does not cover the unit's CPU (the cpus given to
 *     pc_engine__add(), an uncore or hybrid PMU): ENODEV, "unsupported";
 *   - the errno says "this machine cannot count this here"
 *     (pc_open_err_is_unsupported()): the slot keeps the errno and reads
 *     as PERFCTR_COUNT_NOT_SUPPORTED; the group's next member that opens
 *     leads in its place;
 *   - ESRCH on a unit of a process target: that thread ended after the
 *     threads were listed; the unit is marked gone (nothing open there);
 *   - anything else (EACCES, EMFILE, a refused filter ...), or anything
 *     at all with PC_ENGINE_STRICT: the open fails and closes every fd it
 *     made.
 *
 * Reads: pc_engine__read_group() reads one group on one unit and decodes
 * the answer with the one read-format decoder (stream/readfmt.h): with
 * PERF_FORMAT_GROUP one read(2) of the leader, whose entries are matched
 * to the slots by id (needs PERF_FORMAT_ID); without it one read(2) per
 * member.  With PC_ENGINE_MMAP, on the unit of the calling thread, it
 * first tries the user-space fast read (core/fastread.h): every open
 * member's user page must allow it now (cap_user_rdpmc, index != 0,
 * cap_user_time for current times), else it falls back to read(2).  The
 * results are the same either way.  On arm64 the engine sets the armv8
 * PMU's rdpmc format bit (config1:1) on the hardware events it maps, as
 * the kernel gives the page no counter index without it.
 *
 * Signals and rings are the caller's business: the fds are in the slots
 * (pc_engine__fd()), to arm with pc_ovf (O_ASYNC, F_SETSIG), to redirect
 * with sys_perf_set_output() into the ring of another fd (one ring per CPU
 * or thread: map the first event's fd on each unit, redirect the others
 * on that unit into it), to mmap, or to read a sample's PERF_SAMPLE_READ
 * part with pc_engine__decode_group().  Close nothing the engine opened;
 * pc_engine__close() does.  Mappings the caller made of engine fds are
 * the caller's to unmap (before or after the close: a mapping keeps its
 * event alive until it is unmapped).
 *
 * Who uses what: a counting session opens with read_format GROUP | ID |
 * TOTAL_TIME_*, toggles with pc_engine__enable() / __disable() and reads
 * with pc_engine__read(); event-set rotation toggles and reads one group
 * at a time (pc_engine__toggle_group(), pc_engine__read_group()); a
 * sampler adds every event as its own group without PERF_FORMAT_GROUP,
 * with inherit / enable_on_exec in its attrs as it needs, and opens with
 * PC_ENGINE_ENABLE (or enables later); self-monitoring opens a self
 * target with PC_ENGINE_MMAP and reads through the pages (the slots'
 * page, with core/fastread.h directly when it wants no times).
 *
 * A new kind of target (a cgroup) adds its units and its open flag in
 * target.c (pc_target_open_flags()); nothing here changes.
 *
 * Thread safety: none; one thread uses an engine at a time.  Reads use a
 * buffer inside the engine: a signal handler may read only if it cannot
 * interrupt another call on the same engine.
 */
#ifndef PERFCTR_CORE_ENGINE_H
#define PERFCTR_CORE_ENGINE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/fastread.h"
#include "perfctr/count.h"
#include "perfctr/target.h"

struct pc_engine;

/* A position of the target. */
struct pc_unit {
	pid_t tid;		/* -1: any thread (CPU-wide) */
	int cpu;		/* -1: any CPU (a thread wherever it runs) */
	/* A thread of a process target that ended between the listing of
	 * the threads and the open: nothing open, to be left out of sums. */
	bool gone;
};

/* One event on one unit. */
struct pc_slot {
	int fd;			/* -1 when not open */
	int open_err;		/* errno of the failed open, 0 when opened */
	uint64_t id;		/* PERF_EVENT_IOC_ID of fd */
	struct perfctr_count count;	/* as of the last read */
	uint64_t lost;		/* PERF_FORMAT_LOST, as of the last read */
	/* The user page (PC_ENGINE_MMAP), or NULL. */
	volatile struct perf_event_mmap_page *page;
	bool page_mapped;	/* page is the engine's mapping of fd */
};

/* What pc_engine__add() takes; every pointer is copied. */
struct pc_engine_event {
	const struct perf_event_attr *attr;
	/* Index of the group's first event, earlier than this one or
	 * this one's own (it leads).  Members of a group should share the
	 * leader's read_format. */
	size_t leader;
	const char *filter;	/* tracepoint filter, or NULL */
	/* The event's PMU's own CPUs (sysfs `cpus`/`cpumask` of an uncore
	 * or hybrid PMU), NULL for all: on other CPUs it is unsupported. */
	const int *cpus;
	size_t nr_cpus;
	/* A cgroup target whose tasks this event counts on the units' CPUs
	 * instead of the units' own (perf's -G per event; the units must be
	 * CPU-wide: a CPU list or a cgroup; a group's members must have
	 * their leader's, as the kernel wants).  Its directory fd is taken,
	 * not the target: it must stay until the open.  NULL: the units'. */
	const struct perfctr_target *cgroup;
};

enum pc_engine_flags {
	/* Any event that cannot be opened fails the open. */
	PC_ENGINE_STRICT = 1u << 0,
	/* Enable every leader once all are open and filtered; without it
	 * the leaders stay off until pc_engine__enable() (or their exec,
	 * with enable_on_exec). */
	PC_ENGINE_ENABLE = 1u << 1,
	/* Map each fd's user page, for the fast read: only on thread
	 * units (cpu -1), for events without inherit (the page knows
	 * nothing of children), never for software, tracepoint and
	 * breakpoint events (their page holds no current count). */
	PC_ENGINE_MMAP = 1u << 2,
	/* Open nothing: only the slots are made (fd -1, NOT_COUNTED), for
	 * counts that another mechanism fills in (a session counting
	 * cgroups through BPF, core/bpfcg.h). */
	PC_ENGINE_NO_FDS = 1u << 3,
	/* Opens the kernel refuses are not passed on to the access broker. */
	PC_ENGINE_NO_BROKER = 1u << 4,
};

/* The open that made pc_engine__open() fail (errnum 0: none did, the
 * failure was elsewhere). */
struct pc_engine_failure {
	size_t event;
	int errnum;
	char broker[256];	/* the access broker's refusal, or "" */
};

/* Every unit, for pc_engine__toggle_group(). */
#define PC_ENGINE_ALL_UNITS ((size_t)-1)

/* True when @err from perf_event_open means "this machine cannot count
 * this event here" rather than a failure of the whole open. */
bool pc_open_err_is_unsupported(int err);

/*
 * pc_engine__new() - an engine without events on @target's units as they
 * are now.  The target is not kept: it may change or go afterwards.
 * Return: NULL + errno (EINVAL for NULL, ESRCH for a target without
 * units, ENOMEM).
 */
struct pc_engine *pc_engine__new(const struct perfctr_target *target);

/*
 * pc_engine__new_per_cpu() - as pc_engine__new(), but each unit of
 * @target without a CPU (a thread wherever it runs) becomes one unit per
 * CPU of @cpus (@nr_cpus of them; NULL for the online CPUs), in the
 * target's unit order, then the CPUs'; units with a CPU stay as they are.
 * For rings of inherited events: the kernel maps no ring of an inherited
 * event that follows a thread on every CPU.
 * Return: NULL + errno (as pc_engine__new(); EINVAL for @cpus without
 * @nr_cpus; the online list's errno).
 */
struct pc_engine *pc_engine__new_per_cpu(const struct perfctr_target *target,
					 const int *cpus, size_t nr_cpus);

/*
 * pc_engine__new_single() - an engine of one event, @attr, on one
 * position (@tid, @cpu: a thread, a CPU, or a thread on a CPU), opened
 * strictly and left disabled (what the leader of a group gets, see
 * above).  For a policy's own helper counter on the position of counters
 * someone else owns: the switch clock of event sets, the blocking twin of
 * a notifying counter.  *@fd gets its fd, to arm, toggle, re-period and
 * read; the engine keeps owning it (pc_engine__delete() closes it).
 * Return: the engine, or NULL + errno (EINVAL for a NULL @attr or @fd,
 * ENOMEM, the open's errno).
 */
struct pc_engine *pc_engine__new_single(const struct perf_event_attr *attr,
					pid_t tid, int cpu, int *fd);

/* pc_engine__delete() - close and free; NULL is a no-op. */
void pc_engine__delete(struct pc_engine *e);

/*
 * pc_engine__add() - append an event (before the open).
 * Return: its index, -EINVAL (NULL attr, bad leader, a leader that is
 * itself a member), -EBUSY once opened, -ENOMEM (engine unchanged).
 */
int pc_engine__add(struct pc_engine *e, const struct pc_engine_event *ev);

/*
 * pc_engine__open() - open every event on every unit (see the top of this
 * file for what becomes of the ones that cannot be opened), set the
 * filters, map the pages, then with PC_ENGINE_ENABLE enable the leaders.
 * @flags: enum pc_engine_flags.
 * Return: 0; -EINVAL without events; -EBUSY when opened before; -ESRCH
 * when every unit is gone; the failing call's -errno.  On failure nothing
 * stays open.
 */
int pc_engine__open(struct pc_engine *e, unsigned int flags);

/* After a failed pc_engine__open(): which event's open failed it, and
 * the broker's reason when the broker refused that open. */
const struct pc_engine_failure *pc_engine__failure(const struct pc_engine *e);

/* pc_engine__close() - close every fd (members before leaders), unmap the
 * pages.  Counts, units and events stay readable.  Idempotent. */
void pc_engine__close(struct pc_engine *e);

/* Shape.  Out of range: NULL / (size_t)-1. */
size_t pc_engine__nr_events(const struct pc_engine *e);
size_t pc_engine__nr_units(const struct pc_engine *e);
size_t pc_engine__nr_groups(const struct pc_engine *e);
const struct pc_unit *pc_engine__unit(const struct pc_engine *e, size_t u);
/* All units, [0, nr_units) */
const struct pc_unit *pc_engine__units(const struct pc_engine *e);
/* The group of event @ev (groups are numbered in the order their first
 * event was added), and a group's events, its first event first. */
size_t pc_engine__group_of(const struct pc_engine *e, size_t ev);
size_t pc_engine__group_size(const struct pc_engine *e, size_t g);
size_t pc_engine__group_member(const struct pc_engine *e, size_t g, size_t m);
/* The attr as given to pc_engine__add(). */
const struct perf_event_attr *pc_engine__attr(const struct pc_engine *e,
					      size_t ev);

/* The slot of event @ev on unit @u; NULL out of range.  Callers may read
 * everything and may change count (e.g. to zero it); fd, id and page are
 * the engine's. */
struct pc_slot *pc_engine__slot(const struct pc_engine *e, size_t ev, size_t u);

/* The fd of event @ev on unit @u, -1 when not open or out of range. */
int pc_engine__fd(const struct pc_engine *e, size_t ev, size_t u);

/* The fd leading group @g on unit @u, -1 when none (nothing of the group
 * opened there, or closed).  The array of all of them, group-major
 * (leader_fds[g * nr_units + u]), is pc_engine__leader_fds(). */
int pc_engine__leader_fd(const struct pc_engine *e, size_t g, size_t u);
int *pc_engine__leader_fds(const struct pc_engine *e);

/*
 * pc_engine__enable() / __disable() - one ioctl per leader fd.
 * pc_engine__reset() - one RESET with the group flag per leader fd (it
 * reaches members of other PMUs); the kept counts are not touched.
 * Return: 0 or the first failed ioctl's -errno (the others are still
 * done).
 */
int pc_engine__enable(struct pc_engine *e);
int pc_engine__disable(struct pc_engine *e);
int pc_engine__reset(struct pc_engine *e);

enum pc_engine_op {
	PC_ENGINE_OP_ENABLE,
	PC_ENGINE_OP_DISABLE,
	PC_ENGINE_OP_RESET,
};

/* pc_engine__toggle_group() - @op on group @g's leader on unit @u, or on
 * every unit with PC_ENGINE_ALL_UNITS (rotation of event sets).
 * Return: 0 (also when nothing is open there), -EINVAL out of range, or
 * the first failed ioctl's -errno. */
int pc_engine__toggle_group(struct pc_engine *e, size_t g, size_t u,
			    enum pc_engine_op op);

/*
 * pc_engine__read_group() - fresh counts for group @g on unit @u into its
 * slots (count, lost): the fast read when possible, else read(2).  A
 * count's status becomes OK when it ran, NOT_COUNTED when it never did;
 * slots that are not open keep theirs.  Times are 0 for a read_format
 * without them.
 * Return: 0 (also when nothing is open there), the read's -errno (-ENODEV
 * for a CPU gone offline), -EIO for a malformed answer; on error the
 * slots keep their previous counts.
 */
int pc_engine__read_group(struct pc_engine *e, size_t g, size_t u);

/* pc_engine__read() - every group on every unit.  Return: 0 or the first
 * error other than -ENODEV (the rest are still read). */
int pc_engine__read(struct pc_engine *e);

/* pc_engine__decode_group() - what pc_engine__read_group() does with the
 * @len bytes a read(2) of group @g's leader on unit @u returned (with
 * PERF_FORMAT_GROUP): for answers that come another way (a sample's
 * PERF_SAMPLE_READ with the group's format), and for tests.  Return: 0,
 * -EIO, -EINVAL. */
int pc_engine__decode_group(struct pc_engine *e, size_t g, size_t u,
			    const void *buf, size_t len);

/* How many group reads the fast read has served (tests, diagnostics). */
uint64_t pc_engine__fast_reads(const struct pc_engine *e);

/* Test seams.  pc_engine__set_readers(): the counter and timestamp
 * readers of the fast read (both NULL: the machine's), so that a test
 * can feed it a synthetic page.  pc_engine__set_page(): read slot (ev, u)
 * from @page, which the engine does not own (NULL: no fast read there);
 * the slot's own mapping, if any, is dropped.  Return: 0, -EINVAL when
 * out of range or not open. */
void pc_engine__set_readers(struct pc_engine *e, pc_read_pmc_t read_pmc,
			    pc_read_stamp_t read_stamp);
int pc_engine__set_page(struct pc_engine *e, size_t ev, size_t u,
			volatile struct perf_event_mmap_page *page);

/* The calling thread's id, cached per thread (and forgotten in a forked
 * child): whose counters the fast read may read. */
pid_t pc_self_tid(void);

#endif /* PERFCTR_CORE_ENGINE_H */
