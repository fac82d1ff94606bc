# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The Debian packages (debian/): the symbols file is the one
scripts/gen-symbols makes from libperfctr.map and matches the built
library; the changelog's version is the Makefile's; dpkg-buildpackage
builds the four packages from a copy of the tree (once, shared by the
cases), each holding its files and conffiles; dpkg installs them into a
throwaway root (dpkg --root, maintainer scripts run outside a chroot
with DPKG_ROOT, as debhelper's and ours support), where the group perf
is made and the broker's socket enabled; the installed perfex counts
exactly and an example builds against the installed -dev package and
counts exactly; a purge leaves none of the packages' files behind.

The build skips its clean step and takes the tree's imported pmu-events
tables (the import alone is a minute here): a build from a clean
checkout is `dpkg-buildpackage -us -uc -b`, the same rules."""
import glob
import os
import re
import shutil
import subprocess
import tempfile

from pctest import BUILD, TOP, case, check, run_cases, skip, work

PACKAGES = ("libperfctr0", "libperfctr-dev", "perfex", "perfctrd",
            "python3-perfctr")


def version():
    with open(os.path.join(TOP, "Makefile")) as f:
        return re.search(r"^VERSION\s*:=\s*(\S+)", f.read(), re.M).group(1)


def multiarch():
    r = subprocess.run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"],
                       capture_output=True, text=True)
    return r.stdout.strip()


def require_debian_tools():
    for tool in ("dpkg-buildpackage", "dpkg-deb", "dpkg", "dh"):
        if not shutil.which(tool):
            skip("%s is not installed (apt-get install dpkg-dev debhelper; "
                 "scripts/install-deps)" % tool)


@case
def symbols_file_is_made_from_the_map():
    r = subprocess.run([os.path.join(TOP, "scripts/gen-symbols"), version(),
                        os.path.join(TOP, "src/lib/libperfctr.map")],
                       capture_output=True, text=True)
    check(r.returncode == 0, r.stderr)
    with open(os.path.join(TOP, "debian/libperfctr0.symbols")) as f:
        check(f.read() == r.stdout,
              "debian/libperfctr0.symbols is not scripts/gen-symbols' "
              "(run: scripts/gen-symbols %s > debian/libperfctr0.symbols)"
              % version())


@case
def symbols_file_matches_the_library():
    if not shutil.which("nm"):
        skip("nm is not installed (binutils)")
    r = subprocess.run(["nm", "-D", "--defined-only", "--with-symbol-versions",
                        os.path.join(BUILD, "libperfctr.so")],
                       capture_output=True, text=True)
    check(r.returncode == 0, r.stderr)
    # "0000 T name@@NODE" (the default version); a node is "0000 A NODE",
    # NODE@NODE in a symbols file.
    built = set()
    for l in r.stdout.splitlines():
        name = l.split()[-1]
        built.add(name.replace("@@", "@") if "@" in name
                  else "%s@%s" % (name, name))
    with open(os.path.join(TOP, "debian/libperfctr0.symbols")) as f:
        listed = {l.split()[0] for l in f if l.startswith(" ")}
    check(built == listed, "in the library only: %s; in the file only: %s"
          % (sorted(built - listed)[:10], sorted(listed - built)[:10]))


@case
def changelog_version_is_the_makefiles():
    if not shutil.which("dpkg-parsechangelog"):
        skip("dpkg-parsechangelog is not installed (dpkg-dev)")
    r = subprocess.run(["dpkg-parsechangelog", "-l",
                        os.path.join(TOP, "debian/changelog"), "-S", "Version"],
                       capture_output=True, text=True)
    check(r.stdout.strip() == version(), r)


class Build:
    """The packages, built once into a temporary directory."""
    dir = None
    debs = None
    error = None


def tree_files():
    """The files of the tree: git's when it is a checkout, else all but
    the build directories."""
    r = subprocess.run(["git", "-C", TOP, "ls-files", "-co",
                        "--exclude-standard", "-z"],
                       capture_output=True)
    if r.returncode == 0:
        return [p for p in r.stdout.decode().split("\0")
                if p and os.path.lexists(os.path.join(TOP, p))]
    files = []
    for root, dirs, names in os.walk(TOP):
        rel = os.path.relpath(root, TOP)
        dirs[:] = [d for d in dirs if not (rel == "." and
                   (d.startswith("build") or d == ".git"))]
        files += [os.path.normpath(os.path.join(rel, n)) for n in names]
    return files


def built():
    require_debian_tools()
    if os.environ.get("SANITIZE"):
        skip("the plain build covers it; the package build is not sanitized")
    if Build.error:
        raise Build.error
    if Build.debs:
        return Build.debs
    r = subprocess.run(["dpkg-checkbuilddeps", os.path.join(TOP, "debian/control")],
                       capture_output=True, text=True)
    if r.returncode != 0:
        skip("the build dependencies are not installed (scripts/install-deps): "
             + r.stderr.strip().replace("\n", " "))
    Build.dir = tempfile.mkdtemp(prefix="perfctr-deb-")
    src = os.path.join(Build.dir, "perfctr")
    os.mkdir(src)
    # tar keeps the files' times: the make in the copy sees them as here.
    files = "\0".join(tree_files()).encode()
    r = subprocess.run("tar -C '%s' --null -T - -cf - | tar -C '%s' -xf -"
                       % (TOP, src), shell=True, input=files,
                       capture_output=True)
    check(r.returncode == 0, r.stderr)
    tables = os.path.join(BUILD, "share/perfctr/pmu-events")
    if os.path.isfile(os.path.join(tables, "SOURCE")):
        shutil.copytree(tables, os.path.join(src, "build/share/perfctr/pmu-events"),
                        symlinks=True)
    env = dict(os.environ, DEB_BUILD_OPTIONS="nocheck noautodbgsym parallel=2")
    env.pop("O", None)
    env.pop("MAKEFLAGS", None)
    env.pop("MFLAGS", None)
    r = subprocess.run(["dpkg-buildpackage", "-us", "-uc", "-b", "-nc"],
                       cwd=src, env=env, capture_output=True, text=True,
                       timeout=900)
    if r.returncode != 0:
        Build.error = AssertionError("dpkg-buildpackage failed: " +
                                     (r.stdout + r.stderr)[-3000:])
        check(False, Build.error)
    v = version()
    debs = {}
    for p in PACKAGES:
        found = glob.glob(os.path.join(Build.dir, "%s_%s_*.deb" % (p, v)))
        check(len(found) == 1, "no package %s: %s" % (p, os.listdir(Build.dir)))
        debs[p] = found[0]
    Build.debs = debs
    return debs


def contents(deb):
    r = subprocess.run(["dpkg-deb", "--fsys-tarfile", deb], capture_output=True)
    check(r.returncode == 0, r.stderr)
    t = subprocess.run(["tar", "-tf", "-"], input=r.stdout, capture_output=True)
    return {p[1:].rstrip("/") for p in t.stdout.decode().split("\n") if p[1:]}


def control_file(deb, name):
    r = subprocess.run(["dpkg-deb", "--ctrl-tarfile", deb], capture_output=True)
    t = subprocess.run(["tar", "-xOf", "-", "./" + name], input=r.stdout,
                       capture_output=True)
    return t.stdout.decode() if t.returncode == 0 else ""


@case
def packages_hold_their_files():
    debs = built()
    lib = "/usr/lib/" + multiarch()
    want = {
        "libperfctr0": [lib + "/libperfctr.so.0", lib + "/libperfctr.so." + version()],
        "libperfctr-dev": ["/usr/include/perfctr/perfctr.h", lib + "/libperfctr.so",
                           lib + "/libperfctr.a", lib + "/pkgconfig/perfctr.pc",
                           "/usr/share/man/man3/perfctr_session.3.gz"],
        "perfex": ["/usr/bin/perfex", "/usr/bin/perfex-serve",
                   "/usr/share/man/man1/perfex.1.gz",
                   "/usr/share/bash-completion/completions/perfex",
                   "/etc/perfex/serve.conf",
                   "/lib/systemd/system/perfex-serve.service"],
        "perfctrd": ["/usr/sbin/perfctrd", "/etc/perfctr/perfctrd.conf",
                     "/lib/systemd/system/perfctrd.socket",
                     "/lib/systemd/system/perfctrd.service",
                     "/usr/share/man/man8/perfctrd.8.gz",
                     "/usr/share/man/man5/perfctrd.conf.5.gz"],
        "python3-perfctr": ["/usr/lib/python3/dist-packages/perfctr/__init__.py",
                            "/usr/lib/python3/dist-packages/perfctr/pytest.py"],
    }
    for p, paths in want.items():
        have = contents(debs[p])
        missing = [x for x in paths if x not in have]
        check(not missing, "%s lacks %s" % (p, missing))
        check("/usr/share/doc/%s/copyright" % p in have, p)
    check("/etc/perfctr/perfctrd.conf" in control_file(debs["perfctrd"], "conffiles"))
    check("/etc/perfex/serve.conf" in control_file(debs["perfex"], "conffiles"))
    # The manifest is make uninstall's, not a package's.
    check(not any("install-manifest" in x for d in debs.values()
                  for x in contents(d)))
    # The library's package says which symbol needs which version.
    check("perfctr_session__new@PERFCTR_0.1" in
          control_file(debs["libperfctr0"], "symbols"))


def dpkg_root(root, *args):
    # python3-perfctr's scripts (dh_python3's) run py3compile and py3clean
    # on the package's files as the host's dpkg database lists them: run
    # chrootless for another root they would fail or touch the host.
    # Here they are no-ops, first on PATH; the import below writes no
    # bytecode either.
    bindir = os.path.join(root + ".bin")
    os.makedirs(bindir, exist_ok=True)
    for tool in ("py3compile", "py3clean"):
        with open(os.path.join(bindir, tool), "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(os.path.join(bindir, tool), 0o755)
    env = dict(os.environ, PATH=bindir + ":" + os.environ.get("PATH", ""))
    try:
        return subprocess.run(["dpkg", "--root=" + root, "--force-script-chrootless",
                               "--force-depends", "--log=/dev/null"] + list(args),
                              capture_output=True, text=True, timeout=300,
                              env=env)
    finally:
        shutil.rmtree(bindir, ignore_errors=True)


def files_under(root):
    """Every file and link under @root but dpkg's database."""
    out = set()
    for d, dirs, names in os.walk(root):
        rel = os.path.relpath(d, root)
        if rel.startswith("var/lib/dpkg"):
            continue
        out |= {os.path.normpath(os.path.join(rel, n)) for n in names}
    return out


@case
def install_run_and_purge_in_a_throwaway_root():
    debs = built()
    if os.geteuid() != 0:
        skip("dpkg needs root (euid is %d)" % os.geteuid())
    with tempfile.TemporaryDirectory(prefix="perfctr-root-") as root:
        for d in ("var/lib/dpkg/info", "var/lib/dpkg/updates",
                  "var/lib/dpkg/triggers", "etc"):
            os.makedirs(os.path.join(root, d))
        open(os.path.join(root, "var/lib/dpkg/status"), "w").close()
        # The accounts the postinst's groupadd edits.
        for f in ("passwd", "group", "shadow", "gshadow"):
            if os.path.exists("/etc/" + f):
                shutil.copy("/etc/" + f, os.path.join(root, "etc", f))
        before = files_under(root)
        # The system's own libraries (libc, libpfm...) are the machine's:
        # the root holds only ours, hence --force-depends.
        r = dpkg_root(root, "-i", *[debs[p] for p in PACKAGES])
        check(r.returncode == 0, r.stdout[-1000:] + r.stderr[-1000:])
        with open(os.path.join(root, "etc/group")) as f:
            check(any(l.startswith("perf:") for l in f), "no group perf")
        check(os.path.islink(os.path.join(
            root, "etc/systemd/system/sockets.target.wants/perfctrd.socket")),
            "the broker's socket is not enabled")
        check(not os.path.exists(os.path.join(
            root, "etc/systemd/system/multi-user.target.wants/perfex-serve.service")),
            "perfex-serve is enabled")

        lib = os.path.join(root, "usr/lib", multiarch())
        env = dict(os.environ, LD_LIBRARY_PATH=lib, PKG_CONFIG_SYSROOT_DIR=root,
                   PKG_CONFIG_PATH=os.path.join(lib, "pkgconfig"),
                   ASAN_OPTIONS="detect_leaks=0")
        perfex = os.path.join(root, "usr/bin/perfex")
        r = subprocess.run([perfex, "--version"], capture_output=True,
                           text=True, env=env)
        check(r.stdout.strip() == "perfex " + version(), r)
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "perfctr"],
                               capture_output=True, text=True, env=env)
        check(flags.returncode == 0 and root in flags.stdout, flags)
        exe = os.path.join(root, "count-self")
        r = subprocess.run(["cc", os.path.join(TOP, "examples/count-self.c"),
                            "-o", exe] + flags.stdout.split(),
                           capture_output=True, text=True)
        check(r.returncode == 0, r.stderr)
        if os.path.isdir("/sys/kernel/tracing/events/syscalls"):
            r = subprocess.run([perfex, "-x,", "-e", "syscalls:sys_enter_getppid",
                                "--", work(), "getppid", "4321"],
                               capture_output=True, text=True, env=env,
                               timeout=120)
            check(r.returncode == 0 and r.stderr.startswith("4321,"), r)
            r = subprocess.run([exe, "1234"], capture_output=True, text=True,
                               env=env, timeout=60)
            check(r.returncode == 0 and ": 1234 " in r.stdout, r)
        os.unlink(exe)
        # The Python package, from the root's dist-packages, counts.
        py = dict(env, PYTHONPATH=os.path.join(root, "usr/lib/python3/dist-packages"),
                  PYTHONDONTWRITEBYTECODE="1")
        r = subprocess.run(["/usr/bin/python3", "-c",
                            "import perfctr, perfctr.data\n"
                            "c = perfctr.count('page-faults')\n"
                            "with c: bytearray(1 << 20)\n"
                            "print(perfctr.__file__, c['page-faults'] >= 0)"],
                           capture_output=True, text=True, env=py, timeout=120)
        check(r.returncode == 0 and r.stdout.startswith(root) and
              r.stdout.strip().endswith("True"), r)

        r = dpkg_root(root, "--purge", *reversed(PACKAGES))
        check(r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:])
        left = files_under(root) - before
        # groupadd's backups of the files it edited; the group perf stays,
        # as Debian leaves a system group that files may still name.
        left -= {"etc/group-", "etc/gshadow-", "etc/passwd-", "etc/shadow-"}
        check(not left, "left behind: %s" % sorted(left)[:20])
        r = subprocess.run(["dpkg", "--root=" + root, "-l"],
                           capture_output=True, text=True)
        check(not any(l.startswith(("ii", "rc")) for l in r.stdout.splitlines()),
              r.stdout)


try:
    run_cases()
finally:
    if Build.dir:
        shutil.rmtree(Build.dir, ignore_errors=True)
