# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex list: the JSON document parses and holds what tracefs and sysfs
hold (syscalls:sys_enter_getppid under topic syscalls, the software
events, the PMUs' named events); the text groups tracepoints by
subsystem; FILTER as substring, glob and class; usage errors; tracefs
absent in a private mount namespace."""
import fnmatch
import json
import os
import shutil
import subprocess

from pctest import EXIT, PERFEX, case, check, perfex, require_root, require_tracefs, run_cases, skip

KINDS = {"hardware", "cache", "software", "tracepoint", "pmu", "raw", "breakpoint"}
SOFTWARE = ("cpu-clock", "task-clock", "page-faults", "context-switches",
            "cpu-migrations")


def tracefs_root():
    for root in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        if os.access(os.path.join(root, "events"), os.R_OK):
            return root
    return None


def list_json(*args):
    r = perfex("list", "-j", *args)
    check(r.returncode == 0, r)
    return json.loads(r.stdout)


def text_names(out):
    """Event names of the text listing: the first word of each event line."""
    return [l.split()[0] for l in out.splitlines() if l.startswith("  ")]


@case
def json_parses_and_has_the_basics():
    doc = list_json()
    check(doc["schema_version"] == 1, doc.keys())
    check(doc["filter"] is None, doc["filter"])
    events = doc["events"]
    check(events, "no events")
    for e in events:
        check(set(e) == {"name", "kind", "pmu", "topic", "desc"}, e)
        check(e["kind"] in KINDS, e)
        check(isinstance(e["name"], str) and e["name"], e)
        check(isinstance(e["desc"], str), e)
    names = {e["name"]: e for e in events}
    for sw in SOFTWARE:
        check(sw in names and names[sw]["kind"] == "software", sw)
    check(len(names) == len(events), "an event listed twice")


@case
def getppid_tracepoint_under_syscalls():
    require_tracefs()
    doc = list_json()
    tp = [e for e in doc["events"] if e["name"] == "syscalls:sys_enter_getppid"]
    check(len(tp) == 1, tp)
    check(tp[0]["kind"] == "tracepoint" and tp[0]["topic"] == "syscalls", tp)
    check(doc["tracefs"] == {"mounted": True, "readable": True}, doc["tracefs"])


@case
def tracepoints_are_those_of_tracefs():
    require_tracefs()
    root = tracefs_root()
    doc = list_json()
    listed = {e["name"] for e in doc["events"] if e["kind"] == "tracepoint"}
    on_disk = set()
    events = os.path.join(root, "events")
    for sub in os.listdir(events):
        d = os.path.join(events, sub)
        if not os.path.isdir(d):
            continue
        for ev in os.listdir(d):
            if os.path.exists(os.path.join(d, ev, "id")):
                on_disk.add("%s:%s" % (sub, ev))
    check(listed <= on_disk, sorted(listed - on_disk)[:10])
    syscalls = {n for n in on_disk if n.startswith("syscalls:")}
    check(syscalls and syscalls <= listed, sorted(syscalls - listed)[:10])
    for e in doc["events"]:
        if e["kind"] == "tracepoint":
            check(e["name"].split(":")[0] == e["topic"], e)


@case
def pmu_sysfs_events_are_listed():
    base = "/sys/bus/event_source/devices"
    doc = list_json()
    by_pmu = {}
    for e in doc["events"]:
        if e["kind"] == "pmu":
            by_pmu.setdefault(e["pmu"], []).append(e["name"])
    seen = 0
    for pmu in sorted(os.listdir(base)):
        evdir = os.path.join(base, pmu, "events")
        if not os.path.isdir(evdir):
            continue
        for ev in os.listdir(evdir):
            if "." in ev:
                continue  # .scale, .unit describe an event
            names = by_pmu.get(pmu, [])
            check(any(ev in n for n in names), (pmu, ev, names[:10]))
            seen += 1
    if not seen:
        skip("no PMU here has named sysfs events")


@case
def hardware_events_only_with_a_pmu():
    info = perfex("info", "-j")
    check(info.returncode == 0, info)
    hw = json.loads(info.stdout)["features"]["hardware_events"]
    doc = list_json()
    kinds = {e["kind"] for e in doc["events"]}
    if hw:
        check("hardware" in kinds, kinds)
    else:
        check("hardware" not in kinds and "cache" not in kinds, kinds)


@case
def text_groups_tracepoints_by_subsystem():
    require_tracefs()
    r = perfex("list")
    check(r.returncode == 0, r)
    lines = r.stdout.splitlines()
    check("Software events:" in lines, lines[:20])
    check("Tracepoints:" in lines, "no Tracepoints heading")
    heading = None
    found = False
    for l in lines[lines.index("Tracepoints:") + 1:]:
        if not l:
            break
        if l.startswith(" ") and not l.startswith("  "):
            heading = l.strip().rstrip(":")
            continue
        name = l.split()[0]
        check(name.split(":")[0] == heading, (heading, l))
        found |= name == "syscalls:sys_enter_getppid"
    check(found, "syscalls:sys_enter_getppid not under its subsystem")
    # The same events in text and JSON.
    doc = list_json()
    check(sorted(text_names(r.stdout)) == sorted(e["name"] for e in doc["events"]))


@case
def filter_substring():
    require_tracefs()
    r = perfex("list", "getppid")
    check(r.returncode == 0, r)
    names = text_names(r.stdout)
    check("syscalls:sys_enter_getppid" in names, names)
    check("syscalls:sys_exit_getppid" in names, names)
    doc = list_json("GETPPID")
    check(doc["filter"] == "GETPPID")
    for e in doc["events"]:
        check("getppid" in (e["name"] + e["desc"]).lower(), e)
    check(sorted(e["name"] for e in doc["events"]) == sorted(names))


@case
def filter_glob():
    require_tracefs()
    pattern = "syscalls:sys_enter_getp*"
    doc = list_json(pattern)
    names = [e["name"] for e in doc["events"]]
    check("syscalls:sys_enter_getppid" in names, names)
    check("syscalls:sys_enter_getpid" in names, names)
    for n in names:
        check(fnmatch.fnmatchcase(n, pattern), n)
    # The option may follow the filter.
    r = perfex("list", pattern, "-j")
    check(r.returncode == 0 and json.loads(r.stdout)["events"] == doc["events"], r)


@case
def filter_class():
    doc = list_json("sw")
    kinds = {e["kind"] for e in doc["events"]}
    check(kinds == {"software"}, kinds)
    check({"task-clock", "page-faults"} <= {e["name"] for e in doc["events"]})


@case
def filter_without_match():
    r = perfex("list", "no-such-event-xyzzy")
    check(r.returncode == 0, r)
    check(r.stdout == "", r.stdout)
    check("perfex: no event matches 'no-such-event-xyzzy'" in r.stderr, r.stderr)
    doc = list_json("no-such-event-xyzzy")
    check(doc["events"] == [], doc)


@case
def help_and_usage_errors():
    a = perfex("list", "--help")
    b = perfex("help", "list")
    check(a.returncode == 0 and a.stdout == b.stdout, (a, b))
    check(a.stdout.startswith("usage: perfex list"), a.stdout)
    r = perfex("list", "a", "b")
    check(r.returncode == EXIT["usage"] and "unexpected argument 'b'" in r.stderr, r)
    r = perfex("list", "--bogus")
    check(r.returncode == EXIT["usage"] and "unknown option '--bogus'" in r.stderr, r)


def perf_list(*args):
    if not shutil.which("perf"):
        skip("perf is not installed: no reference")
    r = subprocess.run(["perf", "list", "--no-desc"] + list(args),
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        skip("perf list does not run here: " + r.stderr.strip()[:200])
    names = set()
    for line in r.stdout.splitlines():
        if "[" not in line or not line.startswith("  "):
            continue
        for name in line.split("[")[0].split(" OR "):
            if name.strip():
                names.add(name.strip())
    return names


@case
def same_tracepoints_and_software_events_as_perf():
    require_tracefs()
    ours = list_json()["events"]
    theirs = perf_list("tracepoint")
    mine = {e["name"] for e in ours if e["kind"] == "tracepoint"}
    check(theirs, "perf listed no tracepoint")
    check(mine == theirs, ("only perfex", sorted(mine - theirs)[:10],
                           "only perf", sorted(theirs - mine)[:10]))
    theirs = perf_list("sw")
    mine = {e["name"] for e in ours if e["kind"] == "software"}
    # perf adds its own tool events (duration_time, user_time, ...) to sw.
    check({"task-clock", "page-faults", "cs"} <= theirs, theirs)
    missing = {n for n in theirs - mine if not n.endswith("_time")}
    check(not missing, sorted(missing))


@case
def tracefs_absent_lists_the_rest():
    require_root()
    if not shutil.which("unshare"):
        skip("unshare is not installed (util-linux)")
    # debugfs goes too: a mounted debugfs brings tracefs back on the first
    # access to /sys/kernel/debug/tracing (an automount).
    script = ("for m in $(awk '$3==\"tracefs\"||$3==\"debugfs\"{print $2}' "
              "/proc/self/mounts | sort -r); do "
              "umount \"$m\" || exit 97; done; %s list -j > /dev/null && %s list" %
              (PERFEX, PERFEX))
    r = subprocess.run(["unshare", "--mount", "--propagation", "private",
                        "sh", "-c", script], capture_output=True, text=True,
                       timeout=60)
    if r.returncode == 97 or "unshare:" in r.stderr:
        skip("cannot unmount tracefs in a private mount namespace: " + r.stderr)
    check(r.returncode == 0, r)
    names = text_names(r.stdout)
    check("task-clock" in names, names[:20])
    check(not any(n.startswith("syscalls:") for n in names), names[:20])
    check("mount -t tracefs nodev /sys/kernel/tracing" in r.stderr, r.stderr)


run_cases()
