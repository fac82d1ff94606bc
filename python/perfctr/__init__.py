# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfctr: exact performance counters, recordings and profiles, over
libperfctr (the C library of the same project).

Counting a region of the calling thread::

    with perfctr.count("syscalls:sys_enter_getppid,page-faults") as c:
        work()
    c["syscalls:sys_enter_getppid"]          # a Count: an int, with
    c["page-faults"].time_running            # times, scaled, multiplexed

    @perfctr.count("task-clock")             # each call counted;
    def f(): ...                              # f.counts is the last one

Events are written as perfex takes them: "a,b", groups "{a,b}",
modifiers "cycles:u".  An event this machine cannot count (a hardware
event without a PMU) is kept as not supported: c.get(name).supported is
False and c[name] raises NotSupportedError; strict=True raises at once.

Also: Session and Target (perfmon2's sessions: attach/detach, event sets
rotating with estimates and error bounds), run() (a command counted as
`perfex` counts it, its process tree included), ThreadCounter (the
original perfctr's per-thread counters; read_into() fills a buffer
without allocating), Metrics (the `-M` metric groups and metric files).
Errors are perfctr.Error and its subclasses, carrying errno, message and
hint.  The pytest plugin is perfctr.pytest.

Thread safety: every object serialises its own calls (one lock each), and
the calls that may block release the GIL.  A count() or a Session
attached to the calling thread counts that thread only (plus, with
inherit=True, the threads and children it creates afterwards); entered
from another thread, it re-attaches to that thread.  The recordings
(perf.data files) come from the extension perfctr._data.
"""
import functools as _functools
import os as _os

from perfctr._errors import (Error, EventError, NotSupportedError,
                             PermissionError, TargetError, TracefsError)
from perfctr import _core
from perfctr._core import (Estimate, Metrics, MetricPlan, SetInfo,
                           ThreadCounter, library_version)

__version__ = library_version()

__all__ = ["count", "Session", "Target", "Count", "run", "RunResult",
           "Process", "ThreadCounter", "Metrics", "MetricPlan", "Estimate",
           "SetInfo", "Error", "EventError", "NotSupportedError",
           "PermissionError", "TargetError", "TracefsError", "events",
           "info", "parse", "library_version"]

# perfex's default events (perfex stat without -e): software, then
# hardware where the machine has a PMU.
DEFAULT_EVENTS = ("task-clock,context-switches,cpu-migrations,page-faults,"
                  "cycles,instructions,branches,branch-misses")

_STATUS = {_core.COUNT_OK: "ok", _core.COUNT_NOT_COUNTED: "not counted",
           _core.COUNT_NOT_SUPPORTED: "not supported"}


class Count(int):
    """One event's count: an int (the raw value the kernel summed), with

    name, value, time_enabled and time_running (ns), scaled (value *
    enabled / running, a float), multiplexed (it ran only part of the
    time it was enabled), status ('ok', 'not counted', 'not supported'),
    supported, and errno (why not supported, else 0).
    """

    def __new__(cls, name, raw):
        value, enabled, running, status, errnum = raw
        self = int.__new__(cls, value)
        self.name = name
        self.time_enabled = enabled
        self.time_running = running
        self.status = _STATUS.get(status, "?")
        self.errno = errnum
        return self

    @property
    def value(self):
        return int(self)

    @property
    def supported(self):
        return self.status != "not supported"

    @property
    def multiplexed(self):
        return 0 < self.time_running < self.time_enabled

    @property
    def scaled(self):
        if self.time_running == 0:
            return 0.0
        if self.time_running >= self.time_enabled:
            return float(int(self))
        return int(self) * self.time_enabled / self.time_running

    def raw(self):
        """The tuple perfctr._core gives: (value, enabled, running,
        status, errno)."""
        return (int(self), self.time_enabled, self.time_running,
                {v: k for k, v in _STATUS.items()}[self.status], self.errno)

    def __repr__(self):
        if not self.supported:
            return "<Count %s: not supported (%s)>" % (
                self.name, _os.strerror(self.errno))
        extra = ", multiplexed" if self.multiplexed else ""
        if self.status == "not counted":
            extra = ", not counted"
        return "<Count %s=%d%s>" % (self.name, int(self), extra)

    def __reduce__(self):
        return (Count, (self.name, self.raw()))


def _not_supported(count):
    return NotSupportedError(
        "event '%s' is not supported here: %s" % (
            count.name, _os.strerror(count.errno)), count.errno,
        "this machine has no PMU that counts it (perfctr.info() and "
        "perfctr.events() say what it offers)")


class Session(_core.Session):
    """Session(events=None, *, inherit=False, strict=False,
    enable_on_attach=False, no_broker=False, metrics=None,
    metric_files=())

    perfmon2's session: add events (to event sets), attach to a Target
    (or to the calling thread), start, stop, read, detach; attach again
    elsewhere and the sums go on.  As a context manager it counts the
    calling thread: entering attaches (the first time), resets and
    starts; leaving stops and reads.  As a decorator it counts each call
    of the function (the function's .counts is the session).

    Reading: s["name"] (or an index) is a Count; s.get(name) also for an
    event that is not supported; s.counts() a dict of them; s.estimate(e)
    the estimate with its error bound; s.metrics a dict of the metrics
    asked for (metrics="ipc,GROUP", metric_files=[paths]) and of the
    generic ones.
    """

    def __init__(self, events=None, *, inherit=False, strict=False,
                 enable_on_attach=False, no_broker=False, metrics=None,
                 metric_files=()):
        super().__init__(events, inherit=inherit, strict=strict,
                         enable_on_attach=enable_on_attach,
                         no_broker=no_broker)
        self._plan = None
        if metrics or metric_files:
            tables = Metrics(list(metric_files))
            self._plan = tables.plan(metrics) if metrics else None
            for group in (self._plan.groups if self._plan else ()):
                self.add_events(group)

    # reading
    def get(self, event, default=None):
        """The Count of `event` (name or index), also when it is not
        supported; `default` when there is no such event."""
        try:
            raw = self.raw_count(event)
        except (KeyError, IndexError):
            return default
        name = event if isinstance(event, str) else self.events[event]
        return Count(name, raw)

    def __getitem__(self, event):
        c = Count(event if isinstance(event, str) else self.events[event],
                  self.raw_count(event))
        if not c.supported:
            raise _not_supported(c)
        return c

    def __contains__(self, event):
        return event in self.events

    def __iter__(self):
        return iter(self.events)

    def __len__(self):
        return len(self.events)

    def keys(self):
        return list(self.events)

    def counts(self):
        """{name: Count} for every event, supported or not."""
        return {n: Count(n, raw) for n, raw in zip(self.events,
                                                   self.raw_counts())}

    def items(self):
        return self.counts().items()

    def values(self):
        return list(self.counts().values())

    @property
    def unsupported(self):
        """{name: Count} of the events this machine cannot count."""
        return {n: c for n, c in self.counts().items() if not c.supported}

    def unit_counts(self, event):
        """[(tid, cpu, Count)] of `event` per unit of the target."""
        name = event if isinstance(event, str) else self.events[event]
        return [(tid, cpu, Count(name, raw))
                for tid, cpu, raw in self.raw_unit_counts(event)]

    def estimates(self):
        """{name: Estimate} for every event."""
        return {n: self.estimate(i) for i, n in enumerate(self.events)}

    def _rows(self):
        layout = self.layout
        return [(n, raw[0], raw[1], raw[2], raw[3], layout[i][0])
                for i, (n, raw) in enumerate(zip(self.events,
                                                 self.raw_counts()))]

    @property
    def metrics(self):
        """{metric: value} of the metrics asked for (None where it cannot
        be computed), then the generic metrics of the counts ("ipc",
        "rate" per event as "NAME/sec", ...)."""
        rows = self._rows()
        out = {}
        if self._plan is not None:
            for name, status, value, *_ in self._plan.compute(
                    rows, float(self.wall_ns)):
                out[name] = value if status == "ok" else None
        for name, unit, value, event in _core.generic_metrics(
                rows, float(self.wall_ns)):
            key = name if name not in ("rate",) else "%s/sec" % rows[event][0]
            out.setdefault(key, value)
        return out

    def __call__(self, fn):
        @_functools.wraps(fn)
        def counted(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        counted.counts = self
        return counted

    def __repr__(self):
        if not self.events:
            return "<perfctr.Session (no events)>"
        try:
            body = ", ".join(repr(c) for c in self.counts().values())
        except ValueError:
            body = "closed"
        return "<perfctr.Session %s>" % body


def count(events=None, *, inherit=False, strict=False, metrics=None,
          metric_files=()):
    """count(events, *, inherit=False, strict=False, metrics=None,
    metric_files=()) -> Session

    Count `events` (perfex's syntax, or a list of event strings) over a
    `with` block or, as a decorator, over each call.  inherit=True also
    counts the threads and processes the thread creates inside; strict
    raises NotSupportedError for an event the machine cannot count;
    metrics and metric_files add the events of those metrics (perfex -M)
    and give their values in .metrics."""
    if events is None and not metrics:
        events = DEFAULT_EVENTS
    return Session(events, inherit=inherit, strict=strict, metrics=metrics,
                   metric_files=metric_files)


class Target(_core.Target):
    """What a Session counts; made by the class methods self(), thread(),
    process(), cpus(), cgroup() and command()."""

    @classmethod
    def self(cls):
        """The calling thread."""
        return cls("self")

    @classmethod
    def thread(cls, tid, cpus=None):
        """Thread `tid` (of any process the caller may trace), on the CPUs
        of `cpus` ("0-1") only when given."""
        return cls("thread", tid, cpus)

    @classmethod
    def process(cls, pid):
        """Every thread of process `pid`, and those it creates."""
        return cls("process", pid)

    @classmethod
    def cpus(cls, cpus=None):
        """Global mode: everything that runs on the CPUs ("0-3"; None for
        all)."""
        return cls("cpus", None, cpus)

    @classmethod
    def cgroup(cls, path, cpus=None):
        """The tasks of cgroup v2 `path` (relative to the cgroup2 mount)."""
        return cls("cgroup", path, cpus)

    @classmethod
    def command(cls, argv, env=None, stdin=None, stdout=None, stderr=None):
        """`argv` forked now and held before its exec: counters attached
        to it count from the exec, which start() lets happen."""
        return cls("command", list(argv), None, env, stdin, stdout, stderr)


class Process:
    """One process of a run's tree: pid, ppid, comm, exe, exit_status,
    running, depth, parent (a Process or None), children, threads
    (Process rows of its tasks, with tid), self (its own counts: {name:
    Count}) and subtree (it and its descendants)."""

    def __init__(self, row, names):
        for key in ("pid", "ppid", "tid", "depth", "comm", "exe",
                    "start_ns", "end_ns", "exit_status", "running"):
            setattr(self, key, row[key])
        self.parent = None
        self.children = []
        if "self" in row:
            self.self = {n: Count(n, r) for n, r in zip(names, row["self"])}
            self.subtree = {n: Count(n, r)
                            for n, r in zip(names, row["subtree"])}
            self.threads = [Process(t, names) for t in row["threads"]]
        else:
            self.self = self.subtree = {n: Count(n, r) for n, r in
                                        zip(names, row["counts"])}
            self.threads = []

    def walk(self):
        """This process and its descendants, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()

    def __repr__(self):
        return "<Process %d %s>" % (self.pid, self.comm)


class RunResult:
    """What run() measured: counts ({name: Count}, the whole tree's
    sums, as perfex prints them), returncode (as subprocess's: negative
    for a signal), status (the wait status), wall_ns, metrics (the
    generic metrics perfex prints beside the counts), and, with
    tree=True, processes (every Process, the root first) and root."""

    def __init__(self, raw):
        self.status = raw["status"]
        self.returncode = (_os.waitstatus_to_exitcode(self.status)
                           if self.status >= 0 else None)
        self.wall_ns = raw["wall_ns"]
        names = [name for name, _, _ in raw["counts"]]
        self.counts = {name: Count(name, c) for name, _, c in raw["counts"]}
        rows = [(name, c[0], c[1], c[2], c[3], leader)
                for name, leader, c in raw["counts"]]
        self.metrics = {}
        for name, unit, value, event in _core.generic_metrics(
                rows, float(self.wall_ns)):
            key = name if name != "rate" else "%s/sec" % rows[event][0]
            self.metrics.setdefault(key, value)
        self.processes = []
        self.root = None
        for row in raw.get("processes", ()):
            p = Process(row, names)
            if row["parent"] >= 0:
                p.parent = self.processes[row["parent"]]
                p.parent.children.append(p)
            self.processes.append(p)
        if self.processes:
            self.root = self.processes[0]

    def __getitem__(self, name):
        c = self.counts[name]
        if not c.supported:
            raise _not_supported(c)
        return c

    def __repr__(self):
        return "<RunResult returncode=%s %s>" % (
            self.returncode, ", ".join(repr(c) for c in self.counts.values()))


def run(argv, events=None, *, tree=False, env=None, stdin=None, stdout=None,
        stderr=None):
    """run(argv, events=None, *, tree=False, env=None, stdin=None,
    stdout=None, stderr=None) -> RunResult

    Run a command and count it (children and threads included) from its
    exec to its end, as `perfex -e EVENTS -- argv` does; events default to
    perfex's.  tree=True also traces its processes (`perfex stat --tree`):
    each process's own counts and its subtree's.  stdin/stdout/stderr are
    files or descriptors for the command (None: this process's).  The wait
    happens without the GIL; a KeyboardInterrupt kills the command."""
    target = Target.command(argv, env=env, stdin=stdin, stdout=stdout,
                            stderr=stderr)
    return RunResult(_core.run(target, events or DEFAULT_EVENTS, tree=tree))


def events():
    """[(name, kind, description)] of every event this machine offers."""
    return _core.events()


def info():
    """What this machine can count: hardware_events, user_read,
    tracepoints, paranoid, nr_cpus, ... (perfex info)."""
    return _core.info()


def parse(events):
    """[(name, pmu, leader index)]: a specification as perfex reads it,
    without opening anything (raises EventError as counting would)."""
    return _core.parse(events)


try:
    from perfctr.data import Reader, Sample, open, record
    __all__ += ["Reader", "Sample", "open", "record"]
except ImportError:     # built without perfctr._data: counting only
    pass
