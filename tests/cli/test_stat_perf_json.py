#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex -j --json-format perf writes perf stat -j's JSON lines: for each
mode, line by line the same keys in the same order as perf stat -j of the
same kind of run, the same events and units, and the same exact counts of
a tracepoint.

Differences from perf 6.1 allowed here, each with its reason:
- "metric-unit" of a line without a metric: perf 6.1 prints a null
  pointer through printf, "(null)"; perfex writes "" (later perfs leave
  the metric keys out).
- cpu-clock's "CPUs utilized": perf computes it from cpu-clock too, the
  metric tables of perfex from task-clock only; perfex's line has no
  metric (value 0, unit "").
- --per-thread: perf sorts the threads of an event by their count, perfex
  lists them in the order it found them; the lines are compared as a set.
- -I: the two tools' intervals end at different times, so the lines of
  --per-core intervals are paired by interval number; a count that moved
  across an interval's end differs, the sums over the intervals do not.
"""
import json
import signal
import subprocess
import tempfile

from pctest import EXIT, PERFEX, case, check, perfex, run_cases, work
from sampletools import PERF, require_perf
from stathelp import (TP, Held, count_pinned_pair, exit_baseline,
                      getppid_baseline, need_tracepoint, need_two_cpus,
                      wait_counting)


def lines_of(text):
    """The JSON lines (perf -o adds a "# started on" comment)."""
    return [json.loads(l) for l in text.splitlines() if l.startswith("{")]


def ours(*args):
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        r = perfex("-j", "--json-format", "perf", "-o", out.name, *args)
        check(r.returncode == 0, r.stderr)
        return lines_of(out.read())


def theirs(*args):
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        r = subprocess.run([PERF, "stat", "-j", "-o", out.name, *args],
                           capture_output=True, text=True, timeout=120)
        check(r.returncode == 0, r.stderr[-2000:])
        return lines_of(out.read())


def both(*args):
    need_tracepoint()
    require_perf()
    return ours(*args), theirs(*args)


def unit_of(line):
    """The metric's unit, its K/M/G prefix left out (the rates of two
    runs need not have the same magnitude)."""
    u = line["metric-unit"]
    if u.endswith("/sec"):
        return "/sec"
    return "" if u == "(null)" else u


def same_lines(a, b, compare_metric=True):
    """Line for line: keys in order, event, unit, the metric's unit
    (not for the clocks: see above)."""
    check(len(a) == len(b) and a, (len(a), len(b), a[:2], b[:2]))
    for x, y in zip(a, b):
        check(list(x) == list(y), (list(x), list(y)))
        check((x["event"], x["unit"]) == (y["event"], y["unit"]), (x, y))
        for k in ("cpu", "thread", "socket", "die", "core",
                  "aggregate-number"):
            check(x.get(k) == y.get(k), (k, x, y))
        # A last interval may find the command gone in one tool and not
        # in the other: the metric of counted lines only.
        counted = not (x["counter-value"] + y["counter-value"]).count("<")
        if compare_metric and counted and not x["event"].endswith("clock"):
            check(unit_of(x) == unit_of(y), (x, y))
        check(isinstance(x["event-runtime"], int), x)
        check(isinstance(x["pcnt-running"], float), x)
        check(isinstance(x["counter-value"], str), x)
        if "interval" in x:
            check(isinstance(x["interval"], float), x)


def value(lines, event, **keys):
    for l in lines:
        if l["event"] == event and all(l.get(k) == v for k, v in keys.items()):
            return float(l["counter-value"])
    check(False, (event, keys, lines))


def run_of_work(*cmd):
    return ["--", work(), *cmd]


def command_args(n):
    return run_of_work("getppid", str(n))


@case
def run_command():
    a, b = both("-e", TP + ",task-clock,context-switches", *command_args(700))
    same_lines(a, b)
    check(value(a, TP) == value(b, TP), (a, b))
    # The counts of the command's own run: a float in a string, the clock
    # in msec as perf has it.
    check(value(a, TP) >= 700 and value(a, TP) < 710, a)
    check(a[1]["unit"] == "msec" and a[0]["metric-unit"].endswith("/sec"), a)
    check(a[1]["metric-unit"] == "CPUs utilized", a)


@case
def run_alone():
    a, b = both("-e", TP, *command_args(300))
    same_lines(a, b)
    check(value(a, TP) == value(b, TP), (a, b))
    check(a[0]["metric-value"] == 0 and a[0]["metric-unit"] == "", a)


@case
def run_repeat():
    a, b = both("-r", "3", "-e", TP + ",task-clock", *command_args(400))
    same_lines(a, b)
    check(value(a, TP) == value(b, TP), (a, b))
    check(a[0]["variance"] == 0.0, a)


@case
def run_all_cpus():
    a, b = both("-a", "-e", TP + ",cpu-clock", *command_args(200))
    same_lines(a, b)
    check(value(a, TP) >= 200, a)


@case
def run_per_cpu():
    need_two_cpus()
    a, b = both("-a", "-A", "-e", TP + ",cpu-clock", *command_args(200))
    same_lines(a, b)
    check([l["cpu"] for l in a] == [l["cpu"] for l in b], (a, b))
    check(sum(float(l["counter-value"]) for l in a if l["event"] == TP)
          >= 200, a)


@case
def run_intervals():
    # 300 calls at once, then quiet intervals: perf and perfex print
    # intervals of 100 ms while the command runs, then the last part.
    args = ("-I", "100", "-e", TP + ",task-clock",
            *run_of_work("getppid", "300", "sleep", "450"))
    a, b = both(*args)
    # How many intervals each prints depends on how long it takes to
    # start and stop (a sanitizer build of perfex is slower): compare the
    # intervals both printed.  4 of them (3 full and the last part) end
    # within the command's 450 ms even when a loaded machine handles a
    # timer 150 ms late.
    check(min(len(a), len(b)) >= 4, (len(a), len(b)))
    n = min(len(a), len(b)) // 2 * 2
    same_lines(a[:n], b[:n])
    check(a[0]["interval"] < a[-1]["interval"], a)
    calls = [float(l["counter-value"]) for l in a if l["event"] == TP and
             not l["counter-value"].startswith("<")]
    check(sum(calls) == 300 + getppid_baseline(), calls)


@case
def run_per_thread():
    """perf and perfex --per-thread -p of the same kind of process: one
    thread, 250 calls after they attach."""
    need_tracepoint()
    require_perf()
    got = {}
    for name, argv in (("perfex", [PERFEX, "-j", "--json-format", "perf"]),
                       ("perf", [PERF, "stat", "-j"])):
        w = Held(0, 250)
        out = tempfile.NamedTemporaryFile("r", suffix=".json")
        try:
            p = subprocess.Popen(argv + ["-o", out.name, "--per-thread",
                                         "-p", str(w.pid), "-e", TP],
                                 stderr=subprocess.PIPE, text=True)
            wait_counting(p.pid)
            w.go()
            _, err = p.communicate(timeout=30)
            check(p.returncode == 0, err)
            got[name] = (w.pid, lines_of(out.read()))
        finally:
            out.close()
            w.close()
    (pa, a), (pb, b) = got["perfex"], got["perf"]
    check(len(a) == len(b) == 1, (a, b))
    check(list(a[0]) == list(b[0]), (a, b))
    check(a[0]["thread"] == "pcwork-%d" % pa, a)
    check(b[0]["thread"] == "pcwork-%d" % pb, b)
    check(value(a, TP) == 250 + exit_baseline(), a)
    check(value(a, TP) == value(b, TP), (a, b))


def both_pinned(calls0, calls1, *args):
    """perfex and perf stat -j -C 0-1 ARGS at once over two workloads, one
    on CPU 0 making CALLS0 getppid, one on CPU 1 making CALLS1, each tool
    with the filter of the two pids: (perfex's lines, perf's lines)."""
    need_tracepoint()
    require_perf()
    need_two_cpus()
    def counter(argv):
        def start(filt):
            out = tempfile.NamedTemporaryFile("r", suffix=".json")
            p = subprocess.Popen(argv + ["-o", out.name, "-C", "0-1", *args,
                                         "-e", TP, "--filter", filt],
                                 stderr=subprocess.PIPE, text=True)
            return p, out
        return start
    runs = count_pinned_pair(calls0, calls1, [
        counter([PERFEX, "-j", "--json-format", "perf"]),
        counter([PERF, "stat", "-j"])])
    got = []
    # Stopped by SIGINT, perfex exits with 0; perf prints its counts,
    # then kills itself with the signal.
    for (code, err, text), status in zip(runs, (0, -signal.SIGINT)):
        check(code == status, (code, err))
        got.append(lines_of(text))
    return got


def group_key(mode):
    return {"--per-core": "core", "--per-die": "die",
            "--per-socket": "socket"}[mode]


@case
def run_per_core_and_socket():
    """Key by key, label by label, count by count against perf stat -j."""
    # The filter names the workloads' own tasks: exact, whatever a
    # sanitizer's leak checker calls at exit from a task of its own.
    for mode, want in (("--per-core", [1000, 3000]),
                       ("--per-socket", [4000]), ("--per-die", [4000])):
        a, b = both_pinned(1000, 3000, mode)
        same_lines(a, b)
        key = group_key(mode)
        check([l[key] for l in a] == [l[key] for l in b], (a, b))
        check([l["aggregate-number"] for l in a] ==
              [l["aggregate-number"] for l in b], (a, b))
        check([float(l["counter-value"]) for l in a] == want, (mode, a))
        check([l["counter-value"] for l in a] ==
              [l["counter-value"] for l in b], (mode, a, b))


@case
def run_per_core_intervals():
    """-I with --per-core: the lines of both, key by key where both have
    an interval's group; each tool's intervals add up to the truth."""
    a, b = both_pinned(1000, 3000, "--per-core", "-I", "100")
    check(a and b, (a, b))
    # Both print every core in every interval, core by core.
    n = min(len(a), len(b)) // 2 * 2
    check(n >= 2, (a, b))
    same_lines(a[:n], b[:n])
    check([l["core"] for l in a[:n]] == [l["core"] for l in b[:n]], (a, b))
    for lines in (a, b):
        by_core = {}
        for l in lines:
            if not l["counter-value"].startswith("<"):
                by_core[l["core"]] = by_core.get(l["core"], 0) + \
                    float(l["counter-value"])
        check(sorted(by_core.values()) == [1000, 3000],
              (by_core, lines))


@case
def refuse_bad_uses():
    r = perfex("-j", "--json-format", "xml", "--", work(), "getppid", "1")
    check(r.returncode == EXIT["usage"] and "'--json-format'" in r.stderr and
          "perf or perfex" in r.stderr, r)
    r = perfex("--json-format", "perf", "--", work(), "getppid", "1")
    check(r.returncode == EXIT["usage"] and "goes with -j" in r.stderr, r)
    r = perfex("-j", "--json-format", "perf", "--per-process", "--", work(),
               "getppid", "1")
    check(r.returncode == EXIT["usage"] and "process tree" in r.stderr, r)
    # perfex, the default, is the document of docs/json.md.
    r = perfex("-j", "--json-format", "perfex", "-e", "task-clock", "--",
               work(), "getppid", "1")
    check(r.returncode == 0 and json.loads(r.stderr)["schema_version"] >= 1, r)


run_cases()
