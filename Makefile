# CAIRN: top-level build.
#
#   make            build bin/cairn, bin/cairn-farm, bin/cairn-agent and the runtime; installs
#                   nothing: names what is missing and the command (scripts/deps.sh build)
#   make test       install missing packages (scripts/deps.sh test), build, run the suite
#   make demo       the main job: coordinator + agent on loopback, examples compared
#   make gpu        device checks on this GPU host, no network, installs nothing: one folder
#                   build/gpu, a summary and a signed bundle under evidence/ (scripts/gpu.sh)
#   make test-loaded  the suite beside a CPU hog of two busy processes per core
#                   (ONE_CORE=1: all of it on core 0, taskset -c 0)
#   make matrix     the suite under gcc and clang, each plain, ASan+UBSan and TSan,
#                   plus the long sweeps (exhaustive conversions ...), and loaded
#   make fuzz       bounded fuzzing of the front end
#   make bench      benchmarks, printed as ratios against a baseline in the same run
#   make install PREFIX=/usr/local
#
# Each folder adds its own rules in <folder>/build.mk; this file holds what they share.
# CC=gcc|clang and SAN=none|asan|tsan pick the cell; BIN and OBJ say where it lands.

ifeq ($(origin CC),default)
CC := gcc
endif
SAN     ?= none
BIN     ?= bin
OBJ     ?= build/obj
TBIN    := $(OBJ)/tbin
PREFIX  ?= /usr/local
PYTHON  := /usr/bin/python3
PYTEST_ARGS ?= tests
# The packages: goals that run tests install what they need (scripts/deps.sh test, as CI's
# .ci/run does on a fresh machine); every other goal only checks the build's packages and
# names the one command that installs what is missing (scripts/deps.sh --check build).
DEPS_INSTALL_GOALS := test test-loaded matrix fuzz bench deps
ifneq ($(filter $(DEPS_INSTALL_GOALS),$(MAKECMDGOALS)),)
DEPS_STAMP := $(OBJ)/.deps-test-stamp
DEPS_CMD   := scripts/deps.sh test
else
DEPS_STAMP := $(OBJ)/.deps-build-stamp
DEPS_CMD   := scripts/deps.sh --check build
endif

# Strict floating point everywhere: a contracted multiply-add would change bits the
# language fixes (and would break the error-free transformations of the exact sum).
STRICT_FP := -ffp-contract=off -fno-fast-math
WARN      := -Wall -Wextra -Werror
SAN_asan  := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_tsan  := -fsanitize=thread
SAN_none  :=
SANFLAGS  := $(SAN_$(SAN))

CFLAGS  := -std=c11 -O2 -g $(WARN) $(STRICT_FP) -D_GNU_SOURCE -Iruntime $(SANFLAGS) $(EXTRA_CFLAGS)
LDFLAGS := $(SANFLAGS) -pthread
LDLIBS  := -lm

.DEFAULT_GOAL := all
.PHONY: all test test-loaded matrix fuzz bench demo gpu install clean deps
.DELETE_ON_ERROR:

# Everything a folder wants built by `make` goes into ALL_TARGETS; what needs the test
# packages (scripts/deps.sh test) into TEST_TARGETS, built by make test and make bench.
ALL_TARGETS :=
TEST_TARGETS :=

include $(sort $(wildcard */build.mk))

all: $(ALL_TARGETS)

deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/deps.sh
	@$(DEPS_CMD)
	@mkdir -p $(dir $@) && touch $@

# Every compile waits for the packages (order-only: a new stamp rebuilds nothing).
$(OBJ)/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)

# The suite: pytest from Debian's python3 over tests/, told where this cell's builds are.
TEST_ENV = CAIRN_BIN=$(abspath $(BIN)) CAIRN_TBIN=$(abspath $(TBIN)) CAIRN_CC=$(CC) CAIRN_SAN=$(SAN)
# TEST_TARGETS: what only the tests and benches use (harnesses linking MPFR, OpenBLAS).
test: all $(TEST_TARGETS)
	$(TEST_ENV) $(PYTHON) -m pytest $(PYTEST_ARGS)

# The same suite beside a CPU hog (scripts/test_loaded.sh, HOG_PER_CORE busy processes per
# core, default 2; ONE_CORE=1 pins it all to core 0): no test may count on the machine's
# speed or load (docs/design.md).
test-loaded: all
	@ONE_CORE=$(ONE_CORE) scripts/test_loaded.sh $(MAKE) --no-print-directory test CC=$(CC) SAN=$(SAN) \
	  BIN=$(BIN) OBJ=$(OBJ) PYTEST_ARGS="$(PYTEST_ARGS)"

