# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""`perfex script -s SCRIPT.py`: perf's Python script protocol over
perfctr.Reader, so that perf's scripts (syscall-counts.py,
stackcollapse.py, ...) run unchanged on perfex's and perf's files.

A script is run as perf script runs it: its module code first (with
sys.argv = [SCRIPT, ARGS...]), then trace_begin(), then one call per
sample, then trace_end():
  - a tracepoint sample: `<system>__<event>(event_name, context,
    common_cpu, common_secs, common_nsecs, common_pid, common_comm,
    common_callchain, <fields>...)`, with perf_sample_dict last when the
    handler takes one more argument; without such a handler,
    `trace_unhandled(event_name, context, fields_dict)` (same rule);
  - any other sample: `process_event(perf_sample_dict)`.
Fields are decoded from the formats the file carries.  The helper
modules the scripts import (Core, Util, EventClass, perf_trace_context)
are perfctr's own, found as perf's are through $PERF_EXEC_PATH, which is
set to this package's folder.
"""
import os
import sys
import traceback

from perfctr import _data
from perfctr.data import Reader

#: Where scripts find scripts/python/Perf-Trace-Util/lib/Perf/Trace.
EXEC_PATH = os.path.dirname(os.path.abspath(__file__))
HELPERS = os.path.join(EXEC_PATH, "scripts", "python", "Perf-Trace-Util",
                       "lib", "Perf", "Trace")

# perfex's exit statuses (perfex(1)): usage, damaged or unreadable file.
EXIT_USAGE = 200
EXIT_IO = 205

_NONE, _TRACEPOINT, _UNHANDLED, _PROCESS = 0, 1, 2, 3
_COMMON_ARGS = 8    # event_name ... common_callchain


def _arg_count(fn):
    code = getattr(fn, "__code__", None)
    return code.co_argcount if code is not None else -1


def handler_table(reader, namespace):
    """One (kind, handler, takes perf_sample_dict, handler name) per event
    of the file, as perf script chooses them."""
    table = []
    for idx, event in enumerate(reader.events):
        tp = _data.tracepoint_fields(reader, idx)
        attr = reader.attr(idx)
        if attr["type"] == 2:       # PERF_TYPE_TRACEPOINT
            system, name, fields = tp if tp else tuple(
                (event.split(":", 1) + [""])[:2]) + ((),)
            hname = "%s__%s" % (system, name)
            fn = namespace.get(hname)
            if callable(fn):
                want = _arg_count(fn) == _COMMON_ARGS + len(fields) + 1
                table.append((_TRACEPOINT, fn, want, hname))
                continue
            fn = namespace.get("trace_unhandled")
            if callable(fn):
                table.append((_UNHANDLED, fn, _arg_count(fn) == 4, hname))
                continue
            table.append((_NONE, None, False, hname))
        else:
            fn = namespace.get("process_event")
            table.append((_PROCESS, fn, True, "process_event")
                         if callable(fn) else (_NONE, None, False, ""))
    return table


def _install_helpers():
    os.environ["PERF_EXEC_PATH"] = EXEC_PATH
    if HELPERS not in sys.path:
        sys.path.append(HELPERS)
    import perfctr.script.context as context
    sys.modules["perf_trace_context"] = context


def run(input, script, args=(), callchain=True):
    """Run perf script SCRIPT (a path) with ARGS on perf.data file INPUT.
    Returns the exit status."""
    try:
        reader = Reader(input, callchain=callchain, fields=False)
    except OSError as e:
        print("perfex: %s" % e.strerror, file=sys.stderr)
        return EXIT_IO
    try:
        with open(script, "rb") as f:
            source = f.read()
    except OSError as e:
        print("perfex: cannot read script '%s': %s" % (script, e.strerror),
              file=sys.stderr)
        return EXIT_USAGE
    _install_helpers()
    sys.argv = [script] + list(args)
    namespace = {"__name__": "__main__", "__file__": script,
                 "__builtins__": __builtins__}
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    code = compile(source, script, "exec")
    exec(code, namespace)
    begin = namespace.get("trace_begin")
    if callable(begin):
        begin()
    try:
        _data.run_script(reader, handler_table(reader, namespace))
    except OSError as e:
        print("perfex: %s" % e.strerror, file=sys.stderr)
        return EXIT_IO
    end = namespace.get("trace_end")
    if callable(end):
        end()
    stats = reader.stats()
    lost = stats["lost"] + stats["lost_samples"]
    if lost:
        print("perfex: %d samples were lost while recording" % lost,
              file=sys.stderr)
    return 0


def generate(input, output="perf-script.py"):
    """Write a starting script for the events of INPUT (perf script -g
    python): a handler per tracepoint printing its fields,
    trace_unhandled and process_event for the others."""
    from perfctr.script.generate import write
    try:
        reader = Reader(input, fields=False)
    except OSError as e:
        print("perfex: %s" % e.strerror, file=sys.stderr)
        return EXIT_IO
    with open(output, "w") as f:
        write(reader, f)
    print("generated Python script: %s" % output)
    return 0
