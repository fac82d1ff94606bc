# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex script -s: perf's own Python scripts, taken from the installed
linux-perf (or the linux-source tarball), print what perf script -s
prints on the same recording, perfex's and perf's; -g python."""
import os
import subprocess
import sys
import tarfile

from pctest import (BUILD, EXIT, case, check, perfex, require_root,
                    require_tracefs, run_cases, skip, work)
import sampletools

PERF = sampletools.PERF
INSTALLED = "/usr/lib/perf-core/scripts/python"
TARBALL = "/usr/src/linux-source-6.12.tar.xz"
ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
SYSCALLS = "raw_syscalls:sys_enter,raw_syscalls:sys_exit"


def need():
    if not os.path.exists(os.path.join(BUILD, "python", "perfctr", "script")):
        skip("the perfctr module is not built (make python)")
    if not os.access(PERF, os.X_OK):
        skip("perf is not installed (linux-perf)")
    require_root()
    require_tracefs()


def script(name):
    """perf's script NAME: the installed one, else from the tarball."""
    path = os.path.join(INSTALLED, name)
    if os.path.exists(path):
        return path
    if not os.path.exists(TARBALL):
        skip("perf's scripts are neither installed (linux-perf) nor in %s"
             % TARBALL)
    out = sampletools.tmpfile(name)
    if not os.path.exists(out):
        with tarfile.open(TARBALL) as t:
            member = next(m for m in t.getmembers()
                          if m.name.endswith("tools/perf/scripts/python/" + name))
            with open(out, "wb") as f:
                f.write(t.extractfile(member).read())
    return out


_files = {}


def recording(tool, events, *extra, calls=20000):
    key = (tool, events, extra, calls)
    if key not in _files:
        path = sampletools.tmpfile("sp-%d.data" % len(_files))
        argv = ([PERF, "record", "-q"] if tool == "perf"
                else [os.path.join(BUILD, "perfex"), "record", "-q"])
        r = subprocess.run(argv + ["-o", path, "-e", events] + list(extra) +
                           ["--", work(), "getppid", str(calls)],
                           capture_output=True, text=True, env=ENV)
        check(r.returncode == 0, r)
        _files[key] = path
    return _files[key]


def perf_output(path, name, *args):
    r = subprocess.run([PERF, "script", "-i", path, "-s", script(name)] +
                       list(args), capture_output=True, text=True)
    check(r.returncode == 0, r)
    lines = r.stdout.splitlines()
    # perf's Util prints how to install the audit module on stdout when it
    # is missing; perfex's says it on stderr.
    if lines and lines[0].startswith("Install the audit-libs-python"):
        end = lines.index("") if "" in lines else 0
        lines = lines[end + 1:]
    return lines


def perfex_output(path, name, *args):
    r = perfex("script", "-i", path, "-s", script(name), *args)
    check(r.returncode == 0, r)
    return r.stdout.splitlines()


def same(path, name, *args, keep=None):
    mine, theirs = perfex_output(path, name, *args), perf_output(path, name,
                                                                 *args)
    if keep:
        mine = [l for l in mine if keep(l)]
        theirs = [l for l in theirs if keep(l)]
    # The scripts print dicts in their iteration order: compared as sets
    # of lines with their counts.
    check(sorted(mine) == sorted(theirs),
          "%s on %s:\nperfex:\n%s\nperf:\n%s" % (name, path, "\n".join(mine),
                                                 "\n".join(theirs)))
    check(len(mine) >= 1, mine)


@case
def syscall_counts():
    need()
    for tool in ("perfex", "perf"):
        same(recording(tool, SYSCALLS), "syscall-counts.py")
        same(recording(tool, SYSCALLS), "syscall-counts.py", "pcwork")


@case
def syscall_counts_by_pid():
    need()
    for tool in ("perfex", "perf"):
        same(recording(tool, SYSCALLS), "syscall-counts-by-pid.py")


@case
def failed_syscalls_by_pid():
    need()
    for tool in ("perfex", "perf"):
        same(recording(tool, SYSCALLS), "failed-syscalls-by-pid.py")


@case
def stackcollapse():
    need()
    # User-space call chains, and only the stacks through the workload's
    # main: the two name aliases differently (the kernel's __x64_sys_ and
    # __ia32_sys_, ld.so's _start and _dl_start_user at one address).
    for tool in ("perfex", "perf"):
        path = recording(tool, "task-clock:u", "-g", "-c", "100000")
        for args in ((), ("--", "--include-pid")):
            same(path, "stackcollapse.py", *args,
                 keep=lambda l: ";main;" in l)


@case
def handler_arguments_and_exact_counts():
    need()
    path = recording("perfex", "syscalls:sys_enter_getppid", calls=200)
    s = sampletools.tmpfile("handlers.py")
    with open(s, "w") as f:
        f.write("""
import sys
n = 0
seen = set()
def trace_begin():
    print("begin", sys.argv[1:])
def syscalls__sys_enter_getppid(event_name, context, common_cpu, common_secs,
        common_nsecs, common_pid, common_comm, common_callchain,
        __syscall_nr, perf_sample_dict):
    global n
    if common_comm == "pcwork":
        n += 1
        seen.add((event_name, __syscall_nr, perf_sample_dict["ev_name"],
                  perf_sample_dict["sample"]["pid"] == common_pid))
def trace_end():
    print("end", n, sorted(seen))
""")
    r = perfex("script", "-i", path, "-s", s, "a", "b")
    check(r.returncode == 0, r)
    check(r.stdout.splitlines() == [
        "begin ['a', 'b']",
        "end 200 [('syscalls__sys_enter_getppid', 110, "
        "'syscalls:sys_enter_getppid', True)]"], r.stdout)


@case
def gen_script_python():
    need()
    path = recording("perfex", "syscalls:sys_enter_getppid", calls=200)
    cwd = sampletools.tmpfile("gen")
    os.makedirs(cwd, exist_ok=True)
    for spelling in (["-g", "python"], ["--gen-script", "python"]):
        r = subprocess.run([os.path.join(BUILD, "perfex"), "script", "-i",
                            path] + spelling, cwd=cwd, capture_output=True,
                           text=True)
        check(r.returncode == 0, r)
        gen = os.path.join(cwd, "perf-script.py")
        with open(gen) as f:
            text = f.read()
        check("def syscalls__sys_enter_getppid(" in text, text)
        r = perfex("script", "-i", path, "-s", gen)
        check(r.returncode == 0 and r.stdout.count("__syscall_nr=110") >= 200,
              r)
        os.unlink(gen)
    r = perfex("script", "--gen-script", "perl")
    check(r.returncode == EXIT["usage"], r)


@case
def errors():
    need()
    r = perfex("script", "-i", sampletools.tmpfile("missing.data"), "-s",
               script("syscall-counts.py"))
    check(r.returncode == EXIT["io"] and "missing.data" in r.stderr, r)
    path = recording("perfex", "syscalls:sys_enter_getppid")
    r = perfex("script", "-i", path, "-s", sampletools.tmpfile("nope.py"))
    check(r.returncode == EXIT["usage"] and "nope.py" in r.stderr, r)
    env = dict(os.environ, PERFEX_PYTHON="/nonexistent/python3")
    r = perfex("script", "-i", path, "-s", script("syscall-counts.py"),
               env=env)
    check(r.returncode == EXIT["nocmd"] and "PERFEX_PYTHON" in r.stderr, r)


if __name__ == "__main__":
    try:
        run_cases()
    finally:
        sampletools.cleanup()
