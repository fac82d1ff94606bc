# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""A recording that ends by SIGKILL keeps its events' names and the
tracepoint formats (written at the start of the data section, before the
first sample), so that perfex script names and decodes every sample and
perfex report names the event; perf reads finished files as before.  And
what becomes of the command when perfex is killed: it runs on, unless
--kill-child asks for it to get a signal."""
import json
import os
import re
import signal
import subprocess
import time

from pctest import (PERFEX, case, check, perfex, require_root,
                    require_tracefs, run_cases, work)
from sampletools import PERF, kill_recording, progress_of, require_perf, \
    tmpfile
from stathelp import PERF_EXIT, getppid_baseline

ENTER = "syscalls:sys_enter_getppid"
EXIT = "syscalls:sys_exit_getppid"
RECOVERED = re.compile(r"unfinished .*recovered (\d+) records")
SAMPLE = re.compile(r"^\s*\S+\s+\d+\s+\[\d+\]\s+[\d.]+:\s+(\S+):(.*)$")


def killed_recording(out, calls, target):
    """Record both getppid tracepoints, -c 1, of CALLS calls, and SIGKILL
    perfex once TARGET calls are done (the workload stopped first).
    Returns perfex's pid: the workload's parent, whose pid each recorded
    sys_exit_getppid returned."""
    progress = tmpfile("kill-progress")

    def reached():
        st = progress_of(progress)
        return st and st[0] >= target
    # A pass over the rings is flushed every 100 ms at most: settled.
    return kill_recording([PERFEX, "record", "-q", "-o", out, "-e",
                           ENTER + "," + EXIT, "-c", "1", "--", work(),
                           "counted", progress, str(calls)],
                          reached, fresh=(out, progress), stop=True,
                          settle=0.3)


@case
def killed_recording_names_and_decodes_its_events():
    """SIGKILL in the middle of 2M getppid calls: the file is unfinished,
    and every sample perfex script prints names its event, one of the two
    recorded; each sys_exit_getppid decodes its field: the value getppid
    returned, perfex's pid, in the format's "0x%lx"; perfex report names
    the two events."""
    require_root()
    require_tracefs()
    out = tmpfile("killed-names.data")
    ppid = killed_recording(out, 2000000, 20000)
    r = perfex("script", "-i", out, "-G")
    check(r.returncode == 0, r.stderr)
    check(RECOVERED.search(r.stderr), "no recovery warning: " + r.stderr)
    counts = {ENTER: 0, EXIT: 0}
    want = " 0x%x" % ppid
    for line in r.stdout.splitlines():
        m = SAMPLE.match(line)
        check(m, "not a sample line: %r" % line)
        name, payload = m.group(1), m.group(2)
        check(name in counts, "sample of an unnamed event: %r" % line)
        counts[name] += 1
        if name == EXIT:
            check(payload == want, "exit payload %r, want %r" %
                  (payload, want))
    # How many: what reached the file before the kill, not all of the
    # calls (test_record_safety bounds that); here every sample counts.
    check(counts[ENTER] > 0 and counts[EXIT] > 0, counts)
    rep = perfex("report", "-i", out, "-j")
    check(rep.returncode == 0, rep.stderr)
    names = [e["event"] for e in json.loads(rep.stdout)["events"]]
    check(names == [ENTER, EXIT], names)
    text = perfex("report", "-i", out)
    check("of event '%s'" % ENTER in text.stdout, text.stdout[:400])


@case
def perf_reads_finished_tracepoint_files_as_before():
    """The names at the start of the data section are left out of a
    finished file's data section: perf script reads it and decodes the
    same samples as perfex script (perf 6.1 fails on tracing data read
    twice)."""
    require_root()
    require_tracefs()
    require_perf()
    out = tmpfile("finished-names.data")
    r = perfex("record", "-q", "-o", out, "-e", ENTER + "," + EXIT, "-c",
               "1", "--", work(), "getppid", "10")
    check(r.returncode == 0, r.stderr)
    theirs = subprocess.run([PERF, "script", "-i", out], capture_output=True,
                            text=True, timeout=120)
    check(theirs.returncode == 0, theirs.stderr)
    ours = perfex("script", "-i", out, "-G")
    check(ours.returncode == 0, ours.stderr)
    perf_events = [SAMPLE.match(l).group(1)
                   for l in theirs.stdout.splitlines() if l.strip()]
    our_events = [SAMPLE.match(l).group(1)
                  for l in ours.stdout.splitlines() if l.strip()]
    # Ten calls, and under a sanitizer its leak checker's at exit.
    calls = 10 + getppid_baseline()
    check(perf_events == [ENTER, EXIT] * calls, perf_events)
    check(our_events == perf_events, (our_events, perf_events))
    rep = subprocess.run([PERF, "report", "-i", out, "--stdio"],
                         capture_output=True, text=True, timeout=120)
    check(rep.returncode == 0, rep.stderr)
    check("of event '%s'" % ENTER in rep.stdout, rep.stdout[:400])


def command_of(perfex_pid):
    """The command perfex started, once it has exec'ed sleep."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with open("/proc/%d/task/%d/children" %
                      (perfex_pid, perfex_pid)) as f:
                kids = [int(k) for k in f.read().split()]
            for k in kids:
                with open("/proc/%d/comm" % k) as f:
                    if f.read().strip() == "sleep":
                        return k
        except (FileNotFoundError, ProcessLookupError):
            pass
        time.sleep(0.01)
    check(False, "perfex did not start its command")


