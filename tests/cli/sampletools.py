# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Helpers shared by the sampling CLI tests (test_record.py, test_report.py):
recording with perfex or perf into temporary files, and reading reports of
both tools back as numbers; go tool pprof, the pprof client."""
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import tempfile
import time

from pctest import perfex, require_root, skip, check, work

PERF = "/usr/bin/perf"
TP = "syscalls:sys_enter_getppid"

_tmp = tempfile.mkdtemp(prefix="pc-sample-")
GO = shutil.which("go") or "/usr/lib/go/bin/go"


def tmpfile(name):
    return os.path.join(_tmp, name)


def cleanup():
    shutil.rmtree(_tmp, ignore_errors=True)


def progress_of(path):
    """(calls done, pid) of pcwork's counted mode writing to PATH, or None
    before it began."""
    try:
        with open(path, "rb") as f:
            b = f.read(16)
    except FileNotFoundError:
        return None
    if len(b) < 16:
        return None
    done, pid = struct.unpack("<QQ", b)
    return (done, pid) if pid else None


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(k) for k in f.read().split()]
    except (FileNotFoundError, ProcessLookupError):
        return []


def kill_recording(argv, reached, fresh=(), timeout=120, poll=0.001,
                   stop=False, settle=0.0):
    """Start the recorder ARGV (FRESH: files removed first) and SIGKILL it
    once REACHED() is true, asked every POLL seconds while it runs: the
    check fails if it ends, or TIMEOUT seconds pass, first.  STOP: its
    command is stopped (SIGSTOP) before the kill, SETTLE seconds before,
    so that what the command did is what the recorder saw when it died.
    The command is killed after.  Returns the recorder's pid."""
    for path in fresh:
        if os.path.exists(path):
            os.unlink(path)
    rec = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
    kids = []
    try:
        deadline = time.monotonic() + timeout
        done = False
        while time.monotonic() < deadline and rec.poll() is None:
            kids = kids or children(rec.pid)
            done = reached()
            if done:
                break
            time.sleep(poll)
        kids = kids or children(rec.pid)
        check(done, "the recording ended before its mark: %s" %
              (rec.stderr.read() if rec.poll() is not None else "timeout"))
        if stop:
            check(kids, "no command under the recorder")
            for k in kids:
                os.kill(k, signal.SIGSTOP)
            time.sleep(settle)
        rec.kill()
        rec.wait()
    finally:
        if rec.poll() is None:
            rec.kill()
            rec.wait()
        rec.stderr.close()
        for k in kids:
            try:
                os.kill(k, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return rec.pid


def require_encoder():
    r = perfex("info")
    if not re.search(r"^\s*yes\s+protobuf-c\s", r.stdout, re.M):
        skip("perfex was built without protobuf-c (scripts/install-deps)")


def require_go():
    if not os.access(GO, os.X_OK):
        skip("go is not installed (Debian golang-go, scripts/install-deps): "
             "no go tool pprof to read the profile back")


def pprof(*args, timeout=120):
    """go tool pprof ARGS: its stdout.  Its home and temporary files are
    ours (under the temporary folder), so it neither reads nor writes the
    user's."""
    home = os.path.join(_tmp, "pprof-home")
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ, HOME=home, PPROF_TMPDIR=home,
               GOCACHE=os.path.join(home, "cache"), GOFLAGS="")
    r = subprocess.run([GO, "tool", "pprof"] + list(args), capture_output=True,
                       text=True, timeout=timeout, env=env)
    check(r.returncode == 0, "go tool pprof %s: %s" % (" ".join(args),
                                                       r.stderr[-2000:]))
    return r.stdout


def top_functions(path, *args):
    """The functions of `go tool pprof -top` (PATH: a file or a URL),
    heaviest (flat) first."""
    text = pprof("-top", *args, path)
    rows = []
    header = False
    for l in text.splitlines():
        if re.match(r"\s+flat\s+flat%", l):
            header = True
            continue
        if header and l.strip():
            rows.append(l.split(None, 5)[5])
    return rows


def record(out, *args, timeout=120):
    r = perfex("record", "-q", "-o", out, *args, timeout=timeout)
    return r


def report_json(path, *args):
    r = perfex("report", "-i", path, "-j", *args)
    check(r.returncode == 0, r.stderr)
    return json.loads(r.stdout)


def script_lines(path, *args):
    """The sample lines of `perfex script`, one per sample (no call chains)
    and with the pid beside the tid."""
    r = perfex("script", "-i", path, "-G", "-F", "+pid", *args)
    check(r.returncode == 0, r.stderr)
    return [l for l in r.stdout.splitlines() if l.strip()]


def script_pid_tids(lines):
    """(pid, tid) of each `perfex script` line."""
    out = []
    for l in lines:
        m = re.search(r"\s(\d+)/(\d+)\s", l)
        check(m, "no pid/tid in: " + l)
        out.append((int(m.group(1)), int(m.group(2))))
    return out


def require_perf():
    if not os.access(PERF, os.X_OK):
        skip("perf is not installed at %s" % PERF)


def perf_report(path, *args):
    """perf report --stdio: (total samples, [(overhead, comm, dso, sym)])."""
    r = subprocess.run([PERF, "report", "-i", path, "--stdio", "--no-children",
                        *args], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "perf report failed (%d): %s" %
          (r.returncode, r.stderr[-2000:]))
    samples = 0
    rounded = False
    rows = []
    for l in r.stdout.splitlines():
        m = re.match(r"# Samples: (\d+)([KM]?)\s", l)
        if m:
            samples += int(m.group(1))
            rounded = rounded or bool(m.group(2))
            continue
        m = re.match(r"\s+([\d.]+)%\s+(\S+)\s+(\S+)\s+\[([.k])\]\s+(.*\S)", l)
        if m:
            rows.append((float(m.group(1)), m.group(2), m.group(3),
                         m.group(5)))
    if rounded:
        # perf prints "10K": count its script lines for the exact number.
        samples = perf_script_count(path)
    return samples, rows


def perf_script_count(path):
    r = subprocess.run([PERF, "script", "-G", "-i", path], capture_output=True,
                       text=True, timeout=120)
    check(r.returncode == 0, "perf script failed: " + r.stderr[-2000:])
    return len([l for l in r.stdout.splitlines() if l.strip()])


def perf_record(out, *args):
    require_perf()
    r = subprocess.run([PERF, "record", "-q", "-o", out, *args],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        skip("perf record cannot run here: " + r.stderr.strip()[-300:])
    return r


def both_files(name, *args):
    """(perfex's file, perf's file) of the same recording: perfex record
    and perf record with the same arguments."""
    require_root()
    require_perf()
    ours = tmpfile(name + "-perfex.data")
    r = record(ours, *args)
    check(r.returncode == 0, r.stderr)
    theirs = tmpfile(name + "-perf.data")
    perf_record(theirs, *args)
    return ours, theirs


def top_row(rep, event_idx=0):
    ev = rep["events"][event_idx]
    check(ev["rows"], "no rows in %s" % ev)
    return ev["rows"][0]


def spin_args():
    return [work(), "spin", "300"]
