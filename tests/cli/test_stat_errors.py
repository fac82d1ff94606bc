# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex counting mode: every failure of perfex's own gives its message
(git style: "perfex: ..." lowercase, a hint with the cure) and its exit
code (src/perfex/perfex.h, docs/perfex.1)."""
import os
import shutil
import stat
import subprocess
import tempfile

from pctest import case, check, perfex, require_root, run_cases, skip, work
from stathelp import PERF_EXIT, TP, need_tracepoint, run_as_nobody


def check_error(r, code, *needles):
    check(r.returncode == code, (r.returncode, code, r.stderr))
    first = r.stderr.splitlines()[0] if r.stderr else ""
    check(first.startswith("perfex: ") and not first[8:9].isupper(), r.stderr)
    check(not first.endswith("."), first)
    for n in needles:
        check(n in r.stderr, (n, r.stderr))


@case
def unknown_event_with_suggestion():
    r = perfex("-e", "cyclez", "--", "true")
    check_error(r, PERF_EXIT["event"], "unknown event 'cyclez'",
                "hint: did you mean 'cycles'?")
    r = perfex("-e", "task-clock,page-fualts", "--", "true")
    check_error(r, PERF_EXIT["event"], "page-fualts", "did you mean 'page-faults'")


@case
def syntax_error_points_at_the_column():
    r = perfex("-e", "{task-clock,page-faults", "--", "true")
    check_error(r, PERF_EXIT["event"])
    lines = r.stderr.splitlines()
    carets = [l for l in lines if l.strip() == "^"]
    check(carets, r.stderr)


@case
def command_not_found():
    r = perfex("--", "no-such-command-here")
    check_error(r, PERF_EXIT["nocmd"], "cannot run 'no-such-command-here'",
                "command not found")
    r = perfex("--", "./no/such/file")
    check_error(r, PERF_EXIT["nocmd"], "command not found")


@case
def command_not_executable():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "script")
        with open(path, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(path, 0o644)
        if os.geteuid() == 0:
            # root may execute a file with no x bit at all?  No: execve needs
            # one x bit even for root, so 0644 fails for everyone.
            pass
        r = perfex("--", path)
        check_error(r, PERF_EXIT["noexec"], "cannot run '%s'" % path,
                    "chmod +x")
        r = perfex("--", d)
        check_error(r, PERF_EXIT["noexec"], "cannot run")


@case
def permission_denied_names_the_sysctl():
    with open("/proc/sys/kernel/perf_event_paranoid") as f:
        level = int(f.read())
    if level <= 0:
        skip("perf_event_paranoid is %d: everything is allowed" % level)
    r = run_as_nobody("-a", "-e", "task-clock", "--", "/bin/true")
    check_error(r, PERF_EXIT["perm"], "cannot count on CPUs",
                "perf_event_paranoid is %d" % level,
                "sysctl -w kernel.perf_event_paranoid=0")
    # Another user's process: ptrace rules or the level.
    r = run_as_nobody("-p", "1", "-e", "task-clock")
    check_error(r, PERF_EXIT["perm"], "cannot attach to the process", "hint:")


@case
def tracefs_unreadable_or_not_mounted():
    need_tracepoint()
    # A non-root user cannot read tracefs.
    r = run_as_nobody("-e", TP, "--", "/bin/true")
    check_error(r, PERF_EXIT["tracefs"], "hint:", "root")
    # Not mounted: in a mount namespace of our own, so the machine's
    # tracefs stays mounted for everyone else.
    if not shutil.which("unshare"):
        skip("unshare is not installed (util-linux)")
    from pctest import PERFEX
    script = ("for m in /sys/kernel/tracing /sys/kernel/debug/tracing "
              "/sys/kernel/debug; do umount $m 2>/dev/null; done; "
              "exec \"$0\" -e %s -- /bin/true" % TP)
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh",
                        "-c", script, PERFEX], capture_output=True, text=True,
                       timeout=60)
    if "unshare failed" in r.stderr or r.returncode == 1 and "unshare" in r.stderr:
        skip("cannot make a mount namespace: " + r.stderr.strip()[:200])
    check_error(r, PERF_EXIT["tracefs"], "tracefs",
                "mount -t tracefs nodev /sys/kernel/tracing")


@case
def refusals_name_the_broker_where_none_answers():
    """A user the kernel refuses (tracefs unreadable, CPU-wide counting)
    whom no access broker serves is told of perfctrd, the administrator's
    cure, by stat and by record; not when the user turned the broker off."""
    need_tracepoint()
    nowhere = tempfile.mkdtemp(prefix="perfex-nobroker-")
    os.chmod(nowhere, 0o755)
    saved = dict(os.environ)
    # No socket there: no broker answers, whatever runs on this machine.
    os.environ["PERFCTR_BROKER_SOCKET"] = os.path.join(nowhere, "none.sock")
    try:
        r = run_as_nobody("-e", TP, "--", "/bin/true")
        check_error(r, PERF_EXIT["tracefs"], "hint: without root: an administrator "
                    "runs perfctrd, the access broker")
        r = run_as_nobody("record", "-o", os.path.join(nowhere, "x.data"),
                          "-e", TP, "--", "/bin/true")
        check_error(r, PERF_EXIT["tracefs"], "perfctrd(8)")
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            level = int(f.read())
        if level > 0:
            r = run_as_nobody("-a", "-e", "task-clock", "--", "/bin/true")
            check_error(r, PERF_EXIT["perm"], "cannot count on CPUs",
                        "perf_event_paranoid is %d" % level, "perfctrd(8)")
        os.environ["PERFCTR_NO_BROKER"] = "1"
        r = run_as_nobody("-e", TP, "--", "/bin/true")
        check_error(r, PERF_EXIT["tracefs"], "hint:")
        check("perfctrd" not in r.stderr, r.stderr)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(nowhere, ignore_errors=True)


@case
def no_such_targets():
    pid = 4194303  # above the default pid_max; never a live process
    r = perfex("-p", str(pid), "-e", "task-clock")
    check_error(r, PERF_EXIT["target"], "cannot attach to process %d" % pid,
                "no such process")
    r = perfex("-t", str(pid), "-e", "task-clock")
    check_error(r, PERF_EXIT["target"], "thread %d" % pid)
    r = perfex("-C", "4095", "-e", "task-clock", "--", "true")
    check_error(r, PERF_EXIT["target"], "not online")
    r = perfex("-C", "1-x", "-e", "task-clock", "--", "true")
    check_error(r, PERF_EXIT["usage"], "bad CPU list '1-x'")


@case
def usage_errors():
    rows = [
        (("--bogus", "--", "true"), "unknown option '--bogus'"),
        (("-Z", "--", "true"), "unknown option '-Z'"),
        (("-e",), "needs an argument"),
        (("-r", "0", "--", "true"), "option '-r' expects a count of 1 or more (not '0')"),
        (("-r", "x", "--", "true"), "option '-r' expects a count"),
        (("-I", "abc", "--", "true"), "option '-I' expects milliseconds"),
        (("-I", "5", "--", "true"), "option '-I' expects milliseconds, at least 10 (not '5')"),
        (("-p", "-3"), "option '-p' expects a process id (not '-3')"),
        (("-t", "0"), "option '-t' expects a thread id"),
        (("-x", "", "--", "true"), "option '-x' needs a separator"),
        (("-A", "--", "true"), "option '-A' needs -a or -C"),
        (("--per-thread", "-a"), "option '--per-thread' needs a command to run or -p or -t"),
        (("-r", "2", "-a"), "option '-r' needs a command"),
        (("-r", "2", "-I", "100", "--", "true"), "cannot be combined"),
        (("-a", "-p", "1"), "choose one target"),
        (("-a", "-t", "1"), "choose one target"),
        (("--filter", "common_pid == 1", "--", "true"),
         "option '--filter' needs an -e before it"),
        ((), "no command to run"),
        (("-e", "task-clock"), "no command to run"),
    ]
    for args, needle in rows:
        r = perfex(*args)
        check_error(r, PERF_EXIT["usage"], needle, "hint:")


@case
def output_file_errors():
    r = perfex("-o", "/nonexistent/dir/out", "--", "true")
    check_error(r, PERF_EXIT["io"], "cannot open '/nonexistent/dir/out'")
    if os.path.exists("/dev/full"):
        r = perfex("-o", "/dev/full", "-e", "task-clock", "--", "true")
        check_error(r, PERF_EXIT["io"], "cannot write")


@case
def bad_filter():
    need_tracepoint()
    r = perfex("-e", TP, "--filter", "common_pid ==", "--", work(), "getppid", "1")
    check(r.returncode == PERF_EXIT["event"], r)
    check(r.stderr.startswith("perfex: ") and "filter" in r.stderr, r.stderr)


@case
def kill_child_signal():
    """--kill-child takes a signal name or number (the command's fate when
    perfex is killed is tested in test_record_kill.py, for stat too)."""
    r = perfex("--kill-child=NOPE", "--", "true")
    check_error(r, PERF_EXIT["usage"], "expects a signal name or number",
                "hint:")
    r = perfex("-o", "/dev/null", "-e", "task-clock", "--kill-child=TERM",
               "--", "true")
    check(r.returncode == 0, r.stderr)


run_cases()
