# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Many nodes, one Prometheus: four "nodes" on this machine, each a perfex
serve on its own loopback address (127.0.0.2 to 127.0.0.5) counting its
own cgroup subtree and labelled as its node, two "zones" each with a
Prometheus scraping its two nodes (contrib/prometheus/remote-write.yml
with contrib/prometheus/rules.yml, remote-writing to a Prometheus that
receives), and a global Prometheus federating the zones
(contrib/prometheus/federate.yml).  The contrib files are used as they
are but for their addresses, intervals (1 s) and the zone's name: the
test fills those in and checks that it found them.

Workloads make known numbers of getppid calls in each node's cgroups; the
global Prometheus and the receiving one must sum them by cgroup and by
node exactly.  Then a node is killed and started again: its series go
stale, the exporter's down alert is pending in its zone, and once its new
counts arrive the increase over a window across the restart is exactly
what the new exporter counted (a counter reset: no negative, no doubled
increase).  Every process, cgroup and directory the test made is removed
in its finally, on failure and on SIGTERM too."""
import math
import os
import signal
import sys
import time

from pctest import TOP, case, check, run_cases
from stathelp import TP, exit_baseline, need_tracepoint, wait_for
from cgrouphelp import Cgroups, Member, unique_name
from servehelp import Serve, need_http
from promhelp import Prometheus, free_port, major_version, tool

PROM = os.path.join(TOP, "contrib", "prometheus")
# node: (zone, getppid calls in its cgroups a and b).
NODES = {1: ("zone-a", 1100, 2300), 2: ("zone-a", 3500, 4700),
         3: ("zone-b", 5900, 7100), 4: ("zone-b", 8300, 9500)}
ZONES = ("zone-a", "zone-b")
RESTARTED = 2           # the node killed and started again
AFTER = 2600            # its calls in cgroup a after the restart
WAIT = 60               # seconds for counts to travel to the global view


def contrib(name):
    with open(os.path.join(PROM, name)) as f:
        return f.read()


def fill(text, subst):
    """TEXT with each (old, new) of SUBST replaced; each old must be in
    it (the shipped file changed otherwise: the test must follow)."""
    for old, new in subst:
        check(old in text, ("not in the contrib file", old, text))
        text = text.replace(old, new)
    return text


def zone_config(zone, targets, receiver):
    return fill(contrib("remote-write.yml"), [
        ("scrape_interval: 15s", "scrape_interval: 1s\n"
         "  evaluation_interval: 1s"),
        ("cluster: eu-1", "cluster: " + zone),
        ("['127.0.0.1:9717']", repr(targets)),
        ("http://mimir.example:9009/api/v1/push",
         "http://%s/api/v1/write" % receiver),
    ]) + "\nrule_files:\n  - %s\n" % os.path.join(PROM, "rules.yml")


def global_config(zones):
    return fill(contrib("federate.yml"), [
        ("scrape_interval: 60s", "scrape_interval: 1s"),
        ("['prometheus-eu-1.example:9090', 'prometheus-us-1.example:9090']",
         repr(zones)),
    ])


class Fleet:
    """The nodes, their cgroups and the Prometheus servers; close() stops
    and removes all of it."""

    def __init__(self):
        self.cg = Cgroups()
        self.nodes = {}         # n: Serve
        self.addr = {}          # n: "127.0.0.N+1:PORT"
        self.members = []
        self.proms = []

    def root(self, n):
        return unique_name("perfctr-fleet-n%d" % n)

    def start_node(self, n):
        self.nodes[n] = Serve("-e", TP, "--cgroup-root", self.root(n),
                              "--label", "node=node-%d" % n,
                              listen=self.addr[n])

    def kill_node(self, n):
        self.nodes[n].p.kill()
        self.nodes[n].p.wait()
        self.nodes[n].close()
        del self.nodes[n]

    def run(self, calls):
        """Workloads making CALLS[(node, leaf)] getppid calls, at once."""
        ms = [Member(self.cg, "%s/%s" % (self.root(n), leaf), c)
              for (n, leaf), c in calls.items()]
        self.members += ms
        for m in ms:
            m.go()
        for m in ms:
            m.wait()

    def prometheus(self, *args):
        p = Prometheus(*args)
        self.proms.append(p)
        return p

    def close(self):
        for m in self.members:
            m.close()
        # The last started first: the zones flush their remote-write
        # queues to a receiver still there.
        for p in reversed(self.proms):
            p.close()
        for n in list(self.nodes):
            s = self.nodes.pop(n)
            s.stop()
            s.close()
        self.cg.close()


def leaves(node=None):
    """The selector of the leaf cgroups' getppid counters (of NODE)."""
    return 'perfex_events_total{event="%s",cgroup=~"/perfctr-fleet-n.+/.+"%s}' \
        % (TP, ',node="node-%d"' % node if node else "")


