# CAIRN: top-level build.
#
#   make            build bin/cairn, bin/cairn-farm, bin/cairn-agent and the runtime
#   make test       install missing packages, build, run the whole suite (pytest)
#   make demo       the main job: coordinator + agent on loopback, examples compared
#   make gpu        device checks on this GPU host: signed bundle under evidence/ (scripts/gpu.sh)
#   make matrix     the suite under gcc and clang, each plain, ASan+UBSan and TSan,
#                   plus the long sweeps (exhaustive conversions ...)
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
DEPS_STAMP := build/.deps-stamp

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
.PHONY: all test matrix fuzz bench demo gpu install clean deps
.DELETE_ON_ERROR:

# Everything a folder wants built by `make` goes into ALL_TARGETS.
ALL_TARGETS :=

include $(sort $(wildcard */build.mk))

all: $(ALL_TARGETS)

deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/deps.sh
	@scripts/deps.sh
	@mkdir -p $(dir $@) && touch $@

# Every compile waits for the packages (order-only: a new stamp rebuilds nothing).
$(OBJ)/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)

# The suite: pytest from Debian's python3 over tests/, told where this cell's builds are.
TEST_ENV = CAIRN_BIN=$(abspath $(BIN)) CAIRN_TBIN=$(abspath $(TBIN)) CAIRN_CC=$(CC) CAIRN_SAN=$(SAN)
test: all
	$(TEST_ENV) $(PYTHON) -m pytest $(PYTEST_ARGS)

MATRIX_CELLS := gcc-none gcc-asan gcc-tsan clang-none clang-asan clang-tsan
matrix: $(DEPS_STAMP)
	@failed=""; for cell in $(MATRIX_CELLS); do \
	  cc=$${cell%-*}; san=$${cell#*-}; \
	  echo "== matrix cell $$cell"; \
	  $(MAKE) --no-print-directory test CC=$$cc SAN=$$san \
	    BIN=build/matrix/$$cell/bin OBJ=build/matrix/$$cell/obj CAIRN_MATRIX=1 \
	    || failed="$$failed $$cell"; \
	done; \
	if [ -n "$$failed" ]; then echo "== matrix: failed cells:$$failed"; exit 1; fi; \
	echo "== matrix: all $(words $(MATRIX_CELLS)) cells passed"
export CAIRN_MATRIX

# `make gpu`: both halves of every device program on this host's GPU, checked by the
# spec's table; without a GPU, the emulated half only (scripts/gpu.sh).
gpu: all
	@BIN=$(abspath $(BIN)) CC=$(CC) scripts/gpu.sh

# Benchmarks and fuzzers are the scripts in tests/bench and tests/fuzz.
bench: all
	@set -e; for b in $(sort $(wildcard tests/bench/bench_*.sh tests/bench/bench_*.py)); do \
	  echo "== $$b"; $(TEST_ENV) $$b; done

fuzz: $(DEPS_STAMP)
	@set -e; for f in $(sort $(wildcard tests/fuzz/fuzz_*.sh)); do \
	  echo "== $$f"; $(TEST_ENV) $$f; done

install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(wildcard $(BIN)/cairn $(BIN)/cairn-farm $(BIN)/cairn-agent) $(DESTDIR)$(PREFIX)/bin

clean:
	rm -rf build bin
