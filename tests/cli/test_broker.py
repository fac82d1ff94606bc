# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfctrd, tested as an attacker would: two unprivileged users made for
the test (removed at the end), perf_event_paranoid at 2 (restored at the
end), the broker on a socket of its own with a test policy that gives user
A its own processes, software events, two syscall tracepoints and
kernel-mode counts (no kernel-mode samples), and user B nothing.

A counts its own workload's getppid tracepoint exactly through perfex and
the broker, and through a raw request; a group of 8 of them goes to the
broker in one batch and counts what root's direct group counts, and so
do four events of groups of their own (-e a,b,c,d).  A batch with one
refused member is refused whole, naming the member and why; of
independent events, the others are then granted one by one and perfex
names the refused one; a raw batch of independent events opens each as
a group of its own.
A's requests against B's process, for CPU-wide counting, kernel
sampling, raw events, forged and oversized attrs, a pidfd whose pid was
reused by B, truncated, oversized and malformed messages with wrong
descriptor counts, forged batch counts and member sizes are all refused
and logged, and the broker stays up; a message of no bytes (with
descriptors or without) closes only that client's connection, is logged
and leaks nothing; 10,000 requests (batches among them) from clients that
go away mid-request leave its descriptor count where it was."""
import array
import ctypes
import fcntl
import json
import os
import platform
import pwd
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time

from pctest import EXIT, BUILD, case, check, require_root, run_cases, skip, work

PERFCTRD = os.path.join(BUILD, "perfctrd")
PERFEX = os.path.join(BUILD, "perfex")
# Names of this run's own: two runs at once (a sanitizer build's and the
# plain one's) must not remove each other's users.
USER_A, USER_B = "pcbrk_a%d" % os.getpid(), "pcbrk_b%d" % os.getpid()
MAGIC = 0x44424350
OPEN, TP_ID, TP_LIST, POLICY, OPEN_BATCH = 1, 2, 3, 4, 5
T_PID, T_CPU, T_CGROUP = 1, 2, 3
F_GROUP, F_LEAD = 1, 4
PERF_EVENT_IOC_ENABLE = 0x2400
BATCH_MAX = 64
EPERM, ESRCH, EBADF, EACCES, EINVAL, E2BIG, EMFILE = 1, 3, 9, 13, 22, 7, 24
EPROTO, EMSGSIZE = 71, 90
SYS_GETPPID = {"x86_64": 110, "aarch64": 173}.get(platform.machine())
SYS_PIDFD_OPEN = 434

POLICY_TEXT = """# the test's policy
socket_mode = 0666

[rule user-a]
users = %s
events = software, tracepoint:syscalls:sys_enter_getppid, tracepoint:syscalls:sys_enter_getpid
targets = own
kernel = count
sampling = yes
min_sample_period = 1000
max_fds = 64
"""


class Env:
    """The users, the paranoid level, the broker: made once, undone at
    exit whatever happened (see main())."""

    def __init__(self):
        self.users = []
        self.paranoid = None
        self.broker = None
        self.dir = None

    def setup(self):
        require_root()
        if not SYS_GETPPID:
            skip("no getppid number for %s" % platform.machine())
        for tool in ("useradd", "userdel"):
            if not shutil.which(tool):
                skip("%s is not installed" % tool)
        if not os.path.exists("/sys/kernel/tracing/events/syscalls"):
            skip("tracefs with syscall tracepoints is not mounted at "
                 "/sys/kernel/tracing")
        if not os.access(PERFCTRD, os.X_OK):
            skip("%s is not built" % PERFCTRD)
        for name in (USER_A, USER_B):
            if subprocess.run(["id", name], capture_output=True).returncode == 0:
                subprocess.run(["userdel", name], capture_output=True)
            r = subprocess.run(["useradd", "-M", "-U", "-s", "/bin/sh", name],
                               capture_output=True, text=True)
            if r.returncode:
                skip("useradd %s: %s" % (name, r.stderr.strip()))
            self.users.append(name)
        self.a = pwd.getpwnam(USER_A)
        self.b = pwd.getpwnam(USER_B)
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            self.paranoid = f.read().strip()
        with open("/proc/sys/kernel/perf_event_paranoid", "w") as f:
            f.write("2")
        self.dir = tempfile.mkdtemp(prefix="perfctrd-test-")
        os.chmod(self.dir, 0o755)
        self.sock = os.path.join(self.dir, "perfctrd.sock")
        self.conf = os.path.join(self.dir, "perfctrd.conf")
        self.log = os.path.join(self.dir, "perfctrd.log")
        with open(self.conf, "w") as f:
            f.write(POLICY_TEXT % USER_A)
        self.logf = open(self.log, "w")
        self.broker = subprocess.Popen([PERFCTRD, "-c", self.conf, "-s",
                                        self.sock], stderr=self.logf)
        for _ in range(200):
            if os.path.exists(self.sock):
                break
            time.sleep(0.02)
        check(os.path.exists(self.sock), "the broker made no socket")
        self.tp_id = {}
        for name in ("sys_enter_getppid", "sys_enter_read"):
            with open("/sys/kernel/tracing/events/syscalls/%s/id" % name) as f:
                self.tp_id[name] = int(f.read())

    def teardown(self):
        if self.broker:
            self.broker.terminate()
            try:
                self.broker.wait(10)
            except subprocess.TimeoutExpired:
                self.broker.kill()
            self.logf.close()
        if self.paranoid is not None:
            with open("/proc/sys/kernel/perf_event_paranoid", "w") as f:
                f.write(self.paranoid)
        for name in self.users:
            subprocess.run(["userdel", name], capture_output=True)
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def log_text(self):
        self.logf.flush()
        with open(self.log) as f:
            return f.read()

    def alive(self):
        return self.broker.poll() is None

    def env(self, **extra):
        e = {"PATH": "/usr/bin:/bin", "PERFCTR_BROKER_SOCKET": self.sock,
             "HOME": self.dir}
        e.update(extra)
        return e

    def run_as(self, user, args, **extra):
        return subprocess.run(args, user=user.pw_uid, group=user.pw_gid,
                              extra_groups=[], env=self.env(**extra),
                              capture_output=True, text=True, timeout=120)

    def settled_fds(self, limit=30.0):
        """The broker's fds once it serves nobody: (how many, what it
        still holds for clients after LIMIT seconds).  A client's
        connection, the pidfd of its target and the perf events it asked
        for are held while the broker serves it; one that has gone is
        dropped when the broker next runs, which a loaded machine delays.
        Counting only once none is held makes before and after comparable
        exactly: an earlier case's connection still closing when "before"
        was counted made it one more (6 before, 5 after under make
        check-stress)."""
        end = time.monotonic() + limit
        while True:
            fds, held = 0, []
            listening = listening_unix_inodes()
            d = "/proc/%d/fd" % self.broker.pid
            for fd in os.listdir(d):
                try:
                    what = os.readlink(os.path.join(d, fd))
                except OSError:
                    continue        # closed meanwhile
                fds += 1
                if what in ("anon_inode:[pidfd]", "anon_inode:[perf_event]"):
                    held.append(what)
                elif (what.startswith("socket:[") and
                      int(what[8:-1]) not in listening):
                    held.append(what)
            if not held or time.monotonic() > end:
                return fds, held
            time.sleep(0.05)


def listening_unix_inodes():
    """Inodes of the listening unix sockets (__SO_ACCEPTCON in the flags
    of /proc/net/unix)."""
    inodes = set()
    with open("/proc/net/unix") as f:
        next(f)
        for line in f:
            fields = line.split()
            if len(fields) >= 7 and int(fields[3], 16) & 0x10000:
                inodes.add(int(fields[6]))
    return inodes


ENV = Env()


def as_user(user, fn, *args):
    """Run fn(*args) in a child with @user's ids; return what it returns
    (JSON through a pipe)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(r)
            os.setgroups([])
            os.setresgid(user.pw_gid, user.pw_gid, user.pw_gid)
            os.setresuid(user.pw_uid, user.pw_uid, user.pw_uid)
            out = json.dumps({"ok": fn(*args)})
        except BaseException as e:      # noqa: B902 -- report anything
            out = json.dumps({"error": repr(e)})
            code = 1
        with os.fdopen(w, "w") as f:
            f.write(out)
        os._exit(code)
    os.close(w)
    with os.fdopen(r) as f:
        data = f.read()
    os.waitpid(pid, 0)
    res = json.loads(data)
    check("ok" in res, res.get("error"))
    return res["ok"]


