# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Helpers of the perfex counting-mode tests (tests/cli/test_stat*.py)."""
import csv
import ctypes
import functools
import io
import json
import os
import platform
import shutil
import signal
import struct
import subprocess
import tempfile
import time
import traceback

from pctest import (BUILD, EXIT, PERFEX, check, perfex, require_root, require_tracefs,
                    skip, work)

TP = "syscalls:sys_enter_getppid"
# perfex's exit statuses (pctest.EXIT), by their former name here.
PERF_EXIT = EXIT


def tracefs_root():
    for root in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        if os.path.isdir(os.path.join(root, "events")):
            return root
    return None


_held = []


def hold_tracepoint(name=TP):
    """Keep one counter of the tracepoint open in this process for the
    whole test program: closing the last fd of a tracepoint costs 30-50 ms
    in the kernel (docs/kernel-notes.md 5), with one held it is ~15 us."""
    if _held:
        return
    root = tracefs_root()
    if not root:
        return
    nr = {"x86_64": 298, "aarch64": 241}.get(platform.machine())
    if nr is None:
        return
    try:
        with open(os.path.join(root, "events", *name.split(":"), "id")) as f:
            tp_id = int(f.read())
    except OSError:
        return
    attr = bytearray(128)
    struct.pack_into("IIQ", attr, 0, 2, 128, tp_id)  # PERF_TYPE_TRACEPOINT
    buf = ctypes.create_string_buffer(bytes(attr), 128)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    fd = libc.syscall(ctypes.c_long(nr), buf, ctypes.c_int(0),
                      ctypes.c_int(-1), ctypes.c_int(-1), ctypes.c_ulong(0))
    if fd >= 0:
        _held.append(fd)


def need_tracepoint():
    require_root()
    require_tracefs()
    hold_tracepoint()


def run_csv(*args, sep=","):
    """perfex -x SEP -o FILE args: (CompletedProcess, rows)."""
    with tempfile.NamedTemporaryFile("r", suffix=".csv") as out:
        r = perfex("-x", sep, "-o", out.name, *args)
        text = out.read()
    rows = [row for row in csv.reader(io.StringIO(text), delimiter=sep)
            if row and not row[0].startswith("#")] if len(sep) == 1 else \
        [line.split(sep) for line in text.splitlines() if line]
    return r, rows


def run_json(*args):
    """perfex -j -o FILE args: (CompletedProcess, document)."""
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        r = perfex("-j", "-o", out.name, *args)
        text = out.read()
    try:
        doc = json.loads(text) if text else None
    except ValueError as e:
        check(False, "not JSON (%s): %r" % (e, text[:500]))
    return r, doc


def csv_count(rows, event, value_col=0, name_col=2):
    """The value of @event in perfex CSV rows, as an int."""
    for row in rows:
        if row[name_col] == event:
            return int(row[value_col])
    check(False, "no row for %s in %r" % (event, rows))


def json_event(doc, name):
    for ev in doc["events"]:
        if ev["name"] == name:
            return ev
    check(False, "no event %s in %r" % (name, [e["name"] for e in doc["events"]]))


_baseline = {}


def getppid_baseline(*prefix):
    """The workload's fixed start-up getppid calls (N = 0), measured."""
    key = tuple(prefix)
    if key not in _baseline:
        r, rows = run_csv("-e", TP, "--", *prefix, work(), "getppid", "0")
        check(r.returncode == 0, r.stderr)
        _baseline[key] = csv_count(rows, TP)
    return _baseline[key]


def perf_fds(pid):
    """How many perf_event fds process @pid holds."""
    n = 0
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                if "perf_event" in os.readlink("/proc/%d/fd/%s" % (pid, fd)):
                    n += 1
            except OSError:
                pass
    except OSError:
        pass
    return n


def counting(pid):
    """perfex @pid has opened its counters and waits in ppoll(): it has
    started them (they are opened disabled and started after every open)."""
    try:
        with open("/proc/%d/wchan" % pid) as f:
            wchan = f.read()
    except OSError:
        return False
    return perf_fds(pid) >= 1 and "poll" in wchan


def wait_counting(pid):
    wait_for(lambda: counting(pid), what="perfex to start counting")


