# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex report --pprof: the profile of a perf.data file (ours and perf's)
read back by the real client, go tool pprof: its totals and its top
function agree with perfex report; call stacks come through (-traces);
exact sample counts from a tracepoint with a period; usage and I/O errors
with the documented exit statuses."""
import os
import re
import subprocess

from pctest import (EXIT, case, check, perfex, require_root, require_tracefs,
                    run_cases, work)
from sampletools import (TP, cleanup, perf_record, pprof, record,
                         report_json, require_encoder, require_go, spin_args,
                         tmpfile, top_functions)

_files = {}


def write_pprof(data, name):
    out = tmpfile(name)
    r = perfex("report", "-i", data, "--pprof", out)
    check(r.returncode == 0, r.stderr)
    return out


def raw_totals(path):
    """{sample type: sum of its values} from `go tool pprof -raw`, and the
    default type."""
    text = pprof("-raw", path)
    lines = text.splitlines()
    i = lines.index("Samples:")
    types = lines[i + 1].split()
    default = None
    names = []
    for t in types:
        if t.endswith("[dflt]"):
            t = t[:-len("[dflt]")]
            default = t.split("/")[0]
        names.append(t.split("/")[0])
    sums = [0] * len(names)
    for l in lines[i + 2:]:
        m = re.match(r"\s+([-\d ]+):", l)
        if not m:
            if l and not l.startswith(" "):
                break
            continue
        for k, v in enumerate(m.group(1).split()):
            sums[k] += int(v)
    return dict(zip(names, sums)), default


def traces(path):
    """The stacks of `go tool pprof -traces`: [(value text, [frames])]."""
    text = pprof("-traces", path)
    out = []
    for block in text.split("-----------+-")[1:]:
        frames = []
        value = None
        for l in block.splitlines()[1:]:
            m = re.match(r"\s*(\S+)\s{2,}(\S.*)$", l)
            if m and ":" not in m.group(1) and value is None:
                value = m.group(1)
                frames.append(m.group(2).strip())
            elif value is not None and l.strip():
                frames.append(l.strip())
        if value is not None:
            out.append((value, frames))
    return out


def check_agrees(data, pb):
    """pprof's totals and top function are perfex report's."""
    rep = report_json(data, "--sort", "sym")
    ev = [e for e in rep["events"] if e["samples"]]
    check(ev, rep)
    sums, default = raw_totals(pb)
    check(sums.get("samples") == rep["samples"], (sums, rep["samples"]))
    for e in ev:
        check(sums.get(e["event"]) == e["period"], (e["event"], sums, e))
    check(default == ev[0]["event"], (default, ev[0]["event"]))
    top = ev[0]["rows"][0]["sym"]
    funcs = top_functions(pb, "-sample_index=samples")
    check(funcs and funcs[0] == top, (funcs[:3], top))
    return rep


def our_spin_file():
    if "our" not in _files:
        require_root()
        out = tmpfile("our-spin.data")
        r = record(out, "-g", "-e", "cpu-clock", "-F", "2000", "--",
                   *spin_args())
        check(r.returncode == 0, r.stderr)
        _files["our"] = out
    return _files["our"]


@case
def our_file_agrees_with_report():
    require_encoder()
    require_go()
    data = our_spin_file()
    pb = write_pprof(data, "our.pb.gz")
    check_agrees(data, pb)
    # The first mapping, which pprof takes for the program, is a user
    # DSO: the one with most samples (pcwork, or in a sanitizer build
    # possibly its runtime, whose leak check at exit takes samples too).
    top = pprof("-top", pb)
    m = re.search(r"^File: (.*)$", top, re.M)
    check(m and m.group(1) != "[kernel.kallsyms]", top[:300])


def check_through_main(spin):
    """The stacks in spin_loop go up through main (frame pointers), but
    for samples in its first or last instructions, where its frame is not
    yet made or already gone: there the chain skips its caller, main, and
    goes on with main's callers."""
    good = [f for f in spin if "main" in f]
    above = {tuple(f[f.index("main") + 1:]) for f in good}
    lost = [f for f in spin if "main" not in f and tuple(f[1:]) not in above]
    check(good and not lost, (len(good), lost[:2]))


@case
def our_file_has_call_stacks():
    require_encoder()
    require_go()
    pb = write_pprof(our_spin_file(), "our-traces.pb.gz")
    stacks = traces(pb)
    check(stacks, "no traces")
    spin = [f for _, f in stacks if f and f[0] == "spin_loop"]
    check(spin, [f[:3] for _, f in stacks[:5]])
    check_through_main(spin)


@case
def perf_file_agrees_with_report():
    require_encoder()
    require_go()
    require_root()
    data = tmpfile("perf-spin.data")
    perf_record(data, "-g", "-e", "cpu-clock", "-F", "2000", "--",
                *spin_args())
    pb = write_pprof(data, "perf.pb.gz")
    check_agrees(data, pb)
    spin = [f for _, f in traces(pb) if f and f[0] == "spin_loop"]
    check(spin, "no stack in spin_loop")
    check_through_main(spin)


@case
def tracepoint_samples_exact():
    require_encoder()
    require_go()
    require_root()
    require_tracefs()
    data = tmpfile("tp.data")
    # One event that follows the thread: by default one per CPU, each
    # counting towards its own next sample, and a run that migrates gets
    # 99 (perfex-record(1), -c).
    r = record(data, "--no-inherit", "-e", TP, "-c", "100", "--", work(),
               "getppid", "10000")
    check(r.returncode == 0, r.stderr)
    pb = write_pprof(data, "tp.pb.gz")
    rep = check_agrees(data, pb)
    sums, _ = raw_totals(pb)
    check(sums["samples"] == 100 == rep["samples"], (sums, rep["samples"]))
    funcs = top_functions(pb, "-sample_index=samples", "-tagfocus=comm=pcwork")
    check(funcs, "no functions")


@case
def writes_to_stdout():
    require_encoder()
    require_root()
    data = our_spin_file()
    r = subprocess.run([os.path.join(os.path.dirname(work()), "..", "..",
                                     "perfex"), "report", "-i", data,
                        "--pprof", "-"], capture_output=True, timeout=120)
    check(r.returncode == 0, r.stderr)
    check(r.stdout[:2] == b"\x1f\x8b", r.stdout[:8])


@case
def usage_and_io_errors():
    require_encoder()
    require_root()
    data = our_spin_file()
    r = perfex("report", "-i", data, "--pprof", tmpfile("x.pb.gz"), "--json")
    check(r.returncode == EXIT["usage"], r)
    check("exclude each other" in r.stderr, r.stderr)
    r = perfex("report", "-i", data, "--pprof", "/nonexistent/dir/x.pb.gz")
    check(r.returncode == EXIT["io"], r)
    check(re.match(r"perfex: cannot create '/nonexistent/dir/x.pb.gz': ",
                   r.stderr), r.stderr)
    r = perfex("report", "-i", tmpfile("missing.data"), "--pprof",
               tmpfile("y.pb.gz"))
    check(r.returncode == EXIT["io"], r)
    check(not os.path.exists(tmpfile("y.pb.gz")), "a profile of nothing")


try:
    run_cases()
finally:
    cleanup()
