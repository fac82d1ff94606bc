#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex diff: perf diff's table for the same files (perfex's and perf's
recordings; every compute mode, -o, -b, -p, -F, --sort, three files, the
default files), the noise estimate (same-workload pairs, a slowed-down
function), JSON, the folded differences and the differential flame graph.

Allowed difference from perf, with its reason: kernel functions with
several names at one address (__x64_sys_getppid / __ia32_sys_getppid)
are named by our symbol table's rule, which may pick another alias than
perf's (tests/cli/test_report_compat.py says the same of perf report);
such [k] rows must agree in everything but the name."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import xml.dom.minidom

from pctest import (BUILD, EXIT, PERFEX, case, check, perfex, require_root,
                    run_cases, skip, work)
from sampletools import PERF, both_files, cleanup, record, tmpfile

SYNTH = os.path.join(BUILD, "examples", "synth-profile")
DIFFWORK = os.path.join(BUILD, "tests", "workload", "diffwork")
WEIGHTS = ["alpha=30", "beta=20", "gamma=10", "delta=5", "eps=1", "zeta=3",
           "eta=2", "theta=1"]


def run(cmd, cwd=None):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                       cwd=cwd)
    check(r.returncode == 0, (cmd, r.stderr[-1000:]))
    return r.stdout


def parse(text):
    """(preamble, titles, widths, rows) per event; a row is its cells."""
    lines, tables, pre, i = text.splitlines(), [], [], 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("# ........"):
            widths = [len(d) for d in re.findall(r"\.+", line[2:])]
            titles = re.split(r" {2,}", lines[i - 1][2:].strip())
            check(len(titles) == len(widths), (lines[i - 1], line))
            rows = []
            i += 2
            while i < len(lines) and lines[i].strip():
                row, pos, cells = lines[i], 0, []
                for w in widths:
                    cells.append(row[pos:pos + 2 + w].strip())
                    pos += w + 2
                cells[-1] = row[pos - widths[-1] - 2:].strip()
                rows.append(cells)
                i += 1
            tables.append((pre[:-1], titles, widths, rows))
            pre = []
            continue
        pre.append(line)
        i += 1
    return tables


def compare(ours, theirs, args):
    a, b = parse(ours), parse(theirs)
    check(len(a) == len(b) and a, (args, ours, theirs))
    for (pa, ta, wa, ra), (pb, tb, wb, rb) in zip(a, b):
        check(pa == pb, (args, pa, pb))
        check(ta == tb, (args, ta, tb))
        check(len(ra) == len(rb), (args, ours, theirs))
        same_names = True
        for x, y in zip(ra, rb):
            for j, title in enumerate(ta):
                if x[j] == y[j]:
                    continue
                # A kernel alias: the same row under another name.
                check(title == "Symbol" and x[j].startswith("[k] ") and
                      y[j].startswith("[k] "), (args, title, x, y))
                same_names = False
        for j, title in enumerate(ta):
            if title != "Symbol" or same_names:
                check(wa[j] == wb[j], (args, title, wa[j], wb[j]))


ARGS = [
    [],
    ["-c", "delta"],
    ["-c", "delta-abs"],
    ["-c", "ratio"],
    ["-c", "wdiff:2,3"],
    ["-c", "delta", "-p", "-F"],
    ["-c", "ratio", "--formula", "--period"],
    ["-b"],
    ["--baseline-only", "-c", "ratio"],
    ["-o", "0"],
    ["-s", "sym"],
    ["-s", "dso"],
    ["-s", "comm"],
    ["--sort", "dso,sym", "--compute", "delta"],
]

ARGS3 = [
    [],
    ["-o", "2"],
    ["--order", "0"],
    ["-c", "ratio", "-o", "2"],
    ["-c", "wdiff:1,2", "-o", "2"],
    ["-c", "delta", "-p", "-F"],
]


def recordings(name, loops):
    """perfex's and perf's recordings of pcwork with each loop count."""
    files = []
    for i, n in enumerate(loops):
        files.append(both_files("%s%d" % (name, i), "-e", "cpu-clock", "-F",
                                "999", "--", work(), "loop", str(n),
                                "clockspin", "30", "getppid", "3000"))
    return [f[0] for f in files], [f[1] for f in files]


