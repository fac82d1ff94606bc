# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex -G/--cgroup: counts of the tasks of one cgroup v2 (and its
descendants) on every CPU, exact with getppid tracepoints: the test makes
its cgroups under the cgroup2 mount (found in /proc/self/mountinfo), moves
its workloads in through cgroup.procs and removes the cgroups after.  A
cgroup the test made holds nothing else, so no pid filter is needed; a
second busy cgroup shows the count is the cgroup's alone.  perf stat -a -G
counts the same run where perf can find the cgroup."""
import json

from cgrouphelp import (Cgroups, Member, count_beside_perf, count_while,
                       perf_output)
from pctest import EXIT, case, check, perfex, run_cases
from stathelp import TP, exit_baseline, need_tracepoint


def perf_result(started):
    for row in perf_output(started).splitlines():
        f = row.split(",")
        if len(f) > 2 and f[2] == TP and f[0].isdigit():
            return int(f[0])
    return None


@case
def two_busy_cgroups_one_counted_exactly():
    need_tracepoint()
    # A sanitizer's leak checker makes a few getppid calls on the way out.
    base = exit_baseline()
    cg = Cgroups()
    members = []
    try:
        a = cg.make("perfctr-cli-a")
        b = cg.make("perfctr-cli-b")
        members = [Member(cg, a, 7000), Member(cg, b, 9000)]
        text, perf = count_beside_perf(cg, members, ["-G", a, "-e", TP],
                                       ["-e", TP, "-G", a])
        rows = [l.split(",") for l in text.splitlines() if l]
        counts = [int(r[0]) for r in rows if len(r) > 2 and r[2] == TP]
        check(counts == [7000 + base], rows)
        if perf:
            got = perf_result(perf)
            # perf resolves -G against the mount it prefers (a cgroup v1
            # perf_event hierarchy when there is one): only a count it
            # could make is compared.
            if got is not None:
                check(got == 7000 + base, ("perf stat -G", got))
    finally:
        for m in members:
            m.close()
        cg.close()


@case
def parent_counts_its_children_json():
    need_tracepoint()
    base = exit_baseline()
    cg = Cgroups()
    members = []
    try:
        parent = cg.make("perfctr-cli-p")
        child = cg.make("perfctr-cli-p/c")
        members = [Member(cg, parent, 300), Member(cg, child, 4000)]
        doc = json.loads(count_while(members, "-j", "--all-cpus",
                                     "--cgroup", "/" + parent, "-e", TP))
        check(doc["target"] == {"kind": "cgroup", "cpus": "all",
                                "cgroup": "/" + parent}, doc["target"])
        ev = [e for e in doc["events"] if e["name"] == TP]
        check(len(ev) == 1 and ev[0]["value"] == 4300 + 2 * base,
              doc["events"])
    finally:
        for m in members:
            m.close()
        cg.close()


def csv_rows(text):
    """[(cgroup, count)] of perfex's or perf's CSV rows of TP, in order
    (the cgroup is the field after the event; "" for none)."""
    out = []
    for row in text.splitlines():
        f = row.split(",")
        if len(f) > 3 and f[2] == TP and f[0].isdigit():
            out.append((f[3], int(f[0])))
    return out


def perf_rows(started):
    return csv_rows(perf_output(started))


@case
def cgroup_lists_follow_perfs_rule():
    """-G's names go to the events in order, one each; an event after the
    last name counts everything; the first -G's one name goes to every
    event before it.  Exact with two busy cgroups, the system-wide event
    filtered to the two workloads (docs/kernel-notes.md 8: other processes
    make the same calls); perf stat counts the same run with the same options.
    A sanitizer's leak checker asks for its parent from a task of its own:
    in the cgroup, but not one of the filter's pids."""
    need_tracepoint()
    base = exit_baseline()
    cg = Cgroups()
    try:
        a = cg.make("perfctr-cli-la")
        b = cg.make("perfctr-cli-lb")
        rows = [
            (["-e", TP, "-e", TP, "-e", TP, "--filter", None, "-G",
              "%s,%s" % (a, b)],
             [(a, 7000 + base), (b, 9000 + base), ("", 16000)]),
            (["-e", TP, "-e", TP, "-G", a, "-e", TP, "--filter", None],
             [(a, 7000 + base), (a, 7000 + base), ("", 16000)]),
            # An empty name skips its event; a later -G goes on.
            (["-e", TP, "--filter", None, "-e", TP, "-e", TP, "-G",
              ",%s" % b, "-G", a],
             [("", 16000), (b, 9000 + base), (a, 7000 + base)]),
            # The names go to the events of a -e list one by one.
            (["-e", "%s,%s" % (TP, TP), "-G", "%s,%s" % (a, b)],
             [(a, 7000 + base), (b, 9000 + base)]),
            (["-e", "%s,%s" % (TP, TP), "-e", TP, "--filter", None, "-G",
              "%s,%s" % (b, a)],
             [(b, 9000 + base), (a, 7000 + base), ("", 16000)]),
        ]
        for args, want in rows:
            members = [Member(cg, a, 7000), Member(cg, b, 9000)]
            perf = None
            try:
                flt = "common_pid == %d || common_pid == %d" % (
                    members[0].pid, members[1].pid)
                args = [flt if x is None else x for x in args]
                text, perf = count_beside_perf(cg, members, args)
                got = csv_rows(text)
                check(sorted(got) == sorted(want), (args, got, want))
                if perf:
                    got, perf = perf_rows(perf), None
                    check(sorted(got) == sorted(want), ("perf stat", args,
                                                        got))
            finally:
                if perf and perf[0].poll() is None:
                    perf[0].kill()
                    perf[0].wait()
                for m in members:
                    m.close()
    finally:
        cg.close()


@case
def cgroup_errors():
    r = perfex("-G", "x", "-e", "task-clock", "--", "true")
    check(r.returncode != 0 and "-G" in r.stderr, r.stderr)
    r = perfex("-a", "-G", "x,y", "-e", "task-clock", "--", "true")
    check(r.returncode == EXIT["usage"] and "a list needs its -e first" in r.stderr,
          r.stderr)
    r = perfex("-a", "-e", "task-clock", "-G", "x,y", "--", "true")
    check(r.returncode == EXIT["usage"] and "names more cgroups than there are "
          "events before it ('x,y')" in r.stderr, r.stderr)
    r = perfex("-a", "-e", "task-clock,page-faults", "-G", "x,y,z", "--",
               "true")
    check(r.returncode == EXIT["usage"] and "names more cgroups than there are "
          "events before it ('x,y,z')" in r.stderr, r.stderr)
    r = perfex("-a", "-e", "{task-clock,page-faults}", "-G", "x,y", "--",
               "true")
    check(r.returncode == EXIT["usage"] and "group '{task-clock,page-faults}' "
          "different cgroups" in r.stderr and "hint:" in r.stderr, r.stderr)
    r = perfex("-a", "-G", "x", "-e", "task-clock", "-G", "y", "--", "true")
    check(r.returncode == EXIT["usage"] and "cannot follow a -G given before the "
          "events" in r.stderr, r.stderr)
    r = perfex("-a", "-G", "perfctr-cli-no-such", "-e", "task-clock", "--",
               "true")
    if "no cgroup v2 file system" in r.stderr:
        check(r.returncode == EXIT["target"] and "hint:" in r.stderr, r.stderr)
    else:
        check(r.returncode == EXIT["target"], (r.returncode, r.stderr))
        check("perfex: cannot count cgroup 'perfctr-cli-no-such': "
              "no such cgroup" in r.stderr, r.stderr)


if __name__ == "__main__":
    run_cases()
