# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""JIT code named as perf names it: perf maps (/tmp/perf-PID.map) read by
report and script, and jitdump files turned into ELF files and MMAP2s by
`perfex inject --jit`.  jitwork (tests/workload/jitwork.c) runs known code
at known offsets of an anonymous executable page, so every sample there
has one right name; node, where installed, is the real runtime, compared
sample by sample with perf."""
import os
import re
import json
import shutil
import struct
import subprocess

from pctest import BUILD, EXIT, case, check, perfex, run_cases, skip
from sampletools import PERF, cleanup, tmpfile

JITWORK = os.path.join(BUILD, "tests", "workload", "jitwork")
NODE = shutil.which("node")
HOT_JS = """function hotLoopJs(n) { let s = 0; for (let i = 0; i < n; i++) {
s = (s + i * 7) % 1000003; } return s; }
let t = Date.now(), r = 0;
while (Date.now() - t < 1200) r += hotLoopJs(100000);
"""


def require_jitwork():
    if os.uname().machine != "x86_64":
        skip("jitwork's machine code is x86-64 only")


def script_rows(path, tool="perfex"):
    """(ip, sym, dso) of every sample, perfex script's or perf script's."""
    if tool == "perfex":
        r = perfex("script", "-i", path, "-G", "-F", "ip,sym,dso")
    else:
        r = subprocess.run([PERF, "script", "-i", path, "-G", "-F",
                            "ip,sym,dso"], capture_output=True, text=True,
                           timeout=120)
    check(r.returncode == 0, r.stderr[-2000:])
    rows = []
    for line in r.stdout.splitlines():
        m = re.match(r"\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)$", line)
        if m:
            rows.append((int(m.group(1), 16), m.group(2), m.group(3)))
    return rows


def run_recorded(out, *args, cwd=None):
    r = subprocess.run([os.path.join(BUILD, "perfex"), "record", "-q", "-e",
                        "cpu-clock", "-o", out] + list(args),
                       capture_output=True, text=True, timeout=120, cwd=cwd)
    check(r.returncode == 0, r.stderr)
    return r.stdout


def jitwork_map():
    """Record `jitwork map`; the file, the code page and the pid."""
    out = tmpfile("map.data")
    pid = int(run_recorded(out, "--", JITWORK, "map", "900").split()[0])
    path = "/tmp/perf-%d.map" % pid
    text = open(path).read()
    page = int(text.split()[0], 16)
    return out, page, pid, path


# jitwork map: the name of each offset's function; jit_gamma_new lists the
# same start as jit_gamma_old later, and the first entry wins (perf 6.1).
MAP_NAMES = {0x000: "jit_alpha", 0x100: "jit_beta", 0x200: "jit_gamma_old"}


@case
def perf_map_names_every_sample():
    require_jitwork()
    out, page, pid, path = jitwork_map()
    try:
        rows = [r for r in script_rows(out) if page <= r[0] < page + 4096]
        check(rows, "no sample in the JIT page")
        seen = {}
        for ip, sym, dso in rows:
            want = MAP_NAMES.get((ip - page) & ~0xff)
            check(want and ip - page - ((ip - page) & ~0xff) < 16, hex(ip))
            check(sym == want and dso == path, (hex(ip), sym, dso))
            seen[want] = seen.get(want, 0) + 1
        check(sorted(seen) == sorted(MAP_NAMES.values()), seen)
        # The table names the DSO as perf report does.
        r = perfex("report", "-i", out, "--sort", "dso,sym")
        check(re.search(r"\[JIT\] tid %d\s+\[\.\] jit_beta" % pid, r.stdout),
              r.stdout)
        # Folded stacks symbolise through the same lookup.
        r = perfex("report", "-i", out, "--folded")
        check(re.search(r"^jitwork;jit_alpha \d+$", r.stdout, re.M), r.stdout)
        if os.access(PERF, os.X_OK):
            theirs = [r for r in script_rows(out, "perf")
                      if page <= r[0] < page + 4096]
            check(theirs == rows, "perf script differs on the JIT samples")
    finally:
        os.unlink(path)


@case
def perf_map_absent_leaves_addresses():
    require_jitwork()
    out, page, pid, path = jitwork_map()
    os.unlink(path)
    rows = [r for r in script_rows(out) if page <= r[0] < page + 4096]
    check(rows and all(s == "[unknown]" and d == path for _, s, d in rows),
          rows[:3])


@case
def perf_map_not_for_named_anon():
    """Named anonymous memory ("[anon:NAME]", prctl PR_SET_VMA_ANON_NAME)
    is not looked up in the perf map: perf 6.1 takes the name for a file's
    and leaves the samples unnamed, and so does perfex.  This kernel may
    not name such memory in its MMAP2s (or have CONFIG_ANON_VMA_NAME), so
    the recording's "//anon" is renamed in place ("[anon:]" fits its 8
    bytes)."""
    require_jitwork()
    out, page, pid, path = jitwork_map()
    try:
        data = open(out, "rb").read()
        check(b"//anon\0\0" in data, "no //anon map recorded")
        named = tmpfile("named-anon.data")
        open(named, "wb").write(data.replace(b"//anon\0\0", b"[anon:]\0"))
        rows = [r for r in script_rows(named) if page <= r[0] < page + 4096]
        check(rows and all(s == "[unknown]" and d == "[anon:]"
                           for _, s, d in rows), rows[:3])
        if os.access(PERF, os.X_OK):
            theirs = [r for r in script_rows(named, "perf")
                      if page <= r[0] < page + 4096]
            check(theirs == rows, theirs[:3])
    finally:
        os.unlink(path)

# A name as a runtime may write it: invalid UTF-8 (a lone continuation
# byte, a truncated sequence, an overlong NUL, a surrogate, a byte past
# U+10FFFF), control characters, a quote and a backslash, beside valid
# two- and four-byte characters.
GARBAGE = (b"jit_\x80b\xe2\x82\x01\x1b[0m\"\\\x7f\xc0\x80\xed\xa0\x80"
           b"\xf4\x90\x80\x80\xc3\xa9\xf0\x9f\x90\x8d\xff")


@case
def perf_map_garbage_names_are_valid_json():
    """report -j writes any byte string as valid JSON: each ill-formed
    UTF-8 sequence is one U+FFFD as Python's errors="replace" decodes it,
    control characters are escaped (docs/json.md)."""
    require_jitwork()
    out, page, pid, path = jitwork_map()
    try:
        data = open(path, "rb").read()
        open(path, "wb").write(data.replace(b"jit_beta", GARBAGE))
        r = subprocess.run([os.path.join(BUILD, "perfex"), "report", "-i",
                            out, "-j", "--sort", "sym"], capture_output=True,
                           timeout=120)
        check(r.returncode == 0, r.stderr[-2000:])
        doc = json.loads(r.stdout.decode("utf-8"))
        names = [row["sym"] for row in doc["events"][0]["rows"]]
        want = GARBAGE.decode("utf-8", "replace")
        check(want in names, (want, names))
    finally:
        os.unlink(path)


def jitwork_dump(clock=("-k", "mono")):
    d = tmpfile("dump")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    out = os.path.join(d, "perf.data")
    pid = int(run_recorded(out, *clock, "--", JITWORK, "dump", d,
                           "900").split()[0])
    return d, out, pid


@case
def inject_jit_names_every_sample():
    require_jitwork()
    d, out, pid = jitwork_dump()
    injected = os.path.join(d, "jit.data")
    r = perfex("inject", "--jit", "-i", out, "-o", injected)
    check(r.returncode == 0, r.stderr)
    check("2 jitted functions, 1 moves, 2 line tables, 1 unwind tables"
          in r.stderr, r.stderr)
    files = sorted(f for f in os.listdir(d) if f.startswith("jitted-"))
    check(files == ["jitted-%d-1.so" % pid, "jitted-%d-2.so" % pid], files)
    before = script_rows(out)
    rows = script_rows(injected)
    check(len(rows) == len(before), (len(rows), len(before)))
    page = min(ip for ip, s, _ in rows if s.startswith("jit_alpha"))
    page &= ~0xfff
    # alpha at 0x000 until it moves to 0x300, beta at 0x100
    names = {0x000: ("jit_alpha", 1), 0x100: ("jit_beta", 2),
             0x300: ("jit_alpha", 1)}
    jit = [r for r in rows if page <= r[0] < page + 4096]
    counts = {}
    for ip, sym, dso in jit:
        name, index = names[(ip - page) & ~0xff]
        check((ip - page) & 0xff < 16 and sym == name and
              dso == os.path.join(d, "jitted-%d-%d.so" % (pid, index)),
              (hex(ip), sym, dso))
        counts[(ip - page) & ~0xff] = counts.get((ip - page) & ~0xff, 0) + 1
    check(sorted(counts) == [0, 0x100, 0x300], counts)
    # Before: the same samples, unnamed.
    check(all(s == "[unknown]" for ip, s, _ in before
              if page <= ip < page + 4096), "named before inject")
    if not os.access(PERF, os.X_OK):
        return
    # perf reads our output the same, and its own inject names the same.
    check([r for r in script_rows(injected, "perf")
           if page <= r[0] < page + 4096] == jit, "perf script differs")
    theirs = os.path.join(d, "perf-jit.data")
    p = subprocess.run([PERF, "inject", "--jit", "-i", out, "-o", theirs],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, p.stderr)
    check([r for r in script_rows(theirs, "perf")
           if page <= r[0] < page + 4096] == jit, "perf inject differs")


@case
def inject_errors():
    require_jitwork()
    d, out, pid = jitwork_dump(clock=())
    r = perfex("inject", "--jit", "-i", out, "-o", os.path.join(d, "x.data"))
    check(r.returncode == EXIT["usage"], r)
    check(r.stderr.startswith("perfex: '%s' was not recorded with "
                              "CLOCK_MONOTONIC times" % out), r.stderr)
    check("hint: record with perfex record -k mono" in r.stderr, r.stderr)
    r = perfex("inject", "--jit", "-i", out)
    check(r.returncode == EXIT["usage"] and "needs -o FILE" in r.stderr, r)
    d, out, pid = jitwork_dump(clock=("--clockid", "CLOCK_MONOTONIC"))
    dump = os.path.join(d, "jit-%d.dump" % pid)
    good = open(dump, "rb").read()
    # A dump cut inside a record (the runtime was killed): what is whole.
    with open(dump, "wb") as f:
        f.write(good[:len(good) - 30])
    r = perfex("inject", "-j", "--input", out, "--output",
               os.path.join(d, "cut.data"))
    check(r.returncode == 0 and "2 jitted functions, 0 moves" in r.stderr, r)
    # A DEBUG_INFO record whose entries run past its end.
    with open(dump, "wb") as f:
        f.write(good[:40] + struct.pack("<IIQQQ", 2, 32, 0, 0, 5) +
                good[40:])
    r = perfex("inject", "--jit", "-i", out, "-o", os.path.join(d, "z.data"))
    check(r.returncode == EXIT["io"], r)
    check(r.stderr.startswith("perfex: malformed JIT_CODE_DEBUG_INFO record "
                              "at offset 40 of '%s'" % dump), r.stderr)
    with open(dump, "wb") as f:
        f.write(b"\0" * 64)
    r = perfex("inject", "--jit", "-i", out, "-o", os.path.join(d, "y.data"))
    check(r.returncode == EXIT["io"], r)
    check(r.stderr.startswith("perfex: '%s' is not a jitdump file: bad magic"
                              % dump), r.stderr)
    # Without --jit: a copy, every record the same.
    r = perfex("inject", "-i", out, "-o", os.path.join(d, "copy.data"))
    check(r.returncode == 0, r)
    check(script_rows(os.path.join(d, "copy.data")) == script_rows(out))


# jitwork dump's line tables: (function, first offset, line, file), each
# row holding from its offset to the next row's or the function's end.
LINES = {
    "jit_alpha": [(0, "jitwork.js:10"), (3, "jitwork.js:11")],
    "jit_beta": [(0, "jitbeta.js:20"), (3, "jitbeta.js:21"),
                 (8, "jitwork.js:30")],
}


def want_srcline(sym, offset):
    rows = [text for start, text in LINES[sym] if start <= offset]
    return rows[-1]


def jit_srclines(rows):
    """{(sym, srcline): samples} that the line tables give jitwork's
    samples, from each sample's offset into its function."""
    want = {}
    for ip, sym, dso in rows:
        m = re.match(r"(jit_alpha|jit_beta)\+0x([0-9a-f]+)$", sym)
        if m and "/jitted-" in dso:
            key = (m.group(1), want_srcline(m.group(1), int(m.group(2), 16)))
            want[key] = want.get(key, 0) + 1
    return want


