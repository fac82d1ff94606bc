# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""What the perfex serve benchmarks (serve-scrape, serve-profile) share:
the build's paths, a free loopback port, waiting for a server to listen,
and the task-clock of a process (threads included) over a piece of work,
counted by perfex -p."""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
O = os.environ.get("O", "build")
BUILD = O if os.path.isabs(O) else os.path.join(TOP, O)
PERFEX = os.path.join(BUILD, "perfex")


def die(name, msg):
    print("%s: %s" % (name, msg))
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.1)
    return False


def task_clock_ms(pid, fn):
    """fn() while perfex counts PID's task-clock; (ms, fn's result)."""
    out = tempfile.NamedTemporaryFile("r", suffix=".csv")
    p = subprocess.Popen([PERFEX, "-x,", "-o", out.name, "-e", "task-clock",
                          "-p", str(pid)], stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)            # attached
    result = fn()
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=30)
    for row in out.read().splitlines():
        f = row.split(",")
        if len(f) > 2 and f[2] == "task-clock":
            # Not counted: none of its threads ran at all.
            return (float(f[0]) if f[0][0].isdigit() else 0.0), result
    die("bench", "perfex -p gave no task-clock")
