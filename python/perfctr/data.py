# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Recordings: perf.data files made, read, profiled and exported.

    import perfctr
    perfctr.record("out.data", ["./app"], events="cpu-clock", callgraph=True)
    with perfctr.open("out.data") as r:     # perfex's or perf's files
        for s in r:                          # perfctr.Sample
            print(s.comm, s.tid, s.time, s.event, s.symbol, s.dso)
    cols = perfctr.open("out.data").to_numpy()   # structured array
    df = perfctr.open("out.data").to_pandas()    # DataFrame

Columns are filled in C, without a Python object per sample (numpy and
pandas are needed only for to_numpy() and to_pandas(); to_lists() works
without them).  Errors are OSError (or its subclasses) with the errno and
perfctr's message.  A Reader reads its file once, forwards: open the file
again for another pass.
"""
import builtins
import collections
import struct

from perfctr import _data

__all__ = ["Reader", "Sample", "Profile", "ProfileNode", "open", "record",
           "COLUMNS", "DEFAULT_COLUMNS"]

Sample = _data.Sample

#: Every column to_numpy() can make.
COLUMNS = ("ip", "pid", "tid", "cpu", "time", "period", "event", "addr",
           "kernel", "comm", "symbol", "dso")
#: The columns made when none are named.
DEFAULT_COLUMNS = ("time", "pid", "tid", "cpu", "event", "period", "ip",
                   "comm", "symbol", "dso")
#: Columns whose values are strings: codes into Reader.categories[name].
STRING_COLUMNS = ("comm", "symbol", "dso")

_NUMPY_TYPES = {"Q": "<u8", "i": "<i4", "b": "?"}

#: A node of a call graph: the frame's name and DSO, the weight at and
#: under it (total), of the samples that ended there (self), its children.
ProfileNode = collections.namedtuple("ProfileNode",
                                     "name dso total self children")


def _node(t):
    return ProfileNode(t[0], t[1], t[2], t[3], [_node(c) for c in t[4]])


class Profile:
    """Samples aggregated by sort keys (perfctr.Reader.profile()).

    rows: one dict per distinct combination of the keys, heaviest first:
    samples, weight (sum of periods), one entry per key ("comm", "dso",
    "sym", "pid", "tid", "cpu"), kernel, pid, tid of its first sample and,
    with a call-graph order, callgraph (a ProfileNode tree).
    """

    def __init__(self, raw):
        self.keys = raw["keys"]
        self.samples = raw["samples"]
        self.weight = raw["weight"]
        self.rows = []
        for samples, weight, keys, kernel, pid, tid, cg in raw["rows"]:
            row = {"samples": samples, "weight": weight}
            row.update(zip(self.keys, keys))
            row.update(kernel=kernel, pid=pid, tid=tid)
            if cg is not None:
                row["callgraph"] = _node(cg)
            self.rows.append(row)

    def __iter__(self):
        return iter(self.rows)

    def __len__(self):
        return len(self.rows)

    def to_pandas(self):
        """The rows as a DataFrame (without the call graphs)."""
        import pandas
        cols = ["samples", "weight"] + list(self.keys) + ["kernel"]
        return pandas.DataFrame([[r[c] for c in cols] for r in self.rows],
                                columns=cols)


class Reader(_data.Reader):
    __doc__ = _data.Reader.__doc__ + """

    Iterate for perfctr.Sample objects, or take every remaining sample at
    once: to_numpy(), to_pandas(), to_lists(), profile(), folded(),
    pprof().  categories holds the strings of the last string columns made.
    """

    categories = None

    def _event_index(self, event):
        if event is None:
            return -1
        if isinstance(event, int):
            if not 0 <= event < len(self.events):
                raise IndexError("perfctr: no event %d" % event)
            return event
        try:
            return self.events.index(event)
        except ValueError:
            raise ValueError("perfctr: no event '%s' in '%s' (it has: %s)"
                             % (event, self.path, ", ".join(self.events)))

    def _columns(self, columns, event):
        names = tuple(DEFAULT_COLUMNS if columns is None else columns)
        buf, rows, dtype, cats = self.columns(names, self._event_index(event))
        self.categories = cats
        self.categories["event"] = list(self.events)
        return buf, rows, dtype

    def to_numpy(self, columns=None, event=None):
        """The remaining samples as a numpy structured array, one field per
        column (DEFAULT_COLUMNS when none are named; any of COLUMNS).  The
        string columns (comm, symbol, dso) and event hold codes into
        self.categories[name] (-1: none).  Built in C: no Python object
        per sample.  event: only that event's samples (name or index)."""
        import numpy
        buf, rows, dtype = self._columns(columns, event)
        dt = numpy.dtype([(n, _NUMPY_TYPES[c]) for n, c in dtype])
        return numpy.frombuffer(buf, dtype=dt, count=rows)

    def to_pandas(self, columns=None, event=None):
        """The remaining samples as a pandas DataFrame: to_numpy()'s columns,
        the string ones and event as categoricals."""
        import pandas
        arr = self.to_numpy(columns, event)
        data = {}
        for name in arr.dtype.names:
            if name in STRING_COLUMNS or name == "event":
                data[name] = pandas.Categorical.from_codes(
                    arr[name], categories=pandas.Index(
                        self.categories[name], dtype=object))
            else:
                data[name] = arr[name]
        return pandas.DataFrame(data, copy=False)

    def to_lists(self, columns=None, event=None):
        """The remaining samples as a dict of lists (no numpy needed); the
        string columns and event hold the strings (None: none)."""
        buf, rows, dtype = self._columns(columns, event)
        fmt = "=" + "".join("Q" if c == "Q" else "i" if c == "i" else "?"
                            for _, c in dtype)
        view = memoryview(buf)
        out = {n: [] for n, _ in dtype}
        names = [n for n, _ in dtype]
        for row in struct.iter_unpack(fmt, view):
            for n, v in zip(names, row):
                out[n].append(v)
        for n in names:
            if n in STRING_COLUMNS or n == "event":
                cat = self.categories[n]
                out[n] = [cat[c] if c >= 0 else None for c in out[n]]
        return out

    def profile(self, sort="comm,dso,sym", callgraph=None, event=None):
        """The remaining samples aggregated by the sort keys (comma
        separated: comm, dso, sym, pid, tid, cpu), each row weighted by
        its samples' periods; callgraph: "callee" or "caller" to get each
        row's call graph (open the Reader with callchain=True).
        Returns a Profile."""
        return Profile(_data.profile(self, sort, callgraph,
                                     self._event_index(event)))

    def folded(self, event=None):
        """Folded stacks (FlameGraph's input) of the remaining samples:
        a list of "comm;outer;...;inner count" lines, by sample count.
        Open the Reader with callchain=True for whole stacks."""
        return ["%s %d" % (stack, n) for stack, n in
                _data.folded(self, self._event_index(event))]

    def pprof(self, path=None):
        """The remaining samples as a pprof profile (gzip'd profile.proto,
        for go tool pprof, Pyroscope, Parca); written to path when given.
        Returns the bytes."""
        data = _data.pprof(self)
        if path is not None:
            with builtins.open(path, "wb") as f:
                f.write(data)
        return data


def open(path="perf.data", **kwargs):
    """perfctr.Reader(path, **kwargs): a perf.data file, perfex's or perf's."""
    return Reader(path, **kwargs)


def record(output="perf.data", argv=None, pid=None, events="cpu-clock",
           period=None, freq=None, callgraph=False, duration=None,
           mmap_pages=0):
    """Sample a command or a process into perf.data file `output`, as
    `perfex record` does.

    argv: a command (list of str) run to its end; or pid: a running
    process, sampled for `duration` seconds (or until it ends).
    events: perfex's event syntax ("cpu-clock", "syscalls:sys_enter_*",
    "{a,b}"); period / freq: every N events / N per second (default: every
    event of tracepoints and breakpoints, else 4000 Hz); callgraph: record
    the kernel's call chains.  The GIL is released while sampling; Ctrl-C
    stops the recording (its file finished) and raises KeyboardInterrupt.
    Returns a dict: samples, lost, exit_status and signal of the command.
    """
    return _data.record(output, argv, pid or 0, events, period or 0,
                        freq or 0, callgraph, duration or 0.0, mmap_pages)
