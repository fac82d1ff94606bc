# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The perfex dispatcher: --version, help, help of a subcommand, and the
exit code of an unknown subcommand (src/perfex/perfex.h)."""
import os
import re

from pctest import EXIT, TOP, case, check, perfex, run_cases, skip

SUBCOMMANDS = ("stat", "list", "info", "record", "report", "script", "serve",
               "inject", "annotate")


def makefile_version():
    with open(os.path.join(TOP, "Makefile")) as f:
        m = re.search(r"^VERSION\s*:=\s*(\S+)", f.read(), re.M)
    return m.group(1)


@case
def version():
    r = perfex("--version")
    check(r.returncode == 0, r)
    check(r.stdout == "perfex %s\n" % makefile_version(), r.stdout)


@case
def help_lists_every_subcommand():
    r = perfex("help")
    check(r.returncode == 0, r)
    check(r.stdout.startswith("usage: perfex"), r.stdout)
    for sub in SUBCOMMANDS:
        check(re.search(r"^  %s\s+\S" % sub, r.stdout, re.M), (sub, r.stdout))
    check(r.stderr == "", r.stderr)


@case
def help_names_regions():
    # --regions is a mode of its own, not a subcommand: the overview names
    # it, and its own --help gives its options.
    r = perfex("help")
    check(re.search(r"^\s+perfex --regions \[-e EVENTS\] \[-o FILE\]", r.stdout,
                    re.M), r.stdout)
    r = perfex("--regions", "--help")
    check(r.returncode == 0, r)
    check(r.stdout.startswith("usage: perfex --regions"), r.stdout)
    for opt in ("-e EVENTS", "-o FILE"):
        check(opt in r.stdout, (opt, r.stdout))


@case
def help_of_unknown_subcommand():
    r = perfex("help", "frobnicate")
    check(r.returncode == EXIT["usage"], r)
    check(r.stderr.startswith("perfex: unknown subcommand 'frobnicate'\n"), r.stderr)
    check("usage: perfex" in r.stderr, r.stderr)
    check(r.stdout == "", r.stdout)


@case
def help_sub_equals_sub_help():
    for sub in ("info", "list"):
        a = perfex("help", sub)
        b = perfex(sub, "--help")
        check(a.returncode == 0 and b.returncode == 0, (sub, a, b))
        check(a.stdout == b.stdout, (sub, a.stdout, b.stdout))
        check(a.stdout.startswith("usage: perfex %s" % sub), (sub, a.stdout))


@case
def unknown_subcommand_is_a_command_to_count():
    # Without a subcommand perfex counts: an unknown word is the command,
    # and a command that does not exist exits 127 as in the shell.
    r = perfex("frobnicate-no-such-command")
    check(r.returncode == 127, r)
    check("frobnicate-no-such-command" in r.stderr, r.stderr)


run_cases()
