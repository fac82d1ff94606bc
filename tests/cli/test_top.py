# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex top: batch mode (a known hot function tops the table, every
sample taken in is in it, exact counts from a tracepoint, nothing lost), a
library dlopen()ed while top runs named from its samples on, the screen
in a real terminal (tmux: the hot function on top within two refreshes, a
key changes the sort, q quits), and the option errors."""
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time

from pctest import (BUILD, EXIT, PERFEX, case, check, perfex, require_root,
                    require_tracefs, run_cases, skip, work)

TOPWORK = os.path.join(BUILD, "tests", "workload", "topwork")
TOPLIB = os.path.join(BUILD, "tests", "workload", "libtoplib.so")
HEADER = re.compile(r"^perfex top: +([\d.]+) samples/s +kernel: +([\d.]+)% "
                    r"+lost: (\d+) +\[([^,]+), ([^\]]+)\] +(.*)$")
ROW = re.compile(r"^ +([\d.]+)%(?: +(\d+))? +(.*)$")


def tables(text):
    """The tables of a batch run: dicts of header fields, "samples" (taken
    in so far), "unknown" (in no known map) and "rows" (percent,
    samples or None, the key cells' text)."""
    out = []
    for block in text.split("\n\n"):
        lines = block.strip("\n").splitlines()
        if not lines:
            continue
        m = HEADER.match(lines[0])
        check(m, block)
        t = {"rate": float(m.group(1)), "kernel": float(m.group(2)),
             "lost": int(m.group(3)), "event": m.group(4),
             "target": m.group(6), "rows": []}
        m = re.match(r"^samples: (\d+)(?: \((\d+) in no known map)?", lines[1])
        check(m, block)
        t["samples"] = int(m.group(1))
        t["unknown"] = int(m.group(2) or 0)
        check(lines[2].startswith("-----"), block)
        t["columns"] = lines[3].split()
        for line in lines[4:]:
            r = ROW.match(line)
            if r:
                t["rows"].append((float(r.group(1)),
                                  int(r.group(2)) if r.group(2) else None,
                                  r.group(3)))
        out.append(t)
    return out


def start(*args):
    """topwork ARGS..., once it runs (its ready file made); its stdin is a
    pipe (for a wait)."""
    d = tempfile.mkdtemp(prefix="pctop")
    ready = os.path.join(d, "ready")
    w = subprocess.Popen([TOPWORK, "ready", ready] + list(args),
                         stdin=subprocess.PIPE)
    deadline = time.time() + 30
    while not os.path.exists(ready) and time.time() < deadline:
        time.sleep(0.005)
    made = os.path.exists(ready)
    shutil.rmtree(d, ignore_errors=True)
    if not made:
        finish(w)
    check(made, "topwork did not start within 30 s")
    return w


def finish(w):
    if w.poll() is None:
        w.kill()
    w.wait()


def release_after_first_table(top, w, timeout):
    """(first line, the rest of stdout, stderr) of TOP once its first
    table is out (its events open) and workload W, waiting on its stdin,
    is let go.  Read through the text layer (communicate() would skip
    what readline() buffered); a top hung past TIMEOUT s is killed."""
    first = top.stdout.readline()
    check(first.startswith("perfex top:"),
          (first, top.stderr.read() if not first else ""))
    w.stdin.write(b"go\n")
    w.stdin.close()
    timer = threading.Timer(timeout, top.kill)
    timer.start()
    out = top.stdout.read()
    err = top.stderr.read()
    top.wait()
    timer.cancel()
    return first, out, err


@case
def batch_hot_function_tops_the_table():
    """A process spinning in topwork_hot(): it heads every table of -p in
    batch mode (stdout a pipe), every sample taken in is in the table (the
    Samples column adds up to the header's count), none is lost, and top
    ends after -n tables."""
    require_root()
    w = start("hot", "20000")
    try:
        r = perfex("top", "-p", str(w.pid), "-d", "0.5", "-n", "3",
                   "--show-nr-samples", "-F", "1000", timeout=60)
    finally:
        finish(w)
    check(r.returncode == 0, r)
    got = tables(r.stdout)
    check(len(got) == 3, r.stdout)
    for t in got:
        check(t["lost"] == 0, t)
        check(t["target"] == "pid %d" % w.pid, t)
        check(t["columns"] == ["Overhead", "Samples", "Shared", "Object",
                               "Symbol"], t)
        check(t["rows"] and t["rows"][0][2].split() ==
              ["topwork", "[.]", "topwork_hot"], t)
        # Hot loop: the clock read every 2^16 iterations, so all but a
        # few interrupts' samples (well under 10 %) are in the function.
        check(t["rows"][0][0] >= 90.0, t)
        check(sum(row[1] for row in t["rows"]) == t["samples"], t)
    # The tables add up (top does not zero them without -z): the count
    # never falls, and it grows over the run (an interval may take in
    # nothing when the workload got no CPU in its half second).
    check(got[0]["samples"] <= got[1]["samples"] <= got[2]["samples"] and
          got[0]["samples"] < got[2]["samples"], got)


@case
def batch_counts_every_tracepoint_sample():
    """-e syscalls:sys_enter_getppid samples each call (period 1): N
    getppid made after the attach are exactly N samples in the last
    table, which top prints when the process ends; lost 0, and -z and
    the filters -K, -U, -f, --percent-limit, -E do not lose the count of
    samples taken in."""
    require_root()
    require_tracefs()
    n = 20000
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    w = subprocess.Popen([work(), "wait", "getppid", str(n)],
                         stdin=subprocess.PIPE, env=env)
    try:
        # Rings of 256 pages hold every sample of the burst: nothing can
        # be lost even if top is slow to wake.
        top = subprocess.Popen([PERFEX, "top", "-p", str(w.pid), "-e",
                                "syscalls:sys_enter_getppid", "-d", "0.3",
                                "-m", "256", "--stdio", "-s", "comm,sym",
                                "--show-nr-samples"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
        # The first table: the events are open.
        first, out, err = release_after_first_table(top, w, 60)
    finally:
        finish(w)
    check(top.returncode == 0, err)
    got = tables(first + out)
    last = got[-1]
    check(last["event"] == "syscalls:sys_enter_getppid", last)
    check(last["lost"] == 0 and last["samples"] == n, last)
    check(sum(row[1] for row in last["rows"]) == n, last)
    check(last["rows"][0][2].split()[0] == "pcwork", last)
    r = perfex("top", "-p", "1", "-z", "-K", "-U", "-f", "2",
               "--percent-limit", "1.5", "-E", "4", "-n", "1",
               env=dict(os.environ, PERFEX_DRY_RUN="1"))
    check(r.returncode == 0 and r.stdout == "" and r.stderr == "", r)


@case
def dlopened_library_is_named():
    """topwork, released once top has printed its first table (its events
    open), spins 1 s in topwork_hot(), then dlopen()s libtoplib.so and
    spins 1 s of CPU time in its toplib_hot(): toplib_hot() is named from
    the MMAP2 record read live, and at most 1 % of the samples are in no
    known map or unnamed."""
    require_root()
    w = start("wait", "hot", "1000", "dlopen", TOPLIB, "1000")
    try:
        top = subprocess.Popen([PERFEX, "top", "-p", str(w.pid), "-d", "0.5",
                                "--stdio", "--show-nr-samples", "-s",
                                "dso,sym"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        first, out, err = release_after_first_table(top, w, 120)
    finally:
        finish(w)
    check(top.returncode == 0, (top.returncode, err))
    got = tables(first + out)
    last = got[-1]
    # The first table came before the dlopen.
    check(not any("toplib_hot" in row[2] for row in got[0]["rows"]), got[0])
    names = {row[2].split()[-1]: row for row in last["rows"]}
    check("toplib_hot" in names and "topwork_hot" in names, last)
    check(names["toplib_hot"][2].split()[0] == "libtoplib.so", last)
    # cpu-clock samples the CPU time a task gets.  topwork_hot() spins
    # 1 s of wall time, so at most 1 s of CPU time; toplib_hot() 1 s of
    # CPU time (wall time would give it a share of the CPU that a loaded
    # machine varies): it has at least half the samples of the two hot
    # functions, which have at least 90 % of all
    # (batch_hot_function_tops_the_table): 45 %.
    check(names["toplib_hot"][0] >= 0.9 * 0.5 * 100, last)
    unnamed = sum(row[1] for row in last["rows"]
                  if row[2].startswith("[unknown]") or
                  re.search(r"\] 0x[0-9a-f]+$", row[2]))
    check(last["unknown"] <= last["samples"] / 100, last)
    check(unnamed <= last["samples"] / 100, (unnamed, last))


class Tmux:
    """A tmux server of our own (-L), one window of 100 x 30."""

    def __init__(self, command):
        if not shutil.which("tmux"):
            skip("tmux is not installed (Debian: tmux)")
        self.sock = "pctop%d" % os.getpid()
        subprocess.run(["tmux", "-L", self.sock, "-f", "/dev/null",
                        "new-session", "-d", "-x", "100", "-y", "30",
                        command], check=True)

    def screen(self):
        r = subprocess.run(["tmux", "-L", self.sock, "capture-pane", "-p"],
                           capture_output=True, text=True)
        return r.stdout if r.returncode == 0 else ""

    def keys(self, *keys):
        subprocess.run(["tmux", "-L", self.sock, "send-keys"] + list(keys),
                       check=True)

    def alive(self):
        return subprocess.run(["tmux", "-L", self.sock, "has-session"],
                              capture_output=True).returncode == 0

    def wait(self, pred, seconds):
        """The screen once @pred holds of it, or the last one."""
        deadline = time.time() + seconds
        text = self.screen()
        while not pred(text) and time.time() < deadline:
            time.sleep(0.05)
            text = self.screen()
        return text

    def kill(self):
        subprocess.run(["tmux", "-L", self.sock, "kill-server"],
                       capture_output=True)


def first_row(text):
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith("Overhead") and i + 1 < len(lines):
            return lines[i + 1].split()
    return []


@case
def terminal_shows_the_hot_function_and_takes_keys():
    """perfex top -p PID in tmux: the hot function heads the screen within
    two refreshes (and the start), s changes the sort keys, K hides the
    kernel, q quits."""
    require_root()
    w = start("hot", "60000")
    delay = 0.5
    tmux = Tmux("%s top -p %d -d %s" % (PERFEX, w.pid, delay))
    try:
        # Two refreshes, and a second for the start on a loaded machine.
        t0 = time.time()
        text = tmux.wait(lambda s: first_row(s)[-1:] == ["topwork_hot"],
                         2 * delay + 1.0)
        check(first_row(text)[-3:] == ["topwork", "[.]", "topwork_hot"],
              (time.time() - t0, text))
        check("Shared Object" in text and "q quit" in text, text)
        tmux.keys("s")
        text = tmux.wait(lambda s: "sort keys" in s, 5)
        check("sort keys" in text, text)
        tmux.keys("comm,sym", "Enter")
        text = tmux.wait(lambda s: re.search(r"Overhead +Command +Symbol", s)
                         and first_row(s)[-1:] == ["topwork_hot"], 5)
        check(re.search(r"Overhead +Command +Symbol", text), text)
        check(first_row(text)[1:] == ["topwork", "[.]", "topwork_hot"], text)
        tmux.keys("K")
        text = tmux.wait(lambda s: "kernel hidden" in s, 5)
        check("kernel hidden" in text and "[k]" not in text, text)
        tmux.keys("q")
        deadline = time.time() + 5
        while tmux.alive() and time.time() < deadline:
            time.sleep(0.05)
        check(not tmux.alive(), tmux.screen())
    finally:
        tmux.kill()
        finish(w)


def rows_shown(text):
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith("Overhead"):
            return [l for l in lines[i + 1:] if ROW.match(l)]
    return []


@case
def terminal_keys_change_the_view():
    """Two events: E shows the next; e limits the rows, U and z are
    toggled (the samples line says so), F and f ask for their limits, d
    for the delay; and when the task ends its last table stays, with a
    line that says so, until q."""
    require_root()
    w = start("hot", "4000")
    tmux = Tmux("%s top -p %d -d 0.3 -e cpu-clock -e task-clock"
                % (PERFEX, w.pid))
    try:
        text = tmux.wait(lambda s: "[cpu-clock, 4000 Hz]" in s and
                         first_row(s), 5)
        check("[cpu-clock, 4000 Hz]" in text, text)
        tmux.keys("E")
        text = tmux.wait(lambda s: "[task-clock, 4000 Hz]" in s, 5)
        check("[task-clock, 4000 Hz]" in text, text)
        tmux.keys("e", "1", "Enter")
        text = tmux.wait(lambda s: len(rows_shown(s)) == 1, 5)
        check(len(rows_shown(text)) == 1, text)
        tmux.keys("U", "z")
        text = tmux.wait(lambda s: "zeroing  user hidden" in s, 5)
        check("zeroing  user hidden" in text, text)
        for key, prompt, answer in (("F", "percentage", "0.5"),
                                    ("f", "fewer samples", "1"),
                                    ("d", "delay", "0.2")):
            tmux.keys(key)
            text = tmux.wait(lambda s: prompt in s, 5)
            check(prompt in text, text)
            tmux.keys(answer, "Enter")
        tmux.keys("x")
        text = tmux.wait(lambda s: "keys: d delay" in s, 5)
        check("keys: d delay" in text, text)
        text = tmux.wait(lambda s: "have ended" in s, 15)
        check("the sampled tasks have ended; q quits" in text, text)
        check(tmux.alive(), text)
        tmux.keys("Q")
        deadline = time.time() + 5
        while tmux.alive() and time.time() < deadline:
            time.sleep(0.05)
        check(not tmux.alive(), tmux.screen())
    finally:
        tmux.kill()
        finish(w)


@case
def targets_and_events():
    """-t, -u, -a, -C, -c, -g, -e with the cpu-clock of this machine (no
    hardware cycles: the default falls back to cpu-clock)."""
    require_root()
    w = start("hot", "20000")
    try:
        r = perfex("top", "-t", str(w.pid), "-n", "1", "-d", "0.3", "-g",
                   "-E", "1", timeout=60)
        check(r.returncode == 0, r)
        t = tables(r.stdout)[0]
        check(t["target"] == "tid %d" % w.pid and t["rows"], t)
        check(re.search(r"---topwork_hot\n +main", r.stdout), r.stdout)
        r = perfex("top", "-u", "root", "-n", "1", "-d", "0.5", "-s",
                   "pid,sym", timeout=60)
        check(r.returncode == 0 and "%d:topwork" % w.pid in r.stdout, r)
        r = perfex("top", "-a", "-n", "1", "-d", "0.3", "-e", "cpu-clock",
                   "-e", "task-clock", "-c", "1000000", timeout=60)
        check(r.returncode == 0, r)
        # Batch mode: a table per event at each refresh.
        check([t["event"] for t in tables(r.stdout)] ==
              ["cpu-clock", "task-clock"], r.stdout)
        r = perfex("top", "-C", "0", "-n", "1", "-d", "0.3", timeout=60)
        check(r.returncode == 0 and "CPUs 0" in r.stdout, r)
    finally:
        finish(w)


@case
def option_errors():
    gone = subprocess.Popen(["true"])
    gone.wait()
    rows = [
        (["-s", "bogus"], EXIT["usage"], "perfex: bad sort key 'bogus'"),
        (["-p", "1", "-C", "0"], EXIT["usage"],
         "perfex: -p, -t, -u, -a and -C exclude each other"),
        (["-u", "no-such-user-here"], EXIT["usage"],
         "perfex: option '-u' expects a user name or uid"),
        (["--delay", "0"], EXIT["usage"], "perfex: option '--delay' expects"),
        (["-m", "3"], EXIT["usage"], "perfex: option '-m' expects a power"),
        (["extra"], EXIT["usage"], "perfex: unexpected argument 'extra'"),
        (["-e", "no-such-event", "-n", "1"], EXIT["event"], "perfex: "),
        (["-p", str(gone.pid), "-n", "1"], EXIT["target"],
         "perfex: cannot attach to process %d" % gone.pid),
    ]
    for args, status, msg in rows:
        r = perfex("top", *args, timeout=60)
        check(r.returncode == status, (args, r))
        check(r.stderr.startswith(msg), (args, r.stderr))


run_cases()
