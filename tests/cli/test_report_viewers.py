# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The viewers people open profiles in, tested in a real browser: perfex
report --speedscope checked against the schema the speedscope package
ships and opened in the speedscope app in headless chromium, whose
Sandwich view must show the report's own self and total per function;
--gecko's structure (the Firefox Profiler's format as perf's gecko script
writes it) checked against the report's folded stacks; and the SVG flame
graph (--flame) zoomed by a click and searched through its prompt, in
chromium too.  Browser cases skip with the reason where chromium, its
driver or the npm app is missing (scripts/install-deps installs them)."""
import json
import os
import re
import subprocess
import time

import browserhelp as bh
from pctest import (EXIT, case, check, perfex, require_root, require_tracefs,
                    run_cases, skip, work)
from sampletools import TP, cleanup, tmpfile

GETPID = "syscalls:sys_enter_getpid"
# The workload's calls of each thread, by profile: getppid in main and
# in two threads, getpid in main.
CALLS = [1200, 300, 300, 800]
# The leak checker's helper task makes getppid calls and is a thread of
# its own: the workloads run without it, so that the cpu-clock recording
# has one thread.  The sanitizers' runtime still makes a getpid call or
# two of its own: the workload's are the samples in libc's syscall().
NO_LEAKS = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
# cpu-clock samples every 100 us: every weight is 100000 ns.
PERIOD_NS = 100000

_files = {}


def record(out, *args):
    r = perfex("record", "-q", "-m", "256", "-o", out, *args, env=NO_LEAKS)
    check(r.returncode == 0, r.stderr)
    return out


def tracepoint_file():
    """Two events, three threads: getppid in main (1200) and in two
    threads (300 each), getpid in main (800); one sample per call."""
    if "tp" not in _files:
        require_root()
        require_tracefs()
        _files["tp"] = record(tmpfile("viewers-tp.data"), "-g", "-c", "1",
                              "-e", TP + "," + GETPID, "--", work(),
                              "getppid", "1200", "getpid", "800",
                              "threads", "2", "300")
    return _files["tp"]


def clock_file():
    """cpu-clock of a getppid loop: user and kernel frames, one thread."""
    if "clock" not in _files:
        require_root()
        _files["clock"] = record(tmpfile("viewers-clock.data"), "-g",
                                 "-e", "cpu-clock", "-c", str(PERIOD_NS),
                                 "--", work(), "getppid", "1500000")
    return _files["clock"]


def export(path, *args):
    """perfex report's files for the viewers: (speedscope, gecko) JSON."""
    base = tmpfile(os.path.basename(path) + "-".join(("",) + args))
    ss, gk = base + ".speedscope.json", base + ".gecko.json"
    r = perfex("report", "-i", path, "--speedscope", ss, "--gecko", gk, *args)
    check(r.returncode == 0, r.stderr)
    with open(ss) as f:
        speedscope = json.load(f)
    with open(gk) as f:
        gecko = json.load(f)
    return speedscope, gecko, ss


def report_rows(path, *args):
    """perfex report -j's rows of each event, by event name."""
    r = perfex("report", "-i", path, "-j", *args)
    check(r.returncode == 0, r.stderr)
    return {e["event"]: e["rows"] for e in json.loads(r.stdout)["events"]}


def folded(path, *args):
    """perfex report --folded as {(comm, frame, ...): samples}; the
    kernel's "_[k]" mark taken off (the viewers mark the ring apart)."""
    r = perfex("report", "-i", path, "--folded", *args)
    check(r.returncode == 0, r.stderr)
    stacks = {}
    for line in r.stdout.splitlines():
        text, n = line.rsplit(" ", 1)
        key = tuple(re.sub(r"_\[k\]$", "", f) for f in text.split(";"))
        stacks[key] = stacks.get(key, 0) + int(n)
    return stacks


