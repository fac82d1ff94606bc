# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Helpers shared by the sampling CLI tests (test_record.py, test_report.py):
recording with perfex or perf into temporary files, and reading reports of
both tools back as numbers; go tool pprof, the pprof client."""
import json
import os
import re
import shutil
import subprocess
import tempfile

from pctest import perfex, require_root, skip, check, work

PERF = "/usr/bin/perf"
TP = "syscalls:sys_enter_getppid"

_tmp = tempfile.mkdtemp(prefix="pc-sample-")
GO = shutil.which("go") or "/usr/lib/go/bin/go"


def tmpfile(name):
    return os.path.join(_tmp, name)


def cleanup():
    shutil.rmtree(_tmp, ignore_errors=True)


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
