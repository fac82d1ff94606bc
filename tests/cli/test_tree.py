# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The source tree's own rules: every source file git tracks carries the
project's SPDX line, the licence texts it names are shipped, perfctr.pc
states the licence, the version script names exactly the symbols the
public headers declare PERFCTR_API and the shared library exports, each
public object family has one life cycle, every public function has a doc
comment and a man page, and the public headers and the documentation
point only at documents the tree ships.  Each failure names the files or
symbols."""
import fnmatch
import glob
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
    ("NEWS", "prose: the changelog"),
    ("docs/*.[1-8]", "man pages (roff prose)"),
    ("tests/fixtures/*", "copies of kernel files (/proc, sysfs, tracefs)"),
    ("tests/fuzz/corpus/*", "binary fuzzer seeds"),
    (".gitignore", "a list of build products"),
    ("src/lib/metric/*.json", "metric tables: JSON has no comments"),
    ("tests/browser/package*.json",
     "npm's manifest and lock: JSON has no comments (\"license\" says it)"),
    ("debian/changelog", "Debian's changelog format has no comments"),
    ("debian/copyright", "the licences, stated in Debian's format"),
    ("debian/source/format", "one line of Debian's format"),
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
    elif path.endswith(".proto"):
        want = ("// SPDX-License-Identifier: %s" % EXPRESSION,)  # no '#' there
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


def strip_c_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def declared_api():
    """{name: header} of every PERFCTR_API declaration in include/perfctr/."""
    names = {}
    inc = os.path.join(TOP, "include", "perfctr")
    for header in sorted(os.listdir(inc)):
        if not header.endswith(".h"):
            continue
        text = strip_c_comments(open(os.path.join(inc, header)).read())
        text = re.sub(r"^\s*#.*$", "", text, flags=re.M)
        for m in re.finditer(r"\bPERFCTR_API\b([^;{]*)", text):
            decl = m.group(1)
            call = re.search(r"(\w+)\s*\(", decl)
            name = call.group(1) if call else re.findall(r"\w+", decl)[-1]
            names[name] = header
    return names


def version_map():
    """({name: node}, [globs]) of the global names in libperfctr.map."""
    text = strip_c_comments(open(os.path.join(TOP, "src", "lib",
                                              "libperfctr.map")).read())
    names, globs = {}, []
    for node, body in re.findall(r"([\w.]+)\s*\{(.*?)\}[^;]*;", text, re.S):
        part = re.split(r"\blocal\s*:", body)[0]
        part = re.sub(r"\bglobal\s*:", "", part)
        for name in (n.strip() for n in part.split(";")):
            if not name:
                continue
            if re.search(r"[*?\[]", name):
                globs.append("%s in %s" % (name, node))
            names[name] = node
    return names, globs


def exported_symbols():
    """{name: version} of the shared library's defined dynamic symbols."""
    lib = os.path.join(BUILD, "libperfctr.so")
    if not os.path.exists(lib):
        skip("%s is not built (make lib)" % lib)
    if not shutil.which("nm"):
        skip("nm is not installed (binutils)")
    r = subprocess.run(["nm", "-D", "--defined-only", lib],
                       capture_output=True, text=True)
    check(r.returncode == 0, r.stderr)
    symbols = {}
    for line in r.stdout.splitlines():
        fields = line.split()
        if len(fields) < 3 or fields[1] == "A":
            continue        # the version node's own absolute symbol
        name, _, version = fields[2].partition("@")
        symbols[name] = version.lstrip("@")
    return symbols


def differences(left_name, left, right_name, right):
    out = []
    only = sorted(set(left) - set(right))
    if only:
        out.append("in %s, not in %s: %s" % (left_name, right_name,
                                              " ".join(only)))
    only = sorted(set(right) - set(left))
    if only:
        out.append("in %s, not in %s: %s" % (right_name, left_name,
                                              " ".join(only)))
    return out


@case
def version_map_names_every_symbol_without_globs():
    names, globs = version_map()
    check(names, "no global name in src/lib/libperfctr.map")
    check(not globs, "globs in src/lib/libperfctr.map: %s" % ", ".join(globs))


@case
def version_map_matches_the_headers():
    names, _ = version_map()
    declared = declared_api()
    diff = differences("include/perfctr/*.h (PERFCTR_API)", declared,
                       "src/lib/libperfctr.map", names)
    check(not diff, "; ".join(diff) + " (a public function is declared "
          "PERFCTR_API in its header and listed by name in the map)")


@case
def version_map_matches_the_shared_library():
    names, _ = version_map()
    exported = exported_symbols()
    diff = differences("src/lib/libperfctr.map", names,
                       "the dynamic symbols of libperfctr.so", exported)
    wrong = sorted("%s@%s (map: %s)" % (n, exported[n], names[n])
                   for n in set(names) & set(exported)
                   if exported[n] != names[n])
    if wrong:
        diff.append("versioned unlike the map: " + " ".join(wrong))
    check(not diff, "; ".join(diff))


