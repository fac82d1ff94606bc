# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The harness of the Python tier: pctest's ok / FAIL / skip protocol
(tests/cli/pctest.py), with the module perfctr imported from $O/python
(tests/run sets PYTHONPATH; Debian's /usr/bin/python3 runs these files).

    from pyharness import case, check, run_cases, perfctr, need_tracepoints

A file whose module cannot be imported reports one skip with the reason
instead of its cases."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))

from pctest import (BUILD, TOP, case, check, require_root,  # noqa: E402,F401
                    require_tracefs, run_cases, skip, work)

PYTHON_DIR = os.path.join(BUILD, "python")
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)

try:
    import perfctr  # noqa: E402
except ImportError as e:
    print("skip %s: the Python module is not built (%s): make python"
          % (os.path.basename(sys.argv[0]), e), flush=True)
    sys.exit(0)

PPID = "syscalls:sys_enter_getppid"
PID = "syscalls:sys_enter_getpid"

_warm = []


def need_tracepoints():
    """Root, tracefs, and the getppid/getpid tracepoints held open for the
    rest of the process: closing the last counter of a tracepoint costs
    the kernel 30-50 ms, closing one of several costs microseconds."""
    require_root()
    require_tracefs()
    if not _warm:
        s = perfctr.Session("%s,%s" % (PPID, PID))
        s.attach()
        _warm.append(s)


def getppid(n):
    for _ in range(n):
        os.getppid()


def getpid(n):
    for _ in range(n):
        os.getpid()


def python_env():
    """The environment for a child Python that imports perfctr."""
    env = dict(os.environ)
    env["PYTHONPATH"] = PYTHON_DIR + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env
