# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfex's option table (src/perfex/options.c) as each subcommand's
--help prints it: every option is documented in its man page (a .TP item
naming its short and long form) and exercised by a CLI test; errors name
the option."""
import glob
import os
import re

from pctest import EXIT, TOP, case, check, perfex, run_cases

# Subcommand: how to ask for its help, its man page, the tests that use it.
COMMANDS = {
    "stat": (["stat", "--help"], "perfex.1", ["test_stat*.py", "test_dispatch.py"]),
    "record": (["record", "--help"], "perfex-record.1",
               ["test_record*.py", "test_symbols.py", "test_jit.py",
                "test_offcpu.py"]),
    "report": (["report", "--help"], "perfex-report.1",
               ["test_report*.py", "test_symbols.py", "test_annotate.py",
                "test_offcpu.py"]),
    "script": (["script", "--help"], "perfex-script.1",
               ["test_report*.py", "test_record*.py", "test_symbols.py",
                "test_script*.py"]),
    "list": (["list", "--help"], "perfex-list.1", ["test_list.py"]),
    "info": (["info", "--help"], "perfex-info.1", ["test_info.py"]),
    "regions": (["--regions", "--help"], "perfex.1", ["test_regions.py"]),
    "serve": (["serve", "--help"], "perfex-serve.1", ["test_serve*.py"]),
    "inject": (["inject", "--help"], "perfex-inject.1", ["test_jit.py"]),
    "diff": (["diff", "--help"], "perfex-diff.1", ["test_diff.py"]),
    "annotate": (["annotate", "--help"], "perfex-annotate.1", ["test_annotate.py"]),
    "top": (["top", "--help"], "perfex-top.1", ["test_top.py"]),
}

OPTION_LINE = re.compile(r"^  (?:-(\w)(?:, |  ))?(?:    )?(?:--([a-z][a-z0-9-]*))?")


def table(sub):
    """The (short, long) options of SUB's --help, in order."""
    r = perfex(*COMMANDS[sub][0])
    check(r.returncode == 0 and r.stderr == "", (sub, r))
    opts = []
    for line in r.stdout.splitlines():
        m = OPTION_LINE.match(line)
        if m and (m.group(1) or m.group(2)):
            opts.append((m.group(1), m.group(2)))
    check(opts, (sub, r.stdout))
    return opts


def name(short, long):
    return "--" + long if long else "-" + short


def deroff(line):
    line = re.sub(r"\\f[RBIP]", "", line.replace("\\-", "-"))
    return re.sub(r"^\.[BI]{1,2}R?\s+", "", line).replace('"', " ")


def man_items(page, sub):
    """The heads of PAGE's .TP items, de-roffed; for --regions, whose
    options perfex.1 describes in its paragraph, the lines between
    .B --regions and the next item."""
    lines = open(os.path.join(TOP, "docs", page)).read().splitlines()
    if sub == "regions":
        start = lines.index(".B \\-\\-regions")
        end = lines.index(".TP", start)
        return [deroff(l) for l in lines[start:end]]
    return [deroff(lines[i + 1]) for i, line in enumerate(lines[:-1])
            if line.startswith(".TP")]


def token(opt):
    return re.compile(r"(?<![\w-])%s(?![\w-])" % re.escape(opt))


@case
def every_option_is_in_its_man_page():
    missing = []
    for sub, (_, page, _) in COMMANDS.items():
        heads = man_items(page, sub)
        for short, long in table(sub):
            want = [token("-" + short)] if short else []
            want += [token("--" + long)] if long else []
            if not any(all(t.search(h) for t in want) for h in heads):
                missing.append("%s %s (%s)" % (sub, name(short, long), page))
    check(not missing, "options not documented in their man page: " +
          ", ".join(missing))


def test_sources(patterns):
    here = os.path.dirname(os.path.abspath(__file__))
    text = ""
    for pat in patterns:
        for path in sorted(glob.glob(os.path.join(here, pat))):
            text += open(path).read()
    return text


@case
def names_are_unique_per_subcommand():
    # Two rows of one subcommand with one name: getopt would take the
    # first, and the second's handler would never run.
    for sub in COMMANDS:
        opts = table(sub)
        shorts = [s for s, _ in opts if s]
        longs = [l for _, l in opts if l]
        check(len(set(shorts)) == len(shorts), (sub, shorts))
        check(len(set(longs)) == len(longs), (sub, longs))


@case
def every_option_is_exercised():
    # An option counts as used when a test passes it as a string of its
    # own ("-I", "--per-thread", "--kallsyms=...") or glued to its value
    # ("-x,"); --help is used above, by table().
    missing = []
    for sub, (_, _, tests) in COMMANDS.items():
        text = test_sources(tests)
        for short, long in table(sub):
            if long == "help":
                continue
            pats = []
            if long:
                pats.append(r"[\"']--%s(?:[\"'=])" % re.escape(long))
            if short:
                pats.append(r"[\"']-%s(?![A-Za-z-])" % re.escape(short))
            if not any(re.search(p, text) for p in pats):
                missing.append("%s %s" % (sub, name(short, long)))
    check(not missing, "options no test uses: " + ", ".join(missing))


@case
def help_of_every_subcommand():
    for sub, (args, _, _) in COMMANDS.items():
        r = perfex(*args)
        check(r.stdout.startswith("usage: perfex"), (sub, r.stdout))
        check(re.search(r"^  -h, --help ", r.stdout, re.M), (sub, r.stdout))
    # perfex help SUB is SUB --help.
    for sub in ("stat", "record", "report", "script", "list", "info", "serve",
                "top"):
        check(perfex("help", sub).stdout == perfex(sub, "--help").stdout, sub)


@case
def errors_name_the_option():
    rows = [
        (["--switch-interval"], "option '--switch-interval' needs an argument"),
        (["-I"], "option '-I' needs an argument"),
        (["--json=yes", "--", "true"], "option '--json' takes no argument"),
        (["-I", "5", "--", "true"], "option '-I' expects milliseconds"),
        (["--interval-print=5", "--", "true"],
         "option '--interval-print' expects milliseconds"),
        (["--switch-interval", "x", "-e", "a", "-e", "b", "--", "true"],
         "option '--switch-interval' expects"),
        (["-A", "--", "true"], "option '-A' needs -a or -C"),
        (["record", "-c", "0", "--", "true"], "option '-c' expects"),
        (["report", "--percent-limit", "200"], "option '--percent-limit' expects"),
        (["script", "--bogus"], "unknown option '--bogus'"),
        (["--regions", "-e"], "option '-e' needs an argument"),
    ]
    for args, msg in rows:
        r = perfex(*args)
        check(r.returncode == EXIT["usage"], (args, r))
        check(r.stderr.startswith("perfex: " + msg), (args, r.stderr))
        check("hint: " in r.stderr, (args, r.stderr))


@case
def modes_follow_the_target():
    # -A needs CPUs: -C with -t counts a thread on CPUs, and takes it.
    import subprocess
    from pctest import work
    w = subprocess.Popen([work(), "sleep", "300"])
    try:
        r = perfex("-x,", "-A", "-t", str(w.pid), "-C", "0", "-e", "task-clock")
        check(r.returncode == 0 and r.stderr.startswith("CPU0,"), r)
    finally:
        w.wait()
    r = perfex("-A", "-t", "1", "-e", "task-clock")
    check(r.returncode == EXIT["usage"] and "option '-A' needs -a or -C" in r.stderr, r)


run_cases()
