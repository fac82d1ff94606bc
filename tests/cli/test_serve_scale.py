# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex serve at a node's size: thousands of cgroups under one
--cgroup-root, the exposition of megabytes served whole (and gzip'd when
asked), every cgroup counted through the BPF counters with exact getppid
counts.  The cgroups are made by the test and removed in its finally;
every process it starts is stopped there, every wait bounded."""
import gzip
import os
import tempfile
import urllib.request

from pctest import case, check, perfex, run_cases
from stathelp import TP, exit_baseline, need_tracepoint, wait_for
from cgrouphelp import Cgroups, Member, unique_name
from servehelp import Serve, cgroups_of, finish, need_http, samples, total

# The events of the node: three software events and a tracepoint.
EVENTS = ("task-clock", "page-faults", "context-switches", TP)


def make_tree(cg, root, nr):
    """ROOT with NR cgroups under it, as a node's kubepods.slice is: pods
    of three containers each (the last pod fewer).  The names of the
    cgroups, ROOT first."""
    names = [cg.make(root)]
    pod = None
    for i in range(nr - 1):
        if i % 4 == 0:
            pod = cg.make("%s/pod%d" % (root, i // 4))
            names.append(pod)
        else:
            names.append(cg.make("%s/c%d" % (pod, i % 4)))
    return names


def serve_tree(root, *extra):
    args = []
    for e in EVENTS:
        args += ["-e", e]
    return Serve(*args, "--cgroup-root", root, *extra)


def get(s, encoding=None, timeout=60):
    """(headers, body text) of GET /metrics, decompressed if gzip'd."""
    req = urllib.request.Request(s.url("/metrics"))
    if encoding:
        req.add_header("Accept-Encoding", encoding)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        check(r.status == 200, r.status)
        body = r.read()
        headers = r.headers
    if headers.get("Content-Encoding") == "gzip":
        body = gzip.decompress(body)
    return headers, body.decode()


@case
def an_exposition_of_megabytes_is_served_whole():
    """2,000 cgroups x 4 events x every CPU: several MB of text, and more
    than 1,024 fds in the exporter (past select()'s FD_SETSIZE, where
    every connection used to be reset)."""
    need_http()
    need_tracepoint()
    cg = Cgroups()
    s = None
    root = unique_name("perfctr-serve-big")  # as Cgroups.make names it
    try:
        names = make_tree(cg, root, 2000)
        s = serve_tree(root)
        cpus = os.cpu_count()

        def all_counted():
            _, text = get(s)
            return total(text, "perfex_cgroups") == len(names)
        wait_for(all_counted, timeout=120, what="every cgroup counted")
        headers, text = get(s)
        check(headers.get("Content-Encoding") is None, dict(headers))
        check(len(text) > 4 * 1024 * 1024, len(text))
        # Whole: the last family is there, and its line ends.
        check(text.splitlines()[-1].startswith(
            "perfex_scrape_duration_seconds "), text[-200:])
        check(text.endswith("\n"), text[-200:])
        check(total(text, "perfex_open_fds") > 1024, "fds")
        rows = samples(text, "perfex_events_total")
        per_cgroup = {}
        for key in rows:
            d = dict(key)
            if "cgroup" in d:
                per_cgroup.setdefault(d["cgroup"], set()).add(
                    (d["event"], d["cpu"]))
        check(sorted(per_cgroup) == sorted("/" + n for n in names),
              len(per_cgroup))
        want = {(e, str(c)) for e in EVENTS for c in range(cpus)}
        bad = [c for c, got in per_cgroup.items() if got != want]
        check(not bad, bad[:5])
        # The same series gzip'd, when asked as Prometheus asks.
        headers, ztext = get(s, "gzip")
        check(headers.get("Content-Encoding") == "gzip", dict(headers))
        check(headers.get("Vary") == "Accept-Encoding", dict(headers))
        check(set(samples(ztext, "perfex_events_total")) == set(rows),
              "gzip'd series differ")
        # q=0 refuses gzip.
        headers, _ = get(s, "gzip;q=0, identity")
        check(headers.get("Content-Encoding") is None, dict(headers))
        check("perfex serve: http: " not in s.text(), s.text())
    finally:
        finish(s, cg)