# ---- the wire protocol, written by hand as an attacker would ----------

def msg(mtype, body):
    return struct.pack("=IHHII", MAGIC, 1, mtype, 16 + len(body), 0) + body


def attr(type_=1, config=1, size=128, flags=1 << 5, period=0,
         sample_type=0, extra=None):
    """A perf_event_attr; flags default exclude_kernel.  extra: {offset:
    (fmt, value)} for the fields the forgeries touch."""
    a = bytearray(max(size, 128))
    struct.pack_into("=IIQQQQQ", a, 0, type_, size, config, period,
                     sample_type, 0, flags)
    for off, (fmt, value) in (extra or {}).items():
        struct.pack_into(fmt, a, off, value)
    return bytes(a[:size]) if size <= 128 else bytes(a)


def open_msg(target, cpu, a, flags=0, attr_size=None):
    return msg(OPEN, struct.pack("=IiII", target, cpu, flags,
                                 len(a) if attr_size is None else attr_size) + a)


def batch_msg(target, cpu, attrs, flags=F_LEAD, count=None, sizes=None):
    """An OPEN_BATCH (wire version 2) of @attrs; @count and @sizes (a
    member's size, None for its own) forge what they say."""
    body = struct.pack("=IiII", target, cpu, flags,
                       len(attrs) if count is None else count)
    for i, a in enumerate(attrs):
        size = sizes[i] if sizes and sizes[i] is not None else len(a)
        body += struct.pack("=II", size, 0) + a
    return struct.pack("=IHHII", MAGIC, 2, OPEN_BATCH, 16 + len(body), 0) \
        + body


def pidfd_open(pid):
    fd = ctypes.CDLL(None, use_errno=True).syscall(SYS_PIDFD_OPEN, pid, 0)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "pidfd_open")
    return fd


def request_all(s, m, fds=()):
    """Send @m with @fds; return (status, rule, text, value, [fds])."""
    anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] \
        if fds else []
    s.sendmsg([m], anc)
    data, anc, _, _ = s.recvmsg(70000, socket.CMSG_SPACE(4 * (BATCH_MAX + 4)))
    if not data:
        return ("closed", "", "", 0, [])
    status, text_len, value = struct.unpack_from("=iIQ", data, 16)
    rule = data[32:96].split(b"\0")[0].decode()
    text = data[96:96 + text_len].decode()
    got = []
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            got += array.array("i", payload[:len(payload) - len(payload) % 4])
    return (status, rule, text, value, list(got))


def request(s, m, fds=()):
    """Send @m with @fds; return (status, rule, text, fd or None)."""
    status, rule, text, _, got = request_all(s, m, fds)
    for extra in got[1:]:
        os.close(extra)
    return (status, rule, text, got[0] if got else None)


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(20)
    s.connect(path)
    return s


# ---- what user A runs ---------------------------------------------------