MATRIX_CELLS := gcc-none gcc-asan gcc-tsan clang-none clang-asan clang-tsan
matrix: $(DEPS_STAMP)
	@failed=""; for cell in $(MATRIX_CELLS); do \
	  cc=$${cell%-*}; san=$${cell#*-}; \
	  echo "== matrix cell $$cell"; \
	  $(MAKE) --no-print-directory test CC=$$cc SAN=$$san \
	    BIN=build/matrix/$$cell/bin OBJ=build/matrix/$$cell/obj CAIRN_MATRIX=1 \
	    || failed="$$failed $$cell"; \
	done; \
	echo "== matrix cell gcc-none, loaded"; \
	$(MAKE) --no-print-directory test-loaded CC=gcc SAN=none \
	  BIN=build/matrix/gcc-none/bin OBJ=build/matrix/gcc-none/obj || failed="$$failed loaded"; \
	echo "== matrix cell gcc-none, loaded on one core"; \
	$(MAKE) --no-print-directory test-loaded CC=gcc SAN=none ONE_CORE=1 \
	  BIN=build/matrix/gcc-none/bin OBJ=build/matrix/gcc-none/obj || failed="$$failed one-core"; \
	if [ -n "$$failed" ]; then echo "== matrix: failed cells:$$failed"; exit 1; fi; \
	echo "== matrix: all $(words $(MATRIX_CELLS)) cells passed, and gcc-none loaded (all cores, one)"
export CAIRN_MATRIX

# `make gpu`: both halves of every device program on this host's GPU, checked by the
# spec's table; without a GPU, the emulated half only (scripts/gpu.sh).
gpu: all
	@BIN=$(abspath $(BIN)) CC=$(CC) scripts/gpu.sh

# Benchmarks and fuzzers are the scripts in tests/bench and tests/fuzz.
bench: all $(TEST_TARGETS)
	@set -e; for b in $(sort $(wildcard tests/bench/bench_*.sh tests/bench/bench_*.py)); do \
	  echo "== $$b"; $(TEST_ENV) $$b; done

fuzz: $(DEPS_STAMP)
	@set -e; for f in $(sort $(wildcard tests/fuzz/fuzz_*.sh)); do \
	  echo "== $$f"; $(TEST_ENV) $$f; done

# `make install PREFIX=... [DESTDIR=...]`: the binaries; the runtime's headers, shared
# library and archive with a pkg-config file (cairn.pc); the Python package (told where
# the binaries and libcairn.so went, in cairn/_installed.py); man pages and bash
# completion generated from the binaries' --help (scripts/help_pages.py).
# tests/build/test_install.py installs into a temporary prefix and uses only that.
# The package goes where PYTHON (make install PYTHON=...) looks under PREFIX (scripts/python_dir.py).
PYTHON_DIR ?= $(shell $(PYTHON) scripts/python_dir.py $(PREFIX))
# The loader finds /usr/lib and /usr/local/lib by itself; another prefix's programs carry
# the rpath from cairn.pc, so a program linked with pkg-config --libs cairn starts.
PC_RPATH = $(if $(filter /usr /usr/local,$(patsubst %/,%,$(PREFIX))),, -Wl$(comma)-rpath$(comma)$${libdir})
comma := ,
INSTALLED_BINS = $(wildcard $(BIN)/cairn $(BIN)/cairn-farm $(BIN)/cairn-agent)
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include/cairn \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PYTHON_DIR)/cairn \
	  $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 755 $(INSTALLED_BINS) $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(wildcard runtime/*.h) $(DESTDIR)$(PREFIX)/include/cairn
	install -m 755 $(OBJ)/libcairn.so $(DESTDIR)$(PREFIX)/lib
	install -m 644 $(OBJ)/libcairn.a $(DESTDIR)$(PREFIX)/lib
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@RPATH@|$(PC_RPATH)|' -e 's|@VERSION@|$(shell $(BIN)/cairn --version | cut -d" " -f2)|' \
	  runtime/cairn.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/cairn.pc
	install -m 644 $(filter-out %/_installed.py,$(wildcard python/cairn/*.py)) $(DESTDIR)$(PYTHON_DIR)/cairn
	printf '"""Written by make install."""\nBINDIR = "%s"\nLIBDIR = "%s"\n' \
	  '$(PREFIX)/bin' '$(PREFIX)/lib' > $(DESTDIR)$(PYTHON_DIR)/cairn/_installed.py
	for b in $(INSTALLED_BINS); do n=$$(basename $$b); \
	  $(PYTHON) scripts/help_pages.py man $$b $(DESTDIR)$(PREFIX)/share/man/man1/$$n.1 && \
	  $(PYTHON) scripts/help_pages.py completion $$b \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$n || exit 1; done

clean:
	rm -rf build bin
