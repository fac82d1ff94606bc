# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""A headless chromium for the viewer tests, driven through Debian's
chromedriver (package chromium-driver) over the W3C WebDriver protocol:
plain JSON over HTTP on loopback, so the tests need nothing beyond
Python's standard library and the two Debian packages.

    with Browser() as b:            # skips with the reason when it cannot
        b.open("file:///...")
        b.wait_for("return document.title")
        b.click(b.find("#id"))

The speedscope app is the npm package installed by scripts/install-deps
under tests/browser/node_modules (nothing is fetched while a test runs).
"""
import base64
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

from pctest import TOP, skip

CHROMIUM = os.environ.get("PERFCTR_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("PERFCTR_CHROMEDRIVER", "/usr/bin/chromedriver")
SPEEDSCOPE = os.path.join(TOP, "tests", "browser", "node_modules",
                          "speedscope", "dist", "release")
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


def require_speedscope():
    """The app's directory; skips when npm has not installed it."""
    if not os.path.exists(os.path.join(SPEEDSCOPE, "index.html")):
        skip("the speedscope app is not installed "
             "(scripts/install-deps installs it with npm)")
    return SPEEDSCOPE


def speedscope_schema():
    """The file-format schema the speedscope package ships."""
    require_speedscope()
    with open(os.path.join(SPEEDSCOPE, "file-format-schema.json")) as f:
        return json.load(f)


def speedscope_url(profile_js):
    """The app opening @profile_js, a script that calls the app's
    speedscope.loadFileFromBase64() (what the package's own command line
    does for a file), over file:// with no server at all."""
    return "file://%s/index.html#localProfilePath=%s" % (
        require_speedscope(), profile_js)


def write_loader(profile, js_path):
    """A script that hands the file @profile to the app (see
    speedscope_url())."""
    with open(profile, "rb") as f:
        data = base64.b64encode(f.read()).decode()
    with open(js_path, "w") as f:
        f.write("speedscope.loadFileFromBase64(%s, %s)\n" % (
            json.dumps(os.path.basename(profile)), json.dumps(data)))
    return js_path


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebDriverError(Exception):
    pass