def raw(prom, sel, seconds):
    """{timestamp in ms: sum of SEL's samples} over the last SECONDS, from
    its raw samples (the series of one target share their timestamps)."""
    out = {}
    for r in prom.query("%s[%ds]" % (sel, seconds)):
        for t, v in r["values"]:
            ms = int(round(float(t) * 1000))
            out[ms] = out.get(ms, 0) + float(v)
    return out


def check_restart(prom, base, window_start):
    """On PROM: the restarted node's counts went 0 at its restart, and
    increase() from the last sample before it to the first with the new
    calls is those calls exactly; resets() sees the drop."""
    sel = 'perfex_events_total{event="%s",node="node-%d",cgroup="/%s/a"}' \
        % (TP, RESTARTED, unique_name("perfctr-fleet-n%d" % RESTARTED))
    before = NODES[RESTARTED][1] + base
    after = AFTER + base
    seconds = int(time.time() - window_start) + 5
    got = raw(prom, sel, seconds)
    ts = sorted(got)
    vals = [got[t] for t in ts]
    check(before in vals and 0 in vals and after in vals, (prom.name, vals))
    i = max(k for k, v in enumerate(vals) if v == before)
    j = min(k for k, v in enumerate(vals) if v == after)
    check(i < j and 0 in vals[i:j], (prom.name, vals))
    t1, t2 = ts[i], ts[j]
    # Prometheus 2 takes samples at both ends of a range; 3 leaves out
    # its start, so the window starts 1 ms earlier there (and then
    # extrapolates over that 1 ms: a relative error of 1 ms / window).
    span = t2 - t1 + (1 if major_version() >= 3 else 0)
    q = "sum(increase(%s[%dms]))" % (sel, span)
    inc = float(prom.query(q, at=t2 / 1000)[0]["value"][1])
    if span == t2 - t1:
        check(inc == after, (prom.name, q, inc, after, vals))
    else:
        check(abs(inc - after) <= after * 2 / span, (prom.name, q, inc))
    # The same through rate(): what the rules record.
    q = "sum(rate(%s[%dms]))" % (sel, span)
    rate = float(prom.query(q, at=t2 / 1000)[0]["value"][1])
    check(math.isclose(rate, after / (span / 1000), rel_tol=1e-6),
          (prom.name, q, rate))
    # One reset per CPU series that had counted before the restart.
    q = "sum(resets(%s[%dms]))" % (sel, span)
    resets = float(prom.query(q, at=t2 / 1000)[0]["value"][1])
    per_cpu = {}
    for r in prom.query("%s[%dms]" % (sel, span), at=t2 / 1000):
        first = float(r["values"][0][1])
        per_cpu[r["metric"]["cpu"]] = first > 0
    check(resets == sum(per_cpu.values()) >= 1, (prom.name, resets, per_cpu))


