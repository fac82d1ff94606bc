# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""examples/tp-fields: a recording's tracepoint samples taken apart with
the library's tracepoint formats (perfctr_tpformat(3)).  N getppid calls
are exactly N sys_enter_getppid samples of the workload's thread; its
exec is one sched_process_exec, whose filename is a __data_loc
string."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from pctest import (BUILD, case, check, perfex, require_root,  # noqa: E402
                    require_tracefs, run_cases, skip, work)

EXAMPLE = os.path.join(BUILD, "examples", "tp-fields")
N = 25
# The workload without the leak checker's helper task, whose getppid
# calls would be recorded too in a sanitized build.
ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")


def example():
    if not os.access(EXAMPLE, os.X_OK):
        skip("examples/tp-fields is not built (make tests)")
    return EXAMPLE


def tmp(name):
    return os.path.join(os.environ.get("TMPDIR", "/tmp"),
                        "test-tp-fields-%d-%s" % (os.getpid(), name))


@case
def every_field_of_every_sample():
    require_root()
    require_tracefs()
    path = tmp("exec.data")
    r = perfex("record", "-q", "-o", path, "-e",
               "syscalls:sys_enter_getppid,sched:sched_process_exec",
               "--", work(), "getppid", str(N), env=ENV)
    check(r.returncode == 0, r)
    try:
        out = subprocess.run([example(), path], capture_output=True,
                             text=True, env=ENV)
    finally:
        os.unlink(path)
    check(out.returncode == 0, out)
    lines = [line.split(" ") for line in out.stdout.splitlines()]
    execs = [f for f in lines if f[0] == "sched:sched_process_exec"]
    calls = [f for f in lines if f[0] == "syscalls:sys_enter_getppid"]
    check(len(execs) == 1 and len(calls) == N, out.stdout)
    tid = execs[0][2]
    check(execs[0][1:] == ["pcwork", tid, 'filename="%s"' % work(),
                           "pid=" + tid, "old_pid=" + tid], execs[0])
    check(all(f[1:] == ["pcwork", tid, "__syscall_nr=110"] for f in calls),
          calls)


@case
def a_file_without_tracepoints_is_refused():
    path = tmp("clock.data")
    r = perfex("record", "-q", "-o", path, "-e", "task-clock", "--",
               work(), "getppid", "1", env=ENV)
    if r.returncode != 0:
        skip("cannot record task-clock here: %s" % r.stderr.strip())
    try:
        out = subprocess.run([example(), path], capture_output=True,
                             text=True)
    finally:
        os.unlink(path)
    check(out.returncode == 1, out)
    check(out.stderr == "tp-fields: no tracepoint formats in '%s': "
          "No such file or directory\n" % path, out.stderr)


run_cases()