def self_and_total(stacks, weight=1):
    """{function: [self, total]} of folded stacks (comm first) whose
    samples weigh @weight: a function's total counts each stack through
    it once, however often it recurs."""
    out = {}
    for key, n in stacks.items():
        frames = key[1:]
        for f in set(frames):
            out.setdefault(f, [0, 0])[1] += n * weight
        out.setdefault(frames[-1], [0, 0])[0] += n * weight
    return out


def workload_calls(stacks):
    """The samples of folded-like @stacks ({(frame...): n}) that are the
    workload's calls: those in libc's syscall()."""
    return sum(n for k, n in stacks.items() if k[-1] == "syscall")


def speedscope_stacks(doc, profile, folded_names=False):
    """A speedscope profile's stacks as {(frame names...): weight};
    @folded_names: an unresolved frame (named by its address) named as
    folded stacks name it, "[DSO]"."""
    names = [f["name"] for f in doc["shared"]["frames"]]
    if folded_names:
        names = ["[%s]" % os.path.basename(f.get("file", "unknown"))
                 if re.match(r"^0x[0-9a-f]{16}$", f["name"]) else f["name"]
                 for f in doc["shared"]["frames"]]
    out = {}
    for stack, w in zip(profile["samples"], profile["weights"]):
        key = tuple(names[i] for i in stack)
        out[key] = out.get(key, 0) + w
    return out


def validate(doc, schema):
    """@doc against @schema with jsonschema: this interpreter's, or
    Debian's python3-jsonschema under /usr/bin/python3."""
    try:
        import jsonschema
    except ImportError:
        jsonschema = None
    if jsonschema:
        jsonschema.validate(doc, schema)
        return
    if not os.path.exists("/usr/bin/python3"):
        skip("no JSON schema validator (apt-get install python3-jsonschema)")
    r = subprocess.run(
        ["/usr/bin/python3", "-c",
         "import json, sys\n"
         "try:\n import jsonschema\nexcept ImportError:\n sys.exit(3)\n"
         "d = json.load(sys.stdin)\n"
         "jsonschema.validate(d['doc'], d['schema'])\n"],
        input=json.dumps({"doc": doc, "schema": schema}), text=True,
        capture_output=True)
    if r.returncode == 3:
        skip("no JSON schema validator (apt-get install python3-jsonschema)")
    check(r.returncode == 0, r.stderr[-1500:])


# ------------------------------------------------------------ speedscope

@case
def speedscope_file_follows_the_shipped_schema():
    doc, _, _ = export(tracepoint_file())
    validate(doc, bh.speedscope_schema())
    doc, _, _ = export(clock_file())
    validate(doc, bh.speedscope_schema())
    check(doc["profiles"][0]["unit"] == "nanoseconds", doc["profiles"][0]["unit"])


@case
def speedscope_profiles_are_the_threads_with_exact_weights():
    doc, _, _ = export(tracepoint_file())
    profs = [(p["name"], p["endValue"], sum(p["weights"]), p["unit"],
              workload_calls(speedscope_stacks(doc, p)))
             for p in doc["profiles"]]
    check(doc["activeProfileIndex"] == 0, doc["activeProfileIndex"])
    # By event (the file's order), heaviest thread first; weights add up.
    check([calls for _, _, _, _, calls in profs] == CALLS and
          all(end == w and unit == "none" for _, end, w, unit, _ in profs),
          profs)
    check(all(p[0].startswith("pcwork (pid ") for p in profs), profs)
    check(all(TP in p[0] for p in profs[:3]) and GETPID in profs[3][0],
          profs)
    # Every function's self and total as the report's folded stacks
    # give them, event by event (all threads of one event together).
    for event, idx in ((TP, [0, 1, 2]), (GETPID, [3])):
        want = self_and_total(folded(tracepoint_file(), "--event", event))
        got = {}
        for i in idx:
            for f, st in self_and_total(
                    {("c",) + k: w for k, w in speedscope_stacks(
                        doc, doc["profiles"][i], True).items()}).items():
                got.setdefault(f, [0, 0])
                got[f] = [got[f][0] + st[0], got[f][1] + st[1]]
        check(got == want, (event, got, want))
    # --event keeps one event's threads.
    doc, _, _ = export(tracepoint_file(), "--event", GETPID)
    check([workload_calls(speedscope_stacks(doc, p))
           for p in doc["profiles"]] == [800], doc["profiles"])