def attacks(path, tp, b_pid):
    libc = ctypes.CDLL(None, use_errno=True)
    out = {}
    s = connect(path)
    me = pidfd_open(os.getpid())
    b = pidfd_open(b_pid)
    init = pidfd_open(1)
    rd, wr = os.pipe()

    def note(name, m, fds=()):
        st, rule, text, fd = request(s, m, fds)
        out[name] = [st, rule, text, fd is not None]
        if fd is not None:
            os.close(fd)

    # Allowed: its own process, user mode; then kernel-mode counts of its
    # own getppid calls, read back exactly.
    note("own_task_clock", open_msg(T_PID, -1, attr()), [me])
    st, rule, text, fd = request(s, open_msg(T_PID, -1, attr(2, tp["sys_enter_getppid"], flags=0)), [me])
    out["own_getppid_kernel_mode"] = [st, rule, text, fd is not None]
    if fd is not None:
        for _ in range(5000):
            libc.syscall(SYS_GETPPID)
        out["own_getppid_count"] = struct.unpack("=Q", os.read(fd, 8))[0]
        os.close(fd)
    # A's children: like A (which set its ids without an exec) not
    # dumpable, so not A's to count, unless made dumpable again; A itself
    # counted itself above.
    kids = []
    for dumpable in (0, 1):
        r, w = os.pipe()
        ready_r, ready_w = os.pipe()
        child = os.fork()
        if child == 0:
            os.close(w)
            os.close(ready_r)
            libc.prctl(4, dumpable, 0, 0, 0)        # PR_SET_DUMPABLE
            os.write(ready_w, b"r")
            os.read(r, 1)
            os._exit(0)
        os.close(r)
        os.close(ready_w)
        # The child has run its prctl: told, not guessed from a sleep
        # (a loaded machine may not run it for a long while).
        os.read(ready_r, 1)
        os.close(ready_r)
        kids.append((child, w, pidfd_open(child)))
    note("own_undumpable_child", open_msg(T_PID, -1, attr()), [kids[0][2]])
    note("own_dumpable_child", open_msg(T_PID, -1, attr()), [kids[1][2]])
    for child, w, fd in kids:
        os.close(w)
        os.close(fd)
    for child, w, fd in kids:
        os.waitpid(child, 0)
    # Refused by the policy.
    note("b_process", open_msg(T_PID, -1, attr()), [b])
    note("init_process", open_msg(T_PID, -1, attr()), [init])
    note("system_wide", open_msg(T_CPU, 0, attr()))
    note("kernel_sampling", open_msg(T_PID, -1, attr(flags=0, period=100000)), [me])
    note("fast_sampling", open_msg(T_PID, -1, attr(period=10)), [me])
    note("raw_event", open_msg(T_PID, -1, attr(4, 0x3c)), [me])
    note("raw_samples", open_msg(T_PID, -1, attr(2, tp["sys_enter_getppid"], period=1000, sample_type=1 << 10)), [me])
    note("tracepoint_not_allowed", open_msg(T_PID, -1, attr(2, tp["sys_enter_read"])), [me])
    note("cgroup_target", open_msg(T_CGROUP, 0, attr()), [rd])
    # Forged attrs.
    big = bytearray(attr(size=136))
    big[130] = 1
    note("oversized_attr_tail", open_msg(T_PID, -1, bytes(big)), [me])
    note("attr_beyond_cap", open_msg(T_PID, -1, attr(size=1024)), [me])
    note("size_field_forged", open_msg(T_PID, -1, attr(extra={4: ("=I", 120)})), [me])
    note("attr_size_lies", open_msg(T_PID, -1, attr(), attr_size=64), [me])
    note("reserved_flag_bits", open_msg(T_PID, -1, attr(flags=(1 << 5) | (1 << 50))), [me])
    note("aux_output", open_msg(T_PID, -1, attr(flags=(1 << 5) | (1 << 31))), [me])
    note("sigtrap", open_msg(T_PID, -1, attr(flags=(1 << 5) | (1 << 37) | (1 << 36))), [me])
    note("aux_watermark", open_msg(T_PID, -1, attr(extra={104: ("=I", 4096)})), [me])
    note("aux_sample_size", open_msg(T_PID, -1, attr(extra={112: ("=I", 64)})), [me])
    note("reserved_2", open_msg(T_PID, -1, attr(extra={110: ("=H", 1)})), [me])
    note("bpf_event_record", open_msg(T_PID, -1, attr(flags=(1 << 5) | (1 << 30))), [me])
    # Malformed messages and wrong descriptor counts.
    good = open_msg(T_PID, -1, attr())
    note("truncated", good[:30], [me])
    note("header_only", good[:16], [me])
    note("length_lies", good[:8] + struct.pack("=I", 500) + good[12:], [me])
    note("bad_magic", b"XXXX" + good[4:], [me])
    note("bad_version", good[:4] + struct.pack("=H", 9) + good[6:], [me])
    note("oversized_message", good + bytes(70000), [me])
    note("pid_target_without_pidfd", good)
    note("pid_target_two_fds", good, [me, me])
    note("cpu_target_with_fd", open_msg(T_CPU, 0, attr()), [me])
    note("ten_fds", good, [me] * 10)
    note("pipe_as_pidfd", good, [rd])
    note("pipe_as_group_leader", open_msg(T_PID, -1, attr(), flags=F_GROUP), [me, rd])
    note("unknown_type", msg(9, b""))

    # Batches: one refused member refuses them all, with its index and
    # the reason; forged counts and sizes and wrong descriptor counts are
    # malformed.
    def note_batch(name, m, fds=()):
        st, rule, text, value, got = request_all(s, m, fds)
        out[name] = [st, rule, text, bool(got)]
        out[name + "/value"] = [value, len(got)]
        for fd in got:
            os.close(fd)

    tc = attr()
    tp_read = attr(2, tp["sys_enter_read"])
    note_batch("batch_group_of_8", batch_msg(T_PID, -1, [tc] * 8), [me])
    leader = request(s, good, [me])[3]
    note_batch("batch_joining_leader", batch_msg(T_PID, -1, [tc] * 3,
                                                 flags=F_GROUP),
               [me, leader if leader is not None else rd])
    if leader is not None:
        os.close(leader)
    # Independent events (neither leading nor joining): each its own
    # group, so the second enabled alone counts the calls alone (as a
    # member of the disabled first it would count none).
    off_pp = attr(2, tp["sys_enter_getppid"], flags=(1 << 5) | 1)
    st, rule, text, value, got = request_all(
        s, batch_msg(T_PID, -1, [off_pp] * 3, flags=0), [me])
    out["batch_independent"] = [st, rule, text, bool(got)]
    out["batch_independent/value"] = [value, len(got)]
    if len(got) == 3:
        fcntl.ioctl(got[1], PERF_EVENT_IOC_ENABLE, 0)
        for _ in range(3000):
            libc.syscall(SYS_GETPPID)
        out["batch_independent_counts"] = [
            struct.unpack("=Q", os.read(fd, 8))[0] for fd in got]
    for fd in got:
        os.close(fd)
    note_batch("batch_independent_refused",
               batch_msg(T_PID, -1, [tc, tp_read, tc], flags=0), [me])
    note_batch("batch_member_refused",
               batch_msg(T_PID, -1, [tc, tc, tp_read, tc]), [me])
    note_batch("batch_member_raw",
               batch_msg(T_PID, -1, [tc] * 3 + [attr(4, 0x3c)]), [me])
    note_batch("batch_member_forged_attr",
               batch_msg(T_PID, -1, [tc, attr(flags=(1 << 5) | (1 << 50))]),
               [me])
    note_batch("batch_of_b_process", batch_msg(T_PID, -1, [tc] * 8), [b])
    note_batch("batch_count_beyond", batch_msg(T_PID, -1, [tc] * 8, count=9),
               [me])
    note_batch("batch_count_short", batch_msg(T_PID, -1, [tc] * 8, count=7),
               [me])
    note_batch("batch_count_huge",
               batch_msg(T_PID, -1, [tc] * 8, count=0xffffffff), [me])
    note_batch("batch_count_zero", batch_msg(T_PID, -1, []), [me])
    note_batch("batch_member_size_past_end",
               batch_msg(T_PID, -1, [tc] * 8, sizes=[None] * 7 + [512]), [me])
    note_batch("batch_member_size_shifted",
               batch_msg(T_PID, -1, [tc] * 8, sizes=[None, 120] + [None] * 6),
               [me])
    note_batch("batch_too_many", batch_msg(T_PID, -1, [tc] * (BATCH_MAX + 1)),
               [me])
    note_batch("batch_without_pidfd", batch_msg(T_PID, -1, [tc] * 8))
    note_batch("batch_ten_fds", batch_msg(T_PID, -1, [tc] * 8), [me] * 10)
    note_batch("batch_lead_and_group",
               batch_msg(T_PID, -1, [tc] * 2, flags=F_LEAD | F_GROUP), [me, me])
    note_batch("batch_pipe_as_leader",
               batch_msg(T_PID, -1, [tc] * 2, flags=F_GROUP), [me, rd])
    note_batch("batch_as_version_1",
               msg(OPEN_BATCH, batch_msg(T_PID, -1, [tc] * 2)[16:]), [me])
    # One descriptor held, a batch of the rule's max_fds (64) is one too
    # many: refused whole, nothing handed out.
    st, rule, text, held = request(s, good, [me])
    note_batch("batch_over_max_fds", batch_msg(T_PID, -1, [tc] * BATCH_MAX),
               [me])
    if held is not None:
        os.close(held)
    note_batch("batch_of_max_fds", batch_msg(T_PID, -1, [tc] * BATCH_MAX),
               [me])
    # Still serving: a good request after all that.
    note("still_serving", good, [me])
    s.close()
    return out


