# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex -M: metrics of the user's own file over tracepoints give exact
values (one run and -r 3), in the human, CSV, JSON and --metric-only
layouts, with thresholds marked; events shared between metrics counted
once as perf stat shares them (--metric-no-merge, --metric-no-group); a
metric that cannot be computed here
says why while the others print; the CPU model's tables (imported from
linux-source-6.12) through --topdown and -M GROUP; perfex list metrics
against perf list metrics."""
import json
import os
import re
import shutil
import subprocess
import tempfile

from pctest import EXIT, BUILD, case, check, perfex, run_cases, skip, work
from stathelp import csv_count, need_tracepoint, run_csv, run_json

PPID = "syscalls:sys_enter_getppid"
PID = "syscalls:sys_enter_getpid"
TABLES = os.path.join(BUILD, "share", "perfctr", "pmu-events")

METRICS = [
    {"MetricName": "ppid_per_pid", "MetricGroup": "calls",
     "BriefDescription": "getppid calls per getpid call",
     "MetricExpr": "%s / %s" % (PPID, PID)},
    {"MetricName": "ppid_share", "MetricGroup": "calls",
     "ScaleUnit": "100%", "MetricThreshold": "ppid_share > 0.5",
     "MetricExpr": "d_ratio(%s, %s + %s)" % (PPID, PPID, PID)},
    {"MetricName": "pid_rate", "MetricGroup": "rates",
     "ScaleUnit": "1calls/s", "MetricExpr": "%s / duration_time" % PID},
    {"MetricName": "bad_syntax", "MetricExpr": "%s / * 2" % PID},
]


def metrics_file(entries=METRICS):
    f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump(entries, f)
    f.close()
    return f.name


_base = {}


def baselines():
    """The workload's own start-up calls of both (N = 0), measured."""
    if not _base:
        r, rows = run_csv("-e", "%s,%s" % (PPID, PID), "--", work(),
                          "getppid", "0", "getpid", "0")
        check(r.returncode == 0, r.stderr)
        _base["ppid"] = csv_count(rows, PPID)
        _base["pid"] = csv_count(rows, PID)
    return _base["ppid"], _base["pid"]


WORKLOAD = ["getppid", "3000", "getpid", "1000"]


def exact():
    bp, bq = baselines()
    a, b = bp + 3000, bq + 1000
    return a / b, (a / (a + b)) * 100


def metric(doc, name):
    for m in doc.get("metrics", []):
        if m["name"] == name:
            return m
    check(False, "no metric %s in %r" % (name, doc.get("metrics")))


@case
def user_metrics_give_exact_values():
    need_tracepoint()
    path = metrics_file()
    try:
        ratio, share = exact()
        r, doc = run_json("--metrics-file", path, "-M", "calls", "--",
                          work(), *WORKLOAD)
        check(r.returncode == 0, r.stderr)
        m = metric(doc, "ppid_per_pid")
        check(m["status"] == "ok" and m["value"] == ratio, (m, ratio))
        m = metric(doc, "ppid_share")
        check(m["value"] == share and m["unit"] == "%", (m, share))
        check(m["threshold"] == "out", m)	# 75 % > 50 %
        check(m["source"] == path and m["groups"] == "calls", m)
        # the task time, then the metrics' events, each once
        check([e["name"] for e in doc["events"]] ==
              ["task-clock", PPID, PID], doc["events"])
    finally:
        os.unlink(path)


@case
def repeat_gives_each_metrics_mean_and_spread():
    need_tracepoint()
    path = metrics_file()
    try:
        ratio, _ = exact()
        r, doc = run_json("--metrics-file", path, "-M", "ppid_per_pid",
                          "-r", "3", "--", work(), *WORKLOAD)
        check(r.returncode == 0, r.stderr)
        m = metric(doc, "ppid_per_pid")
        check(m["runs"] == 3 and m["value"] == ratio, (m, ratio))
        check(m["stddev"] == 0 and m["min"] == m["max"] == ratio, m)
        # the human table shows the spread beside the mean
        r = perfex("--metrics-file", path, "-M", "ppid_per_pid", "-r", "3",
                   "--", work(), *WORKLOAD)
        check(r.returncode == 0, r.stderr)
        check(re.search(r"#\s+%.2f ppid_per_pid\s+\( \+-\s+0\.00%% \)" % ratio,
                        r.stderr), r.stderr)
    finally:
        os.unlink(path)