def report_srclines(path, tool="perfex"):
    """{(sym, srcline): samples} of the jit_ rows of report --sort
    sym,srcline, perfex's (JSON) or perf's (-n)."""
    got = {}
    if tool == "perfex":
        r = perfex("report", "-i", path, "--sort", "sym,srcline", "--json")
        check(r.returncode == 0, r.stderr)
        for row in json.loads(r.stdout)["events"][0]["rows"]:
            if row["sym"].startswith("jit_"):
                got[(row["sym"], row["srcline"])] = row["samples"]
        return got
    r = subprocess.run([PERF, "report", "-i", path, "--stdio", "-n",
                        "--sort", "sym,srcline", "-g", "none"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, r.stderr[-2000:])
    for line in r.stdout.splitlines():
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s+\[\.\]\s+(jit_\w+)\s+(\S+)",
                     line)
        if m:
            got[(m.group(2), m.group(3))] = int(m.group(1))
    return got


@case
def inject_jit_line_tables():
    """DEBUG_INFO becomes each .so's DWARF line table: every JIT sample's
    srcline in perfex report (libdw) and perf report (addr2line) is the
    line the dump gives its offset, jitbeta.js's "\\xff" entry included."""
    require_jitwork()
    d, out, pid = jitwork_dump()
    injected = os.path.join(d, "jit.data")
    r = perfex("inject", "--jit", "-i", out, "-o", injected)
    check(r.returncode == 0, r.stderr)
    r = perfex("script", "-i", injected, "-G", "-F", "ip,sym,symoff,dso")
    check(r.returncode == 0, r.stderr)
    rows = []
    for line in r.stdout.splitlines():
        m = re.match(r"\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)$", line)
        if m:
            rows.append((int(m.group(1), 16), m.group(2), m.group(3)))
    want = jit_srclines(rows)
    check({k[0] for k in want} == {"jit_alpha", "jit_beta"}, want)
    check(report_srclines(injected) == want,
          (report_srclines(injected), want))
    if os.access(PERF, os.X_OK):
        check(report_srclines(injected, "perf") == want,
              (report_srclines(injected, "perf"), want))


