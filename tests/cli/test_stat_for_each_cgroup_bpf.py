# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex --bpf-counters --for-each-cgroup: every cgroup of the list
counted through one BPF program (one counter per CPU and event) gives the
exact getppid counts that the cgroup events of --for-each-cgroup give,
counting the same workloads at the same time: in CSV, per interval with
-I (the intervals add up to the whole), in perfex's JSON and in perf
stat -j's lines (which name each event's cgroup, with -G's lists too);
and past the BPF counters' default of 256 cgroups."""
import functools
import json
import os
import time

from cgrouphelp import Cgroups, Member
from pctest import EXIT as PERF_EXIT, case, check, perfex, run_cases, skip
from stathelp import TP, counted_during, exit_baseline, need_tracepoint, \
    start_perfex


def name(suffix):
    """A cgroup name of this run: other people's runs make theirs at the
    same time on the same machine."""
    return "perfctr-febpf-%d%s" % (os.getpid(), suffix)


def need_bpf():
    r = perfex("info", "--json")
    if not json.loads(r.stdout)["libraries"].get("libbpf"):
        skip("perfex was built without libbpf (scripts/install-deps)")


def count_all(cg, plan, runs, pause=None):
    """The members of PLAN ({cgroup: calls}) busy at once (or one after
    the other, PAUSE seconds apart) while each of RUNS (perfex argument
    lists) counts: [(stderr, output text)] once each stopped (SIGINT)
    with status 0."""
    members = []
    try:
        members = [Member(cg, rel, calls) for rel, calls in plan.items()]

        def act():
            for m in members:
                m.go()
                if pause:
                    m.wait()
                    time.sleep(pause)
            for m in members:
                m.wait()
        got = counted_during([functools.partial(start_perfex, *args)
                              for args in runs], act, timeout=60)
        for status, err, _ in got:
            check(status == 0, err)
        return [(err, text) for _, err, text in got]
    finally:
        for m in members:
            m.close()


def csv_counts(text, value=0, event=2):
    """{cgroup: count} of CSV rows (the cgroup the field after the event),
    the rows of each cgroup added (-I's intervals); <not counted> is 0."""
    got = {}
    for row in text.splitlines():
        f = row.split(",")
        if len(f) > event + 1 and f[event] == TP:
            n = int(f[value]) if f[value].isdigit() else 0
            got[f[event + 1]] = got.get(f[event + 1], 0) + n
    return got


def three_cgroups(cg, base):
    """A parent with a busy child and a busy cgroup beside them: (the
    --for-each-cgroup list, the plan of calls, the truth per cgroup); a
    parent counts its child's calls too."""
    parent, child, other = (cg.make(name("-p")), cg.make(name("-p/c")),
                            cg.make(name("-o")))
    plan = {parent: 3000, child: 4000, other: 5000}
    truth = {parent: 7000 + 2 * base, child: 4000 + base,
             other: 5000 + base}
    return ",".join([parent, child, other]), plan, truth


def bpf_case(body):
    """A case of BODY(cg, base) with the tracepoint and the BPF counters
    at hand: CG the Cgroups it makes (removed after), BASE the getppid
    calls a process makes at its exit."""
    @functools.wraps(body)
    def run():
        need_tracepoint()
        need_bpf()
        base = exit_baseline()
        cg = Cgroups()
        try:
            body(cg, base)
        finally:
            cg.close()
    return case(run)


@bpf_case
def csv_bpf_equals_cgroup_events(cg, base):
    names, plan, truth = three_cgroups(cg, base)
    args = ["-x,", "-a", "--for-each-cgroup", names, "-e", TP]
    (err, bpf), (_, events) = count_all(
        cg, plan, [args + ["--bpf-counters"], args])
    check("note:" not in err, err)
    check(csv_counts(bpf) == truth, ("bpf", bpf, truth))
    check(csv_counts(events) == truth, ("cgroup events", events, truth))
    # The rows in the same order, cgroup after cgroup.
    order = [r.split(",")[3] for r in bpf.splitlines() if TP in r]
    check(order == names.split(","), order)