def sandwich_rows(b):
    """speedscope's Sandwich table as {name: (total, self)} texts (its
    rows' first two cells are "weight (percent)"; the profile picker's
    table, also in the page, has none)."""
    rows = b.js("""
        var out = [], share = /^\\S+ \\([<>\\d.]+%\\)$/;
        document.querySelectorAll('table tr').forEach(function (tr) {
            var td = tr.querySelectorAll('td');
            if (td.length === 3 && share.test(td[0].textContent) &&
                share.test(td[1].textContent))
                out.push([td[2].textContent, td[0].textContent,
                          td[1].textContent]);
        });
        return out;""")
    return {name: (total, self_) for name, total, self_ in rows}


def all_sandwich_rows(b):
    """Every row of the Sandwich table: it draws only the rows in view,
    so it is scrolled through, a screen at a time."""
    shown = {}
    while True:
        shown.update(sandwich_rows(b))
        moved = b.js("""
            var td = document.querySelector('table tr td'), el = td;
            while (el && !(el.scrollHeight > el.clientHeight &&
                           getComputedStyle(el).overflowY === 'auto'))
                el = el.parentElement;
            if (!el) return false;
            var top = el.scrollTop;
            el.scrollTop = top + el.clientHeight / 2;
            return el.scrollTop !== top;""")
        if not moved:
            return shown
        time.sleep(0.1)		# a frame for the table to draw its rows


def time_ns(text):
    """A speedscope time cell ("12.30ms (45%)") in ns, and the most its
    rounding to two decimals can hide, in ns."""
    m = re.match(r"^([\d.]+)(ns|\u00b5s|ms|s) \(", text)
    check(m, text)
    scale = {"ns": 1, "\u00b5s": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]
    return float(m.group(1)) * scale, 0.005 * scale


@case
def speedscope_app_shows_the_report_self_and_total():
    path = clock_file()
    doc, _, ss = export(path)
    check(len(doc["profiles"]) == 1, [p["name"] for p in doc["profiles"]])
    # Self: the table's rows by symbol.  Total: the weight of the
    # report's folded stacks through the function; folded stacks name an
    # unresolved frame by its DSO, the viewers by its address (as the
    # table does), so those frames are compared by self alone.
    rows = report_rows(path, "--sort", "sym")["cpu-clock"]
    want = {r["sym"]: [r["period"], None] for r in rows}
    for f, (_, total) in self_and_total(folded(path), PERIOD_NS).items():
        if not re.match(r"^\[.*\]$", f):
            want.setdefault(f, [0, None])[1] = total
    loader = bh.write_loader(ss, tmpfile("clock-loader.js"))
    with bh.Browser(height=2400) as b:
        b.open(bh.speedscope_url(loader))
        try:
            b.wait_for("return document.body.innerText.indexOf('pcwork') >= 0")
        except bh.WebDriverError as e:
            check(False, (str(e), b.console()[-5:]))
        b.keys("3")		# the Sandwich view, from the keyboard
        b.wait_for("return document.querySelectorAll('table tr td').length > 0")
        shown = all_sandwich_rows(b)
    for f in shown:
        if f.startswith("0x") and f not in want:
            want[f] = [0, None]		# an unresolved caller
    check(set(shown) == set(want), ("page only", sorted(set(shown) - set(want)),
                                    "report only", sorted(set(want) - set(shown))))
    # A name of two frames (ld.so's _start and the program's, say) is two
    # rows of the page, one cell each, where the report's rows by name
    # and the folded stacks add both: such names are compared by
    # presence alone.
    files = {}
    for fr in doc["shared"]["frames"]:
        files.setdefault(fr["name"], set()).add(fr.get("file"))
    twice = {n for n, f in files.items() if len(f) > 1}
    for name, (total_text, self_text) in shown.items():
        if name in twice:
            continue
        # speedscope prints times with two decimals in the largest unit
        # that fits: the cells equal the report's weights to that digit.
        self_, s_tol = time_ns(self_text)
        check(abs(self_ - want[name][0]) <= s_tol, (name, self_text, want[name]))
        if want[name][1] is not None:
            total, t_tol = time_ns(total_text)
            check(abs(total - want[name][1]) <= t_tol,
                  (name, total_text, want[name]))