@case
def each_object_family_has_one_life_cycle():
    # Owned objects are made by __new* and freed by __delete; file-like ones
    # are made by __open* and ended by __close (STYLE.md).  A family freed
    # one way and made the other is the mix this rules out; an __open that
    # is a method of a __new object (perfctr_sampler__open opens its events)
    # is not a constructor and passes.
    families = {}
    for name in declared_api():
        if "__" in name:
            family, _, method = name.partition("__")
            families.setdefault(family, set()).add(method)
    bad = []
    for family, methods in sorted(families.items()):
        made_new = any(m == "new" or m.startswith("new_") for m in methods)
        made_open = any(m == "open" or m.startswith("open_") for m in methods)
        if "delete" in methods and "close" in methods:
            bad.append("%s has both __delete and __close" % family)
        elif "close" in methods and made_new:
            bad.append("%s is made by __new but ended by __close" % family)
        elif "delete" in methods and made_open and not made_new:
            bad.append("%s is made by __open but freed by __delete" % family)
    check(not bad, "; ".join(bad))


# Notes of the project's own that are not part of the tree: a reader of
# the headers or the documentation cannot follow a pointer to them.
UNSHIPPED = re.compile(r"kernel-facts|\bseeds? \d{3}\b|\bthe seed's|"
                       r"\bthe seeds'")
TREE_PATH = re.compile(r"(?<![\w/.-])((?:docs|examples|tests|src|include|"
                       r"bench|scripts)/[\w./*{},-]*[\w*}])")
MAN_REF = re.compile(r"\b((?:v?perfctr|perfex)[\w-]*)(?:\\f[RP]|\s)?"
                     r"\s*\((\d)\)")


def braces(path):
    """tests/unit/test_{a,b}.c -> [tests/unit/test_a.c, tests/unit/test_b.c]"""
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    return [x for alt in m.group(1).split(",")
            for x in braces(path[:m.start()] + alt + path[m.end():])]


def man_pages():
    """{(name, section)} that docs/ documents: each page's file name and the
    names in its NAME section."""
    pages = set()
    for page in glob.glob(os.path.join(TOP, "docs", "*.[1-8]")):
        base, section = os.path.basename(page).rsplit(".", 1)
        pages.add((base, section))
        text = open(page).read()
        m = re.search(r"^\.SH NAME\n(.*?)\\-", text, re.S | re.M)
        if m:
            for name in re.findall(r"[\w-]+", m.group(1)):
                pages.add((name, section))
    return pages


@case
def code_points_only_at_shipped_notes():
    # The kernel behaviours comments rely on are docs/kernel-notes.md's;
    # the seed documents are named by what they are (docs/ARCHITECTURE.md),
    # not by a number of a folder outside the tree.
    notes = re.compile(r"kernel-facts|\bseeds? \d{3}\b")
    bad = []
    for rel in tracked_files():
        if (not rel.endswith((".c", ".h", ".py", ".md")) or
                rel == "tests/cli/test_tree.py"):
            continue
        text = open(os.path.join(TOP, rel), errors="replace").read()
        bad += ["%s: '%s'" % (rel, m.group(0)) for m in notes.finditer(text)]
    check(not bad, "; ".join(bad))


@case
def headers_and_docs_point_only_at_shipped_documents():
    files = sorted(glob.glob(os.path.join(TOP, "include", "perfctr", "*.h")))
    files += sorted(glob.glob(os.path.join(TOP, "docs", "*")))
    files.append(os.path.join(TOP, "README.md"))
    docs = {os.path.basename(p) for p in tracked_files()}
    pages = man_pages()
    bad = []
    for path in files:
        rel = os.path.relpath(path, TOP)
        text = open(path).read()
        for m in UNSHIPPED.finditer(text):
            bad.append("%s: '%s' (not in the tree)" % (rel, m.group(0)))
        for m in TREE_PATH.finditer(text):
            for p in braces(m.group(1).rstrip(".")):
                if not glob.glob(os.path.join(TOP, p)):
                    bad.append("%s: %s does not exist" % (rel, p))
        # Documents named without their folder: Markdown anywhere, and
        # .txt/.rst in headers (the documentation's examples name output
        # files such as regions.txt).
        ext = r"md|txt|rst" if rel.endswith(".h") else r"md"
        for m in re.finditer(r"(?<![\w/.-])([\w-]+\.(?:%s))\b" % ext, text):
            if m.group(1) not in docs:
                bad.append("%s: %s is not in the tree" % (rel, m.group(1)))
        for m in MAN_REF.finditer(text):
            if (m.group(1), m.group(2)) not in pages:
                bad.append("%s: %s(%s) is not a page in docs/"
                           % (rel, m.group(1), m.group(2)))
    check(not bad, "; ".join(bad))


