# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# perfctr — libperfctr and perfex.
#
#   make                 library (static + shared), perfex, perfctr.pc
#   make check           everything, then the whole test suite
#   make check-stress    make check 3 times beside two CPU hogs
#   make demo            perfex on the bundled demo workload
#   make install         PREFIX=/usr/local DESTDIR= (make uninstall undoes it)
#   make installcheck    the installed tree: examples, perfex, perfctrd, man
#   make dist            perfctr-VERSION.tar.gz of the commit (distcheck: built)
#   make SANITIZE=address,undefined check
#   make WERROR=1        warnings are errors (CI)
#
# Sources are found by folder: a new .c file in src/lib/<layer>/ joins the
# library, in src/perfex/ joins perfex, in tests/unit or tests/kernel becomes
# one test program, in examples/ one example.

VERSION     := 0.1.0
SOVERSION   := 0
PREFIX      ?= /usr/local
# Debian's multiarch library directory (lib/x86_64-linux-gnu) where
# dpkg-architecture says which; ld.so searches it under /usr and
# /usr/local alike.
MULTIARCH   ?= $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
LIBDIR      ?= $(PREFIX)/lib$(if $(MULTIARCH),/$(MULTIARCH))
INCLUDEDIR  ?= $(PREFIX)/include
BINDIR      ?= $(PREFIX)/bin
SBINDIR     ?= $(PREFIX)/sbin
MANDIR      ?= $(PREFIX)/share/man
DATADIR     ?= $(PREFIX)/share
# /etc whatever the prefix: perfctrd reads /etc/perfctr/perfctrd.conf.
SYSCONFDIR  ?= /etc
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
DESTDIR     ?=
O           ?= build

CC          ?= cc
AR          ?= ar
PKG_CONFIG  ?= pkg-config
CFLAGS      ?= -O2 -g
WARN        := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wno-missing-field-initializers
ifeq ($(WERROR),1)
WARN        += -Werror
endif
BASE_CFLAGS := -std=gnu11 -D_GNU_SOURCE -fPIC -fvisibility=hidden $(WARN) \
               -Iinclude -Isrc/lib -DPERFCTR_VERSION=\"$(VERSION)\"
LDLIBS      := -lpthread -lm

comma       := ,
ifneq ($(SANITIZE),)
BASE_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS     += -fsanitize=$(SANITIZE)
# ThreadSanitizer does not model fences: gcc warns at each one (-Wtsan),
# which WERROR=1 makes fatal.  The fences order the seqlock reads of a
# counter's user page against the kernel, which TSan cannot see either
# (tests/tsan.supp says so).
ifneq ($(filter thread,$(subst $(comma), ,$(SANITIZE))),)
BASE_CFLAGS += -Wno-tsan
endif
endif

# Optional dependencies: detected, never required.  Each one found adds a
# define; `perfex info` says which are present and what is lost without them.
probe = $(shell printf '$(HASH)include <%s>\nint main(void){return 0;}\n' '$(1)' | \
          $(CC) -x c - -o /dev/null $(2) >/dev/null 2>&1 && echo 1)
HASH        := \#
HAVE_LIBPFM := $(call probe,perfmon/pfmlib.h,-lpfm)
HAVE_LIBDW  := $(call probe,elfutils/libdwfl.h,-ldw -lelf)
HAVE_LIBELF := $(call probe,gelf.h,-lelf)
HAVE_ZLIB   := $(call probe,zlib.h,-lz)
HAVE_JSONC  := $(call probe,json-c/json.h,-ljson-c)
PROTOC_C    ?= protoc-c
HAVE_PROTOBUFC := $(if $(shell command -v $(PROTOC_C) 2>/dev/null),$(call probe,protobuf-c/protobuf-c.h,-lprotobuf-c))
HAVE_TRACEEVENT := $(call probe,traceevent/event-parse.h,-ltraceevent)
HAVE_CAPSTONE := $(call probe,capstone/capstone.h,-lcapstone)
ifeq ($(HAVE_LIBPFM),1)
BASE_CFLAGS += -DHAVE_LIBPFM=1
LDLIBS      += -lpfm
endif
ifeq ($(HAVE_LIBDW),1)
BASE_CFLAGS += -DHAVE_LIBDW=1
LDLIBS      += -ldw
endif
ifeq ($(HAVE_LIBELF),1)
BASE_CFLAGS += -DHAVE_LIBELF=1
LDLIBS      += -lelf
endif
ifeq ($(HAVE_ZLIB),1)
BASE_CFLAGS += -DHAVE_ZLIB=1
LDLIBS      += -lz
endif
# Annotations (src/lib/sample/annotate.c, perfex annotate) disassemble with
# libcapstone: without it perfctr_annotation__new() says ENOTSUP and
# perfex annotate says what to install (libcapstone-dev).
ifeq ($(HAVE_CAPSTONE),1)
BASE_CFLAGS += -DHAVE_CAPSTONE=1
LDLIBS      += -lcapstone
endif
# The metric tables are JSON (src/lib/metric/): without json-c there are no
# tables (-M, --topdown, --metrics-file), perfex says so; the generic
# metrics beside the counts are compiled in and need none.
ifeq ($(HAVE_JSONC),1)
BASE_CFLAGS += -DHAVE_JSONC=1
LDLIBS      += -ljson-c
endif
# perfex serve's HTTP server (libmicrohttpd): without it perfex-serve can
# only print its metrics (--once), and says so.  Only perfex-serve links it.
HAVE_MICROHTTPD := $(call probe,microhttpd.h,-lmicrohttpd)

