# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Symbol names in `perfex report` and `perfex script`: functions of the
vDSO (symbolised from perfex's own vDSO, read in memory, when it is the
recorded one) and C++ names (demangled through libstdc++'s __cxa_demangle
unless --no-demangle)."""
import os
import shutil
import subprocess

from pctest import (case, check, perfex, require_root, require_tracefs,
                    run_cases, skip, work)
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


# A program for the choice among symbols (symbols.c, elf_sym_is_code()):
# each leaf makes one getppid system call itself, so that a tracepoint
# sample's user frames lie in it and, as return addresses, in main; main
# then loops through PLT stubs (.plt, and .plt.got for the function whose
# address it also takes) for a cpu-clock recording to land in.
FIXTURE_S = r"""
#define LEAF push %rbp; mov %rsp,%rbp; mov $110,%eax; syscall; pop %rbp; ret
	.text
	.globl main
	.type main,@function
main:
	push %rbp
	mov %rsp,%rbp
	push %rbx
	sub $8,%rsp
	call fx_zero
	call fx_weak
	call fx_glob
	call fx_us
	call fx_len
	call fx_tie_aa
	call fx_label
	call fx_sizeless
	call fx_other_text
	call getppid@PLT
	mov llabs@GOTPCREL(%rip),%rax
	mov $LOOPS,%ebx
1:	mov %rbx,%rdi
	call labs@PLT
	mov %rbx,%rdi
	call llabs@PLT
	dec %rbx
	jnz 1b
	add $8,%rsp
	pop %rbx
	xor %eax,%eax
	pop %rbp
	ret
	.size main,.-main

	.globl fx_zero
	.type fx_zero,@function
	.type fx_sized,@function
fx_zero:
fx_sized:
	LEAF
	.size fx_sized,.-fx_sized

	.weak fx_weak
	.type fx_weak,@function
	.type __fx_weak_local,@function
fx_weak:
__fx_weak_local:
	LEAF
	.size fx_weak,.-fx_weak
	.size __fx_weak_local,.-__fx_weak_local

	.globl ___fx_glob
	.type ___fx_glob,@function
	.type fx_glob,@function
fx_glob:
___fx_glob:
	LEAF
	.size fx_glob,.-fx_glob
	.size ___fx_glob,.-___fx_glob

	.globl __fx_us, _fx_us
	.type __fx_us,@function
	.type _fx_us,@function
__fx_us:
_fx_us:
fx_us:
	LEAF
	.size __fx_us,.-__fx_us
	.size _fx_us,.-_fx_us

	.globl fx_len, fx_len_longer
	.type fx_len,@function
	.type fx_len_longer,@function
fx_len:
fx_len_longer:
	LEAF
	.size fx_len,.-fx_len
	.size fx_len_longer,.-fx_len_longer

	.globl fx_tie_bb, fx_tie_aa
	.type fx_tie_bb,@function
	.type fx_tie_aa,@function
fx_tie_aa:
fx_tie_bb:
	LEAF
	.size fx_tie_aa,.-fx_tie_aa
	.size fx_tie_bb,.-fx_tie_bb

	.globl fx_label
fx_label:
	LEAF
	nop
	.globl fx_sizeless
	.type fx_sizeless,@function
fx_sizeless:
	LEAF
	nop
	.globl fx_after
	.type fx_after,@function
fx_after:
	ret
	.size fx_after,.-fx_after

	.section .fx.text,"ax",@progbits
	.globl fx_other_text
	.type fx_other_text,@function
fx_other_text:
	LEAF
	.size fx_other_text,.-fx_other_text
	.section .note.GNU-stack,"",@progbits
"""
# The leaves' names as perf chooses them; fx_tie_* (same binding,
# underscores and length) goes to whichever the linker lists first, which
# only the comparison with perf checks.
FIXTURE_LEAVES = ["fx_zero", "__fx_weak_local", "___fx_glob", "_fx_us",
                  "fx_len_longer", None, "fx_label", "fx_sizeless",
                  "fx_other_text"]


def fixture_program(loops, *ldflags):
    """The fixture built with LOOPS turns of its PLT loop."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if not cc:
        skip("no C compiler (gcc) to build the fixture program")
    src = tmpfile("fixture.S")
    exe = tmpfile("fixture-%d%s" % (loops, "".join(ldflags).replace(",", "")))
    with open(src, "w") as f:
        f.write(FIXTURE_S.replace("LOOPS", str(loops)))
    r = subprocess.run([cc, "-o", exe, src] + list(ldflags),
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, r.stderr[-2000:])
    return exe


def samples_of(text):
    """The samples of `script` output: [[(addr, sym, dso), ...], ...],
    one list of frames for each sample."""
    import re
    samples, frames = [], None
    for l in text.splitlines():
        m = re.match(r"\s+([0-9a-f]+) (.*) \((.*)\)$", l)
        if m:
            frames.append(m.groups())
        elif l.strip():
            frames = []
            samples.append(frames)
    return samples


