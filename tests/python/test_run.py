# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfctr.run(): a command counted from its exec to its end, children
and threads included, as perfex counts it (exact getppid counts, the
return code, the generic metrics), and with tree=True each process's own
counts and its subtree's; the wait releases the GIL."""
import os
import threading
import time

from pyharness import (PPID, case, check, need_tracepoints, perfctr,
                       run_cases, work)


@case
def counts_a_command_and_its_children():
    need_tracepoints()
    r = perfctr.run([work(), "getppid", "10", "threads", "2", "100",
                     "fork", "3", "1000"], [PPID, "task-clock"])
    check(r.returncode == 0, r)
    check(r[PPID] == 10 + 200 + 3000, r)
    check(r["task-clock"] > 0 and r.wall_ns > 0, r)
    check("%s/sec" % PPID in r.metrics, r.metrics)
    check(r.processes == [] and r.root is None)


@case
def return_codes_as_subprocess_gives_them():
    need_tracepoints()
    check(perfctr.run([work(), "exit", "3"], PPID).returncode == 3)
    check(perfctr.run([work(), "kill", "9"], PPID).returncode == -9)


@case
def tree_gives_each_process_and_subtree():
    need_tracepoints()
    r = perfctr.run([work(), "getppid", "5", "fork", "3", "100"], PPID,
                    tree=True)
    root = r.root
    check(root is not None and root.pid > 0 and root.parent is None, r)
    check(len(root.children) == 3, root.children)
    check(root.self[PPID] == 5 and root.subtree[PPID] == 305,
          (root.self, root.subtree))
    for child in root.children:
        check(child.parent is root and child.ppid == root.pid)
        check(child.self[PPID] == 100 == child.subtree[PPID], child.self)
        check(child.exit_status == 0 and not child.running, child)
    check([p.pid for p in root.walk()] == [p.pid for p in r.processes])
    check(r[PPID] == 305, r)
    check(root.threads and root.threads[0].tid == root.pid, root.threads)


@case
def the_wait_releases_the_gil():
    need_tracepoints()
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.005)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        r = perfctr.run([work(), "sleep", "300"], PPID)
    finally:
        stop.set()
        t.join()
    check(r.returncode == 0)
    check(len(ticks) >= 10, len(ticks))


@case
def output_goes_where_asked():
    need_tracepoints()
    rfd, wfd = os.pipe()
    try:
        r = perfctr.run([work(), "pid"], PPID, stdout=wfd)
        os.close(wfd)
        wfd = -1
        out = os.read(rfd, 100).decode()
    finally:
        os.close(rfd)
        if wfd >= 0:
            os.close(wfd)
    check(r.returncode == 0 and out.strip().isdigit(), out)


run_cases()
