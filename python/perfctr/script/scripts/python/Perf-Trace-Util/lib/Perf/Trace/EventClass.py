# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""EventClass: sample objects for perf's Python scripts, as perfex
script -s provides them: create_event() makes a PerfEvent (name, comm,
dso, symbol, raw_buf) of any sample; perfex records no PEBS data, so
no richer class applies."""

EVTYPE_GENERIC = 0
EVTYPE_PEBS = 1
EVTYPE_PEBS_LL = 2
EVTYPE_IBS = 3


def create_event(name, comm, dso, symbol, raw_buf):
    return PerfEvent(name, comm, dso, symbol, raw_buf)


class PerfEvent(object):
    """A sample: its event's name, comm, DSO, symbol and raw bytes."""
    event_num = 0

    def __init__(self, name, comm, dso, symbol, raw_buf,
                 ev_type=EVTYPE_GENERIC):
        self.name = name
        self.comm = comm
        self.dso = dso
        self.symbol = symbol
        self.raw_buf = raw_buf
        self.ev_type = ev_type
        PerfEvent.event_num += 1

    def show(self):
        print("PMU event: name=%12s, symbol=%24s, comm=%8s, dso=%12s" %
              (self.name, self.symbol, self.comm, self.dso))
