# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfctr's recordings from Python (perfctr.data): record, read
perfex's and perf's files, columns, profiles, exports.  Run with Debian's
/usr/bin/python3 and PYTHONPATH=build/python (tests/run does)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "cli"))
from pctest import (BUILD, case, check, perfex, require_root,
                    require_tracefs, run_cases, skip, work)
import sampletools

sys.path.insert(0, os.path.join(BUILD, "python"))
try:
    import perfctr
    from perfctr import data as pdata
except ImportError as e:
    perfctr = None
    why = str(e)

TP = "syscalls:sys_enter_getppid"
N = 1000
# The workload without the leak checker's helper task (its getppid calls
# would be counted too in a sanitized build).
ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")


def need():
    if perfctr is None or not hasattr(perfctr, "Reader"):
        skip("the perfctr module is not built (make python): %s"
             % (why if perfctr is None else "no perfctr._data"))
    require_root()
    require_tracefs()


_files = {}


def perfex_file():
    """N getppid samples recorded by perfex (one per call)."""
    if "perfex" not in _files:
        path = sampletools.tmpfile("pd-perfex.data")
        r = perfex("record", "-q", "-o", path, "-e", TP, "--", work(),
                   "getppid", str(N), env=ENV)
        check(r.returncode == 0, r)
        _files["perfex"] = path
    return _files["perfex"]


def perf_file():
    if not os.access(sampletools.PERF, os.X_OK):
        skip("perf is not installed (linux-perf)")
    if "perf" not in _files:
        path = sampletools.tmpfile("pd-perf.data")
        r = subprocess.run([sampletools.PERF, "record", "-q", "-o", path,
                            "-e", TP, "-c", "1", "--", work(), "getppid",
                            str(N)], capture_output=True, text=True, env=ENV)
        check(r.returncode == 0, r)
        _files["perf"] = path
    return _files["perf"]


def workload_samples(samples):
    return [s for s in samples if s.comm == "pcwork"]


@case
def record_counts_every_call():
    need()
    path = sampletools.tmpfile("pd-record.data")
    res = perfctr.record(path, [work(), "getppid", str(N)], events=TP)
    check(res["exit_status"] == 0 and res["lost"] == 0, res)
    samples = workload_samples(perfctr.open(path))
    check(len(samples) == N, len(samples))
    check(all(s.event == TP and s.period == 1 for s in samples))