@case
def three_thousand_cgroups_all_count_through_bpf_exactly():
    """3,000 cgroups, nested as pods of three containers: every one counted
    through the BPF counters (none falls back), exact getppid counts in a
    container, a pod and the last cgroup made (in the sums' last chunk);
    a cgroup removed frees its slot, and the cgroup that takes the slot
    next counts from 0."""
    need_http()
    need_tracepoint()
    base = exit_baseline()
    cg = Cgroups()
    s = None
    members = []
    root = unique_name("perfctr-serve-bpf")  # as Cgroups.make names it
    try:
        names = make_tree(cg, root, 3000)
        s = serve_tree(root)

        def modes():
            _, text = get(s)
            return {dict(k)["mode"]: v for k, v in
                    samples(text, "perfex_cgroup_counting_mode").items()}
        wait_for(lambda: modes().get("bpf") == len(names), timeout=120,
                 what="every cgroup counted through BPF")
        check(modes() == {"bpf": 3000, "cgroup-events": 0}, modes())
        container, pod, last = names[2], names[5], names[-1]
        check(container.startswith(names[1] + "/"), container)
        members = [Member(cg, container, 3000), Member(cg, pod, 5000),
                   Member(cg, last, 700)]
        for m in members:
            m.go()
        for m in members:
            m.wait()
        _, text = get(s)

        def got(name):
            return total(text, "perfex_events_total", cgroup="/" + name,
                         event=TP)
        check(got(container) == 3000 + base, got(container))
        check(got(names[1]) == 3000 + base, got(names[1]))
        check(got(pod) == 5000 + base, got(pod))
        check(got(last) == 700 + base, got(last))
        check(got(root) == 8700 + 3 * base, got(root))
        check(got(names[3]) == 0, got(names[3]))
        # The container goes; a new cgroup takes its slot, from 0.
        for m in members:
            m.close()
        members = []
        cg.remove(container)
        fresh = cg.make(names[1] + "/fresh")
        wait_for(lambda: samples(get(s)[1], "perfex_events_total",
                                 cgroup="/" + fresh, event=TP),
                 what="the new cgroup")
        check(not samples(get(s)[1], "perfex_events_total",
                          cgroup="/" + container), "removed, still served")
        members = [Member(cg, fresh, 100)]
        members[0].go()
        members[0].wait()
        _, text = get(s)
        check(got(fresh) == 100 + base, got(fresh))
        check(modes() == {"bpf": 3000, "cgroup-events": 0}, modes())
        check("cgroup events" not in s.text(), s.text())
    finally:
        finish(s, cg, members)



def once_cgroups(*args):
    """The cgroups of one --once scrape of the getppid tracepoint."""
    r = perfex("serve", "--once", "-e", TP, *args)
    check(r.returncode == 0, r.stderr)
    return cgroups_of(r.stdout), r


