# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex info: the text report and the JSON document against /proc, sysfs
and the library's own perfctr_info(); --help equal to `help info`; usage
errors; tracefs absent (in a private mount namespace) and an unprivileged
user."""
import ctypes
import json
import os
import shutil
import subprocess

from pctest import EXIT, BUILD, PERFEX, case, check, perfex, require_root, run_cases, skip


def read(path):
    with open(path) as f:
        return f.read().strip()


def cpu_list(text):
    cpus = []
    for part in text.split(","):
        if "-" in part:
            lo, hi = part.split("-")
            cpus.extend(range(int(lo), int(hi) + 1))
        elif part:
            cpus.append(int(part))
    return cpus


def tracefs_mount():
    found = None
    with open("/proc/self/mounts") as f:
        for line in f:
            dev, mnt, fstype = line.split()[:3]
            if fstype == "tracefs" and (found is None or mnt == "/sys/kernel/tracing"):
                found = mnt
    return found


def info_json(*extra, **kw):
    r = perfex("info", "-j", *extra, **kw)
    check(r.returncode == 0, r)
    return json.loads(r.stdout)


@case
def json_agrees_with_proc_and_sysfs():
    doc = info_json()
    check(doc["schema_version"] == 1, doc)
    online = cpu_list(read("/sys/devices/system/cpu/online"))
    possible = cpu_list(read("/sys/devices/system/cpu/possible"))
    check(doc["cpu"]["online"] == online, doc["cpu"])
    check(doc["cpu"]["nr_online"] == len(online), doc["cpu"])
    offline = sorted(set(possible) - set(online))
    check(set(offline) <= set(doc["cpu"]["forbidden"]), doc["cpu"])
    if doc["core_pmu"] is None:
        check(doc["cpu"]["forbidden"] == offline, doc["cpu"])
    check(doc["cpu"]["arch"] == os.uname().machine, doc["cpu"])
    check(doc["permission"]["paranoid"] ==
          int(read("/proc/sys/kernel/perf_event_paranoid")), doc["permission"])
    for key, sysctl in (("max_sample_rate", "perf_event_max_sample_rate"),
                        ("mlock_kb", "perf_event_mlock_kb"),
                        ("max_stack", "perf_event_max_stack")):
        check(doc["limits"][key] == int(read("/proc/sys/kernel/" + sysctl)),
              (key, doc["limits"]))
    base = "/sys/bus/event_source/devices"
    names = sorted(os.listdir(base))
    check([p["name"] for p in doc["pmus"]] == names, doc["pmus"])
    for p in doc["pmus"]:
        check(p["type"] == int(read(os.path.join(base, p["name"], "type"))), p)
        if not p["core"]:
            check(p["counters"] == 0, p)
    mnt = tracefs_mount()
    check(doc["tracefs"]["mounted"] == (mnt is not None), doc["tracefs"])
    check(doc["tracefs"]["path"] == mnt, doc["tracefs"])
    check(doc["tracefs"]["readable"] == doc["features"]["tracepoints"], doc)
    if mnt and os.geteuid() == 0:
        check(doc["features"]["tracepoints"], doc["features"])
    # Every machine of ours has breakpoints and software-event sampling.
    check(doc["features"]["breakpoints"], doc["features"])
    check(doc["features"]["sampling"], doc["features"])
    check(doc["nr_hw_counters"] == 0 or doc["core_pmu"], doc)
    check(doc["permission"]["privileged"] == (os.geteuid() == 0), doc["permission"])
    check(set(doc["libraries"]) == {"libpfm", "libdw", "libelf", "zlib", "json-c",
                                    "protobuf-c", "libbpf", "libtraceevent",
                                    "libcapstone", "libstdcxx"}, doc)
    # A hint for each missing feature, none for the present ones.
    missing = {k for k, v in doc["features"].items() if not v}
    check(set(doc["hints"]) == missing, (doc["hints"], doc["features"]))
    for key, hint in doc["hints"].items():
        check(isinstance(hint, str) and hint, (key, hint))
    if not doc["features"]["hardware_events"]:
        check("hardware PMU" in doc["hints"]["multiplexing"], doc["hints"])


class PerfctrInfo(ctypes.Structure):
    _fields_ = [("sz", ctypes.c_size_t),
                ("features", ctypes.c_uint32),
                ("paranoid", ctypes.c_int32),
                ("nr_cpus", ctypes.c_uint32),
                ("nr_pmus", ctypes.c_uint32),
                ("nr_hw_counters", ctypes.c_uint32),
                ("max_sample_rate", ctypes.c_uint32),
                ("mlock_kb", ctypes.c_uint32),
                ("max_stack", ctypes.c_uint32),
                ("cpu_model", ctypes.c_char * 128),
                ("arch", ctypes.c_char * 32),
                ("core_pmu", ctypes.c_char * 64),
                ("tracefs", ctypes.c_char * 128)]


FEATURE_BITS = {"user_read": 0, "overflow_interrupts": 1, "sampling": 2,
                "multiplexing": 3, "hardware_events": 4, "tracepoints": 5,
                "breakpoints": 6, "tsc": 7}


@case
def json_agrees_with_perfctr_info():
    if os.environ.get("SANITIZE"):
        skip("a sanitized libperfctr.so cannot be loaded into python3 "
             "(its runtime must come first); checked in the plain build")
    lib = ctypes.CDLL(os.path.join(BUILD, "libperfctr.so"))
    info = PerfctrInfo()
    info.sz = ctypes.sizeof(info)
    check(lib.perfctr_info(ctypes.byref(info), None, None) == 0)
    doc = info_json()
    check(doc["cpu"]["model"] == info.cpu_model.decode(), doc["cpu"])
    check(doc["cpu"]["nr_online"] == info.nr_cpus)
    check(len(doc["pmus"]) == info.nr_pmus)
    check(doc["nr_hw_counters"] == info.nr_hw_counters)
    check(doc["core_pmu"] == (info.core_pmu.decode() or None))
    check(doc["tracefs"]["path"] == (info.tracefs.decode() or None))
    for key, bit in FEATURE_BITS.items():
        check(doc["features"][key] == bool(info.features >> bit & 1),
              (key, doc["features"], hex(info.features)))


@case
def text_report_has_every_section():
    r = perfex("info")
    check(r.returncode == 0, r)
    out = r.stdout
    for title in ("CPU", "PMUs", "Features", "Permission", "tracefs",
                  "Limits", "Optional libraries"):
        check(("\n%s" % title) in ("\n" + out), "missing section " + title)
    doc = info_json()
    check(doc["cpu"]["model"] in out, out)
    check("perf_event_paranoid  %d:" % doc["permission"]["paranoid"] in out, out)
    check("sysctl -w kernel.perf_event_paranoid=N" in out, out)
    check("%d Hz" % doc["limits"]["max_sample_rate"] in out, out)
    for p in doc["pmus"]:
        check(p["name"] in out, p)
    # Each feature line says yes or no as the JSON does.
    names = {"hardware_events": "hardware events",
             "user_read": "user-space counter read",
             "overflow_interrupts": "overflow interrupts",
             "sampling": "sampling", "multiplexing": "multiplexing",
             "tracepoints": "tracepoints", "breakpoints": "breakpoints",
             "tsc": "virtual TSC"}
    lines = out.splitlines()
    for key, name in names.items():
        want = ("yes" if doc["features"][key] else "no").ljust(3) + " " + name
        check(any(l.startswith("  " + want + " ") for l in lines), (want, out))
    if doc["tracefs"]["mounted"]:
        check("mounted at %s" % doc["tracefs"]["path"] in out, out)


@case
def help_equals_help_info():
    a = perfex("info", "--help")
    b = perfex("help", "info")
    c = perfex("info", "-h")
    check(a.returncode == 0 and b.returncode == 0 and c.returncode == 0, (a, b))
    check(a.stdout == b.stdout == c.stdout, (a.stdout, b.stdout))
    check(a.stdout.startswith("usage: perfex info"), a.stdout)
    check("-j" in a.stdout, a.stdout)


@case
def usage_errors():
    r = perfex("info", "--bogus")
    check(r.returncode == EXIT["usage"], r)
    check(r.stderr.startswith("perfex: unknown option '--bogus'"), r.stderr)
    r = perfex("info", "-q")
    check(r.returncode == EXIT["usage"] and "unknown option '-q'" in r.stderr, r)
    r = perfex("info", "extra")
    check(r.returncode == EXIT["usage"] and "unexpected argument 'extra'" in r.stderr, r)
    check(r.stdout == "", r.stdout)


def in_private_mount_ns(script):
    require_root()
    if not shutil.which("unshare"):
        skip("unshare is not installed (util-linux)")
    r = subprocess.run(["unshare", "--mount", "--propagation", "private",
                        "sh", "-c", script], capture_output=True, text=True,
                       timeout=60)
    if r.returncode == 97:
        skip("cannot unmount tracefs in a private mount namespace: " + r.stderr)
    if "unshare:" in r.stderr:
        skip("unshare failed: " + r.stderr.strip())
    return r


@case
def tracefs_absent_says_how_to_mount():
    # Only inside a new mount namespace: the machine's mount stays.
    script = ("for m in $(awk '$3==\"tracefs\"{print $2}' /proc/self/mounts | sort -r); do "
              "umount \"$m\" || exit 97; done; "
              "awk '$3==\"tracefs\"' /proc/self/mounts | grep -q . && exit 97; "
              "%s info && %s info -j && "
              "! awk '$3==\"tracefs\"' /proc/self/mounts | grep -q . || exit 98"
              % (PERFEX, PERFEX))
    r = in_private_mount_ns(script)
    # 98: perfex left a tracefs mount behind (the library never mounts).
    check(r.returncode == 0, r)
    text, _, js = r.stdout.partition("{")
    check("not mounted" in text, text)
    check("mount -t tracefs nodev /sys/kernel/tracing" in text, text)
    doc = json.loads("{" + js)
    check(doc["tracefs"] == {"mounted": False, "path": None, "readable": False},
          doc["tracefs"])
    check(not doc["features"]["tracepoints"], doc["features"])


@case
def unprivileged_user():
    require_root()
    def drop():
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
    r = subprocess.run([PERFEX, "info", "-j"], capture_output=True, text=True,
                       timeout=60, preexec_fn=drop)
    if r.returncode == 126 or "Permission denied" in r.stderr:
        skip("the build directory is not readable by nobody: " + r.stderr)
    check(r.returncode == 0, r)
    doc = json.loads(r.stdout)
    check(doc["permission"]["privileged"] is False, doc["permission"])
    mnt = tracefs_mount()
    # nobody cannot read tracepoint ids (docs/kernel-notes.md 15): not readable.
    if mnt:
        check(doc["tracefs"]["mounted"] and not doc["tracefs"]["readable"],
              doc["tracefs"])
    r = subprocess.run([PERFEX, "info"], capture_output=True, text=True,
                       timeout=60, preexec_fn=drop)
    check(r.returncode == 0, r)
    if mnt:
        check("not readable by you" in r.stdout, r.stdout)
    check("you are privileged" not in r.stdout, r.stdout)
    # msr events need kernel-mode permission: the hint says which.
    if (os.path.isdir("/sys/bus/event_source/devices/msr") and
            int(read("/proc/sys/kernel/perf_event_paranoid")) >= 2):
        check(not doc["features"]["tsc"], doc["features"])
        check("perf_event_paranoid <= 1" in doc["hints"]["tsc"], doc["hints"])
        check("-> msr events count in kernel mode too" in r.stdout, r.stdout)


run_cases()
