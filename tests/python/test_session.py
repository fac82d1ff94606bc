# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfctr.Session and Target: perfmon2's life cycle (attach, start,
stop, read, detach, attach elsewhere with the sums going on), command,
process and CPU targets, per-unit counts, tracepoint filters, and event
sets rotating on a timeout with estimates and error bounds."""
import math
import os
import subprocess
import time

from pyharness import (PID, PPID, case, check, getpid, getppid,
                       need_tracepoints, perfctr, run_cases, work)


@case
def attach_detach_and_attach_again():
    need_tracepoints()
    s = perfctr.Session(PPID)
    check(not s.attached)
    s.attach()
    check(s.attached)
    s.start()
    getppid(30)
    s.stop()
    getppid(5)
    s.read()
    check(s[PPID] == 30, s)
    s.detach()
    check(not s.attached and s[PPID] == 30, s)
    t = perfctr.Target.command([work(), "getppid", "70"])
    s.attach(t)
    check(s.target is t)
    t.start()
    check(os.waitstatus_to_exitcode(t.wait()) == 0)
    s.read()
    check(s[PPID] == 100, s)        # 30 carried + 70 of the command
    s.detach()
    s.reset()
    check(s[PPID] == 0, s)
    try:
        s.detach()
    except RuntimeError as e:
        check("not attached" in str(e), str(e))
    else:
        check(False, "a second detach did not fail")
    s.close()
    try:
        s.read()
    except ValueError as e:
        check("closed" in str(e), str(e))
    else:
        check(False, "read after close did not fail")


@case
def process_target_counts_every_thread():
    need_tracepoints()
    p = subprocess.Popen([work(), "wait", "threads", "3", "200"],
                         stdin=subprocess.PIPE)
    try:
        s = perfctr.Session(PPID)
        s.attach(perfctr.Target.process(p.pid))
        check(s.target.pid == p.pid and s.target.kind == "process")
        s.start()
        p.stdin.write(b"go\n")
        p.stdin.flush()
        p.wait(60)
        s.read()
        check(s[PPID] == 600, s)
        units = s.unit_counts(PPID)
        check(len(units) >= 1 and sum(c for _, _, c in units) == 600, units)
        s.detach()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


@case
def cpu_target_with_a_filter():
    need_tracepoints()
    p = subprocess.Popen([work(), "wait", "getppid", "321"],
                         stdin=subprocess.PIPE)
    try:
        s = perfctr.Session(PPID)
        s.set_filter(PPID, "common_pid == %d" % p.pid)
        t = perfctr.Target.cpus()
        check(t.kind == "cpus" and len(t.units) == os.cpu_count(), t.units)
        s.attach(t)
        s.start()
        p.stdin.write(b"go\n")
        p.stdin.flush()
        p.wait(60)
        s.read()
        check(s[PPID] == 321, s)
        check(len(s.unit_counts(PPID)) == len(t.units))
        s.detach()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


@case
def sets_rotate_with_estimates_and_errors():
    need_tracepoints()
    s = perfctr.Session(PPID)
    s.create_set(0, 2_000_000)
    s.create_set(1, 2_000_000)
    check(s.add_events(PID, set=1) == 1)
    check(s.sets == [0, 1], s.sets)
    with s:
        check(s.active_set in (0, 1), s.active_set)
        end = time.monotonic() + 0.3
        calls = 0
        while time.monotonic() < end:
            getppid(50)
            getpid(50)
            calls += 50
    info = [s.set_info(i) for i in (0, 1)]
    check(all(i.runs >= 2 for i in info), info)
    for name in (PPID, PID):
        c, est = s[name], s.estimate(name)
        check(c.multiplexed and est.status == "scaled", (c, est))
        check(est.counted == c and 0 < est.fraction < 1, est)
        check(math.isfinite(est.error) and est.error > 0, est)
        # Each set counted about half the time, so the estimate is about
        # the calls made; within 5 standard errors or 25%, whichever is
        # wider (the error bound is statistical, the machine is loaded).
        slack = max(5 * est.error, 0.25 * calls)
        check(abs(est.value - calls) <= slack, (est, calls))
    check(set(s.estimates()) == {PPID, PID})
    try:
        s.add_events(PID)
    except RuntimeError as e:
        check("detached" in str(e), str(e))
    else:
        check(False, "events added while attached")
    s.detach()


@case
def sessions_without_events_cannot_attach():
    s = perfctr.Session()
    try:
        s.attach()
    except perfctr.Error as e:
        check("add events" in e.hint, str(e))
    else:
        check(False, "attach without events succeeded")


@case
def one_session_from_many_threads():
    # Calls on one session are serialised by its lock: threads reading,
    # starting and stopping it at once neither crash nor lose counts.
    need_tracepoints()
    import threading
    p = subprocess.Popen([work(), "wait", "getppid", "500"],
                         stdin=subprocess.PIPE)
    try:
        s = perfctr.Session(PPID)
        s.attach(perfctr.Target.process(p.pid))
        s.start()
        errors = []

        def hammer(i):
            try:
                for _ in range(300):
                    s.read()
                    s.raw_counts()
                    if i == 0:
                        s.stop()
                        s.start()
            except Exception as e:      # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=hammer, args=(i,))
                   for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        p.stdin.write(b"go\n")
        p.stdin.flush()
        p.wait(60)
        s.read()
        check(errors == [], errors)
        check(s[PPID] == 500, s)
        s.detach()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


@case
def help_describes_the_package():
    import pydoc
    text = pydoc.render_doc(perfctr, renderer=pydoc.plaintext)
    for word in ("count(", "ThreadCounter", "read_into", "Session",
                 "run(", "Metrics", "NotSupportedError", "Thread safety"):
        check(word in text, word)


run_cases()
