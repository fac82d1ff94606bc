# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The harness of the CLI tests: the same ok / FAIL / skip lines as the C
harness (tests/lib/test.h), read by tests/run.

    from pctest import case, run_cases, skip, perfex, work
    @case
    def exit_status_passes_through():
        r = perfex("--", work(), "exit", "3")
        check(r.returncode == 3, r)
    run_cases()
"""
import os
import subprocess
import sys
import traceback

TOP = os.environ.get("PERFCTR_SRC") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
O = os.environ.get("O", "build")
BUILD = O if os.path.isabs(O) else os.path.join(TOP, O)
PERFEX = os.path.join(BUILD, "perfex")

# perfex's exit statuses (src/perfex/perfex.h, perfex(1) EXIT STATUS): the
# shell's for a command that cannot run, a block of perfex's own above
# every 128 + signal status.  Tests name them, never spell the numbers.
EXIT = {"noexec": 126, "nocmd": 127, "usage": 200, "event": 201, "perm": 202,
        "tracefs": 203, "target": 204, "io": 205, "internal": 206}

_cases = []


class Skip(Exception):
    pass


class Failure(Exception):
    pass


def case(fn):
    _cases.append(fn)
    return fn


def skip(reason):
    raise Skip(reason)


def check(cond, detail=""):
    if not cond:
        frame = traceback.extract_stack(limit=2)[0]
        raise Failure("%s:%d: %s" % (os.path.basename(frame.filename),
                                     frame.lineno, str(detail)[:2000]))


def require_root():
    if os.geteuid() != 0:
        skip("needs root (euid is %d)" % os.geteuid())


def require_tracefs():
    for root in ("/sys/kernel/tracing/events",
                 "/sys/kernel/debug/tracing/events"):
        if os.access(root, os.R_OK):
            return
    skip("tracefs is not mounted or not readable "
         "(mount -t tracefs nodev /sys/kernel/tracing as root)")


def work():
    """Path of the pcwork workload."""
    return os.path.join(BUILD, "tests", "workload", "pcwork")


def perfex(*args, input=None, timeout=120, env=None):
    """Run perfex; returns CompletedProcess with text stdout/stderr."""
    return subprocess.run([PERFEX] + list(args), input=input,
                          capture_output=True, text=True, timeout=timeout,
                          env=env)


def run_cases():
    prog = os.path.basename(sys.argv[0])
    wanted = sys.argv[1:]
    failures = 0
    for fn in _cases:
        if wanted and fn.__name__ not in wanted:
            continue
        name = "%s/%s" % (prog, fn.__name__)
        try:
            fn()
        except Skip as e:
            print("skip %s: %s" % (name, e), flush=True)
        except Failure as e:
            print("FAIL %s: %s" % (name, e), flush=True)
            failures += 1
        except Exception:
            print("FAIL %s: %s" % (name, traceback.format_exc().strip()
                                   .replace("\n", " | ")), flush=True)
            failures += 1
        else:
            print("ok %s" % name, flush=True)
    sys.exit(1 if failures else 0)
