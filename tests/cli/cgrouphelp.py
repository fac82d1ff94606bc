# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Cgroups for the CLI tests (perfex -G, perfex record -G): made under the
cgroup2 mount found in /proc/self/mountinfo, workloads moved in through
cgroup.procs before they start, everything removed after."""
import errno
import os
import shutil
import signal
import subprocess
import tempfile
import time

from pctest import check, require_root, skip, work
from stathelp import start_perfex, wait_counting, wait_for


def perf_stat_background(mnt, *args):
    """/usr/bin/perf stat -x, -a ARGS started in the cgroup2 mount (its
    -G names are relative to the current directory), its CSV going to a
    temporary file: (process, file), or None without perf."""
    perf = shutil.which("perf")
    if not perf:
        return None
    out = tempfile.NamedTemporaryFile("r", suffix=".perf")
    p = subprocess.Popen([perf, "stat", "-x,", "-o", out.name, "-a", *args],
                         stderr=subprocess.PIPE, text=True, cwd=mnt)
    return p, out


def perf_output(started):
    """Stop a perf_stat_background() (SIGINT) and return its CSV text."""
    p, out = started
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=30)
    return out.read()


def count_while(members, *args, perf=None):
    """perfex ARGS counting while MEMBERS make their calls once, with
    PERF (perf_stat_background()'s pair, or None) counting beside it:
    perfex's output text once it stopped (SIGINT) with status 0."""
    p, out = start_perfex(*args)
    wait_counting(p.pid)
    if perf:
        wait_counting(perf[0].pid)
    for m in members:
        m.go()
    for m in members:
        m.wait()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    check(p.returncode == 0, err)
    return out.read()


def count_beside_perf(cg, members, args, perf_args=None):
    """`perfex -x, -a ARGS` and, where perf is installed, `perf stat -a
    PERF_ARGS` (ARGS when None) counting while MEMBERS make their calls
    once: (perfex's CSV text, perf) with perf as perf_stat_background()
    gives it.  perf is stopped if perfex fails."""
    perf = perf_stat_background(cg.mnt, *(args if perf_args is None
                                           else perf_args))
    try:
        return count_while(members, "-x,", "-a", *args, perf=perf), perf
    except BaseException:
        if perf and perf[0].poll() is None:
            perf[0].kill()
            perf[0].wait()
        raise


def cgroup2_mount():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            dash = fields.index("-")
            if fields[dash + 1] == "cgroup2" and fields[3] == "/":
                return fields[4].replace("\\040", " ")
    skip("no cgroup2 file system is mounted")


def unique_name(rel):
    """REL with this run's tag on its first component: perfctr-cli-p/c
    becomes perfctr-cli-p-PID/c.  Two runs of the suite at once (two
    worktrees, make check beside make check-stress) then never share a
    cgroup: the other's members in it made a shared one busy (EBUSY on
    rmdir) and its counts wrong.  The pid is unique among the processes
    alive, so a name already there was left by a run that died."""
    first, sep, rest = rel.partition("/")
    tag = "-%d" % os.getpid()
    if first.endswith(tag):
        return rel              # tagged already: a name make() returned
    return first + tag + sep + rest


class Cgroups:
    """Cgroups made under the cgroup2 mount with names of this run's own
    (unique_name()), removed (children first) at close, which callers do
    in a finally: block."""

    def __init__(self):
        require_root()
        self.mnt = cgroup2_mount()
        self.made = []

    def name(self, rel):
        """The relative path make(REL) makes, before it is made."""
        return unique_name(rel)

    def make(self, rel):
        """Make cgroup REL (tagged as name() says); return its relative
        path, which is what perfex -G takes."""
        rel = unique_name(rel)
        path = os.path.join(self.mnt, rel)
        if os.path.isdir(path):
            os.rmdir(path)          # left by a dead run with our pid
        try:
            os.mkdir(path)
        except OSError as e:
            skip("cannot make a cgroup under %s: %s" % (self.mnt, e))
        self.made.append(path)
        return rel

    def remove(self, rel):
        """Remove cgroup REL, made by make(), now."""
        path = os.path.join(self.mnt, rel)
        os.rmdir(path)
        self.made.remove(path)

    def close(self):
        """Remove what make() made, children first.  A member reaped a
        moment ago may still hold its cgroup busy (EBUSY): tried again
        for up to 2 s."""
        for path in reversed(self.made):
            for _ in range(200):
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError as e:
                    if e.errno != errno.EBUSY:
                        break
                    time.sleep(0.01)
        self.made = []


class Member:
    """pcwork moved into cgroup REL before it starts (and onto CPU cpu when
    given); it makes AFTER getppid calls once released."""

    def __init__(self, cg, rel, after, cpu=None):
        self.dir = tempfile.mkdtemp()
        ready = os.path.join(self.dir, "ready")
        procs = os.path.join(cg.mnt, rel, "cgroup.procs")

        def enter():
            if cpu is not None:
                os.sched_setaffinity(0, {cpu})
            with open(procs, "w") as f:
                f.write("0\n")
        self.p = subprocess.Popen([work(), "ready", ready, "wait", "getppid",
                                   str(after)], stdin=subprocess.PIPE,
                                  text=True, preexec_fn=enter)
        self.pid = self.p.pid
        try:
            wait_for(lambda: os.path.exists(ready), what="the workload")
        except BaseException:
            self.close()    # it would keep its cgroup busy
            raise

    def go(self):
        self.p.stdin.write("go\n")
        self.p.stdin.close()

    def wait(self):
        check(self.p.wait(timeout=60) == 0)

    def close(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