def wait_for(cond, timeout=10.0, what="condition", last=None):
    """Wait until COND() is true; fail after TIMEOUT seconds, saying WHAT
    was awaited and, with LAST (a function), what it gives then: the
    state that was seen instead."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.005)
    seen = "; last seen: %s" % (last(),) if last else ""
    caller = traceback.extract_stack(limit=2)[0]
    check(False, "timed out waiting for %s after %g s (%s:%d)%s"
          % (what, timeout, os.path.basename(caller.filename),
             caller.lineno, seen))


def nobody_perfex():
    """A copy of perfex that user nobody can execute, or skip."""
    require_root()
    if not shutil.which("setpriv"):
        skip("setpriv is not installed (util-linux)")
    d = tempfile.mkdtemp(prefix="perfex-nobody-")
    os.chmod(d, 0o755)
    dst = os.path.join(d, "perfex")
    shutil.copy(os.path.join(BUILD, "perfex"), dst)
    os.chmod(dst, 0o755)
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", dst]


def run_as_nobody(*args):
    cmd = nobody_perfex() + list(args)
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    finally:
        shutil.rmtree(os.path.dirname(cmd[-1 - len(args)]), ignore_errors=True)


def has_hw_pmu():
    return os.path.exists("/sys/bus/event_source/devices/cpu") or any(
        d.startswith("armv8") for d in os.listdir("/sys/bus/event_source/devices"))


def need_two_cpus():
    if os.cpu_count() < 2 or not os.path.exists("/sys/devices/system/cpu/cpu1/online") \
            and not os.path.isdir("/sys/devices/system/cpu/cpu1"):
        skip("needs 2 CPUs (this machine has %d)" % os.cpu_count())


class Held:
    """pcwork doing getppid BEFORE, then waiting for a line on stdin, then
    getppid AFTER: a process to attach to between the two."""

    def __init__(self, before, after, extra=()):
        self.dir = tempfile.mkdtemp()
        ready = os.path.join(self.dir, "ready")
        self.p = subprocess.Popen(list(extra) + [work(), "getppid", str(before),
                                  "ready", ready, "wait", "getppid", str(after)],
                                  stdin=subprocess.PIPE, text=True)
        wait_for(lambda: os.path.exists(ready), what="the workload")
        self.pid = self.p.pid

    def go(self):
        self.p.stdin.write("go\n")
        self.p.stdin.close()
        check(self.p.wait(timeout=30) == 0)

    def close(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def start_perfex(*args, prefix=()):
    """perfex -o FILE ARGS in the background (after the command PREFIX,
    e.g. taskset): (Popen, the file to read)."""
    out = tempfile.NamedTemporaryFile("r", suffix=".out")
    p = subprocess.Popen(list(prefix) + [PERFEX, "-o", out.name] + list(args),
                         stderr=subprocess.PIPE, text=True)
    return p, out


def counted_during(starts, act, timeout=30):
    """Each of STARTS (a function that starts a counter in the background
    and returns (Popen, the file it writes), as start_perfex() does)
    started, ACT() called once they all count, then each stopped by
    SIGINT: [(exit status, stderr, its file's text)].  A counter still
    running when this fails is killed."""
    runs = []
    try:
        for start in starts:
            runs.append(start())
        for p, _ in runs:
            wait_counting(p.pid)
        act()
        got = []
        for p, out in runs:
            p.send_signal(signal.SIGINT)
            _, err = p.communicate(timeout=timeout)
            got.append((p.returncode, err, out.read()))
        return got
    finally:
        for p, out in runs:
            if p.poll() is None:
                p.kill()
                p.wait()
            out.close()


def count_pinned_pair(calls0, calls1, starts):
    """Two workloads, one on CPU 0 making CALLS0 getppid, one on CPU 1
    making CALLS1, counted at once by each of STARTS: a function of the
    filter of the two pids that starts a counter in the background and
    returns (Popen, the file it writes).  Each is stopped by SIGINT once
    the workloads are done: [(exit status, stderr, its file's text)]."""
    ws = [Held(0, calls0, extra=("taskset", "-c", "0")),
          Held(0, calls1, extra=("taskset", "-c", "1"))]
    filt = "common_pid == %d || common_pid == %d" % (ws[0].pid, ws[1].pid)

    def go():
        for w in ws:
            w.go()
    try:
        return counted_during([functools.partial(start, filt)
                               for start in starts], go)
    finally:
        for w in ws:
            w.close()


def count_after_attach(before, after):
    """perfex -p on a workload held between BEFORE and AFTER calls."""
    w = Held(before, after)
    try:
        p, out = start_perfex("-x,", "-e", TP, "--pid", str(w.pid))
        # perfex holds its counter once attached: only then go on.
        wait_counting(p.pid)
        w.go()
        _, err = p.communicate(timeout=30)
        check(p.returncode == 0, err)
        rows = [l.split(",") for l in out.read().splitlines() if l]
        return csv_count(rows, TP)
    finally:
        w.close()


_exit_calls = []


def exit_baseline():
    """getppid calls of the workload's way out (0, or a few when it is
    built with a sanitizer whose leak checker asks for its parent)."""
    if not _exit_calls:
        _exit_calls.append(count_after_attach(0, 0))
    return _exit_calls[0]