@case
def human_csv_and_metric_only_layouts():
    need_tracepoint()
    path = metrics_file()
    try:
        ratio, share = exact()
        r = perfex("--metrics-file", path, "-M", "calls", "--", work(),
                   *WORKLOAD)
        check(r.returncode == 0, r.stderr)
        lines = r.stderr.splitlines()
        row = [i for i, l in enumerate(lines)
               if re.match(r"^\s+\d+\s+%s" % PPID, l)]
        check(row, r.stderr)
        # the metrics follow the row of their first event, marked when
        # out of their healthy range
        check(re.match(r"^\s+# +%.2f ppid_per_pid$" % ratio, lines[row[0] + 1]),
              lines)
        check(re.match(r"^\s+# +%.2f %%  ppid_share  \(!\)$" % share,
                       lines[row[0] + 2]), lines)

        # perf's layout: a row with no ratio of its own (no task-clock,
        # so no rate) carries its first metric on its own line, and with
        # -r the row's spread ends the line
        for runs in ([], ["-r", "2"]):
            r = perfex("--metrics-file", path, "-e", PID, "-M", "calls",
                       *runs, "--", work(), *WORKLOAD)
            check(r.returncode == 0, r.stderr)
            lines = r.stderr.splitlines()
            row = [i for i, l in enumerate(lines)
                   if re.match(r"^\s+\d+\s+%s" % PPID, l)]
            check(len(row) == 1, r.stderr)
            spread = r"  \( \+-\s+0\.00% \)" if runs else ""
            check(re.match(r"^\s+\d+\s+%s\s+# +%.2f ppid_per_pid%s$" %
                           (PPID, ratio, spread), lines[row[0]]), lines)
            check(re.match(r"^\s+# +%.2f %%  ppid_share  \(!\)%s$" %
                           (share, spread), lines[row[0] + 1]), lines)

        r, rows = run_csv("--metrics-file", path, "-M", "calls", "--",
                          work(), *WORKLOAD)
        check(r.returncode == 0, r.stderr)
        mrows = [row for row in rows if not row[0] and len(row) > 6]
        check(["%g" % ratio, "ppid_per_pid", ""] == mrows[0][5:8], rows)
        check(["%g" % share, "% ppid_share", "over-threshold"] ==
              mrows[1][5:8], rows)

        r = perfex("--metrics-file", path, "-M", "calls", "--metric-only",
                   "--", work(), *WORKLOAD)
        check(r.returncode == 0, r.stderr)
        check(PPID not in r.stderr, r.stderr)
        check(re.search(r"^\s+%.2f ppid_per_pid$" % ratio, r.stderr, re.M),
              r.stderr)
    finally:
        os.unlink(path)


