# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex --per-process / --per-thread with a command / --tree-limit: the
process tree of a command, each process's own counts and its children's,
exact with tracepoints: concurrent children that fork and exec, 1,000
short-lived processes, threads that end early, and make -j4 of a generated
project (cc1 and the rest, summing to the whole-tree count)."""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from pctest import case, check, perfex, run_cases, skip, work
from stathelp import (PERF_EXIT, TP, json_event,
                      need_tracepoint, run_csv, run_json, start_perfex,
                      wait_counting, wait_for)

K, N = 8, 1000
# LeakSanitizer checks a process by ptrace'ing its threads, which it
# cannot do inside a traced tree (it ends the process with an error):
# in sanitizer builds the workloads here run without it.
os.environ["ASAN_OPTIONS"] = ":".join(
    filter(None, [os.environ.get("ASAN_OPTIONS"), "detect_leaks=0"]))
_base = []


def tree_baseline():
    """(calls, helper): the getppid calls in the row of a pcwork that only
    exits, and those of no row.  Under the sanitizers the leak checker
    makes them from a helper task created with CLONE_UNTRACED, which no
    tracer sees: they are in the whole-tree total only (0 in a plain
    build)."""
    if not _base:
        r, doc = run_json("--per-process", "-e", TP, "--", work(),
                          "getppid", "0")
        check_ok(r)
        calls = self_of(doc["processes"][0])[0]
        _base.append((calls, json_event(doc, TP)["value"] - calls))
    return _base[0]


def check_ok(r):
    check(r.returncode == 0, (r.returncode, r.stderr[-2000:]))


def kids(doc, index):
    return [p for p in doc["processes"] if p["parent"] == index]


def self_of(proc, name=TP):
    for ev in proc["events"]:
        if ev["name"] == name:
            return ev["self"]["value"], ev["children"]["value"]
    check(False, "no %s in %r" % (name, proc))


@case
def concurrent_children_exact_in_20_runs():
    need_tracepoint()
    b, h = tree_baseline()
    # The whole tree, counted by inheritance alone.
    r, rows = run_csv("-e", TP, "--", work(), "tree", str(K), str(N))
    check_ok(r)
    plain = int([row for row in rows if row[2] == TP][0][0])
    for run in range(20):
        r, doc = run_json("--per-process", "-e", TP, "--",
                          work(), "tree", str(K), str(N))
        check_ok(r)
        procs = doc["processes"]
        check(len(procs) == 1 + K + 3, [p["comm"] for p in procs])
        root = procs[0]
        check(root["parent"] is None and root["depth"] == 0, root)
        children = kids(doc, 0)
        check(len(children) == K, children)
        total = b
        for c, proc in enumerate(children):
            mine = N * (c + 1)
            self, below = self_of(proc)
            check(proc["exit"] == {"code": 0, "signal": None}, proc)
            check(proc["depth"] == 1 and proc["ppid"] == root["pid"], proc)
            if c % 3 == 2:
                check((self, below) == (mine + 2 + b, 0), (run, c, self, below))
                check(proc["exe"].endswith("pcwork"), proc["exe"])
            elif c % 3 == 1:
                check((self, below) == (mine, mine + 1), (run, c, self, below))
                g = kids(doc, proc["index"])
                check(len(g) == 1 and self_of(g[0]) == (mine + 1, 0), g)
            else:
                check((self, below) == (mine, 0), (run, c, self, below))
            total += self + below
        self, below = self_of(root)
        check(self == b and self + below == total, (self, below, total))
        # The root's subtree is what plain perfex -e counts, and what
        # this run's own totals say (but for the untraced helpers of
        # the three normal exits).
        check(self + below + 3 * h == plain, (self + below, h, plain))
        check(json_event(doc, TP)["value"] == plain, doc["events"])


def pids_made_apart(pids):
    """PIDS, of processes made one after another in this order (siblings
    are listed in the order they were made), are 1,000 processes and not
    one counted several times: a pid comes again only after the kernel's
    pid counter went round between its two uses, and that shows as a pid
    lower than the one before it.  Whether the counter wrapped cannot be
    told from /proc/sys/kernel/ns_last_pid before and after: on a busy
    machine (pid_max 32768, other suites beside) it can go all the way
    round during the loop and end above where it began."""
    last = {}
    for i, pid in enumerate(pids):
        if pid in last and not any(pids[k] < pids[k - 1]
                                   for k in range(last[pid] + 1, i + 1)):
            return False
        last[pid] = i
    return True


@case
def thousand_process_shell_loop():
    need_tracepoint()
    b, h = tree_baseline()
    script = ('i=0; while [ $i -lt 1000 ]; do "$0" getppid 3; '
              'i=$((i+1)); done')
    # 1,000 execs of a sanitizer build take minutes on a loaded machine.
    with tempfile.NamedTemporaryFile("r", suffix=".csv") as out:
        r = perfex("-x", ",", "-o", out.name, "--per-process", "-e", TP,
                   "--", "sh", "-c", script, work(), timeout=1200)
        rows = [line.split(",") for line in out.read().splitlines() if line]
    check_ok(r)
    tree = [row for row in rows if row[0] == "process"]
    whole = int([row for row in rows if len(row) > 2 and row[2] == TP][0][0])
    # process,pid,ppid,tid,depth,comm,event,self,children,enabled,running
    works = [row for row in tree if row[5] == "pcwork"]
    check(len(works) == 1000, len(works))
    check(all(int(row[7]) == 3 + b for row in works),
          set(row[7] for row in works))
    check(all(row[4] == "1" for row in works))
    pids = [int(row[1]) for row in works]
    check(pids_made_apart(pids), pids)
    check(sum(int(row[7]) for row in tree) + 1000 * h == whole, whole)
    root = tree[0]
    check(int(root[7]) + int(root[8]) + 1000 * h == whole, (root, whole))


@case
def per_thread_keeps_threads_that_ended():
    need_tracepoint()
    b, h = tree_baseline()
    r, doc = run_json("--per-thread", "-e", TP, "--", work(),
                      "threads", "3", "500", "getppid", "7")
    check_ok(r)
    check(doc["aggregation"] == "global", doc["aggregation"])
    procs = doc["processes"]
    check(len(procs) == 1, procs)
    threads = procs[0]["threads"]
    check(len(threads) == 4, threads)
    values = [t["events"][0]["self"]["value"] for t in threads]
    check(values == [7 + b, 500, 500, 500], values)
    check(all(t["end_ns"] and not t["running"] for t in threads), threads)
    check(len(set(t["tid"] for t in threads)) == 4, threads)
    check(self_of(procs[0]) == (1507 + b, 0), procs[0])
    # The human form lists the threads under their process.
    r = perfex("--per-thread", "-e", TP, "--", work(),
               "threads", "2", "5")
    check_ok(r)
    check(r.stderr.count("[pcwork]") == 3, r.stderr)


@case
def human_tree_and_limits():
    need_tracepoint()
    r = perfex("--per-process", "-e", TP, "-e", "task-clock", "--",
               work(), "tree", "8", "100")
    check_ok(r)
    lines = r.stderr.splitlines()
    start = [i for i, l in enumerate(lines) if "Process tree (12" in l]
    check(start, r.stderr)
    rows = [l for l in lines[start[0] + 4:] if l.strip()]
    check(len(rows) == 12, rows)
    # Siblings by the first event, largest first: child 8 (800 + its
    # grandchild's 801) leads, and its grandchild follows indented.
    first = rows[1].split()
    check(first[0] == "800" and first[1] == "801", rows[1])
    check(rows[2].endswith("      pcwork"), rows[2])
    r = perfex("--per-process", "--tree-limit", "3", "-e", TP, "--",
               work(), "tree", "8", "100")
    check_ok(r)
    check("(9 more processes below --tree-limit)" in r.stderr, r.stderr)
    r = perfex("--per-process", "--tree-limit=20%", "-e", TP, "--",
               work(), "tree", "8", "100")
    check_ok(r)
    # 20% of the 5,107 calls (and the exits'): the root and child 8
    # (1,601); child 5 (1,001) is below
    check("(10 more processes below --tree-limit)" in r.stderr, r.stderr)


@case
def usage_errors():
    rows = [
        (("--tree-limit", "3", "--", "true"), "goes with --per-process"),
        (("--per-process", "-a"), "not with -t, -a or -C"),
        (("--per-process", "-t", "1"), "not with -t"),
        (("--per-process", "-r", "2", "--", "true"), "cannot be combined"),
        (("--per-process", "--tree-limit", "0%", "--", "true"),
         "percentage"),
        (("--per-process", "--tree-limit", "x", "--", "true"),
         "a count of rows"),
    ]
    for args, needle in rows:
        r = perfex(*args)
        check(r.returncode == PERF_EXIT["usage"], (args, r.stderr))
        check(needle in r.stderr, (args, needle, r.stderr))


@case
def exit_status_passes_through():
    need_tracepoint()
    r, doc = run_json("--per-process", "-e", TP, "--", work(), "exit", "3")
    check(r.returncode == 3, r.stderr)
    check(doc["exit"] == {"code": 3, "signal": None}, doc["exit"])
    check(doc["processes"][0]["exit"] == {"code": 3, "signal": None},
          doc["processes"])



@case
def comm_of_any_bytes_is_valid_json():
    """A command named by bytes that are not UTF-8 (and a control
    character): its comm is one JSON string, each ill-formed sequence a
    U+FFFD as Python's errors="replace" decodes it (docs/json.md)."""
    need_tracepoint()
    name = b"w\xff\x01\xc3(\"\\"
    d = tempfile.mkdtemp()
    link = os.path.join(os.fsencode(d), name)
    try:
        os.symlink(os.fsencode(work()), link)
        r, doc = run_json("--per-process", "-e", TP, "--", os.fsdecode(link),
                          "exit", "0")
        check_ok(r)
        comm = doc["processes"][0]["comm"]
        check(comm == name.decode("utf-8", "replace"), comm)
    finally:
        shutil.rmtree(d)

