# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The build's promises: `make install` honours PREFIX and DESTDIR, the
shared library exports only perfctr_/vperfctr_ symbols through its version
node, and a program builds against the installed tree with pkg-config."""
import os
import re
import shutil
import subprocess
import tempfile

from pctest import BUILD, TOP, case, check, run_cases, skip


def libdir():
    """The library directory under the prefix: Debian's multiarch one
    where dpkg-architecture names it (the Makefile's LIBDIR)."""
    r = subprocess.run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"],
                       capture_output=True, text=True) \
        if shutil.which("dpkg-architecture") else None
    return "lib/" + r.stdout.strip() if r and r.returncode == 0 else "lib"


def make(*args, **kw):
    return subprocess.run(["make", "-s", "-C", TOP, "O=" + BUILD] + list(args),
                          capture_output=True, text=True, timeout=600, **kw)


@case
def install_honours_prefix_and_destdir():
    with tempfile.TemporaryDirectory() as dest:
        r = make("install", "PREFIX=/opt/pc", "DESTDIR=" + dest)
        check(r.returncode == 0, r.stderr)
        root = os.path.join(dest, "opt/pc")
        lib = libdir()
        for rel in ("bin/perfex", "bin/perfex-serve", lib + "/libperfctr.a",
                    lib + "/libperfctr.so", lib + "/libperfctr.so.0",
                    "include/perfctr/perfctr.h",
                    "include/perfctr/session.h", lib + "/pkgconfig/perfctr.pc"):
            check(os.path.exists(os.path.join(root, rel)), "missing " + rel)
        pc = open(os.path.join(root, lib, "pkgconfig/perfctr.pc")).read()
        check("prefix=/opt/pc" in pc and "libdir=/opt/pc/" + lib in pc, pc)
        # DESTDIR is a staging root: nothing of it leaks into the .pc file.
        check(dest not in pc, pc)


def files_in(root):
    return {os.path.relpath(os.path.join(d, n), root)
            for d, _, names in os.walk(root) for n in names}


