# compiler/: the cairn binary. Every compiler/*.c and compiler/*/*.c is part of it (one
# folder per pass: docs/design.md). Its includes are written from compiler/ ("check/check.h")
# or from the tree's root ("lib/err.h", "runtime/cairn_layout.h"). It does not link the
# runtime library: it carries the runtime's sources (below) for the programs it builds.
# It links lib/, what it shares with cairn-farm and cairn-agent.

include lib/build.mk

CAIRN_SRCS := $(wildcard compiler/*.c compiler/*/*.c)
CAIRN_OBJS := $(CAIRN_SRCS:%.c=$(OBJ)/%.o)
# libz3 is not linked: cairn verify loads it when it runs (compiler/verify/verify_z3.c),
# the one the build would have linked, named by its SONAME.
CAIRN_LIBS := $(shell pkg-config --libs libcjson openssl 2>/dev/null || echo -lcjson -lcrypto) -ldl
Z3_SONAME := $(shell objdump -p "$$($(CC) -print-file-name=libz3.so)" 2>/dev/null | \
                     awk '/SONAME/ { print $$2 }')
ifneq ($(Z3_SONAME),)
$(OBJ)/compiler/verify/verify_z3.o: CFLAGS += -DVERIFY_Z3_SONAME='"$(Z3_SONAME)"'
endif

# cairn show and cairn diff read .npy files with the runtime's parser (compiler/npy_set.c).
$(BIN)/cairn: $(CAIRN_OBJS) $(OBJ)/runtime/cairn_npy.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(CAIRN_LIBS) $(LDLIBS)

ifneq ($(CAIRN_SRCS),)
ALL_TARGETS += $(BIN)/cairn
endif
$(OBJ)/compiler/%.o $(OBJ)/gen/%.o: CFLAGS += -Icompiler

# The runtime travels inside bin/cairn (back end: compiler/driver/driver.c writes it into the
# build cache): scripts/embed_runtime.py turns runtime/*.h and runtime/*.c into one C file.
RUNTIME_EMBED_FILES := $(sort $(wildcard runtime/*.h runtime/*.c))
# The list itself is a prerequisite, so a runtime file removed (or a branch switched) re-embeds.
RUNTIME_EMBED_LIST := $(OBJ)/gen/runtime_embed.list
$(shell mkdir -p $(OBJ)/gen && echo '$(RUNTIME_EMBED_FILES)' | cmp -s - $(RUNTIME_EMBED_LIST) || \
  echo '$(RUNTIME_EMBED_FILES)' > $(RUNTIME_EMBED_LIST))
$(OBJ)/gen/runtime_embed.c: scripts/embed_runtime.py $(RUNTIME_EMBED_FILES) $(RUNTIME_EMBED_LIST)
	@mkdir -p $(dir $@)
	$(PYTHON) scripts/embed_runtime.py $@ $(RUNTIME_EMBED_FILES)
$(OBJ)/gen/runtime_embed.o: $(OBJ)/gen/runtime_embed.c compiler/base/base.h
	$(CC) $(CFLAGS) -c $< -o $@
ifneq ($(wildcard compiler/base/base.h),)
$(BIN)/cairn: $(OBJ)/gen/runtime_embed.o
endif

# Device roofline tables for `cairn predict` (compiler/predict/predict_devices.c) travel inside
# bin/cairn too: the same embedding script, its names renamed to cairn_device_tables.
DEVICE_TABLES := $(sort $(wildcard configs/devices/*.json))
$(OBJ)/gen/device_tables.c: scripts/embed_runtime.py $(DEVICE_TABLES)
	@mkdir -p $(dir $@)
	$(PYTHON) scripts/embed_runtime.py $@.in $(DEVICE_TABLES)
	sed -e 's/cairn_runtime_file/cairn_device_table/g' -e 's|from runtime/|from configs/devices/|' $@.in > $@
$(OBJ)/gen/device_tables.o: $(OBJ)/gen/device_tables.c compiler/base/base.h
	$(CC) $(CFLAGS) -c $< -o $@
ifneq ($(wildcard compiler/predict/predict_devices.c),)
$(BIN)/cairn: $(OBJ)/gen/device_tables.o
endif

# tests/c/intsys_check.c drives the integer solver of compiler/base (tests/frontend/
# test_intsys.py): it links that one object, not the runtime the other harnesses link.
$(TBIN)/intsys_check: $(OBJ)/tests/c/intsys_check.o $(OBJ)/compiler/base/intsys.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)
$(OBJ)/tests/c/intsys_check.o: CFLAGS += -Icompiler -I.

# tests/c/ast_verify_check.c breaks checked trees on purpose (tests/frontend/
# test_ast_verify.py): it links the front end (base, syntax, grad, check) and lib/.
AST_VERIFY_OBJS := $(filter $(OBJ)/compiler/base/% $(OBJ)/compiler/syntax/% \
                   $(OBJ)/compiler/grad/% $(OBJ)/compiler/check/%,$(CAIRN_OBJS))
$(TBIN)/ast_verify_check: $(OBJ)/tests/c/ast_verify_check.o $(AST_VERIFY_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)
$(OBJ)/tests/c/ast_verify_check.o: CFLAGS += -Icompiler -I.
