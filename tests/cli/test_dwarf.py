# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""DWARF call graphs: a workload built here with -O2 -fomit-frame-pointer
(main -> top -> lib_mid in a shared library of its own -> hot through a
function pointer) recorded with --call-graph dwarf gives whole chains in
perfex report --folded, the same stacks and counts as perf script folded
by this test; a file perf recorded with --call-graph dwarf reads the same
way; a stack copy too small for the chain is counted as truncated."""
import collections
import json
import os
import re
import subprocess
import tempfile

from pctest import check, case, perfex, require_root, run_cases, skip
from sampletools import PERF, cleanup, perf_record, record, require_perf

LIB = r"""
long lib_mid(long (*fn)(long), long n)
{
	long r = fn(n);		/* a call through a pointer, not a tail call */

	return r ^ (n >> 1);
}
"""

# A fixed number of calls (6,000 are about 0.4 s of CPU), not a time: a
# loaded machine gives the workload less of the CPU in a given time, and
# cpu-clock samples its CPU time, so a timed run could make too few
# samples.
MAIN = r"""
#include <stdlib.h>

long lib_mid(long (*fn)(long), long n);

__attribute__((noinline)) static long hot(long n)
{
	volatile long s = 0;

	for (long i = 0; i < n; i++)
		s += i * i;
	return s;
}

__attribute__((noinline)) long top(long n)
{
	return lib_mid(hot, n) + 1;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 4000, sum = 0;

	for (long c = 0; c < calls; c++)
		sum += top(100000);
	return sum == 42;
}
"""

# A workload that spends its time in the vDSO (clock_gettime): a fixed
# number of calls, so that a loaded machine gives it as many samples of
# CPU time.
VDSO_MAIN = r"""
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) static long tick(long n)
{
	struct timespec t;
	long s = 0;

	for (long i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		s += t.tv_nsec & 1;
	}
	return s;
}