@case
def cardinality_controls_depth_patterns_and_a_series_cap():
    """--cgroup-depth, --cgroup-include / --cgroup-exclude (and their
    configuration keys), and --max-series: the cgroups past the cap are
    not counted, perfex_series_dropped says how many series that is, the
    log says it once, and a cgroup removed makes room for one left out."""
    need_http()
    need_tracepoint()
    cg = Cgroups()
    s = None
    root = unique_name("perfctr-serve-card")  # as Cgroups.make names it
    cpus = os.cpu_count()
    try:
        names = make_tree(cg, root, 9)  # root, pod0 + 3, pod1 + 3
        every = sorted("/" + n for n in names)
        got, _ = once_cgroups("--cgroup-root", root)
        check(got == every, got)
        got, _ = once_cgroups("--cgroup-root", root, "--cgroup-depth", "1")
        check(got == sorted("/" + n for n in names if n.count("/") <= 1),
              got)
        got, _ = once_cgroups("--cgroup-root", root, "--cgroup-depth", "0")
        check(got == ["/" + root], got)
        got, _ = once_cgroups("--cgroup-root", root,
                              "--cgroup-exclude", "*/c1")
        check(got == [c for c in every if not c.endswith("/c1")], got)
        got, _ = once_cgroups("--cgroup-root", root,
                              "--cgroup-include", "/%s/pod1*" % root,
                              "--cgroup-exclude", "*/c3")
        check(got == ["/%s/pod1" % root, "/%s/pod1/c1" % root,
                      "/%s/pod1/c2" % root], got)
        with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
            f.write("cgroup-root %s\ncgroup-depth 1\n"
                    "cgroup-exclude */pod0\n" % root)
            f.flush()
            got, _ = once_cgroups("-c", f.name)
            check(got == ["/" + root, "/%s/pod1" % root], got)
            # The command line's depth wins over the file's.
            got, _ = once_cgroups("-c", f.name, "--cgroup-depth", "0")
            check(got == ["/" + root], got)
        # The cap: the machine and 3 cgroups, 4 series an event and CPU.
        per = 4 * cpus
        s = Serve("-e", TP, "--cgroup-root", root,
                  "--max-series", str(per * 4))
        text = s.metrics()
        counted = cgroups_of(text)
        check(counted == every[:3], counted)
        check(total(text, "perfex_series_dropped") == per * 6, text)
        check(total(text, "perfex_cgroups") == 3, text)
        check(len(samples(text, "perfex_events_total")) +
              len(samples(text, "perfex_events_scaled")) +
              len(samples(text, "perfex_time_enabled_seconds_total")) +
              len(samples(text, "perfex_time_running_seconds_total"))
              <= per * 4, text)
        check("max-series %d: 6 cgroups (%d series) not counted" %
              (per * 4, per * 6) in s.text(), s.text())
        # A counted cgroup goes: the first of those left out comes in.
        gone = every[2]
        cg.remove(gone[1:])
        wait_for(lambda: total(s.metrics(), "perfex_series_dropped") ==
                 per * 5, what="the room made by a removal")
        text = s.metrics()
        check(samples(text, "perfex_events_total", cgroup=every[3]), text)
    finally:
        finish(s, cg)



@case
def cgroups_made_and_removed_while_serving_follow_the_limits():
    """Cgroups made (a pod and its containers at once, as a container
    runtime makes them) and removed while the exporter runs are followed
    one by one, within the depth limit and the patterns."""
    need_http()
    need_tracepoint()
    cg = Cgroups()
    s = None
    root = unique_name("perfctr-serve-follow")  # as Cgroups.make names it
    try:
        cg.make(root)
        s = Serve("-e", TP, "--cgroup-root", root, "--cgroup-depth", "2",
                  "--cgroup-exclude", "*/skip*")

        def served():
            return cgroups_of(s.metrics())
        made = [cg.make(root + "/pod"), cg.make(root + "/pod/c1"),
                cg.make(root + "/pod/c1/deep"), cg.make(root + "/pod/skip"),
                cg.make(root + "/pod2")]
        want = ["/" + root, "/%s/pod" % root, "/%s/pod/c1" % root,
                "/%s/pod2" % root]
        wait_for(lambda: served() == want, what="the new cgroups")
        for rel in (made[2], made[1]):
            cg.remove(rel)
        wait_for(lambda: served() == ["/" + root, "/%s/pod" % root,
                                      "/%s/pod2" % root],
                 what="the removals")
        check(total(s.metrics(), "perfex_cgroups") == 3)
        # The root itself goes, and comes back.
        cg.close()
        cg.made = []
        wait_for(lambda: served() == [], what="the root's removal")
        cg.make(root)
        cg.make(root + "/again")
        wait_for(lambda: served() == ["/" + root, "/%s/again" % root],
                 what="the root made again")
    finally:
        finish(s, cg)


run_cases()
