# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Helpers of the perfex serve tests (test_serve*.py): perfex serve started
on a free loopback port and stopped, HTTP requests to it, and the samples
of its text format."""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import urllib.error
import urllib.request

from pctest import BUILD, check, require_root, skip
from stathelp import wait_for

SERVE = os.path.join(BUILD, "perfex-serve")


def has_http():
    """Whether perfex-serve links libmicrohttpd (else it can only --once)."""
    if not shutil.which("ldd"):
        return True
    r = subprocess.run(["ldd", SERVE], capture_output=True, text=True)
    return "libmicrohttpd" in r.stdout


def need_http():
    if not has_http():
        skip("perfex-serve was built without libmicrohttpd "
             "(apt-get install libmicrohttpd-dev, then make)")


class Serve:
    """perfex serve ARGS in the background on a free loopback port (or on
    LISTEN, ADDR:PORT)."""

    def __init__(self, *args, listen="127.0.0.1:0"):
        require_root()
        self.host = listen.rsplit(":", 1)[0]
        self.log = tempfile.NamedTemporaryFile("r", suffix=".log")
        self.p = subprocess.Popen([os.path.join(BUILD, "perfex"), "serve",
                                   "--listen", listen] + list(args),
                                  stdout=subprocess.DEVNULL,
                                  stderr=open(self.log.name, "w"))
        self.port = None

        def started():
            m = re.search(r"serving http://%s:(\d+)/metrics"
                          % re.escape(self.host), self.text())
            if m:
                self.port = int(m.group(1))
            check(self.p.poll() is None, ("perfex serve exited",
                                          self.p.returncode, self.text()))
            return self.port
        wait_for(started, timeout=30, what="perfex serve to listen")

    def text(self):
        with open(self.log.name) as f:
            return f.read()

    def url(self, path):
        return "http://%s:%d%s" % (self.host, self.port, path)

    def get(self, path="/metrics", accept=None, timeout=10, binary=False):
        """(status, Content-Type, body) of GET PATH; the body as text
        unless BINARY."""
        req = urllib.request.Request(self.url(path))
        if accept:
            req.add_header("Accept", accept)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                body = r.read()
                return (r.status, r.headers.get("Content-Type"),
                        body if binary else body.decode())
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get("Content-Type"), e.read().decode()

    def metrics(self):
        status, _, body = self.get()
        check(status == 200, (status, body))
        return body

    def stop(self, sig=signal.SIGTERM):
        if self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        return self.p.returncode

    def close(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        self.log.close()


def samples(text, name, **labels):
    """{labels-dict-as-tuple: value} of the samples NAME{...} matching
    LABELS."""
    out = {}
    pattern = re.compile(r"^%s(?:\{(.*)\})? (\S+)$" % re.escape(name))
    for line in text.splitlines():
        if not line.startswith(name):
            continue        # megabytes of other families: skipped fast
        m = pattern.match(line)
        if not m:
            continue
        got = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(1) or ""))
        if all(got.get(k) == v for k, v in labels.items()):
            out[tuple(sorted(got.items()))] = float(m.group(2))
    return out


def total(text, name, **labels):
    return sum(samples(text, name, **labels).values())


def cgroups_of(text):
    """The cgroups of TEXT's perfex_events_total samples, sorted."""
    return sorted({dict(k)["cgroup"] for k in
                   samples(text, "perfex_events_total")
                   if "cgroup" in dict(k)})


def finish(s, cg, members=(), prom=None):
    """A serve case's finally: MEMBERS killed, PROM closed, perfex serve S
    (when started) stopped with status 0 and closed, CG's cgroups
    removed."""
    for m in members:
        m.close()
    if prom:
        prom.close()
    if s:
        check(s.stop() == 0, s.text())
        s.close()
    cg.close()
