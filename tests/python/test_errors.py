# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfctr's exceptions: each carries errno, perfctr's message and its
cure.  An unknown event says "did you mean", a syntax error where; a
user the kernel refuses gets a PermissionError naming
perf_event_paranoid and the access broker perfctrd; a target that does
not exist is a TargetError; all are perfctr.Error."""
import errno
import os
import subprocess
import sys

from pyharness import (PPID, case, check, need_tracepoints, perfctr,
                       python_env, require_root, run_cases, skip)


@case
def unknown_event_says_did_you_mean():
    need_tracepoints()
    for spec, near in (("syscalls:sys_enter_getppidd", PPID),
                       ("page-fault", "page-faults")):
        try:
            perfctr.count(spec)
        except perfctr.EventError as e:
            check(e.errno == errno.ENOENT, e.errno)
            check(isinstance(e, perfctr.Error) and isinstance(e, ValueError))
            check("did you mean '%s'?" % near in e.hint, e.hint)
            check(str(e) == "%s\nhint: %s" % (e.message, e.hint), str(e))
            check(e.message.startswith("unknown "), e.message)
        else:
            check(False, "%s was accepted" % spec)


@case
def syntax_error_says_where():
    try:
        perfctr.count("task-clock,{page-faults")
    except perfctr.EventError as e:
        check(e.errno == errno.EINVAL and e.column is not None, (e.errno,
                                                                  e.column))
        check(0 < e.column <= len("task-clock,{page-faults"), e.column)
    else:
        check(False, "the open group was accepted")


@case
def errors_are_picklable_and_named_in_the_package():
    import pickle
    e = perfctr.PermissionError("cannot open event 'x': Permission denied",
                                errno.EACCES, "run as root")
    f = pickle.loads(pickle.dumps(e))
    check(type(f) is perfctr.PermissionError and f.hint == "run as root", f)
    check(isinstance(f, PermissionError) and f.errno == errno.EACCES, f)
    check(perfctr.Error.__module__ == "perfctr", perfctr.Error.__module__)


@case
def targets_that_do_not_exist():
    try:
        perfctr.Target.process(2 ** 22 + 12345)
    except perfctr.TargetError as e:
        check(e.errno == errno.ESRCH, e.errno)
    else:
        check(False, "no error for a missing process")
    try:
        perfctr.run(["no-such-command-here"], "task-clock")
    except perfctr.TargetError as e:
        check(e.errno == errno.ENOENT and "command not found" in str(e)
              and "PATH" in e.hint, str(e))
    else:
        check(False, "no error for a missing command")


@case
def refused_user_gets_paranoid_and_perfctrd():
    require_root()
    level = perfctr.info()["paranoid"]
    if level < 2:
        skip("perf_event_paranoid is %d: the kernel lets users count the "
             "kernel" % level)
    code = ("import perfctr, sys\n"
            "try:\n"
            "    perfctr.count('cpu-clock:k').__enter__()\n"
            "except perfctr.PermissionError as e:\n"
            "    print(e.errno); print(e)\n"
            "    sys.exit(3 if isinstance(e, PermissionError) else 4)\n")
    env = python_env()
    env.pop("PERFCTR_NO_BROKER", None)
    env["PERFCTR_BROKER_SOCKET"] = "/nonexistent/perfctrd.sock"

    def as_nobody():
        os.setgid(65534)
        os.setuid(65534)

    r = subprocess.run([sys.executable, "-c", code], env=env, cwd="/",
                       preexec_fn=as_nobody, capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 3, (r.returncode, r.stdout, r.stderr))
    lines = r.stdout.splitlines()
    check(int(lines[0]) in (errno.EACCES, errno.EPERM), lines)
    check(lines[1] == "cannot open event 'cpu-clock:k': %s"
          % os.strerror(int(lines[0])), lines)
    text = r.stdout
    check("perf_event_paranoid is %d" % level in text, text)
    check("perfctrd" in text, text)


run_cases()