def stale_pidfd(path, ctl_r, ctl_w):
    """A pidfd of A's own child, kept after the child is reaped; root then
    gives the pid to a process of B's.  The pidfd still names the dead
    child: the broker must refuse it, not open an event on B's process."""
    r, w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(w)
        os.read(r, 1)
        os._exit(0)
    os.close(r)
    fd = pidfd_open(child)
    os.close(w)
    os.waitpid(child, 0)
    os.write(ctl_w, b"%d\n" % child)
    go = os.read(ctl_r, 16)
    s = connect(path)
    st, rule, text, got = request(s, open_msg(T_PID, -1, attr()), [fd])
    return {"pid": child, "go": go.decode().strip(), "status": st,
            "text": text, "fd": got is not None}


def churn(path, n):
    """@n clients that go away mid-request, in seven ways, three of them
    with batches of 8."""
    me = pidfd_open(os.getpid())
    good = open_msg(T_PID, -1, attr())
    batch = batch_msg(T_PID, -1, [attr()] * 8)
    one = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [me]))]
    for i in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(path)
        kind = i % 7
        anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [me, me]))]
        if kind == 1:
            s.sendmsg([good[:40]], anc)             # malformed, with fds
        elif kind == 2:                             # valid, reply unread
            s.sendmsg([good], one)
        elif kind == 3:
            st, _, _, fd = request(s, good, [me])
            if fd is not None:
                os.close(fd)
        elif kind == 4:                             # a batch, reply unread
            s.sendmsg([batch], one)
        elif kind == 5:                             # a batch, 8 fds back
            for fd in request_all(s, batch, [me])[4]:
                os.close(fd)
        elif kind == 6:                             # a batch cut short
            s.sendmsg([batch[:200]], anc)
        s.close()
    s = connect(path)
    st = request(s, msg(POLICY, b""))[0]
    s.close()
    return st


