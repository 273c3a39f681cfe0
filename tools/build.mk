# tools/: the standalone checker of the exact bracket GEMM, and the extra libraries the
# bracket GEMM's harnesses link.

# The checker compiles the runtime's own integer core (runtime/cairn_enclose.c) with no
# vector or floating-point registers, no pool and no floating type in sight: if the
# arithmetic needed an FPU anywhere, this would not build.
ENCLOSE_CHECK      := $(BIN)/enclose_check
ENCLOSE_CHECK_SRCS := tools/enclose_check.c tools/enclose_casefile.c runtime/cairn_enclose.c
ENCLOSE_NOFP := $(if $(filter x86_64 aarch64,$(shell uname -m)),-mgeneral-regs-only) \
                -DCAIRN_ENCLOSE_NO_SIMD -DCAIRN_ENCLOSE_SERIAL -DCAIRN_ENCLOSE_BITS_ONLY

$(ENCLOSE_CHECK): $(ENCLOSE_CHECK_SRCS) tools/enclose_casefile.h runtime/cairn_enclose.h \
                  runtime/cairn_enclose_core.h runtime/cairn_enclose_impl.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ENCLOSE_NOFP) $(ENCLOSE_CHECK_SRCS) -o $@ $(LDFLAGS)

# Harnesses: the case-file reader, the digest (libcrypto) and the BLAS baseline.
$(TBIN)/enclose_run: $(OBJ)/tools/enclose_casefile.o
$(TBIN)/enclose_run: LDLIBS += -lcrypto
$(TBIN)/bench_enclose: LDLIBS += -lopenblas

ALL_TARGETS += $(ENCLOSE_CHECK)