int main(int argc, char **argv)
{
	return tick(argc > 1 ? atol(argv[1]) : 1000000) == 42;
}
"""

# The workload's own functions: the part of each chain that the unwinding
# decides (names of libc's and the kernel's frames are the symbolisers').
OWN = ("main", "top", "lib_mid", "hot")
FULL = "main;top;lib_mid;hot"

_dir = tempfile.mkdtemp(prefix="pc-dwarf-")


def workload():
    exe = os.path.join(_dir, "dwwork")
    if os.path.exists(exe):
        return exe
    flags = ["-O2", "-fomit-frame-pointer", "-g"]
    for name, text in (("lib.c", LIB), ("main.c", MAIN)):
        with open(os.path.join(_dir, name), "w") as f:
            f.write(text)
    lib = os.path.join(_dir, "libdwlev.so")
    for cmd in (["cc", *flags, "-shared", "-fPIC", "-o", lib,
                 os.path.join(_dir, "lib.c")],
                ["cc", *flags, "-o", exe, os.path.join(_dir, "main.c"),
                 "-L" + _dir, "-ldwlev", "-Wl,-rpath," + _dir]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            skip("cannot build the workload: " + r.stderr[-500:])
    # No frame pointer to follow: the chains can only come from CFI.
    d = subprocess.run(["objdump", "-d", "--no-show-raw-insn", exe],
                       capture_output=True, text=True)
    if d.returncode == 0:
        body = re.search(r"<top>:\n((?:.+\n)+?)\n", d.stdout)
        check(body and "%rbp" not in body.group(1) or
              os.uname().machine != "x86_64", body and body.group(1))
    return exe


def own_stacks(stacks):
    """{stack of the workload's own frames, outermost first: count}."""
    out = collections.Counter()
    for frames, n in stacks:
        own = [f for f in frames if f in OWN]
        if own:
            out[";".join(own)] += n
    return out


def perfex_folded(path):
    r = perfex("report", "-i", path, "--folded")
    check(r.returncode == 0, r.stderr)
    stacks = []
    for line in r.stdout.splitlines():
        stack, n = line.rsplit(" ", 1)
        stacks.append((stack.split(";")[1:], int(n)))
    return own_stacks(stacks)


def perf_folded(path):
    """perf script's chains, folded as stackcollapse-perf does."""
    r = subprocess.run([PERF, "script", "-i", path, "-F", "comm,tid,ip,sym,dso"],
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, r.stderr[-2000:])
    stacks, frames = [], None
    for line in r.stdout.splitlines() + [""]:
        if not line.strip():
            if frames is not None:
                stacks.append((list(reversed(frames)), 1))
            frames = None
            continue
        m = re.match(r"\s+[0-9a-f]+ (\S+)", line)
        if m and frames is not None:
            frames.append(re.sub(r"\+0x[0-9a-f]+$", "", m.group(1)))
        elif not line[0].isspace():
            frames = []
    return own_stacks(stacks)


def report_header(path):
    r = perfex("report", "-i", path)
    check(r.returncode == 0, r.stderr)
    return r.stdout


def check_full(stacks, what):
    hot = sum(n for s, n in stacks.items() if s.endswith("hot"))
    check(hot > 50, (what, stacks))
    # Samples interrupted in the middle of a call or return may lose a
    # frame in any unwinder; nearly all must be whole.
    check(stacks[FULL] >= 0.95 * hot, (what, stacks))


@case
def our_dwarf_recording_unwinds_whole_chains():
    require_root()
    out = os.path.join(_dir, "ours.data")
    r = record(out, "--call-graph", "dwarf", "-e", "cpu-clock", "-F", "1000",
               "--", workload(), "6000")
    check(r.returncode == 0, r.stderr)
    ours = perfex_folded(out)
    check_full(ours, "perfex")
    head = report_header(out)
    check(re.search(r"# DWARF call chains: \d+ truncated of \d+ unwound", head),
          head)
    require_perf()
    check(perf_folded(out) == ours, (perf_folded(out), ours))


@case
def perf_dwarf_recording_reads_the_same():
    require_root()
    out = os.path.join(_dir, "perf.data")
    perf_record(out, "--call-graph", "dwarf", "-e", "cpu-clock", "-F", "1000",
                "--", workload(), "6000")
    ours = perfex_folded(out)
    check_full(ours, "perfex on perf's file")
    check(perf_folded(out) == ours, (perf_folded(out), ours))


@case
def small_stack_copy_is_counted_as_truncated():
    require_root()
    out = os.path.join(_dir, "small.data")
    # 16 bytes: hot's caller is found (its return address is on top of
    # the stack), the frames beyond are not.
    r = record(out, "--call-graph", "dwarf,16", "-e", "cpu-clock", "-F",
               "1000", "--", workload(), "3000")
    check(r.returncode == 0, r.stderr)
    head = report_header(out)
    m = re.search(r"# DWARF call chains: (\d+) truncated of (\d+) unwound: "
                  r"(\d+) stack copy too small", head)
    check(m and int(m.group(3)) > 0.9 * int(m.group(2)), head)
    check(FULL not in perfex_folded(out), perfex_folded(out))
    r = perfex("report", "-i", out, "-j")
    check(r.returncode == 0, r.stderr)
    rep = json.loads(r.stdout)
    check(rep["unwound"] == int(m.group(2)) and
          rep["truncated"]["stack copy too small"] == int(m.group(3)), rep)
    # The folded stacks have no header: a note says it.
    r = perfex("report", "-i", out, "--folded")
    check("perfex: note: DWARF call chains: " in r.stderr, r.stderr)


@case
def cached_rules_unwind_as_libdwfl_does():
    """The unwinder applies the CFI rules it cached per address instead of
    asking libdwfl for every frame; with PERFCTR_UNWIND_CHECK set, libdwfl
    unwinds every sample again and any difference in frames, in how the
    chain ended or in the reads that missed the stack copy traps.  Stack
    copies of several sizes make chains end in every way."""
    require_root()
    env = dict(os.environ, PERFCTR_UNWIND_CHECK="1")
    for size in ("8192", "512", "64"):
        out = os.path.join(_dir, "check%s.data" % size)
        r = record(out, "--call-graph", "dwarf," + size, "-e", "cpu-clock",
                   "-F", "2000", "--", workload(), "3000")
        check(r.returncode == 0, r.stderr)
        plain = perfex("script", "-i", out)
        checked = perfex("script", "-i", out, env=env)
        check(plain.returncode == 0 and checked.returncode == 0,
              (size, plain.returncode, checked.returncode,
               checked.stderr[-500:]))
        check(checked.stdout == plain.stdout and "lib_mid" in plain.stdout,
              size)


@case
def vdso_frames_unwind_with_its_cfi():
    """The vDSO has no file, but the recorded one is this machine's: its
    CFI (from the reader's own copy of it) unwinds its frames, so a sample
    in a vDSO function the vDSO's exported entry called still shows that
    entry (frame pointers alone skip it), and the chain reaches main."""
    require_root()
    exe = os.path.join(_dir, "vdwork")
    with open(exe + ".c", "w") as f:
        f.write(VDSO_MAIN)
    r = subprocess.run(["cc", "-O2", "-fomit-frame-pointer", "-g", "-o", exe,
                        exe + ".c"], capture_output=True, text=True)
    if r.returncode:
        skip("cannot build the workload: " + r.stderr[-500:])
    out = os.path.join(_dir, "vdso.data")
    # About 0.3 s of CPU (30 ns a call), 300 samples.
    r = record(out, "--call-graph", "dwarf", "-e", "cpu-clock", "-F", "1000",
               "--", exe, "10000000")
    check(r.returncode == 0, r.stderr)
    r = perfex("report", "-i", out, "--folded")
    check(r.returncode == 0, r.stderr)
    in_vdso = whole = inner = inner_whole = 0
    for line in r.stdout.splitlines():
        stack, n = line.rsplit(" ", 1)
        frames = stack.split(";")
        vdso = [i for i, f in enumerate(frames)
                if f.startswith("__vdso_") or f == "[[vdso]]"]
        if not vdso:
            continue
        in_vdso += int(n)
        if "main" in frames[:vdso[0]] and "tick" in frames[:vdso[0]]:
            whole += int(n)
        if frames[-1] == "[[vdso]]":
            inner += int(n)
            if len(frames) > 1 and frames[-2].startswith("__vdso_"):
                inner_whole += int(n)
    check(in_vdso > 50, r.stdout[-2000:])
    # A sample between two instructions of a prologue or an epilogue
    # may lose a frame in any unwinder; nearly all must be whole.
    check(whole >= 0.95 * in_vdso, (whole, in_vdso, r.stdout[-2000:]))
    check(inner_whole >= 0.95 * inner, (inner_whole, inner, r.stdout[-2000:]))
    env = dict(os.environ, PERFCTR_UNWIND_CHECK="1")
    r = perfex("script", "-i", out, env=env)
    check(r.returncode == 0, (r.returncode, r.stderr[-500:]))


try:
    run_cases()
finally:
    cleanup()
    subprocess.run(["rm", "-rf", _dir])