@case
def process_outliving_the_root_is_let_go():
    need_tracepoint()
    t = time.monotonic()
    r, doc = run_json("--per-process", "-e", TP, "--", "sh", "-c",
                      '"$0" getppid 5 sleep 10000 >/dev/null 2>&1 & exit 0',
                      work())
    check_ok(r)
    check(time.monotonic() - t < 8, "perfex waited for the background job")
    procs = doc["processes"]
    check(len(procs) == 2, procs)
    bg = procs[1]
    check(bg["running"] and bg["exit"] is None and bg["end_ns"] is None, bg)
    # Let go untraced: it runs on (not in a trace stop) and ends by itself.
    with open("/proc/%d/stat" % bg["pid"]) as f:
        state = f.read().rsplit(")", 1)[1].split()[0]
    check(state in ("S", "R"), state)
    os.kill(bg["pid"], signal.SIGKILL)


def held_tree(d):
    """pcwork that waits for a line on stdin, then runs `tree 4 100`."""
    ready = os.path.join(d, "ready")
    p = subprocess.Popen([work(), "ready", ready, "wait", "tree", "4", "100"],
                         stdin=subprocess.PIPE, text=True)
    wait_for(lambda: os.path.exists(ready), what="the workload")
    return p


@case
def process_target_tree():
    need_tracepoint()
    b, h = tree_baseline()
    with tempfile.TemporaryDirectory() as d:
        w = held_tree(d)
        try:
            p, out = start_perfex("-j", "--per-process", "-e", TP,
                                  "-p", str(w.pid))
            wait_counting(p.pid)
            w.stdin.write("go\n")
            w.stdin.close()
            check(w.wait(timeout=60) == 0)
            _, err = p.communicate(timeout=60)
            check(p.returncode == 0, err)
            doc = json.loads(out.read())
        finally:
            if w.poll() is None:
                w.kill()
    procs = doc["processes"]
    check(len(procs) == 1 + 4 + 1, procs)
    check(procs[0]["pid"] == w.pid and procs[0]["parent"] is None, procs[0])
    truth = [(100, 0), (200, 201), (302 + b, 0), (400, 0)]
    check([self_of(c) for c in kids(doc, 0)] == truth,
          [self_of(c) for c in kids(doc, 0)])
    self, below = self_of(procs[0])
    check((self, below) == (b, 1203 + b), (self, below))
    check(json_event(doc, TP)["value"] == self + below + 2 * h,
          doc["events"])
    # Ctrl-C before it ends: read, let go, still running.
    with tempfile.TemporaryDirectory() as d:
        w = held_tree(d)
        try:
            p, out = start_perfex("-j", "--per-process", "-e", TP,
                                  "-p", str(w.pid))
            wait_counting(p.pid)
            p.send_signal(signal.SIGINT)
            _, err = p.communicate(timeout=60)
            check(p.returncode == 0, err)
            doc = json.loads(out.read())
            check(doc["processes"][0]["running"], doc["processes"])
            w.stdin.write("go\n")
            w.stdin.close()
            check(w.wait(timeout=60) == 0)
        finally:
            if w.poll() is None:
                w.kill()


