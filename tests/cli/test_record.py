# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex record: exact sample counts from tracepoints, the right tids and
cpus, targets already running (-p, -t), CPU lists, signals (SIGINT finishes
a valid file, SIGUSR2 snapshots), overwrite rings, option errors, and
perf's own tools reading what we write."""
import os
import re
import signal
import subprocess
import time

from pctest import (EXIT, PERFEX, case, check, perfex, require_root,
                    require_tracefs, run_cases, skip, work)
from sampletools import (TP, children, cleanup, perf_record, perf_report,
                         perf_script_count, record, report_json, require_perf,
                         script_lines, script_pid_tids, spin_args, tmpfile,
                         top_row)
from stathelp import getppid_baseline, wait_counting, wait_for


def need_tp():
    require_root()
    require_tracefs()


@case
def every_e_adds_its_events_and_its_filter():
    """-e A -e B samples both, as perf's repeated -e does (perfex record
    kept only the last one), and a --filter binds to the -e before it:
    A's filter, which no task passes, leaves B's samples whole."""
    require_tracefs()
    enter_getpid = "syscalls:sys_enter_getpid"
    out = tmpfile("two-e.data")
    # One CPU (taskset): -c 1 is then exact, whatever the scheduler does.
    r = record(out, "-e", TP, "-e", enter_getpid, "-c", "1", "--",
               "taskset", "-c", "0", work(), "getppid", "50", "getpid", "30")
    check(r.returncode == 0, r.stderr)
    got = {e["event"]: e["samples"] for e in report_json(out)["events"]}
    base = getppid_baseline()
    check(got.get(TP) == 50 + base and got.get(enter_getpid, 0) >= 30, got)
    r = record(out, "-e", TP, "--filter", "common_pid == 1", "-e",
               enter_getpid, "-c", "1", "--", "taskset", "-c", "0", work(),
               "getppid", "50", "getpid", "30")
    check(r.returncode == 0, r.stderr)
    got = {e["event"]: e["samples"] for e in report_json(out)["events"]}
    check(got.get(TP, 0) == 0 and got.get(enter_getpid, 0) >= 30, got)


