# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Files whose records perfex recovers besides its own killed recordings:
perf record's recording killed with SIGKILL (perf writes its header at
the start with the feature bits but a data size of 0, and names and
tracepoint formats only at the end), and a finished file of either
producer cut inside its data section.  perfex report and perfex script
read every whole record, name the events (a tracepoint from this
machine's tracefs when the file has no name for it) and say so."""
import json
import os
import random
import re
import shutil
import struct
import subprocess

from pctest import (PERFEX, case, check, perfex, require_root,
                    require_tracefs, run_cases, work)
from sampletools import PERF, kill_recording, require_perf, tmpfile

ENTER = "syscalls:sys_enter_getppid"
EXIT = "syscalls:sys_exit_getppid"
RECORD_SAMPLE = 9
# comm, tid, [cpu] when sampled, time, event: the rest
SAMPLE = re.compile(r"^\s*\S+\s+\d+\s+(?:\[\d+\]\s+)?[\d.]+:\s+(\S+):(.*)$")
RECOVERED = re.compile(r"'[^']*' (is unfinished|is truncated) \(([^)]*)\): "
                       r"recovered (\d+) records, (\d+) bytes")
LOCAL = re.compile(r"does not name (\d+) tracepoint events?: names and "
                   r"formats taken from this machine's tracefs")


def whole_records(path):
    """(records, samples, bytes) of the whole records that open the data
    section, walked by their headers (u32 type, u16 misc, u16 size) to
    the end of the file, or of the data section when the header's size
    is not 0 and within the file."""
    with open(path, "rb") as f:
        b = f.read()
    data_off, data_size = struct.unpack_from("<QQ", b, 40)
    end = len(b)
    if data_size and data_off + data_size <= len(b):
        end = data_off + data_size
    off = data_off
    records = samples = 0
    while end - off >= 8:
        rtype, _, size = struct.unpack_from("<IHH", b, off)
        if size < 8 or size > end - off:
            break
        records += 1
        samples += rtype == RECORD_SAMPLE
        off += size
    return records, samples, off - data_off


def read_back(path, names, recorder_pid=None):
    """perfex report -j and perfex script of PATH: both succeed and warn
    of the recovery; report has events NAMES and as many samples as the
    file has whole sample records, script one well-formed line per
    sample, named, each sys_exit_getppid decoded to RECORDER_PID (the
    workload's parent).  Returns (report stderr, samples per event)."""
    records, samples, nbytes = whole_records(path)
    check(samples > 0, "no whole sample in %s" % path)
    rep = perfex("report", "-i", path, "-j")
    check(rep.returncode == 0, rep.stderr)
    m = RECOVERED.search(rep.stderr)
    check(m, "no recovery warning: " + rep.stderr)
    check(int(m.group(3)) == records and int(m.group(4)) == nbytes,
          (m.group(0), records, nbytes))
    events = json.loads(rep.stdout)["events"]
    check([e["event"] for e in events] == names, events)
    per_event = {e["event"]: e["samples"] for e in events}
    check(sum(per_event.values()) == samples, (per_event, samples))

    sc = perfex("script", "-i", path, "-G")
    check(sc.returncode == 0, sc.stderr)
    check(RECOVERED.search(sc.stderr), sc.stderr)
    lines = sc.stdout.splitlines()
    check(len(lines) == samples, (len(lines), samples))
    seen = {}
    for line in lines:
        s = SAMPLE.match(line)
        check(s, "not a sample line: %r" % line)
        name = s.group(1)
        check(name in names, "sample of another event: %r" % line)
        seen[name] = seen.get(name, 0) + 1
        if name == EXIT and recorder_pid is not None:
            check(s.group(2) == " 0x%x" % recorder_pid,
                  "exit payload %r, want 0x%x" % (s.group(2), recorder_pid))
    check(seen == {k: v for k, v in per_event.items() if v}, (seen, per_event))
    return rep.stderr, m, per_event


def kill_perf_record(out, events, workload, grown, extra=()):
    """perf record -e EVENTS of WORKLOAD into OUT, killed with SIGKILL
    once OUT holds more than GROWN bytes: that much reached the file
    before the kill.  The workload is killed after.  Returns perf's pid
    and the file's size when the kill was decided."""
    size = [0]

    def reached():
        try:
            size[0] = os.path.getsize(out)
        except FileNotFoundError:
            size[0] = 0
        return size[0] > grown
    pid = kill_recording([PERF, "record", "-q", "-o", out, "-e", events,
                          *extra, "--"] + workload, reached, fresh=(out,),
                         poll=0.005)
    return pid, size[0]


@case
def perf_killed_tracepoint_recording_is_recovered():
    """perf record of both getppid tracepoints (-c 1), killed with
    SIGKILL once 2 MiB are in the file: every whole record is read,
    the events are named from this machine's tracefs (with a warning),
    each sys_exit_getppid decodes to perf's pid, and at least what the
    file held at the kill is counted."""
    require_root()
    require_tracefs()
    require_perf()
    out = tmpfile("perf-killed-tp.data")
    progress = tmpfile("perf-killed-progress")
    grown = 2 << 20
    pid, size = kill_perf_record(out, ENTER + "," + EXIT,
                                 [work(), "counted", progress, "50000000"],
                                 grown, ("-c", "1"))
    err, m, per_event = read_back(out, [ENTER, EXIT], pid)
    check(m.group(1) == "is unfinished" and "perf record" in m.group(2),
          m.group(0))
    local = LOCAL.search(err)
    check(local and int(local.group(1)) == 2, err)
    # A sample of these is at most 88 bytes (header, identifier, ip,
    # tid, time, cpu, period, raw data of 28 bytes padded to 32), so the
    # bytes in the file at the kill hold at least this many, less perf's
    # side-band records (its start: a few kB; 64 KiB bounds them).
    check(sum(per_event.values()) >= (size - (64 << 10)) // 88,
          (per_event, size))
    with open(progress, "rb") as f:
        done = struct.unpack("<Q", f.read(8))[0]
    check(per_event[ENTER] <= done, (per_event, done))


@case
def perf_killed_software_recording_is_recovered():
    """perf record -e task-clock of a spinning workload, killed once
    256 KiB are in the file: named task-clock (from the attr: a software
    event needs no tracefs), every whole sample counted."""
    require_perf()
    out = tmpfile("perf-killed-sw.data")
    grown = 256 << 10
    _, size = kill_perf_record(out, "task-clock", [work(), "spin", "60000"],
                               grown, ("-c", "20000", "-m", "16"))
    err, m, per_event = read_back(out, ["task-clock"])
    check(m.group(1) == "is unfinished" and "perf record" in m.group(2),
          m.group(0))
    check(not LOCAL.search(err), err)
    # A task-clock sample is 32 bytes (header, ip, tid, time; -c: no
    # period): as above, at least what the file held at the kill.
    check(per_event["task-clock"] >= (size - (64 << 10)) // 32,
          (per_event, size))


def finished_recording(tool, out):
    """A finished recording by TOOL (perfex or perf) of both getppid
    tracepoints over 5000 calls.  Returns the recorder's pid."""
    cmd = {"perfex": [PERFEX, "record", "-q"], "perf": [PERF, "record", "-q"]}
    p = subprocess.Popen(cmd[tool] + ["-o", out, "-e", ENTER + "," + EXIT,
                                      "-c", "1", "--", work(), "getppid",
                                      "5000"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    _, err = p.communicate(timeout=120)
    check(p.returncode == 0, err)
    return p.pid


@case
def truncated_files_of_both_producers_are_recovered():
    """A finished file of perfex record and one of perf record, cut at
    random bytes inside the data section: truncated, read up to the
    last whole record; perfex's keeps its names (the records that name
    them precede its data), perf's are named from the local tracefs."""
    require_root()
    require_tracefs()
    require_perf()
    seed = int(os.environ.get("PCTEST_SEED", "0")) or random.randrange(1 << 30)
    rnd = random.Random(seed)
    for tool in ("perfex", "perf"):
        full = tmpfile("finished-%s.data" % tool)
        pid = finished_recording(tool, full)
        with open(full, "rb") as f:
            data_off, data_size = struct.unpack_from("<QQ", f.read(56), 40)
        check(data_size > 0, (tool, data_size))
        cut_file = tmpfile("cut-%s.data" % tool)
        for _ in range(4):
            cut = data_off + rnd.randrange(data_size // 10, data_size)
            shutil.copyfile(full, cut_file)
            os.truncate(cut_file, cut)
            detail = "%s cut at %d (PCTEST_SEED=%d)" % (tool, cut, seed)
            try:
                err, m, per_event = read_back(cut_file, [ENTER, EXIT], pid)
            except Exception as e:
                raise type(e)("%s: %s" % (detail, e))
            check(m.group(1) == "is truncated", (detail, m.group(0)))
            local = LOCAL.search(err)
            if tool == "perf":
                check(local and int(local.group(1)) == 2, (detail, err))
            else:
                check(not local, (detail, err))


if __name__ == "__main__":
    run_cases()
