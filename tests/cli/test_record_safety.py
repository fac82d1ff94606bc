# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex record never loses what it wrote: a recording killed at any moment
reads back (recovered, with a warning) up to what reached the file; a full
file system stops the writing with the samples kept and dropped counted and
a readable file; the output path is never a symbolic link followed or a
FIFO written into."""
import json
import os
import random
import re
import subprocess
import tempfile
import time

from pctest import (EXIT, PERFEX, case, check, perfex, require_root,
                    require_tracefs, run_cases, skip, work)
from sampletools import (TP, cleanup, kill_recording, perf_report,
                         progress_of, record, report_json, require_perf,
                         tmpfile)

PAGE = os.sysconf("SC_PAGE_SIZE")
RECOVERED = re.compile(r"unfinished .*recovered (\d+) records, (\d+) bytes")


def need_tp():
    require_root()
    require_tracefs()


def kill_recording_at(target, pages, calls, out, progress):
    """Record -c 1 of CALLS getppid (pinned to CPU 0: one ring gets every
    sample) and SIGKILL perfex once the workload has made TARGET calls.
    The workload is stopped first, so that its count is what the kernel
    was asked to sample when the recorder died.  Returns that count.

    The recorder runs on CPU 0 too, at a real-time priority, the
    workload at an ordinary one: the ring's wake-up (a quarter full)
    lets the recorder in at once and the workload waits while it reads,
    so the ring never fills.  A recorder starved by a loaded machine
    would let it fill, and the kernel drops samples then whose loss it
    reports only once the reader frees space: a recorder killed before
    that leaves them counted nowhere, a shortfall with no bound."""
    def reached():
        st = progress_of(progress)
        return st and st[0] >= target
    kill_recording(["taskset", "-c", "0", "chrt", "-f", "1",
                    PERFEX, "record", "-q", "-o", out, "-e", TP, "-c", "1",
                    "-m", str(pages), "--", "chrt", "-o", "0",
                    "taskset", "-c", "0", work(), "counted", progress,
                    str(calls)],
                   reached, fresh=(out, progress), timeout=300, stop=True)
    return progress_of(progress)[0]


@case
def killed_recordings_are_recovered():
    """SIGKILL at 20 random points of a recording of 2M getppid, one
    sample each.  Every file reads, with the warning, and holds the
    samples the kernel wrote before the kill but for at most the records
    the recorder had not yet written out: those left in the ring (at most
    one ring) and those of the pass over the ring in progress, read but not
    flushed (at most one ring more).  Nothing is invented: never more
    samples than calls (+1: the one in progress when the task stopped)."""
    need_tp()
    calls = 2000000
    pages = 256
    seed = int(os.environ.get("PCTEST_SEED", time.time()))
    rnd = random.Random(seed)
    out = tmpfile("killed.data")
    progress = tmpfile("progress")
    shortfalls = []
    for i in range(20):
        target = rnd.randrange(0, calls)
        done = kill_recording_at(target, pages, calls, out, progress)
        r = perfex("report", "-i", out, "-j")
        check(r.returncode == 0, (seed, target, r.stderr))
        m = RECOVERED.search(r.stderr)
        check(m, "no recovery warning (seed %d, at %d): %s" %
              (seed, target, r.stderr))
        rep = json.loads(r.stdout)
        samples = rep["samples"]
        # Samples the kernel dropped when the ring was full (a reader
        # starved on a loaded machine) are in the file as lost records:
        # counted, not missing.
        lost = rep["lost"] + rep["lost_samples"]
        records, nbytes = int(m.group(1)), int(m.group(2))
        # A sample of this event is 64 bytes; the ring holds this many.
        ring_samples = pages * PAGE // 64
        check(samples <= done + 1,
              "more samples than calls: %d > %d (seed %d)" %
              (samples, done, seed))
        check(done - samples - lost <= 2 * ring_samples,
              "%d samples of %d missing (%d reported lost), more than the "
              "bound %d (seed %d)" % (done - samples, done, lost,
                                      2 * ring_samples, seed))
        check(records >= samples and nbytes > 0 or done == 0,
              (records, nbytes, samples))
        shortfalls.append(done - samples - lost)
        # perfex script reads it too (a few times: it is the slow part).
        if i < 3:
            s = perfex("script", "-i", out)
            check(s.returncode == 0, s.stderr)
    if os.environ.get("PCTEST_VERBOSE_SAFETY"):
        print("# seed %d, ring %d samples, shortfalls %s" %
              (seed, pages * PAGE // 64, sorted(shortfalls)))


@case
def perf_reads_a_killed_recording():
    """perf reads an unfinished file of software events up to the last
    flush (no tracepoints: perf needs their formats, written at close)."""
    require_perf()
    out = tmpfile("killed-sw.data")
    ready = tmpfile("ready")
    if os.path.exists(ready):
        os.unlink(ready)
    rec = subprocess.Popen([PERFEX, "record", "-q", "-o", out, "-e",
                            "task-clock", "-c", "100000", "--", work(),
                            "ready", ready, "spin", "5000"],
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not os.path.exists(ready) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(1.0)
    rec.kill()
    rec.wait()
    r = perfex("report", "-i", out, "-j")
    check(r.returncode == 0, r.stderr)
    check(RECOVERED.search(r.stderr), r.stderr)
    ours = json.loads(r.stdout)["samples"]
    check(ours > 0, r.stdout)
    theirs, rows = perf_report(out)
    # perf stops at the header's data size, the last flush: each pass
    # over the rings is flushed, so it has them all.
    check(theirs == ours, (theirs, ours))


class Tmpfs:
    """A tmpfs of SIZE bytes mounted on a directory of our own."""

    def __init__(self, size):
        self.dir = tempfile.mkdtemp(prefix="pc-full-")
        r = subprocess.run(["mount", "-t", "tmpfs", "-o",
                            "size=%d,mode=0755" % size, "pctest", self.dir],
                           capture_output=True, text=True)
        if r.returncode != 0:
            os.rmdir(self.dir)
            skip("cannot mount a tmpfs: " + r.stderr.strip())

    def __enter__(self):
        return self.dir

    def __exit__(self, *exc):
        subprocess.run(["umount", self.dir], check=False)
        os.rmdir(self.dir)


KEPT = re.compile(r"writing stopped: (\d+) samples kept in '[^']*' "
                  r"\((\d+) bytes\), (\d+) dropped")


LOST = re.compile(r"^perfex record: (\d+) samples lost$", re.M)


@case
def full_file_system_keeps_a_readable_file():
    """The file system fills up at random points of a recording (its size
    and a filler file vary): perfex stops writing, says how many samples
    it kept and dropped (and lost, if its rings overflowed), exits with perfex's I/O status,
    and the file holds exactly the kept ones.

    The file system must fill whatever the load.  It holds at most 4 MiB;
    the workload's samples are about 19 MB (64 bytes each), and each ring
    holds 8 MiB (-m 2048).  A sample is lost only when its ring is full,
    that is when 8 MiB are waiting there, which perfex then reads and
    writes: so with or without loss, more than the file system holds is
    written.  A starved reader loses samples (one loaded run lost 91,954
    with 256 KiB rings) but cannot keep the file system from filling."""
    need_tp()
    seed = int(os.environ.get("PCTEST_SEED", time.time()))
    rnd = random.Random(seed)
    n = 300000
    for i in range(6):
        size = rnd.randrange(64, 1024) * 4096
        with Tmpfs(size) as d:
            filler = rnd.randrange(0, size // 2)
            with open(os.path.join(d, "filler"), "wb") as f:
                f.write(b"\0" * filler)
            out = os.path.join(d, "full.data")
            r = perfex("record", "-m", "2048", "-o", out, "-e", TP, "-c", "1",
                       "--", work(), "getppid", str(n))
            what = (seed, size, filler, r.returncode, r.stderr)
            check(r.returncode == EXIT["io"], what)
            check("perfex: cannot write '%s': No space left on device" % out
                  in r.stderr, what)
            m = KEPT.search(r.stderr)
            check(m, what)
            kept, dropped = int(m.group(1)), int(m.group(3))
            check(dropped > 0, what)
            # Lost in the rings (a loaded machine) or not: said only when
            # some were; no sample counted twice.  Recording stops at the
            # full disk, so the workload's later calls make no sample.
            lost = LOST.search(r.stderr)
            lost = int(lost.group(1)) if lost else 0
            check(lost > 0 or "lost" not in r.stderr, what)
            check(kept + dropped + lost <= n + 1, what)
            rep = perfex("report", "-i", out, "-j")
            check(rep.returncode == 0, (seed, size, rep.stderr))
            got = json.loads(rep.stdout)["samples"]
            check(got == kept, "file has %d samples, perfex said %d kept "
                  "(seed %d, size %d, filler %d)" % (got, kept, seed, size,
                                                      filler))


def quick_record(out):
    return perfex("record", "-q", "-o", out, "-e", "task-clock", "--",
                  work(), "getppid", "10")


@case
def existing_output_is_kept_as_old():
    d = tempfile.mkdtemp(prefix="pc-out-")
    out = os.path.join(d, "perf.data")
    with open(out, "w") as f:
        f.write("earlier\n")
    r = quick_record(out)
    check(r.returncode == 0, r.stderr)
    with open(out + ".old") as f:
        check(f.read() == "earlier\n")
    check(os.stat(out).st_mode & 0o777 == 0o600, oct(os.stat(out).st_mode))
    check(report_json(out)["samples"] >= 0)
    # Our own symbolic link is moved as a file would be, never followed.
    target = os.path.join(d, "target")
    with open(target, "w") as f:
        f.write("mine\n")
    os.unlink(out)
    os.symlink(target, out)
    r = quick_record(out)
    check(r.returncode == 0, r.stderr)
    check(os.path.islink(out + ".old"), "the link was not kept")
    check(not os.path.islink(out), "the link is still there")
    with open(target) as f:
        check(f.read() == "mine\n", "the link's target was written")
    subprocess.run(["rm", "-rf", d])


@case
def fifo_and_device_are_refused():
    require_root()
    d = tempfile.mkdtemp(prefix="pc-out-")
    try:
        fifo = os.path.join(d, "fifo.data")
        os.mkfifo(fifo)
        r = quick_record(fifo)
        check(r.returncode == EXIT["io"], (r.returncode, r.stderr))
        check("cannot write '%s': it is a FIFO, not a regular file" % fifo
              in r.stderr, r.stderr)
        check("hint:" in r.stderr, r.stderr)
        check(os.path.exists(fifo) and not os.path.exists(fifo + ".old"))
        dev = os.path.join(d, "null.data")
        os.mknod(dev, 0o666 | 0o020000, os.makedev(1, 3))
        r = quick_record(dev)
        check(r.returncode == EXIT["io"], (r.returncode, r.stderr))
        check("it is a character device" in r.stderr, r.stderr)
        r = quick_record(d)
        check(r.returncode == EXIT["io"] and "a directory" in r.stderr, r.stderr)
    finally:
        subprocess.run(["rm", "-rf", d])


class User:
    """An unprivileged user made for the test, removed after it."""

    def __init__(self):
        require_root()
        self.name = "pcsafe%d" % (os.getpid() % 100000)
        r = subprocess.run(["useradd", "-M", "-N", "-s", "/usr/sbin/nologin",
                            self.name], capture_output=True, text=True)
        if r.returncode != 0:
            skip("useradd failed: " + r.stderr.strip())
        import pwd
        pw = pwd.getpwnam(self.name)
        self.uid, self.gid = pw.pw_uid, pw.pw_gid

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        subprocess.run(["userdel", self.name], capture_output=True)

    def run(self, *args):
        return subprocess.run(list(args), user=self.uid, group=self.gid,
                              capture_output=True, text=True)

    def popen(self, *args):
        return subprocess.Popen(list(args), user=self.uid, group=self.gid,
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)


@case
def other_users_symlink_is_not_followed():
    """An unprivileged user owns a directory root records into and plants
    a link there to a file of root's: refused, target and link intact."""
    with User() as u:
        d = tempfile.mkdtemp(prefix="pc-attack-")
        victim = tempfile.NamedTemporaryFile(prefix="pc-victim-", delete=False)
        victim.write(b"precious\n")
        victim.close()
        try:
            os.chown(d, u.uid, u.gid)
            out = os.path.join(d, "perf.data")
            r = u.run("ln", "-s", victim.name, out)
            check(r.returncode == 0, r.stderr)
            r = quick_record(out)
            check(r.returncode == EXIT["io"], (r.returncode, r.stderr))
            check("is a symbolic link owned by another user" in r.stderr,
                  r.stderr)
            check(os.readlink(out) == victim.name)
            with open(victim.name, "rb") as f:
                check(f.read() == b"precious\n", "the victim was written")
        finally:
            subprocess.run(["rm", "-rf", d])
            os.unlink(victim.name)


