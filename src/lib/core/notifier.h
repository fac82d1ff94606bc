/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The notifier: overflow notifications of counters (internal; the public
 * side is the queue of perfctr/notify.h).
 *
 * Attached to counters through their view (core/counters.h), it maps a
 * one-page ring (perfctr_ring) on every notifying counter, and turns each
 * PERF_RECORD_SAMPLE the kernel writes there, decoded by the record
 * decoder (perfctr_sample__parse), into a PERFCTR_MSG_OVFL message in a
 * queue: pid, tid, cpu, ip and time of the overflow, and, when asked, the
 * values of other events of the group read by the kernel at the overflow
 * (PERF_SAMPLE_READ), kept in slots that perfctr_session__msg_values()
 * reads by the message's number.
 *
 * Blocking mode: a twin of each notifying counter on each thread unit,
 * whose overflow signal is SIGSTOP to the counted thread itself, so that
 * the kernel stops it at the overflow rather than when a handler gets to
 * it (the thread runs on meanwhile on another CPU).
 *
 * Configuration (record lists) only while detached; the slots and message
 * numbers outlive a detach, for the messages still queued.
 *
 * Async-signal-safe: pc_notifier__drain, pc_notifier__enable_twins,
 * pc_notifier__set_twin_period.  A drain that finds another drain of the
 * same ring running (a signal handler interrupting a drain of its own
 * thread) leaves that ring to it.
 */
#ifndef PERFCTR_CORE_NOTIFIER_H
#define PERFCTR_CORE_NOTIFIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/counters.h"
#include "perfctr/notify.h"

struct pc_notifier;

/* pc_notifier__new() - an empty notifier.  NULL + errno. */
struct pc_notifier *pc_notifier__new(void);

/* pc_notifier__delete() - detach and free; NULL is a no-op. */
void pc_notifier__delete(struct pc_notifier *n);

/*
 * pc_notifier__set_record() - record with each message of @event the
 * values of @events (@nr of them, session indices, in the order given;
 * none for @nr 0).  Detached only.  0 or -ENOMEM.
 */
int pc_notifier__set_record(struct pc_notifier *n, size_t event,
			    const size_t *events, size_t nr);

/* pc_notifier__nr_record() - how many values @event records. */
size_t pc_notifier__nr_record(const struct pc_notifier *n, size_t event);

/*
 * pc_notifier__attach() - map a ring on every unit of every event with
 * @notifying[e] set and, when @queue is blocking, open the twins
 * (disabled: see pc_notifier__enable_twins).  @counters must stay valid
 * until detach.  Return: 0 or -errno, with nothing left attached.
 */
int pc_notifier__attach(struct pc_notifier *n, const struct pc_counters *counters,
			const bool *notifying, struct perfctr_notify *queue);

/* pc_notifier__detach() - drain nothing more; unmap, close the twins. */
void pc_notifier__detach(struct pc_notifier *n);

/* pc_notifier__attached() - true between attach and detach (NULL: false). */
bool pc_notifier__attached(const struct pc_notifier *n);

/* pc_notifier__has_twins() - attached in blocking mode (NULL: false). */
bool pc_notifier__has_twins(const struct pc_notifier *n);

/*
 * pc_notifier__drain() - queue one message per sample waiting in the ring
 * of @event on @unit, naming @active_set.  Async-signal-safe.
 */
void pc_notifier__drain(struct pc_notifier *n, size_t event, size_t unit,
			uint16_t active_set);

/*
 * pc_notifier__enable_twins() - enable the twins of @event (every event
 * when @event is (size_t)-1) when @on, else disable them: a twin counts
 * when its counter does.  Async-signal-safe.
 */
void pc_notifier__enable_twins(struct pc_notifier *n, size_t event, bool on);

/* pc_notifier__set_twin_period() - give @event's twin on @unit the
 * period @period (see pc_sampctl_set_period).  Async-signal-safe. */
void pc_notifier__set_twin_period(struct pc_notifier *n, size_t event,
				  size_t unit, uint64_t period, bool enable);

/*
 * pc_notifier__msg_values() - the values recorded with @msg (see
 * perfctr_session__msg_values()).  Return: the number of values, -ENOENT
 * (none recorded), -ESTALE (overwritten since).
 */
int pc_notifier__msg_values(const struct pc_notifier *n,
			    const struct perfctr_msg *msg, uint64_t *values,
			    size_t nr);

#endif /* PERFCTR_CORE_NOTIFIER_H */
