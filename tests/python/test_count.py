# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfctr.count(): exact counts of getppid tracepoints and software
events over a with block and per decorated call, groups and modifiers as
perfex takes them, inherit to threads and children, re-entry and other
threads, and hardware events marked "not supported" on a machine without
a PMU (raised with strict=True or when read by name)."""
import os
import threading

from pyharness import (PID, PPID, case, check, getpid, getppid,
                       need_tracepoints, perfctr, run_cases, skip)


@case
def counts_a_with_block_exactly():
    need_tracepoints()
    for n in (0, 1, 1000):
        with perfctr.count(PPID) as c:
            getppid(n)
        check(c[PPID] == n, (n, c))
        check(c[PPID].time_running == c[PPID].time_enabled > 0, c[PPID])
        check(not c[PPID].multiplexed and c[PPID].scaled == n, c[PPID])
        check(c.wall_ns > 0, c.wall_ns)


@case
def reentry_counts_each_block_from_zero():
    need_tracepoints()
    c = perfctr.count(PPID)
    for n in (7, 3, 5):
        with c:
            getppid(n)
        check(c[PPID] == n, (n, c))
    getppid(10)           # outside the block: not counted
    check(c[PPID] == 5, c)


@case
def decorator_counts_each_call():
    need_tracepoints()

    @perfctr.count([PPID, PID])
    def work(n):
        getppid(n)
        getpid(2 * n)
        return n

    check(work(4) == 4)
    check(work.counts[PPID] == 4 and work.counts[PID] == 8, work.counts)
    work(9)
    check(work.counts[PPID] == 9 and work.counts[PID] == 18, work.counts)
    check(work.__name__ == "work")


@case
def groups_and_modifiers_as_perfex_takes_them():
    need_tracepoints()
    spec = "{%s,%s},page-faults:u,context-switches" % (PPID, PID)
    names = [n for n, _, _ in perfctr.parse(spec)]
    with perfctr.count(spec) as c:
        getppid(11)
        getpid(13)
    check(list(c) == names, (list(c), names))
    check(c[PPID] == 11 and c[PID] == 13, c)
    check("page-faults:u" in c and c["page-faults:u"].supported, c)
    leaders = [leader for leader, _, _, _ in c.layout]
    check(leaders[0] == 0 and leaders[1] == 0 and leaders[2] == 2, leaders)


@case
def threads_and_children_with_inherit():
    need_tracepoints()
    for inherit in (False, True):
        with perfctr.count(PPID, inherit=inherit) as c:
            getppid(5)
            t = threading.Thread(target=getppid, args=(100,))
            t.start()
            t.join()
            pid = os.fork()
            if pid == 0:
                getppid(1000)
                os._exit(0)
            os.waitpid(pid, 0)
        want = 1105 if inherit else 5
        check(c[PPID] == want, (inherit, c))


@case
def other_thread_entering_counts_itself():
    need_tracepoints()
    c = perfctr.count(PPID)
    with c:
        getppid(3)
    got = []

    def other():
        with c:
            getppid(40)
        got.append(int(c[PPID]))

    t = threading.Thread(target=other)
    t.start()
    t.join()
    check(got == [40], got)
    with c:
        getppid(2)
    check(c[PPID] == 2, c)


@case
def hardware_events_not_supported_without_a_pmu():
    if perfctr.info()["hardware_events"]:
        skip("this machine has a hardware PMU")
    with perfctr.count("cycles:u,instructions:u,task-clock") as c:
        sum(range(1000))
    for name in ("cycles:u", "instructions:u"):
        got = c.get(name)
        check(not got.supported and got.status == "not supported", got)
        check("not supported" in repr(got), repr(got))
        try:
            c[name]
        except perfctr.NotSupportedError as e:
            check(name in str(e) and e.errno == got.errno != 0, str(e))
        else:
            check(False, "c[%r] did not raise" % name)
    check(c["task-clock"] > 0, c)
    check(set(c.unsupported) == {"cycles:u", "instructions:u"}, c.unsupported)
    try:
        with perfctr.count("cycles:u", strict=True):
            pass
    except perfctr.NotSupportedError as e:
        check("cycles" in str(e), str(e))
    else:
        check(False, "strict=True did not raise")


@case
def software_events_count_exactly():
    import mmap
    with perfctr.count("page-faults,minor-faults") as c:
        m = mmap.mmap(-1, 64 * 4096)
        try:
            m.madvise(mmap.MADV_NOHUGEPAGE)
        except (AttributeError, OSError):
            pass
        for page in range(64):
            m[page * 4096] = 1
    m.close()
    # Python itself may fault in a page or two of its own heap while the
    # loop runs: the 64 pages touched are the floor, a handful above it.
    check(64 <= c["page-faults"] <= 72, c)
    check(c["minor-faults"] == c["page-faults"], c)


@case
def counts_are_ints_with_their_times():
    need_tracepoints()
    with perfctr.count(PPID) as c:
        getppid(12)
    v = c[PPID]
    check(isinstance(v, int) and v + 1 == 13 and v.value == 12, v)
    check(v.name == PPID and v.status == "ok" and v.errno == 0, v)
    check(v.raw()[:1] == (12,) and c.counts()[PPID] == 12, v.raw())
    import pickle
    w = pickle.loads(pickle.dumps(v))
    check(w == 12 and w.time_enabled == v.time_enabled, w)


@case
def multiplexed_counts_are_scaled():
    # The kernel never multiplexes here; a thread counted only on CPU 0
    # while it moves between CPUs runs its counter part of the time.
    need_tracepoints()
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2 or 0 not in cpus:
        skip("needs CPU 0 and another CPU")
    s = perfctr.Session(PPID)
    tid = threading.get_native_id()
    s.attach(perfctr.Target.thread(tid, cpus="0"))
    s.start()
    old = os.sched_getaffinity(0)
    try:
        for _ in range(10):
            os.sched_setaffinity(0, {0})
            getppid(100)
            os.sched_setaffinity(0, {cpus[1]})
            getppid(100)
    finally:
        os.sched_setaffinity(0, old)
    s.stop()
    s.read()
    c = s[PPID]
    check(c == 1000, c)   # exact: the CPU-0 part
    check(c.multiplexed and c.scaled > 1000, (c, c.time_enabled,
                                              c.time_running))
    s.detach()


run_cases()
