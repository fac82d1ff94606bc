# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex annotate: the instructions and source lines of a sampled function
with their shares of the samples, as perf annotate --stdio shows them.

The workload (tests/workload/annwork.c) spends its time in hot(), on two
source lines marked HOT-A and HOT-B.  On the same file (recorded by perfex
and by perf) every instruction's percentage and every line of the -l
summary equal perf annotate's, for each --percent-type: both tools share
out the same samples, and print them to two decimals.  What perf prints
between the rows (objdump's numbering of the source context, which is off
in perf 6.1, and its spelling of symbol names in jump targets) is not
compared.
"""
import json
import os
import re
import subprocess

from pctest import case, check, perfex, run_cases, skip, EXIT, BUILD, TOP
from sampletools import (PERF, both_files, cleanup, record, require_perf,
                         tmpfile)
from pctest import require_root

ANNWORK = os.path.join(BUILD, "tests", "workload", "annwork")
SOURCE = os.path.join(TOP, "tests", "workload", "annwork.c")
# About 0.3 s of CPU: some 1200 samples at 4 kHz, however loaded the
# machine is (cpu-clock counts the workload's own time).
WORKLOAD = ["-e", "cpu-clock", "-F", "4000", "--", ANNWORK, "60000000"]
PERCENT_TYPES = ["local-period", "global-period", "local-hits", "global-hits"]

ROW = re.compile(r"^\s+([\d.]+) :\s+([0-9a-f]+):\s+(\S.*)$")
SUMMARY = re.compile(r"^\s+([\d.]+) (\S+:\d+)$")


def marked_lines():
    """The line numbers of HOT-A and HOT-B in the workload's source."""
    with open(SOURCE) as f:
        lines = f.read().splitlines()
    return [i + 1 for i, l in enumerate(lines) if "/* HOT-" in l]


def rows(text):
    """{address: percent text} of a --stdio annotation."""
    out = {}
    for l in text.splitlines():
        m = ROW.match(l)
        if m:
            out[int(m.group(2), 16)] = m.group(1)
    return out


def summary(text):
    return [(m.group(1), m.group(2)) for m in map(SUMMARY.match,
                                                   text.splitlines()) if m]


def header(text):
    return [l for l in text.splitlines() if l.startswith(" Percent |")]


def perf_annotate(path, *args):
    r = subprocess.run([PERF, "annotate", "-i", path, "--stdio", *args],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "perf annotate failed: " + r.stderr[-1000:])
    return r.stdout


def ours(path, *args):
    r = perfex("annotate", "-i", path, *args)
    check(r.returncode == 0, r)
    return r.stdout


_files = []


def files():
    """(perfex's recording, perf's recording) of the workload, made once."""
    if not _files:
        _files.extend(both_files("ann", *WORKLOAD))
    return _files


def compare(path, *args):
    mine, theirs = ours(path, "hot", *args), perf_annotate(path, "hot", *args)
    a, b = rows(mine), rows(theirs)
    check(a and a == b, (args, sorted(set(a.items()) ^ set(b.items()))[:10]))
    check(header(mine) == header(theirs), (header(mine), header(theirs)))
    return mine


def block_of(text, symbol):
    """The annotation of SYMBOL among the blocks of every function."""
    blocks = text.split(" Percent |")
    found = [b for b in blocks if re.search(r"^\s+:.* [0-9a-f]{16} <%s>:$"
                                            % symbol, b, re.M)]
    check(len(found) == 1, (symbol, len(found)))
    return " Percent |" + found[0]


@case
def percentages_equal_perfs():
    for path in files():
        for pt in ["local-period", "local-hits"]:
            compare(path, "--percent-type", pt)


@case
def global_percentages():
    """Of the whole file's samples.  perf 6.1 counts only the named
    symbol's in the global total when a symbol is named (so global equals
    local there), and prints 0.00 for every global-hits row: the period is
    compared with perf's annotation of every function, the hits with the
    sample counts."""
    for path in files():
        mine = ours(path, "--percent-type", "global-period", "hot")
        theirs = block_of(perf_annotate(path, "--percent-type",
                                        "global-period"), "hot")
        check(rows(mine) and rows(mine) == rows(theirs),
              sorted(set(rows(mine).items()) ^ set(rows(theirs).items()))[:9])
        check(header(mine) == header(theirs), (header(mine), header(theirs)))
        total = len(subprocess.run([PERF, "script", "-i", path, "-F", "ip"],
                                   capture_output=True, text=True,
                                   timeout=120).stdout.split())
        r = perfex("annotate", "-i", path, "hot", "-j", "--percent-type",
                   "global-hits")
        check(r.returncode == 0, r)
        for i in json.loads(r.stdout)["annotations"][0]["instructions"]:
            check(abs(i["percent"] - 100.0 * i["samples"] / total) < 1e-3,
                  (i, total))


@case
def one_block_per_event():
    """Two events: hot() annotated for each, in the order of the file's
    events, as perf annotates them (without an event group)."""
    require_root()
    require_perf()
    path = tmpfile("two.data")
    r = record(path, "-e", "cpu-clock", "-e", "task-clock", "-F", "2000",
               "--", ANNWORK, "40000000")
    check(r.returncode == 0, r.stderr)
    mine, theirs = ours(path, "hot"), perf_annotate(path, "hot")
    check(len(header(mine)) == 2 and header(mine) == header(theirs),
          (header(mine), header(theirs)))
    pct = [l.split(":")[0] for l in mine.splitlines() if ROW.match(l)]
    check(pct == [l.split(":")[0] for l in theirs.splitlines() if ROW.match(l)],
          "the rows' percentages differ")


