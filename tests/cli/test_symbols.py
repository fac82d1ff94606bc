# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Symbol names in `perfex report` and `perfex script`: functions of the
vDSO (symbolised from perfex's own vDSO, read in memory, when it is the
recorded one) and C++ names (demangled through libstdc++'s __cxa_demangle
unless --no-demangle)."""
import os
import shutil
import subprocess

from pctest import case, check, perfex, run_cases, skip, work
from sampletools import (PERF, cleanup, record, report_json, require_perf,
                         script_lines, tmpfile)

# clock_gettime loops for this long; at 4 kHz that is ~1,200 samples.
SPIN_MS = "300"


def vdso_functions():
    """{name: (start, size)} of the functions in this kernel's vDSO, read
    from our own mapping of it (the kernel gives every process the same
    image).  The truth the report is checked against: which addresses a
    symbol covers depends on the kernel's build, and the vDSO of some
    kernels runs its clock read in a local function its symbol table does
    not name (perf shows those addresses in hex as well)."""
    import re
    import tempfile
    lo = hi = None
    with open("/proc/self/maps") as f:
        for line in f:
            if line.rstrip().endswith("[vdso]"):
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
    check(lo is not None, "no [vdso] in /proc/self/maps")
    with open("/proc/self/mem", "rb") as mem:
        mem.seek(lo)
        image = mem.read(hi - lo)
    with tempfile.NamedTemporaryFile(suffix=".so") as tmp:
        tmp.write(image)
        tmp.flush()
        out = subprocess.run(["readelf", "-sW", "--dyn-syms", tmp.name],
                             capture_output=True, text=True, timeout=60)
    check(out.returncode == 0, out.stderr)
    funcs = {}
    for line in out.stdout.splitlines():
        m = re.match(r"\s*\d+:\s+([0-9a-f]+)\s+(\d+)\s+FUNC\s+\S+\s+\S+"
                     r"\s+\S+\s+(\S+)", line)
        if m:
            name = m.group(3).split("@")[0]
            funcs[name] = (int(m.group(1), 16), int(m.group(2)))
    check(funcs, out.stdout[-2000:])
    return funcs


def vdso_shares(rep):
    """(samples, samples in [vdso], the [vdso] rows)."""
    ev = rep["events"][0]
    rows = [r for r in ev["rows"] if r["dso"] == "[vdso]"]
    in_vdso = sum(r["samples"] for r in rows)
    return ev["samples"], in_vdso, rows


def check_vdso_named(path):
    total, in_vdso, rows = vdso_shares(report_json(path))
    # ~1,200 samples on an idle machine; the loop runs for a wall time,
    # so a loaded machine gives it less CPU and fewer samples.
    check(total >= 50, "only %d samples" % total)
    if in_vdso < total // 5:
        # A clock source the vDSO cannot read makes clock_gettime a
        # system call: the samples are in the kernel, not in the vDSO.
        skip("clock_gettime ran in the vDSO for %d of %d samples only "
             "(clock source %s)" % (in_vdso, total, clocksource()))
    funcs = vdso_functions()
    # A row is named exactly when its address lies in a function of the
    # vDSO's symbol table: a named row carries one of those names, an
    # unnamed one (shown as its offset in hex) lies outside all of them.
    for r in rows:
        sym = r.get("sym") or ""
        if sym.startswith("0x"):
            off = int(sym, 16)
            inside = [n for n, (a, sz) in funcs.items() if a <= off < a + sz]
            check(not inside, (sym, inside))
        else:
            check(sym in funcs, (sym, sorted(funcs)))
    named = sum(r["samples"] for r in rows
                if not (r.get("sym") or "0x").startswith("0x"))
    lines = [l for l in script_lines(path) if l.endswith("([vdso])")]
    check(len(lines) == in_vdso, (len(lines), in_vdso))
    # The script names the same samples, each at an offset its function
    # covers.
    script_named = 0
    for l in lines:
        word = l.split()[-2]
        if "+0x" in word:
            name, off = word.split("+0x")
            check(name in funcs and int(off, 16) < funcs[name][1], l)
            script_named += 1
        else:
            check(word == "[unknown]", l)
    check(script_named == named, (script_named, named))


def clocksource():
    try:
        with open("/sys/devices/system/clocksource/clocksource0/"
                  "current_clocksource") as f:
            return f.read().strip()
    except OSError:
        return "unknown"


@case
def vdso_functions_are_named():
    out = tmpfile("vdso.data")
    r = record(out, "-e", "cpu-clock", "-F", "4000", "--", work(),
               "clockspin", SPIN_MS)
    check(r.returncode == 0, r.stderr)
    check_vdso_named(out)


@case
def vdso_agrees_with_perf():
    # perf names the same function for our file, and lists the vDSO's
    # build-id that perfex record wrote.
    require_perf()
    out = tmpfile("vdso-perf.data")
    r = record(out, "-e", "cpu-clock", "-F", "4000", "--", work(),
               "clockspin", SPIN_MS)
    check(r.returncode == 0, r.stderr)
    ids = subprocess.run([PERF, "buildid-list", "-i", out],
                         capture_output=True, text=True, timeout=60)
    check(ids.returncode == 0, ids.stderr)
    check(any(l.split()[-1] == "[vdso]" and len(l.split()[0]) == 40
              for l in ids.stdout.splitlines() if l.strip()), ids.stdout)
    total, in_vdso, named = vdso_shares(report_json(out))
    if in_vdso < total // 5:
        skip("clock_gettime ran in the vDSO for %d of %d samples only "
             "(clock source %s)" % (in_vdso, total, clocksource()))
    rep = perfex("report", "-i", out, "-j", "-s", "dso,sym")
    check(rep.returncode == 0, rep.stderr)
    perf = subprocess.run([PERF, "report", "-i", out, "--stdio",
                           "--no-children", "--sort", "dso,sym"],
                          capture_output=True, text=True, timeout=120)
    check(perf.returncode == 0, perf.stderr[-2000:])
    perf_vdso = [l for l in perf.stdout.splitlines()
                 if "[vdso]" in l and not l.startswith("#")]
    check(perf_vdso, perf.stdout[-2000:])
    # The vDSO's hottest function is the same for both.
    ours = [r for r in __import__("json").loads(rep.stdout)["events"][0]["rows"]
            if r["dso"] == "[vdso]"]
    check(ours and ours[0]["sym"] and perf_vdso[0].split()[-1] == ours[0]["sym"],
          (perf_vdso[:2], ours[:2]))


@case
def vdso_of_a_file_without_build_ids():
    # perf record --no-buildid writes no build-ids: perfex falls back to
    # the kernel release the file names, which is ours.
    require_perf()
    out = tmpfile("vdso-nobuildid.data")
    r = subprocess.run([PERF, "record", "-q", "--no-buildid", "-e",
                        "cpu-clock", "-F", "4000", "-o", out, "--", work(),
                        "clockspin", SPIN_MS],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, r.stderr[-2000:])
    check_vdso_named(out)


CXX_SRC = r"""
#include <chrono>
namespace ns {
template <typename T> struct Widget {
	T acc = 1;
	__attribute__((noinline)) T spin(long n)
	{
		for (long i = 0; i < n; i++)
			acc = acc * 3 + static_cast<T>(i);
		return acc;
	}
};
}
int main()
{
	ns::Widget<long> w;
	auto end = std::chrono::steady_clock::now() +
		   std::chrono::milliseconds(300);
	while (std::chrono::steady_clock::now() < end)
		w.spin(100000);
	return (int)(w.acc & 1) * 0;
}
"""
DEMANGLED = "ns::Widget<long>::spin"
MANGLED = "_ZN2ns6WidgetIlE4spinEl"


def cxx_program():
    gxx = shutil.which("g++")
    if not gxx:
        skip("g++ is not installed: no C++ program to profile")
    src, exe = tmpfile("widget.cc"), tmpfile("widget")
    with open(src, "w") as f:
        f.write(CXX_SRC)
    r = subprocess.run([gxx, "-O1", "-o", exe, src], capture_output=True,
                       text=True, timeout=120)
    check(r.returncode == 0, r.stderr[-2000:])
    return exe


@case
def cxx_names_are_demangled():
    exe = cxx_program()
    out = tmpfile("cxx.data")
    r = record(out, "-e", "cpu-clock", "-F", "2000", "--", exe)
    check(r.returncode == 0, r.stderr)
    info = perfex("info")
    check("yes libstdc++" in info.stdout, info.stdout[-600:])
    # The loop is nearly all of the run: it is the top row, named as
    # C++ spells it, or as the binary does with --no-demangle.
    for args, name in (((), DEMANGLED), (("--no-demangle",), MANGLED)):
        rep = report_json(out, *args)
        rows = rep["events"][0]["rows"]
        check(rows and rows[0]["sym"] == name, (args, rows[:2]))
        check(rows[0]["overhead"] > 50, rows[0])
        check(not any(r.get("sym") == (MANGLED if name == DEMANGLED
                                       else DEMANGLED) for r in rows), rows)
        lines = script_lines(out, *args)
        hits = [l for l in lines if " %s+0x" % name in l]
        check(len(hits) == rows[0]["samples"], (len(hits), rows[0]))
        folded = perfex("report", "-i", out, "--folded", *args)
        check(folded.returncode == 0 and name in folded.stdout,
              folded.stdout[:500])


try:
    run_cases()
finally:
    cleanup()
