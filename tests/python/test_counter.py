# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfctr.ThreadCounter: a thread's virtual counters (the vperfctr API).
read_into() fills array.array('Q'), bytearray, memoryview and numpy
buffers with exact sums, says which path it took (read(2) here: software
and tracepoint counters have no user-space read), and allocates nothing
(tracemalloc); stop, resume, reset, one counter state per thread."""
import array
import threading
import tracemalloc

from pyharness import (PID, PPID, case, check, getpid, getppid,
                       need_tracepoints, perfctr, run_cases, skip)


@case
def read_into_fills_every_kind_of_buffer():
    need_tracepoints()
    with perfctr.ThreadCounter([PPID, PID]) as t:
        check(t.events == (PPID, PID) and t.running, t.events)
        getppid(10)
        getpid(3)
        a = array.array("Q", [0, 0, 99])
        check(t.read_into(a) == "read(2)")
        check(list(a) == [10, 3, 99], a)
        b = bytearray(16)
        t.read_into(b)
        check(array.array("Q", bytes(b)).tolist() == [10, 3], b)
        m = memoryview(bytearray(24)).cast("Q")
        t.read_into(m)
        check(m.tolist() == [10, 3, 0], m.tolist())
        check(t.read() == (10, 3), t.read())
        counts = t.read_counts()
        check([c[0] for c in counts] == [10, 3] and counts[0][1] > 0, counts)
        try:
            import numpy
        except ImportError:
            numpy = None
        if numpy is not None:
            n = numpy.zeros(2, dtype=numpy.uint64)
            t.read_into(n)
            check(n.tolist() == [10, 3], n)
    check(not t.running)


@case
def read_into_refuses_wrong_buffers():
    need_tracepoints()
    with perfctr.ThreadCounter([PPID, PID]) as t:
        for bad, exc in ((array.array("Q", [0]), ValueError),
                         (array.array("d", [0, 0]), TypeError),
                         (b"x" * 16, BufferError),   # read-only
                         ("text", TypeError)):
            try:
                t.read_into(bad)
            except exc:
                pass
            else:
                check(False, "read_into(%r) was accepted" % (bad,))


@case
def read_into_allocates_nothing():
    need_tracepoints()
    with perfctr.ThreadCounter([PPID, PID, "task-clock", "page-faults"]) as t:
        buf = array.array("Q", [0] * 4)
        read_into = t.read_into
        for _ in range(100):
            read_into(buf)
        tracemalloc.start()
        try:
            before = tracemalloc.take_snapshot()
            for _ in range(10000):
                read_into(buf)  # the line whose allocations are looked at
            after = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        # The loop's own range iterator is allocated on the for line; the
        # read_into line itself must show nothing.
        line = next(i for i, text in enumerate(open(__file__), 1)
                    if "the line whose allocations" in text)
        grown = [s for s in after.compare_to(before, "lineno")
                 if s.size_diff > 0 and s.traceback[0].lineno == line
                 and s.traceback[0].filename == __file__]
        check(grown == [], grown)
        check(buf[0] == 0, buf.tolist())


@case
def stop_resume_reset():
    need_tracepoints()
    with perfctr.ThreadCounter(PPID) as t:
        getppid(4)
        t.stop()
        getppid(100)
        check(t.read() == (4,) and not t.running, t.read())
        t.resume()
        getppid(6)
        check(t.read() == (10,), t.read())
        t.reset()
        getppid(1)
        check(t.read() == (1,), t.read())


@case
def one_state_per_thread():
    need_tracepoints()
    t = perfctr.ThreadCounter(PPID)
    try:
        perfctr.ThreadCounter(PID)
    except perfctr.Error as e:
        check(e.errno == 17 and "close()" in e.hint, str(e))
    else:
        check(False, "a second state for the thread was made")
    got = []

    def other():
        with perfctr.ThreadCounter(PPID) as mine:
            getppid(25)
            got.append(mine.read())

    th = threading.Thread(target=other)
    th.start()
    th.join()
    check(got == [(25,)], got)
    check(t.read() == (0,), t.read())
    t.close()
    with perfctr.ThreadCounter(PID) as again:
        getpid(2)
        check(again.read() == (2,))
    try:
        t.read()
    except ValueError:
        pass
    else:
        check(False, "read after close worked")


@case
def hardware_counter_not_supported_without_a_pmu():
    if perfctr.info()["hardware_events"]:
        skip("this machine has a hardware PMU")
    try:
        perfctr.ThreadCounter("instructions:u")
    except perfctr.NotSupportedError as e:
        check(e.errno != 0, e)
    else:
        check(False, "instructions:u counted without a PMU")


run_cases()
