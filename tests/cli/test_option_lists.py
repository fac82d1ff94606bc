# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The options that take a list or may be repeated, given an empty value,
an empty item, or an empty value after a good one: each is refused with
its message and exit status, or (where perf's rule gives an empty value a
meaning) accepted, and none of them crashes (`-M a -M ''` freed the -M
list twice)."""
import os
import tempfile

from pctest import EXIT, TOP, case, check, perfex, run_cases
from stathelp import PERF_EXIT

OUT = os.path.join(tempfile.gettempdir(), "perfex-option-lists.data")

# (arguments, exit status, text of the first error line or None)
ROWS = [
    # stat -M: refused before the list grows, whatever came before it.
    (["-M", "", "--", "true"], "usage", "option '-M' needs metric"),
    (["-M", "a", "-M", "", "--", "true"], "usage", "option '-M' needs metric"),
    (["-M", "a", "-M", "b", "-M", "", "--", "true"], "usage",
     "option '-M' needs metric"),
    # stat -e: the event parser refuses an empty one, first or later.
    (["-e", "", "--", "true"], "event", "empty event specification"),
    (["-e", "task-clock", "-e", "", "--", "true"], "event",
     "empty event specification"),
    (["-e", "task-clock,", "--", "true"], "event", None),
    # --filter belongs to the -e before it.
    (["--filter", "", "--", "true"], "usage", "needs an -e before it"),
    # -G: one name before the events, a list after them.
    (["-a", "-G", "", "-e", "task-clock", "--", "true"], "usage",
     "before any -e takes one cgroup name"),
    (["-a", "-G", "x", "-G", "y", "--", "true"], "usage",
     "is given once before the events"),
    (["-a", "-G", "x", "-e", "task-clock", "-G", "y", "--", "true"], "usage",
     "cannot follow a -G given before the events"),
    # --for-each-cgroup: no empty name anywhere in the list.
    (["-a", "--for-each-cgroup", "", "--", "true"], "usage",
     "an empty one in ''"),
    (["-a", "--for-each-cgroup", "a,", "--", "true"], "usage",
     "an empty one in 'a,'"),
    (["-a", "--for-each-cgroup", "a", "--for-each-cgroup", ",b", "--", "true"],
     "usage", "an empty one in ',b'"),
    # --metrics-file goes with -M; -C, -x need a value.
    (["--metrics-file", "", "--", "true"], "usage",
     "--metrics-file, --metric-no-merge and --metric-no-group go with -M"),
    (["-C", "", "--", "true"], "usage", "option '-C' needs a CPU list"),
    (["-x", "", "--", "true"], "usage", "option '-x' needs a separator"),
    (["--switch-after", "", "--", "true"], "usage", "expects N:EVENT"),
    (["--tree-limit", "", "--", "true"], "usage", "expects a count of rows"),
    # record
    (["record", "-o", OUT, "-e", "", "--", "true"], "event",
     "empty event specification"),
    (["record", "-o", OUT, "-e", "task-clock", "-e", "", "--", "true"],
     "event", "empty event specification"),
    (["record", "-o", OUT, "-G", "", "--", "true"], "usage",
     "before the -e takes one cgroup name"),
    (["record", "-o", OUT, "-a", "-G", "x", "-G", "y", "--", "true"], "usage",
     "is given once before the -e"),
    # report -s: an empty key, alone or in a list.
    (["report", "-i", "/dev/null", "-s", ""], "usage", "sort key ''"),
    (["report", "-i", "/dev/null", "-s", "comm,,dso"], "usage",
     "sort key '' in 'comm,,dso'"),
    (["report", "-i", "/dev/null", "-s", "comm,comm"], "usage",
     "repeated sort key"),
    # --regions -e
    (["--regions", "-e", "", "--", "true"], "usage",
     "option '-e' needs events"),
    (["--regions", "-e", "task-clock", "-o", "", "--", "true"], "usage",
     "option '-o' needs a file name"),
]


@case
def empty_and_repeated_list_values():
    for args, code, text in ROWS:
        r = perfex(*args)
        check(r.returncode == PERF_EXIT[code], (args, r.returncode, r.stderr))
        first = r.stderr.splitlines()[0] if r.stderr else ""
        check(first.startswith("perfex: "), (args, r.stderr))
        check(text is None or text in r.stderr, (args, text, r.stderr))
        check("Sanitizer" not in r.stderr, (args, r.stderr))


@case
def repeated_values_add_up():
    # -e given twice counts both; -M and --metrics-file given twice are
    # joined (the metric parser's own tests cover their content).
    r = perfex("-x", ";", "-e", "task-clock", "-e", "page-faults", "--",
               "true")
    check(r.returncode == 0, r)
    names = [l.split(";")[2] for l in r.stderr.splitlines() if ";" in l]
    check(names == ["task-clock", "page-faults"], (names, r.stderr))



@case
def dry_run_stops_after_the_options():
    # The fuzzer's hook (src/perfex/options.h): the options are parsed and
    # checked, then each subcommand returns 0 without running anything.
    env = dict(os.environ, PERFEX_DRY_RUN="1")
    with tempfile.TemporaryDirectory() as d:
        mark = os.path.join(d, "ran")
        out = os.path.join(d, "out")
        for args in (["-e", "task-clock", "-o", out, "--", "touch", mark],
                     ["record", "-o", out, "--", "touch", mark],
                     ["--regions", "-o", out, "--", "touch", mark],
                     ["report", "-i", mark], ["script", "-i", mark],
                     ["inject", "-i", mark, "-o", out],
                     ["diff", mark, mark, "--flame", out],
                     ["annotate", "-i", mark, "hot"],
                     ["report", "-i", mark, "--annotate", "hot"],
                     ["list"], ["info"], ["serve", "--once"],
                     ["top", "-p", "1", "-n", "1"]):
            r = perfex(*args, env=env)
            check(r.returncode == 0 and r.stdout == "" and r.stderr == "",
                  (args, r))
            check(not os.listdir(d), (args, os.listdir(d)))
        r = perfex("-M", "a", "-M", "", "--", "true", env=env)
        check(r.returncode == PERF_EXIT["usage"], r)



@case
def exit_statuses_leave_the_signals_alone():
    # perfex's own failures are a block above every 128 + signal status
    # (SIGRTMAX is 64), the shell's 126 and 127 kept; --help and perfex(1)
    # give the same numbers as pctest.EXIT.
    own = [v for k, v in EXIT.items() if k not in ("nocmd", "noexec")]
    check(len(set(own)) == len(own) and min(own) > 128 + 64, EXIT)
    check((EXIT["noexec"], EXIT["nocmd"]) == (126, 127), EXIT)
    r = perfex("--", "sh", "-c", "kill -INT $$")
    check(r.returncode == 128 + 2, r)
    r = perfex("-e", "no-such-event", "--", "true")
    check(r.returncode == EXIT["event"] != 128 + 2, r)
    r = perfex("--no-such-option", "--", "true")
    check(r.returncode == EXIT["usage"] != 128 + 1, r)
    help_text = perfex("--help").stdout
    page = open(os.path.join(TOP, "docs", "perfex.1")).read()
    section = page[page.index(".SH EXIT STATUS"):page.index(".SH EXAMPLES")]
    for name, code in EXIT.items():
        check("%d " % code in help_text, (name, code, help_text))
        check(".B %d\n" % code in section, (name, code))


run_cases()
