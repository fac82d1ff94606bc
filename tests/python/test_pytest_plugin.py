# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The pytest plugin (perfctr.pytest) run by Debian's pytest: the demo
project examples/python passes with its hardware-event test skipped for
its reason, also with the package installed by pip (the plugin then
loads by its entry point, with or without -p); the marker counts only the test function (not its fixture's
open), budgets fail with the counts; --perfctr-save writes the counts,
--perfctr-compare fails growth beyond --perfctr-tolerance and prints the
table of changes; the same under pytest-xdist."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from pyharness import (TOP, case, check, need_tracepoints, perfctr,
                       python_env, run_cases, skip)

PROJECT = '''
import os
import pytest

GROW = int(os.environ.get("GROW", "0"))
PPID = "syscalls:sys_enter_getppid"


@pytest.fixture
def opened(tmp_path):
    fd = os.open(str(tmp_path / "f"), os.O_CREAT | os.O_WRONLY, 0o600)
    yield fd
    os.close(fd)


@pytest.mark.perfctr(events=PPID + ",syscalls:sys_enter_openat")
def test_region(opened):
    for _ in range(100 + GROW):
        os.getppid()


def test_fixture(perfctr):
    with perfctr.measure(PPID) as m:
        for _ in range(50):
            os.getppid()
    assert m[PPID] == 50
    with perfctr.measure(PPID, name="second") as m:
        os.getppid()
    assert m[PPID] == 1


@pytest.mark.perfctr(events=PPID, max={PPID: 10})
def test_over_budget():
    for _ in range(11 + GROW):
        os.getppid()
'''


def pytest_run(cwd, *args, env=None):
    try:
        import pytest  # noqa: F401
    except ImportError:
        skip("Debian's python3-pytest is not installed")
    cmd = [sys.executable, "-m", "pytest", "-p", "perfctr.pytest",
           "-p", "no:cacheprovider", "-rs", "--rootdir", cwd] + list(args)
    return subprocess.run(cmd, cwd=cwd, env=env or python_env(),
                          capture_output=True, text=True, timeout=300)


def summary(out):
    last = out.strip().splitlines()[-1]
    return {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|skipped"
                                            r"|error)", last)}


def need_xdist():
    try:
        import xdist  # noqa: F401
    except ImportError:
        skip("Debian's python3-pytest-xdist is not installed")


@case
def the_demo_project_passes():
    need_tracepoints()
    tmp = tempfile.mkdtemp()
    try:
        shutil.copytree(os.path.join(TOP, "examples", "python"),
                        os.path.join(tmp, "demo"))
        r = pytest_run(os.path.join(tmp, "demo"))
        out = r.stdout + r.stderr
        check(r.returncode == 0, out)
        want = {"passed": 3, "skipped": 1}
        if perfctr.info()["hardware_events"]:
            want = {"passed": 4}
        check(summary(r.stdout) == want, out)
        if "skipped" in want:
            check("'instructions:u' cannot be counted on this machine (no "
                  "hardware PMU)" in out, out)
    finally:
        shutil.rmtree(tmp)


@case
def installed_by_pip_the_entry_point_loads_it():
    need_tracepoints()
    if subprocess.run([sys.executable, "-m", "pip", "--version"],
                      capture_output=True).returncode != 0:
        skip("no pip for %s (Debian's python3-pip)" % sys.executable)
    from pctest import BUILD
    tmp = tempfile.mkdtemp()
    try:
        site = os.path.join(tmp, "site")
        env = dict(os.environ, PERFCTR_BUILD_DIR=BUILD,
                   PIP_DISABLE_PIP_VERSION_CHECK="1")
        r = subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                            "--no-build-isolation", "--no-deps",
                            "--no-index", "--target", site,
                            os.path.join(TOP, "python")],
                           env=env, capture_output=True, text=True,
                           timeout=600)
        check(r.returncode == 0, r.stdout + r.stderr)
        demo = os.path.join(tmp, "demo")
        shutil.copytree(os.path.join(TOP, "examples", "python"), demo)
        env = dict(os.environ, PYTHONPATH=site, PYTHONDONTWRITEBYTECODE="1")
        for extra in ([], ["-p", "perfctr.pytest"]):
            r = subprocess.run([sys.executable, "-m", "pytest", "-q",
                                "-p", "no:cacheprovider"] + extra,
                               cwd=demo, env=env, capture_output=True,
                               text=True, timeout=300)
            out = r.stdout + r.stderr
            check(r.returncode == 0 and ("3 passed, 1 skipped" in out or
                                         "4 passed" in out), (extra, out))
    finally:
        shutil.rmtree(tmp)