@case
def tables_as_perf_diff():
    ours, theirs = recordings("two", [20000000, 40000000])
    # perf's files with every form; ours (read by both the same way) with
    # the first few.
    for files, forms in ((theirs, ARGS), (ours, ARGS[:5])):
        for args in forms:
            compare(run([PERFEX, "diff", "--no-noise", *args, *files]),
                    run([PERF, "diff", *args, *files]), args)


@case
def three_files_as_perf_diff():
    ours, theirs = recordings("three", [20000000, 40000000, 10000000])
    for files in (ours, theirs):
        for args in ARGS3:
            out = run([PERFEX, "diff", "--no-noise", *args, *files])
            compare(out, run([PERF, "diff", *args, *files]), args)
            check("# Data files:" in out and "#  [0] %s (Baseline)" % files[0]
                  in out, out)


@case
def default_files():
    require_root()
    d = tempfile.mkdtemp(prefix="pc-diff-")
    try:
        for n in (20000000, 30000000):
            # perfex record keeps the earlier perf.data as perf.data.old.
            r = subprocess.run([PERFEX, "record", "-q", "--", work(), "loop",
                                str(n)], cwd=d, capture_output=True,
                               text=True, timeout=120)
            check(r.returncode == 0, r.stderr)
        check(os.path.exists(os.path.join(d, "perf.data.old")), os.listdir(d))
        both = run([PERFEX, "diff", "perf.data.old", "perf.data"], cwd=d)
        check(run([PERFEX, "diff"], cwd=d) == both)
        check(run([PERFEX, "diff", "perf.data"], cwd=d) == both)
        r = subprocess.run([PERFEX, "diff", "perf.data", "nothing.data"],
                           cwd=d, capture_output=True, text=True, timeout=60)
        check(r.returncode == EXIT["io"] and
              "cannot open 'nothing.data'" in r.stderr, r)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def synth(name, seed, samples, weights, *flags):
    if not os.access(SYNTH, os.X_OK):
        skip("%s is not built (make tests)" % SYNTH)
    path = tmpfile(name)
    run([SYNTH, *flags, path, str(seed), str(samples), *weights])
    return path


def diff_json(base, new, *args):
    out = run([PERFEX, "diff", "-j", "--kallsyms", base + ".kallsyms", *args,
               base, new])
    return json.loads(out)


def flagged(doc):
    return [r["sym"] for r in doc["events"][0]["rows"]
            if r["changes"][1] and r["changes"][1]["changed"]]


BINOMIAL = ("--noise-blocks", "0", "--min-change", "0")


@case
def same_workload_pairs_flag_nothing():
    # 100 pairs of profiles drawn from one distribution (8 functions,
    # 20,000 independent samples each): every difference is sampling
    # noise, and the noise test is made for at most 5 % of such pairs to
    # mark anything (Bonferroni over the rows).  The seeds fix the draws,
    # so the counts are the same in every run.  The binomial model alone
    # (its exact rate here is 4.6 %, by a simulation of the same test; 500
    # pairs of these files marked 4.0 %) marks 6 of these 100; the default
    # model (16 time blocks a file, never below the binomial variance,
    # Student's t of the blocks' degrees of freedom) is more cautious
    # still: 2.  The bound for each is the 99th percentile of
    # Binomial(100, 0.05), 11: a test made for 5 % passes it, one that
    # marks more often (no correction for the rows: 32 %; a sigma too
    # small by a third: 41 %, by the same simulation) does not.
    hits, binomial = [], []
    for i in range(100):
        a = synth("same-a", 2 * i + 1, 20000, WEIGHTS)
        b = synth("same-b", 2 * i + 2, 20000, WEIGHTS)
        doc = diff_json(a, b)
        check([f["blocks"] for f in doc["events"][0]["files"]] == [16, 16],
              doc["events"][0]["files"])
        if flagged(doc):
            hits.append((i, flagged(doc)))
        if flagged(diff_json(a, b, *BINOMIAL)):
            binomial.append(i)
    check(len(hits) == 2, hits)
    check(len(binomial) == 6, binomial)
    # No mark, no '*': the table says the same.
    a = synth("same-a", 1, 20000, WEIGHTS)
    b = synth("same-b", 2, 20000, WEIGHTS)
    check("* " not in run([PERFEX, "diff", "--kallsyms", a + ".kallsyms",
                           a, b]))


