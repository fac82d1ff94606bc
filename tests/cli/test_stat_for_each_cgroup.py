# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex --for-each-cgroup: every event counted once per cgroup v2 of a
list, a row per event and cgroup in the table, CSV and JSON.  Exact with
getppid tracepoints: the test's cgroups hold only its workloads, all
busy at once; a parent's count includes its child's (as the kernel counts
a cgroup); perf stat -a --for-each-cgroup counts the same run where perf
can find the cgroups."""
import json

from cgrouphelp import (Cgroups, Member, count_beside_perf, count_while,
                       perf_output)
from pctest import EXIT, case, check, perfex, run_cases
from stathelp import TP, exit_baseline, need_tracepoint


def perf_counts(started):
    """{cgroup: count} of perf's CSV (value,unit,event,cgroup,...)."""
    got = {}
    for row in perf_output(started).splitlines():
        f = row.split(",")
        if len(f) > 3 and f[2] == TP and f[0].isdigit():
            got[f[3]] = int(f[0])
    return got


def run_members(cg, plan, *args):
    """Members of PLAN ({cgroup: calls}) busy at once while perfex ARGS
    counts; perfex's output text."""
    members = []
    try:
        members = [Member(cg, rel, calls) for rel, calls in plan.items()]
        return count_while(members, "-a", *args)
    finally:
        for m in members:
            m.close()


@case
def two_busy_cgroups_rows_in_csv():
    need_tracepoint()
    # A sanitizer's leak checker makes a few getppid calls on the way out.
    base = exit_baseline()
    cg = Cgroups()
    try:
        a = cg.make("perfctr-fe-a")
        b = cg.make("perfctr-fe-b")
        members = [Member(cg, a, 7000), Member(cg, b, 9000)]
        try:
            text, perf = count_beside_perf(
                cg, members, ["--for-each-cgroup", "%s,%s" % (a, b), "-e", TP],
                ["-e", TP, "--for-each-cgroup", ",".join([a, b])])
        finally:
            for m in members:
                m.close()
        rows = [l.split(",") for l in text.splitlines() if l]
        got = [(r[3], int(r[0])) for r in rows if len(r) > 3 and r[2] == TP]
        check(got == [(a, 7000 + base), (b, 9000 + base)], rows)
        if perf:
            # perf resolves names against the mount it prefers (a v1
            # perf_event hierarchy when there is one): only the counts it
            # could make are compared.
            theirs = perf_counts(perf)
            if theirs:
                check(theirs == {a: 7000 + base, b: 9000 + base},
                      ("perf stat --for-each-cgroup", theirs))
    finally:
        cg.close()


@case
def nested_cgroups_in_json_and_table():
    need_tracepoint()
    base = exit_baseline()
    cg = Cgroups()
    try:
        parent = cg.make("perfctr-fe-p")
        child = cg.make("perfctr-fe-p/c")
        other = cg.make("perfctr-fe-o")
        plan = {parent: 300, child: 4000, other: 5000}
        names = [parent, child, other]
        doc = json.loads(run_members(cg, plan, "-j", "--for-each-cgroup",
                                     ",".join(names), "-e", TP))
        check(doc["target"]["kind"] == "cgroups" and
              doc["target"]["cgroups"] == names, doc["target"])
        got = [(e["cgroup"], e["value"]) for e in doc["events"]
               if e["name"] == TP]
        # The parent counts its own calls and its child's.
        check(got == [(parent, 4300 + 2 * base), (child, 4000 + base),
                      (other, 5000 + base)], got)
        text = run_members(cg, {child: 1000, other: 2000},
                           "--for-each-cgroup", "%s,%s" % (other, child),
                           "-e", TP)
        lines = [l.split() for l in text.splitlines() if TP in l]
        check([(l[1], l[2]) for l in lines] ==
              [(TP, other), (TP, child)], text)
        check([int(l[0].replace(",", "")) for l in lines] ==
              [2000 + base, 1000 + base], text)
    finally:
        cg.close()


@case
def for_each_cgroup_errors():
    r = perfex("--for-each-cgroup", "x", "-e", "task-clock", "--", "true")
    check(r.returncode == EXIT["usage"] and "needs -a or -C" in r.stderr, r.stderr)
    r = perfex("-a", "--for-each-cgroup", "x,,y", "-e", "task-clock", "--",
               "true")
    check(r.returncode == EXIT["usage"] and "an empty one" in r.stderr, r.stderr)
    r = perfex("-a", "-G", "x", "--for-each-cgroup", "y", "-e", "task-clock",
               "--", "true")
    check(r.returncode == EXIT["usage"] and "exclude each other" in r.stderr, r.stderr)
    r = perfex("-a", "--for-each-cgroup", "/", "-M", "IPC", "--", "true")
    check(r.returncode == EXIT["usage"] and "-M" in r.stderr, r.stderr)
    r = perfex("-a", "--for-each-cgroup", "/,perfctr-fe-no-such", "-e",
               "task-clock", "--", "true")
    check(r.returncode == EXIT["target"], (r.returncode, r.stderr))
    if "no cgroup v2 file system" not in r.stderr:
        check("perfex: cannot count cgroup 'perfctr-fe-no-such': "
              "no such cgroup" in r.stderr, r.stderr)


if __name__ == "__main__":
    run_cases()