@case
def metric_not_computable_here_says_why_others_print():
    need_tracepoint()
    path = metrics_file()
    try:
        ratio, _ = exact()
        # ipc needs the hardware's instructions and cycles: this machine
        # may have no PMU; ppid_per_pid is computed all the same
        r, doc = run_json("--metrics-file", path, "-M", "ppid_per_pid,ipc",
                          "--", work(), *WORKLOAD)
        check(r.returncode == 0, r.stderr)
        check(metric(doc, "ppid_per_pid")["value"] == ratio, doc)
        ipc = metric(doc, "ipc")
        if ipc["status"] == "ok":
            skip("this machine counts instructions and cycles")
        check(ipc["value"] is None and "instructions" in ipc["reason"], ipc)
        r = perfex("--metrics-file", path, "-M", "ppid_per_pid,ipc", "--",
                   work(), *WORKLOAD)
        check(re.search(r"# +ipc: event 'instructions' cannot be counted "
                        r"here", r.stderr), r.stderr)

        # CSV: the value column empty and the reason in the last one
        r, rows = run_csv("--metrics-file", path, "-M", "ppid_per_pid,ipc",
                          "--", work(), *WORKLOAD)
        check(r.returncode == 0, r.stderr)
        mrows = {row[6]: row for row in rows if not row[0] and len(row) > 7}
        check(mrows["ppid_per_pid"][5] == "%g" % ratio, rows)
        check(mrows["ipc"][5] == "" and re.match(
            r"event 'instructions' cannot be counted here", mrows["ipc"][7]),
            rows)
        # --metric-only, human and CSV alike
        r = perfex("--metrics-file", path, "-M", "ppid_per_pid,ipc",
                   "--metric-only", "--", work(), *WORKLOAD)
        check(r.returncode == 0, r.stderr)
        check(re.search(r"^\s+%.2f ppid_per_pid$" % ratio, r.stderr, re.M),
              r.stderr)
        check(re.search(r"^\s+ipc: event 'instructions' cannot be counted "
                        r"here", r.stderr, re.M), r.stderr)
        r, rows = run_csv("--metrics-file", path, "-M", "ppid_per_pid,ipc",
                          "--metric-only", "--", work(), *WORKLOAD)
        check(r.returncode == 0, r.stderr)
        check([row[5:7] for row in rows] == [["%g" % ratio, "ppid_per_pid"],
                                             ["", "ipc"]], rows)
    finally:
        os.unlink(path)


SHARED = [
    {"MetricName": "ppid_count", "MetricGroup": "shared",
     "MetricExpr": PPID},
    {"MetricName": "ppid_per_pid", "MetricGroup": "shared",
     "MetricExpr": "%s / %s" % (PPID, PID)},
    {"MetricName": "ppid_and_sleeps", "MetricGroup": "partial",
     "MetricExpr": "%s + %s" % (PPID, "syscalls:sys_enter_clock_nanosleep")},
    {"MetricName": "ppid_per_pid2", "MetricGroup": "partial",
     "MetricExpr": "%s / %s" % (PPID, PID)},
]


def opened(*args):
    """perf_event_open calls of one perfex run, counted by perfex: exact
    (a tracepoint of the syscall)."""
    r, rows = run_csv("-e", "syscalls:sys_enter_perf_event_open", "--",
                      os.path.join(BUILD, "perfex"), "-o", os.devnull, *args)
    check(r.returncode == 0, r.stderr)
    return csv_count(rows, "syscalls:sys_enter_perf_event_open")


@case
def shared_events_are_opened_once_values_unchanged():
    """perf 6.1's rules (perf stat -v: "Events in 'ppid_count' fully
    contained within 'ppid_per_pid'"): the metric whose events a larger
    one's group holds is computed from that group, whichever comes first
    in the list; --metric-no-merge gives it a group of its own."""
    need_tracepoint()
    path = metrics_file(SHARED)
    try:
        bp, bq = baselines()
        run = ["--metrics-file", path, "-M", "shared", "--", work(),
               *WORKLOAD]
        values = {}
        for opt in ([], ["--metric-no-merge"], ["--metric-no-group"]):
            r, doc = run_json(*opt, *run)
            check(r.returncode == 0, r.stderr)
            names = [e["name"] for e in doc["events"]]
            check(names.count(PPID) == (2 if opt else 1) - (
                opt == ["--metric-no-group"]), (opt, names))
            check(all(e["value"] == bp + 3000
                      for e in doc["events"] if e["name"] == PPID), doc)
            values[tuple(opt)] = (metric(doc, "ppid_count")["value"],
                                  metric(doc, "ppid_per_pid")["value"])
        want = (bp + 3000, (bp + 3000) / (bq + 1000))
        check(all(v == want for v in values.values()), (values, want))
        # what the kernel was asked: one perf_event_open less merged
        merged = opened(*run)
        check(opened("--metric-no-merge", *run) == merged + 1, merged)
    finally:
        os.unlink(path)