@case
def make_j4_of_a_generated_project():
    need_tracepoint()
    cc = shutil.which("cc")
    if not cc or not shutil.which("make"):
        skip("no cc or make here")
    ev = "syscalls:sys_enter_openat"
    with tempfile.TemporaryDirectory() as d:
        objs = []
        for i in range(20):
            with open(os.path.join(d, "f%d.c" % i), "w") as f:
                f.write("int f%d(int x) { return x * %d + 1; }\n" % (i, i))
            objs.append("f%d.o" % i)
        with open(os.path.join(d, "Makefile"), "w") as f:
            f.write("all: %s\n%%.o: %%.c\n\tcc -O1 -c $< -o $@\n"
                    % " ".join(objs))
        r, doc = run_json("--per-process", "-e", ev, "--",
                          "make", "-s", "-j4", "-C", d)
        check_ok(r)
        check(all(os.path.exists(os.path.join(d, o)) for o in objs))
    procs = doc["processes"]
    cc1 = [p for p in procs if p["comm"] == "cc1"]
    check(len(cc1) == 20, [p["comm"] for p in procs])
    check(all(p["exe"].endswith("/cc1") for p in cc1), cc1[0]["exe"])
    whole = json_event(doc, ev)["value"]
    rows = sum(self_of(p, ev)[0] for p in procs)
    check(rows == whole, (rows, whole))
    check(sum(self_of(procs[0], ev)) == whole)


if __name__ == "__main__":
    run_cases()
