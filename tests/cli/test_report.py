# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex report and perfex script: files written by perf record read and
agreed with perf report; sort keys; call graphs; folded stacks and the SVG
flame graph well-formed; bad input gives a clear message and the
documented exit status."""
import re
import subprocess
import xml.etree.ElementTree as ET

from pctest import (EXIT, case, check, perfex, require_root, require_tracefs,
                    run_cases, skip, work)
from sampletools import (TP, cleanup, perf_record, perf_report, record,
                         report_json, script_lines, script_pid_tids,
                         spin_args, tmpfile, top_row)

_files = {}


def perf_spin_file():
    """A perf record -g file of pcwork spin (made once)."""
    if "perf-spin" not in _files:
        require_root()
        out = tmpfile("perf-spin.data")
        perf_record(out, "-g", "-e", "cpu-clock", "-F", "2000", "--", *spin_args())
        _files["perf-spin"] = out
    return _files["perf-spin"]


def our_spin_file():
    if "our-spin" not in _files:
        require_root()
        out = tmpfile("our-spin.data")
        r = record(out, "-g", "-e", "cpu-clock", "-F", "2000", "--", *spin_args())
        check(r.returncode == 0, r.stderr)
        _files["our-spin"] = out
    return _files["our-spin"]


@case
def reads_perf_cpu_clock_file_like_perf():
    path = perf_spin_file()
    samples, rows = perf_report(path)
    rep = report_json(path)
    check(rep["samples"] == samples, (rep["samples"], samples))
    top = top_row(rep)
    check(rows and top["sym"] == rows[0][3] == "spin_loop", (top, rows[:2]))
    check(top["comm"] == rows[0][1] == "pcwork", (top, rows[0]))
    # Same percentages to the precision perf prints.
    check(abs(top["overhead"] - rows[0][0]) < 0.01, (top, rows[0]))
    lines = script_lines(path)
    check(len(lines) == samples, (len(lines), samples))
    check(sum("spin_loop+0x" in l for l in lines) > samples // 2)


@case
def reads_perf_tracepoint_file_like_perf():
    require_root()
    require_tracefs()
    out = tmpfile("perf-tp.data")
    perf_record(out, "-e", TP, "-c", "100", "--", work(), "getppid", "10000")
    samples, rows = perf_report(out)
    rep = report_json(out)
    check(rep["samples"] == samples, (rep["samples"], samples))
    check(rep["events"][0]["event"] == TP, rep["events"][0]["event"])
    if rows:
        check(top_row(rep)["sym"] == rows[0][3], (top_row(rep), rows[0]))


@case
def table_has_header_and_rows():
    path = our_spin_file()
    r = perfex("report", "-i", path, "--stdio")
    check(r.returncode == 0, r.stderr)
    check(re.search(r"^# Total Lost Samples: 0$", r.stdout, re.M), r.stdout[:500])
    check(re.search(r"^# Samples: \d+[ K] of event 'cpu-clock'$", r.stdout,
                    re.M), r.stdout[:500])
    r = perfex("report", "-i", path, "--stdio", "-n")
    m = re.search(r"^\s+([\d.]+)%\s+(\d+)\s+pcwork\s+pcwork\s+\[\.\] spin_loop$",
                  r.stdout, re.M)
    check(m and float(m.group(1)) > 50, r.stdout[-1500:])
    # --percent-limit hides the small rows.
    r2 = perfex("report", "-i", path, "--percent-limit", "50")
    rows = [l for l in r2.stdout.splitlines() if re.match(r"\s+[\d.]+%", l)]
    check(len(rows) == 1 and "spin_loop" in rows[0], rows)


@case
def sort_keys():
    path = our_spin_file()
    rep = report_json(path, "--sort", "pid,tid,cpu,comm,dso,sym")
    check(rep["sort"] == ["pid", "tid", "cpu", "comm", "dso", "sym"])
    total = sum(r["samples"] for r in rep["events"][0]["rows"])
    check(total == rep["samples"], (total, rep["samples"]))
    rep = report_json(path, "-s", "comm")
    rows = rep["events"][0]["rows"]
    check(len(rows) == 1 and rows[0]["comm"] == "pcwork" and
          rows[0]["samples"] == rep["samples"], rows)
    rep = report_json(path, "--sort", "dso")
    check(rep["events"][0]["rows"][0]["dso"].endswith("/pcwork"), rep)


@case
def callgraph_orders():
    path = our_spin_file()
    r = perfex("report", "-i", path, "-g", "callee")
    check(r.returncode == 0, r.stderr)
    # Under spin_loop: its callers, ending in main.
    block = r.stdout.split("[.] spin_loop", 1)[1].split("\n\n", 1)[0]
    check("---spin_loop" in block and "main" in block, block)
    check(block.index("spin_loop") < block.index("main"), block)
    r = perfex("report", "-i", path, "--call-graph", "caller")
    block = r.stdout.split("[.] spin_loop", 1)[1].split("\n\n", 1)[0]
    check(block.index("main") < block.index("spin_loop"), block)
    r = perfex("report", "-i", path, "-g", "sideways")
    check(r.returncode == EXIT["usage"] and "option '-g' expects caller or callee"
          in r.stderr, r)


@case
def folded_stacks_are_well_formed():
    path = our_spin_file()
    rep = report_json(path)
    r = perfex("report", "-i", path, "--folded")
    check(r.returncode == 0, r.stderr)
    total = 0
    for line in r.stdout.splitlines():
        m = re.match(r"^(\S[^;]*(?:;[^;]+)*) (\d+)$", line)
        check(m, "bad folded line: %r" % line)
        total += int(m.group(2))
    check(total == rep["samples"], (total, rep["samples"]))
    check(re.search(r"^pcwork;.*main;.*spin_loop \d+$", r.stdout, re.M), r.stdout[:800])


@case
def flame_graph_is_well_formed_svg():
    path = our_spin_file()
    svg = tmpfile("flame.svg")
    r = perfex("report", "-i", path, "--flame", svg)
    check(r.returncode == 0, r.stderr)
    tree = ET.parse(svg)
    root = tree.getroot()
    check(root.tag == "{http://www.w3.org/2000/svg}svg", root.tag)
    ns = {"s": "http://www.w3.org/2000/svg"}
    titles = [t.text for t in root.iterfind(".//s:g/s:title", ns)]
    check(any(t.startswith("all (") for t in titles), titles[:5])
    check(any(t.startswith("spin_loop (") for t in titles), titles[:20])
    check(root.find("s:script", ns) is not None)
    # Self-contained: nothing fetched from elsewhere (no href, no
    # src, no URL but the namespace names, which are never fetched).
    text = open(svg).read()
    urls = set(re.findall(r"\b(?:https?|ftp)://[^\s\"'<>)]+", text))
    check(urls <= {"http://www.w3.org/2000/svg",
                   "http://www.w3.org/1999/xlink"}, urls)
    for el in root.iter():
        for attr in el.attrib:
            check(not attr.endswith("href") and attr != "src", (el.tag, attr))
    check("@import" not in text and "url(" not in text)
    # The table is still printed with --flame.
    check("spin_loop" in r.stdout)


def folded_total(text):
    """Samples of the workload's syscall() calls (a sanitizer's runtime
    makes a few getppid calls of its own)."""
    return sum(int(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.rsplit(" ", 1)[0].endswith(";syscall"))


@case
def folded_and_flame_take_the_event_asked_for():
    require_root()
    require_tracefs()
    out = tmpfile("two-events.data")
    getpid = "syscalls:sys_enter_getpid"
    r = record(out, "-e", TP + "," + getpid, "-c", "1", "--",
               work(), "getppid", "300", "getpid", "200")
    check(r.returncode == 0, r.stderr)
    # By default the first event with samples, as stackcollapse does.
    r = perfex("report", "-i", out, "--folded")
    check(r.returncode == 0, r.stderr)
    check(folded_total(r.stdout) == 300, r.stdout)
    r = perfex("report", "-i", out, "--folded", "--event", getpid)
    check(r.returncode == 0, r.stderr)
    check(folded_total(r.stdout) == 200, r.stdout)
    svg = tmpfile("two-events.svg")
    r = perfex("report", "-i", out, "--flame", svg, "--event", getpid)
    check(r.returncode == 0, r.stderr)
    text = open(svg).read()
    check(getpid in text and "(200 samples" in text.replace(",", ""),
          re.findall(r"<title>[^<]*</title>", text)[:3])
    r = perfex("report", "-i", out, "--folded", "--event", "syscalls:nope")
    check(r.returncode == EXIT["usage"], r)
    check("no event 'syscalls:nope'" in r.stderr and getpid in r.stderr, r.stderr)


@case
def script_lines_have_every_field():
    path = our_spin_file()
    lines = script_lines(path)
    rep = report_json(path)
    check(len(lines) == rep["samples"])
    # A demangled C++ symbol may have spaces ("operator new", templates).
    pat = re.compile(r"^\s*pcwork\s+\d+/\d+\s+\[\d{3}\]\s+\d+\.\d{6}:\s+\d+\s+"
                     r"cpu-clock:\s+[0-9a-f]+\s+(\S.*\+0x[0-9a-f]+|\[unknown\])"
                     r"\s+\(.+\)$")
    bad = [l for l in lines if not pat.match(l)]
    check(not bad, bad[:3])
    r = perfex("script", "-i", path, "-g")
    check(r.returncode == 0 and "main+0x" in r.stdout, r.stdout[:500])


@case
def kallsyms_option_names_kernel_frames():
    path = our_spin_file()
    ks = tmpfile("kallsyms")
    with open(ks, "w") as f:
        f.write("ffffffff80000000 T fake_kernel_start\n")
    rep = report_json(path, "--kallsyms", ks)
    kernel_rows = [r for r in rep["events"][0]["rows"] if r["kernel"]]
    # Every kernel address is above 0xffffffff80000000: all fall into the
    # one fake symbol (or stay addresses when it is out of reach).
    check(all(r["sym"] in ("fake_kernel_start",) or r["sym"].startswith("0x")
              for r in kernel_rows), kernel_rows[:3])
    r = perfex("script", "-i", path, "--kallsyms", ks)
    check(r.returncode == 0)


@case
def bad_input_is_explained():
    r = perfex("report", "-i", "/nonexistent/perf.data")
    check(r.returncode == EXIT["io"], r)
    check("cannot open '/nonexistent/perf.data'" in r.stderr, r.stderr)
    garbage = tmpfile("garbage.data")
    with open(garbage, "wb") as f:
        f.write(b"this is not a perf.data file at all\n" * 10)
    for cmd in ("report", "script"):
        r = perfex(cmd, "-i", garbage)
        check(r.returncode == EXIT["io"], (cmd, r))
        check("is not a perf.data file" in r.stderr, r.stderr)
    r = perfex("report", "-i", garbage, "--sort", "comm,bogus")
    check(r.returncode == EXIT["usage"], r)
    check("unknown or repeated sort key 'bogus'" in r.stderr, r.stderr)
    check("comm, dso, sym (symbol), pid, tid, cpu, srcline" in r.stderr,
          r.stderr)
    r = perfex("report", "--nonsense")
    check(r.returncode == EXIT["usage"] and "unknown option" in r.stderr, r)
    r = perfex("script", "extra")
    check(r.returncode == EXIT["usage"] and "unexpected argument" in r.stderr, r)
    r = perfex("report", "--folded", "-j")
    check(r.returncode == EXIT["usage"], r)
    r = perfex("report", "--percent-limit", "x")
    check(r.returncode == EXIT["usage"], r)
    empty = tmpfile("empty.data")
    open(empty, "wb").close()
    r = perfex("report", "-i", empty)
    check(r.returncode == EXIT["io"], r)


REPORT_OPTIONS = {"-i", "-s", "-g", "--stdio", "-n", "--folded", "--flame", "--pprof", "--event", "-j",
                  "--percent-limit", "--kallsyms", "--no-demangle", "--annotate",
                  "--speedscope", "--gecko", "--wall", "-h"}
SCRIPT_OPTIONS = {"-i", "-F", "-g", "-G", "--no-callchain", "--kallsyms",
                  "--no-demangle", "--header", "--show-task-events",
                  "--show-mmap-events", "--show-lost-events", "-s",
                  "--gen-script", "-h"}


@case
def help_lists_every_option():
    # Each option below is exercised by a case of this file, but
    # --no-demangle by test_symbols.py, --pprof by test_report_pprof.py,
    # --speedscope and --gecko by test_report_viewers.py, -n by
    # test_report_compat.py too, --annotate by test_annotate.py, --wall by
    # test_offcpu.py, --header and --show-*-events by test_script_compat.py,
    # -s and --gen-script by test_script_python.py.
    for cmd, want in (("report", REPORT_OPTIONS), ("script", SCRIPT_OPTIONS)):
        r = perfex(cmd, "--help")
        check(r.returncode == 0, r)
        found = set(re.findall(r"^\s+(-\w|--[\w-]+)", r.stdout, re.M))
        check(found == want, (cmd, found ^ want))
        check(perfex("help", cmd).stdout == r.stdout)
        check("Exit status" in r.stdout)


try:
    run_cases()
finally:
    cleanup()
