# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Debian's prometheus for the fleet tests (test_fleet*.py): a server on a
free loopback port with the configuration text given, queried through its
HTTP API, stopped and its directory removed at close."""
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
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
        self.log = open(os.path.join(self.dir, "log"), "w")
        self.p = subprocess.Popen(
            [path, "--config.file=" + self.config,
             "--storage.tsdb.path=" + os.path.join(self.dir, "data"),
             "--web.listen-address=" + self.addr] + list(args),
            stdout=self.log, stderr=subprocess.STDOUT, cwd=self.dir)

    def ready(self):
        def up():
            check(self.p.poll() is None, (self.name, self.logtext()))
            try:
                with urllib.request.urlopen("http://%s/-/ready" % self.addr,
                                            timeout=2) as r:
                    return r.status == 200
            except OSError:
                return False
        wait_for(up, timeout=60, what="prometheus %s to be ready" % self.name)

    def logtext(self):
        with open(os.path.join(self.dir, "log")) as f:
            return f.read()[-3000:]

    def api(self, path, **params):
        url = "http://%s/api/v1/%s?%s" % (self.addr, path,
                                          urllib.parse.urlencode(params))
        with urllib.request.urlopen(url, timeout=10) as r:
            doc = json.loads(r.read())
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
        shutil.rmtree(self.dir, ignore_errors=True)
