#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The seeds and the dictionary of the argv fuzzer (fuzz_argv.c):

    tests/fuzz/argv-seeds.py [BUILD]      BUILD: the build dir (build)

Seeds: every perfex(...) call of tests/cli/*.py (its literal strings and
lists; what the test computes is "x"), one file per distinct command line,
the arguments each ended by a NUL byte, in tests/fuzz/corpus/fuzz_argv/.
Dictionary: each subcommand and every option of each subcommand's --help
(the option table), in tests/fuzz/fuzz_argv.dict.  Run it again after
adding tests or options; the files it writes are committed."""
import ast
import glob
import hashlib
import os
import re
import subprocess
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CORPUS = os.path.join(TOP, "tests", "fuzz", "corpus", "fuzz_argv")
DICT = os.path.join(TOP, "tests", "fuzz", "fuzz_argv.dict")
SUBCOMMANDS = ["stat", "record", "report", "script", "list", "info", "serve",
               "help", "--regions", "diff", "top", "annotate"]
# Values of the kinds the options take, and the hostile ones.
VALUES = ["0", "1", "-1", "10", "100%", "0-3,6", "a,b", ",", "", "-",
          "--", "18446744073709551616", "4294967296", "1:task-clock",
          "task-clock", "{task-clock,page-faults}", "syscalls:sys_enter_read",
          "dwarf,8192", "fp", "perf", "perfex", "comm,dso,sym", "a=b",
          "127.0.0.1:0", "/dev/null"]


def literal_args(call):
    """The arguments of CALL as strings: a value computed by the test
    (a path, the workload) is "x", a computed list is left out."""
    out = []
    for a in call.args:
        node = a.value if isinstance(a, ast.Starred) else a
        try:
            v = ast.literal_eval(node)
        except ValueError:
            if not isinstance(a, ast.Starred):
                out.append("x")
            continue
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v):
            out.extend(v)
    return out


def seeds():
    found = set()
    for path in sorted(glob.glob(os.path.join(TOP, "tests", "cli", "*.py"))):
        tree = ast.parse(open(path).read(), path)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "perfex"):
                args = literal_args(node)
                if args:
                    found.add(tuple(args))
    return sorted(found)


def options(build):
    perfex = os.path.join(build, "perfex")
    names = set()
    for sub in SUBCOMMANDS:
        if sub in ("help",):
            continue
        args = [sub, "--help"] if sub != "stat" else ["--help"]
        if sub == "serve":
            args = [os.path.join(build, "perfex-serve"), "--help"]
            out = subprocess.run(args, capture_output=True, text=True).stdout
        else:
            out = subprocess.run([perfex] + args, capture_output=True,
                                 text=True).stdout
        for m in re.finditer(r"(?<![\w-])(--?[A-Za-z][\w-]*)", out):
            names.add(m.group(1))
    return sorted(names)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(TOP, "build")
    os.makedirs(CORPUS, exist_ok=True)
    for old in glob.glob(os.path.join(CORPUS, "*")):
        os.unlink(old)
    lines = seeds()
    for args in lines:
        data = b"".join(a.encode() + b"\0" for a in args)
        name = hashlib.sha1(data).hexdigest()[:16]
        with open(os.path.join(CORPUS, name), "wb") as f:
            f.write(data)
    with open(DICT, "w") as f:
        f.write("# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause\n")
        f.write("# perfex's subcommands, options and values, each ended by "
                "the NUL that ends\n# an argument (argv-seeds.py writes "
                "this file)\n")
        for word in SUBCOMMANDS + options(build) + VALUES:
            esc = word.replace("\\", "\\\\").replace('"', '\\"')
            f.write('"%s\\x00"\n' % esc)
    print("%d seeds in %s, dictionary %s" % (len(lines), CORPUS, DICT))


main()