def script_samples(path, perf=False):
    if perf:
        r = subprocess.run([PERF, "script", "-i", path], capture_output=True,
                           text=True, timeout=120)
    else:
        r = perfex("script", "-i", path)
    check(r.returncode == 0, r.stderr[-2000:])
    return samples_of(r.stdout)


def sym_name(frame):
    return frame[1].rsplit("+0x", 1)[0]


def plt_stubs(exe):
    """{address: name} of the PLT stubs objdump names in EXE."""
    import re
    if not shutil.which("objdump"):
        skip("no objdump (binutils) to find the PLT stubs")
    r = subprocess.run(["objdump", "-d", "-j", ".plt", "-j", ".plt.got",
                        "-j", ".plt.sec", exe], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0, r.stderr)
    return {int(m.group(1), 16): m.group(2) for m in
            re.finditer(r"^([0-9a-f]+) <([^>@]+@plt)>:", r.stdout, re.M)}


def record_fixture(exe, name, *events):
    require_root()
    require_tracefs()
    out = tmpfile(name)
    r = record(out, "-g", *events, "--", exe)
    check(r.returncode == 0, r.stderr)
    return out


@case
def aliases_labels_and_sizeless_named_as_perf_names_them():
    exe = fixture_program(1)
    out = record_fixture(exe, "fixture-tp.data", "-e",
                         "raw_syscalls:sys_enter", "-c", "1")
    samples = script_samples(out)
    # Each leaf made one getppid: its sample's first user frame is in it.
    leaves = []
    for frames in samples:
        user = [f for f in frames if f[2] == exe]
        if len(user) == 2 and sym_name(user[1]) == "main":
            leaves.append(sym_name(user[0]))
    check(len(leaves) == len(FIXTURE_LEAVES), leaves)
    for got, want in zip(leaves, FIXTURE_LEAVES):
        check(got == want or (want is None and got in
                              ("fx_tie_aa", "fx_tie_bb")), (got, want))


def compare_frames(ours, theirs, stubs=None):
    """(frames compared, differences other than PLT stubs, stub frames
    that perf names otherwise): perf 6.1 shadows the stubs with
    the size-less _init it stretches over the PLT."""
    check(len(ours) == len(theirs), (len(ours), len(theirs)))
    frames, differ, stub_differ = 0, [], 0
    for a, b in zip(ours, theirs):
        check(len(a) == len(b), (a, b))
        for x, y in zip(a, b):
            frames += 1
            if x == y:
                continue
            if stubs is not None and sym_name(x) in stubs.values():
                stub_differ += 1
                continue
            differ.append((x, y))
    return frames, differ, stub_differ


@case
def script_names_every_frame_as_perf_does():
    # One getppid per leaf; ld.so's start-up and libc make the rest of
    # the system calls: every frame of every sample, kernel, ld.so, libc
    # and the fixture, carries the name perf gives it.
    require_perf()
    exe = fixture_program(1)
    out = record_fixture(exe, "fixture-perf.data", "-e",
                         "raw_syscalls:sys_enter", "-c", "1")
    ours, theirs = script_samples(out), script_samples(out, perf=True)
    frames, differ, _ = compare_frames(ours, theirs)
    check(not differ, (len(differ), frames, differ[:10]))
    dsos = {os.path.basename(f[2]) for s in ours for f in s}
    check(any(d.startswith("ld-linux") for d in dsos), dsos)
    check(any(d.startswith("libc") for d in dsos), dsos)


@case
def plt_stubs_named_from_their_relocations():
    # Samples land in the .plt and .plt.got stubs the loop calls: each
    # is named as objdump names the stub at its address.
    for ldflags in ((), ("-Wl,-z,ibtplt",)):
        exe = fixture_program(20000000, *ldflags)
        stubs = plt_stubs(exe)
        check({"labs@plt", "llabs@plt"} <= set(stubs.values()), stubs)
        out = record_fixture(exe, "fixture-plt.data", "-e", "cpu-clock",
                             "-F", "4000")
        named = {}
        for frames in script_samples(out):
            f = frames[0]
            if f[2] != exe or not sym_name(f).endswith("@plt"):
                continue
            addr, off = int(f[0], 16), int(f[1].rsplit("+0x", 1)[1], 16)
            check(stubs.get(addr - off) == sym_name(f), (f, stubs))
            named[sym_name(f)] = named.get(sym_name(f), 0) + 1
        # ~4,000 samples, a quarter to a half in the stubs on an idle
        # machine; a loaded one gives the loop fewer: any at all in each.
        check(named.get("labs@plt") and named.get("llabs@plt"),
              (ldflags, named))


