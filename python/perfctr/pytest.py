# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfctr's pytest plugin: performance tests that count.

Registered by the package's `pytest11` entry point once installed, or
loaded with `pytest -p perfctr.pytest`.

    def test_writes(perfctr):                  # the fixture
        with perfctr.measure("syscalls:sys_enter_write") as m:
            save(record)
        assert m["syscalls:sys_enter_write"] == 3

    @pytest.mark.perfctr(events="page-faults", max={"page-faults": 100})
    def test_parse():                          # a budget on the test's call
        parse(document)

Only the measured region is counted: the `with` block, or for the marker
the test function's own call (not its fixtures, not pytest).  Counting is
of the test's thread (inherit=True in measure() or the marker adds the
threads and processes it creates).

--perfctr-save FILE writes every test's counts (JSON); --perfctr-compare
FILE fails the tests whose counts grew by more than --perfctr-tolerance
(default 0%) against such a file, and the run ends with a table of the
changes.  Works under pytest-xdist (each worker counts its own tests; the
controller gathers the counts).  An event this machine cannot count (a
hardware event without a PMU) skips the test, saying so.

Counting sessions are kept from one test to the next (one per event list
and thread) and closed at the end of the run: opening and closing
counters for every test would cost far more than counting (closing the
last counter of a tracepoint takes the kernel tens of milliseconds).
"""
import functools
import json
import os
import threading

import pytest

import perfctr as _perfctr

FORMAT = "perfctr-pytest-counts"
VERSION = 1


def pytest_addoption(parser):
    group = parser.getgroup("perfctr", "counted performance tests (perfctr)")
    group.addoption("--perfctr-save", metavar="FILE", default=None,
                    help="write each counted test's counts to FILE (JSON)")
    group.addoption("--perfctr-compare", metavar="FILE", default=None,
                    help="fail tests whose counts grew beyond the tolerance "
                         "against FILE (from --perfctr-save)")
    group.addoption("--perfctr-tolerance", metavar="PCT", default="0%",
                    help="growth allowed by --perfctr-compare, e.g. 2%% "
                         "(default 0%%)")


def parse_tolerance(text):
    """'2%' or '2' -> 0.02; raises pytest.UsageError for anything else."""
    value = text.strip()
    if value.endswith("%"):
        value = value[:-1]
    try:
        pct = float(value)
    except ValueError:
        pct = -1.0
    if not pct >= 0:
        raise pytest.UsageError(
            "--perfctr-tolerance: '%s' is not a percentage (e.g. 2%%)" % text)
    return pct / 100.0


def load_counts(path):
    """{key: {event: value}} of a file --perfctr-save wrote."""
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise pytest.UsageError("--perfctr-compare: cannot read '%s': %s"
                                % (path, e.strerror))
    except ValueError as e:
        raise pytest.UsageError("--perfctr-compare: '%s' is not JSON: %s"
                                % (path, e))
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise pytest.UsageError("--perfctr-compare: '%s' was not written "
                                "by --perfctr-save" % path)
    return data.get("tests", {})


class Plugin:
    """The run's state: counting sessions, counts, the baseline."""

    def __init__(self, config):
        self.config = config
        self.tolerance = parse_tolerance(
            config.getoption("perfctr_tolerance"))
        compare = config.getoption("perfctr_compare")
        self.baseline = load_counts(compare) if compare else None
        self.results = {}       # key -> {event: value}
        self.changes = []       # (key, event, before, now, failed)
        self.sessions = {}
        self.missing = {}       # id(session) -> its unsupported events
        self.lock = threading.Lock()

    def session(self, events, inherit):
        """The kept session for `events` on the calling thread."""
        key = (events if isinstance(events, str) else ",".join(events),
               bool(inherit), threading.get_ident())
        with self.lock:
            s = self.sessions.get(key)
            if s is None:
                s = _perfctr.Session(key[0], inherit=inherit)
                s.attach()
                self.sessions[key] = s
        return s

    def close(self):
        for s in self.sessions.values():
            s.close()
        self.sessions.clear()

    def check_supported(self, s):
        # What a session can count is settled by its attach: asked once.
        missing = self.missing.get(id(s))
        if missing is None:
            missing = self.missing[id(s)] = s.unsupported
        if missing:
            names = ", ".join("'%s'" % n for n in missing)
            pytest.skip("perfctr: %s cannot be counted on this machine "
                        "(%s): %s" % (
                            names, "no hardware PMU" if not
                            _perfctr.info()["hardware_events"] else
                            "not supported here",
                            os.strerror(next(iter(missing.values())).errno)))

    def record(self, key, counts):
        """Keep the counts of `key`; compare them; fail on growth."""
        values = {n: int(c) for n, c in counts.items() if c.supported}
        with self.lock:
            kept = self.results.setdefault(key, {})
            kept.update(values)
        if self.baseline is None or key not in self.baseline:
            return
        grown = []
        for event, now in values.items():
            before = self.baseline[key].get(event)
            if before is None:
                continue
            failed = now > before * (1 + self.tolerance)
            if now != before:
                self.changes.append((key, event, before, now, failed))
            if failed:
                grown.append("'%s' %d -> %d (%s)" % (event, before, now,
                                                     change(before, now)))
        if grown:
            pytest.fail("perfctr: counts grew beyond %g%% against %s: %s" % (
                self.tolerance * 100, self.config.getoption("perfctr_compare"),
                "; ".join(grown)), pytrace=False)


def change(before, now):
    if before == 0:
        return "new" if now else "0%"
    return "%+.1f%%" % ((now - before) * 100.0 / before)