def zero_length(path, n):
    """@n clients that each send a message of no bytes, every other one
    with descriptors; a client connected before them is served after."""
    me = pidfd_open(os.getpid())
    good = open_msg(T_PID, -1, attr())
    keep = connect(path)
    closed = 0
    for i in range(n):
        s = connect(path)
        anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                array.array("i", [me, me]))] if i % 2 else []
        s.sendmsg([b""], anc)
        closed += s.recv(100) == b""
        s.close()
    st, _, _, fd = request(keep, good, [me])
    if fd is not None:
        os.close(fd)
    keep.close()
    return {"closed": closed, "kept_status": st, "kept_fd": fd is not None}


_exit_calls = []


def exit_calls():
    """getppid calls of the workload's way out, counted as A counts: 0, or
    a few when it is built with a sanitizer whose leak checker asks for
    its parent."""
    if not _exit_calls:
        r = ENV.run_as(ENV.a, [PERFEX, "-x,", "-e",
                               "syscalls:sys_enter_getppid:uk", "--", work(),
                               "getppid", "0"])
        check(r.returncode == 0, r.stderr)
        _exit_calls.append(int(r.stderr.split(",", 1)[0]))
    return _exit_calls[0]


# ---- the cases ----------------------------------------------------------

@case
def user_counts_own_tracepoint_exactly_through_perfex():
    e = ENV
    r = e.run_as(e.a, [PERFEX, "-x,", "-e", "syscalls:sys_enter_getppid:uk",
                       "--", work(), "getppid", "10000"])
    check(r.returncode == 0, r.stderr)
    check(r.stderr.startswith("%d," % (10000 + exit_calls())), r.stderr)
    log = e.log_text()
    check("allowed: uid %d (%s)" % (e.a.pw_uid, USER_A) in log and
          "open tracepoint syscalls:sys_enter_getppid with kernel mode" in log
          and "rule 'user-a'" in log, log[-2000:])
    # Without the broker the kernel refuses (paranoid 2), and tracefs
    # cannot even name the tracepoint.
    r = e.run_as(e.a, [PERFEX, "-x,", "-e", "syscalls:sys_enter_getppid:uk",
                       "--", work(), "getppid", "10"], PERFCTR_NO_BROKER="1")
    check(r.returncode != 0, r.stderr)


@case
def user_counts_group_of_8_exactly_through_one_request():
    """A group of 8 getppid tracepoints that the kernel refuses A (kernel
    mode at paranoid 2) goes to the broker in one request, and counts what
    the same group opened directly by root counts: the calls, exactly."""
    e = ENV
    group = "{%s}" % ",".join(["syscalls:sys_enter_getppid:uk"] * 8)

    def counts(r):
        check(r.returncode == 0, r.stderr)
        return [int(ln.split(",", 1)[0]) for ln in r.stderr.splitlines()
                if "sys_enter_getppid" in ln]

    before = e.log_text().count("(event 8 of 8)")
    r = e.run_as(e.a, [PERFEX, "-x,", "-e", group, "--", work(), "getppid",
                       "10000"])
    brokered = counts(r)
    full = e.env(PERFCTR_NO_BROKER="1")
    full["PATH"] = os.environ.get("PATH", full["PATH"])
    direct = counts(subprocess.run([PERFEX, "-x,", "-e", group, "--", work(),
                                    "getppid", "10000"], env=full,
                                   capture_output=True, text=True,
                                   timeout=120))
    check(brokered == [10000 + exit_calls()] * 8, brokered)
    check(direct == brokered, "direct %s, brokered %s" % (direct, brokered))
    log = e.log_text()
    check(log.count("(event 8 of 8)") == before + 1, log[-3000:])
    check("allowed: uid %d (%s)" % (e.a.pw_uid, USER_A) in log and
          "open tracepoint syscalls:sys_enter_getppid with kernel mode on pid"
          in log, log[-3000:])


def opens_logged(log, user):
    """The broker's log lines of @user's opens (granted or not)."""
    return [ln for ln in log.splitlines()
            if "uid %d (%s)" % (user.pw_uid, USER_A if user is ENV.a
                                else USER_B) in ln and ": open " in ln]


@case
def user_counts_independent_events_exactly_through_one_request():
    """Four events of groups of their own (-e a,b,c,d) that the kernel
    refuses A go to the broker in one request, not one each, and count
    what root's direct opens count: the getppid calls exactly."""
    e = ENV
    names = ["syscalls:sys_enter_getppid:uk", "syscalls:sys_enter_getpid:uk",
             "task-clock:k", "syscalls:sys_enter_getppid:uk"]
    cmd = [PERFEX, "-x,", "-e", ",".join(names), "--", work(), "getppid",
           "10000", "getpid", "3000"]

    def counts(r):
        check(r.returncode == 0, r.stderr)
        rows = [ln.split(",") for ln in r.stderr.splitlines()]
        return [int(f[0]) for f in rows
                if len(f) > 2 and "sys_enter_" in f[2]]

    calls = 10000 + exit_calls()
    before = len(opens_logged(e.log_text(), e.a))
    brokered = counts(e.run_as(e.a, cmd))
    full = e.env(PERFCTR_NO_BROKER="1")
    full["PATH"] = os.environ.get("PATH", full["PATH"])
    direct = counts(subprocess.run(cmd, env=full, capture_output=True,
                                   text=True, timeout=120))
    check(brokered[0] == calls and brokered[2] == calls and
          brokered[1] >= 3000, brokered)
    check(direct == brokered, "direct %s, brokered %s" % (direct, brokered))
    new = opens_logged(e.log_text(), e.a)[before:]
    check(len(new) == 4 and
          all("allowed: uid" in ln and "(event %d of 4)" % (i + 1) in ln
              for i, ln in enumerate(new)), "\n".join(new))