def chains(path, tool="perfex"):
    """Each sample's call chain as symbol names, in the file's order."""
    cmd = ["script", "-i", path, "-F", "ip,sym,dso"]
    if tool == "perfex":
        r = perfex(*cmd)
    else:
        r = subprocess.run([PERF] + cmd, capture_output=True, text=True,
                           timeout=300)
    check(r.returncode == 0, r.stderr[-2000:])
    out, chain = [], []
    for line in r.stdout.splitlines() + [""]:
        m = re.match(r"\s*[0-9a-f]+\s+(.*?)\s+\(", line)
        if m:
            chain.append(m.group(1))
        elif not line.strip() and chain:
            out.append(tuple(chain))
            chain = []
    return out


@case
def inject_jit_unwind_tables():
    """UNWINDING_INFO becomes jit_alpha's .eh_frame/.eh_frame_hdr, where
    its FDE's pc-relative start is the code's: DWARF unwinding of every
    jit_alpha sample goes on to run(), the caller that a frame-pointer
    walk skips (the code keeps no frame), before the move (in perfex and
    in perf alike) and after it, where the same .so is mapped again at
    another address."""
    require_jitwork()
    d = tmpfile("dump-unwind")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    out = os.path.join(d, "perf.data")
    pid = int(run_recorded(out, "-k", "mono", "--call-graph", "dwarf", "--",
                           JITWORK, "dump", d, "600").split()[0])
    injected = os.path.join(d, "jit.data")
    r = perfex("inject", "--jit", "-i", out, "-o", injected)
    check(r.returncode == 0, r.stderr)
    so = os.path.join(d, "jitted-%d-1.so" % pid)
    r = subprocess.run(["readelf", "-W", "--debug-dump=frames", so],
                       capture_output=True, text=True)
    if r.returncode == 0:
        check(re.search(r"FDE cie=00000000 pc=0+80\.\.0+90", r.stdout),
              r.stdout)
    rows = script_rows(injected)
    ours = chains(injected)
    check(len(rows) == len(ours), (len(rows), len(ours)))
    page = min(ip for ip, s, _ in rows if s == "jit_alpha") & ~0xfff
    before = [c for (ip, s, _), c in zip(rows, ours)
              if s == "jit_alpha" and ip - page < 0x100]
    check(before, "no jit_alpha sample before the move")
    bad = [c for c in before if c[:4] != ("jit_alpha", "run", "do_dump",
                                          "main")]
    check(not bad, (len(bad), len(before), bad[:3]))
    # After the move the same file is mapped a second time, at another
    # bias: the unwinder is given both maps, so the chains there are the
    # same as before it.
    after = [c for (ip, s, _), c in zip(rows, ours)
             if s == "jit_alpha" and ip - page >= 0x300]
    check(after, "no jit_alpha sample after the move")
    bad = [c for c in after if c[:4] != ("jit_alpha", "run", "do_dump",
                                         "main")]
    check(not bad, (len(bad), len(after), bad[:3]))
    # perf 6.1 unwinds the second map with the frame pointers (its
    # chains there skip run()): it is compared before the move only.
    if os.access(PERF, os.X_OK):
        theirs = chains(injected, "perf")
        jit = [i for i, (ip, s, _) in enumerate(rows)
               if s == "jit_alpha" and ip - page < 0x100]
        check([theirs[i][:4] for i in jit] == [ours[i][:4] for i in jit],
              "perf unwinds jit_alpha otherwise")


