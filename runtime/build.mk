# runtime/: the library generated code links (libcairnrt.a), and the C test and bench
# harnesses under tests/c and tests/bench that exercise it directly.

RUNTIME_SRCS := $(wildcard runtime/*.c)
RUNTIME_OBJS := $(RUNTIME_SRCS:%.c=$(OBJ)/%.o)
RUNTIME_LIB  := $(OBJ)/libcairnrt.a

$(RUNTIME_LIB): $(RUNTIME_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# tests/c/NAME.c -> $(TBIN)/NAME, linked with the runtime. A harness that needs more
# libraries sets them with a target-specific variable, e.g.
#   $(TBIN)/bench_enclose: LDLIBS += -lopenblas
TEST_HARNESSES := $(patsubst tests/c/%.c,$(TBIN)/%,$(wildcard tests/c/*.c)) \
                  $(patsubst tests/bench/%.c,$(TBIN)/%,$(wildcard tests/bench/*.c))

$(TBIN)/%: $(OBJ)/tests/c/%.o $(RUNTIME_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)
$(TBIN)/%: $(OBJ)/tests/bench/%.o $(RUNTIME_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)

ALL_TARGETS += $(RUNTIME_LIB) $(TEST_HARNESSES)

# The correctly rounded math is checked against MPFR (tests/c/cr_check.c).
$(TBIN)/cr_check $(TBIN)/cr_check_slow: LDLIBS += -lmpfr -lgmp
