#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex script is a drop-in for perf script: for files written by perfex
record and by perf record, both print the same lines, with the default
fields and with -F sets.  The differences allowed are listed here with
their reason.  Also: perfex script's output folded to FlameGraph's stack
format equals perfex report --folded."""
import collections
import json
import os
import re
import subprocess

from pctest import (EXIT, PERFEX, case, check, require_root, require_tracefs,
                    run_cases, skip, work)
from sampletools import PERF, TP, both_files, cleanup, record, tmpfile

# In sanitizer builds LeakSanitizer checks the workload at exit from a
# helper task of its own, which a cpu-clock recording may sample; perf
# 6.1 prints such a task's samples without their call chains (it has no
# maps for it) where perfex prints them whole.  These comparisons are of
# the workload: it runs without the leak checker.
os.environ["ASAN_OPTIONS"] = ":".join(
    filter(None, [os.environ.get("ASAN_OPTIONS"), "detect_leaks=0"]))

# Allowed differences, each with its reason:
# - Symbol names outside the workload's own binary: where a DSO has several
#   names for one address (libc's aliases, a debug-info file's local
#   names), the .plt.got stubs perf names name@plt (those of .plt and
#   .plt.sec are named the same by both) and symbols of size 0 perf
#   stretches to the next one (ld.so's _dl_start_user), perf names
#   frames its own way; perfex names them as perfex report does.  Lines
#   must then agree in everything but the symbol.
# - Tracepoint payloads (the trace field) are printed by libtraceevent
#   from the formats in the file, as perf prints them; a perfex built
#   without libtraceevent prints none (tracepoint_payloads skips then).
# - With -a, only the workload's samples are compared: perf and perfex
#   disagree on a few samples of other processes, which come and go while
#   the machine is shared.
# - --header: perf's lines on the file's layout (header version, data
#   offset and size, feature offset) are left out; the reader does not
#   expose them.
# - A sample taken in execve after the exec's COMM record: its user frames
#   are still the old program's; perf keeps a process's maps across an
#   exec and names them there, perfex's reader drops them at the exec and
#   shows "[unknown] ([unknown])".
SANITIZER_CALLS = 2
CHAIN = re.compile(r"^(\t *[0-9a-f]+) (.*?)(\+0x[0-9a-f]+)? (\([^()]*\))$")
SAMPLE = re.compile(r"^(.*: +[0-9a-f]+) (.*?)(\+0x[0-9a-f]+)? (\([^()]*\))$")


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, (cmd, r.stderr[-1000:]))
    return r.stdout.splitlines()


def masked(line):
    """The line with its symbol name (and offset) left out, and whether it
    is a frame of the workload, whose names must agree."""
    for pat in (CHAIN, SAMPLE):
        m = pat.match(line)
        if m:
            return m.group(1) + " SYM " + m.group(4), "pcwork" in m.group(4)
    return line, True


# A C++ name's parameter list, before its offset or its DSO.
CXX_PARAMS = re.compile(r"\((?:[^()]|\([^()]*\))*\)(?: const)?(?=(?:\+0x[0-9a-f]+)? \()")
UNMAPPED = re.compile(r"^\t *[0-9a-f]+ \[unknown\] \(\[unknown\]\)$")


def workload_only(lines):
    """The samples of the workload and their call chains."""
    out, keep = [], False
    for line in lines:
        if line and not line.startswith("\t"):
            keep = line.split()[0] == "pcwork"
        if keep:
            out.append(line)
    return out


def same_as_perf(path, *args, other_processes=False):
    ours = run([PERFEX, "script", "-i", path, *args])
    theirs = run([PERF, "script", "-i", path, *args])
    if other_processes:
        ours, theirs = workload_only(ours), workload_only(theirs)
    check(len(ours) == len(theirs) and len(ours) > 0,
          (args, len(ours), len(theirs), ours[:3], theirs[:3]))
    differ = 0
    for a, b in zip(ours, theirs):
        # perf's C++ names lack their parameters (a listed difference,
        # systematic in a sanitizer runtime, not an alias).
        if a == b or CXX_PARAMS.sub("", a) == b:
            continue
        differ += 1
        if UNMAPPED.match(a) and "pcwork" not in b:
            continue
        ma, own = masked(a)
        mb, _ = masked(b)
        check(ma == mb and not own, (args, a, b))
    # Symbol aliases are the exception, not the rule.
    check(differ * 5 <= len(ours), (args, differ, len(ours)))
    return ours


FIELD_SETS = [
    [],
    ["-G"],
    ["-F", "comm,tid,time,event,ip,sym,dso"],
    ["-F", "+pid,-period"],
    ["-F", "-cpu,-symoff"],
    ["-F", "comm,pid,tid,time,period,event,ip,sym,symoff,dso"],
]


def spin(ms="300"):
    return ["--", work(), "spin", ms]


@case
def cpu_clock_with_callchains():
    for path in both_files("cc-g", "-g", "-e", "cpu-clock", "-F", "999",
                           *spin()):
        for fs in FIELD_SETS:
            lines = same_as_perf(path, *fs)
            if not fs:
                check(any(l.startswith("\t") for l in lines), lines[:5])
                check("" in lines)
        lines = run([PERFEX, "script", "-i", path,
                     "--no-callchain"])
        check(lines == run([PERF, "script", "-i", path, "-G"]) or
              all(not l.startswith("\t") and l for l in lines), lines[:3])


@case
def cpu_clock_without_callchains():
    for path in both_files("cc", "-e", "cpu-clock", "-F", "999", *spin()):
        for fs in FIELD_SETS:
            lines = same_as_perf(path, *fs)
            check(not any(l.startswith("\t") for l in lines), lines[:3])


@case
def all_cpus():
    for path in both_files("cc-a", "-a", "-g", "-e", "cpu-clock", "-F", "499",
                           *spin("200")):
        for fs in FIELD_SETS[:4]:
            same_as_perf(path, *fs, other_processes=True)


@case
def tracepoint_lines():
    require_tracefs()
    for path in both_files("tp", "-e", TP, "-c", "1", "--", work(),
                           "getppid", "50"):
        lines = same_as_perf(path)
        mine = [l for l in lines if l.endswith(TP + ": ")]
        # LeakSanitizer's exit (sanitizer builds) calls getppid twice.
        check(len(mine) - 50 in (0, SANITIZER_CALLS), (len(mine), lines[:3]))
        same_as_perf(path, "-F", "comm,tid,event")


@case
def threads_and_exec():
    require_tracefs()
    # A tracepoint with call chains shows them; the threads' samples, then
    # those of the program exec'd.
    for path in both_files("thr", "-g", "-e", TP, "-c", "1", "--", work(),
                           "threads", "4", "20", "exec", "getppid", "7"):
        lines = same_as_perf(path)
        same_as_perf(path, "-G")
        heads = [l for l in same_as_perf(path, "-G", "-F", "+pid")
                 if l.endswith(TP + ": ")]
        # Sanitizer builds: LeakSanitizer's exit task calls getppid too.
        pid = heads[0].split()[1].split("/")[0]
        heads = [l for l in heads if l.split()[1].split("/")[0] == pid]
        check(len(heads) == 87, len(heads))
        tids = collections.Counter(l.split()[1] for l in heads)
        check(sorted(tids.values()) == [7, 20, 20, 20, 20], tids)
        check(any(l.startswith("\t") for l in lines), lines[:3])


@case
def tracepoint_payloads():
    """The trace field: sys_exit_getppid's payload is the return value,
    the pid of the recorder (the workload's parent), the same each call."""
    require_tracefs()
    info = subprocess.run([PERFEX, "info", "-j"], capture_output=True,
                          text=True)
    if not json.loads(info.stdout)["libraries"].get("libtraceevent"):
        skip("perfex was built without libtraceevent")
    exit_tp = "syscalls:sys_exit_getppid"
    for path in both_files("tpx", "-e", TP, "-e", exit_tp, "-c", "1", "--",
                           work(), "getppid", "30"):
        lines = same_as_perf(path)
        exits = [l for l in lines if exit_tp + ": " in l]
        check(len(exits) >= 30, (len(exits), lines[:3]))
        # The workload's own thread (a sanitizer's leak checker calls
        # getppid from a task of its own, whose parent is the workload).
        mine = collections.Counter(l.split()[1] for l in exits
                                   if l.split()[0] == "pcwork")
        tid = mine.most_common(1)[0][0]
        ppid = {l.rsplit(": ", 1)[1] for l in exits
                if l.split()[0] == "pcwork" and l.split()[1] == tid}
        check(len(ppid) == 1 and re.match(r"^0x[0-9a-f]+$", ppid.pop()),
              (ppid, exits[:3]))
        same_as_perf(path, "-F", "comm,tid,event,trace")
        same_as_perf(path, "-F", "trace:cpu,event,trace")


@case
def side_band_events():
    """--show-task-events and --show-mmap-events: perf's PERF_RECORD_COMM,
    FORK, EXIT, MMAP and MMAP2 lines among the samples, in time order, for
    a shell that starts two children and a grandchild."""
    require_tracefs()
    w = work()
    # A sanitizer build's leak checker would fork helpers of its own.
    cmd = ["--", "sh", "-c", 'export ASAN_OPTIONS="${ASAN_OPTIONS:+'
           '$ASAN_OPTIONS:}detect_leaks=0"; %s getppid 3 & %s getppid 4; '
           "wait; sh -c '%s getppid 5; :'" % (w, w, w)]
    for path in both_files("side", "-e", TP, "-c", "1", *cmd):
        tasks = same_as_perf(path, "--show-task-events")
        forks = [l for l in tasks if "PERF_RECORD_FORK(" in l]
        exits = [l for l in tasks if "PERF_RECORD_EXIT(" in l]
        execs = [l for l in tasks if "PERF_RECORD_COMM exec: pcwork:" in l]
        # sh forks three, the inner sh one; all four exit (and the root).
        check(len(forks) == 4 and len(exits) >= 4 and len(execs) == 3,
              (forks, exits, execs))
        maps = same_as_perf(path, "--show-mmap-events")
        check(sum("PERF_RECORD_MMAP2" in l and "/pcwork" in l
                  for l in maps) == 3, maps[:10])
        same_as_perf(path, "--show-task-events", "--show-mmap-events",
                     "-F", "comm,pid,tid,time,event")


@case
def lost_events():
    """--show-lost-events: a one-page ring that cannot keep up loses
    samples; perf's PERF_RECORD_LOST lines say how many, where."""
    require_tracefs()
    for path in both_files("lost", "-m", "1", "-e", TP, "-c", "1", "--",
                           work(), "getppid", "200000"):
        lines = same_as_perf(path, "--show-lost-events", "-G")
        lost = [l for l in lines if "PERF_RECORD_LOST lost " in l]
        check(lost, "no PERF_RECORD_LOST in %s" % path)


# perf's lines about the file's layout, which the reader does not expose.
LAYOUT = ("# header version :", "# data offset    :", "# data size      :",
          "# feat offset    :")
# perf record stores in BPF_PROG_INFO and BPF_BTF every BPF program loaded
# on the machine when it wrote the file (other processes' programs: perfex
# serve's or a concurrent test's cgroup counters), and perf script prints
# them.  They are the machine's state at that moment, nothing about the
# recording, and come and go with what else runs; perfex script does not
# print them.  Every other line must be perf's exactly.
MACHINE = ("# bpf_prog_info ", "# \tsub_prog ", "# btf info of id ")


@case
def header_block():
    """--header: perf's header block, line for line but the layout."""
    require_tracefs()
    for path in both_files("hdr", "-e", TP, "-c", "1", "--", work(),
                           "getppid", "3"):
        ours = [l for l in run([PERFEX, "script", "-i", path, "--header"])
                if l.startswith("#")]
        theirs = [l for l in run([PERF, "script", "-i", path, "--header"])
                  if l.startswith("#") and not l.startswith(LAYOUT)
                  and not l.startswith(MACHINE)]
        check(ours == theirs, (path, set(ours) ^ set(theirs)))
        check(any(l.startswith("# event : name = " + TP) for l in ours), ours)
        check(any(l.startswith("# cmdline : ") for l in ours), ours)


def fold(lines):
    """perf script output folded as FlameGraph's stackcollapse takes it:
    one line per stack, "comm;outermost;...;innermost count"."""
    stacks = collections.Counter()
    comm, frames = None, []

    def flush():
        if comm is not None and frames:
            stacks[";".join([comm] + frames[::-1])] += 1

    for line in lines + [""]:
        if not line:
            flush()
            comm, frames = None, []
        elif line.startswith("\t"):
            m = re.match(r"^\t *[0-9a-f]+ (.*?)(\+0x[0-9a-f]+)? \((.*)\)$",
                         line)
            check(m, line)
            sym, dso = m.group(1), m.group(3)
            if sym == "[unknown]":
                sym = "[%s]" % dso.rsplit("/", 1)[-1].strip("[]")
            # stackcollapse-perf.pl --kernel marks kernel frames so
            if dso == "[kernel.kallsyms]":
                sym += "_[k]"
            frames.append(sym)
        else:
            comm = line.split()[0]
    return stacks


def folded_report(path):
    out = run([PERFEX, "report", "-i", path,
               "--folded"])
    stacks = collections.Counter()
    for line in out:
        stack, n = line.rsplit(" ", 1)
        stacks[stack] += int(n)
    return stacks


@case
def folded_script_equals_report_folded():
    require_root()
    path = tmpfile("fold.data")
    r = record(path, "-g", "-e", "cpu-clock", "-F", "999", *spin())
    check(r.returncode == 0, r.stderr)
    got = fold(run([PERFEX, "script", "-i", path]))
    want = folded_report(path)
    check(sum(got.values()) == sum(want.values()),
          (sum(got.values()), sum(want.values())))
    # The workload's own stacks must fold to the same lines.
    mine = {k: v for k, v in got.items() if "spin_loop" in k}
    theirs = {k: v for k, v in want.items() if "spin_loop" in k}
    check(mine and mine == theirs, (list(mine.items())[:3],
                                    list(theirs.items())[:3]))


@case
def unsupported_and_unrecorded_fields_are_refused():
    require_root()
    path = tmpfile("f.data")
    r = record(path, "-e", "cpu-clock", "-F", "999", *spin("50"))
    check(r.returncode == 0, r.stderr)
    exe = PERFEX
    r = subprocess.run([exe, "script", "-i", path, "-F", "srcline"],
                       capture_output=True, text=True)
    check(r.returncode == EXIT["usage"] and "'srcline'" in r.stderr and
          "does not print" in r.stderr and "hint: fields:" in r.stderr, r)
    r = subprocess.run([exe, "script", "-i", path, "-F", "bogus"],
                       capture_output=True, text=True)
    check(r.returncode == EXIT["usage"] and "unknown field 'bogus'" in r.stderr, r)
    r = subprocess.run([exe, "script", "-i", path, "-F", "comm,+tid"],
                       capture_output=True, text=True)
    check(r.returncode == EXIT["usage"] and "cannot mix" in r.stderr, r)
    r = subprocess.run([exe, "script", "-i", path, "-F", "hw:comm,trace"],
                       capture_output=True, text=True)
    check(r.returncode == 0, r)
    r = subprocess.run([exe, "script", "-i", path, "-F", "sw:comm,trace"],
                       capture_output=True, text=True)
    check(r.returncode == EXIT["usage"] and "do not record field 'trace'" in r.stderr, r)
    # perf script's options that perfex script does not offer are named.
    for opt in ("--header-only", "--show-switch-events", "--time=1,2"):
        r = subprocess.run([exe, "script", "-i", path, opt],
                           capture_output=True, text=True)
        check(r.returncode == EXIT["usage"] and "of perf script is not supported" in
              r.stderr and "'%s'" % opt.split("=")[0] in r.stderr, (opt, r))


try:
    run_cases()
finally:
    cleanup()
