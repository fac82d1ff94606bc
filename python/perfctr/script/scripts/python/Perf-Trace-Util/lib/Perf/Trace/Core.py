# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Core: the helpers perf's Python scripts import (`from Core import *`),
as perfex script -s provides them.

autodict() makes dicts that grow on first access to any depth; the flag
and symbolic tables translate numeric tracepoint fields into names for
the events that define them (define_*), flag_str() and symbol_str()."""
from collections import defaultdict


def autodict():
    """A dict whose missing keys are new autodicts: d[a][b][c] = 1 works
    without setting d[a] or d[a][b] first.  A missing leaf is an
    autodict too, so `d[k] += 1` raises TypeError the first time (the
    scripts catch it and store 1)."""
    return defaultdict(autodict)


_flag_fields = autodict()
_symbolic_fields = autodict()


def define_flag_field(event_name, field_name, delim):
    _flag_fields[event_name][field_name]["delim"] = delim


def define_flag_value(event_name, field_name, value, field_str):
    _flag_fields[event_name][field_name]["values"][value] = field_str


def define_symbolic_field(event_name, field_name):
    # Nothing to remember until a value is defined.
    _symbolic_fields[event_name][field_name]


def define_symbolic_value(event_name, field_name, value, field_str):
    _symbolic_fields[event_name][field_name]["values"][value] = field_str


def flag_str(event_name, field_name, value):
    """The names of the flags set in value, joined by the field's
    delimiter, lowest value first; "" when none is defined."""
    field = _flag_fields.get(event_name, {}).get(field_name)
    if not field or "values" not in field:
        return ""
    delim = field.get("delim") or ""
    if not isinstance(delim, str):
        delim = ""
    names = []
    for flag in sorted(field["values"]):
        if flag == 0:
            if value == 0:
                return field["values"][0]
            continue
        if value & flag == flag:
            names.append(field["values"][flag])
            value &= ~flag
    return delim.join(names)


def symbol_str(event_name, field_name, value):
    """The name defined for value of a symbolic field, "" when none."""
    field = _symbolic_fields.get(event_name, {}).get(field_name)
    if not field or "values" not in field:
        return ""
    return field["values"].get(value, "")


_TRACE_FLAGS = ((0x00, "NONE"), (0x01, "IRQS_OFF"),
                (0x02, "IRQS_NOSUPPORT"), (0x04, "NEED_RESCHED"),
                (0x08, "HARDIRQ"), (0x10, "SOFTIRQ"))


def trace_flag_str(value):
    """The ftrace flags of common_flags by name, joined by " | "."""
    if value == 0:
        return "NONE"
    return " | ".join(name for bit, name in _TRACE_FLAGS
                      if bit and value & bit)


_TASK_STATES = {0: "R", 1: "S", 2: "D", 64: "DEAD"}


def taskState(state):
    """A scheduler task state as a letter (R, S, D, DEAD), "Unknown"
    otherwise."""
    return _TASK_STATES.get(state, "Unknown")


class EventHeaders:
    """The common arguments of a tracepoint handler, kept together."""

    def __init__(self, common_cpu, common_secs, common_nsecs,
                 common_pid, common_comm, common_callchain):
        self.cpu = common_cpu
        self.secs = common_secs
        self.nsecs = common_nsecs
        self.pid = common_pid
        self.comm = common_comm
        self.callchain = common_callchain

    def ts(self):
        """The time in ns."""
        return self.secs * 1000000000 + self.nsecs

    def ts_format(self):
        """The time as "secs.usecs" (microseconds, 6 digits)."""
        return "%d.%06d" % (self.secs, self.nsecs // 1000)
