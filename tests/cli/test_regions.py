# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex --regions: the table per region of a program using the region
markers (examples/regions.c: two threads, each N times "work" around
"calls" with 10 getppid() calls and "spin").  With the getppid tracepoint
as the event every count is exact."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
from pctest import EXIT, BUILD, case, check, perfex, require_root, require_tracefs, run_cases, skip  # noqa: E402

EXAMPLE = os.path.join(BUILD, "examples", "regions")


def example():
    if not os.access(EXAMPLE, os.X_OK):
        skip("examples/regions is not built (make tests)")
    return EXAMPLE


def tables(out):
    """{region: {row: [calls, counts...]}} from perfex's output."""
    result, region = {}, None
    for line in out.splitlines():
        m = re.match(r"region '(.*)'$", line)
        if m:
            region = m.group(1)
            result[region] = {}
            continue
        fields = line.split()
        if region and len(fields) >= 2 and fields[0] != "thread":
            result[region][fields[0]] = [int(f) for f in fields[1:]]
    return result


@case
def exact_counts_per_region_and_thread():
    require_root()
    require_tracefs()
    r = perfex("--regions", "-e", "syscalls:sys_enter_getppid", "--",
               example(), "50")
    check(r.returncode == 0, r)
    t = tables(r.stdout)
    check(set(t) == {"work", "calls", "spin"}, r.stdout)
    check(t["work"]["total"] == [100, 1000], r.stdout)
    check(t["calls"]["total"] == [100, 1000], r.stdout)
    check(t["spin"]["total"] == [100, 0], r.stdout)
    threads = [k for k in t["work"] if k != "total"]
    check(len(threads) == 2, r.stdout)
    for tid in threads:
        check(t["work"][tid] == [50, 500], r.stdout)
    check("costs 0.0 syscalls:sys_enter_getppid" in r.stdout, r.stdout)


@case
def default_events_and_kept_file():
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                        "test-regions-%d.txt" % os.getpid())
    r = perfex("--regions", "-o", path, "--", example(), "20")
    try:
        check(r.returncode == 0, r)
        t = tables(r.stdout)
        check(t["work"]["total"][0] == 40, r.stdout)
        with open(path) as f:
            check(f.readline().startswith("perfctr-regions 1"))
    finally:
        if os.path.exists(path):
            os.unlink(path)


@case
def program_without_markers():
    r = perfex("--regions", "--", "/bin/true")
    check(r.returncode != 0, r)
    check("wrote no region results" in r.stderr, r.stderr)


@case
def usage_errors():
    r = perfex("--regions")
    check(r.returncode == EXIT["usage"], r)
    r = perfex("--regions", "--bogus", "--", "/bin/true")
    check(r.returncode == EXIT["usage"], r)


run_cases()
