# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Util: time, statistics and naming helpers for perf's Python scripts,
as perfex script -s provides them.

syscall_name() names a system call by number with the audit package's
tables when python3-audit is installed, and returns the number as a
string otherwise (as perf's helper does; the notice that says so goes
to stderr, not into the script's output)."""
import errno
import os
import sys

NSECS_PER_SEC = 1000000000


def avg(total, n):
    return total / n


def nsecs(secs, nsecs):
    """secs and nsecs as one time in ns."""
    return secs * NSECS_PER_SEC + nsecs


def nsecs_secs(nsecs):
    """The whole seconds of a time in ns."""
    return nsecs // NSECS_PER_SEC


def nsecs_nsecs(nsecs):
    """The ns past the whole seconds of a time in ns."""
    return nsecs % NSECS_PER_SEC


def nsecs_str(nsecs):
    """A time in ns as "SSSSS.NNNNNNNNN" (seconds right-aligned in 5)."""
    return "%5u.%09u" % (nsecs_secs(nsecs), nsecs_nsecs(nsecs))


def add_stats(dict, key, value):
    """Keep (min, max, avg, count) of the values seen for key."""
    if key not in dict:
        dict[key] = (value, value, value, 1)
        return
    lo, hi, mean, count = dict[key]
    lo = min(lo, value)
    hi = max(hi, value)
    mean = (mean + value) / 2
    dict[key] = (lo, hi, mean, count + 1)


def clear_term():
    print("\x1b[H\x1b[2J")


try:
    import audit
    _machine = audit.audit_detect_machine()
except Exception:
    audit = None
    _machine = None

_warned = False


def syscall_name(id):
    """The name of system call id, or id as a string without audit."""
    global _warned
    if audit is not None:
        try:
            name = audit.audit_syscall_to_name(id, _machine)
            if name:
                return name
        except Exception:
            pass
        return str(id)
    if not _warned:
        _warned = True
        print("perfex: syscall names need the audit package's Python "
              "module (python3-audit); numbers are shown", file=sys.stderr)
    return str(id)


def strerror(nr):
    """The errno name (ENOENT...) of nr, positive or negative."""
    try:
        return errno.errorcode[abs(nr)]
    except KeyError:
        return "Unknown %d errno" % nr