# pprof profiles (src/lib/sample/pprof.c) are encoded with protobuf-c, the
# C made at build time from src/lib/sample/profile.proto by protoc-c:
# without the library or the compiler, perfctr_pprof__new() says ENOTSUP
# and `perfex report --pprof` says what to install.
PROTO_GEN   :=
ifeq ($(HAVE_PROTOBUFC),1)
BASE_CFLAGS += -DHAVE_PROTOBUFC=1
LDLIBS      += -lprotobuf-c
PROTO_GEN   := $(O)/gen/profile.pb-c.c
endif

# Counting cgroups through BPF (src/bpf/, src/lib/core/bpfcg.c) needs
# libbpf, clang for the BPF target and bpftool, which writes vmlinux.h from
# the running kernel's BTF and the program's skeleton at build time.
# Without any of them the library is built without the program and
# perfex --bpf-counters counts with cgroup events, saying why.
CLANG       ?= clang
BPFTOOL     ?= $(or $(shell command -v bpftool 2>/dev/null),$(wildcard /usr/sbin/bpftool /sbin/bpftool))
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
HAVE_LIBBPF := $(call probe,bpf/libbpf.h,-lbpf)
HAVE_BPF    := $(if $(and $(filter 1,$(HAVE_LIBBPF)),$(BPFTOOL),$(shell command -v $(CLANG) 2>/dev/null),$(wildcard $(VMLINUX_BTF))),1)
ifeq ($(HAVE_BPF),1)
BASE_CFLAGS += -DHAVE_BPF=1
# Before -lelf and -lz, which libbpf's archive needs.
LDLIBS      := -lbpf $(LDLIBS)
ifneq ($(HAVE_LIBELF),1)
LDLIBS      += -lelf
endif
endif

# Tracepoint payloads in perfex script (the kernel's print formats): perfex
# only, the library does not need it.
ifeq ($(HAVE_TRACEEVENT),1)
PERFEX_CFLAGS += -DHAVE_TRACEEVENT=1
PERFEX_EXTRA_LIBS += -ltraceevent
endif

# The Python module (python/, C extensions over the shared library): built
# for Debian's interpreter when its headers are there (python3-dev; the
# `python3` first on PATH may be another one, without Debian's packages),
# never under SANITIZE (a sanitized library cannot load into an
# uninstrumented interpreter).  It lands in $(O)/python: PYTHONPATH=$(O)/python.
PYTHON      ?= $(or $(wildcard /usr/bin/python3),python3)
HAVE_PYTHON := $(if $(SANITIZE),,$(shell $(PYTHON) -c 'import os, sysconfig, sys; \
                 sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
                 2>/dev/null && echo 1))

# Where make install puts the Python package: the dist-packages folder
# Debian's python3 reads for PREFIX (/usr: /usr/lib/python3/dist-packages,
# else PREFIX/lib/python3.N/dist-packages); empty: not installed.
PYTHON_VERSION := $(if $(HAVE_PYTHON),$(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])'))
PYTHONDIR   ?= $(if $(HAVE_PYTHON),$(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(PYTHON_VERSION)/dist-packages))

ALL_CFLAGS  = $(BASE_CFLAGS) $(CFLAGS)

