# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex record -G/--cgroup: the samples of one cgroup v2's tasks (and its
descendants') on the CPUs of -a or -C, the kernel's way (per-CPU events
with the cgroup's fd).  Exact with getppid tracepoints: a cgroup the test
made holds only its workloads, a second busy cgroup is not sampled, a
parent cgroup's samples include its child's; errors as perfex stat -G's."""
import os
import signal
import subprocess
import tempfile

from cgrouphelp import Cgroups, Member
from pctest import EXIT, PERFEX, case, check, perfex, run_cases
from sampletools import cleanup, report_json, tmpfile
from stathelp import TP, exit_baseline, need_tracepoint, wait_counting


def start_record(out, *args):
    p = subprocess.Popen([PERFEX, "record", "-q", "-o", out] + list(args),
                         stderr=subprocess.PIPE, text=True)
    # Sampling has begun once its events are open.
    wait_counting(p.pid)
    return p


def stop_record(p):
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    check(p.returncode == 0, err)


def samples_by_pid(path):
    """{pid: samples} of the tracepoint in a recording."""
    rep = report_json(path, "--sort", "pid")
    # An exact count needs every record kept: a lost one is the ring's
    # size against a reader starved on a loaded machine, not a miscount.
    check(rep["lost"] == 0 and rep["lost_samples"] == 0, rep)
    ev = [e for e in rep["events"] if e["event"] == TP]
    check(len(ev) == 1, rep["events"])
    return {int(r["pid"]): r["samples"] for r in ev[0]["rows"]}


@case
def two_busy_cgroups_one_sampled_exactly():
    need_tracepoint()
    # A sanitizer's leak checker makes a few getppid calls on the way out.
    base = exit_baseline()
    cg = Cgroups()
    members = []
    out = tmpfile("cg-two.data")
    try:
        a = cg.make("perfctr-rec-a")
        b = cg.make("perfctr-rec-b")
        # Both on CPU 0, sampled there: one counter sees every call of
        # a, so its period of 100 gives exactly floor(calls / 100).
        members = [Member(cg, a, 7000, cpu=0), Member(cg, b, 9000, cpu=0)]
        p = start_record(out, "-C", "0", "-G", a, "-e", TP, "-c", "100")
        for m in members:
            m.go()
        for m in members:
            m.wait()
        stop_record(p)
        got = samples_by_pid(out)
        # A sanitizer's leak checker makes its getppid calls from a task
        # of its own, in the member's cgroup: only the total is exact.
        check(sum(got.values()) == (7000 + base) // 100, got)
        check(members[1].pid not in got, got)
    finally:
        for m in members:
            m.close()
        cg.close()


@case
def parent_cgroup_samples_its_child():
    need_tracepoint()
    base = exit_baseline()
    cg = Cgroups()
    members = []
    out = tmpfile("cg-nested.data")
    try:
        parent = cg.make("perfctr-rec-p")
        child = cg.make("perfctr-rec-p/c")
        other = cg.make("perfctr-rec-o")
        members = [Member(cg, parent, 300), Member(cg, child, 4000),
                   Member(cg, other, 5000)]
        # Every CPU, a sample per call: exact wherever they run.
        # 4,300 samples: a 2 MiB ring a CPU holds them all (about 60
        # bytes each) even if the reader never runs before the end.
        p = start_record(out, "--all-cpus", "--cgroup", "/" + parent,
                         "-e", TP, "-c", "1", "-m", "512")
        for m in members:
            m.go()
        for m in members:
            m.wait()
        stop_record(p)
        got = samples_by_pid(out)
        # The members' own calls, exactly; a sanitizer's leak checker
        # makes its way-out calls from tasks of its own (base each).
        check(got.get(members[0].pid) == 300 and
              got.get(members[1].pid) == 4000, got)
        check(sum(got.values()) == 4300 + 2 * base, got)
        check(members[2].pid not in got, got)
    finally:
        for m in members:
            m.close()
        cg.close()


def samples_by_event_pid(path):
    """{event: {pid: samples}} of a recording."""
    rep = report_json(path, "--sort", "pid")
    return {e["event"]: {int(r["pid"]): r["samples"] for r in e["rows"]}
            for e in rep["events"]}


@case
def cgroup_list_gives_each_event_its_cgroup():
    """-e E1,E2 -G A,B: perf's rule, each name to the next event of the
    expanded list: E1 sampled in A only, E2 in B only, a sample per call
    of each workload.  The same with -e E1 -G A -e E2 -G B."""
    need_tracepoint()
    exit_tp = TP.replace("sys_enter_", "sys_exit_")
    for form in ("one -e", "two -e"):
        def events(a, b):
            if form == "one -e":
                return ["-e", "%s,%s" % (TP, exit_tp), "-G", "%s,%s" % (a, b)]
            return ["-e", TP, "-G", a, "-e", exit_tp, "-G", b]
        each_event_its_cgroup(events, exit_tp)


def each_event_its_cgroup(events, exit_tp):
    base = exit_baseline()
    cg = Cgroups()
    members = []
    out = tmpfile("cg-list.data")
    try:
        a = cg.make("perfctr-rec-la")
        b = cg.make("perfctr-rec-lb")
        members = [Member(cg, a, 2000), Member(cg, b, 3000)]
        # Rings large enough to hold every sample while the machine is
        # busy and the reader late.
        p = start_record(out, "-a", *events(a, b), "-c", "1", "-m", "256")
        for m in members:
            m.go()
        for m in members:
            m.wait()
        stop_record(p)
        got = samples_by_event_pid(out)
        enter, leave = got.get(TP, {}), got.get(exit_tp, {})
        check(enter.get(members[0].pid) == 2000 and
              members[1].pid not in enter, enter)
        check(sum(enter.values()) == 2000 + base, enter)
        check(leave.get(members[1].pid) == 3000 and
              members[0].pid not in leave, leave)
        check(sum(leave.values()) == 3000 + base, leave)
    finally:
        for m in members:
            m.close()
        cg.close()


@case
def cgroup_errors():
    r = perfex("record", "-o", tmpfile("x.data"), "-G", "x", "-e",
               "cpu-clock", "--", "true")
    check(r.returncode == EXIT["usage"], r)
    check("perfex: option '-G' needs -a or -C" in r.stderr, r.stderr)
    r = perfex("record", "-o", tmpfile("x.data"), "-a", "-G", "x,y", "--",
               "true")
    check(r.returncode == EXIT["usage"] and "one cgroup name" in r.stderr, r.stderr)
    r = perfex("record", "-o", tmpfile("x.data"), "-a", "-e", "cpu-clock",
               "-G", "x,y", "--", "true")
    check(r.returncode == EXIT["usage"] and "names more cgroups than there are "
          "events before it ('x,y')" in r.stderr, r.stderr)
    r = perfex("record", "-o", tmpfile("x.data"), "-a", "-e",
               "{cpu-clock,task-clock}", "-G", "x,y", "--", "true")
    check(r.returncode == EXIT["usage"] and "group '{cpu-clock,task-clock}' "
          "different cgroups" in r.stderr and "hint:" in r.stderr, r.stderr)
    r = perfex("record", "-o", tmpfile("x.data"), "-a", "-G",
               "perfctr-cli-no-such", "-e", "cpu-clock", "--", "true")
    check(r.returncode == EXIT["target"], (r.returncode, r.stderr))
    if "no cgroup v2 file system" not in r.stderr:
        check("perfex: cannot sample cgroup 'perfctr-cli-no-such': "
              "no such cgroup" in r.stderr, r.stderr)
    check("hint:" in r.stderr, r.stderr)


try:
    run_cases()
finally:
    cleanup()
