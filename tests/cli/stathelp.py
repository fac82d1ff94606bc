# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Helpers of the perfex counting-mode tests (tests/cli/test_stat*.py)."""
import csv
import ctypes
import io
import json
import os
import platform
import shutil
import struct
import subprocess
import tempfile
import time

from pctest import BUILD, check, perfex, require_root, require_tracefs, skip, work

TP = "syscalls:sys_enter_getppid"
PERF_EXIT = {"usage": 129, "event": 130, "perm": 131, "tracefs": 132,
             "nocmd": 127, "noexec": 126, "target": 133, "io": 134}


def tracefs_root():
    for root in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        if os.path.isdir(os.path.join(root, "events")):
            return root
    return None


_held = []


def hold_tracepoint(name=TP):
    """Keep one counter of the tracepoint open in this process for the
    whole test program: closing the last fd of a tracepoint costs 30-50 ms
    in the kernel (kernel-facts.md item 5), with one held it is ~15 us."""
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


def wait_for(cond, timeout=10.0, what="condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.005)
    check(False, "timed out waiting for " + what)


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