def project():
    tmp = tempfile.mkdtemp()
    with open(os.path.join(tmp, "test_counted.py"), "w") as f:
        f.write(PROJECT)
    return tmp


@case
def region_budget_save_and_compare():
    need_tracepoints()
    tmp = project()
    try:
        saved = os.path.join(tmp, "base.json")
        r = pytest_run(tmp, "--perfctr-save=" + saved)
        out = r.stdout + r.stderr
        check(r.returncode == 1 and summary(r.stdout) == {"passed": 2,
                                                          "failed": 1}, out)
        check("perfctr: over budget: 'syscalls:sys_enter_getppid' counted "
              "11 > max 10" in out, out)
        with open(saved) as f:
            tests = json.load(f)["tests"]
        region = tests["test_counted.py::test_region"]
        check(region == {"syscalls:sys_enter_getppid": 100,
                         "syscalls:sys_enter_openat": 0}, region)
        check(tests["test_counted.py::test_fixture"] ==
              {"syscalls:sys_enter_getppid": 50}, tests)
        check(tests["test_counted.py::test_fixture::second"] ==
              {"syscalls:sys_enter_getppid": 1}, tests)
        check("test_counted.py::test_over_budget" not in tests, tests)

        env = python_env()
        env["GROW"] = "1"    # 100 -> 101: +1%, within 2%
        r = pytest_run(tmp, "--perfctr-compare=" + saved,
                       "--perfctr-tolerance", "2%", "-k", "not budget",
                       env=env)
        out = r.stdout + r.stderr
        check(r.returncode == 0, out)
        check(re.search(r"test_counted.py::test_region +syscalls:sys_enter_"
                        r"getppid +100 +101 +\+1\.0%\n", out), out)
        check("1 changed counts in 3 counted tests, 0 beyond the tolerance"
              in out, out)

        env["GROW"] = "5"    # +5%: beyond
        r = pytest_run(tmp, "--perfctr-compare=" + saved,
                       "--perfctr-tolerance=2%", "-k", "not budget", env=env)
        out = r.stdout + r.stderr
        check(r.returncode == 1 and summary(r.stdout) == {"passed": 1,
                                                          "failed": 1}, out)
        check("counts grew beyond 2% against" in out and
              "'syscalls:sys_enter_getppid' 100 -> 105 (+5.0%)" in out, out)
        check(re.search(r"100 +105 +\+5\.0%  FAIL", out), out)

        r = pytest_run(tmp, "--perfctr-compare=" + saved,
                       "--perfctr-tolerance=lots")
        check(r.returncode == 4 and "not a percentage" in r.stderr, r.stderr)
    finally:
        shutil.rmtree(tmp)


@case
def under_xdist():
    need_tracepoints()
    need_xdist()
    tmp = project()
    try:
        saved = os.path.join(tmp, "base.json")
        r = pytest_run(tmp, "-n", "2", "--perfctr-save=" + saved,
                       "-k", "not budget")
        out = r.stdout + r.stderr
        check(r.returncode == 0 and summary(r.stdout) == {"passed": 2}, out)
        with open(saved) as f:
            tests = json.load(f)["tests"]
        check(tests["test_counted.py::test_region"]
              ["syscalls:sys_enter_getppid"] == 100, tests)
        check(len(tests) == 3, tests)
        env = python_env()
        env["GROW"] = "10"
        r = pytest_run(tmp, "-n", "2", "--perfctr-compare=" + saved,
                       "--perfctr-tolerance=2%", "-k", "not budget", env=env)
        out = r.stdout + r.stderr
        check(r.returncode == 1 and summary(r.stdout) == {"passed": 1,
                                                          "failed": 1}, out)
        check(re.search(r"100 +110 +\+10\.0%  FAIL", out), out)
    finally:
        shutil.rmtree(tmp)


run_cases()
