# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Debian's prometheus for the fleet tests (test_fleet*.py): a server on a
free loopback port with the configuration text given, queried through its
HTTP API, stopped and its directory removed at close.

A request that cannot reach the server fails the case with what the
server became (running, or its exit status or signal, and whether the
kernel killed it for memory) and the end of its log, which close() then
keeps: a failure explains itself on a machine that is gone."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import traceback
import urllib.error
import urllib.parse
import urllib.request

from pctest import check, skip
from stathelp import wait_for


def tool(name):
    path = shutil.which(name)
    if not path:
        skip("%s is not installed (apt-get install prometheus)" % name)
    return path


def major_version():
    """Prometheus's major version (2 or 3: ranges are left-open from 3)."""
    r = subprocess.run([tool("prometheus"), "--version"], capture_output=True,
                       text=True, timeout=60)
    m = re.search(r"version (\d+)\.", r.stdout + r.stderr)
    check(m, r.stdout + r.stderr)
    return int(m.group(1))


def free_port(addr="127.0.0.1"):
    with socket.socket() as sock:
        sock.bind((addr, 0))
        return sock.getsockname()[1]


class Prometheus:
    """prometheus with CONFIG (text) on 127.0.0.1, started at once; ready()
    waits for it.  ARGS: more flags."""

    def __init__(self, name, config, *args):
        path = tool("prometheus")
        self.name = name
        self.dir = tempfile.mkdtemp(prefix="perfctr-prom-%s-" % name)
        self.config = os.path.join(self.dir, "prometheus.yml")
        with open(self.config, "w") as f:
            f.write(config)
        self.port = free_port()
        self.addr = "127.0.0.1:%d" % self.port
        self.logpath = os.path.join(self.dir, "log")
        self.log = open(self.logpath, "w")
        self.failed = False
        self.p = subprocess.Popen(
            [path, "--config.file=" + self.config,
             "--storage.tsdb.path=" + os.path.join(self.dir, "data"),
             "--web.listen-address=" + self.addr] + list(args),
            stdout=self.log, stderr=subprocess.STDOUT, cwd=self.dir)

    def ready(self):
        def up():
            if self.p.poll() is not None:
                self.fail("exited before it was ready")
            try:
                with urllib.request.urlopen("http://%s/-/ready" % self.addr,
                                            timeout=2) as r:
                    return r.status == 200
            except OSError:
                return False
        try:
            wait_for(up, timeout=60,
                     what="prometheus %s to be ready" % self.name)
        except Exception:
            self.failed = True
            self.dump()
            raise

    def logtext(self):
        with open(self.logpath) as f:
            return f.read()[-3000:]

    def state(self):
        """What the process is now: running, or how it ended (and, when
        killed, whether the kernel's log says the OOM killer did it)."""
        rc = self.p.poll()
        if rc is None:
            return "running (pid %d)" % self.p.pid
        if rc >= 0:
            return "exited with status %d (pid %d)" % (rc, self.p.pid)
        try:
            sig = signal.Signals(-rc).name
        except ValueError:
            sig = "signal %d" % -rc
        why = ""
        if -rc == signal.SIGKILL:
            r = subprocess.run(["dmesg"], capture_output=True, text=True)
            if re.search(r"Killed process %d\b" % self.p.pid, r.stdout):
                why = ", by the OOM killer (dmesg)"
        return "killed by %s%s (pid %d)" % (sig, why, self.p.pid)

    def dump(self):
        """The end of the log on stderr (tests/run shows it on a failure)."""
        sys.stderr.write("prometheus %s at %s, %s; its log ends:\n%s\n"
                         % (self.name, self.addr, self.state(),
                            self.logtext()[-2500:]))

    def fail(self, what):
        """Fail the case: WHAT happened to this server, said with its
        state, the test's line that asked and its log's last lines."""
        self.failed = True
        self.dump()
        here = [f for f in traceback.extract_stack()
                if os.path.basename(f.filename).startswith("test_")]
        where = " (%s:%d)" % (os.path.basename(here[-1].filename),
                              here[-1].lineno) if here else ""
        tail = self.logtext().strip().splitlines()[-6:]
        check(False, "prometheus %s at %s: %s%s; it is %s; its log ends: %s"
              % (self.name, self.addr, what, where, self.state(),
                 " / ".join(tail)))

    def api(self, path, **params):
        url = "http://%s/api/v1/%s?%s" % (self.addr, path,
                                          urllib.parse.urlencode(params))
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                doc = json.loads(r.read())
        except urllib.error.HTTPError as e:
            self.fail("%s: HTTP %d: %s" % (path, e.code, e.read()[:500]))
        except OSError as e:
            self.fail("%s: %s" % (path, getattr(e, "reason", e)))
        check(doc["status"] == "success", (self.name, doc))
        return doc["data"]

    def query(self, q, at=None):
        """The result of instant query Q (now, or at time AT, seconds)."""
        params = {"query": q}
        if at is not None:
            params["time"] = "%.3f" % at
        return self.api("query", **params)["result"]

    def by(self, label, q):
        """{value of LABEL: value} of instant query Q's samples."""
        return {r["metric"].get(label): float(r["value"][1])
                for r in self.query(q)}

    def close(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.log.close()
        if not self.failed:
            shutil.rmtree(self.dir, ignore_errors=True)
            return
        # The log kept for whoever looks next; the samples are not.
        shutil.rmtree(os.path.join(self.dir, "data"), ignore_errors=True)
        sys.stderr.write("prometheus %s: its log is kept in %s\n"
                         % (self.name, self.logpath))