@case
def speedscope_app_shows_exact_counts_of_each_thread():
    doc, _, ss = export(tracepoint_file())
    loader = bh.write_loader(ss, tmpfile("tp-loader.js"))
    with bh.Browser(height=1200) as b:
        b.open(bh.speedscope_url(loader))
        b.wait_for("return document.body.innerText.indexOf('pcwork') >= 0")
        b.keys("3")
        for i, prof in enumerate(doc["profiles"]):
            if i:
                b.keys("n")	# the next profile (thread)
            title = b.wait_for(
                "var t = document.body.innerText;"
                "return t.indexOf(arguments[0]) >= 0 && t;", prof["name"])
            check(prof["name"] in title, title)
            want = self_and_total({("c",) + k: w for k, w in
                                   speedscope_stacks(doc, prof).items()})
            # The table of the profile before may still be on the page,
            # or none yet, for a moment after the title changed: read it
            # until it shows this profile's rows (30 s at most).
            deadline = time.monotonic() + 30
            while True:
                b.wait_for(
                    "return document.querySelectorAll('table tr td').length > 0")
                got = {n: [int(s.split(" ")[0].replace(",", "")),
                           int(t.split(" ")[0].replace(",", ""))]
                       for n, (t, s) in sandwich_rows(b).items()}
                if got == want or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            check(got == want, (prof["name"], got, want))
            # And what the workload did: every call one sample.
            check(got["syscall"][0] == CALLS[i], (prof["name"], got))


# ----------------------------------------------------------------- Gecko

def gecko_stacks(thread):
    """A Gecko thread's samples as {(frame names...): samples}, after
    checking that every index points where it must."""
    strings = thread["stringTable"]
    frames = thread["frameTable"]["data"]
    stacks = thread["stackTable"]["data"]
    check(thread["frameTable"]["schema"]["location"] == 0 and
          thread["stackTable"]["schema"] == {"prefix": 0, "frame": 1} and
          thread["samples"]["schema"] == {"stack": 0, "time": 1,
                                          "responsiveness": 2}, thread)
    for f in frames:
        check(0 <= f[0] < len(strings) and f[7] in (0, 1) and len(f) == 9, f)
    for i, (prefix, frame) in enumerate(stacks):
        check(prefix is None or 0 <= prefix < i, (i, prefix))
        check(0 <= frame < len(frames), (i, frame))
    out = {}
    last = -1.0
    for stack, time, resp in thread["samples"]["data"]:
        check(time >= last and resp == 0, (time, last))
        last = time
        names = []
        while stack is not None:
            prefix, frame = stacks[stack]
            names.append(frames[frame])
            stack = prefix
        key = tuple(strings[f[0]] for f in reversed(names))
        out[key] = out.get(key, 0) + 1
    return out


def gecko_name(frame_text):
    """"sym (in dso)" back to the name folded stacks give the frame: the
    symbol, or for an unresolved one (named by its address) "[DSO]"."""
    cut = frame_text.rindex(" (in ")
    name, dso = frame_text[:cut], frame_text[cut + 5:-1]
    if re.match(r"^0x[0-9a-f]{16}$", name):
        return "[%s]" % os.path.basename(dso)
    return name