class Measurer:
    """The `perfctr` fixture: measure(events) counts a `with` block."""

    def __init__(self, plugin, nodeid):
        self._plugin = plugin
        self._nodeid = nodeid
        self._n = 0

    def measure(self, events, *, name=None, inherit=False, max=None):
        """measure(events, *, name=None, inherit=False, max=None)

        A context manager counting its block on this thread; it gives the
        session (m["event"] is a Count).  Counts are saved and compared
        under the test's id (and `name`, or '#2', '#3' ... for later
        blocks of one test).  max={event: n} fails the test when a count
        exceeds n."""
        self._n += 1
        label = name or ("" if self._n == 1 else "#%d" % self._n)
        key = self._nodeid + ("::" + label if label else "")
        return _Measure(self._plugin, key, events, inherit, max)


class _Measure:
    def __init__(self, plugin, key, events, inherit, budget):
        self.plugin = plugin
        self.key = key
        self.session = plugin.session(events, inherit)
        self.budget = budget

    def __enter__(self):
        self.plugin.check_supported(self.session)
        return self.session.__enter__()

    def __exit__(self, *exc):
        self.session.__exit__(*exc)
        if exc[0] is None:
            counts = self.session.counts()
            check_budget(self.budget, counts)
            self.plugin.record(self.key, counts)
        return False


def check_budget(budget, counts):
    over = []
    for event, limit in (budget or {}).items():
        if event not in counts:
            raise pytest.UsageError("perfctr: max names '%s', which is not "
                                    "among the events counted" % event)
        if int(counts[event]) > limit:
            over.append("'%s' counted %d > max %d" % (event,
                                                      int(counts[event]),
                                                      limit))
    if over:
        pytest.fail("perfctr: over budget: " + "; ".join(over),
                    pytrace=False)


def _plugin(config):
    return config.stash[_KEY]


_KEY = pytest.StashKey()


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "perfctr(events, max=None, inherit=False): count the "
        "test function's call (perfctr events, perfex's syntax); max="
        "{event: n} fails it when a count exceeds n")
    config.stash[_KEY] = Plugin(config)


def pytest_unconfigure(config):
    plugin = config.stash.get(_KEY, None)
    if plugin is not None:
        plugin.close()


@pytest.fixture
def perfctr(request):
    """Count regions of the test: `with perfctr.measure(events) as m:`."""
    return Measurer(_plugin(request.config), request.node.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    marker = pyfuncitem.get_closest_marker("perfctr")
    if marker is None:
        yield
        return
    plugin = _plugin(pyfuncitem.config)
    events = marker.kwargs.get("events", marker.args[0] if marker.args
                               else None)
    if not events:
        raise pytest.UsageError("%s: @pytest.mark.perfctr needs events"
                                % pyfuncitem.nodeid)
    session = plugin.session(events, marker.kwargs.get("inherit", False))
    function = pyfuncitem.obj

    @functools.wraps(function)
    def counted(*args, **kwargs):
        plugin.check_supported(session)
        with session:
            result = function(*args, **kwargs)
        counts = session.counts()
        check_budget(marker.kwargs.get("max"), counts)
        plugin.record(pyfuncitem.nodeid, counts)
        return result

    pyfuncitem.obj = counted
    try:
        yield
    finally:
        pyfuncitem.obj = function


def pytest_sessionfinish(session):
    config = session.config
    plugin = config.stash.get(_KEY, None)
    if plugin is None:
        return
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        # An xdist worker: the controller writes the file and the table.
        workeroutput["perfctr"] = json.dumps(
            {"results": plugin.results, "changes": plugin.changes})
        return
    path = config.getoption("perfctr_save")
    if path:
        with open(path, "w") as f:
            json.dump({"format": FORMAT, "version": VERSION,
                       "tests": dict(sorted(plugin.results.items()))},
                      f, indent=1)
            f.write("\n")


def pytest_testnodedown(node, error):
    """xdist's controller: a worker's counts and changes."""
    data = getattr(node, "workeroutput", {}).get("perfctr")
    if not data:
        return
    plugin = _plugin(node.config)
    data = json.loads(data)
    plugin.results.update(data["results"])
    plugin.changes.extend(tuple(c) for c in data["changes"])


def pytest_terminal_summary(terminalreporter, config):
    plugin = config.stash.get(_KEY, None)
    if plugin is None or plugin.baseline is None or \
            getattr(config, "workeroutput", None) is not None:
        return
    tr = terminalreporter
    compared = sum(1 for k in plugin.results if k in plugin.baseline)
    tr.section("perfctr: counts against %s (tolerance %g%%)" % (
        config.getoption("perfctr_compare"), plugin.tolerance * 100))
    if not plugin.changes:
        tr.write_line("no changes in %d counted tests" % compared)
        return
    rows = sorted(plugin.changes)
    width = max(len(k) for k, *_ in rows)
    ewidth = max(len(e) for _, e, *_ in rows)
    tr.write_line("%-*s  %-*s  %12s  %12s  %8s" % (
        width, "test", ewidth, "event", "baseline", "now", "change"))
    for key, event, before, now, failed in rows:
        tr.write_line("%-*s  %-*s  %12d  %12d  %8s%s" % (
            width, key, ewidth, event, before, now, change(before, now),
            "  FAIL" if failed else ""))
    tr.write_line("%d changed counts in %d counted tests, %d beyond the "
                  "tolerance" % (len(rows), compared,
                                 sum(1 for r in rows if r[4])))