@case
def partial_overlap_keeps_groups_no_group_shares():
    """Metrics sharing some of their events keep a group each (as perf
    6.1: a group's events must stay together), so the shared event is
    counted twice; --metric-no-group puts all in one list, each event
    once; both options together give each metric its own list."""
    need_tracepoint()
    path = metrics_file(SHARED)
    try:
        bp, _ = baselines()
        for opt, n in (([], 2), (["--metric-no-group"], 1),
                       (["--metric-no-group", "--metric-no-merge"], 2)):
            r, doc = run_json(*opt, "--metrics-file", path, "-M", "partial",
                              "--", work(), *WORKLOAD)
            check(r.returncode == 0, r.stderr)
            names = [e["name"] for e in doc["events"]]
            check(names.count(PPID) == n, (opt, names))
            check(metric(doc, "ppid_and_sleeps")["value"] == bp + 3000,
                  doc["metrics"])
        r = perfex("--metric-no-merge", "--", "true")
        check(r.returncode == EXIT["usage"] and "go with -M" in r.stderr, r)
        r = perfex("--metric-no-group", "--", "true")
        check(r.returncode == EXIT["usage"] and "go with -M" in r.stderr, r)
    finally:
        os.unlink(path)


@case
def wall_time_metrics():
    need_tracepoint()
    path = metrics_file()
    try:
        bp, bq = baselines()
        r, doc = run_json("--metrics-file", path, "-M", "pid_rate", "--",
                          work(), *WORKLOAD)
        check(r.returncode == 0, r.stderr)
        m = metric(doc, "pid_rate")
        want = (bq + 1000) / (doc["elapsed_ns"] * 1e-9)
        check(abs(m["value"] - want) <= 1e-6 * want, (m, want))
    finally:
        os.unlink(path)


@case
def errors_name_the_metric_and_position():
    path = metrics_file()
    try:
        r = perfex("--metrics-file", path, "--metrics", "nonesuch", "--",
                   "true")
        check(r.returncode == EXIT["usage"], r)
        check("perfex: unknown metric 'nonesuch'" in r.stderr, r.stderr)
        r = perfex("--metrics-file", path, "-M", "bad_syntax", "--", "true")
        check(r.returncode == EXIT["usage"], r)
        check("perfex: cannot parse metric 'bad_syntax' at column 29: "
              "expected a value, found '*'" in r.stderr, r.stderr)
        r = perfex("--metric-only", "--", "true")
        check(r.returncode == EXIT["usage"] and "go with -M" in r.stderr, r)
        r = perfex("--td-level", "9", "--", "true")
        check(r.returncode == EXIT["usage"] and "--td-level" in r.stderr, r)
    finally:
        os.unlink(path)
    bad = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    bad.write("[ { \"MetricName\": ")
    bad.close()
    try:
        r = perfex("--metrics-file", bad.name, "-M", "x", "--", "true")
        check(r.returncode == EXIT["usage"] and bad.name in r.stderr, r)
    finally:
        os.unlink(bad.name)


def need_tables():
    if not os.path.exists(os.path.join(TABLES, "x86", "mapfile.csv")):
        skip("no imported pmu-events tables in %s (linux-source-6.12 not "
             "installed at build time)" % TABLES)


def listed(r):
    """Metric names of a `list metrics` text."""
    return {l.strip() for l in r.stdout.splitlines()
            if l.startswith("  ") and not l.startswith("   ")}


@case
def topdown_and_model_groups():
    need_tables()
    r = perfex("list", "-j", "metrics")
    check(r.returncode == 0, r)
    doc = json.loads(r.stdout)
    if not doc["model"]:
        skip("no table for this CPU (%s): %s" % (doc["cpuid"], doc["missing"]))
    r = perfex("list", "-j", "metricgroups")
    check(r.returncode == 0, r)
    groups = {g["name"] for g in json.loads(r.stdout)["metricgroups"]}
    if not groups & {"TopdownL1", "PipelineL1"}:
        # Some models' tables (AMD Zen 2, for one) have no level-1 group:
        # --topdown must then refuse and name the model, not print nothing.
        r = perfex("--topdown", "-j", "--", "true")
        check(r.returncode == EXIT["usage"], r)
        check("no TopDown level 1 metrics" in r.stderr
              and doc["model"] in r.stderr, r)
        return
    r = perfex("--topdown", "-j", "--", "true")
    check(r.returncode == 0, r)
    td = json.loads(r.stdout if r.stdout else r.stderr)
    check(td["metrics"], td)
    for m in td["metrics"]:
        # computed, or a reason
        check(m["status"] == "ok" or m["reason"], m)
        check(re.search("(Topdown|Pipeline)L1", m["groups"], re.I), m)