def require_node():
    if not NODE:
        skip("node is not installed (Debian nodejs): no real JIT runtime")


@case
def node_perf_basic_prof_matches_perf():
    require_node()
    if not os.access(PERF, os.X_OK):
        skip("perf is not installed at %s" % PERF)
    js = tmpfile("hot.js")
    open(js, "w").write(HOT_JS)
    out = tmpfile("node-map.data")
    # node leaves a v8 log in its working directory: ours.
    run_recorded(out, "--", NODE, "--perf-basic-prof", js,
                 cwd=os.path.dirname(js))
    ours = script_rows(out)
    maps = {d for _, _, d in ours if re.match(r"/tmp/perf-\d+\.map$", d)}
    try:
        jit = [r for r in ours if r[2] in maps]
        check(jit, "no sample in JIT code")
        named = [r for r in jit if r[1] != "[unknown]"]
        check(any("hotLoopJs" in s for _, s, _ in named), jit[:5])
        theirs = [r for r in script_rows(out, "perf") if r[2] in maps]
        check(theirs == jit, "perf script names JIT samples otherwise")
    finally:
        for m in maps:
            if os.path.exists(m):
                os.unlink(m)


@case
def node_perf_prof_inject_matches_perf():
    require_node()
    if not os.access(PERF, os.X_OK):
        skip("perf is not installed at %s" % PERF)
    d = tmpfile("node-dump")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    js = os.path.join(d, "hot.js")
    open(js, "w").write(HOT_JS)
    out = os.path.join(d, "perf.data")
    # node writes jit-PID.dump into its working directory.
    run_recorded(out, "-k", "mono", "--", NODE, "--perf-prof", js, cwd=d)
    injected = os.path.join(d, "jit.data")
    r = perfex("inject", "--jit", "-i", out, "-o", injected)
    check(r.returncode == 0, r.stderr)
    ours = [r for r in script_rows(injected) if "/jitted-" in r[2]]
    check(any("hotLoopJs" in s for _, s, _ in ours), ours[:5])
    theirs = [r for r in script_rows(injected, "perf") if "/jitted-" in r[2]]
    check(theirs == ours, "perf script names JIT samples otherwise")
    # node writes DEBUG_INFO for the functions it optimises: each
    # becomes its file's line table, row for row.
    dump = os.path.join(d, [f for f in os.listdir(d)
                            if re.match(r"jit-\d+\.dump$", f)][0])
    tables = dump_line_tables(dump)
    check(tables, "node wrote no JIT_CODE_DEBUG_INFO record")
    m = re.search(r"(\d+) line tables", r.stderr)
    check(m and int(m.group(1)) == len(tables), (r.stderr, len(tables)))
    checked = 0
    for (pid, index), rows in tables.items():
        # V8 (node 20) names user scripts' files with bytes of freed
        # memory: the entries after such a name cannot be told apart.
        if not all(re.match(r"[\x21-\x7e]+$", f) for f, _, _ in rows):
            continue
        so = os.path.join(d, "jitted-%d-%d.so" % (pid, index))
        check(decoded_lines(so) == rows, (so, decoded_lines(so)[:5], rows[:5]))
        checked += 1
    check(checked, "no line table with printable file names")