@case
def gecko_file_has_perfs_fields_and_the_report_stacks():
    _, doc, _ = export(clock_file())
    meta = doc["meta"]
    check(meta["version"] == 24 and meta["presymbolicated"] is True and
          [c["name"] for c in meta["categories"]] == ["User", "Kernel"] and
          all(c["subcategories"] == ["Other"] for c in meta["categories"]),
          meta)
    check(abs(meta["interval"] - PERIOD_NS / 1e6) < 0.05, meta["interval"])
    check(doc["libs"] == [] and doc["processes"] == [] and
          doc["pausedRanges"] == [], list(doc))
    check(len(doc["threads"]) == 1, [t["tid"] for t in doc["threads"]])
    thread = doc["threads"][0]
    check(thread["name"] == "pcwork" and thread["processType"] == "default",
          thread["name"])
    stacks = gecko_stacks(thread)
    want = {}
    for key, n in folded(clock_file()).items():
        want[key[1:]] = want.get(key[1:], 0) + n
    got = {}
    for k, n in stacks.items():
        # Two unresolved frames of a DSO are two frames, but fold alike.
        key = tuple(gecko_name(f) for f in k)
        got[key] = got.get(key, 0) + n
    check(got == want, ("gecko only", {k: n for k, n in got.items() if want.get(k) != n},
                        "folded only", {k: n for k, n in want.items() if got.get(k) != n}))
    # Kernel frames are in the Kernel category, user frames in User.
    cats = {thread["stringTable"][f[0]]: f[7]
            for f in thread["frameTable"]["data"]}
    kernel = [t for t, c in cats.items() if c == 1]
    check(kernel and all("(in [kernel.kallsyms])" in t for t in kernel), cats)
    check(all(c == 0 for t, c in cats.items() if "[kernel.kallsyms]" not in t),
          cats)
    # Nothing in the file points off the machine.
    check("://" not in open(export(clock_file())[2].replace(
        ".speedscope.json", ".gecko.json")).read(), "a URL in the gecko file")


@case
def gecko_keeps_one_event_per_file():
    _, doc, _ = export(tracepoint_file())
    calls = lambda t: workload_calls({tuple(gecko_name(f) for f in k): n
                                      for k, n in gecko_stacks(t).items()})
    counts = [calls(t) for t in doc["threads"]]
    check(counts == CALLS[:3], counts)
    check(len({t["tid"] for t in doc["threads"]}) == 3 and
          len({t["pid"] for t in doc["threads"]}) == 1, doc["threads"])
    _, doc, _ = export(tracepoint_file(), "--event", GETPID)
    counts = [calls(t) for t in doc["threads"]]
    check(counts == CALLS[3:], counts)


@case
def viewer_options_are_checked():
    path = tracepoint_file()
    r = perfex("report", "-i", path, "--pprof", tmpfile("x.pb.gz"),
               "--gecko", tmpfile("x.json"))
    check(r.returncode == EXIT["usage"], r)
    check("--pprof excludes --speedscope and --gecko" in r.stderr, r.stderr)
    r = perfex("report", "-i", path, "--speedscope", "/nonexistent/dir/x.json")
    check(r.returncode == EXIT["io"], r)
    check("cannot create '/nonexistent/dir/x.json'" in r.stderr, r.stderr)
    r = perfex("report", "-i", path, "--gecko")
    check(r.returncode == EXIT["usage"], r)


# ------------------------------------------------------- the flame graph

def flame_frames(b):
    """Every frame of the SVG as the page has it now: name, the data
    span, the drawn x and width, shown or not, fill."""
    return b.js("""
        var out = [];
        document.querySelectorAll('g.f').forEach(function (g) {
            var r = g.querySelector('rect');
            out.push({name: g.querySelector('title').textContent
                            .replace(/ \\([^(]*\\)$/, ''),
                      s: +g.getAttribute('data-s'),
                      e: +g.getAttribute('data-e'),
                      d: +g.getAttribute('data-d'),
                      x: +r.getAttribute('x'), w: +r.getAttribute('width'),
                      shown: g.style.display !== 'none',
                      fill: r.getAttribute('fill')});
        });
        return out;""")


