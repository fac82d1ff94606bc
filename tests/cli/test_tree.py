# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The source tree's own rules, checked on the files git tracks: every
source file carries the project's SPDX line, the licence texts it names are
shipped, and perfctr.pc states the licence.  Each failure names the files."""
import fnmatch
import os
import re
import shutil
import subprocess

from pctest import BUILD, TOP, case, check, run_cases, skip

EXPRESSION = "LGPL-2.1 OR BSD-2-Clause"

# Files that are not source and carry no SPDX line, and why: they are
# covered by LICENSE as a whole.  Everything else git tracks is source.
EXEMPT = [
    ("LICENSE", "the licence statement itself"),
    ("LICENSES/*", "licence texts, reproduced verbatim"),
    ("*.md", "prose documentation"),
    ("docs/*.[1-8]", "man pages (roff prose)"),
    ("tests/fixtures/*", "copies of kernel files (/proc, sysfs, tracefs)"),
    ("tests/fuzz/corpus/*", "binary fuzzer seeds"),
    (".gitignore", "a list of build products"),
]

# The comment each kind of source file writes its SPDX line in.
C_LINES = ("/* SPDX-License-Identifier: %s */" % EXPRESSION,
           "// SPDX-License-Identifier: %s" % EXPRESSION)
HASH_LINE = "# SPDX-License-Identifier: %s" % EXPRESSION
# An SPDX line is a comment that begins with the tag (this file's strings
# that hold the tag are not).
SPDX_LINE = re.compile(r"^\s*(#|//|/\*)\s*SPDX-License-Identifier:")


def tracked_files():
    if not os.path.exists(os.path.join(TOP, ".git")):
        skip("%s is not a git checkout: the tracked files are unknown" % TOP)
    if not shutil.which("git"):
        skip("git is not installed")
    r = subprocess.run(["git", "-C", TOP, "ls-files", "-z"],
                       capture_output=True, text=True)
    check(r.returncode == 0, r.stderr)
    return [p for p in r.stdout.split("\0") if p]


def exempt(path):
    return any(fnmatch.fnmatch(path, pat) for pat, _ in EXEMPT)


def spdx_problem(path):
    """None when PATH has its one SPDX line where it belongs, else why not."""
    try:
        with open(os.path.join(TOP, path), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except UnicodeDecodeError:
        return "not text (exempt it in EXEMPT if it is data)"
    except FileNotFoundError:
        return None         # deleted in the work tree, not yet committed
    count = sum(bool(SPDX_LINE.match(l)) for l in lines)
    if count == 0:
        return "no SPDX line"
    if count > 1:
        return "%d SPDX lines" % count
    first = 1 if lines and lines[0].startswith("#!") else 0
    line = lines[first] if len(lines) > first else ""
    if path.endswith((".c", ".h", ".map")):
        want = C_LINES
    else:
        want = (HASH_LINE,)
    if line not in want:
        return "line %d is not %s" % (first + 1, " or ".join(
            repr(w) for w in want))
    return None


@case
def every_source_file_has_its_spdx_line():
    bad = []
    for path in tracked_files():
        if exempt(path):
            continue
        why = spdx_problem(path)
        if why:
            bad.append("%s (%s)" % (path, why))
    check(not bad, "%d source files without the line '%s': %s"
          % (len(bad), EXPRESSION, "; ".join(bad)))


@case
def the_licence_texts_are_shipped():
    licence = open(os.path.join(TOP, "LICENSE")).read()
    check(EXPRESSION in licence, "LICENSE does not state " + EXPRESSION)
    for name in EXPRESSION.split(" OR "):
        path = os.path.join(TOP, "LICENSES", name)
        check(os.path.isfile(path), "LICENSES/%s is missing" % name)
        check("LICENSES/" + name in licence,
              "LICENSE does not point at LICENSES/" + name)
    lgpl = open(os.path.join(TOP, "LICENSES", "LGPL-2.1")).read()
    check("Version 2.1, February 1999" in lgpl, "LICENSES/LGPL-2.1")
    bsd = open(os.path.join(TOP, "LICENSES", "BSD-2-Clause")).read()
    check("Copyright (c) the perfctr authors" in bsd, "LICENSES/BSD-2-Clause")
    readme = open(os.path.join(TOP, "README.md")).read()
    check(EXPRESSION in readme, "README.md does not state the licence")


@case
def pkg_config_file_states_the_licence():
    pc = os.path.join(BUILD, "perfctr.pc")
    if not os.path.exists(pc):
        skip("%s is not built (make all)" % pc)
    fields = dict(l.split(": ", 1) for l in open(pc).read().splitlines()
                  if ": " in l and "=" not in l.split(": ", 1)[0])
    check(fields.get("License") == EXPRESSION, fields)
    if not shutil.which("pkg-config"):
        skip("pkg-config is not installed")
    # The field must not upset a pkg-config that predates it.
    env = dict(os.environ, PKG_CONFIG_PATH=BUILD)
    r = subprocess.run(["pkg-config", "--validate", "perfctr"],
                       capture_output=True, text=True, env=env)
    check(r.returncode == 0 and not r.stderr, r)
    r = subprocess.run(["pkg-config", "--modversion", "perfctr"],
                       capture_output=True, text=True, env=env)
    check(r.returncode == 0 and r.stdout.strip() == fields["Version"], r)


run_cases()
