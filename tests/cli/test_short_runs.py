# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Many short runs of a command making exactly 10 getppid calls: every run
must see all 10, from the first call after the exec to the last before
the exit, in every mode that starts a command (record -c 1 with and
without --no-inherit, counting, --per-process, event sets) and in perf
record beside them as the reference.  A lost first or last event shows
up as a run one short.

    PERFCTR_SHORT_RUNS=1000 python3 tests/cli/test_short_runs.py

runs each mode 1,000 times (make check runs SHORT_RUNS of each, perf's
PERF_RUNS: perf record takes ~150 ms a run here).  With
PERFCTR_SHORT_RUNS_COLD=1 the test holds no tracepoint counter of its
own, so that every run pays the tracepoint's first open and last close
(30-50 ms) as a user's would; otherwise it holds one, which makes a run
take 1-2 ms.  Each case prints "MODE: N runs, K short" on stderr."""
import os
import struct
import subprocess
import sys
import tempfile

from pctest import PERFEX, case, check, run_cases, skip, work
from stathelp import TP, csv_count, getppid_baseline, need_tracepoint, run_csv

CALLS = 10
SHORT_RUNS = 100
PERF_RUNS = 10
PERF = "/usr/bin/perf"

_tmp = tempfile.mkdtemp(prefix="pc-short-")


def runs(default):
    n = os.environ.get("PERFCTR_SHORT_RUNS")
    return int(n) if n else default


def setup():
    if os.environ.get("PERFCTR_SHORT_RUNS_COLD") == "1":
        from pctest import require_root, require_tracefs
        require_root()
        require_tracefs()
    else:
        need_tracepoint()
    truth = CALLS + getppid_baseline()
    # The baseline (the workload's start-up and exit calls, 0 unless it
    # runs under a sanitizer) must itself be stable for an exact truth.
    check(getppid_baseline() == truth - CALLS, truth)
    return truth


class leak_checker_off:
    """LeakSanitizer (sanitizer builds) makes its getppid calls at exit
    from a helper task of its own, which --no-inherit does not follow and
    --per-process does not see (it is created untraced; LeakSanitizer
    also ends a process it cannot ptrace inside a traced tree).  Those
    cases run without it; their truth is then the calls alone, checked
    by a run of no calls."""

    def __enter__(self):
        self.saved = os.environ.get("ASAN_OPTIONS")
        os.environ["ASAN_OPTIONS"] = ":".join(
            filter(None, [self.saved, "detect_leaks=0"]))
        r, rows = run_csv("-e", TP, "--", work(), "getppid", "0")
        check(r.returncode == 0, r.stderr)
        check(csv_count(rows, TP) == 0, rows)
        return CALLS

    def __exit__(self, *exc):
        if self.saved is None:
            os.environ.pop("ASAN_OPTIONS", None)
        else:
            os.environ["ASAN_OPTIONS"] = self.saved


def tally(mode, n, one_run, truth):
    """Run one_run() n times; each returns the run's count.  Fails when
    any run saw another count than truth, with the histogram."""
    seen = {}
    for _ in range(n):
        got = one_run()
        seen[got] = seen.get(got, 0) + 1
    off = n - seen.get(truth, 0)
    print("%s: %d runs, %d short, %d long (counts seen: %s)" % (
        mode, n, sum(v for k, v in seen.items() if k < truth),
        sum(v for k, v in seen.items() if k > truth),
        ", ".join("%d x %d" % (v, k) for k, v in sorted(seen.items()))),
        file=sys.stderr, flush=True)
    check(off == 0, "%s: %d of %d runs did not see %d events: %r" %
          (mode, off, n, truth, seen))


def file_samples(path):
    """PERF_RECORD_SAMPLE records in the data section of perf.data file
    @path (perf's file format: the data section's offset and size follow
    magic, header size, attr size and the attrs section)."""
    with open(path, "rb") as f:
        head = f.read(64)
        check(head[:8] == b"PERFILE2", head[:8])
        offset, size = struct.unpack_from("<QQ", head, 40)
        f.seek(offset)
        data = f.read(size)
    samples = pos = 0
    while pos + 8 <= len(data):
        rtype, _, rsize = struct.unpack_from("<IHH", data, pos)
        check(rsize >= 8, "bad record size at %d" % pos)
        if rtype == 9:  # PERF_RECORD_SAMPLE
            samples += 1
        pos += rsize
    return samples


def record_run(argv, out):
    def one():
        r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, r.stderr)
        # A run that lost records says so; the count tells the rest.
        check("lost" not in r.stderr or " 0 samples lost" in r.stderr,
              r.stderr)
        return file_samples(out)
    return one


@case
def record_every_event_sampled():
    truth = setup()
    out = os.path.join(_tmp, "perfex.data")
    tally("perfex record -c 1", runs(SHORT_RUNS), record_run(
        [PERFEX, "record", "-q", "-e", TP, "-c", "1", "-o", out, "--",
         work(), "getppid", str(CALLS)], out), truth)


@case
def record_no_inherit_every_event_sampled():
    setup()
    out = os.path.join(_tmp, "perfex-no-inherit.data")
    with leak_checker_off() as truth:
        tally("perfex record --no-inherit -c 1", runs(SHORT_RUNS),
              record_run([PERFEX, "record", "-q", "--no-inherit", "-e", TP,
                          "-c", "1", "-o", out, "--", work(), "getppid",
                          str(CALLS)], out), truth)


@case
def stat_counts_every_event():
    truth = setup()

    def one():
        r, rows = run_csv("-e", TP, "--", work(), "getppid", str(CALLS))
        check(r.returncode == 0, r.stderr)
        return csv_count(rows, TP)
    tally("perfex -e", runs(SHORT_RUNS), one, truth)


@case
def per_process_counts_every_event():
    setup()

    def one():
        r, rows = run_csv("--per-process", "-e", TP, "--", work(), "getppid",
                          str(CALLS))
        check(r.returncode == 0, r.stderr)
        procs = [row for row in rows if row[0] == "process"]
        check(len(procs) == 1, rows)
        return int(procs[0][procs[0].index(TP) + 1])
    with leak_checker_off() as truth:
        tally("perfex --per-process", runs(SHORT_RUNS), one, truth)


@case
def sets_count_every_event():
    """Two sets rotated every second of the command's run time: the run
    is over long before the first switch, so the first set counts every
    call from the exec on and the second (turned off when the rotation
    starts) none."""
    truth = setup()

    def one():
        r, rows = run_csv("-e", "{%s}" % TP, "-e", "{%s}" % TP,
                          "--switch-interval", "1000", "--", work(),
                          "getppid", str(CALLS))
        check(r.returncode == 0, r.stderr)
        check(len(rows) == 2 and rows[1][0] == "<not counted>", rows)
        return csv_count(rows, TP)
    tally("perfex sets", runs(SHORT_RUNS), one, truth)


@case
def perf_record_reference():
    truth = setup()
    if not os.access(PERF, os.X_OK):
        skip("perf is not installed at %s: no reference to compare with" %
             PERF)
    out = os.path.join(_tmp, "perf.data")
    argv = [PERF, "record", "-q", "--no-bpf-event", "-B", "-N", "-e", TP,
            "-c", "1", "-o", out, "--", work(), "getppid", str(CALLS)]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        skip("perf record cannot run here: " + r.stderr.strip()[-300:])
    tally("perf record -c 1", runs(PERF_RUNS), record_run(argv, out), truth)


try:
    run_cases()
finally:
    subprocess.run(["rm", "-rf", _tmp])