@case
def bursts_are_not_independent_draws():
    # The same pairs, but each function drawn keeps the next 20 samples
    # (synth-profile -b 20): 1,000 independent draws a file, not 20,000,
    # so the binomial variance is 20 times too small, and the binomial
    # model marks nearly every pair (39 of 40 of these).  The blocks see
    # the spread and mark 2 of these 40: within the bound of 6 (the 99.6th
    # percentile of Binomial(40, 0.05)).
    hits, binomial = [], []
    for i in range(40):
        a = synth("burst-a", 2 * i + 3, 20000, WEIGHTS, "-b", "20")
        b = synth("burst-b", 2 * i + 4, 20000, WEIGHTS, "-b", "20")
        if flagged(diff_json(a, b)):
            hits.append(i)
        if flagged(diff_json(a, b, *BINOMIAL)):
            binomial.append(i)
    check(len(hits) <= 6 and len(binomial) >= 30, (hits, binomial))


@case
def noise_models():
    a = synth("model-a", 5, 20000, WEIGHTS)
    b = synth("model-b", 6, 20000, WEIGHTS)
    at = synth("model-at", 5, 20000, WEIGHTS, "-T")
    bt = synth("model-bt", 6, 20000, WEIGHTS, "-T")
    blocks = diff_json(a, b)
    binomial = diff_json(a, b, "--noise-blocks", "0")
    untimed = diff_json(at, bt)
    # Files without the samples' time range: the binomial model, as
    # --noise-blocks 0 (the draws are the same).
    check(untimed["events"][0]["rows"] == binomial["events"][0]["rows"],
          untimed)
    for doc, n in ((blocks, 16), (binomial, 0), (untimed, 0),
                   (diff_json(a, b, "--noise-blocks", "5"), 5)):
        ev = doc["events"][0]
        check([f["blocks"] for f in ev["files"]] == [n, n], ev["files"])
    # The blocks' estimate is never below the binomial one; a row whose
    # blocks' spread is larger has its degrees of freedom, t > z.
    for x, y in zip(blocks["events"][0]["rows"],
                    binomial["events"][0]["rows"]):
        cx, cy = x["changes"][1], y["changes"][1]
        check(x["sym"] == y["sym"] and cx["noise"] >= cy["noise"] - 1e-4 and
              cy["df"] is None, (x, y))
        if cx["df"] is not None:
            check(cx["df"] >= 2 and cx["df"] % 2 == 0, cx)
    check(any(r["changes"][1]["df"] for r in blocks["events"][0]["rows"]),
          blocks)
    # Few samples: blocks merged, 50 samples a block at least, down to 4;
    # under 200 samples the binomial model.
    for samples, n in ((400, 8), (250, 5), (199, 0)):
        a = synth("few-a", 7, samples, WEIGHTS)
        b = synth("few-b", 8, samples, WEIGHTS)
        ev = diff_json(a, b)["events"][0]
        check([f["blocks"] for f in ev["files"]] == [n, n], (samples, ev))


@case
def minimum_change():
    # A small row doubling in 100,000 samples (0.2 % to 0.4 %): beyond the
    # noise (about 0.07 points), under the 0.5 points a mark needs by
    # default.
    big = ["alpha=600", "beta=300", "gamma=98"]
    a = synth("min-a", 31, 100000, big + ["tiny=2"])
    b = synth("min-b", 32, 100000, big + ["tiny=4"])
    doc = diff_json(a, b)
    check(doc["min_change"] == 0.5 and "tiny" not in flagged(doc), doc)
    row = [r for r in doc["events"][0]["rows"] if r["sym"] == "tiny"][0]
    check(0.1 < row["changes"][1]["delta"] < 0.5 and
          row["changes"][1]["delta"] > row["changes"][1]["noise"], row)
    doc = diff_json(a, b, "--min-change", "0")
    check(doc["min_change"] == 0 and "tiny" in flagged(doc), doc)
    check("tiny" in flagged(diff_json(a, b, "--min-change", "0.1")))
    check("tiny" not in flagged(diff_json(a, b, "--min-change", "0.5")))


@case
def slowed_function_is_flagged():
    # alpha takes 10 % longer: 33 instead of 30 of every 72 units.
    slow = ["alpha=33"] + WEIGHTS[1:]
    for i in range(10):
        a = synth("slow-a", 1000 + i, 20000, WEIGHTS)
        b = synth("slow-b", 2000 + i, 20000, slow)
        doc = diff_json(a, b)
        check("alpha" in flagged(doc), (i, doc["events"][0]["rows"][:3]))
        row = [r for r in doc["events"][0]["rows"] if r["sym"] == "alpha"][0]
        check(row["changes"][1]["delta"] > row["changes"][1]["noise"], row)
        text = run([PERFEX, "diff", "--kallsyms", a + ".kallsyms", a, b])
        check(re.search(r"\* \d+\.\d\d%\s+\[kernel.kallsyms\]\s+\[k\] alpha$",
                        text, re.M), text)


