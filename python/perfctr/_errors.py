# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfctr's exceptions (perfctr._core raises them; perfctr exports them).

Each carries the errno of the failure, perfctr's message (the words perfex
would print after "perfex: ") and its cure as `hint` ("" when none is
known); str() gives the message and the hint lines as perfex prints them.
"""
import builtins


class Error(Exception):
    """A failure of perfctr: .errno, .message, .hint."""

    def __init__(self, message, errno=0, hint=""):
        super().__init__(message)
        self.message = message
        self.errno = errno
        self.hint = hint

    def __str__(self):
        if not self.hint:
            return self.message
        return "%s\nhint: %s" % (self.message, self.hint)

    def __reduce__(self):
        return (type(self), (self.message, self.errno, self.hint))


class EventError(Error, ValueError):
    """An event specification that does not parse, or names an event this
    machine does not have (the hint suggests the nearest name).  .column is
    where in the specification, when known."""
    column = None


class NotSupportedError(Error):
    """An event this machine cannot count (a hardware event without a
    hardware PMU, a PMU that is not here)."""


class PermissionError(Error, builtins.PermissionError):
    """The kernel refused: the hint names perf_event_paranoid, root or
    CAP_PERFMON, and the access broker perfctrd where it can help."""

    def __init__(self, message, errno=0, hint=""):
        Error.__init__(self, message, errno, hint)


class TracefsError(Error):
    """Tracepoints need tracefs, which is not mounted or not readable."""


class TargetError(Error):
    """The process, thread or command to count does not exist or cannot
    run."""


# Shown as perfctr.Error etc. in tracebacks: the package is their home.
for _cls in (Error, EventError, NotSupportedError, PermissionError,
             TracefsError, TargetError):
    _cls.__module__ = "perfctr"
del _cls