@case
def record_with_a_period():
    need()
    path = sampletools.tmpfile("pd-period.data")
    res = perfctr.record(path, [work(), "getppid", str(N)], events=TP,
                         period=10)
    check(res["exit_status"] == 0, res)
    samples = workload_samples(perfctr.open(path))
    # N calls with a period of 10: exactly N / 10 samples of weight 10.
    check(len(samples) == N // 10, len(samples))
    check(all(s.period == 10 for s in samples))


@case
def samples_of_perfex_and_perf_files():
    need()
    for path in (perfex_file(), perf_file()):
        r = perfctr.open(path)
        check(r.events == (TP,), r.events)
        samples = workload_samples(r)
        check(len(samples) == N, (path, len(samples)))
        s = samples[0]
        check(s.pid == s.tid and s.cpu >= 0 and s.time > 0, s)
        check(s.fields == {"__syscall_nr": 110} or
              list(s.fields) == ["__syscall_nr"], s.fields)
        check(s.dso and s.symbol, s)


@case
def dynamic_string_fields_by_name():
    # sched_process_exec's filename is a __data_loc char[] (declared
    # "__data_loc char[] filename": the brackets before the name).
    need()
    path = sampletools.tmpfile("pd-exec.data")
    res = perfctr.record(path, [work(), "exit", "0"],
                         events="sched:sched_process_exec")
    check(res["exit_status"] == 0, res)
    # The command's one exec, counted from before it.
    samples = list(perfctr.open(path))
    check(len(samples) == 1, samples)
    f = samples[0].fields
    check(list(f) == ["filename", "pid", "old_pid"], f)
    check(f["filename"] == work() and f["pid"] == samples[0].pid, f)


@case
def columns_equal_iteration():
    need()
    strings = ("ip", "pid", "tid", "cpu", "time", "period", "event", "comm",
               "symbol", "dso", "kernel")
    # Numeric columns only take the fast path (records decoded in file
    # order, then sorted by time): the same rows in the same order.
    numbers = ("ip", "pid", "tid", "cpu", "time", "period", "event",
               "kernel")
    for path in (perfex_file(), perf_file()):
        it = list(perfctr.open(path))
        for names in (strings, numbers):
            cols = perfctr.open(path).to_lists(list(names))
            check(len(cols["ip"]) == len(it), (len(cols["ip"]), len(it)))
            for n in names:
                check(cols[n] == [getattr(s, n) for s in it], (path, n))


@case
def columns_of_threads_on_two_cpus():
    need()
    # Two threads, each N calls: rings of both CPUs interleave in time, so
    # the fast path sorts; the rows must still be the reader's.
    path = sampletools.tmpfile("pd-threads.data")
    res = perfctr.record(path, [work(), "threads", "2", str(N)], events=TP)
    check(res["exit_status"] == 0, res)
    it = list(perfctr.open(path))
    check(len(workload_samples(it)) == 2 * N, len(it))
    cols = perfctr.open(path).to_lists(["time", "tid", "cpu", "ip"])
    for n in ("time", "tid", "cpu", "ip"):
        check(cols[n] == [getattr(s, n) for s in it], n)
    check(cols["time"] == sorted(cols["time"]))


@case
def to_numpy_and_pandas():
    need()
    try:
        import numpy
        import pandas
    except ImportError:
        skip("numpy or pandas is not installed (python3-numpy, "
             "python3-pandas)")
    path = perfex_file()
    r = perfctr.open(path)
    a = r.to_numpy(["ip", "pid", "tid", "time", "period", "cpu"])
    it = list(perfctr.open(path))
    check(a.shape == (len(it),), a.shape)
    check(a["time"].tolist() == [s.time for s in it])
    check(a["ip"].tolist() == [s.ip for s in it])
    df = perfctr.open(path).to_pandas()
    check(df.shape == (len(it), len(pdata.DEFAULT_COLUMNS)), df.shape)
    check(int((df["comm"] == "pcwork").sum()) == N, df["comm"].value_counts())
    check(df["event"].astype(str).unique().tolist() == [TP])


@case
def profile_folded_pprof():
    need()
    path = perfex_file()
    p = perfctr.open(path).profile("comm,sym")
    mine = [row for row in p if row["comm"] == "pcwork"]
    check(sum(row["samples"] for row in mine) == N, p.rows)
    folded = perfctr.open(path).folded()
    check(sum(int(l.rsplit(" ", 1)[1]) for l in folded
              if l.startswith("pcwork;")) == N, folded)
    if perfctr._data.pprof_available:
        data = perfctr.open(path).pprof()
        check(data[:2] == b"\x1f\x8b" or len(data) > 0, data[:4])


@case
def call_graphs():
    need()
    path = sampletools.tmpfile("pd-cg.data")
    res = perfctr.record(path, [work(), "getppid", "200000"],
                         events="task-clock", period=100000, callgraph=True)
    check(res["exit_status"] == 0 and res["samples"] > 0, res)
    p = perfctr.open(path, callchain=True).profile("comm,sym",
                                                   callgraph="caller")
    check(p.samples == res["samples"], (p.samples, res))
    for row in p.rows:
        # A row's call graph weighs what the row weighs.
        check(row["callgraph"].total == row["weight"], row)
    folded = perfctr.open(path, callchain=True).folded()
    check(sum(int(l.rsplit(" ", 1)[1]) for l in folded) == p.samples,
          folded)
    check(any(";main;" in l for l in folded), folded)
    it = list(perfctr.open(path, callchain=True))
    check(all(s.callchain and s.callchain[0][0] == s.ip for s in it),
          it[:2])


@case
def errors_carry_errno():
    need()
    try:
        perfctr.open(sampletools.tmpfile("missing.data"))
    except FileNotFoundError as e:
        check(e.errno == 2 and "missing.data" in str(e), e)
    else:
        check(False, "no exception")
    try:
        perfctr.record(sampletools.tmpfile("x.data"), ["true"],
                       events="cyclez")
    except OSError as e:
        check("unknown event 'cyclez'" in str(e) and "did you mean" in str(e),
              e)
    else:
        check(False, "no exception")


if __name__ == "__main__":
    try:
        run_cases()
    finally:
        sampletools.cleanup()