def diffwork_pair(name, new_args):
    """A recording of diffwork and one of diffwork NEW_ARGS, and their
    diff as JSON.  -F 20000 and 1,500 rounds (about 1.8 s of CPU) give
    about 36,000 samples a file."""
    if not os.access(DIFFWORK, os.X_OK):
        skip("%s is not built (make tests)" % DIFFWORK)
    base, new = tmpfile(name + "-a.data"), tmpfile(name + "-b.data")
    for path, extra in ((base, []), (new, new_args)):
        r = record(path, "-e", "cpu-clock", "-F", "20000", "-g", "--",
                   DIFFWORK, "1500", *extra, timeout=300)
        check(r.returncode == 0, r.stderr)
    return json.loads(run([PERFEX, "diff", "-j", base, new]))


@case
def recordings_of_one_program():
    # Real recordings of one program (diffwork: four functions taking
    # turns, 40/30/20/10 % of the time): the model is made for at most 5 %
    # of such pairs to have a mark; on this machine, at load average 7-18,
    # it marked none of 20 pairs of bench/diff-noise, with or without two
    # more busy processes (the binomial model of before marked 8 both
    # times), and none of the 30 first pairs of this test run 30 times
    # (bench/README.md, "diff-noise").  A pair with a mark is
    # recorded again, three pairs at most: assuming only the 5 % and
    # independent pairs, the test fails with a chance of at most 0.05^3 =
    # 1.25e-4.
    require_root()
    marked = []
    for attempt in range(3):
        doc = diffwork_pair("same", [])
        ev = doc["events"][0]
        check(all(f["blocks"] == 16 for f in ev["files"]), ev["files"])
        if not flagged(doc):
            return
        marked.append([(r["sym"], r["changes"][1]) for r in ev["rows"]
                       if r["changes"][1] and r["changes"][1]["changed"]])
    check(False, marked)


@case
def slowed_function_is_flagged_in_recordings():
    # The same with alpha 10 % slower (44 units instead of 40 of 100): its
    # share grows by 2.3 points (40 % to 42.3 %).  With about 36,000
    # samples a file the binomial standard deviation of the change is
    # 0.37 points, and the noise about 3.5 of those (t of the blocks'
    # degrees of freedom for 20-40 rows): 1.3 points, so the change is
    # 2.8 standard deviations beyond it and a pair misses it with a
    # chance of about 0.3 % (bench/diff-noise: 40 of 40 marked; this test
    # run 30 times: 30 of 30 at the first pair, the change 2.0-2.5 points
    # against a noise of 1.1-1.2).  A pair that misses is recorded again,
    # three pairs at most: the test fails with a chance of about 0.003^3,
    # and a broken model (no mark ever) fails it always.  Together with
    # the test above the file's real recordings fail a sound tree with a
    # chance under 2e-4.
    require_root()
    rows = []
    for attempt in range(3):
        doc = diffwork_pair("slow", ["alpha=44"])
        if "alpha" in flagged(doc):
            row = [r for r in doc["events"][0]["rows"]
                   if r["sym"] == "alpha"][0]
            check(row["changes"][1]["delta"] > 1.5, row)
            return
        rows.append(doc["events"][0]["rows"][:4])
    check(False, rows)


@case
def json_is_the_table():
    a = synth("json-a", 7, 5000, WEIGHTS)
    b = synth("json-b", 8, 5000, ["alpha=40"] + WEIGHTS[1:])
    doc = diff_json(a, b, "--no-demangle")
    text = run([PERFEX, "diff", "--kallsyms", a + ".kallsyms", a, b])
    ev = doc["events"][0]
    check(ev["event"] == "cpu-clock" and doc["compute"] == "delta-abs", doc)
    check([f["samples"] for f in ev["files"]] == [5000, 5000], ev["files"])
    rows = parse(text)[0][3]
    check(len(rows) == len(ev["rows"]), (rows, ev["rows"]))
    for cells, row in zip(rows, ev["rows"]):
        check(cells[-1] == "[k] " + row["sym"], (cells, row))
        base, new = row["files"]
        check(cells[0] == "%.2f%%" % base["share"], (cells, row))
        check(abs(float(cells[1][:-1]) - (new["share"] - base["share"]))
              <= 0.006, (cells, row))
        # The JSON's 4 decimals, rounded again, may differ by one in the
        # last place from the table's 2.
        mark = "* " if row["changes"][1]["changed"] else ""
        check(cells[2].startswith(mark) and abs(float(
            cells[2][len(mark):-1]) - row["changes"][1]["noise"]) <= 0.006,
            (cells, row))
        for f in row["files"]:
            lo, hi = f["interval"]
            check(lo <= f["sample_share"] <= hi and hi - lo < 5, f)
    check(sum(r["files"][0]["samples"] for r in ev["rows"]) == 5000, ev)


