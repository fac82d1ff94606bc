# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfctr: exact performance counters, recordings and profiles, over
libperfctr (the C library of the same project).

The counting side comes from the extension perfctr._core, the recordings
(perf.data files) from perfctr._data.
"""
from perfctr._core import library_version

__version__ = library_version()

try:
    from perfctr.data import Reader, Sample, open, record
except ImportError:     # built without perfctr._data: counting only
    pass
