#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex report and script on a perf.data file this test writes itself
(known processes, maps, callchains; kernel symbols from a kallsyms file of
its own), compared byte for byte with the outputs kept in
tests/fixtures/report-golden/: the table, both call-graph orders, folded
stacks, the SVG flame graph, JSON and script lines.  Nothing depends on the
host, so any change of these outputs shows here.

PERFCTR_GOLDEN_UPDATE=1 rewrites the kept outputs (review the diff)."""
import os
import struct
import subprocess
import tempfile

from pctest import PERFEX, TOP, case, check, run_cases

GOLDEN = os.path.join(TOP, "tests", "fixtures", "report-golden")
UPDATE = os.environ.get("PERFCTR_GOLDEN_UPDATE") == "1"

KALLSYMS = """\
ffffffff81000000 T _stext
ffffffff81001000 T do_syscall_64
ffffffff81002000 T entry_SYSCALL_64
ffffffff81003000 T x64_sys_getppid
ffffffff81004000 T asm_exc_page_fault
ffffffff81005000 T odd;name
ffffffff81006000 T _etext
"""

K = 0xffffffff81000000
APP, LIB = 0x400000, 0x7f0000000000
PERF_CONTEXT_KERNEL = (1 << 64) - 128
PERF_CONTEXT_USER = (1 << 64) - 512

# sample_type: IP | TID | TIME | CPU | PERIOD | CALLCHAIN
SAMPLE_TYPE = 1 | 2 | 4 | (1 << 7) | (1 << 8) | (1 << 5)


def pad8(b):
    return b + b"\0" * (-len(b) % 8)


def record(rtype, misc, body):
    return struct.pack("<IHH", rtype, misc, 8 + len(body)) + body


def comm(pid, tid, name):
    return record(3, 0, struct.pack("<II", pid, tid) + pad8(name.encode() + b"\0"))


def mmap2(pid, addr, length, path):
    body = struct.pack("<IIQQQIIQQII", pid, pid, addr, length, 0, 0, 0, 0, 0,
                       5, 2) + pad8(path.encode() + b"\0")
    return record(10, 2, body)


def sample(pid, tid, time, cpu, period, chain):
    """@chain: the callchain with its context markers, leaf first."""
    kernel = chain[0] == PERF_CONTEXT_KERNEL
    ip = chain[1]
    body = struct.pack("<QIIQIIQQ", ip, pid, tid, time, cpu, 0, period,
                       len(chain)) + struct.pack("<%dQ" % len(chain), *chain)
    return record(9, 1 if kernel else 2, body)


def kchain(kernel, user):
    out = []
    if kernel:
        out += [PERF_CONTEXT_KERNEL] + kernel
    out += [PERF_CONTEXT_USER] + user
    return out


def data_section():
    recs = [comm(100, 100, "app"), comm(100, 101, "app-worker"),
            comm(200, 200, "tool"),
            mmap2(100, APP, 0x10000, "/nonexistent/golden/app"),
            mmap2(100, LIB, 0x20000, "/nonexistent/golden/libc.so.6"),
            mmap2(200, APP, 0x10000, "/nonexistent/golden/tool")]
    t = 1000000000
    # (pid, tid, cpu, period, chain, times)
    plan = [
        (100, 100, 0, 250000, kchain(None, [APP + 0x1010, APP + 0x2020, APP + 0x3030]), 7),
        (100, 100, 1, 250000, kchain(None, [APP + 0x1010, APP + 0x2120, APP + 0x3030]), 3),
        (100, 101, 1, 500000, kchain([K + 0x3010, K + 0x1020, K + 0x2030],
                                     [LIB + 0x500, APP + 0x2020, APP + 0x3030]), 2),
        (100, 101, 0, 250000, kchain([K + 0x5008, K + 0x4010],
                                     [LIB + 0x700, APP + 0x3030]), 1),
        (200, 200, 0, 250000, kchain(None, [APP + 0x1010]), 4),
        (200, 200, 1, 250000, kchain([K + 0x1040], [APP + 0x1800, APP + 0x1900]), 2),
    ]
    for pid, tid, cpu, period, chain, times in plan:
        for _ in range(times):
            t += 250000
            recs.append(sample(pid, tid, t, cpu, period, chain))
    return b"".join(recs)


def perf_data():
    attr_size = 128
    flags = (1 << 0) | (1 << 8) | (1 << 9) | (1 << 23)   # disabled mmap comm mmap2
    attr = struct.pack("<IIQQQQQII", 1, attr_size, 0, 250000, SAMPLE_TYPE, 0,
                       flags, 0, 0)
    attr += b"\0" * (attr_size - len(attr))
    attrs = attr + struct.pack("<QQ", 0, 0)
    data = data_section()
    hdr_size = 104
    attrs_off = hdr_size
    data_off = attrs_off + len(attrs)
    hdr = struct.pack("<8sQQ", b"PERFILE2", hdr_size, attr_size + 16)
    hdr += struct.pack("<QQQQQQ", attrs_off, len(attrs), data_off, len(data),
                       0, 0)
    hdr += b"\0" * 32
    return hdr + attrs + data


OUTPUTS = [
    ("report.txt", ["report"]),
    ("report-callee.txt", ["report", "-g", "callee"]),
    ("report-caller.txt", ["report", "-g", "caller", "-s", "comm,sym"]),
    ("report-limit.txt", ["report", "-g", "callee", "--percent-limit", "20"]),
    ("folded.txt", ["report", "--folded"]),
    ("report.json", ["report", "-j", "-s", "pid,tid,cpu"]),
    ("script.txt", ["script"]),
    ("script-fields.txt", ["script", "-G", "-F", "+pid,-period"]),
]


def run_in(tmp, args):
    r = subprocess.run([PERFEX] + args + ["-i", "golden.data", "--kallsyms",
                                          "kallsyms"],
                       cwd=tmp, capture_output=True, timeout=60)
    check(r.returncode == 0, r.stderr)
    return r.stdout


def compare(name, got):
    path = os.path.join(GOLDEN, name)
    if UPDATE:
        with open(path, "wb") as f:
            f.write(got)
        return
    with open(path, "rb") as f:
        want = f.read()
    if got != want:
        gl, wl = got.decode(errors="replace").splitlines(), \
            want.decode(errors="replace").splitlines()
        for i, (g, w) in enumerate(zip(gl, wl)):
            if g != w:
                check(False, "%s line %d: got %r, want %r" % (name, i + 1, g, w))
        check(False, "%s: %d lines, want %d" % (name, len(gl), len(wl)))


def setup(tmp):
    with open(os.path.join(tmp, "golden.data"), "wb") as f:
        f.write(perf_data())
    with open(os.path.join(tmp, "kallsyms"), "w") as f:
        f.write(KALLSYMS)


@case
def outputs_are_unchanged():
    with tempfile.TemporaryDirectory(prefix="pc-golden-") as tmp:
        setup(tmp)
        for name, args in OUTPUTS:
            compare(name, run_in(tmp, args))


@case
def flame_graph_is_unchanged():
    with tempfile.TemporaryDirectory(prefix="pc-golden-") as tmp:
        setup(tmp)
        run_in(tmp, ["report", "--flame", "flame.svg"])
        with open(os.path.join(tmp, "flame.svg"), "rb") as f:
            compare("flame.svg", f.read())


run_cases()