LIB_SRCS    := $(sort $(wildcard src/lib/*/*.c))
PERFEX_SRCS := $(sort $(wildcard src/perfex/*.c))
PERFCTRD_SRCS := $(sort $(wildcard src/perfctrd/*.c))
SERVE_SRCS  := $(sort $(wildcard src/perfex/serve/*.c))
UNIT_SRCS   := $(sort $(wildcard tests/unit/*.c))
KERNEL_SRCS := $(sort $(wildcard tests/kernel/*.c))
TLIB_SRCS   := $(sort $(wildcard tests/lib/*.c))
WORK_SRCS   := $(sort $(wildcard tests/workload/*.c))
EX_SRCS     := $(sort $(wildcard examples/*.c))

LIB_OBJS    := $(LIB_SRCS:%.c=$(O)/%.o) $(PROTO_GEN:%.c=%.o)
PERFEX_OBJS := $(PERFEX_SRCS:%.c=$(O)/%.o)
PERFCTRD_OBJS := $(PERFCTRD_SRCS:%.c=$(O)/%.o)
# Everything of the daemon but its main(), for the unit tests.
PERFCTRD_PARTS := $(filter-out $(O)/src/perfctrd/perfctrd.o,$(PERFCTRD_OBJS))
SERVE_OBJS  := $(SERVE_SRCS:%.c=$(O)/%.o)
TLIB_OBJS   := $(TLIB_SRCS:%.c=$(O)/%.o)
UNIT_BINS   := $(UNIT_SRCS:tests/unit/%.c=$(O)/tests/unit/%)
KERNEL_BINS := $(KERNEL_SRCS:tests/kernel/%.c=$(O)/tests/kernel/%)
WORK_BINS   := $(WORK_SRCS:tests/workload/%.c=$(O)/tests/workload/%)
EX_BINS     := $(EX_SRCS:examples/%.c=$(O)/examples/%)

STATIC_LIB  := $(O)/libperfctr.a
SHARED_LIB  := $(O)/libperfctr.so.$(VERSION)
PERFEX      := $(O)/perfex
PERFCTRD    := $(O)/perfctrd
PERFEX_SERVE := $(O)/perfex-serve
PC_FILE     := $(O)/perfctr.pc

.PHONY: all lib deps tests check FORCE check-unit check-kernel check-cli check-python demo install clean bench
.SUFFIXES:
.SECONDARY:

all: lib $(PERFEX) $(PERFEX_SERVE) $(PERFCTRD) $(PC_FILE) $(O)/perfex.bash pmu-events $(if $(HAVE_PYTHON),python)

# setuptools decides what to rebuild; the extensions link the tree's
# shared library and find it again through their run path.
.PHONY: python
python: $(SHARED_LIB)
ifeq ($(HAVE_PYTHON),1)
	cd python && PERFCTR_BUILD_DIR=$(abspath $(O)) PERFCTR_VERSION=$(VERSION) \
	    CFLAGS="$(if $(filter 1,$(WERROR)),-Werror)" \
	    $(PYTHON) setup.py -q build --build-base $(abspath $(O))/python-build \
	    --build-lib $(abspath $(O))/python >/dev/null
else
	@echo "note: no Python module: $(if $(SANITIZE),not built under SANITIZE,$(PYTHON) has no headers (scripts/install-deps installs python3-dev))"
endif

# The copy make install installs ($(O)/python-inst): the same package
# without the build folder as its run path.
.PHONY: python-inst
python-inst: $(SHARED_LIB)
ifeq ($(HAVE_PYTHON),1)
	cd python && PERFCTR_BUILD_DIR=$(abspath $(O)) PERFCTR_RPATH= \
	    PERFCTR_VERSION=$(VERSION) \
	    $(PYTHON) setup.py -q build --build-base $(abspath $(O))/python-inst-build \
	    --build-lib $(abspath $(O))/python-inst >/dev/null
endif

# The kernel tree's PMU event and metric tables (tools/perf/pmu-events/arch,
# GPL-2.0 data), imported from Debian's linux-source package into the build
# tree and installed under $(DATADIR)/perfctr: read at run time, never
# compiled into the library.  Without the package the build goes on and
# only the generic and the user's metrics exist.
PMU_EVENTS_SRC ?= /usr/src/linux-source-6.12.tar.xz
PMU_EVENTS     := $(O)/share/perfctr/pmu-events
.PHONY: pmu-events
ifneq ($(wildcard $(PMU_EVENTS_SRC)),)
pmu-events: $(PMU_EVENTS)/SOURCE
$(PMU_EVENTS)/SOURCE: $(PMU_EVENTS_SRC) scripts/import-pmu-events
	scripts/import-pmu-events $(PMU_EVENTS) $(PMU_EVENTS_SRC)
else
pmu-events:
	@echo "note: $(PMU_EVENTS_SRC) not found: no CPU model metric tables (scripts/install-deps installs linux-source-6.12)"
endif

# The built-in generic metric table, a JSON file of the tree, as C data:
# every count computes the generic metrics, and no run should parse them.
$(O)/gen/metric-generic.inc: src/lib/metric/generic.json scripts/gen-generic-metrics
	@mkdir -p $(dir $@)
	scripts/gen-generic-metrics $< > $@.tmp
	mv $@.tmp $@
$(O)/src/lib/metric/generic.o: $(O)/gen/metric-generic.inc
$(O)/src/lib/metric/generic.o: ALL_CFLAGS += -I$(O)/gen
$(O)/src/lib/metric/table.o: ALL_CFLAGS += -DPERFCTR_DATADIR=\"$(DATADIR)/perfctr\"

# Generated code is compiled without -Werror: its warnings are protoc-c's.
$(O)/gen/%.pb-c.c $(O)/gen/%.pb-c.h: src/lib/sample/%.proto
	@mkdir -p $(O)/gen
	$(PROTOC_C) --proto_path=src/lib/sample --c_out=$(O)/gen $<
$(O)/gen/profile.pb-c.o: $(O)/gen/profile.pb-c.c
	$(CC) $(filter-out -Werror -Wshadow,$(ALL_CFLAGS)) -I$(O)/gen -c $< -o $@
$(O)/src/lib/sample/pprof.o: $(if $(PROTO_GEN),$(O)/gen/profile.pb-c.h)
$(O)/src/lib/sample/pprof.o: ALL_CFLAGS += -I$(O)/gen
# The encoder's unit test decodes what it encodes with the same messages.
$(O)/tests/unit/test_pprof: $(if $(PROTO_GEN),$(O)/gen/profile.pb-c.h)
$(O)/tests/unit/test_pprof: ALL_CFLAGS += -I$(O)/gen

lib: $(STATIC_LIB) $(SHARED_LIB)

# The BPF program: vmlinux.h from the kernel's BTF, the object for the BPF
# target, and its skeleton (the object embedded in a C header).
BPF_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
$(O)/gen/vmlinux.h:
	@mkdir -p $(dir $@)
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp
	mv $@.tmp $@
$(O)/gen/cgroup_counters.bpf.o: src/bpf/cgroup_counters.bpf.c src/bpf/cgroup_counters.h $(O)/gen/vmlinux.h
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) \
	    -I$(O)/gen -Isrc/bpf -c $< -o $@
$(O)/gen/pc_bpfcg.skel.h: $(O)/gen/cgroup_counters.bpf.o
	$(BPFTOOL) gen skeleton $< name pc_bpfcg > $@.tmp
	mv $@.tmp $@
# The off-CPU program (src/bpf/offcpu.bpf.c, loaded by
# src/lib/sample/offcpu.c), built the same way.
$(O)/gen/offcpu.bpf.o: src/bpf/offcpu.bpf.c src/bpf/offcpu.h $(O)/gen/vmlinux.h
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) \
	    -I$(O)/gen -Isrc/bpf -c $< -o $@
$(O)/gen/pc_offcpu.skel.h: $(O)/gen/offcpu.bpf.o
	$(BPFTOOL) gen skeleton $< name pc_offcpu > $@.tmp
	mv $@.tmp $@
ifeq ($(HAVE_BPF),1)
$(O)/src/lib/core/bpfcg.o: $(O)/gen/pc_bpfcg.skel.h
$(O)/src/lib/core/bpfcg.o: ALL_CFLAGS += -I$(O)/gen -Isrc/bpf
$(O)/src/lib/sample/offcpu.o: $(O)/gen/pc_offcpu.skel.h
$(O)/src/lib/sample/offcpu.o: ALL_CFLAGS += -I$(O)/gen -Isrc/bpf
endif

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(STATIC_LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(SHARED_LIB): $(LIB_OBJS) src/lib/libperfctr.map
	$(CC) -shared -Wl,-soname,libperfctr.so.$(SOVERSION) \
	    -Wl,--version-script=src/lib/libperfctr.map $(LDFLAGS) \
	    -o $@ $(LIB_OBJS) $(LDLIBS)
	ln -sf libperfctr.so.$(VERSION) $(O)/libperfctr.so.$(SOVERSION)
	ln -sf libperfctr.so.$(SOVERSION) $(O)/libperfctr.so

# perfex links the static library: one self-contained binary.  It is not
# a PIE, and takes libpfm4's archive when there is one: libpfm's tables are
# thousands of pointers that a PIE or a shared libpfm relocates at every
# start (about 300 page faults, 1 ms of `perfex -- true`'s 2), whether or
# not a native event is used.  bench/stat-overhead measures it.
#
# The same holds for the other libraries: each shared library costs the
# loader a few mappings and page faults at every start (libdw alone brings
# libelf, libz, liblzma and libbz2: 0.3 ms of CPU and 50 page faults of
# `perfex -- true`), while an archive's code is mapped with perfex's own
# and only touched when used.  So every -lX of perfex is replaced by the
# archive libX.a when the compiler finds one (Debian's -dev packages ship
# them), libdw's own dependencies included; -lpthread stays as it is
# (part of the C library).
# libdw's archive needs the archives of its own dependencies (libbz2-dev,
# liblzma-dev...): when one is missing, libdw and libelf stay shared.
archive_of   = $(shell $(CC) -print-file-name=lib$(1).a 2>/dev/null)
has_archive  = $(filter /%,$(call archive_of,$(1:-l%=%)))
static_or_l  = $(foreach l,$(1),$(if $(and $(filter-out -lpthread,$(l)),$(call has_archive,$(l))),$(call archive_of,$(l:-l%=%)),$(l)))
DW_DEPS     := $(if $(filter 1,$(HAVE_LIBDW)),$(sort $(filter-out -ldw -lelf -lpthread,$(shell pkg-config --static --libs-only-l libdw 2>/dev/null))))
DW_STATIC   := $(if $(filter 1,$(HAVE_LIBDW)),$(if $(strip $(foreach l,-ldw -lelf $(DW_DEPS),$(if $(call has_archive,$(l)),,missing))),,1))
PERFEX_DYN  := $(if $(filter 1,$(HAVE_LIBDW)),$(if $(DW_STATIC),,-ldw -lelf))
# A build linked static throughout (LDFLAGS=-static: the PMU lane's cross
# build) links libdw's dependencies into every program, tests included.
ifneq ($(filter -static,$(LDFLAGS)),)
LDLIBS      += $(if $(DW_STATIC),$(DW_DEPS))
endif
PERFEX_LIBS := $(call static_or_l,$(PERFEX_EXTRA_LIBS) $(filter-out -lm $(PERFEX_DYN),$(LDLIBS)) $(if $(DW_STATIC),$(DW_DEPS)) -lm) $(PERFEX_DYN)
# PERFEX_SHARED=1: the other libraries shared, as every program of a
# distribution links them (the Debian package: a fix in zlib or libdw
# reaches perfex without a rebuild), at the start-up cost above.
# A PIE then, as the distribution's hardening asks: libpfm's tables are
# relocated at every start whether perfex is one or not.
PERFEX_PIE  := -no-pie
ifeq ($(PERFEX_SHARED),1)
PERFEX_LIBS := $(PERFEX_EXTRA_LIBS) $(LDLIBS)
PERFEX_PIE  :=
endif

# And with every library an archive, perfex is linked static when the C
# library's archive is there and no sanitizer is asked for (their runtimes
# need the dynamic loader): no dynamic loader runs at all at start (its own
# relocation and the loading of libc: 0.2 ms of `perfex -- true`'s 1.3).
# A static program cannot load a shared library, so the C++ runtime's
# demangler is linked in from libstdc++'s archive, which a static perfex
# therefore needs too (src/perfex/perfex.c; the library finds it through
# a weak reference and never loads anything in a static program; the
# static link still prints glibc's warning about the library's dlopen
# fallback, which is for dynamic programs without the C++ runtime).
PERFEX_STATIC := $(if $(SANITIZE)$(filter 1,$(PERFEX_SHARED)),,$(if $(and $(call has_archive,-lc),$(call has_archive,-lstdc++),$(if $(filter-out -lpthread,$(filter -l%,$(PERFEX_LIBS))),,1)),1))
ifeq ($(PERFEX_STATIC),1)
PERFEX_LDFLAGS := -static
PERFEX_LIBS += $(call archive_of,stdc++)
$(PERFEX_OBJS): ALL_CFLAGS += -DPERFEX_LINKS_DEMANGLER=1
endif
$(PERFEX_OBJS): ALL_CFLAGS += $(PERFEX_CFLAGS)
$(PERFEX): $(PERFEX_OBJS) $(STATIC_LIB)
	$(CC) $(LDFLAGS) $(PERFEX_PIE) $(PERFEX_LDFLAGS) -o $@ $(PERFEX_OBJS) $(STATIC_LIB) $(PERFEX_LIBS)
ifneq ($(HAVE_CAPSTONE),1)
	@echo "note: libcapstone not found: perfex annotate cannot disassemble; scripts/install-deps installs libcapstone-dev"
endif

# The access broker (src/perfctrd/): a root daemon on the static library.
$(PERFCTRD): $(PERFCTRD_OBJS) $(STATIC_LIB)
	$(CC) $(LDFLAGS) -o $@ $(PERFCTRD_OBJS) $(STATIC_LIB) $(LDLIBS)

# perfex serve is this program, which perfex runs for its `serve`
# subcommand: libmicrohttpd is a shared library only (its TLS
# dependencies have no archives here), and linking it into perfex would
# make perfex dynamic (see above).  It shares perfex's option table and
# messages.
SERVE_SHARED := $(O)/src/perfex/options.o $(O)/src/perfex/messages.o
SERVE_LIBS  := $(if $(filter 1,$(HAVE_MICROHTTPD)),-lmicrohttpd)
$(SERVE_OBJS): ALL_CFLAGS += -Isrc/perfex $(if $(filter 1,$(HAVE_MICROHTTPD)),-DHAVE_MICROHTTPD=1)
$(PERFEX_SERVE): $(SERVE_OBJS) $(SERVE_SHARED) $(STATIC_LIB)
	$(CC) $(LDFLAGS) -o $@ $(SERVE_OBJS) $(SERVE_SHARED) $(STATIC_LIB) $(SERVE_LIBS) $(LDLIBS)
ifneq ($(HAVE_MICROHTTPD),1)
	@echo "note: libmicrohttpd not found: perfex serve can only print its metrics (--once); scripts/install-deps installs libmicrohttpd-dev"
endif

# perfex's bash completion: its tables printed from the option table by a
# program linked with it (scripts/gen-completion.c), so that they never
# drift from perfex, then the part that completes with them.
COMPLETION_GEN := $(O)/gen/gen-completion
$(COMPLETION_GEN): scripts/gen-completion.c $(SERVE_SHARED) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc/perfex $(LDFLAGS) -o $@ $< $(SERVE_SHARED) $(STATIC_LIB) $(LDLIBS)
$(O)/perfex.bash: $(COMPLETION_GEN) scripts/perfex-completion.bash
	$(COMPLETION_GEN) > $@.tmp
	cat scripts/perfex-completion.bash >> $@.tmp
	mv $@.tmp $@

# License: is read by pkgconf 1.9 and later (`pkgconf --license perfctr`);
# older pkg-config and pkgconf ignore fields they do not know.
pc_text = printf 'prefix=%s\nlibdir=%s\nincludedir=%s\n\nName: perfctr\nDescription: performance-monitoring counters on perf_event_open\nVersion: %s\nLicense: LGPL-2.1 OR BSD-2-Clause\nLibs: -L$${libdir} -lperfctr\nLibs.private: %s\nCflags: -I$${includedir}\n' \
	    '$(PREFIX)' '$(LIBDIR)' '$(INCLUDEDIR)' '$(VERSION)' '$(LDLIBS)'

# Regenerated whenever PREFIX (or anything else in it) changes.
$(PC_FILE): FORCE
	@mkdir -p $(dir $@)
	@$(pc_text) > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

FORCE:

# Test programs see the library's internal headers (unit tests reach into
# the layers) and link the static library.
$(O)/tests/unit/%: tests/unit/%.c $(TLIB_OBJS) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/lib $(LDFLAGS) -o $@ $< $(TLIB_OBJS) $(STATIC_LIB) $(LDLIBS)

# Unit tests of the daemon's parts (policy parser and checks).
$(O)/tests/unit/test_perfctrd_%: tests/unit/test_perfctrd_%.c $(TLIB_OBJS) $(PERFCTRD_PARTS) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/lib -Isrc/perfctrd $(LDFLAGS) -o $@ $< $(TLIB_OBJS) $(PERFCTRD_PARTS) $(STATIC_LIB) $(LDLIBS)

# Unit tests of perfex serve's parts (text bodies, the families).
SERVE_PARTS := $(O)/src/perfex/serve/text.o $(O)/src/perfex/serve/metrics.o
$(O)/tests/unit/test_serve_%: tests/unit/test_serve_%.c $(TLIB_OBJS) $(SERVE_PARTS) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/lib -Isrc/perfex -Isrc/perfex/serve $(LDFLAGS) -o $@ $< $(TLIB_OBJS) $(SERVE_PARTS) $(STATIC_LIB) $(LDLIBS)

# Unit tests of perfex's parts (the option parse): its objects, no main().
PERFEX_PARTS := $(O)/src/perfex/options.o $(O)/src/perfex/messages.o
# perfex stat's printing: with the files it prints through.
STAT_PRINT_PARTS := $(addprefix $(O)/src/perfex/,stat-print.o stat-metrics.o stat-tree.o json-out.o)
$(O)/tests/unit/test_perfex_stat_print: tests/unit/test_perfex_stat_print.c $(TLIB_OBJS) $(PERFEX_PARTS) $(STAT_PRINT_PARTS) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/lib -Isrc/perfex $(LDFLAGS) -o $@ $< $(TLIB_OBJS) $(PERFEX_PARTS) $(STAT_PRINT_PARTS) $(STATIC_LIB) $(LDLIBS)
$(O)/tests/unit/test_perfex_%: tests/unit/test_perfex_%.c $(TLIB_OBJS) $(PERFEX_PARTS) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/lib -Isrc/perfex $(LDFLAGS) -o $@ $< $(TLIB_OBJS) $(PERFEX_PARTS) $(STATIC_LIB) $(LDLIBS)

$(O)/tests/kernel/%: tests/kernel/%.c $(TLIB_OBJS) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/lib $(LDFLAGS) -o $@ $< $(TLIB_OBJS) $(STATIC_LIB) $(LDLIBS)

# Workloads are plain programs: no library, predictable system calls.
$(O)/tests/workload/%: tests/workload/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer $(WARN) $(LDFLAGS) -o $@ $< -lpthread

# The library topwork dlopen()s while perfex top watches (test_top.py).
TOPLIB      := $(O)/tests/workload/libtoplib.so
$(TOPLIB): tests/workload/lib/toplib.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer -fPIC -shared $(WARN) $(LDFLAGS) -o $@ $<

$(O)/examples/%: examples/%.c $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(STATIC_LIB) $(LDLIBS)

tests: all $(UNIT_BINS) $(KERNEL_BINS) $(WORK_BINS) $(TOPLIB) $(EX_BINS)

# The README's two commands: each installs missing Debian packages first
# (as root), then re-enters make so optional libraries are detected anew.
deps:
	scripts/install-deps

check: deps
	$(MAKE) tests
	O=$(O) SANITIZE=$(SANITIZE) PYTHON=$(PYTHON) tests/run

check-unit: tests
	O=$(O) SANITIZE=$(SANITIZE) tests/run unit

check-kernel: tests
	O=$(O) SANITIZE=$(SANITIZE) tests/run kernel

check-cli: tests
	O=$(O) SANITIZE=$(SANITIZE) tests/run cli

check-python: tests
	O=$(O) SANITIZE=$(SANITIZE) PYTHON=$(PYTHON) tests/run python

# The library's concurrent paths under ThreadSanitizer (CI builds it with
# O=build-tsan SANITIZE=thread): region markers from 16 threads, the
# notification queue, the fast read against a writer thread, vperfctr
# overflow signals and iresume, session rotation and event sets, the
# sampler and its ring reader, a command target.
# tests/tsan.supp lists the documented false positives.  TSan holds an
# asynchronous signal until the thread next enters a C library function it
# intercepts (and merges those that arrive meanwhile): the workloads of the
# signal tests call test_signal_point() after each system call, so overflow
# signals, iresume and set rotation stay exact here too.  The cases whose
# truth TSan itself changes (its background thread among the process's
# threads, page faults on its shadow memory) skip and say so.
CONCURRENT_TESTS := unit/test_notify unit/test_fastread kernel/test_regions \
	kernel/test_vperfctr kernel/test_overflow kernel/test_sampling \
	kernel/test_rotate kernel/test_sets kernel/test_ring_sampling \
	kernel/test_session_command
.PHONY: check-concurrent
check-concurrent: $(CONCURRENT_TESTS:%=$(O)/tests/%) $(WORK_BINS)
	O=$(O) SANITIZE=$(SANITIZE) \
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp" \
	tests/run $(CONCURRENT_TESTS:%=concurrent:%)

# The soak at its full size: 100,000 cycles of each kind (sessions,
# samplers, vperfctr states), whatever the time; make check runs it bounded.
.PHONY: check-soak
check-soak: $(O)/tests/kernel/test_soak
	O=$(O) SOAK_FULL=1 SOAK_SECONDS=$${SOAK_SECONDS:-2400} \
	PERFCTR_TEST_TIMEOUT=$${PERFCTR_TEST_TIMEOUT:-2700} \
	tests/run concurrent:kernel/test_soak

# The whole suite 3 times in a row beside two CPU hogs (STRESS_RUNS=N for
# another count): the timing-sensitive tests must hold on a loaded machine.
.PHONY: check-stress
check-stress:
	O=$(O) SANITIZE=$(SANITIZE) MAKE="$(MAKE)" scripts/check-stress

# The PMU lane: kernel- and hardware-tier tests in an arm64 guest under
# QEMU, whose emulated PMU the kernel's real driver serves (docs/pmu-lane.md).
check-pmu:
	scripts/pmu-lane/run

demo: deps
	$(MAKE) all $(WORK_BINS)
	O=$(O) tests/demo

bench: all $(WORK_BINS)
	O=$(O) bench/run

# make install: scripts/install copies, and lists what it put where in
# $(DATADIR)/perfctr/install-manifest, which make uninstall removes; a
# configuration file under $(SYSCONFDIR) that exists is never overwritten.
INSTALL_VARS = O='$(O)' DESTDIR='$(DESTDIR)' PREFIX='$(PREFIX)' \
	BINDIR='$(BINDIR)' SBINDIR='$(SBINDIR)' LIBDIR='$(LIBDIR)' \
	INCLUDEDIR='$(INCLUDEDIR)' MANDIR='$(MANDIR)' DATADIR='$(DATADIR)' \
	SYSCONFDIR='$(SYSCONFDIR)' SYSTEMDUNITDIR='$(SYSTEMDUNITDIR)' \
	BASHCOMPDIR='$(BASHCOMPDIR)' PYTHONDIR='$(PYTHONDIR)' VERSION='$(VERSION)' \
	SOVERSION='$(SOVERSION)' MAKE='$(MAKE)'
.PHONY: uninstall installcheck
install: all python-inst
	$(INSTALL_VARS) scripts/install install

uninstall:
	$(INSTALL_VARS) scripts/install uninstall

# The installed tree as its users meet it: the examples built against
# `pkg-config perfctr` (shared and static) count exactly, so do the
# installed perfex and, as root, perfctrd for a user; man finds the pages.
installcheck:
	$(INSTALL_VARS) CC='$(CC)' scripts/installcheck

# The release tarball: perfctr-$(VERSION).tar.gz of the commit (HEAD),
# reproducible (scripts/dist).  distcheck builds it in a directory of its
# own and runs DISTCHECK_TARGETS there (the whole suite), then install,
# installcheck and uninstall into a staging root.
DIST_TARBALL := $(O)/perfctr-$(VERSION).tar.gz
DISTCHECK_TARGETS ?= check
.PHONY: dist distcheck
dist:
	scripts/dist $(VERSION) $(O)

distcheck: dist
	MAKE='$(MAKE)' scripts/distcheck $(DIST_TARBALL) '$(DISTCHECK_TARGETS)'

# Fuzzers (libFuzzer, clang): each target is built with the library's
# sources instrumented alongside.  `make fuzz-run` runs each one for
# FUZZ_TIME seconds from the seeds in tests/fuzz/corpus/<target>/.
FUZZ_CC     ?= clang
FUZZ_TIME   ?= 60
FUZZ_SRCS   := $(sort $(wildcard tests/fuzz/*.c))
FUZZ_BINS   := $(FUZZ_SRCS:tests/fuzz/%.c=$(O)/fuzz/%)
FUZZ_CFLAGS := -std=gnu11 -D_GNU_SOURCE -g -O1 -Iinclude -Isrc/lib \
               -DPERFCTR_VERSION=\"$(VERSION)\" \
               -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

.PHONY: fuzz fuzz-run
fuzz: $(FUZZ_BINS)

$(O)/fuzz/%: tests/fuzz/%.c $(LIB_SRCS) $(O)/gen/metric-generic.inc $(PROTO_GEN) $(if $(HAVE_BPF),$(O)/gen/pc_bpfcg.skel.h $(O)/gen/pc_offcpu.skel.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -I$(O)/gen -Isrc/bpf $(filter -DHAVE_%,$(BASE_CFLAGS)) -o $@ $< $(LIB_SRCS) $(PROTO_GEN) $(LDLIBS)

# The command line (tests/fuzz/fuzz_argv.c): perfex's and perfex-serve's
# sources too, their main()s left out, run in the dry run (options.h).
$(O)/fuzz/fuzz_argv: tests/fuzz/fuzz_argv.c $(LIB_SRCS) $(PERFEX_SRCS) $(SERVE_SRCS) $(O)/gen/metric-generic.inc $(PROTO_GEN) $(if $(HAVE_BPF),$(O)/gen/pc_bpfcg.skel.h $(O)/gen/pc_offcpu.skel.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -I$(O)/gen -Isrc/bpf -Isrc/perfex -DPERFEX_NO_MAIN=1 \
		$(filter -DHAVE_%,$(BASE_CFLAGS)) $(PERFEX_CFLAGS) \
		$(if $(filter 1,$(HAVE_MICROHTTPD)),-DHAVE_MICROHTTPD=1) -o $@ $< \
		$(LIB_SRCS) $(PERFEX_SRCS) $(SERVE_SRCS) $(PROTO_GEN) \
		$(PERFEX_EXTRA_LIBS) $(SERVE_LIBS) $(LDLIBS)

fuzz-run: fuzz
	@pass=0; fail=0; \
	for f in $(FUZZ_BINS); do \
		name=$$(basename $$f); \
		corpus=$(O)/fuzz/corpus-$$name; mkdir -p $$corpus; \
		echo "== $$name ($(FUZZ_TIME) s)"; \
		dict=; [ -f tests/fuzz/$$name.dict ] && dict=-dict=tests/fuzz/$$name.dict; \
		if $$f -max_total_time=$(FUZZ_TIME) -max_len=65536 -timeout=10 \
		    -print_final_stats=1 $$dict $$corpus tests/fuzz/corpus/$$name \
		    2>$(O)/fuzz/$$name.log; then \
			grep -E '^stat::number_of_executed_units|^Done' $(O)/fuzz/$$name.log; \
			echo "ok fuzz/$$name"; pass=$$((pass + 1)); \
		else \
			tail -n 60 $(O)/fuzz/$$name.log; \
			echo "FAIL fuzz/$$name: see $(O)/fuzz/$$name.log"; fail=$$((fail + 1)); \
		fi; \
	done; \
	echo "$$pass passed, $$fail failed, 0 skipped"; [ $$fail -eq 0 ]

clean:
	rm -rf $(O)

-include $(shell find $(O) -name '*.d' 2>/dev/null)
