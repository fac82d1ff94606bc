# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Nothing leaks: 100,000 counters opened and closed (sessions on the
calling thread: count() with-blocks; ThreadCounter states) leave the
process's descriptors as they were and its resident memory flat; objects
dropped without close() free theirs too; error paths leak nothing."""
import gc
import os
import time

from pyharness import case, check, perfctr, run_cases

# A software event: opening and closing one costs ~25 us; a tracepoint's
# last close costs the kernel 30-50 ms, far too slow for 100,000.
EVENT = "context-switches"


def fds():
    return len(os.listdir("/proc/self/fd"))


def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cycle_sessions(n):
    for _ in range(n):
        with perfctr.count(EVENT) as c:
            pass
        c.close()


def cycle_dropped(n):
    for _ in range(n):
        s = perfctr.Session(EVENT)
        s.attach()
        del s


def cycle_counters(n):
    for _ in range(n):
        t = perfctr.ThreadCounter(EVENT)
        t.read()
        t.close()


def cycle_errors(n):
    # Errors found without a search of the ~2,000 tracepoint names for a
    # did-you-mean (a modifier, a PMU, a target): fast enough to repeat.
    for i in range(n):
        try:
            if i % 3 == 0:
                perfctr.count("task-clock:zz")
            elif i % 3 == 1:
                perfctr.count("nopmu/event=1/")
            else:
                perfctr.Target.process(2 ** 22 + 12345)
        except perfctr.Error:
            pass


def flat(fn, n):
    """Warm up, then run n cycles: (fds before, after, RSS growth kB)."""
    fn(2000)
    gc.collect()
    f0, r0 = fds(), rss_kb()
    fn(n)
    gc.collect()
    return f0, fds(), rss_kb() - r0


@case
def one_hundred_thousand_counters():
    start = time.monotonic()
    f0, f1, grown = flat(cycle_sessions, 60000)
    check(f0 == f1, (f0, f1))
    g0, g1, grown2 = flat(cycle_counters, 40000)
    check(g0 == g1, (g0, g1))
    # 100,000 cycles of a few hundred bytes each would be tens of MB; the
    # allocator's own fragmentation stays within a couple of MB.
    check(grown <= 2048 and grown2 <= 2048, (grown, grown2))
    print("# 100000 counters in %.1f s, RSS %+d kB and %+d kB"
          % (time.monotonic() - start, grown, grown2))


@case
def dropped_objects_and_errors_free_everything():
    f0, f1, grown = flat(cycle_dropped, 20000)
    check(f0 == f1 and grown <= 2048, (f0, f1, grown))
    f0, f1, grown = flat(cycle_errors, 20000)
    check(f0 == f1 and grown <= 2048, (f0, f1, grown))


run_cases()