@case
def every_public_header_has_a_man_page():
    # A page documents a header when its SYNOPSIS includes it.
    documented = set()
    for page in glob.glob(os.path.join(TOP, "docs", "*.3")):
        documented |= set(re.findall(r"#include <perfctr/([\w.]+)>",
                                     open(page).read()))
    inc = os.path.join(TOP, "include", "perfctr")
    headers = sorted(h for h in os.listdir(inc) if h.endswith(".h"))
    missing = [h for h in headers if h not in documented]
    check(not missing, "no page in docs/ includes: %s" % " ".join(missing))
    umbrella = open(os.path.join(inc, "perfctr.h")).read()
    left_out = [h for h in headers if h != "perfctr.h"
                and "#include <perfctr/%s>" % h not in umbrella]
    check(not left_out, "perfctr.h does not include: %s" % " ".join(left_out))


def api_declarations():
    """(header, line, name, comment) of every PERFCTR_API declaration:
    comment is the doc comment above it, None when there is none.
    Declarations on consecutive lines may share one comment."""
    out = []
    inc = os.path.join(TOP, "include", "perfctr")
    for header in sorted(h for h in os.listdir(inc) if h.endswith(".h")):
        lines = open(os.path.join(inc, header)).read().split("\n")
        for i, line in enumerate(lines):
            if not re.match(r"\s*PERFCTR_API\b", line):
                continue
            j, decl = i, ""
            while j < len(lines):
                decl += lines[j] + " "
                if ";" in lines[j] or "{" in lines[j]:
                    break
                j += 1
            call = re.search(r"(\w+)\s*\(", decl.replace("PERFCTR_API", ""))
            if not call:
                continue
            k = i - 1
            while k >= 0 and not lines[k].rstrip().endswith("*/"):
                if not lines[k].strip() or lines[k].lstrip().startswith("#"):
                    k = -1
                    break
                k -= 1
            comment = None
            if k >= 0:
                start = k
                while start >= 0 and "/*" not in lines[start]:
                    start -= 1
                comment = "\n".join(lines[max(start, 0):k + 1])
            out.append((header, i + 1, call.group(1), comment))
    return out


@case
def every_public_function_has_a_doc_comment():
    # The comment directly above a declaration (or above the run of
    # declarations it belongs to) must name the function, in full or as
    # "__method()": a comment about something else does not count.
    bad = []
    for header, line, name, comment in api_declarations():
        short = "__" + name.split("__", 1)[1] + "()" if "__" in name else None
        if comment is None:
            bad.append("%s:%d: %s has no doc comment" % (header, line, name))
        elif name not in comment and not (short and short in comment):
            bad.append("%s:%d: the comment above %s does not name it"
                       % (header, line, name))
    check(not bad, "; ".join(bad))


@case
def every_public_function_is_in_a_man_page():
    words = set()
    for page in glob.glob(os.path.join(TOP, "docs", "*.3")):
        words |= set(re.findall(r"\w+", open(page).read()))
    missing = sorted("%s (%s)" % (name, header)
                     for header, _, name, _ in api_declarations()
                     if name not in words)
    check(not missing, "in no page of docs/*.3: %s" % ", ".join(missing))


# The files beside the sys layer that may open a perf event themselves,
# and why: everything else goes through the counter engine (engine.c).
OPENERS = {
    "src/lib/core/engine.c": "the counter engine",
    "src/lib/core/info.c": "capability probes: opened and closed at once, "
                           "never counted with",
    "src/lib/core/region.c": "one probe whether the default region events "
                             "are hardware ones, closed at once",
    "src/perfctrd/perfctrd.c": "the broker opens for its clients, after the "
                               "policy, and hands the fd over: it counts "
                               "nothing itself",
}


@case
def only_the_engine_opens_perf_events():
    bad = []
    for path in tracked_files():
        if not path.endswith((".c", ".h")) or not path.startswith("src/"):
            continue
        if path.startswith("src/lib/sys/") or path in OPENERS:
            continue
        # Comments blanked but for their line breaks, so lines stay.
        text = re.sub(r"/\*.*?\*/|//[^\n]*",
                      lambda c: "\n" * c.group(0).count("\n"),
                      open(os.path.join(TOP, path)).read(), flags=re.S)
        for m in re.finditer(r"\bsys_perf_event_open\s*\(|"
                             r"\b(SYS|__NR)_perf_event_open\b", text):
            line = text.count("\n", 0, m.start()) + 1
            bad.append("%s:%d" % (path, line))
    check(not bad, "perf events opened outside src/lib/sys and the engine "
          "(or the exceptions listed in OPENERS): %s" % ", ".join(bad))


run_cases()