def alive(pid):
    """True while PID runs (a zombie has ended)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def kill_perfex(args):
    """Start perfex ARGS -- sleep 60, SIGKILL perfex once sleep runs;
    returns whether the command still runs 2 s later (and ends it)."""
    p = subprocess.Popen([PERFEX] + args + ["--", "sleep", "60"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cmd = command_of(p.pid)
    p.kill()
    p.wait()
    deadline = time.monotonic() + 2
    while alive(cmd) and time.monotonic() < deadline:
        time.sleep(0.01)
    lives = alive(cmd)
    if lives:
        os.kill(cmd, signal.SIGKILL)
    return lives


@case
def command_runs_on_without_kill_child():
    """Without --kill-child the command outlives a killed perfex, record
    and stat alike (perfex-record(1) says so)."""
    out = tmpfile("kill-child.data")
    check(kill_perfex(["record", "-q", "-o", out, "-e", "task-clock"]),
          "record's command died with perfex")
    check(kill_perfex(["stat", "-o", "/dev/null", "-e", "task-clock"]),
          "stat's command died with perfex")


@case
def kill_child_ends_the_command_with_perfex():
    """--kill-child (SIGKILL), --kill-child=TERM and =15: the command
    ends when perfex is killed, for record and stat."""
    out = tmpfile("kill-child.data")
    for opt in ("--kill-child", "--kill-child=TERM", "--kill-child=SIGTERM",
                "--kill-child=15"):
        check(not kill_perfex(["record", "-q", "-o", out, "-e",
                               "task-clock", opt]),
              "record %s: the command outlived perfex" % opt)
        check(not kill_perfex(["stat", "-o", "/dev/null", "-e",
                               "task-clock", opt]),
              "stat %s: the command outlived perfex" % opt)


@case
def kill_child_rejects_what_is_no_signal():
    """A name or number that is no signal is a usage error."""
    for bad in ("FOO", "0", "-1", "999", ""):
        r = perfex("--kill-child=" + bad, "--", "true")
        check(r.returncode == PERF_EXIT["usage"], (bad, r.returncode, r.stderr))
        check("expects a signal name or number" in r.stderr, r.stderr)
    # A perfex that ends normally leaves nothing to kill: the exit is the
    # command's.
    r = perfex("record", "-q", "-o", tmpfile("kill-child-ok.data"), "-e",
               "task-clock", "--kill-child", "--", "true")
    check(r.returncode == 0, r.stderr)


if __name__ == "__main__":
    run_cases()
