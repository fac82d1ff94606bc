# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""bench/python's measurements: the Python module against the same
library calls made from C (bench/python-count.c, a shared object called
through ctypes), in the same process, in batches interleaved with the
Python ones; then the pytest plugin's added cost per counted test.

    python3 bench/python-count.py HELPER.so [ROUNDS]
"""
import ctypes
import array
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc

import perfctr

EVENTS = "{task-clock,context-switches,page-faults,cpu-migrations}"
OPS = 20000


def py_with(ops, c):
    t0 = time.perf_counter_ns()
    for _ in range(ops):
        with c:
            pass
    return (time.perf_counter_ns() - t0) / ops


def py_once(ops):
    t0 = time.perf_counter_ns()
    for _ in range(ops):
        with perfctr.count(EVENTS) as c:
            pass
        c.close()
    return (time.perf_counter_ns() - t0) / ops


def py_read(ops):
    t = perfctr.ThreadCounter(["task-clock", "context-switches",
                               "page-faults", "cpu-migrations"])
    buf = array.array("Q", [0] * 4)
    read_into = t.read_into
    path = read_into(buf)
    t0 = time.perf_counter_ns()
    for _ in range(ops):
        read_into(buf)
    elapsed = (time.perf_counter_ns() - t0) / ops
    t.close()
    return elapsed, path


def read_into_allocations(ops):
    """Bytes tracemalloc sees allocated by the read_into line in ops calls
    (the loop's own range iterator is on the line above)."""
    t = perfctr.ThreadCounter(["task-clock", "context-switches",
                               "page-faults", "cpu-migrations"])
    buf = array.array("Q", [0] * 4)
    read_into = t.read_into
    read_into(buf)
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for _ in range(ops):
        read_into(buf)  # the measured line
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    t.close()
    line = next(i for i, text in enumerate(open(__file__), 1)
                if "the measured line" in text and "text" not in text)
    return sum(s.size_diff for s in after.compare_to(before, "lineno")
               if s.traceback[0].filename == __file__ and
               s.traceback[0].lineno == line)


PROJECT_TEST = '''
%s
def test_%d():
    sum(range(100))
'''


# Times each test's whole protocol (setup, call, teardown, reports) in
# the pytest process itself: medians per kind of test are robust to the
# load of a shared machine, where whole runs are not.
CONFTEST = '''
import json
import time

import pytest

TIMES = {"counted": [], "plain": []}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item):
    t0 = time.perf_counter_ns()
    yield
    kind = "counted" if item.get_closest_marker("perfctr") else "plain"
    TIMES[kind].append(time.perf_counter_ns() - t0)


def pytest_sessionfinish(session):
    print("\\nBENCH-TIMES " + json.dumps(TIMES))
'''

PROJECT_TEST = '''
@pytest.mark.perfctr(events="%s")
def test_counted_%%d():
    sum(range(100))


def test_plain_%%d():
    sum(range(100))
''' % EVENTS


def pytest_project(n):
    """n counted tests and n plain ones, alternating."""
    d = tempfile.mkdtemp()
    with open(os.path.join(d, "pytest.ini"), "w") as f:
        f.write("[pytest]\nmarkers =\n    perfctr: counted\n")
    with open(os.path.join(d, "conftest.py"), "w") as f:
        f.write(CONFTEST)
    with open(os.path.join(d, "test_many.py"), "w") as f:
        f.write("import pytest\n")
        for i in range(n):
            f.write(PROJECT_TEST % (i, i))
    return d


def pytest_times(d, plugin):
    cmd = [sys.executable, "-m", "pytest", "-q", "-s", "-p",
           "no:cacheprovider"]
    if plugin:
        cmd += ["-p", "perfctr.pytest"]
    r = subprocess.run(cmd, cwd=d, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("python-count: pytest failed:\n" + r.stdout + r.stderr)
    import json
    return json.loads(r.stdout.split("BENCH-TIMES ")[1].splitlines()[0])


def plugin_costs(rounds):
    """Per test, in ns: what counting adds (counted - plain tests of one
    run with the plugin), and what the loaded plugin adds to a test it
    does not count (plain tests with it - without it); medians over
    every test of every round."""
    n = 200
    d = pytest_project(n)
    counted, plain, bare = [], [], []
    try:
        for _ in range(rounds):
            t = pytest_times(d, True)
            counted += t["counted"]
            plain += t["plain"]
            bare += pytest_times(d, False)["plain"]
    finally:
        import shutil
        shutil.rmtree(d)
    med = statistics.median
    return n, med(counted), med(plain), med(bare)


def main():
    helper = ctypes.CDLL(sys.argv[1])
    for fn in (helper.bench_with, helper.bench_once, helper.bench_read):
        fn.restype = ctypes.c_double
        fn.argtypes = [ctypes.c_long]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    c_with, c_once, c_read, p_with, p_once, p_read = ([] for _ in range(6))
    path = "?"
    batch = 2000
    counting = perfctr.count(EVENTS)
    with counting:
        pass
    for _ in range(rounds * 10):
        c_with.append(helper.bench_with(batch))
        p_with.append(py_with(batch, counting))
        c_read.append(helper.bench_read(batch))
        t, path = py_read(batch)
        p_read.append(t)
    counting.close()
    for _ in range(rounds):
        c_once.append(helper.bench_once(batch // 10))
        p_once.append(py_once(batch // 10))
    allocated = read_into_allocations(OPS)
    med = statistics.median

    def ratio(p, c):
        return med(a / b for a, b in zip(p, c))

    print("batches of %d calls, C and Python interleaved in one process "
          "(%d each; a whole count: %d of %d); medians, ratios: median of "
          "the batches' ratios" % (batch, rounds * 10, rounds, batch // 10))
    print("with perfctr.count(group of 4) enter+exit: C %.0f ns, Python "
          "%.0f ns: %.2fx C; target C x 1.5 + 1 us = %.0f ns: %s"
          % (med(c_with), med(p_with), ratio(p_with, c_with),
             1.5 * med(c_with) + 1000,
             "met" if med(p_with) <= 1.5 * med(c_with) + 1000 else "missed"))
    print("a whole count (new, attach, with, close): C %.0f ns, Python "
          "%.0f ns: %.2fx C" % (med(c_once), med(p_once),
                                ratio(p_once, c_once)))
    r = ratio(p_read, c_read)
    print("read_into(group of 4) [%s]: C vperfctr_read_fast %.0f ns, "
          "Python %.0f ns: %.2fx C; target 1.2x: %s; tracemalloc: %d bytes "
          "allocated by %d read_into calls"
          % (path, med(c_read), med(p_read), r,
             "met" if r <= 1.2 else "missed", allocated, OPS))
    n, counted, plain, bare = plugin_costs(max(3, rounds // 3))
    added = (counted - plain) / 1e6
    print("pytest, %d counted and %d plain tests a run, medians per test: "
          "plain %.0f us without the plugin, %.0f us with it; counted %.0f "
          "us: counting adds %.3f ms a test (target 0.5 ms: %s)"
          % (n, n, bare / 1e3, plain / 1e3, counted / 1e3, added,
             "met" if added <= 0.5 else "missed"))

main()