@case
def tracepoint_period_gives_exact_samples_and_tids():
    need_tp()
    out = tmpfile("exact.data")
    n = 1000
    # Pinned: the default mode has one event per CPU, each with its own
    # period count; a task that migrates splits N between them and may
    # lose one sample to each CPU's remainder.
    r = record(out, "-e", TP, "-c", "100", "--", "taskset", "-c", "0", work(),
               "pid", "getppid", str(n))
    check(r.returncode == 0, r.stderr)
    pid = int(r.stdout.split()[0])
    rep = report_json(out)
    check(rep["samples"] == n // 100, rep)
    ev = rep["events"][0]
    check(ev["event"] == TP, ev)
    # Kernel-facts item 2: the period must not turn into "every event".
    check(ev["samples"] == n // 100 and ev["period"] == n, ev)
    check(rep["lost"] == 0 and rep["lost_samples"] == 0, rep)
    lines = script_lines(out)
    check(len(lines) == n // 100, len(lines))
    check(set(script_pid_tids(lines)) == {(pid, pid)}, set(script_pid_tids(lines)))


@case
def threads_have_their_own_tids():
    need_tp()
    out = tmpfile("threads.data")
    # Threads sample through events inherited at clone.  Every call is a
    # sample (-c 1): with a longer period the counts would not be exact,
    # as the kernel swaps the equivalent inherited contexts of a thread
    # and its siblings or parent when they take turns on a CPU, and the
    # period counts go with them (a thread then gets 9 or 11 of 10, with
    # nothing lost).  3000 samples fit in the ring even undrained.
    r = record(out, "-e", TP, "-c", "1", "--", "taskset", "-c", "0", work(),
               "pid", "threads", "3", "1000")
    check(r.returncode == 0, r.stderr)
    pid = int(r.stdout.split()[0])
    tids = {}
    # Only the workload's: sanitizer runtimes fork helpers that call
    # getppid too.
    for p, t in script_pid_tids(script_lines(out)):
        if p == pid:
            tids[t] = tids.get(t, 0) + 1
    check(len(tids) == 3 and all(v == 1000 for v in tids.values()),
          (tids, r.stderr, report_json(out)["lost"]))
    # Three threads, none of them the main thread.
    check(pid not in tids, tids)
    rep = report_json(out, "--sort", "tid")
    check({int(r["tid"]): r["samples"] for r in rep["events"][0]["rows"]
           if int(r["tid"]) in tids} == tids, rep)


def samples_by_cpu(path, pid):
    """{cpu: samples} of process @pid in the file (a sanitizer runtime's
    helpers, which call getppid too, are other processes)."""
    cpus = {}
    for l in script_lines(path):
        m = re.search(r"\s(\d+)/\d+\s+\[(\d+)\]", l)
        check(m, "no pid/tid and cpu in: " + l)
        if int(m.group(1)) == pid:
            cpus[int(m.group(2))] = cpus.get(int(m.group(2)), 0) + 1
    return cpus


@case
def period_counts_per_cpu_unless_no_inherit():
    need_tp()
    if not {0, 1} <= os.sched_getaffinity(0):
        skip("CPUs 0 and 1 are not both in this process's affinity mask")
    out = tmpfile("percpu.data")
    # The workload moves itself from CPU 0 to CPU 1 after 5050 calls.
    # By default one event per CPU follows it, each counting towards its
    # own next sample: 50 samples and 50 calls left over on CPU 0, 49 and
    # 50 on CPU 1.  With --no-inherit one event follows the thread.
    for flags, want in (((), {0: 50, 1: 49}),
                        (("--no-inherit",), {0: 50, 1: 50})):
        r = record(out, *flags, "-e", TP, "-c", "100", "--", work(), "pid",
                   "cpu", "0", "getppid", "5050", "cpu", "1", "getppid",
                   "4950")
        check(r.returncode == 0, r.stderr)
        got = samples_by_cpu(out, int(r.stdout.split()[0]))
        check(got == want, (flags, got, want))


@case
def no_inherit_leaves_children_out():
    need_tp()
    out = tmpfile("noinherit.data")
    # The child's 100 calls by default, nothing of any other process
    # with --no-inherit (under a sanitizer its runtime's helper processes
    # call getppid too: they are left out as well).
    for flags, inherit in (((), True), (("--no-inherit",), False)):
        r = record(out, *flags, "-e", TP, "--", work(), "pid", "fork", "1",
                   "100")
        check(r.returncode == 0, r.stderr)
        pid = int(r.stdout.split()[0])
        others = {}
        for p, _ in script_pid_tids(script_lines(out)):
            if p != pid:
                others[p] = others.get(p, 0) + 1
        if inherit:
            check(list(others.values()).count(100) == 1, (flags, others))
        else:
            check(not others, (flags, others))


@case
def cpu_list_records_the_cpu():
    need_tp()
    out = tmpfile("cpu.data")
    # Other tasks on CPU 0 may call getppid too (thousands on a busy
    # machine): a large ring keeps them from crowding ours out.
    r = record(out, "-C", "0", "-m", "1024", "-e", TP, "-c", "1", "--",
               "taskset", "-c", "0", work(), "pid", "getppid", "500")
    check(r.returncode == 0, r.stderr)
    pid = int(r.stdout.split()[0])
    lines = script_lines(out)
    mine = [l for l in lines if re.search(r"\s%d/%d\s" % (pid, pid), l)]
    rep = report_json(out)
    lost = rep["lost"] + rep["lost_samples"]
    # Ours are exact when nothing was lost; when the ring still
    # overflowed, only that none are extra and the lost cover the gap.
    if lost == 0:
        check(len(mine) == 500, len(mine))
    else:
        check(len(mine) <= 500 and len(mine) + lost >= 500,
              (len(mine), lost, rep))
    check(all("[000]" in l for l in lines), [l for l in lines if "[000]" not in l][:3])


@case
def system_wide_sees_the_command():
    need_tp()
    out = tmpfile("all.data")
    r = record(out, "-a", "-e", TP, "-c", "1", "--", work(), "pid", "getppid", "300")
    check(r.returncode == 0, r.stderr)
    pid = int(r.stdout.split()[0])
    mine = [x for x in script_pid_tids(script_lines(out)) if x[0] == pid]
    # Other processes' getppid calls share the rings (system-wide): when
    # they overflowed one, ours are only bounded by what was lost.
    rep = report_json(out)
    lost = rep["lost"] + rep["lost_samples"]
    if lost == 0:
        check(len(mine) == 300, len(mine))
    else:
        check(len(mine) <= 300 and len(mine) + lost >= 300, (len(mine), lost))


def allowed_cpus(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Cpus_allowed_list:"):
                return line.split(":", 1)[1].strip()
    return None


def record_pinned_waiting(out, cpu, n, preexec=None):
    """perfex record of `taskset -c CPU pcwork pid wait getppid N`; returns
    (perfex process, workload pid) with the workload blocked on stdin."""
    p = subprocess.Popen([PERFEX, "record", "-q", "-o", out, "-e", TP, "-c", "1",
                          "--", "taskset", "-c", str(cpu), work(), "pid", "wait",
                          "getppid", str(n)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, preexec_fn=preexec)
    line = p.stdout.readline()
    if not line:
        o, e = p.communicate(timeout=30)
        check(False, "record did not start: " + e)
    return p, int(line)


def finish(p):
    o, e = p.communicate("go\n", timeout=60)
    check(p.returncode == 0, e)


@case
def reader_joins_the_cpu_of_a_pinned_command():
    need_tp()
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        skip("needs 2 CPUs to choose from, this process may use %s" % cpus)
    cpu, other = cpus[-1], cpus[0]
    n = 1000
    # The command pins itself (taskset execs the program): the reader
    # moves onto that CPU, within 100 ms of the pinning.
    out = tmpfile("follow.data")
    p, pid = record_pinned_waiting(out, cpu, n)
    try:
        end = time.time() + 10
        while allowed_cpus(p.pid) != str(cpu) and time.time() < end:
            time.sleep(0.01)
        check(allowed_cpus(p.pid) == str(cpu), (allowed_cpus(p.pid), cpu))
        # Only perfex moved: the command keeps its own setting.
        check(allowed_cpus(pid) == str(cpu), allowed_cpus(pid))
        finish(p)
    finally:
        if p.poll() is None:
            p.kill()
    # Recorded exactly (the sanitizer runtime adds getppid calls of its
    # own: count the loop's, from libc's syscall()).  Whether the reader
    # keeps up with a long -c 1 loop depends on the load: bench/, not here.
    rep = report_json(out)
    mine = sum(r["samples"] for r in rep["events"][0]["rows"]
               if r["sym"] == "syscall")
    check(mine == n and rep["lost"] == 0, rep)

    # perfex started on other CPUs than the command's stays where the
    # user put it.
    out = tmpfile("nofollow.data")
    p, pid = record_pinned_waiting(
        out, cpu, 10, preexec=lambda: os.sched_setaffinity(0, {other}))
    try:
        time.sleep(0.3)
        check(allowed_cpus(p.pid) == str(other), (allowed_cpus(p.pid), other))
        finish(p)
    finally:
        if p.poll() is None:
            p.kill()


def start_waiting_workload(*extra):
    """pcwork blocked on stdin, then extra commands once released; pinned
    to one CPU, since -p samples per CPU and each CPU's events count
    their own periods (a thread that moved would split its count)."""
    cpu = min(os.sched_getaffinity(0))
    p = subprocess.Popen(["taskset", "-c", str(cpu), work(), "wait", *extra],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    # Attach to pcwork, not to taskset before its exec, and once it is
    # blocked reading stdin: its libraries are mapped then, so the maps
    # perfex reads from /proc name libc (the comm changes at the exec,
    # before ld.so maps anything).
    def blocked():
        try:
            with open("/proc/%d/comm" % p.pid) as f:
                comm = f.read().strip()
            with open("/proc/%d/wchan" % p.pid) as f:
                wchan = f.read()
        except OSError:
            return False
        return comm == "pcwork" and "pipe_read" in wchan
    wait_for(lambda: blocked() or p.poll() is not None,
             what="pcwork to wait on its stdin")
    return p


def wait_for_file(path, proc, limit=10.0):
    end = time.time() + limit
    while time.time() < end:
        if os.path.exists(path) and os.path.getsize(path) >= 0:
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.01)
    return False


def attach_and_count(flag, *workload, period="10"):
    need_tp()
    out = tmpfile("attach%s.data" % flag)
    if os.path.exists(out):
        os.unlink(out)
    w = start_waiting_workload(*workload)
    try:
        rec = subprocess.Popen([PERFEX, "record", "-q", "-o", out, flag, str(w.pid),
                                "-e", TP, "-c", period], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        started = wait_for_file(out, rec)
        if not started:
            o, e = rec.communicate(timeout=30)
            check(False, "perfex record did not start: " + e)
        # The file is made before the events are enabled (and before the
        # maps are read from /proc): a workload released then could make
        # its first calls unrecorded, however long a fixed sleep.  perfex
        # waits in poll() only once every event is enabled.
        wait_counting(rec.pid)
        w.communicate("go\n", timeout=30)
        # The target's exit hangs up every ring: record ends by itself.
        o, e = rec.communicate(timeout=30)
        check(rec.returncode == 0, e)
    finally:
        if w.poll() is None:
            w.kill()
        if rec.poll() is None:
            rec.kill()
    return out, w.pid


@case
def attach_to_running_process():
    out, pid = attach_and_count("-p", "getppid", "1000")
    rep = report_json(out)
    check(rep["samples"] == 100, rep)
    rows = rep["events"][0]["rows"]
    # The COMM and MMAP2 records were synthesised from /proc.
    check(rows[0]["comm"] == "pcwork", rows[0])
    check(rows[0]["dso"].endswith("libc.so.6"), rows[0])
    check(set(script_pid_tids(script_lines(out))) == {(pid, pid)})


@case
def attach_follows_threads_started_later():
    # Two threads started after the attach inherit the events: each of
    # them exactly 1000 samples, none of the main thread.  Every call a
    # sample (see threads_have_their_own_tids: with a longer period the
    # kernel's context swaps between a thread and its parent make the
    # counts inexact).
    out, pid = attach_and_count("-p", "threads", "2", "1000", period="1")
    tids = {}
    # Only the workload's: sanitizer runtimes fork helpers that call
    # getppid too (inherit follows children).
    for p, t in script_pid_tids(script_lines(out)):
        if p == pid:
            tids[t] = tids.get(t, 0) + 1
    check(len(tids) == 2 and pid not in tids, tids)
    check(all(v == 1000 for v in tids.values()), tids)
    rep = report_json(out)
    check(rep["lost"] == 0, rep)


@case
def attach_to_running_thread():
    out, pid = attach_and_count("-t", "getppid", "500")
    rep = report_json(out)
    check(rep["samples"] == 50, rep)


def record_filtered_on_cpus(name, *target):
    """perfex record TARGET of the getppid tracepoint filtered on the pid
    of a waiting, pinned workload: the command given to record releases
    the workload (through its stdin) and waits for it to end, so the
    events are enabled before the first call and still enabled after the
    last (-a and -C enable before the command is let go)."""
    need_tp()
    n = 400
    out = tmpfile(name)
    w = start_waiting_workload("getppid", str(n))
    release = ("import os, select; p = os.pidfd_open(%d); "
               "fd = os.open('/proc/%d/fd/0', os.O_WRONLY); "
               "os.write(fd, b'go\\n'); select.select([p], [], [])"
               % (w.pid, w.pid))
    try:
        r = record(out, *target, "-e", TP, "-c", "1", "--filter",
                   "common_pid == %d" % w.pid, "--", "python3", "-c", release)
        check(r.returncode == 0, r.stderr)
    finally:
        if w.poll() is None:
            w.kill()
        w.wait()
    rep = report_json(out)
    check(rep["lost"] == 0 and rep["lost_samples"] == 0, rep)
    lines = script_lines(out)
    check(set(script_pid_tids(lines)) == {(w.pid, w.pid)},
          set(script_pid_tids(lines)))
    check(len(lines) == n and rep["samples"] == n, (len(lines), rep))
    return lines


@case
def system_wide_with_a_pid_filter_is_exact():
    record_filtered_on_cpus("allfilter.data", "-a")


@case
def cpu_list_with_a_pid_filter_is_exact():
    cpu = min(os.sched_getaffinity(0))   # where the workload is pinned
    lines = record_filtered_on_cpus("cpufilter.data", "-C", str(cpu))
    check(all("[%03d]" % cpu in l for l in lines),
          [l for l in lines if "[%03d]" % cpu not in l][:3])


@case
def filter_errors():
    need_tp()
    r = perfex("record", "-q", "-o", tmpfile("f.data"), "--filter",
               "common_pid == 1", "-e", TP, "--", "true")
    check(r.returncode == EXIT["usage"] and "needs an -e before it" in r.stderr, r)
    r = perfex("record", "-q", "-o", tmpfile("f.data"), "-e", TP,
               "--filter", "no_such_field == 1", "--", "true")
    check(r.returncode == EXIT["event"] and "tracepoint filter" in r.stderr, r)


@case
def sigint_leaves_a_valid_file():
    require_root()
    out = tmpfile("sigint.data")
    ready = tmpfile("sigint.ready")
    if os.path.exists(ready):
        os.unlink(ready)
    p = subprocess.Popen([PERFEX, "record", "-o", out, "-e", "cpu-clock",
                          "-F", "1000", "--", work(), "ready", ready, "spin",
                          "20000"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    # Stopped once the workload, recorded from its exec, has spun 100 ms
    # of CPU time (about 100 samples at 1000 Hz), however long a loaded
    # machine takes to give it that.
    def spun():
        kids = children(p.pid)
        if not os.path.exists(ready) or not kids:
            return False
        try:
            with open("/proc/%d/stat" % kids[0]) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            return False
        ticks = int(fields[11]) + int(fields[12])      # utime + stime
        return ticks >= os.sysconf("SC_CLK_TCK") // 10
    wait_for(spun, timeout=120, what="the workload to spin 100 ms")
    t0 = time.time()
    p.send_signal(signal.SIGINT)
    o, e = p.communicate(timeout=30)
    check(time.time() - t0 < 5, "record took too long to stop")
    check(p.returncode == 0, e)
    check("interrupted" in e and "samples lost" in e, e)
    rep = report_json(out)
    check(rep["samples"] > 10, rep)
    check(top_row(rep)["sym"] == "spin_loop", top_row(rep))
    require_perf()
    samples, rows = perf_report(out)
    check(samples == rep["samples"], (samples, rep["samples"]))


def snapshot_once(out, flag, *workload, frozen=False):
    """perfex record --snapshot of `taskset -c 0 pcwork WORKLOAD` on a
    one-page ring: SIGUSR2 once the workload has made FLAG, then SIGINT
    (FROZEN: both sent while perfex is stopped, so that it finds them
    pending together).  Returns its stdout and stderr (the record must
    succeed)."""
    p = subprocess.Popen([PERFEX, "record", "-q", "-o", out, "--snapshot", "-m", "1",
                          "-e", TP, "-c", "1", "--", "taskset", "-c", "0", work(),
                          *workload],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        end = time.time() + 20
        while not os.path.exists(flag) and time.time() < end and p.poll() is None:
            time.sleep(0.01)
        if p.poll() is not None:
            o, e = p.communicate()
            check(False, "record ended early: " + e)
        if frozen:
            p.send_signal(signal.SIGSTOP)
        # A snapshot asked for before the stop is written whenever perfex
        # gets to them: no pause between the two.
        p.send_signal(signal.SIGUSR2)
        p.send_signal(signal.SIGINT)
        if frozen:
            p.send_signal(signal.SIGCONT)
        o, e = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    check(p.returncode == 0, e)
    return o, e


@case
def snapshot_on_sigusr2_keeps_the_newest():
    need_tp()
    out = tmpfile("snap.data")
    flag = tmpfile("snap.flag")
    # A thread makes 20000 calls first, the main thread 2000 last; one CPU
    # so one ring: the window holds only the newest, the main thread's.
    o, e = snapshot_once(out, flag, "pid", "threads", "1", "20000", "getppid", "2000",
                         "ready", flag, "sleep", "5000")
    pid = int(o.split()[0])
    # Only the workload's own samples: sanitizer runtimes fork helpers
    # that call getppid too.
    ids = [x for x in script_pid_tids(script_lines(out)) if x[0] == pid]
    # One data page holds a few dozen samples, far fewer than 22000.
    check(0 < len(ids) < 2000, len(ids))
    check(set(ids) == {(pid, pid)}, set(ids))


@case
def snapshot_asked_before_a_stop_is_written():
    """SIGUSR2 and SIGINT pending at once (a perfex that was not scheduled
    between them): the snapshot is written before the stop."""
    need_tp()
    out = tmpfile("snap-stop.data")
    flag = tmpfile("snap-stop.flag")
    o, e = snapshot_once(out, flag, "pid", "getppid", "2000", "ready", flag,
                         "sleep", "5000", frozen=True)
    pid = int(o.split()[0])
    ids = [x for x in script_pid_tids(script_lines(out)) if x[0] == pid]
    check(0 < len(ids) < 2000, (len(ids), e))


@case
def overwrite_writes_the_last_window():
    need_tp()
    out = tmpfile("over.data")
    r = record(out, "--overwrite", "-m", "1", "-e", TP, "-c", "1", "--",
               "taskset", "-c", "0", work(), "pid", "threads", "1", "5000",
               "getppid", "3000")
    check(r.returncode == 0, r.stderr)
    pid = int(r.stdout.split()[0])
    ids = [x for x in script_pid_tids(script_lines(out)) if x[0] == pid]
    check(0 < len(ids) < 3000, len(ids))
    check(set(ids) == {(pid, pid)}, set(ids))
    # The tracking event that carried COMM/MMAP2 has no samples: the
    # report shows the user's event only.
    events = [e["event"] for e in report_json(out)["events"]]
    check(events == [TP], events)
    r = perfex("report", "-i", out)
    check("'dummy'" not in r.stdout, r.stdout[:600])


def only_symbolised_rows(out, comm):
    """Every sample of the file in libc's syscall() under @comm: the
    samples' COMM and MMAP2 (and FORK) records reached the file."""
    rep = report_json(out)
    rows = rep["events"][0]["rows"]
    check(rep["samples"] > 0, rep)
    # The sanitizer runtime's own getppid calls, if any in the window,
    # are in its library; none may be unresolved or under another name.
    check(all(r["comm"] == comm for r in rows), rows)
    check(all(r["dso"] != "[unknown]" for r in rows), rows)
    top = top_row(rep)
    check(top["dso"].endswith("libc.so.6") and top["sym"] == "syscall", rows)
    return rep


def perf_sees_sideband(out, pid, what):
    """perf script (when installed) lists the side-band records @what
    (regular expressions) of @pid."""
    if not os.access("/usr/bin/perf", os.X_OK):
        return
    r = subprocess.run(["/usr/bin/perf", "script", "-i", out, "--show-mmap-events",
                        "--show-task-events"], capture_output=True, text=True)
    check(r.returncode == 0, r.stderr)
    for w in what:
        check(re.search(w % {"pid": pid}, r.stdout), (w, r.stdout[-3000:]))


@case
def overwrite_keeps_the_records_of_an_exec():
    need_tp()
    out = tmpfile("over-exec.data")
    # A thread's 5000 calls wrap the one-page overwrite ring many times;
    # then the program execs itself (execv of /proc/self/exe: its comm
    # becomes "exe") and makes 3000 calls, which wrap the ring again over
    # the COMM and MMAP2 records of the exec.  The tracking ring keeps
    # them; the process is gone when the window is written, so /proc
    # cannot stand in for them.
    r = record(out, "--overwrite", "-m", "1", "-e", TP, "-c", "1", "--",
               "taskset", "-c", "0", work(), "pid", "threads", "1", "5000",
               "exec", "getppid", "3000")
    check(r.returncode == 0, r.stderr)
    pid = int(r.stdout.split()[0])
    rep = only_symbolised_rows(out, "exe")
    check(rep["samples"] < 3000, rep)
    perf_sees_sideband(out, pid, [r"PERF_RECORD_COMM exec: exe:%(pid)d/%(pid)d",
                                  r"exe +%(pid)d .*PERF_RECORD_MMAP2 .*libc\.so\.6"])


@case
def snapshot_keeps_the_records_of_a_fork():
    need_tp()
    out = tmpfile("snap-fork.data")
    flag = tmpfile("snap-fork.flag")
    # The window holds the last calls of a child that has exited by the
    # time of the snapshot: its samples are symbolised only through the
    # FORK record (the child's maps are its parent's), which 5000 earlier
    # samples and its own 3000 wrapped over in the overwrite ring.
    o, e = snapshot_once(out, flag, "pid", "threads", "1", "5000", "fork", "1", "3000",
                         "ready", flag, "sleep", "5000")
    pid = int(o.split()[0])
    only_symbolised_rows(out, "pcwork")
    # Every sample is the child's.
    ids = script_pid_tids(script_lines(out))
    check(ids and all(x[0] != pid and x[0] == x[1] for x in ids), set(ids))
    perf_sees_sideband(out, pid, [r"PERF_RECORD_FORK\(\d+:\d+\):\(%(pid)d:%(pid)d\)"])


@case
def default_event_is_announced():
    require_root()
    out = tmpfile("default.data")
    r = perfex("record", "-o", out, "--", work(), "spin", "100")
    check(r.returncode == 0, r.stderr)
    if "no hardware 'cycles'" in r.stderr:
        check("cpu-clock" in r.stderr, r.stderr)
        ev = "cpu-clock"
    else:
        ev = "cycles"
    rep = report_json(out)
    check(rep["events"][0]["event"] == ev, rep)
    check(re.search(r"\d+ samples lost", r.stderr), r.stderr)


@case
def callgraph_and_perf_tools_read_our_file():
    require_root()
    require_perf()
    out = tmpfile("ours.data")
    r = record(out, "-g", "-e", "cpu-clock", "-F", "2000", "--", *spin_args())
    check(r.returncode == 0, r.stderr)
    rep = report_json(out)
    check(rep["samples"] > 20, rep)
    check(top_row(rep)["sym"] == "spin_loop", top_row(rep))
    samples, rows = perf_report(out)
    check(samples == rep["samples"], (samples, rep["samples"]))
    check(rows and rows[0][3] == "spin_loop", rows[:3])
    check(perf_script_count(out) == rep["samples"])
    # The build-id of the workload is in the file, as perf reads it.
    b = subprocess.run(["/usr/bin/perf", "buildid-list", "-i", out],
                       capture_output=True, text=True)
    check(b.returncode == 0 and "pcwork" in b.stdout, b.stdout + b.stderr)


@case
def callgraph_dwarf_records_regs_and_stack():
    require_root()
    require_perf()
    out = tmpfile("dwarf.data")
    r = record(out, "--call-graph", "dwarf,4000", "-e", "cpu-clock", "-F",
               "500", "--", *spin_args())
    check(r.returncode == 0, r.stderr)
    # perf's reading of the attr: what it would have asked for itself.
    e = subprocess.run(["/usr/bin/perf", "evlist", "-v", "-i", out],
                       capture_output=True, text=True)
    check(e.returncode == 0, e.stderr)
    ev = e.stdout.splitlines()[0]
    check(re.search(r"sample_type: [^,]*CALLCHAIN[^,]*REGS_USER\|STACK_USER", ev), ev)
    check("exclude_callchain_user: 1" in ev, ev)
    check("sample_stack_user: 4000" in ev, ev)
    mask = re.search(r"sample_regs_user: (0x[0-9a-f]+)", ev)
    check(mask, ev)
    if os.uname().machine == "x86_64":
        check(mask.group(1) == "0xff0fff", ev)
    elif os.uname().machine == "aarch64":
        check(mask.group(1) == "0x1ffffffff", ev)
    # perf unwinds our samples: the spin loop has its callers.
    s = subprocess.run(["/usr/bin/perf", "script", "-i", out],
                       capture_output=True, text=True, timeout=120)
    check(s.returncode == 0, s.stderr[-2000:])
    check(re.search(r"spin_loop.*\n.*\n(.*\n)*.*main", s.stdout), s.stdout[:3000])
    # -g and --call-graph fp: frame pointers, no stack copy.
    for args in (["-g"], ["--call-graph", "fp"]):
        r = record(out, *args, "-e", "cpu-clock", "--", work(), "spin", "50")
        check(r.returncode == 0, r.stderr)
        e = subprocess.run(["/usr/bin/perf", "evlist", "-v", "-i", out],
                           capture_output=True, text=True)
        ev = e.stdout.splitlines()[0]
        check("CALLCHAIN" in ev and "STACK_USER" not in ev, (args, ev))


@case
def callgraph_mode_errors():
    rows = [
        ("bogus", "expects fp or dwarf[,SIZE] (not 'bogus')"),
        ("dwarfx", "expects fp or dwarf"),
        ("dwarf,0", "expects a stack size in bytes after 'dwarf,' (not '0')"),
        ("dwarf,-8", "expects a stack size"),
        ("dwarf,65536", "expects a stack size of at most 65528 bytes"),
        ("dwarf,18446744073709551615", "expects a stack size of at most"),
    ]
    for arg, msg in rows:
        r = perfex("record", "--call-graph", arg, "--", "true")
        check(r.returncode == EXIT["usage"], (arg, r.returncode, r.stderr))
        check("option '--call-graph' " + msg in r.stderr, (arg, r.stderr))
    r = perfex("record", "--call-graph")
    check(r.returncode == EXIT["usage"] and "needs an argument" in r.stderr, r.stderr)


@case
def events_own_rate_as_perf_takes_it():
    # An event's own period= or freq= wins over -c, -F and the default,
    # as perf's does, and the rate is whole (a freq term once made -c's
    # period a frequency): the attrs perf evlist shows of perfex's file
    # and of perf's, recorded with the same arguments, agree.
    require_perf()
    ours, theirs = tmpfile("rate.data"), tmpfile("rate-perf.data")
    rows = [
        ["-e", "software/config=0/"],
        ["-c", "100000", "-e", "software/config=0/"],
        ["-F", "300", "-e", "software/config=0/"],
        ["-e", "software/config=0,period=777/"],
        ["-e", "software/config=0,freq=100/"],
        ["-c", "100000", "-e", "software/config=0,freq=100/"],
        ["-F", "300", "-e", "software/config=0,period=777/"],
        ["-F", "300", "-e", "software/config=0,period=777/,task-clock"],
    ]

    def rates(path):
        e = subprocess.run(["/usr/bin/perf", "evlist", "-v", "-i", path],
                           capture_output=True, text=True)
        check(e.returncode == 0, e.stderr)
        return [(re.search(r"sample_freq \}: (\d+)", l).group(1),
                 "freq: 1," in l) for l in e.stdout.splitlines()
                if "sample_freq }" in l]

    for args in rows:
        r = record(ours, *args, "--", "true")
        check(r.returncode == 0, (args, r.stderr))
        perf_record(theirs, *args, "--", "true")
        check(rates(ours) == rates(theirs) and rates(ours),
              (args, rates(ours), rates(theirs)))


@case
def perf_reads_our_tracepoint_file():
    need_tp()
    require_perf()
    out = tmpfile("tp-perf.data")
    r = record(out, "-e", TP, "-c", "100", "--", "taskset", "-c", "0", work(),
               "getppid", "10000")
    check(r.returncode == 0, r.stderr)
    check(perf_script_count(out) == 100)
    samples, rows = perf_report(out)
    check(samples == 100, samples)
    # Sorted like ours, perf finds the same top symbol.
    samples, rows = perf_report(out, "--sort", "comm,dso,sym")
    top = top_row(report_json(out))
    check(rows and rows[0][3] == top["sym"] and rows[0][1] == top["comm"],
          (rows[:2], top))


@case
def command_errors_pass_through():
    require_root()
    out = tmpfile("err.data")
    r = perfex("record", "-q", "-o", out, "-e", "cpu-clock", "--",
               "/nonexistent/prog")
    check(r.returncode == 127, (r.returncode, r.stderr))
    check("cannot run '/nonexistent/prog'" in r.stderr, r.stderr)
    r = perfex("record", "-q", "-o", out, "-e", "cpu-clock", "--", work(), "exit", "3")
    check(r.returncode == 3, (r.returncode, r.stderr))


@case
def option_errors():
    rows = [
        (["-c", "10", "-F", "10", "--", "true"], "exclude each other"),
        (["-m", "3", "--", "true"], "power of two"),
        (["-c", "0", "--", "true"], "positive number"),
        (["-p", "1", "-a"], "exclude each other"),
        ([], "nothing to record"),
        (["--bogus"], "unknown option"),
        (["-e"], "needs an argument"),
    ]
    for args, msg in rows:
        r = perfex("record", *args)
        check(r.returncode == EXIT["usage"], (args, r.returncode, r.stderr))
        check(msg in r.stderr, (args, r.stderr))
    r = perfex("record", "-q", "-o", tmpfile("x.data"), "-e", "nosuchevent", "--", "true")
    check(r.returncode == EXIT["event"] and "nosuchevent" in r.stderr, r)
    r = perfex("record", "-q", "-o", "/nonexistent/dir/x.data", "-e", "cpu-clock",
               "--", "true")
    check(r.returncode == EXIT["io"] and "cannot create" in r.stderr, r)
    r = perfex("record", "-q", "-o", tmpfile("y.data"), "-p", "999999999", "-e",
               "cpu-clock")
    check(r.returncode == EXIT["target"], (r.returncode, r.stderr))


# Every option of `perfex record --help`, with where it is exercised.
HELP_OPTIONS = {
    "-e": "tracepoint_period_gives_exact_samples_and_tids",
    "--filter": "system_wide_with_a_pid_filter_is_exact",
    "-c": "tracepoint_period_gives_exact_samples_and_tids",
    "-F": "callgraph_and_perf_tools_read_our_file",
    "-g": "callgraph_and_perf_tools_read_our_file",
    "--call-graph": "callgraph_dwarf_records_regs_and_stack",
    "-p": "attach_to_running_process",
    "-t": "attach_to_running_thread",
    "-a": "system_wide_sees_the_command",
    "-C": "cpu_list_records_the_cpu",
    "-G": "test_record_cgroup.py",
    "-m": "snapshot_on_sigusr2_keeps_the_newest",
    "-o": "every test",
    "--overwrite": "overwrite_writes_the_last_window",
    "--snapshot": "snapshot_on_sigusr2_keeps_the_newest",
    "-q": "every test",
    "-k": "test_jit.py",
    "--kill-child": "test_record_kill.py",
    "--no-inherit": "period_counts_per_cpu_unless_no_inherit",
    "--off-cpu": "test_offcpu.py",
    "--off-cpu-thresh": "test_offcpu.py",
    "--off-cpu-runnable": "test_offcpu.py",
    "-h": "help_lists_every_option",
}


@case
def help_lists_every_option():
    r = perfex("record", "--help")
    check(r.returncode == 0, r)
    found = set(re.findall(r"^\s+(-\w|--[\w-]+)", r.stdout, re.M))
    check(found == set(HELP_OPTIONS), found ^ set(HELP_OPTIONS))
    r2 = perfex("help", "record")
    check(r2.stdout == r.stdout)
    # The long spellings are accepted too.
    for opt in re.findall(r"(--[\w-]+)", r.stdout):
        r3 = perfex("record", opt, "--help") if opt in ("--overwrite", "--snapshot",
                                                         "--quiet",
                                                         "--no-inherit",
                                                         "--all-cpus", "--help",
                                                         "--kill-child",
                                                         "--off-cpu",
                                                         "--off-cpu-runnable") \
            else perfex("record", "-e", TP, opt, "1", "--help") \
            if opt == "--filter" \
            else perfex("record", opt, "dwarf", "--help") \
            if opt == "--call-graph" \
            else perfex("record", opt, "1", "--help")
        check(r3.returncode == 0, (opt, r3.stderr))


try:
    run_cases()
finally:
    cleanup()