@case
def one_refused_event_of_independent_ones_is_named():
    """Of independent events, one the policy refuses refuses their batch;
    the others are then asked for one by one and granted, and the refusal
    perfex reports is that event's own, with the broker's reason."""
    e = ENV
    before = len(opens_logged(e.log_text(), e.a))
    r = e.run_as(e.a, [PERFEX, "-x,", "-e",
                       "syscalls:sys_enter_getppid:uk,cycles:k,"
                       "syscalls:sys_enter_getpid:uk", "--", work(),
                       "getppid", "10"])
    check(r.returncode == EXIT["perm"], "exit %d: %s" % (r.returncode, r.stderr))
    check(r.stderr.splitlines()[:2] == [
        "perfex: cannot open event 'cycles:k': the access broker refused "
        "it: hardware events (rule 'user-a')",
        "hint: the broker's policy file decides (/etc/perfctr/perfctrd.conf "
        "unless perfctrd -c names another; see perfctrd.conf(5))"],
        r.stderr)
    new = opens_logged(e.log_text(), e.a)[before:]
    # The batch (refused at its second event), the first event alone
    # (granted), the second alone (refused): nothing asked after it.
    check(len(new) == 3, "\n".join(new))
    if len(new) == 3:
        check("denied: uid" in new[0] and
              "rule 'user-a': hardware events" in new[0] and
              "(event 2 of 3; the batch is refused)" in new[0], new[0])
        check("allowed: uid" in new[1] and
              "sys_enter_getppid" in new[1] and " of " not in new[1],
              new[1])
        check("denied: uid" in new[2] and
              "hardware events" in new[2] and " of " not in new[2], new[2])


@case
def user_lists_what_the_policy_allows():
    e = ENV
    r = e.run_as(e.a, [PERFEX, "list", "tracepoint"])
    check(r.returncode == 0, r.stderr)
    check("syscalls:sys_enter_getppid" in r.stdout, r.stdout[-2000:])
    check("syscalls:sys_enter_read" not in r.stdout, r.stdout[-2000:])


@case
def info_says_what_the_broker_allows():
    e = ENV
    r = e.run_as(e.a, [PERFEX, "info"])
    check(r.returncode == 0, r.stderr)
    check("perfctrd" in r.stdout and "user-a" in r.stdout and
          "kernel count" in r.stdout, r.stdout[-3000:])
    r = e.run_as(e.b, [PERFEX, "info"])
    check("no rule" in r.stdout, r.stdout[-3000:])
    r = e.run_as(e.a, [PERFEX, "info"], PERFCTR_NO_BROKER="1")
    check("user-a" not in r.stdout, r.stdout[-3000:])