def report_counts(path, perf=False):
    """{(dso's file name, symbol): samples} of the report's rows."""
    import json
    import re
    if not perf:
        rows = report_json(path, "-s", "dso,sym")["events"][0]["rows"]
        return {(os.path.basename(r["dso"]), r.get("sym") or ""): r["samples"]
                for r in rows}
    r = subprocess.run([PERF, "report", "-i", path, "--stdio", "--no-children",
                        "-n", "-g", "none", "--sort", "dso,sym"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, r.stderr[-2000:])
    counts = {}
    for l in r.stdout.splitlines():
        m = re.match(r"\s+[\d.]+%\s+(\d+)\s+(\S+)\s+\[[.k]\]\s+(.*\S)", l)
        if m:
            key = (os.path.basename(m.group(2)), m.group(3))
            counts[key] = counts.get(key, 0) + int(m.group(1))
    return counts


@case
def report_and_script_name_samples_as_perf_does():
    # A cpu-clock recording through the PLT loop, libc, ld.so and the
    # kernel: every frame of script and every row of report agree with
    # perf, but for the PLT stubs, which perf 6.1 puts in the size-less
    # _init it stretches over them (perfs after 6.1 and objdump name the
    # stubs as we do).
    require_perf()
    exe = fixture_program(20000000)
    stubs = plt_stubs(exe)
    out = record_fixture(exe, "fixture-report.data", "-e", "cpu-clock",
                         "-F", "4000")
    frames, differ, in_stubs = compare_frames(
        script_samples(out), script_samples(out, perf=True), stubs)
    check(not differ, (len(differ), frames, differ[:10]))
    ours, theirs = report_counts(out), report_counts(out, perf=True)
    name = os.path.basename(exe)
    stub_rows = sum(n for (d, s), n in ours.items()
                    if d == name and s in stubs.values())
    check(stub_rows, ours)
    for key in set(ours) | set(theirs):
        if key[0] == name and (key[1] in stubs.values() or
                               key[1] == "_init"):
            continue
        check(ours.get(key) == theirs.get(key),
              (key, ours.get(key), theirs.get(key)))
    check(theirs.get((name, "_init"), 0) ==
          ours.get((name, "_init"), 0) + stub_rows, (theirs, ours))



def samples_with_comm(text):
    """[(comm, [(addr, sym, dso), ...]), ...] of `script` output."""
    import re
    samples = []
    for l in text.splitlines():
        m = re.match(r"\s+([0-9a-f]+) (.*) \((.*)\)$", l)
        if m:
            samples[-1][1].append(m.groups())
        elif l.strip():
            samples.append((l.split()[0], []))
    return samples


@case
def samples_inside_exec_named_in_the_old_image():
    """The kernel writes the exec's COMM record (and the new image's
    MMAPs) while execve() runs on; a sample taken then still has the old
    image's user registers, __GI___execve in the old libc.  perf keeps a
    process's maps at an exec, until new maps overlap them, and so does
    perfex: such samples are named, as perf names them."""
    require_root()
    require_tracefs()
    tp = "kmem:kmalloc"
    if not os.path.isdir("/sys/kernel/tracing/events/kmem/kmalloc"):
        skip("no kmem:kmalloc tracepoint (allocations inside execve)")
    out = tmpfile("exec.data")
    # pcwork execs itself through /proc/self/exe: "exe" after the COMM.
    r = record(out, "-g", "-e", tp, "-c", "1", "--", work(), "exec",
               "getppid", "2")
    check(r.returncode == 0, r.stderr)
    r = perfex("script", "-i", out)
    check(r.returncode == 0, r.stderr[-2000:])
    ours = samples_with_comm(r.stdout)
    inside = [f for comm, f in ours if comm == "exe" and
              any("execve" in x[1] for x in f if x[2] == "[kernel.kallsyms]")]
    check(inside, "no sample inside execve after its COMM")
    for frames in inside:
        user = [x for x in frames if x[2] != "[kernel.kallsyms]"]
        check(user and "execve" in user[0][1] and "libc" in user[0][2],
              frames)
    if os.access(PERF, os.X_OK):
        r = subprocess.run([PERF, "script", "-i", out], capture_output=True,
                           text=True, timeout=120)
        check(r.returncode == 0, r.stderr[-2000:])
        theirs = samples_with_comm(r.stdout)
        check(len(ours) == len(theirs), (len(ours), len(theirs)))
        # The workload's own thread: in sanitizer builds the leak
        # checker's helper task (created untraced at exit) samples too,
        # and perf 6.1 prints its samples without their call chains.
        tids = [l.split()[1] for l in r.stdout.splitlines()
                if l.strip() and not l[0].isspace()]
        differ = [(a, b) for a, b, tid in zip(ours, theirs, tids)
                  if a != b and tid == tids[0]]
        check(not differ, (len(differ), differ[:3]))

try:
    run_cases()
finally:
    cleanup()
