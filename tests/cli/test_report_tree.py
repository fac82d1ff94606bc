#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex report --sort pid: the samples of a recorded process tree shown as
the tree (parents from the file's FORK records), each process with its own
samples and its descendants', exact where every getppid call is a sample
(-c 1 on syscalls:sys_enter_getppid)."""
import json
import re

from pctest import (case, check, perfex, require_root, require_tracefs,
                    run_cases, work)
from sampletools import (PERF, TP, cleanup, perf_record, record,
                         require_perf, tmpfile)

# A sanitizer build's leak checker calls getppid twice at a workload's exit.
SANITIZER_CALLS = 2
# ... and forks a helper process: the trees here are the workload's own,
# so its workloads run without the leak checker (perfex keeps it).
NO_LEAK_CHECK = ('export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}'
                 'detect_leaks=0"; ')


def shell(a, b, c):
    """sh starting three children: two at once, the third after them,
    and that one forking a grandchild of its own."""
    w = work()
    return ["--", "sh", "-c", NO_LEAK_CHECK +
            "%s getppid %d & %s getppid %d; wait; sh -c '%s getppid %d; :'"
            % (w, a, w, b, w, c)]


def rows_of(path):
    r = perfex("report", "-i", path, "--sort", "pid", "-j")
    check(r.returncode == 0, r.stderr)
    rep = json.loads(r.stdout)
    check(len(rep["events"]) == 1, rep)
    return rep["events"][0]["rows"]


def own(n, got):
    return got - n in (0, SANITIZER_CALLS)


def check_tree(path, a, b, c):
    rows = rows_of(path)
    by_pid = {int(r["pid"]): r for r in rows}
    roots = [r for r in rows if r["depth"] == 0]
    check(len(roots) == 1 and roots[0]["comm"] == "sh", roots)
    root = roots[0]
    kids = [r for r in rows if r["ppid"] == int(root["pid"])]
    # The two pcwork children and the inner sh, under the outer sh.
    check(sorted(r["comm"] for r in kids) == ["pcwork", "pcwork", "sh"], kids)
    works = sorted((r for r in kids if r["comm"] == "pcwork"),
                   key=lambda r: r["samples"])
    lo, hi = sorted((a, b))
    check(own(lo, works[0]["samples"]) and own(hi, works[1]["samples"]),
          works)
    inner = [r for r in kids if r["comm"] == "sh"][0]
    grand = [r for r in rows if r["ppid"] == int(inner["pid"])]
    check(len(grand) == 1 and grand[0]["comm"] == "pcwork" and
          own(c, grand[0]["samples"]) and grand[0]["depth"] == 2, grand)
    check(inner["children_samples"] == grand[0]["samples"], inner)
    # Every subtree is its own samples plus its children's subtrees.
    for r in rows:
        below = sum(k["samples"] + k["children_samples"] for k in rows
                    if k["ppid"] == int(r["pid"]))
        check(r["children_samples"] == below, (r, below))
    total = sum(r["samples"] for r in rows)
    check(root["samples"] + root["children_samples"] == total, (root, total))
    for r in rows:
        check(r["period"] == r["samples"] and r["children_period"] ==
              r["children_samples"], r)
    check(set(by_pid) == {int(r["pid"]) for r in rows})
    return rows


def check_text(path, rows):
    """The table: one line per process, indented by depth, sorted by
    self + children under each parent."""
    r = perfex("report", "-i", path, "--sort", "pid")
    check(r.returncode == 0, r.stderr)
    out = r.stdout.splitlines()
    check("# Process tree (%d processes): self and children (descendants)"
          % len(rows) in out, out[:12])
    lines = [l for l in out if l and not l.startswith("#")]
    check(len(lines) == len(rows), (lines, rows))
    total = sum(x["samples"] for x in rows)
    seen = []
    for line in lines:
        m = re.match(r"^ +([\d.]+)% +([\d.]+)% +(\d+) +(\d+) +(\d+)  ( *)(\S+)$",
                     line)
        check(m, line)
        row = [x for x in rows if int(x["pid"]) == int(m.group(5))][0]
        check(int(m.group(3)) == row["samples"] and
              int(m.group(4)) == row["children_samples"], (line, row))
        check(len(m.group(6)) == 2 * row["depth"] and
              m.group(7) == row["comm"], (line, row))
        check(abs(float(m.group(1)) - 100.0 * row["samples"] / total) < 0.006,
              line)
        seen.append(row)
    # Siblings come heaviest subtree first.
    for i, x in enumerate(seen):
        later = [y for y in seen[i + 1:] if y["ppid"] == x["ppid"] and
                 y["depth"] == x["depth"]]
        for y in later:
            check(x["samples"] + x["children_samples"] >=
                  y["samples"] + y["children_samples"], (x, y))


@case
def shell_with_children_exact_tree():
    require_root()
    require_tracefs()
    path = tmpfile("tree.data")
    r = record(path, "-e", TP, "-c", "1", *shell(13, 29, 7))
    check(r.returncode == 0, r.stderr)
    rows = check_tree(path, 13, 29, 7)
    check_text(path, rows)


@case
def perf_recorded_tree():
    """perf record's file has the same FORK records: the same tree."""
    require_root()
    require_tracefs()
    require_perf()
    path = tmpfile("tree-perf.data")
    perf_record(path, "-e", TP, "-c", "1", *shell(11, 5, 17))
    check_tree(path, 11, 5, 17)


@case
def flat_pid_rows_carry_the_parent():
    require_root()
    require_tracefs()
    path = tmpfile("flat.data")
    r = record(path, "-e", TP, "-c", "1", *shell(3, 4, 5))
    check(r.returncode == 0, r.stderr)
    r = perfex("report", "-i", path, "--sort", "pid,comm", "-j")
    check(r.returncode == 0, r.stderr)
    rows = json.loads(r.stdout)["events"][0]["rows"]
    tree = {x["pid"]: x["ppid"] for x in rows_of(path)}
    for x in rows:
        check(x["ppid"] == tree[x["pid"]], (x, tree))


try:
    run_cases()
finally:
    cleanup()