@case
def line_summary_equals_perfs():
    for path in files():
        mine = compare(path, "-l")
        theirs = perf_annotate(path, "-l", "hot")
        check(summary(mine) and summary(mine) == summary(theirs),
              (summary(mine), summary(theirs)))


@case
def two_hot_lines():
    """The marked lines hold most of hot()'s samples, in the JSON lines and
    in the -l summary alike."""
    a, b = marked_lines()
    path = files()[0]
    r = perfex("annotate", "-i", path, "--symbol", "hot", "-j")
    check(r.returncode == 0, r)
    doc = json.loads(r.stdout)
    (ann,) = doc["annotations"]
    check(ann["symbol"] == "hot" and ann["event"] == "cpu-clock", ann)
    check(ann["dso"] == ANNWORK, ann["dso"])
    insns = ann["instructions"]
    # Every sample of the function lands on one of its instructions, and
    # the lines sum their instructions.
    check(sum(i["samples"] for i in insns) == ann["samples"] > 100, ann["samples"])
    check(sum(i["period"] for i in insns) == ann["period"], ann["period"])
    lines = {(os.path.basename(l["file"]), l["line"]): l for l in ann["lines"]}
    check(sum(l["samples"] for l in lines.values()) == ann["samples"], lines)
    hot = lines[("annwork.c", a)]["percent"] + lines[("annwork.c", b)]["percent"]
    # The loop's other lines (the counter, the branch) take a few percent.
    check(hot > 75, (hot, ann["lines"]))
    top = [name for pct, name in summary(ours(path, "-l", "hot"))[:2]]
    check(sorted(top) == sorted(["annwork.c:%d" % a, "annwork.c:%d" % b]), top)


@case
def json_instructions():
    path = files()[0]
    r = perfex("annotate", "-i", path, "-j", "--percent-type", "local-hits",
               "hot")
    check(r.returncode == 0, r)
    doc = json.loads(r.stdout)
    check(doc["schema_version"] == 1 and doc["percent_type"] == "local-hits",
          doc.keys())
    ann = doc["annotations"][0]
    insns = ann["instructions"]
    check(insns[0]["addr"] == ann["start"], (insns[0], ann["start"]))
    for x, y in zip(insns, insns[1:]):
        check(x["addr"] + len(x["bytes"].split()) == y["addr"], (x, y))
    # The loop's back edge names its target inside hot().
    back = [i for i in insns if i.get("target_symbol") == "hot" and
            i["target"] < i["addr"]]
    check(back and back[0]["operands"].endswith(
        "<hot+0x%x>" % back[0]["target_offset"]), back)
    text = rows(ours(path, "--percent-type", "local-hits", "hot"))
    for i in insns:
        pct = 100.0 * i["samples"] / ann["samples"]
        check(abs(i["percent"] - pct) < 1e-3, (i, pct))
        check("%.2f" % pct == text[i["addr"]], (i, text[i["addr"]]))
    check(insns[0]["file"] == SOURCE, insns[0])


@case
def stdio2_layout():
    path = files()[1]
    mine = ours(path, "--stdio2", "hot")
    r = subprocess.run([PERF, "annotate", "-i", path, "--stdio2", "hot"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, r.stderr)
    # The percentages shown (only where samples are) are perf's.
    pct = re.compile(r"^\s*(\d+\.\d\d)\s")
    a = sorted(m.group(1) for m in map(pct.match, mine.splitlines()) if m)
    b = sorted(m.group(1) for m in map(pct.match, r.stdout.splitlines()) if m)
    check(a and a == b, (a, b))
    check(mine.splitlines()[:2] == r.stdout.splitlines()[:2],
          (mine[:300], r.stdout[:300]))
    check(re.search("\u2191 j\\w+\\s+[0-9a-f]+$", mine, re.M), mine)


@case
def every_function_and_report_pointer():
    """Without a symbol every function with samples (that has a file);
    perfex report --annotate SYMBOL is perfex annotate SYMBOL."""
    path = files()[0]
    r = perfex("annotate", "--stdio", "--kallsyms", "/proc/kallsyms",
               "--no-demangle", "-i", path)
    check(r.returncode == 0, r)
    check(any("Disassembly of annwork for cpu-clock" in l
              for l in header(r.stdout)), r.stdout[:500])
    r2 = perfex("report", "-i", path, "--annotate", "hot")
    check(r2.returncode == 0, r2)
    check(r2.stdout == ours(path, "hot"), r2.stdout[:500])


@case
def no_objdump_needed():
    """Disassembled in-process: no objdump (nor anything else) on PATH."""
    path = files()[0]
    env = dict(os.environ, PATH="/nonexistent")
    r = perfex("annotate", "-i", path, "hot", env=env)
    check(r.returncode == 0 and rows(r.stdout), r)
    check(rows(r.stdout) == rows(ours(path, "hot")), "differs without PATH")


@case
def errors():
    path = files()[0]
    r = perfex("annotate", "-i", path, "no_such_function")
    check(r.returncode == EXIT["target"], r)
    check(r.stderr.startswith("perfex: no samples of 'no_such_function' in '%s'"
                              % path) and "hint: perfex report" in r.stderr,
          r.stderr)
    missing = tmpfile("missing.data")
    r = perfex("annotate", "-i", missing)
    check(r.returncode == EXIT["io"], r)
    check(missing in r.stderr, r.stderr)
    r = perfex("annotate", "-i", path, "--percent-type", "local")
    check(r.returncode == EXIT["usage"], r)
    check("local-period" in r.stderr, r.stderr)
    r = perfex("annotate", "-i", path, "hot", "other")
    check(r.returncode == EXIT["usage"] and "'other'" in r.stderr, r)


try:
    run_cases()
finally:
    cleanup()
