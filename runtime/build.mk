# runtime/: the library generated code links (libcairnrt.a), and the C test and bench
# harnesses under tests/c and tests/bench that exercise it directly.

RUNTIME_SRCS := $(wildcard runtime/*.c)
RUNTIME_OBJS := $(RUNTIME_SRCS:%.c=$(OBJ)/%.o)
RUNTIME_LIB  := $(OBJ)/libcairnrt.a

$(RUNTIME_LIB): $(RUNTIME_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# tests/c/NAME.c -> $(TBIN)/NAME, linked with the runtime (bench_kernels.c is not one:
# bench_kernels.sh builds it around the C that cairn generates). A harness that needs more
# libraries sets them with a target-specific variable, e.g.
#   $(TBIN)/bench_enclose: LDLIBS += -lopenblas
TEST_HARNESSES := $(patsubst tests/c/%.c,$(TBIN)/%,$(wildcard tests/c/*.c)) \
                  $(patsubst tests/bench/%.c,$(TBIN)/%,$(filter-out tests/bench/bench_kernels.c,\
                      $(wildcard tests/bench/*.c)))

$(TBIN)/%: $(OBJ)/tests/c/%.o $(RUNTIME_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)
$(TBIN)/%: $(OBJ)/tests/bench/%.o $(RUNTIME_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# The harnesses that link a test package (MPFR, OpenBLAS) are built by make test only.
TEST_ONLY_HARNESSES := $(filter $(TBIN)/cr_check $(TBIN)/cr_check_slow $(TBIN)/bench_enclose,$(TEST_HARNESSES))
ALL_TARGETS += $(RUNTIME_LIB) $(filter-out $(TEST_ONLY_HARNESSES),$(TEST_HARNESSES))
TEST_TARGETS += $(TEST_ONLY_HARNESSES)

# The .npy reader's fuzz target (tests/fuzz/fuzz_npy.c) with a main that replays files:
# tests/fuzz/test_fuzz_npy.py runs the kept corpus (tests/fuzz/corpus_npy) through it in
# `make test`; tests/fuzz/fuzz_npy.sh builds the same source with libFuzzer (`make fuzz`).
FUZZ_NPY_REPLAY := $(TBIN)/fuzz_npy_replay
$(OBJ)/tests/fuzz/fuzz_npy.o: CFLAGS += -DFUZZ_NPY_REPLAY
$(FUZZ_NPY_REPLAY): $(OBJ)/tests/fuzz/fuzz_npy.o $(RUNTIME_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)
ALL_TARGETS += $(FUZZ_NPY_REPLAY)

# The runtime as a shared library for C users and the Python package (make install puts
# it beside libcairnrt.a; pkg-config cairn names it): position-independent objects of
# every runtime source, never instrumented (a sanitizer's runtime cannot be loaded into a
# host process after it started), linked with the libraries the runtime calls.
RUNTIME_PIC_OBJS := $(RUNTIME_SRCS:%.c=$(OBJ)/pic/%.o)
RUNTIME_SO       := $(OBJ)/libcairn.so
$(OBJ)/pic/runtime/%.o: runtime/%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SANFLAGS),$(CFLAGS)) -fPIC -MMD -MP -c $< -o $@
$(RUNTIME_SO): $(RUNTIME_PIC_OBJS)
	$(CC) -shared -Wl,-soname,libcairn.so $^ -o $@ -lm -pthread -lcrypto -lcjson
ALL_TARGETS += $(RUNTIME_SO)
RUNTIME_PIC_A := $(OBJ)/libcairn.a
$(RUNTIME_PIC_A): $(RUNTIME_PIC_OBJS)
	rm -f $@ && ar rcs $@ $^
ALL_TARGETS += $(RUNTIME_PIC_A)

# The correctly rounded math is checked against MPFR (tests/c/cr_check.c).
$(TBIN)/cr_check $(TBIN)/cr_check_slow: LDLIBS += -lmpfr -lgmp