@case
def list_metrics_and_groups():
    path = metrics_file(METRICS[:3])
    env = dict(os.environ, PERFCTR_METRICS_PATH=path)
    try:
        r = perfex("list", "metrics", env=env)
        check(r.returncode == 0, r)
        names = listed(r)
        check({"ppid_per_pid", "ppid_share", "pid_rate", "ipc"} <= names,
              names)
        check("       [getppid calls per getpid call]" in r.stdout, r.stdout)
        r = perfex("list", "metricgroups", env=env)
        check(re.search(r"^  calls\s+\(2 metrics\)$", r.stdout, re.M),
              r.stdout)
        r = perfex("list", "-j", "metricgroups", env=env)
        doc = json.loads(r.stdout)
        check({"name": "rates", "metrics": 1} in doc["metricgroups"], doc)
    finally:
        os.unlink(path)


@case
def missing_tables_are_explained():
    empty = tempfile.mkdtemp()
    env = dict(os.environ, PERFCTR_METRICS_PATH=empty)
    try:
        # not the build tree's tables, and nothing installed at the default
        # place of this build: the model's metrics are missing, and why
        r = perfex("list", "-j", "metrics", env=env)
        doc = json.loads(r.stdout)
        if doc["model"]:
            skip("tables are installed at the default place")
        check("linux-source-6.12" in doc["missing"], doc)
        r = perfex("list", "metrics", env=env)
        check("hint: only the generic and your own metrics" in r.stderr, r)
        check("ipc" in listed(r), r.stdout)
    finally:
        os.rmdir(empty)


# perf 6.1's tables (linux-perf of Debian 12) against the 6.12 tables
# perfex imports: perf 6.1 has no mapfile entry for AMD family 0x1a (Zen 5,
# amdzen5 came with 6.10) so on this project's EPYC build machines it lists
# no metric at all, and its Zen 4 and Intel tables are older versions
# (metrics renamed or added since).  Differences are printed by name.
KNOWN_DIFFERENCES = {
    # AuthenticAMD-26: none in 6.1's mapfile
    "AuthenticAMD-26": "perf 6.1 has no table for AMD family 26 (Zen 5)",
}


@case
def list_metrics_covers_perfs():
    need_tables()
    perf = shutil.which("perf")
    if not perf:
        skip("perf is not installed (linux-perf)")
    p = subprocess.run([perf, "list", "--no-desc", "metrics"],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        skip("perf list metrics failed: %s" % p.stderr.strip())
    theirs = {l.strip() for l in p.stdout.splitlines()
              if l.startswith("  ") and l.strip() and
              not l.strip().startswith("[")}
    r = perfex("list", "metrics")
    check(r.returncode == 0, r)
    ours = listed(r)
    doc = json.loads(perfex("list", "-j", "metrics").stdout)
    cpu = "-".join(doc["cpuid"].split("-")[:2])
    only_perf = sorted(theirs - ours)
    only_ours = sorted(ours - theirs)
    print("# perf %s lists %d metrics, perfex %d (%s, %s)" %
          (subprocess.run([perf, "--version"], capture_output=True,
                          text=True).stdout.strip(), len(theirs), len(ours),
           doc["cpuid"], doc["model"]))
    print("# only perf: %s" % (" ".join(only_perf) or "none"))
    print("# only perfex: %d (%s...)" % (len(only_ours),
                                         " ".join(only_ours[:5])))
    if not theirs:
        check(cpu in KNOWN_DIFFERENCES, "perf lists no metric for %s" % cpu)
        print("# %s" % KNOWN_DIFFERENCES[cpu])
        return
    check(not only_perf, "metrics perf lists and perfex does not: %s"
          % only_perf)


run_cases()