@bpf_case
def intervals_add_up_exactly(cg, base):
    names, plan, truth = three_cgroups(cg, base)
    args = ["-x,", "-a", "-I", "50", "--for-each-cgroup", names, "-e",
            TP, "-e", "task-clock"]
    # Each cgroup's calls in intervals of their own.
    (err, bpf), (_, events) = count_all(
        cg, plan, [args + ["--bpf-counters"], args], pause=0.2)
    check("note:" not in err, err)
    # -I's CSV: the time first, then value, unit, event, cgroup.
    check(csv_counts(bpf, 1, 3) == truth, ("bpf", bpf, truth))
    check(csv_counts(events, 1, 3) == truth, ("cgroup events", events))
    busy = {r.split(",")[0] for r in bpf.splitlines()
            if TP in r and r.split(",")[1].isdigit()}
    check(len(busy) >= 2, ("intervals", bpf))


@bpf_case
def json_and_perf_json(cg, base):
    names, plan, truth = three_cgroups(cg, base)
    args = ["-a", "--bpf-counters", "--for-each-cgroup", names, "-e", TP]
    (_, ours), (_, perfs) = count_all(
        cg, plan, [["-j"] + args, ["-j", "--json-format", "perf"] + args])
    doc = json.loads(ours)
    check(doc["target"]["kind"] == "cgroups" and
          doc["target"]["cgroups"] == names.split(","), doc["target"])
    got = [(e["cgroup"], e["value"]) for e in doc["events"]
           if e["name"] == TP]
    check(got == [(c, truth[c]) for c in names.split(",")], got)
    # perf stat -j names each row's cgroup after the event.
    lines = [json.loads(l) for l in perfs.splitlines() if l.strip()]
    got = [(l["cgroup"], float(l["counter-value"])) for l in lines
           if l.get("event") == TP]
    check(got == [(c, float(truth[c])) for c in names.split(",")], got)


@bpf_case
def perf_json_of_g_with_bpf(cg, base):
    """-G with events in different cgroups: perf's lines name the cgroup
    of each event ("" for the events without one)."""
    a = cg.make(name("-g"))
    # perf's rule: -G's name goes to the event before it.
    [(err, text)] = count_all(cg, {a: 2000}, [[
        "-j", "--json-format", "perf", "-a", "--bpf-counters", "-e",
        TP, "-G", a, "-e", "task-clock"]])
    check("note:" not in err, err)
    lines = [json.loads(l) for l in text.splitlines() if l.strip()]
    got = [(l["event"], l["cgroup"]) for l in lines if "event" in l]
    check(got == [(TP, a), ("task-clock", "")], got)
    check(float(lines[0]["counter-value"]) == 2000 + base, lines[0])


@bpf_case
def past_256_cgroups_all_through_bpf(cg, base):
    """The BPF counters take 256 cgroups unless told more: perfex sizes
    them to the list, so none is counted with cgroup events."""
    top = cg.make(name("-many"))
    rels = [cg.make("%s/c%03d" % (top, i)) for i in range(300)]
    plan = {rels[0]: 1000, rels[299]: 2000}
    [(err, text)] = count_all(cg, plan, [[
        "-x,", "-a", "--bpf-counters", "--for-each-cgroup",
        ",".join(rels), "-e", TP]])
    check("note:" not in err, err)
    got = csv_counts(text)
    check(len(got) == 300 and got[rels[0]] == 1000 + base and
          got[rels[299]] == 2000 + base and
          sum(got.values()) == 3000 + 2 * base,
          [(c, n) for c, n in got.items() if n])


@case
def bpf_for_each_cgroup_errors():
    r = perfex("--bpf-counters", "--for-each-cgroup", "x", "-e",
               "task-clock", "--", "true")
    check(r.returncode == PERF_EXIT["usage"] and "needs -a or -C" in r.stderr, r.stderr)
    r = perfex("-a", "--bpf-counters", "-e", "task-clock", "--", "true")
    check(r.returncode == PERF_EXIT["usage"] and "it goes with -G or --for-each-cgroup"
          in r.stderr, r.stderr)
    r = perfex("-a", "--bpf-counters", "--for-each-cgroup", "/", "-M", "IPC",
               "--", "true")
    check(r.returncode == PERF_EXIT["usage"] and "-M" in r.stderr, r.stderr)
    missing = name("-no-such")
    r = perfex("-a", "--bpf-counters", "--for-each-cgroup", "/," + missing,
               "-e", "task-clock", "--", "true")
    check(r.returncode == PERF_EXIT["target"], (r.returncode, r.stderr))
    if "no cgroup v2 file system" not in r.stderr:
        check("perfex: cannot count cgroup '%s': no such cgroup" % missing
              in r.stderr, r.stderr)


if __name__ == "__main__":
    run_cases()
