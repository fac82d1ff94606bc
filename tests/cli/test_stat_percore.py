#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex stat --per-socket, --per-die and --per-core: with -a or -C, one
row per group of CPUs, the sum of its CPUs' counts, labelled as perf
labels them (S0, S0-D0, S0-D0-C1) with the number of CPUs summed.  Exact
with getppid tracepoints and a common_pid filter (docs/kernel-notes.md 8):
a workload pinned to each CPU, the groups' rows against the truth and
against -A's rows of the same run; the layouts of the table, CSV, JSON;
-I; what the modes compose with and what they refuse.  The grouping of a
bigger machine (2 sockets x 2 cores x 2 threads) is tested on a fixture
tree in tests/unit/test_topology.c."""
import os
import re

from cgrouphelp import Cgroups, Member, count_while
from pctest import EXIT, case, check, perfex, run_cases, skip, work
from stathelp import (TP, count_pinned_pair, exit_baseline,
                      need_tracepoint, need_two_cpus, run_csv, run_json,
                      start_perfex)

SYS_CPU = "/sys/devices/system/cpu"


def topo(cpu, name, default):
    try:
        with open("%s/cpu%d/topology/%s" % (SYS_CPU, cpu, name)) as f:
            v = int(f.read())
            return default if v < 0 else v
    except (OSError, ValueError):
        return default


def label(cpu, mode):
    """perf's label of CPU's group in MODE ("core", "die", "socket")."""
    s, d, c = (topo(cpu, "physical_package_id", 0), topo(cpu, "die_id", 0),
               topo(cpu, "core_id", cpu))
    return {"socket": "S%d" % s, "die": "S%d-D%d" % (s, d),
            "core": "S%d-D%d-C%d" % (s, d, c)}[mode]


def need_two_cores():
    """CPUs 0 and 1 on different cores of one socket and die, as on the
    build VMs: the expected rows below assume it."""
    need_two_cpus()
    if label(0, "die") != label(1, "die") or \
            label(0, "core") == label(1, "core"):
        skip("CPUs 0 and 1 are not two cores of one die here (%s, %s)" %
             (label(0, "core"), label(1, "core")))


def pinned_pair(calls0, calls1, *modes):
    """Two workloads, one on CPU 0 making CALLS0 getppid, one on CPU 1
    making CALLS1, counted by one perfex -x, -C 0-1 per MODE (its options)
    at once, each with the filter of the two pids: {mode: rows}."""
    def counter(m):
        return lambda filt: start_perfex("-x,", "-C", "0-1", *m, "-e", TP,
                                         "--filter", filt)
    got = {}
    runs = count_pinned_pair(calls0, calls1, [counter(m) for m in modes])
    for m, (status, err, text) in zip(modes, runs):
        check(status == 0, err)
        got[m] = [l.split(",") for l in text.splitlines() if l]
    return got


@case
def groups_sum_their_cpus_exactly():
    need_tracepoint()
    need_two_cores()
    core, sock, die, cpu = ("--per-core",), ("--per-socket",), \
        ("--per-die",), ("-A",)
    got = pinned_pair(1000, 3000, core, sock, die, cpu)
    # The filter names the workloads' own tasks: a sanitizer's leak
    # checker, which calls getppid at exit from a task of its own, is
    # left out (exit_baseline() is for counts that follow children).
    truth0, truth1 = 1000, 3000
    # -A: CPU, value, unit, event, ...
    check([(r[0], int(r[1]), r[3]) for r in got[cpu]] ==
          [("CPU0", truth0, TP), ("CPU1", truth1, TP)], got[cpu])
    # Groups: label, CPUs, value, unit, event, ...: each core's row is
    # its CPU's, the socket's and the die's the sum of both.
    check([(r[0], r[1], int(r[2]), r[4]) for r in got[core]] ==
          [(label(0, "core"), "1", truth0, TP),
           (label(1, "core"), "1", truth1, TP)], got[core])
    check([(r[0], r[1], int(r[2]), r[4]) for r in got[sock]] ==
          [(label(0, "socket"), "2", truth0 + truth1, TP)], got[sock])
    check([(r[0], r[1], int(r[2]), r[4]) for r in got[die]] ==
          [(label(0, "die"), "2", truth0 + truth1, TP)], got[die])
    # The rest of perf's CSV fields: run time, percentage, metric.
    for r in got[core] + got[sock]:
        check(len(r) == 9 and int(r[5]) > 0 and r[6] == "100.00", r)


@case
def table_layout():
    need_tracepoint()
    need_two_cores()
    r = perfex("-C", "0-1", "--per-core", "-e", TP, "-e", "cpu-clock",
               "--", work(), "getppid", "10")
    check(r.returncode == 0, r.stderr)
    rows = [l for l in r.stderr.splitlines() if l.startswith("S")]
    # perf's layout: the core's id left-aligned in 8 columns, the CPUs
    # in 4, then the counts as without it.
    for cpu, line in zip((0, 1), rows[0::2]):
        check(line.startswith("%-15s    1 " % label(cpu, "core")), line)
        check(re.search(r" \d+      %s " % TP, line), line)
    check(len(rows) == 4 and all(TP in l for l in rows[0::2]) and
          all("msec cpu-clock" in l for l in rows[1::2]), rows)
    check("for 'CPU(s) 0-1'" in r.stderr, r.stderr)
    r = perfex("-a", "--per-socket", "-e", "cpu-clock", "--", "true")
    check(r.returncode == 0, r.stderr)
    rows = [l for l in r.stderr.splitlines() if l.startswith("S")]
    n = os.cpu_count()
    check(len(rows) == 1 and
          rows[0].startswith("%-6s %4d " % (label(0, "socket"), n)), rows)


@case
def json_units_are_groups():
    need_tracepoint()
    need_two_cores()
    r, doc = run_json("-C", "0-1", "--per-core", "-e", TP, "--", "taskset",
                      "-c", "1", work(), "getppid", "5000")
    check(r.returncode == 0, r.stderr)
    check(doc["aggregation"] == "per-core", doc["aggregation"])
    ev = doc["events"][0]
    units = ev["units"]
    check([u["label"] for u in units] == [label(0, "core"),
                                         label(1, "core")], units)
    check([u["cpus"] for u in units] == [[0], [1]], units)
    for u, cpu in zip(units, (0, 1)):
        check(u["cpu"] == -1 and u["tid"] == -1 and u["comm"] == "", u)
        check(u["socket"] == topo(cpu, "physical_package_id", 0), u)
        check(u["die"] == topo(cpu, "die_id", 0), u)
        check(u["core"] == topo(cpu, "core_id", cpu), u)
        check(u["time_running"] > 0 and u["status"] == "counted", u)
    check(sum(u["value"] for u in units) == ev["value"], ev)
    check(units[1]["value"] >= 5000, units)
    # The socket has neither die nor core.
    r, doc = run_json("-a", "--per-socket", "-e", "cpu-clock", "--", "true")
    check(r.returncode == 0, r.stderr)
    u = doc["events"][0]["units"][0]
    check(doc["aggregation"] == "per-socket" and "die" not in u and
          "core" not in u and u["cpus"] == list(range(os.cpu_count())), u)


@case
def intervals_per_group():
    need_tracepoint()
    need_two_cores()
    # 2 cores x (1 interval and the last part) at least: spin counts the
    # wall clock, so 350 ms leaves perfex's timer 250 ms of lateness on
    # a loaded machine.
    r, rows = run_csv("-C", "0-1", "--per-core", "-I", "100", "-e",
                      "task-clock", "--", work(), "spin", "350")
    check(r.returncode == 0, r.stderr)
    # time, label, CPUs, then the event's fields.
    check(len(rows) >= 4 and all(len(row) == 10 for row in rows), rows)
    check({row[1] for row in rows} == {label(0, "core"), label(1, "core")},
          rows)
    check(all(row[2] == "1" and row[4] == "msec" and row[5] == "task-clock"
              for row in rows), rows)
    r = perfex("-a", "--per-socket", "-I", "100", "-e", "cpu-clock", "--",
               work(), "sleep", "250")
    check(r.returncode == 0, r.stderr)
    lines = r.stderr.splitlines()
    check(re.match(r"#\s+time socket cpus\s+counts unit events$", lines[0]),
          lines[0])
    check(all(re.match(r"\s+\d+\.\d{9} %-6s %4d " % (label(0, "socket"),
                                                       os.cpu_count()), l)
              for l in lines[1:]), lines)


@case
def sets_per_core():
    need_tracepoint()
    need_two_cores()
    r, rows = run_csv("-C", "0-1", "--per-core", "-e", TP, "-e",
                      "cpu-clock", "--switch-interval", "20", "--", work(),
                      "spin", "200")
    check(r.returncode == 0, r.stderr)
    # label, CPUs, value, unit, event, run, %, metric x2, set, error
    sets = sorted({(row[0], row[4], row[9]) for row in rows})
    check(sets == sorted((label(c, "core"), ev, s) for c in (0, 1)
                         for ev, s in ((TP, "0"), ("cpu-clock", "1"))),
          rows)


@case
def each_cgroup_per_core():
    """--for-each-cgroup with --per-core: a row per core and cgroup, each
    exact (the cgroups hold only their workload, pinned to a CPU)."""
    need_tracepoint()
    need_two_cores()
    base = exit_baseline()
    cg = Cgroups()
    try:
        a = cg.make("perfctr-pc-a")
        b = cg.make("perfctr-pc-b")
        members = [Member(cg, a, 700, cpu=0), Member(cg, b, 900, cpu=1)]
        try:
            text = count_while(members, "-x,", "-C", "0-1", "--per-core",
                               "--for-each-cgroup", "%s,%s" % (a, b),
                               "-e", TP)
        finally:
            for m in members:
                m.close()
        rows = [l.split(",") for l in text.splitlines() if l]
        # A cgroup's events run on a CPU only while one of its tasks
        # does: on the other core they never ran ("<not counted>").
        got = sorted((r[0], r[5], 0 if r[2] == "<not counted>" else
                      int(r[2])) for r in rows if r[4] == TP)
        c0, c1 = label(0, "core"), label(1, "core")
        check(got == sorted([(c0, a, 700 + base), (c0, b, 0),
                             (c1, a, 0), (c1, b, 900 + base)]), rows)
    finally:
        cg.close()


@case
def one_cgroup_per_core():
    """-G with --per-core: the cgroup's workload on CPU 1 is all of core
    1's count, none of core 0's."""
    need_tracepoint()
    need_two_cores()
    base = exit_baseline()
    cg = Cgroups()
    try:
        a = cg.make("perfctr-pc-g")
        members = [Member(cg, a, 1200, cpu=1)]
        try:
            text = count_while(members, "-x,", "-C", "0-1", "--per-core",
                               "-G", a, "-e", TP)
        finally:
            for m in members:
                m.close()
        rows = [l.split(",") for l in text.splitlines() if l]
        got = [(r[0], 0 if r[2] == "<not counted>" else int(r[2]))
               for r in rows if r[4] == TP]
        check(got == [(label(0, "core"), 0), (label(1, "core"), 1200 + base)],
              rows)
    finally:
        cg.close()


@case
def refusals_name_the_option():
    cases = [
        (["--per-core", "--", "true"], "'--per-core' needs -a or -C"),
        (["-a", "--per-core", "-A", "--", "true"],
         "option '-A' and '--per-core' exclude each other"),
        (["-a", "--per-socket", "--per-core", "--", "true"],
         "option '--per-core' and '--per-socket' exclude each other"),
        (["-a", "--per-die", "--per-thread", "--", "true"],
         "option '--per-thread' and '--per-die' exclude each other"),
        (["-a", "-r", "2", "--per-core", "--", "true"],
         "option '-r' cannot be combined with '--per-core'"),
    ]
    for args, msg in cases:
        r = perfex(*args)
        check(r.returncode == EXIT["usage"] and msg in r.stderr, (args, r.stderr))


run_cases()