@case
def folded_differences():
    a = synth("fold-a", 11, 3000, WEIGHTS)
    b = synth("fold-b", 12, 4000, WEIGHTS[:4])
    doc = diff_json(a, b)
    out = run([PERFEX, "diff", "--folded", "--kallsyms", a + ".kallsyms",
               a, b])
    counts = {}
    for line in out.splitlines():
        m = re.match(r"(\S+) (\d+) (\d+)$", line)
        check(m, line)
        counts[m.group(1).split(";")[-1]] = (int(m.group(2)), int(m.group(3)))
    check(sum(c[0] for c in counts.values()) == 3000, counts)
    check(sum(c[1] for c in counts.values()) == 4000, counts)
    for row in doc["events"][0]["rows"]:
        want = tuple(f["samples"] if f else 0 for f in row["files"])
        check(counts[row["sym"] + "_[k]"] == want, (row, counts))
    # Functions only the base has: 0 samples in the new column.
    check(counts["eps_[k]"][1] == 0 and counts["eps_[k]"][0] > 0, counts)


@case
def differential_flame_graph():
    a = synth("flame-a", 21, 20000, WEIGHTS)
    b = synth("flame-b", 22, 20000, ["alpha=45"] + WEIGHTS[1:])
    svg = tmpfile("diff.svg")
    out = run([PERFEX, "diff", "--flame", svg, "--kallsyms", a + ".kallsyms",
               a, b])
    check("# Event 'cpu-clock'" in out, out)
    doc = xml.dom.minidom.parse(svg)
    frames = {}
    for g in doc.getElementsByTagName("g"):
        title = g.getElementsByTagName("title")[0].firstChild.data
        fill = g.getElementsByTagName("rect")[0].getAttribute("fill")
        frames[title.split(" (")[0]] = (title, fill)
    # alpha grew: red, at full strength (the largest change); beta shrank.
    check(frames["alpha_[k]"][1] == "rgb(255,55,55)", frames["alpha_[k]"])
    check(re.match(r"rgb\((\d+),\1,255\)$", frames["beta_[k]"][1]),
          frames["beta_[k]"])
    check("base " in frames["alpha_[k]"][0], frames["alpha_[k]"])
    # Widths are the new file's samples.
    check(frames["all"][0].startswith("all (20000 samples"), frames["all"])


@case
def bad_options():
    rows = [
        (["-c", "median"], "option '-c' expects delta, delta-abs, ratio"),
        (["-c", "wdiff:1"], "option '-c' expects two non-zero weights"),
        (["--compute", "wdiff:0,2"], "option '--compute' expects two"),
        (["-o", "2", "a", "b"], "option '-o' names file 2"),
        (["-s", "srcline"], "option '-s' does not take srcline"),
        (["-s", "bogus"], "option '-s': unknown or repeated sort key"),
        (["-j", "--folded"], "--json and --folded exclude each other"),
        (["--noise-blocks", "3"], "option '--noise-blocks' expects 0 or a"),
        (["--noise-blocks", "101"], "option '--noise-blocks' expects 0 or"),
        (["--min-change", "-1"], "option '--min-change' expects percentage"),
        (["--min-change", "x"], "option '--min-change' expects percentage"),
    ]
    for args, msg in rows:
        r = perfex("diff", *args)
        check(r.returncode == EXIT["usage"], (args, r))
        check(r.stderr.startswith("perfex: " + msg), (args, r.stderr))
    # The keys diff takes (perfex report's hint names srcline too).
    r = perfex("diff", "-s", "bogus")
    check("\nhint: sort keys are comm, dso, sym (symbol), pid, tid, cpu\n"
          in r.stderr, r.stderr)


try:
    run_cases()
finally:
    cleanup()