@case
def symlink_race_never_redirects_the_output():
    """The user plants the link again and again while root records into
    the directory: each recording either writes a regular file of its
    own or refuses; the link's target is never written."""
    with User() as u:
        d = tempfile.mkdtemp(prefix="pc-race-")
        victim = tempfile.NamedTemporaryFile(prefix="pc-victim-", delete=False)
        victim.write(b"precious\n")
        victim.close()
        attacker = None
        try:
            os.chown(d, u.uid, u.gid)
            out = os.path.join(d, "perf.data")
            script = ("import os\n"
                      "while True:\n"
                      "    for p in (%r, %r):\n"
                      "        try: os.unlink(p)\n"
                      "        except OSError: pass\n"
                      "        try: os.symlink(%r, p)\n"
                      "        except OSError: pass\n" %
                      (out, out + ".old", victim.name))
            attacker = u.popen("python3", "-c", script)
            outcomes = {}
            for i in range(20):
                r = quick_record(out)
                check(r.returncode in (0, EXIT["io"]), (r.returncode, r.stderr))
                outcomes[r.returncode] = outcomes.get(r.returncode, 0) + 1
                with open(victim.name, "rb") as f:
                    check(f.read() == b"precious\n",
                          "the victim was written (run %d)" % i)
        finally:
            if attacker:
                attacker.kill()
                attacker.wait()
            subprocess.run(["rm", "-rf", d])
            os.unlink(victim.name)


if __name__ == "__main__":
    try:
        run_cases()
    finally:
        cleanup()