@case
def python_package_installed_where_python_finds_it():
    # make install puts the package (its extensions without the build
    # folder as their run path) into the dist-packages Debian's python3
    # reads for the prefix; imported from there it counts, and make
    # uninstall takes it away with the bytecode its import wrote.
    pkg = os.path.join(BUILD, "python", "perfctr")
    if not os.path.isdir(pkg) or not any(n.startswith("_core")
                                         for n in os.listdir(pkg)):
        skip("the Python module is not built (python3-dev; make python)")
    py = "/usr/bin/python3"
    ver = subprocess.run([py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as dest:
        r = make("install", "PREFIX=/usr/local", "DESTDIR=" + dest)
        check(r.returncode == 0, r.stderr)
        site = os.path.join(dest, "usr/local/lib/python%s/dist-packages" % ver)
        core = [n for n in os.listdir(os.path.join(site, "perfctr"))
                if n.startswith("_core") and n.endswith(".so")]
        check(len(core) == 1, os.listdir(os.path.join(site, "perfctr")))
        dyn = subprocess.run(["readelf", "-d", os.path.join(site, "perfctr", core[0])],
                             capture_output=True, text=True).stdout
        check("RPATH" not in dyn and "RUNPATH" not in dyn, dyn)
        env = dict(os.environ, PYTHONPATH=site,
                   LD_LIBRARY_PATH=os.path.join(dest, "usr/local", libdir()))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        r = subprocess.run([py, "-c", "import perfctr, perfctr.data, perfctr.pytest\n"
                            "c = perfctr.count('page-faults')\n"
                            "with c: bytearray(1 << 20)\n"
                            "print(perfctr.__file__, c['page-faults'] >= 0)"],
                           capture_output=True, text=True, env=env, timeout=120)
        check(r.returncode == 0 and r.stdout.startswith(site) and
              r.stdout.strip().endswith("True"), r)
        r = make("uninstall", "PREFIX=/usr/local", "DESTDIR=" + dest)
        check(r.returncode == 0, r.stderr)
        left = files_in(dest)
        check(not left, "left behind: %s" % sorted(left)[:10])


@case
def uninstall_removes_exactly_what_install_put_there():
    with tempfile.TemporaryDirectory() as dest:
        # An administrator's policy, there before: kept, never listed.
        os.makedirs(os.path.join(dest, "etc/perfctr"))
        mine = os.path.join(dest, "etc/perfctr/perfctrd.conf")
        with open(mine, "w") as f:
            f.write("# mine\n")
        other = os.path.join(dest, "usr/bin/someone-else")
        os.makedirs(os.path.dirname(other))
        open(other, "w").close()
        before = files_in(dest)
        r = make("install", "PREFIX=/usr", "DESTDIR=" + dest)
        check(r.returncode == 0, r.stderr)
        check("keeping" in r.stdout and open(mine).read() == "# mine\n", r.stdout)
        with open(os.path.join(dest, "usr/share/perfctr/install-manifest")) as f:
            listed = {l.split()[-1].lstrip("/") for l in f if l[0] in "flc"}
        check(listed == files_in(dest) - before,
              "installed but not listed: %s; listed but not installed: %s"
              % (sorted(files_in(dest) - before - listed)[:5],
                 sorted(listed - (files_in(dest) - before))[:5]))
        for rel in ("lib/systemd/system/perfctrd.socket",
                    "share/bash-completion/completions/perfex", "sbin/perfctrd"):
            check(os.path.exists(os.path.join(dest, "usr", rel)), "missing " + rel)
        unit = open(os.path.join(dest, "usr/lib/systemd/system/perfctrd.service")).read()
        check("ExecStart=/usr/sbin/perfctrd\n" in unit, unit)
        check(os.path.exists(os.path.join(dest, "etc/perfex/serve.conf")))
        # Installing again replaces the install; an edited default stays.
        with open(os.path.join(dest, "etc/perfex/serve.conf"), "a") as f:
            f.write("# edited\n")
        r = make("install", "PREFIX=/usr", "DESTDIR=" + dest)
        check(r.returncode == 0, r.stderr)
        r = make("uninstall", "PREFIX=/usr", "DESTDIR=" + dest)
        check(r.returncode == 0, r.stderr)
        left = files_in(dest) - before
        check(left == {"etc/perfex/serve.conf"}, "left behind: %s" % sorted(left)[:10])
        check(open(os.path.join(dest, "etc/perfex/serve.conf")).read().endswith(
            "# edited\n"), "the edited configuration is not the one kept")
        os.unlink(os.path.join(dest, "etc/perfex/serve.conf"))
        os.rmdir(os.path.join(dest, "etc/perfex"))
        dirs = [d for d, sub, names in os.walk(dest) if not sub and not names]
        check(not dirs, "empty directories left: %s" % dirs[:5])
        # Nothing installed: uninstall says so.
        r = make("uninstall", "PREFIX=/usr", "DESTDIR=" + dest)
        check(r.returncode != 0 and "no install at" in r.stderr, r)


@case
def shared_library_exports_only_public_names():
    if not shutil.which("nm"):
        skip("nm is not installed (binutils)")
    lib = os.path.join(BUILD, "libperfctr.so")
    r = subprocess.run(["nm", "-D", "--defined-only", lib],
                       capture_output=True, text=True)
    check(r.returncode == 0, r.stderr)
    names = [l.split()[-1] for l in r.stdout.splitlines() if l.strip()]
    # The version nodes (PERFCTR_0.1, PERFCTR_0.2, ...: libperfctr.map)
    # are absolute symbols of their own.
    exported = [n.split("@")[0] for n in names
                if not re.match(r"PERFCTR_\d+\.\d+$", n)]
    check(exported, "no symbol exported")
    bad = [n for n in exported
           if not (n.startswith("perfctr_") or n.startswith("vperfctr_"))]
    check(not bad, "exported beyond the public prefixes: %s" % bad[:20])
    r = subprocess.run(["objdump", "-T", lib], capture_output=True, text=True)
    check("PERFCTR_0.1" in r.stdout, "symbols are not versioned")
    check("perfctr_version" in exported)


@case
def program_builds_against_installed_tree():
    with tempfile.TemporaryDirectory() as dest:
        r = make("install", "PREFIX=/usr", "DESTDIR=" + dest)
        check(r.returncode == 0, r.stderr)
        src = os.path.join(dest, "prog.c")
        with open(src, "w") as f:
            f.write('#include <perfctr/perfctr.h>\n#include <stdio.h>\n'
                    'int main(void){ puts(perfctr_version()); return 0; }\n')
        env = dict(os.environ,
                   PKG_CONFIG_SYSROOT_DIR=dest,
                   PKG_CONFIG_PATH=os.path.join(dest, "usr", libdir(), "pkgconfig"))
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "perfctr"],
                               capture_output=True, text=True, env=env)
        if flags.returncode != 0:
            skip("pkg-config unavailable: " + flags.stderr.strip())
        exe = os.path.join(dest, "prog")
        # A sanitized library needs its runtime linked into the program too.
        san = os.environ.get("SANITIZE", "")
        sanflags = ["-fsanitize=" + san] if san else []
        r = subprocess.run(["cc", src, "-o", exe] + sanflags + flags.stdout.split(),
                           capture_output=True, text=True)
        check(r.returncode == 0, r.stderr)
        r = subprocess.run([exe], capture_output=True, text=True,
                           env=dict(env, LD_LIBRARY_PATH=os.path.join(dest, "usr", libdir())))
        check(r.returncode == 0 and r.stdout.strip(), r)


# Every optional dependency the Makefile probes for, turned off on the
# command line as if the machine lacked it.
OPTIONAL = ("HAVE_LIBPFM", "HAVE_LIBDW", "HAVE_LIBELF", "HAVE_ZLIB",
            "HAVE_JSONC", "HAVE_PROTOBUFC", "HAVE_TRACEEVENT",
            "HAVE_MICROHTTPD", "HAVE_LIBBPF", "HAVE_BPF")


@case
def builds_and_counts_without_any_optional_library():
    if os.environ.get("SANITIZE"):
        skip("the plain build covers it; a sanitized copy adds only time")
    with tempfile.TemporaryDirectory() as out:
        r = subprocess.run(["make", "-s", "-j2", "-C", TOP, "O=" + out,
                            "WERROR=1", "all"] + [v + "=" for v in OPTIONAL],
                           capture_output=True, text=True, timeout=900)
        check(r.returncode == 0, r.stderr[-3000:])
        perfex = os.path.join(out, "perfex")
        r = subprocess.run([perfex, "info"], capture_output=True, text=True,
                           timeout=60)
        check(r.returncode == 0, r.stderr)
        libs = r.stdout.split("Optional libraries", 1)[-1]
        for name in ("libpfm4", "libdw", "json-c", "libbpf"):
            line = [l for l in libs.splitlines() if l.split()[1:2] == [name]]
            check(line and line[0].split()[0] == "no",
                  "%s not said to be missing:\n%s" % (name, libs))
        # Counting needs none of them.
        r = subprocess.run([perfex, "-x,", "-e", "task-clock", "--", "true"],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0 and "task-clock" in r.stderr, r)
        # What needs one says which.
        r = subprocess.run([perfex, "-M", "IPC", "--", "true"],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode != 0 and "json-c" in r.stderr, r)


run_cases()
