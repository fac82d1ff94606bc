# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""make dist and make distcheck: the tarball of a commit is the same bytes
made twice (another umask, time zone and build directory), holds exactly
the commit's files under perfctr-VERSION/, sorted, owned by 0:0 with no
names, each dated the commit's time; distcheck's build from it passes
the unit tier and installs, passes installcheck and uninstalls leaving
nothing (make distcheck runs the whole suite; here its build step and
the unit tier, without the minute-long pmu-events import)."""
import os
import re
import shutil
import subprocess
import tarfile
import tempfile

from pctest import TOP, case, check, run_cases, skip


def version():
    with open(os.path.join(TOP, "Makefile")) as f:
        return re.search(r"^VERSION\s*:=\s*(\S+)", f.read(), re.M).group(1)


def require_git():
    if not shutil.which("git"):
        skip("git is not installed")
    r = subprocess.run(["git", "-C", TOP, "rev-parse", "HEAD"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        skip("%s is not a git checkout: make dist makes a commit's tarball"
             % TOP)


def make_dist(out, umask=0o022, tz="UTC"):
    env = dict(os.environ, TZ=tz)
    env.pop("MAKEFLAGS", None)
    old = os.umask(umask)
    try:
        r = subprocess.run(["make", "-s", "-C", TOP, "O=" + out, "dist"],
                           capture_output=True, text=True, env=env,
                           timeout=300)
    finally:
        os.umask(old)
    check(r.returncode == 0, r.stderr)
    path = os.path.join(out, "perfctr-%s.tar.gz" % version())
    check(os.path.isfile(path), r.stdout)
    return path


@case
def dist_is_reproducible_and_holds_the_commit():
    require_git()
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        first = make_dist(a)
        second = make_dist(b, umask=0o077, tz="America/Los_Angeles")
        with open(first, "rb") as f1, open(second, "rb") as f2:
            check(f1.read() == f2.read(), "two make dist differ")
        epoch = int(subprocess.run(["git", "-C", TOP, "log", "-1", "--format=%ct"],
                                   capture_output=True, text=True).stdout)
        files = subprocess.run(["git", "-C", TOP, "ls-tree", "-r", "--name-only",
                                "-z", "HEAD"], capture_output=True, text=True)
        want = {p for p in files.stdout.split("\0") if p}
        prefix = "perfctr-%s/" % version()
        with tarfile.open(first) as t:
            members = t.getmembers()
        names = [m.name for m in members]
        check(names == sorted(names), "not in name order")
        check(all(m.name == prefix.rstrip("/") or m.name.startswith(prefix)
                  for m in members), "outside %s" % prefix)
        odd = [m.name for m in members if m.uid or m.gid or m.uname or m.gname
               or m.mtime != epoch or m.mode & 0o022]
        check(not odd, "owners, times or modes not fixed: %s" % odd[:5])
        have = {m.name[len(prefix):] for m in members if m.isfile() or m.issym()}
        check(have - {".dist-commit"} == want,
              "not the commit's files: extra %s, missing %s"
              % (sorted(have - want)[:5], sorted(want - have)[:5]))


@case
def distcheck_builds_and_installs_from_the_tarball():
    require_git()
    if os.environ.get("SANITIZE"):
        skip("the plain build covers it; distcheck builds without a sanitizer")
    if os.geteuid() != 0:
        skip("installcheck's counts need root (euid is %d)" % os.geteuid())
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, PMU_EVENTS_SRC="/nonexistent")
        env.pop("MAKEFLAGS", None)
        r = subprocess.run(["make", "-s", "-C", TOP, "O=" + out, "distcheck",
                            "DISTCHECK_TARGETS=check-unit"],
                           capture_output=True, text=True, env=env,
                           timeout=1200)
        text = r.stdout + r.stderr
        check(r.returncode == 0, text[-3000:])
        check(re.search(r"^\d+ passed, 0 failed", text, re.M), text[-3000:])
        check("FAIL" not in text, text[-3000:])
        check("perfctr-%s.tar.gz is ready" % version() in text, text[-2000:])


run_cases()
