# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex's bash completion ($O/perfex.bash, generated from the option
table), sourced in bash and asked as bash asks it (COMP_LINE,
COMP_POINT, COMP_WORDS, COMP_CWORD): each subcommand's options are
exactly those its --help lists; the first word offers the subcommands
perfex help lists; -e offers perfex list's events (after a comma too,
and across bash's split at ':'), -M the metrics of perfex list metrics,
-i/-o file names, -p pids; after -- or the command, commands."""
import os
import re
import shutil
import subprocess
import tempfile

from pctest import BUILD, PERFEX, case, check, perfex, run_cases, skip

SCRIPT = os.path.join(BUILD, "perfex.bash")


def complete(*lines, cwd=None):
    """COMPREPLY for each command line (the cursor at its end)."""
    if not shutil.which("bash"):
        skip("bash is not installed")
    if not os.path.isfile(SCRIPT):
        skip("%s is not built (make)" % SCRIPT)
    prog = ['source "$1"; shift',
            'for line in "$@"; do',
            '  COMP_LINE=$line; COMP_POINT=${#line}',
            '  read -r -a COMP_WORDS <<<"$line"',
            '  [[ $line == *" " ]] && COMP_WORDS+=("")',
            '  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))',
            '  COMP_WORDS[0]=%s' % PERFEX,
            '  COMPREPLY=(); _perfex',
            '  printf "%s\\n" "${COMPREPLY[@]}"; echo "@@end"',
            'done']
    r = subprocess.run(["bash", "-c", "\n".join(prog), "_", SCRIPT] + list(lines),
                       capture_output=True, text=True, cwd=cwd, timeout=120)
    check(r.returncode == 0 and not r.stderr, r)
    out = r.stdout.split("@@end\n")[:-1]
    return [set(x for x in chunk.split("\n") if x) for chunk in out]


def help_options(*sub):
    """The option spellings of `perfex SUB --help`."""
    r = perfex(*sub, "--help")
    check(r.returncode == 0, r)
    found = set()
    for line in r.stdout.splitlines():
        m = re.match(r"^  (-\w)(?:, (--[\w-]+))?|^      (--[\w-]+)", line)
        if m:
            found |= {g for g in m.groups() if g}
    check(found, r.stdout)
    return found


def subcommands():
    r = perfex("help")
    lines = r.stdout.split("subcommands:", 1)[1].split("\n\n")[0]
    return {l.split()[0] for l in lines.strip().splitlines()}


@case
def each_subcommand_completes_its_help_options():
    subs = sorted(subcommands())
    got = complete(*["perfex %s -" % s for s in subs], "perfex --regions -")
    for s, have in zip(subs + ["--regions"], got):
        want = help_options(s) if s != "--regions" else help_options("--regions")
        check(have == want, "perfex %s: completes %s, --help lists %s"
              % (s, sorted(have ^ want), sorted(want)))


@case
def first_word_offers_subcommands_and_counting_options():
    words, dashes = complete("perfex ", "perfex -")
    check(words == subcommands() | {"help"}, words)
    check(dashes == help_options() | {"--regions", "--version"}, dashes)
    (helps,) = complete("perfex help re")
    check(helps == {"record", "report"}, helps)


@case
def events_complete_from_perfex_list():
    r = perfex("list")
    names = [l.split()[0] for l in r.stdout.splitlines()
             if len(l.split()) > 1 and l.split()[1].startswith("[")]
    check("task-clock" in names, r.stdout[:500])
    a, b, c = complete("perfex -e task-c", "perfex record -e cpu-clock,page-f",
                       "perfex stat --event=task-")
    check(a == {"task-clock"}, a)
    check(b == {"cpu-clock,page-faults"}, b)
    # bash's word begins after '=': the reply is the part after it.
    check(c == {"task-clock"}, c)
    tps = [n for n in names if n.startswith("syscalls:sys_enter_getpp")]
    if not tps:
        skip("no syscall tracepoints listed (tracefs unreadable)")
    (d,) = complete("perfex -e task-clock,syscalls:sys_enter_getpp")
    # ... and after the last ':'.
    check(d == {n.split(":")[1] for n in tps}, d)


@case
def metrics_complete_from_perfex_list_metrics():
    r = perfex("list", "metrics")
    names = [l.strip() for l in r.stdout.splitlines()
             if l.startswith("  ") and not l.startswith("   ") and l.strip()]
    if not names:
        skip("perfex list metrics lists none (built without json-c)")
    want = {n for n in names if n.startswith(names[0][:2])}
    (got,) = complete("perfex -M " + names[0][:2])
    check(want <= got, (sorted(want), sorted(got)))


@case
def files_pids_and_commands():
    with tempfile.TemporaryDirectory() as d:
        open(os.path.join(d, "perf.data"), "w").close()
        open(os.path.join(d, "perf.other"), "w").close()
        i, o, flame, pid, cmd, arg = complete(
            "perfex report -i perf.d", "perfex record -o perf.o",
            "perfex report --flame=perf.d", "perfex -p %d" % os.getpid(),
            "perfex -e task-clock -- ech", "perfex -e task-clock ls perf.d",
            cwd=d)
    check(i == {"perf.data"}, i)
    check(o == {"perf.other"}, o)
    check(flame == {"perf.data"}, flame)
    check(str(os.getpid()) in pid, pid)
    check("echo" in cmd, cmd)
    # The command's own arguments: files, not perfex's options.
    check(arg == {"perf.data"}, arg)


run_cases()
