# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Metrics from Python: a user's metrics file (pmu-events JSON) with -M
style names and groups gives exact values over getppid/getpid
tracepoints, numbers not strings; the generic metrics (rates, CPUs
utilised) come beside the counts; an unknown metric says so with a
hint; a file that is not pmu-events JSON is refused."""
import json
import os
import tempfile

from pyharness import (PID, PPID, case, check, getpid, getppid,
                       need_tracepoints, perfctr, run_cases)

METRICS = [
    {"MetricName": "ppid_per_pid", "MetricGroup": "calls",
     "BriefDescription": "getppid calls per getpid call",
     "MetricExpr": "%s / %s" % (PPID, PID)},
    {"MetricName": "ppid_share", "MetricGroup": "calls",
     "ScaleUnit": "100%", "MetricExpr": "d_ratio(%s, %s + %s)"
     % (PPID, PPID, PID)},
]


def metrics_file(entries):
    fd, path = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(entries, f)
    return path


@case
def a_metric_group_of_the_users_file():
    need_tracepoints()
    path = metrics_file(METRICS)
    try:
        table = perfctr.Metrics([path], model=False)
        mine = {m["name"]: m for m in table.list()
                if m["source"] == path}
        check(set(mine) == {"ppid_per_pid", "ppid_share"}, mine)
        plan = table.plan("calls")
        check([m["name"] for m in plan.metrics] ==
              ["ppid_per_pid", "ppid_share"] or
              sorted(m["name"] for m in plan.metrics) ==
              ["ppid_per_pid", "ppid_share"], plan.metrics)
        check(all(g.startswith("{") for g in plan.groups), plan.groups)
        with perfctr.count(metrics="calls", metric_files=[path]) as c:
            getppid(300)
            getpid(100)
        m = c.metrics
        check(m["ppid_per_pid"] == 3.0, m)
        check(m["ppid_share"] == 75.0, m)
        check(isinstance(m["ppid_share"], float))
        one = perfctr.count(PPID, metrics="ppid_per_pid",
                            metric_files=[path])
        with one:
            getppid(10)
            getpid(5)
        check(one.metrics["ppid_per_pid"] == 2.0, one.metrics)
    finally:
        os.unlink(path)


@case
def generic_metrics_beside_the_counts():
    need_tracepoints()
    with perfctr.count("task-clock,%s" % PPID) as c:
        getppid(1000)
    m = c.metrics
    check(0 < m["cpus-utilized"] <= 2.5, m)
    rate = m["%s/sec" % PPID]
    want = 1000 / (c["task-clock"] / 1e9)
    check(abs(rate - want) <= 1e-6 * want, (rate, want))


@case
def unknown_metric_and_bad_file():
    try:
        perfctr.count(PPID, metrics="no_such_metric_or_group")
    except perfctr.EventError as e:
        check("no_such_metric_or_group" in e.message and e.hint, str(e))
    else:
        check(False, "an unknown metric was accepted")
    path = metrics_file({"not": "a list"})
    try:
        perfctr.Metrics([path])
    except perfctr.Error as e:
        check("pmu-events JSON" in str(e), str(e))
    else:
        check(False, "a bad metrics file was accepted")
    finally:
        os.unlink(path)
    try:
        perfctr.Metrics(["/nonexistent/metrics.json"])
    except perfctr.Error as e:
        check(e.errno == 2, str(e))
    else:
        check(False, "a missing metrics file was accepted")


run_cases()