@case
def info_json_says_what_the_broker_allows():
    e = ENV

    def broker(user, **env):
        args = [PERFEX, "info", "-j"]
        if user:
            r = e.run_as(user, args, **env)
        else:
            full = e.env(**env)
            full["PATH"] = os.environ.get("PATH", full["PATH"])
            r = subprocess.run(args, env=full, capture_output=True,
                               text=True, timeout=120)
        check(r.returncode == 0, r.stderr)
        return json.loads(r.stdout)["broker"]

    b = broker(e.a)
    check(b == {"socket": e.sock, "reachable": True, "why_not": None,
                "rule": "user-a", "allows": {
                    "events": ["software",
                               "tracepoint:syscalls:sys_enter_getppid",
                               "tracepoint:syscalls:sys_enter_getpid"],
                    "targets": ["own"], "kernel": "count",
                    "sampling": True, "max_sample_freq": 0,
                    "min_sample_period": 1000, "max_fds": 64}}, b)
    none = {"socket": e.sock, "reachable": True, "why_not": None,
            "rule": None, "allows": None}
    b = broker(e.b)
    check(b == none, b)
    b = broker(None)            # root: no rule names it either
    check(b == none, b)
    b = broker(e.a, PERFCTR_NO_BROKER="1")
    check(b["reachable"] is False and b["why_not"] ==
          "PERFCTR_NO_BROKER is set" and b["allows"] is None, b)
    gone = os.path.join(e.dir, "no-such.sock")
    for user in (e.a, None):
        b = broker(user, PERFCTR_BROKER_SOCKET=gone)
        check(b == {"socket": gone, "reachable": False,
                    "why_not": "no socket", "rule": None, "allows": None}, b)
    # A socket file that nobody listens on any more.
    dead = os.path.join(e.dir, "dead.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.bind(dead)
    s.close()
    os.chmod(dead, 0o666)
    b = broker(e.a, PERFCTR_BROKER_SOCKET=dead)
    check(b["reachable"] is False and
          b["why_not"] == "nobody listens on the socket", b)


@case
def attacks_are_refused_and_logged():
    e = ENV
    b_proc = subprocess.Popen([work(), "wait"], stdin=subprocess.PIPE,
                              user=e.b.pw_uid, group=e.b.pw_gid,
                              extra_groups=[])
    try:
        out = as_user(e.a, attacks, e.sock, e.tp_id, b_proc.pid)
    finally:
        b_proc.communicate(b"\n", timeout=10)
    want = {
        "own_task_clock": 0, "own_getppid_kernel_mode": 0,
        "own_undumpable_child": -EACCES, "own_dumpable_child": 0,
        "b_process": -EACCES, "init_process": -EACCES,
        "system_wide": -EACCES, "kernel_sampling": -EACCES,
        "fast_sampling": -EACCES, "raw_event": -EACCES,
        "raw_samples": -EACCES, "tracepoint_not_allowed": -EACCES,
        "cgroup_target": -EBADF,
        "oversized_attr_tail": -E2BIG, "attr_beyond_cap": -E2BIG,
        "size_field_forged": -EINVAL, "attr_size_lies": -EPROTO,
        "reserved_flag_bits": -EINVAL, "aux_output": -EINVAL,
        "sigtrap": -EINVAL, "aux_watermark": -EINVAL,
        "aux_sample_size": -EINVAL, "reserved_2": -EINVAL,
        "bpf_event_record": -EACCES,
        "truncated": -EPROTO, "header_only": -EPROTO,
        "length_lies": -EPROTO, "bad_magic": -EPROTO,
        "bad_version": -EPROTO, "oversized_message": -EMSGSIZE,
        "pid_target_without_pidfd": -EBADF, "pid_target_two_fds": -EBADF,
        "cpu_target_with_fd": -EBADF, "ten_fds": -EBADF,
        "pipe_as_pidfd": -EBADF, "pipe_as_group_leader": -EBADF,
        "unknown_type": -EPROTO, "still_serving": 0,
        "batch_group_of_8": 0, "batch_joining_leader": 0,
        "batch_member_refused": -EACCES, "batch_member_raw": -EACCES,
        "batch_member_forged_attr": -EINVAL, "batch_of_b_process": -EACCES,
        "batch_count_beyond": -EPROTO, "batch_count_short": -EPROTO,
        "batch_count_huge": -E2BIG, "batch_count_zero": -EINVAL,
        "batch_member_size_past_end": -EPROTO,
        "batch_member_size_shifted": -EINVAL, "batch_too_many": -E2BIG,
        "batch_without_pidfd": -EBADF, "batch_ten_fds": -EBADF,
        "batch_lead_and_group": -EINVAL, "batch_pipe_as_leader": -EBADF,
        "batch_as_version_1": -EPROTO, "batch_over_max_fds": -EMFILE,
        "batch_of_max_fds": 0, "batch_independent": 0,
        "batch_independent_refused": -EACCES,
    }
    bad = []
    for name, status in want.items():
        got = out.get(name)
        if not got or got[0] != status or got[3] != (status == 0):
            bad.append("%s: %s, expected %d" % (name, got, status))
    check(not bad, "; ".join(bad))
    # A granted batch hands over all its descriptors, a refused one none
    # and names the member at fault.
    values = {"batch_group_of_8": [8, 8], "batch_joining_leader": [3, 3],
              "batch_member_refused": [2, 0], "batch_member_raw": [3, 0],
              "batch_member_forged_attr": [1, 0],
              "batch_of_b_process": [0, 0], "batch_over_max_fds": [0, 0],
              "batch_of_max_fds": [BATCH_MAX, BATCH_MAX],
              "batch_independent": [3, 3],
              "batch_independent_refused": [1, 0]}
    bad = ["%s: value and fds %s, expected %s" % (k, out.get(k + "/value"), v)
           for k, v in values.items() if out.get(k + "/value") != v]
    check(not bad, "; ".join(bad))
    check(out["batch_member_refused"][2] ==
          "tracepoint syscalls:sys_enter_read",
          out["batch_member_refused"])
    check(out.get("own_getppid_count") == 5000, out.get("own_getppid_count"))
    check(out.get("batch_independent_counts") == [0, 3000, 0],
          out.get("batch_independent_counts"))
    check(e.alive(), "the broker died")
    log = e.log_text()
    denied = log.count("denied: uid %d (%s)" % (e.a.pw_uid, USER_A))
    refusals = sum(1 for s in want.values() if s)
    check(denied >= refusals, "%d denials logged for %d refusals"
          % (denied, refusals))
    for what in ("process %d is not the caller's" % b_proc.pid,
                 "is not dumpable: only it may count itself",
                 "on cpu 0: rule 'user-a': CPU-wide targets",
                 "kernel-mode sampling", "raw events",
                 "reserved attr flag bits", "malformed message",
                 "tracepoint syscalls:sys_enter_read (event 3 of 4; the "
                 "batch is refused)", "(event 8 of 8)", "(event 64 of 64)"):
        check(what in log, "log lacks '%s'" % what)


@case
def reused_pid_cannot_be_confused():
    e = ENV
    a_r, root_w = os.pipe()
    root_r, a_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(root_w)
            os.close(root_r)
            os.setgroups([])
            os.setresgid(e.a.pw_gid, e.a.pw_gid, e.a.pw_gid)
            os.setresuid(e.a.pw_uid, e.a.pw_uid, e.a.pw_uid)
            res = stale_pidfd(e.sock, a_r, a_w)
        except BaseException as ex:     # noqa: B902
            res = {"error": repr(ex)}
            code = 1
        os.write(a_w, (json.dumps(res) + "\n").encode())
        os._exit(code)
    os.close(a_r)
    os.close(a_w)
    rf = os.fdopen(root_r)
    dead = int(rf.readline())
    # Give the dead child's pid to a process of B's (other processes on
    # the machine fork too: try a few times).
    b_proc = None
    for _ in range(50):
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(dead - 1))
        p = subprocess.Popen([work(), "wait"], stdin=subprocess.PIPE,
                             user=e.b.pw_uid, group=e.b.pw_gid,
                             extra_groups=[])
        if p.pid == dead:
            b_proc = p
            break
        p.communicate(b"\n", timeout=10)
    os.write(root_w, b"reused\n" if b_proc else b"not-reused\n")
    os.close(root_w)
    res = json.loads(rf.readline())
    rf.close()
    os.waitpid(pid, 0)
    if b_proc:
        with open("/proc/%d/status" % dead) as f:
            uid_line = [ln for ln in f if ln.startswith("Uid:")][0]
        b_proc.communicate(b"\n", timeout=10)
    check("error" not in res, res)
    if not b_proc:
        skip("pid %d could not be given to another process (the machine "
             "forks too much)" % dead)
    # The pid now names B's process; the pidfd still names A's dead child.
    check(uid_line.split()[1] == str(e.b.pw_uid), uid_line)
    check(res["status"] == -ESRCH and not res["fd"], res)
    check(e.alive(), "the broker died")


