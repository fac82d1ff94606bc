# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex -G NAME --bpf-counters: the cgroup counted through BPF (one
counter per CPU and event, a program at each context switch) gives the
exact getppid counts that cgroup events give, with two busy cgroups at
once and for a parent of a busy child; the table says nothing new, and
where BPF cannot be used the count is the same through cgroup events and a
note says why."""
import json
import signal

from cgrouphelp import Cgroups, Member
from pctest import EXIT, case, check, perfex, run_cases, skip
from stathelp import TP, exit_baseline, need_tracepoint, start_perfex, \
    wait_counting


def need_bpf():
    r = perfex("info", "--json")
    if not json.loads(r.stdout)["libraries"].get("libbpf"):
        skip("perfex was built without libbpf (scripts/install-deps)")


def counts(out):
    rows = [l.split(",") for l in out.read().splitlines() if l]
    return [int(r[0]) for r in rows if len(r) > 2 and r[2] == TP]


def stop(p):
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    check(p.returncode == 0, err)
    return err


@case
def two_busy_cgroups_bpf_equals_cgroup_events():
    need_tracepoint()
    need_bpf()
    base = exit_baseline()
    cg = Cgroups()
    members = []
    try:
        a = cg.make("perfctr-clibpf-a")
        b = cg.make("perfctr-clibpf-b")
        members = [Member(cg, a, 7000), Member(cg, b, 9000)]
        runs = [start_perfex("-x,", "-a", "-G", a, "--bpf-counters", "-e",
                             TP),
                start_perfex("-x,", "-a", "-G", b, "--bpf-counters", "-e",
                             TP),
                start_perfex("-x,", "-a", "-G", a, "-e", TP)]
        for p, _ in runs:
            wait_counting(p.pid)
        for m in members:
            m.go()
        for m in members:
            m.wait()
        errs = [stop(p) for p, _ in runs]
        check("note:" not in errs[0], errs[0])
        got = [counts(out) for _, out in runs]
        check(got == [[7000 + base], [9000 + base], [7000 + base]], got)
    finally:
        for m in members:
            m.close()
        cg.close()


@case
def parent_counts_its_children_json():
    need_tracepoint()
    need_bpf()
    base = exit_baseline()
    cg = Cgroups()
    members = []
    try:
        parent = cg.make("perfctr-clibpf-p")
        child = cg.make("perfctr-clibpf-p/c")
        members = [Member(cg, parent, 300), Member(cg, child, 4000)]
        p, out = start_perfex("-j", "-a", "-G", parent, "--bpf-counters",
                              "-e", TP)
        wait_counting(p.pid)
        for m in members:
            m.go()
        for m in members:
            m.wait()
        stop(p)
        doc = json.loads(out.read())
        check(doc["target"]["kind"] == "cgroup", doc["target"])
        ev = [e for e in doc["events"] if e["name"] == TP]
        check(len(ev) == 1 and ev[0]["value"] == 4300 + 2 * base,
              doc["events"])
    finally:
        for m in members:
            m.close()
        cg.close()


@case
def event_sets_fall_back_with_a_note():
    need_tracepoint()
    need_bpf()
    base = exit_baseline()
    cg = Cgroups()
    members = []
    try:
        a = cg.make("perfctr-clibpf-sets")
        members = [Member(cg, a, 5000)]
        p, out = start_perfex("-x,", "-a", "-G", a, "--bpf-counters",
                              "--switch-interval", "1000", "-e", TP,
                              "-e", "task-clock")
        wait_counting(p.pid)
        members[0].go()
        members[0].wait()
        err = stop(p)
        check("perfex: note: --bpf-counters: counting with cgroup events"
              in err, err)
        got = counts(out)
        check(len(got) == 1 and got[0] <= 5000 + base, got)
    finally:
        for m in members:
            m.close()
        cg.close()


@case
def bpf_counters_needs_a_cgroup():
    r = perfex("-a", "--bpf-counters", "-e", "task-clock", "--", "true")
    check(r.returncode == EXIT["usage"] and "goes with -G" in r.stderr, r.stderr)
    r = perfex("--bpf-counters", "-e", "task-clock", "--", "true")
    check(r.returncode == EXIT["usage"] and "needs -a or -C" in r.stderr, r.stderr)


if __name__ == "__main__":
    run_cases()