def flame_file():
    svg = tmpfile("viewers-flame.svg")
    r = perfex("report", "-i", clock_file(), "--flame", svg)
    check(r.returncode == 0, r.stderr)
    return svg


@case
def flame_graph_zooms_on_click_in_chromium():
    svg = flame_file()
    with bh.Browser() as b:
        b.open("file://" + svg)
        b.wait_for("return document.querySelectorAll('g.f').length > 0")
        before = flame_frames(b)
        target = next((f for f in before if f["name"] == "syscall"), None)
        check(target, [f["name"] for f in before])
        elements = b.find_all("g.f")
        b.click(elements[before.index(target)])
        after = flame_frames(b)
        width = 1200 - 2 * 10
        span = target["e"] - target["s"]
        for old, new in zip(before, after):
            inside = old["d"] > target["d"] and old["s"] >= target["s"] and \
                old["e"] <= target["e"]
            above = old["d"] <= target["d"] and old["s"] <= target["s"] and \
                old["e"] >= target["e"]
            if old is target or above:
                check(new["shown"] and abs(new["w"] - width) < 0.01, new)
            elif inside:
                want = (old["e"] - old["s"]) * width / span
                check(new["shown"] and abs(new["w"] - want) < 0.01 and
                      abs(new["x"] - (10 + (old["s"] - target["s"]) * width / span))
                      < 0.01, (new, want))
            else:
                check(not new["shown"], new)
        check(any(not f["shown"] for f in after),
              "no frame outside the zoomed one was hidden")
        b.click(b.find("#reset"))
        again = flame_frames(b)
        check(all(abs(a["w"] - o["w"]) < 0.01 and a["shown"]
                  for a, o in zip(again, before)), "Reset Zoom")


def matched_share(frames, pattern):
    """What the search line must report: the share of the samples under
    the drawn frames whose name matches @pattern (nested matches once),
    in percent; and those frames' indices."""
    hit = [i for i, f in enumerate(frames) if re.search(pattern, f["name"])]
    covered, end = 0, -1
    for s, e in sorted((frames[i]["s"], frames[i]["e"]) for i in hit):
        covered += max(0, e - max(s, end))
        end = max(end, e)
    total = frames[0]["e"]		# the root, "all"
    return "Matched: %.2f%%" % (100.0 * covered / total), set(hit)


@case
def flame_graph_search_highlights_what_is_typed():
    svg = flame_file()
    with bh.Browser() as b:
        b.open("file://" + svg)
        b.wait_for("return document.querySelectorAll('g.f').length > 0")
        frames = flame_frames(b)
        check(frames[0]["name"] == "all", frames[0])
        # The Search button, then the prompt typed into: the kernel's
        # frames.
        b.click(b.find("#search"))
        b.alert_type("_\\[k\\]$")
        b.alert_accept()
        want, hit = matched_share(frames, r"_\[k\]$")
        check(hit and len(hit) < len(frames), "no kernel frame to find")
        text = b.js("return document.getElementById('matched').textContent")
        check(text == want, (text, want))
        after = flame_frames(b)
        lit = {i for i, f in enumerate(after) if f["fill"] == "rgb(230,0,230)"}
        check(lit == hit, sorted(lit ^ hit)[:10])
        # Ctrl-F from the keyboard opens it too; a new search clears the
        # old one's colours.
        b.keys("f", modifier="\ue009")
        b.alert_type("^main$")
        b.alert_accept()
        want, hit = matched_share(frames, "^main$")
        text = b.js("return document.getElementById('matched').textContent")
        check(text == want and hit, (text, want))
        after = flame_frames(b)
        lit = {i for i, f in enumerate(after) if f["fill"] == "rgb(230,0,230)"}
        check(lit == hit, [after[i]["name"] for i in lit ^ hit][:10])
        # The workload's own frames: main is under every sample of pcwork.
        pcwork = [f for f in frames if f["name"] == "pcwork" and f["d"] == 1]
        check(pcwork and text != "Matched: 0.00%", (pcwork, text))


run_cases()
cleanup()