def dump_line_tables(dump):
    """{(pid, index): [(file, line, address in the .so)]} of the functions
    a jitdump gives DEBUG_INFO for, rows sorted by address as inject
    writes them; "\\xff" names the previous entry's file."""
    b = open(dump, "rb").read()
    p = struct.unpack_from("<I", b, 8)[0]
    pending, tables = None, {}
    while p + 16 <= len(b):
        rid, size = struct.unpack_from("<II", b, p)
        if size < 16 or p + size > len(b):
            break
        if rid == 2:
            nr = struct.unpack_from("<Q", b, p + 24)[0]
            q, entries, name = p + 32, [], None
            for _ in range(nr):
                addr, line = struct.unpack_from("<QI", b, q)
                end = b.index(b"\0", q + 16)
                raw = b[q + 16:end]
                if raw != b"\xff":
                    name = raw.decode("latin-1")
                entries.append((addr, line, name))
                q = end + 1
            pending = entries
        elif rid == 0:
            pid, _, _, code, csize, index = struct.unpack_from("<IIQQQQ",
                                                               b, p + 16)
            rows = sorted(((a - code, n, f) for a, n, f in pending or []
                           if 0 <= a - code < csize), key=lambda r: r[0])
            if rows:
                tables[(pid, index)] = [(f, n, 0x80 + a) for a, n, f in rows]
            pending = None
        p += size
    return tables


def decoded_lines(so):
    """[(file, line, address)] of a file's line table, by readelf."""
    r = subprocess.run(["readelf", "-W", "--debug-dump=decodedline", so],
                       capture_output=True, text=True, errors="replace")
    check(r.returncode == 0, r.stderr)
    return [(m.group(1), int(m.group(2)), int(m.group(3), 16))
            for m in re.finditer(r"^(\S+)\s+(\d+)\s+(0x[0-9a-f]+)",
                                 r.stdout, re.M)]


try:
    run_cases()
finally:
    cleanup()
