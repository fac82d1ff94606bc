# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex serve: the exporter over HTTP, with real components where they
are installed (Debian's prometheus: promtool checks the output, and a
Prometheus started on loopback scrapes the exporter every second).  Exact
per-cgroup counts come from getppid tracepoints of workloads moved into
cgroups the test makes; Prometheus's HTTP API must give the same numbers.
Every process a case starts is killed in its finally, every wait bounded."""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from pctest import EXIT, TOP, case, check, perfex, require_root, run_cases, \
    skip
from stathelp import TP, exit_baseline, has_hw_pmu, need_tracepoint, wait_for
from cgrouphelp import Cgroups, Member
from servehelp import Serve, finish, need_http, samples, total
from promhelp import Prometheus

CONTRIB = os.path.join(TOP, "contrib")
# What Prometheus 2.x sends.
PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0,"
                     "application/openmetrics-text;version=0.0.1;q=0.75,"
                     "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
OM_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
TEXT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def promtool():
    path = shutil.which("promtool")
    if not path:
        skip("promtool is not installed (apt-get install prometheus)")
    return path


def promtool_check(text):
    r = subprocess.run([promtool(), "check", "metrics"], input=text,
                       capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


# ------------------------------------------------------------- the output


@case
def once_output_passes_promtool():
    require_root()
    r = perfex("serve", "--once", "-e", "task-clock", "-e",
               "{context-switches,page-faults}", "--label", "node=test-1",
               "-C", "0")
    check(r.returncode == 0, r.stderr)
    for fam, kind in (("perfex_events_total", "counter"),
                      ("perfex_events_scaled", "gauge"),
                      ("perfex_time_enabled_seconds_total", "counter"),
                      ("perfex_time_running_seconds_total", "counter"),
                      ("perfex_scrape_duration_seconds", "gauge"),
                      ("perfex_open_fds", "gauge")):
        check("# TYPE %s %s\n" % (fam, kind) in r.stdout, (fam, r.stdout))
        check("# HELP %s " % fam in r.stdout, fam)
    rows = samples(r.stdout, "perfex_events_total", node="test-1")
    # -C 0: one CPU, three events.
    check(sorted(dict(k)["event"] for k in rows) ==
          ["context-switches", "page-faults", "task-clock"], rows)
    check(all(dict(k)["cpu"] == "0" for k in rows), rows)
    rc, out = promtool_check(r.stdout)
    check(rc == 0, out)


@case
def machine_without_a_pmu_serves_the_rest():
    require_root()
    r = perfex("serve", "--once", "-e", "cycles", "-e", "task-clock")
    check(r.returncode == 0, r.stderr)
    check(samples(r.stdout, "perfex_events_total", event="task-clock"),
          r.stdout)
    if has_hw_pmu():
        check(not samples(r.stdout, "perfex_event_unavailable"), r.stdout)
        return
    check(samples(r.stdout, "perfex_event_unavailable", event="cycles",
                  reason="no PMU of this machine counts it"), r.stdout)
    check(not samples(r.stdout, "perfex_events_total", event="cycles"))
    check("event 'cycles' cannot count" in r.stderr, r.stderr)


@case
def served_formats_follow_the_accept_header():
    need_http()
    s = Serve("-e", "task-clock")
    try:
        rows = [
            (None, TEXT_TYPE),
            (PROMETHEUS_ACCEPT, OM_TYPE),
            ("application/openmetrics-text; version=1.0.0", OM_TYPE),
            ("application/openmetrics-text", OM_TYPE),
            ("text/plain;version=0.0.4", TEXT_TYPE),
            ("text/plain;q=0.9, application/openmetrics-text;q=0.5",
             TEXT_TYPE),
            ("application/openmetrics-text;version=2.0.0, text/plain",
             TEXT_TYPE),
            ("application/openmetrics-text;q=0, */*", TEXT_TYPE),
            ("application/json", TEXT_TYPE),
        ]
        for accept, want in rows:
            status, ctype, body = s.get(accept=accept)
            check(status == 200 and ctype == want, (accept, status, ctype))
            if want == OM_TYPE:
                check(body.endswith("# EOF\n"), body[-200:])
                check("# TYPE perfex_events counter\n" in body, accept)
                check("# UNIT perfex_time_enabled_seconds seconds\n" in body)
                check("perfex_events_total{" in body, accept)
            else:
                check("# EOF" not in body and "# UNIT" not in body, accept)
                check("# TYPE perfex_events_total counter\n" in body, accept)
        rc, out = promtool_check(s.get()[2])
        check(rc == 0, out)
        status, ctype, body = s.get("/")
        check(status == 200 and 'href="/metrics"' in body, (status, body))
        status, _, body = s.get("/nothing")
        check(status == 404 and "/ lists what is served" in body, (status, body))
    finally:
        check(s.stop() == 0, s.text())
        s.close()


@case
def sigterm_stops_cleanly_and_sigint_too():
    need_http()
    for sig in (signal.SIGTERM, signal.SIGINT):
        s = Serve("-e", "task-clock")
        try:
            check(s.stop(sig) == 0, s.text())
            check(re.search(r"perfex serve: \w.*: stopping", s.text()), s.text())
        finally:
            s.close()


@case
def listen_errors():
    need_http()
    s = Serve("-e", "task-clock")
    try:
        r = perfex("serve", "-l", "127.0.0.1:%d" % s.port, "-e", "task-clock",
                   timeout=60)
        check(r.returncode == EXIT["io"], (r.returncode, r.stderr))
        check("perfex: cannot listen on '127.0.0.1:%d': Address already in use"
              % s.port in r.stderr and "hint:" in r.stderr, r.stderr)
    finally:
        s.stop()
        s.close()
    r = perfex("serve", "--listen", "nowhere", "-e", "task-clock")
    check(r.returncode == EXIT["usage"] and "not ADDR:PORT" in r.stderr,
          (r.returncode, r.stderr))


# ---------------------------------------------------------- configuration


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


@case
def bad_configuration_names_the_line():
    require_root()
    with tempfile.TemporaryDirectory() as d:
        conf = os.path.join(d, "serve.conf")
        rows = [
            ("event task-clock\n\nevnt cycles\n", EXIT["usage"],
             "perfex: config '%s' line 3: unknown key 'evnt'"),
            ("# events\nevent task-clock\nevent cyclez\n", EXIT["event"],
             "perfex: config '%s' line 3: unknown event 'cyclez'"),
            ("label 9node=x\n", EXIT["usage"], "perfex: config '%s' line 1: label "
             "'9node=x' is not NAME=VALUE"),
            ("label cpu=3\n", EXIT["usage"], "perfex: config '%s' line 1: label 'cpu' "
             "is one of perfex serve's own"),
            ("event task-clock\ncgroup\n", EXIT["usage"],
             "perfex: config '%s' line 2: 'cgroup' needs a value"),
            ("event task-clock\nbpf-counters off\n", EXIT["usage"],
             "perfex: config '%s' line 2: bpf-counters 'off' is not yes "
             "or no"),
            ("label mode=x\n", EXIT["usage"], "perfex: config '%s' line 1: label "
             "'mode' is one of perfex serve's own"),
        ]
        for text, code, msg in rows:
            write(conf, text)
            r = perfex("serve", "--once", "--config", conf)
            check(r.returncode == code, (text, r.returncode, r.stderr))
            check(msg % conf in r.stderr, (text, r.stderr))
        r = perfex("serve", "--once", "-c", os.path.join(d, "missing.conf"))
        check(r.returncode == EXIT["usage"] and "cannot read config" in r.stderr,
              r.stderr)


@case
def sighup_reloads_the_configuration():
    need_http()
    need_tracepoint()
    with tempfile.TemporaryDirectory() as d:
        conf = os.path.join(d, "serve.conf")
        write(conf, "event task-clock\nlabel node=before\n")
        s = Serve("-c", conf)
        try:
            text = s.metrics()
            check(samples(text, "perfex_events_total", event="task-clock",
                          node="before"), text)
            write(conf, "# now the tracepoint too\nevent task-clock\n"
                        "event %s\nlabel node=after\n" % TP)
            s.p.send_signal(signal.SIGHUP)
            wait_for(lambda: "configuration reloaded" in s.text(),
                     what="the reload")
            text = s.metrics()
            check(samples(text, "perfex_events_total", event=TP,
                          node="after"), text)
            check(not samples(text, "perfex_events_total", node="before"))
            check(total(text, "perfex_config_reloads_total",
                        result="success") == 1, text)
            # A configuration that does not parse: the log names the
            # line, the running one stays.
            write(conf, "event task-clock\nbogus line\n")
            s.p.send_signal(signal.SIGHUP)
            wait_for(lambda: "reload failed" in s.text(), what="the reload")
            check("line 2: unknown key 'bogus'" in s.text(), s.text())
            text = s.metrics()
            check(samples(text, "perfex_events_total", event=TP,
                          node="after"), text)
            check(total(text, "perfex_config_reloads_total",
                        result="failure") == 1, text)
            check(total(text, "perfex_config_last_reload_successful") == 0,
                  text)
            check(s.p.poll() is None, s.text())
        finally:
            check(s.stop() == 0, s.text())
            s.close()


# ---------------------------------------------------------------- cgroups


@case
def cgroups_made_later_are_followed_and_counted_exactly():
    need_http()
    need_tracepoint()
    base = exit_baseline()
    cg = Cgroups()
    s = None
    members = []
    try:
        # The root does not exist yet when the exporter starts.
        root = cg.name("perfctr-serve-f")
        g = cg.name("perfctr-serve-g")
        s = Serve("-e", TP, "--cgroup-root", root, "-G", g)
        cg.make(root)
        a = cg.make(root + "/a")
        b = cg.make(root + "/b")
        cg.make(g)

        def seen(*names):
            text = s.metrics()
            return all(samples(text, "perfex_events_total",
                               cgroup="/" + n) for n in names)
        wait_for(lambda: seen(root, a, b, g), what="the new cgroups")
        members = [Member(cg, a, 3000), Member(cg, b, 5000),
                   Member(cg, g, 700)]
        for m in members:
            m.go()
        for m in members:
            m.wait()
        text = s.metrics()
        got = {n: total(text, "perfex_events_total", cgroup="/" + n,
                        event=TP) for n in (root, a, b, g)}
        check(got == {root: 8000 + 2 * base, a: 3000 + base,
                      b: 5000 + base, g: 700 + base}, got)
        check(total(text, "perfex_cgroups") == 4, text)
        # Removed: no longer served.
        for m in members:
            m.close()
        members = []
        cg.remove(a)
        wait_for(lambda: not samples(s.metrics(), "perfex_events_total",
                                     cgroup="/" + a), what="the removal")
        check(total(s.metrics(), "perfex_cgroups") == 3)
    finally:
        finish(s, cg, members)


# ------------------------------------------------------------- Prometheus


def prometheus(target_port):
    """Debian's prometheus on loopback with contrib/prometheus/prometheus.yml
    as it is, but for its target (the exporter's port) and a 1 s
    interval; ready."""
    with open(os.path.join(CONTRIB, "prometheus", "prometheus.yml")) as f:
        conf = f.read()
    check("127.0.0.1:9717" in conf and "15s" in conf, conf)
    conf = conf.replace("127.0.0.1:9717", "127.0.0.1:%d" % target_port)
    conf = conf.replace("15s", "1s")
    prom = Prometheus("serve", conf)
    prom.ready()
    return prom


@case
def cgroups_count_through_bpf_by_default_and_cgroup_events_otherwise():
    """Both ways of counting cgroups give the exact counts of nested
    cgroups with two busy at once; the log and perfex_cgroup_counting_mode
    say which way was taken, and why not BPF."""
    need_http()
    need_tracepoint()
    base = exit_baseline()
    rows = [
        ((), "bpf", "", "cgroups are counted through the BPF counters"),
        (("--no-bpf-counters",), "cgroup-events",
         "turned off (--no-bpf-counters or bpf-counters no)",
         "cgroups are counted with cgroup events: the BPF counters are "
         "turned off"),
        (("-c", "bpf-counters no\n"), "cgroup-events",
         "turned off (--no-bpf-counters or bpf-counters no)",
         "cgroups are counted with cgroup events: the BPF counters are "
         "turned off"),
    ]
    conf = tempfile.NamedTemporaryFile("w", suffix=".conf")
    for args, mode, reason, log in rows:
        if args[:1] == ("-c",):
            write(conf.name, args[1])
            args = ("-c", conf.name)
        cg = Cgroups()
        s = None
        members = []
        try:
            root = cg.make("perfctr-serve-m")
            a = cg.make(root + "/a")
            b = cg.make(root + "/b")
            s = Serve("-e", TP, "--cgroup-root", root, *args)
            members = [Member(cg, a, 4000), Member(cg, b, 6000)]
            for m in members:
                m.go()
            for m in members:
                m.wait()
            text = s.metrics()
            got = {n: total(text, "perfex_events_total", cgroup="/" + n,
                            event=TP) for n in (root, a, b)}
            check(got == {root: 10000 + 2 * base, a: 4000 + base,
                          b: 6000 + base}, (mode, got))
            modes = samples(text, "perfex_cgroup_counting_mode")
            want = {(("mode", mode),) + ((("reason", reason),)
                                         if mode != "bpf" else ()): 3.0}
            check({k: v for k, v in modes.items() if v} == want,
                  (mode, modes))
            check(log in s.text(), s.text())
        finally:
            finish(s, cg, members)


@case
def prometheus_scrapes_exact_counts_per_cgroup():
    need_http()
    need_tracepoint()
    base = exit_baseline()
    cg = Cgroups()
    s = prom = None
    members = []
    try:
        root = cg.make("perfctr-serve-p")
        a = cg.make(root + "/a")
        b = cg.make(root + "/b")
        # The node configuration of contrib/, plus the test's tracepoint
        # and cgroups.
        s = Serve("-c", os.path.join(CONTRIB, "perfex-serve.conf"),
                  "-e", TP, "--cgroup-root", root)
        prom = prometheus(s.port)
        sel = 'perfex_events_total{event="%s",cgroup=~"/%s.*"}' % (TP, root)

        def scraped():
            return len(prom.by("cgroup", "sum by (cgroup) (%s)" % sel)) == 3
        wait_for(scraped, timeout=60, what="prometheus to scrape the cgroups")
        up = prom.query('up{job="perfex"}')
        check(up and up[0]["value"][1] == "1", up)
        members = [Member(cg, a, 7000), Member(cg, b, 9000)]
        # A scrape of the cgroups before the workloads start, at 0.
        time.sleep(1.5)
        t_go = time.time()
        for m in members:
            m.go()
        for m in members:
            m.wait()
        want = {"/" + root: 16000 + 2 * base, "/" + a: 7000 + base,
                "/" + b: 9000 + base}
        q = "sum by (cgroup) (%s)" % sel
        got = {}

        def arrived():
            got.update(prom.by("cgroup", q))
            return got == want
        wait_for(arrived, timeout=30, what="the counts in prometheus")
        check(got == want, got)
        # The increase over the workload's window, as the difference of
        # the last samples at its two ends (increase() itself
        # extrapolates to the window's edges, which is not exact).
        back = int((time.time() - t_go) * 1000) + 200
        diff = prom.by("cgroup", "sum by (cgroup) (%s - (%s offset %dms))"
                       % (sel, sel, back))
        check(diff == want, (diff, want))
        # The syscall rate of a cgroup, as docs/fleet.md queries it.
        sys = prom.by("cgroup", 'sum by (cgroup) (perfex_events_total'
                      '{event="raw_syscalls:sys_enter",cgroup="/%s"})' % a)
        check(sys.get("/" + a, 0) >= 7000, sys)
        if not has_hw_pmu():
            un = prom.query('perfex_event_unavailable{event="cycles"}')
            check(un and un[0]["metric"]["reason"], un)
    finally:
        finish(s, cg, members, prom)


# ------------------------------------------------------------------ docs


@case
def fleet_doc_shows_the_files_the_tests_use():
    doc = open(os.path.join(TOP, "docs", "fleet.md")).read()
    blocks = re.findall(r"^File `([^`]+)`:\n\n```\w*\n(.*?)^```$", doc,
                        re.M | re.S)
    names = [n for n, _ in blocks]
    for want in ("contrib/perfex-serve.service", "contrib/perfex-serve.conf",
                 "contrib/prometheus/prometheus.yml",
                 "contrib/prometheus/federate.yml",
                 "contrib/prometheus/remote-write.yml",
                 "contrib/parca/parca.yaml"):
        check(want in names, (want, names))
    for name, text in blocks:
        check(open(os.path.join(TOP, name)).read() == text,
              "docs/fleet.md shows %s other than it is" % name)


@case
def contrib_prometheus_configs_are_valid():
    tool = promtool()
    for name in ("prometheus.yml", "federate.yml", "remote-write.yml"):
        r = subprocess.run([tool, "check", "config",
                            os.path.join(CONTRIB, "prometheus", name)],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, (name, r.stdout, r.stderr))


if __name__ == "__main__":
    run_cases()
