# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex report and perfex script follow a file's records in time order,
not file order: a recorder writes ring by ring, so a sample may come in
the file before the MMAP2 or COMM (from another CPU's ring) that happened
earlier.  The files here are built byte by byte, so every sample's right
answer is known: which map and which comm were current at its time."""
import re
import struct

from pctest import EXIT, case, check, perfex, run_cases
from sampletools import cleanup, report_json, tmpfile

SAMPLE_IP, SAMPLE_TID, SAMPLE_TIME, SAMPLE_PERIOD = 1, 2, 4, 256
SAMPLE_TYPE = SAMPLE_IP | SAMPLE_TID | SAMPLE_TIME | SAMPLE_PERIOD
REC_MMAP2, REC_COMM, REC_SAMPLE, REC_FINISHED_ROUND = 10, 3, 9, 68
MISC_USER, MISC_COMM_EXEC = 2, 0x2000
PID = 4242
BASE, LEN = 0x400000, 0x10000


def record(rtype, misc, body):
    return struct.pack("<IHH", rtype, misc, 8 + len(body)) + body


def trailer(time):
    # sample_id_all with TID | TIME: pid, tid, time.
    return struct.pack("<IIQ", PID, PID, time)


def padded(s, align=8):
    b = s.encode() + b"\0"
    return b + b"\0" * (-len(b) % align)


def mmap2(time, filename, start=BASE, length=LEN):
    body = struct.pack("<IIQQQIIQQII", PID, PID, start, length, 0, 8, 1,
                       1000 + len(filename), 0, 5, 2)
    return record(REC_MMAP2, MISC_USER, body + padded(filename) + trailer(time))


def comm(time, name, exec_=False):
    body = struct.pack("<II", PID, PID) + padded(name)
    return record(REC_COMM, MISC_USER | (MISC_COMM_EXEC if exec_ else 0),
                  body + trailer(time))


def sample(time, ip=BASE + 0x100):
    return record(REC_SAMPLE, MISC_USER,
                  struct.pack("<QIIQQ", ip, PID, PID, time, 1))


def finished_round():
    return record(REC_FINISHED_ROUND, 0, b"")


def perf_data(records, sample_type=SAMPLE_TYPE):
    """A minimal PERFILE2 file: one software cpu-clock attr, no features."""
    data = b"".join(records)
    # perf_event_attr, PERF_ATTR_SIZE_VER0 (64 bytes): sample_id_all is
    # bit 18 of the flags word.
    attr = struct.pack("<IIQQQQQIIQ", 1, 64, 0, 1, sample_type, 0, 1 << 18,
                       0, 0, 0)
    attr_entry = attr + struct.pack("<QQ", 0, 0)	# no ids
    attrs_off = 104
    data_off = attrs_off + len(attr_entry)
    header = struct.pack("<QQQ", 0x32454c4946524550, 104, len(attr_entry))
    header += struct.pack("<QQ", attrs_off, len(attr_entry))
    header += struct.pack("<QQ", data_off, len(data))
    header += struct.pack("<QQ", 0, 0)
    header += b"\0" * 32
    return header + attr_entry + data


def write(name, records, sample_type=SAMPLE_TYPE):
    path = tmpfile(name)
    with open(path, "wb") as f:
        f.write(perf_data(records, sample_type))
    return path


def script_rows(path):
    """(seconds.usec string, comm, dso) of each perfex script line."""
    r = perfex("script", "-i", path, "-F", "+pid")
    check(r.returncode == 0, r.stderr)
    rows = []
    for line in r.stdout.splitlines():
        m = re.match(r"^\s*(\S+)\s+\d+/\d+\s+(\d+\.\d+):.*\((.*)\)$",
                     line)
        check(m, "bad script line: %r" % line)
        rows.append((m.group(2), m.group(1), m.group(3)))
    return rows


def rows_by(rep, key):
    return {r[key]: r["samples"] for r in rep["events"][0]["rows"]}


@case
def late_side_band_applies_at_its_time():
    # The MMAP2 and the exec COMM come in the file after the samples they
    # precede in time, as another CPU's ring drained later would put them.
    path = write("late-side.data", [
        comm(10, "before"),
        sample(1000),			# before any map: [unknown]
        sample(3000),			# after the first map
        sample(6000),			# after the exec and the second map
        mmap2(2000, "/nonexistent/first.so"),
        comm(5000, "after", exec_=True),
        mmap2(5500, "/nonexistent/second.so"),
    ])
    rep = report_json(path, "--sort", "comm,dso")
    rows = {(r["comm"], r["dso"]): r["samples"] for r in rep["events"][0]["rows"]}
    check(rows == {("before", "[unknown]"): 1,
                   ("before", "/nonexistent/first.so"): 1,
                   ("after", "/nonexistent/second.so"): 1}, rows)
    check(script_rows(path) == [
        ("0.000001", "before", "[unknown]"),
        ("0.000003", "before", "/nonexistent/first.so"),
        ("0.000006", "after", "/nonexistent/second.so"),
    ], script_rows(path))


@case
def interleaved_rings_come_out_in_time_order():
    # Two "rings" drained in turn, each chunk in order but the two halves
    # overlapping in time; a remap in the middle of a chunk, written at
    # the very end.  Times are whole microseconds, as script prints them.
    us = 1000
    remap = 50252 * us
    recs = [comm(1, "work"), mmap2(2, "/nonexistent/old.so")]
    times = []
    for chunk in range(100):
        lo = chunk * 1000 + 10
        ring_a = [(lo + 10 * k) * us for k in range(50)]
        ring_b = [(lo + 10 * k + 5) * us for k in range(50)]
        for t in ring_a + ring_b:
            recs.append(sample(t))
            times.append(t)
        recs.append(finished_round())
    recs.append(mmap2(remap, "/nonexistent/new.so"))
    path = write("interleaved.data", recs)
    old = sum(t < remap for t in times)
    rep = report_json(path, "--sort", "dso")
    check(rep["samples"] == len(times), rep["samples"])
    check(rows_by(rep, "dso") == {"/nonexistent/old.so": old,
                                 "/nonexistent/new.so": len(times) - old},
          rows_by(rep, "dso"))
    rows = script_rows(path)
    check(len(rows) == len(times), len(rows))
    want = [("%d.%06d" % (t // 10**9, t % 10**9 // 1000),
             "/nonexistent/old.so" if t < remap else "/nonexistent/new.so")
            for t in sorted(times)]
    got = [(r[0], r[2]) for r in rows]
    check(got == want, next(((i, g, w) for i, (g, w) in
                             enumerate(zip(got, want)) if g != w), None))


@case
def equal_times_keep_file_order():
    # A COMM at the same time as a sample before it in the file does not
    # apply to it; one after it in the file does not either.
    path = write("ties.data", [
        comm(100, "first"),
        sample(200),
        comm(200, "second"),
        sample(200),
        sample(150),	# late: before the second COMM in time
    ])
    rep = report_json(path, "--sort", "comm")
    check(rows_by(rep, "comm") == {"first": 2, "second": 1},
          rows_by(rep, "comm"))
    check([r[1] for r in script_rows(path)] == ["first", "first", "second"],
          script_rows(path))


@case
def untimed_records_keep_their_place():
    # No PERF_SAMPLE_TIME: every record is where the file puts it.
    def untimed_comm(name):
        body = struct.pack("<II", PID, PID) + padded(name)
        return record(REC_COMM, MISC_USER, body + struct.pack("<II", PID, PID))

    def untimed_sample():
        return record(REC_SAMPLE, MISC_USER,
                      struct.pack("<QIIQ", BASE + 0x100, PID, PID, 1))

    path = write("untimed.data", [
        untimed_comm("one"), untimed_sample(), untimed_sample(),
        untimed_comm("two"), untimed_sample(),
        untimed_comm("three"), untimed_sample(), untimed_sample(),
        untimed_sample(),
    ], SAMPLE_IP | SAMPLE_TID | SAMPLE_PERIOD)
    rep = report_json(path, "--sort", "comm")
    check(rows_by(rep, "comm") == {"one": 2, "two": 1, "three": 3},
          rows_by(rep, "comm"))
    r = perfex("script", "-i", path)
    check(r.returncode == 0, r.stderr)
    comms = [l.split()[0] for l in r.stdout.splitlines() if l.strip()]
    check(comms == ["one", "one", "two", "three", "three", "three"], comms)


@case
def damaged_record_midway_is_refused():
    recs = [comm(10, "x")] + [sample(100 + t) for t in range(1000)]
    good = perf_data(recs)
    # A record header claiming size 0 in the middle of the data section.
    data_off = 104 + 80
    bad = bytearray(good)
    at = data_off + len(recs[0]) + 500 * len(recs[1])
    struct.pack_into("<H", bad, at + 6, 0)
    path = tmpfile("damaged.data")
    with open(path, "wb") as f:
        f.write(bad)
    for cmd in ("report", "script"):
        r = perfex(cmd, "-i", path)
        check(r.returncode == EXIT["io"] and "is damaged" in r.stderr, (cmd, r))


try:
    run_cases()
finally:
    cleanup()
