# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex serve's /debug/pprof/profile, read by the real client: `go tool
pprof -top http://127.0.0.1:PORT/debug/pprof/profile?seconds=2` finds the
hot function of a spinning workload; ?cgroup=NAME profiles the tasks of a
test cgroup and not a workload outside it; a second profile of the same
target gets 409 while the first runs and /metrics is served meanwhile;
bad durations get 400; a stop cuts a running profile short."""
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
import urllib.parse

from pctest import EXIT, TOP, case, check, perfex, run_cases, work
from cgrouphelp import Cgroups
from sampletools import cleanup, pprof, require_encoder, require_go, \
    top_functions
from servehelp import Serve, need_http, samples, total
from stathelp import wait_for

PROFILE = "/debug/pprof/profile"
# go tool pprof waits 1.5 x ?seconds for a profile (3 s for 2 s), less than
# the symbolisation after the sampling may take on a loaded test machine.
TIMEOUT = "-timeout=60"


def spinner(cg=None, rel=None):
    """pcwork spinning (spin_loop) for a minute, in cgroup REL of CG when
    given; killed by the caller."""
    def enter():
        with open(os.path.join(cg.mnt, rel, "cgroup.procs"), "w") as f:
            f.write("0\n")
    return subprocess.Popen([work(), "spin", "60000"],
                            preexec_fn=enter if cg else None)


def stop(p):
    if p.poll() is None:
        p.kill()
        p.wait()


def pids(url):
    """The pids of the samples of the profile at URL (its pid labels)."""
    text = pprof("-tags", TIMEOUT, url)
    m = re.search(r"^ pid: Total .*?\n((?:\s+\S+ \(.*\): \d+\n)+)", text,
                  re.M)
    return set(int(p) for p in re.findall(r": (\d+)$", m.group(1), re.M)) \
        if m else set()


def running(s):
    return total(s.metrics(), "perfex_profiles_running")


def need_all():
    need_http()
    require_encoder()
    require_go()


@case
def go_pprof_finds_the_hot_function():
    need_all()
    s = Serve("-e", "task-clock")
    spin = spinner()
    try:
        url = s.url(PROFILE + "?seconds=2")
        # The machine is shared: the workload's own samples (its pid
        # label) are where its hot function must come first.
        top = top_functions(url, TIMEOUT, "-tagfocus=pid=%d" % spin.pid)
        check(top and top[0] == "spin_loop", top[:5])
        text = pprof("-top", TIMEOUT, url)
        check(re.search(r"^Type: cpu-clock$", text, re.M), text[:500])
        # A 2 s profile: Duration says so (pprof rounds to 10 ms).
        m = re.search(r"Duration: ([\d.]+)s", text)
        check(m and 2.0 <= float(m.group(1)) < 3.0, text[:500])
        text = s.metrics()
        check(total(text, "perfex_profiles_total", result="ok") == 2, text)
        check(total(text, "perfex_profiles_running") == 0, text)
    finally:
        stop(spin)
        s.close()


@case
def cgroup_profile_has_its_tasks_only():
    need_all()
    cg = Cgroups()
    inside = outside = None
    s = None
    try:
        rel = cg.make("perfctr-serve-profile")
        inside = spinner(cg, rel)
        outside = spinner()
        s = Serve("-e", "task-clock")
        url = s.url(PROFILE + "?seconds=2&cgroup=" + rel)
        top = top_functions(url, TIMEOUT, "-tagfocus=pid=%d" % inside.pid)
        check(top and top[0] == "spin_loop", top[:5])
        got = pids(url)
        check(inside.pid in got, (inside.pid, got))
        check(outside.pid not in got, (outside.pid, got))
        # The same cgroup by its absolute name is the same target.
        status, _, body = s.get(PROFILE + "?seconds=1&cgroup=/" + rel,
                                timeout=30, binary=True)
        check(status == 200 and body[:2] == b"\x1f\x8b", (status, body[:80]))
        status, _, body = s.get(PROFILE + "?seconds=1&cgroup=no-such-cgroup")
        check(status == 404 and "no cgroup 'no-such-cgroup'" in body,
              (status, body))
    finally:
        for p in (inside, outside):
            if p:
                stop(p)
        if s:
            s.close()
        cg.close()


@case
def second_profile_of_a_target_conflicts_and_metrics_go_on():
    need_all()
    s = Serve("-e", "task-clock")
    first = {}

    def take():
        first["reply"] = s.get(PROFILE + "?seconds=4", timeout=60,
                               binary=True)
    t = threading.Thread(target=take)
    try:
        t.start()
        # /metrics answers while the profile runs, and shows it.
        wait_for(lambda: running(s) == 1, timeout=30,
                 what="the first profile to start")
        status, _, body = s.get(PROFILE + "?seconds=1")
        check(status == 409, (status, body))
        check("a profile of the whole machine is running" in body, body)
        # Another target is another profile.
        status, _, body = s.get(PROFILE + "?seconds=1&cgroup=/", timeout=30,
                                binary=True)
        check(status == 200, (status, body[:200]))
        check(t.is_alive(), "the first profile ended before the checks")
        t.join(60)
        check(not t.is_alive())
        status, ctype, body = first["reply"]
        check(status == 200 and ctype == "application/octet-stream" and
              body[:2] == b"\x1f\x8b", (status, ctype, body[:80]))
        text = s.metrics()
        check(total(text, "perfex_profiles_total", result="conflict") == 1,
              samples(text, "perfex_profiles_total"))
        check(total(text, "perfex_profiles_total", result="ok") == 2,
              samples(text, "perfex_profiles_total"))
        # The first one is over: the target is free again.
        status, _, _ = s.get(PROFILE + "?seconds=1", timeout=30, binary=True)
        check(status == 200, status)
    finally:
        t.join(60)
        s.close()


@case
def bad_seconds_get_400():
    need_http()
    s = Serve("-e", "task-clock", "--profile-max-seconds", "5")
    try:
        rows = [
            ("0", "from 1 to 5"),
            ("-1", "from 1 to 5"),
            ("%2B1", "from 1 to 5"),
            ("abc", "from 1 to 5"),
            ("", "from 1 to 5"),
            ("1.5", "from 1 to 5"),
            ("6", "at most 5 seconds"),
            ("99999999999999999999999", "from 1 to 5"),
        ]
        for arg, why in rows:
            status, _, body = s.get(PROFILE + "?seconds=" + arg)
            check(status == 400, (arg, status, body))
            check(("bad seconds '%s'" % urllib.parse.unquote(arg)) in body
                  and why in body, (arg, body))
        status, _, body = s.get(PROFILE + "?seconds=1&cgroup=")
        check(status == 400 and "bad cgroup" in body, (status, body))
        text = s.metrics()
        check(total(text, "perfex_profiles_total", result="bad_request") ==
              len(rows) + 1, samples(text, "perfex_profiles_total"))
    finally:
        s.close()
    # Without the option the longest is 300 s.
    s = Serve("-e", "task-clock")
    try:
        status, _, body = s.get(PROFILE + "?seconds=301")
        check(status == 400 and "at most 300 seconds" in body, (status, body))
    finally:
        s.close()


@case
def profile_max_seconds_from_file_and_flag():
    need_http()
    with tempfile.NamedTemporaryFile("w", suffix=".conf") as conf:
        conf.write("event task-clock\nprofile-max-seconds 7\n")
        conf.flush()
        s = Serve("-c", conf.name)
        try:
            status, _, body = s.get(PROFILE + "?seconds=8")
            check(status == 400 and "at most 7 seconds" in body, body)
        finally:
            s.close()
        # The command line wins over the file.
        s = Serve("-c", conf.name, "--profile-max-seconds", "3")
        try:
            status, _, body = s.get(PROFILE + "?seconds=4")
            check(status == 400 and "at most 3 seconds" in body, body)
        finally:
            s.close()
    for bad in ("0", "x", "86401"):
        r = perfex("serve", "--once", "--profile-max-seconds", bad)
        check(r.returncode == EXIT["usage"], (bad, r))
        check("option '--profile-max-seconds' expects a number of seconds "
              "from 1 to 86400 (not '%s')" % bad in r.stderr, r.stderr)


@case
def stop_cuts_a_running_profile_short():
    need_all()
    s = Serve("-e", "task-clock")
    reply = {}

    def take():
        reply["r"] = s.get(PROFILE + "?seconds=60", timeout=90)
    t = threading.Thread(target=take)
    try:
        t.start()
        wait_for(lambda: running(s) == 1, timeout=30,
                 what="the profile to start")
        start = time.monotonic()
        rc = s.stop(signal.SIGTERM)
        took = time.monotonic() - start
        check(rc == 0, (rc, s.text()))
        # Within the profile's one-second wake-ups, not its 60 s.
        check(took < 20, took)
        t.join(30)
        check(not t.is_alive())
        status, _, body = reply.get("r", (None, None, ""))
        check(status == 503 and "stopping" in body, (status, body))
    finally:
        t.join(30)
        s.close()


@case
def parca_config_gets_a_profile_within_its_interval():
    """contrib/parca/parca.yaml (shown in docs/fleet.md): the request Parca
    makes of it (the process_cpu path, seconds one short of the scrape
    interval) is answered with a profile within the interval."""
    need_all()
    text = open(os.path.join(TOP, "contrib", "parca", "parca.yaml")).read()
    interval = re.search(r'^\s+scrape_interval: "(\d+)s"$', text, re.M)
    cpu = re.search(r"^\s+process_cpu:\n\s+enabled: true\n\s+delta: true\n"
                    r"\s+path: (\S+)$", text, re.M)
    target = re.search(r'targets: \["([\d.]+):(\d+)"\]', text)
    check(interval and cpu and target, text)
    check(target.group(1) == "127.0.0.1", target.group(1))
    seconds = int(interval.group(1)) - 1
    s = Serve("-e", "task-clock")
    spin = spinner()
    try:
        # A node agent scraped every interval has read the symbol tables
        # of the node's libraries already (the first profile reads them:
        # seconds more under a sanitizer on a loaded machine).
        status, _, _ = s.get(PROFILE + "?seconds=1", timeout=120, binary=True)
        check(status == 200, status)
        url = s.url("%s?seconds=%d" % (cpu.group(1), seconds))
        start = time.monotonic()
        top = top_functions(url, "-timeout=%s" % interval.group(1),
                            "-tagfocus=pid=%d" % spin.pid)
        check(time.monotonic() - start < int(interval.group(1)) + 5)
        check(top and top[0] == "spin_loop", top[:5])
    finally:
        stop(spin)
        s.close()


try:
    run_cases()
finally:
    cleanup()
