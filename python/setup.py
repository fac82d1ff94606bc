# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perfctr for Python: C extensions over libperfctr's public API.

In the tree, `make` builds them against the tree's headers and shared
library (PERFCTR_BUILD_DIR names the build folder, found again at run time
through the extensions' run path).  Outside it, `pip install ./python
--no-build-isolation` builds them against an installed libperfctr found by
pkg-config.

Each extension is the set of C files of python/src/ that share its prefix:
perfctr._core (counting: core*.c) and perfctr._data (recordings: data*.c).
"""
import glob
import os
import shlex
import subprocess

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
VERSION = os.environ.get("PERFCTR_VERSION", "0.1.0")


def library_flags():
    build = os.environ.get("PERFCTR_BUILD_DIR")
    if build:
        build = os.path.abspath(build)
        # The run path: the build folder (the tree's own use), or what
        # PERFCTR_RPATH says ("" for none: make install's copy, whose
        # library is where the system looks).
        rpath = os.environ.get("PERFCTR_RPATH", build)
        return dict(include_dirs=[os.path.join(HERE, "..", "include")],
                    library_dirs=[build],
                    runtime_library_dirs=[rpath] if rpath else [])
    try:
        out = subprocess.run(["pkg-config", "--cflags-only-I",
                              "--libs-only-L", "perfctr"],
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        raise SystemExit("perfctr: libperfctr not found by pkg-config\n"
                         "hint: install libperfctr-dev, or build in the "
                         "tree with `make python`")
    flags = shlex.split(out)
    return dict(include_dirs=[f[2:] for f in flags if f.startswith("-I")],
                library_dirs=[f[2:] for f in flags if f.startswith("-L")])


def extension(name, prefix, flags):
    sources = sorted(glob.glob(os.path.join("src", prefix + "*.c")))
    if not sources:
        return None
    # A change to a shared header rebuilds the extension's files.
    depends = sorted(glob.glob(os.path.join("src", prefix + "*.h")))
    return Extension(name, sources, libraries=["perfctr"], depends=depends,
                     extra_compile_args=["-std=gnu11", "-Wall", "-Wextra",
                                         "-Wno-unused-parameter",
                                         "-Wno-missing-field-initializers"],
                     **flags)


flags = library_flags()
exts = [e for e in (extension("perfctr._core", "core", flags),
                    extension("perfctr._data", "data", flags)) if e]

setup(
    name="perfctr",
    version=VERSION,
    description="Exact performance counters, recordings and profiles "
                "from Python, over libperfctr",
    license="LGPL-2.1-only OR BSD-2-Clause",
    packages=["perfctr", "perfctr.script"],
    # perf's scripts find their helpers under $PERF_EXEC_PATH/scripts/...
    package_data={"perfctr.script": [
        "scripts/python/Perf-Trace-Util/lib/Perf/Trace/*.py"]},
    ext_modules=exts,
    # Named as the module, so that `-p perfctr.pytest` given to a pytest
    # that also loads the installed entry point names one plugin, not two.
    entry_points={"pytest11": ["perfctr.pytest = perfctr.pytest"]},
    python_requires=">=3.9",
)