@case
def fleet_sums_are_exact_and_a_restart_is_a_counter_reset():
    need_http()
    need_tracepoint()
    tool("promtool")
    base = exit_baseline()
    major_version()
    fleet = Fleet()
    stop = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    t0 = time.monotonic()
    try:
        for n in NODES:
            fleet.cg.make(fleet.root(n))
            for leaf in ("a", "b"):
                fleet.cg.make("%s/%s" % (fleet.root(n), leaf))
            host = "127.0.0.%d" % (n + 1)
            fleet.addr[n] = "%s:%d" % (host, free_port(host))
            fleet.start_node(n)
        receiver = fleet.prometheus(
            "receiver", "global:\n  scrape_interval: 1s\n",
            "--web.enable-remote-write-receiver")
        zones = {}
        for z in ZONES:
            targets = [fleet.addr[n] for n in NODES if NODES[n][0] == z]
            zones[z] = fleet.prometheus(z, zone_config(z, targets,
                                                       receiver.addr))
        glob = fleet.prometheus("global", global_config(
            [zones[z].addr for z in ZONES]))
        for p in fleet.proms:
            p.ready()

        # Every node's cgroups in the global view before the calls.
        def seen():
            return len(glob.query(leaves())) == 2 * len(NODES) * \
                os.cpu_count()
        wait_for(seen, timeout=WAIT, what="every node's cgroups in the "
                 "global prometheus", last=lambda: glob.by(
                     "node", "count by (node) (%s)" % leaves()))
        t_start = time.time()
        fleet.run({(n, leaf): NODES[n][k]
                   for n in NODES for k, leaf in ((1, "a"), (2, "b"))})

        want_node = {"node-%d" % n: NODES[n][1] + NODES[n][2] + 2 * base
                     for n in NODES}
        want_cgroup = {"/%s/%s" % (fleet.root(n), leaf): NODES[n][k] + base
                       for n in NODES for k, leaf in ((1, "a"), (2, "b"))}
        for prom in (glob, receiver):
            got = {}

            def arrived():
                got["node"] = prom.by("node", "sum by (node) (%s)"
                                      % leaves())
                got["cgroup"] = prom.by("cgroup", "sum by (cgroup) (%s)"
                                        % leaves())
                return got == {"node": want_node, "cgroup": want_cgroup}
            wait_for(arrived, timeout=WAIT, what="the exact counts in "
                     "prometheus " + prom.name, last=lambda: (got, want_node,
                                                              want_cgroup))
            # Each node's series carry its zone and its address.
            rows = prom.query("count by (node, cluster, instance) (%s)"
                              % leaves())
            check(sorted((r["metric"]["node"], r["metric"]["cluster"],
                          r["metric"]["instance"]) for r in rows) ==
                  sorted(("node-%d" % n, NODES[n][0], fleet.addr[n])
                         for n in NODES), (prom.name, rows))
            # The cgroups are counted through BPF on every node.
            modes = prom.by("node", 'sum by (node) (perfex_cgroup_counting_'
                            'mode{mode="bpf"})')
            check(modes == {"node-%d" % n: 3 for n in NODES},
                  (prom.name, modes))
            # The zones' recording rules travel too.
            wait_for(lambda: prom.by("node", 'count by (node) (cgroup:perfex_'
                     'events:rate5m{event="%s"})' % TP) ==
                     {"node-%d" % n: 3 for n in NODES}, timeout=WAIT,
                     what="the recorded rates in " + prom.name)
        t_fleet = time.monotonic() - t0

        # A node killed and started again on its address.
        zone = zones[NODES[RESTARTED][0]]
        fleet.kill_node(RESTARTED)
        wait_for(lambda: zone.by("instance", 'up{job="perfex"}').get(
            fleet.addr[RESTARTED]) == 0, timeout=WAIT,
            what="the zone to see the node down",
            last=lambda: zone.by("instance", 'up{job="perfex"}'))
        # Stale at once where it was scraped, and where that Prometheus
        # writes to.  (Federation carries the samples' timestamps, which
        # take them out of staleness handling: the global view keeps the
        # last values for the 5 minutes of its lookback.)
        for prom in (zone, receiver):
            wait_for(lambda: not prom.query(leaves(RESTARTED)), timeout=WAIT,
                     what="the node's series to go stale in " + prom.name)
        # Its down alert pending (firing after 5 minutes).
        def pending():
            alerts = zone.query('ALERTS{alertname="PerfexExporterDown"}')
            return [(a["metric"]["instance"], a["metric"]["alertstate"])
                    for a in alerts] == [(fleet.addr[RESTARTED], "pending")]
        wait_for(pending, timeout=WAIT, what="the down alert, pending",
                 last=lambda: zone.query('ALERTS{alertname='
                                         '"PerfexExporterDown"}'))
        fleet.start_node(RESTARTED)
        for prom in (glob, receiver):
            wait_for(lambda: prom.by("node", "sum by (node) (%s)" % leaves(
                RESTARTED)) == {"node-%d" % RESTARTED: 0}, timeout=WAIT,
                what="the restarted node's zeros in " + prom.name,
                last=lambda: prom.by("node", "sum by (node) (%s)" % leaves(
                    RESTARTED)))
        fleet.run({(RESTARTED, "a"): AFTER})
        want_node["node-%d" % RESTARTED] = AFTER + base
        for prom in (glob, receiver):
            wait_for(lambda: prom.by("node", "sum by (node) (%s)" % leaves())
                     == want_node, timeout=WAIT,
                     what="the new counts in " + prom.name,
                     last=lambda: (prom.by("node", "sum by (node) (%s)"
                                           % leaves()), want_node))
            check_restart(prom, base, t_start)
        print("# %d nodes, %d prometheus: exact sums after %.1f s, the "
              "restart checked after %.1f s" % (len(NODES), len(fleet.proms),
                                                t_fleet,
                                                time.monotonic() - t0))
    finally:
        fleet.close()
        signal.signal(signal.SIGTERM, stop)


if __name__ == "__main__":
    run_cases()