class Browser:
    """One chromium session; the driver and the browser end with it."""

    def __init__(self, width=1400, height=900, load="normal"):
        """@load: WebDriver's page load strategy ("normal": open()
        returns once the page has loaded; "none": at once)."""
        self.size = (width, height)
        self.load = load
        self.driver = None
        self.session = None
        self.profile_dir = None

    def __enter__(self):
        for path in (CHROMIUM, CHROMEDRIVER):
            if not os.access(path, os.X_OK):
                skip("%s is missing (apt-get install chromium "
                     "chromium-driver; scripts/install-deps does)" % path)
        port = _free_port()
        self.base = "http://127.0.0.1:%d" % port
        self.driver = subprocess.Popen(
            [CHROMEDRIVER, "--port=%d" % port],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            self._wait_driver()
            self.profile_dir = tempfile.mkdtemp(prefix="perfctr-chromium-")
            args = ["--headless=new", "--no-sandbox",
                    "--disable-dev-shm-usage", "--no-first-run",
                    # speedscope draws with WebGL: software GL, as a
                    # machine without a GPU has no other.
                    "--enable-unsafe-swiftshader",
                    "--window-size=%d,%d" % self.size,
                    "--user-data-dir=" + self.profile_dir]
            caps = {"capabilities": {"alwaysMatch": {
                "browserName": "chrome", "pageLoadStrategy": self.load,
                # A page busy loading a large profile answers late.
                "timeouts": {"script": 300000, "pageLoad": 300000},
                "goog:chromeOptions": {"binary": CHROMIUM, "args": args},
                # A page's prompt waits for the test to answer it.
                "unhandledPromptBehavior": "ignore",
                "goog:loggingPrefs": {"browser": "ALL"}}}}
            try:
                value = self._call("POST", "/session", caps)
            except WebDriverError as e:
                skip("chromium cannot start headless: %s" % str(e)[:300])
            self.session = value["sessionId"]
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        if self.session:
            try:
                self._call("DELETE", "/session/" + self.session)
            except (WebDriverError, OSError):
                pass
            self.session = None
        if self.driver:
            self.driver.terminate()
            try:
                self.driver.wait(10)
            except subprocess.TimeoutExpired:
                self.driver.kill()
                self.driver.wait()
            self.driver = None
        if self.profile_dir:
            shutil.rmtree(self.profile_dir, ignore_errors=True)
            self.profile_dir = None
        return False

    def _wait_driver(self):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.driver.poll() is not None:
                skip("chromedriver exited at start (status %d)"
                     % self.driver.returncode)
            try:
                self._call("GET", "/status", timeout=2)
                return
            except (OSError, WebDriverError):
                time.sleep(0.05)
        skip("chromedriver did not answer within 20 s")

    def _call(self, method, path, body=None, timeout=60):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data,
                                     method=method)
        req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                answer = json.load(r)
        except urllib.error.HTTPError as e:
            try:
                answer = json.load(e)
            except ValueError:
                raise WebDriverError("HTTP %d" % e.code)
            v = answer.get("value") or {}
            raise WebDriverError("%s: %s" % (v.get("error"),
                                             v.get("message", "")))
        return answer.get("value")

    def _s(self, path=""):
        return "/session/%s%s" % (self.session, path)

    def open(self, url):
        self._call("POST", self._s("/url"), {"url": url})

    def js(self, script, *args, timeout=60):
        """The value of @script (a function body: 'return ...'), run in
        the page with @args as arguments[] (once the page's own script
        lets it: up to @timeout seconds)."""
        return self._call("POST", self._s("/execute/sync"),
                          {"script": script, "args": list(args)},
                          timeout=timeout)

    def wait_for(self, script, *args, timeout=30):
        """@script's value once it is truthy; WebDriverError after
        @timeout seconds."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.js(script, *args, timeout=timeout + 330)
            if value:
                return value
            if time.monotonic() > deadline:
                raise WebDriverError("timed out waiting for: " + script)
            time.sleep(0.05)

    def find(self, css):
        v = self._call("POST", self._s("/element"),
                       {"using": "css selector", "value": css})
        return v[ELEMENT]

    def find_all(self, css):
        v = self._call("POST", self._s("/elements"),
                       {"using": "css selector", "value": css})
        return [e[ELEMENT] for e in v]

    def click(self, element):
        self._call("POST", self._s("/element/%s/click" % element), {})

    def type(self, element, text):
        self._call("POST", self._s("/element/%s/value" % element),
                   {"text": text})

    def keys(self, *keys, modifier=None):
        """Key presses sent to the focused page (a real keyboard's
        events); @modifier (e.g. "\\ue009", Control) held around them."""
        actions = []
        if modifier:
            actions.append({"type": "keyDown", "value": modifier})
        for k in keys:
            actions += [{"type": "keyDown", "value": k},
                        {"type": "keyUp", "value": k}]
        if modifier:
            actions.append({"type": "keyUp", "value": modifier})
        self._call("POST", self._s("/actions"), {"actions": [
            {"type": "key", "id": "keyboard", "actions": actions}]})
        self._release()

    def _release(self):
        # The keys were released by the actions themselves; this only
        # clears the driver's state, which it refuses while a prompt
        # the keys opened waits (the next prompt call answers it).
        try:
            self._call("DELETE", self._s("/actions"))
        except WebDriverError as e:
            if "unexpected alert open" not in str(e):
                raise

    def click_at(self, x, y):
        """A real mouse click at viewport position (@x, @y)."""
        self._call("POST", self._s("/actions"), {"actions": [
            {"type": "pointer", "id": "mouse",
             "parameters": {"pointerType": "mouse"},
             "actions": [
                 {"type": "pointerMove", "x": int(x), "y": int(y),
                  "origin": "viewport"},
                 {"type": "pointerDown", "button": 0},
                 {"type": "pointerUp", "button": 0}]}]})
        self._release()

    def alert_type(self, text):
        """Types @text into the open prompt (window.prompt)."""
        self._call("POST", self._s("/alert/text"), {"text": text})

    def alert_accept(self):
        self._call("POST", self._s("/alert/accept"), {})

    def screenshot(self, path):
        png = self._call("GET", self._s("/screenshot"))
        with open(path, "wb") as f:
            f.write(base64.b64decode(png))

    def console(self):
        """The page's console messages so far (for a failure's detail)."""
        try:
            return self._call("POST", self._s("/se/log"), {"type": "browser"})
        except WebDriverError:
            return []