@case
def clients_leaving_mid_request_leak_nothing():
    e = ENV
    before, held = e.settled_fds()
    check(not held, "before: the broker still holds %s" % held)
    t0 = time.time()
    st = as_user(e.a, churn, e.sock, 10000)
    took = time.time() - t0
    check(st == 0, st)
    # Every client gone: the broker holds for none of them (no socket,
    # pidfd or perf event left after 30 s) and as many fds as before.
    after, held = e.settled_fds()
    check(not held, "the broker still holds %s after 10,000 requests"
          % held)
    check(after == before, "broker fds %d before, %d after 10,000 requests"
          % (before, after))
    # Unread replies are the only ones that may go missing: every open
    # was logged as a grant, and no batch went unanswered.
    check("(event 8 of 8)" in e.log_text(), "no batch was granted")
    check(e.alive(), "the broker died")
    print("# 10,000 requests in %.1f s" % took)


@case
def zero_length_messages_drop_only_their_client():
    e = ENV
    before, held = e.settled_fds()
    check(not held, "before: the broker still holds %s" % held)
    log_before = e.log_text().count("malformed message of 0 bytes")
    res = as_user(e.a, zero_length, e.sock, 200)
    check(res == {"closed": 200, "kept_status": 0, "kept_fd": True}, res)
    after, held = e.settled_fds()          # as above
    check(not held, "the broker still holds %s after 200 empty messages"
          % held)
    check(after == before, "broker fds %d before, %d after 200 empty "
          "messages" % (before, after))
    logged = e.log_text().count("malformed message of 0 bytes") - log_before
    check(logged == 200, "%d of 200 empty messages logged" % logged)
    check(e.alive(), "the broker died")


@case
def refusals_say_why():
    e = ENV
    hint = ("hint: the broker's policy file decides (/etc/perfctr/"
            "perfctrd.conf unless perfctrd -c names another; see "
            "perfctrd.conf(5))")
    rows = [
        (e.a, ["-a", "-e", "task-clock"], EXIT["perm"],
         "perfex: cannot open event 'task-clock': the access broker "
         "refused it: CPU-wide targets (rule 'user-a')"),
        (e.a, ["-e", "task-clock,syscalls:sys_enter_getppid:uk"], 0, None),
        (e.a, ["-e", "task-clock,syscalls:sys_enter_read"], EXIT["tracefs"],
         "perfex: cannot read the id of tracepoint 'syscalls:sys_enter_read'"
         ": the access broker refused it: tracepoint not in the rule "
         "(rule 'user-a')"),
        (e.b, ["-e", "task-clock:k"], EXIT["perm"],
         "perfex: cannot open event 'task-clock:k': the access broker "
         "refused it: no rule for this user"),
    ]
    for user, args, code, first in rows:
        r = e.run_as(user, [PERFEX, "-x,"] + args + ["--", work(),
                                                     "getppid", "1"])
        check(r.returncode == code, "%s: exit %d: %s" % (args, r.returncode,
                                                         r.stderr))
        if first:
            lines = r.stderr.splitlines()
            check(lines[:2] == [first, hint], "%s: %s" % (args, r.stderr))
    # perfex record says the same.
    out = os.path.join(e.dir, "rec")
    os.makedirs(out, exist_ok=True)
    os.chmod(out, 0o777)
    r = e.run_as(e.a, [PERFEX, "record", "-o", os.path.join(out, "a.data"),
                       "-e", "task-clock:k", "--", work(), "getppid", "1"])
    check(r.returncode == EXIT["perm"] and r.stderr.splitlines()[:2] == [
        "perfex: cannot open event 'task-clock:k': the access broker "
        "refused it: kernel-mode sampling (rule 'user-a')", hint], r.stderr)
    # Without the broker the kernel's answer is all there is.
    r = e.run_as(e.a, [PERFEX, "-a", "-e", "task-clock", "--", work(),
                       "getppid", "1"], PERFCTR_NO_BROKER="1")
    check(r.returncode == EXIT["perm"] and "broker" not in r.stderr, r.stderr)


@case
def user_without_rule_gets_nothing():
    e = ENV
    r = e.run_as(e.b, [PERFEX, "-e", "syscalls:sys_enter_getppid", "--",
                       work(), "getppid", "10"])
    check(r.returncode != 0, r.stdout + r.stderr)
    check("denied: uid %d (%s)" % (e.b.pw_uid, USER_B) in e.log_text() and
          "no rule for this user" in e.log_text(), e.log_text()[-2000:])


@case
def bad_reload_keeps_the_policy():
    e = ENV
    with open(e.conf, "a") as f:
        f.write("bogus_key = 1\n")
    e.broker.send_signal(signal.SIGHUP)
    line = len(POLICY_TEXT.split("\n"))
    for _ in range(100):
        if "reload failed" in e.log_text():
            break
        time.sleep(0.05)
    log = e.log_text()
    check("%s:%d: unknown key 'bogus_key'" % (e.conf, line) in log, log[-1500:])
    check("keeping the policy loaded before" in log, log[-1500:])
    r = e.run_as(e.a, [PERFEX, "-x,", "-e", "syscalls:sys_enter_getppid:uk",
                       "--", work(), "getppid", "100"])
    check(r.returncode == 0 and
          r.stderr.startswith("%d," % (100 + exit_calls())), r.stderr)
    with open(e.conf, "w") as f:
        f.write(POLICY_TEXT % USER_A)
    e.broker.send_signal(signal.SIGHUP)
    for _ in range(100):
        if "policy reloaded" in e.log_text():
            break
        time.sleep(0.05)
    check("policy reloaded" in e.log_text(), e.log_text()[-1500:])


def main():
    try:
        ENV.setup()
    except Exception as ex:             # noqa: B902 -- a skip or a failure
        ENV.teardown()
        name = "test_broker.py/setup"
        kind = "skip" if type(ex).__name__ == "Skip" else "FAIL"
        print("%s %s: %s" % (kind, name, ex), flush=True)
        raise SystemExit(0 if kind == "skip" else 1)
    try:
        run_cases()
    finally:
        ENV.teardown()


main()
