# lib/: what cairn, cairn-farm and cairn-agent share (hashing, files, processes, one
# error type: lib/err.h says how its names are made), compiled once into a static
# library that all three link. Callers include "lib/NAME.h" (hence -I. below).
# lib/ needs libcjson and libcrypto, which all three link already. Included by each folder
# that links it (whichever comes first defines it): their link lines name $(LIB_A).
ifndef LIB_MK
LIB_MK := 1

LIB_SRCS := $(wildcard lib/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(OBJ)/%.o)
LIB_A    := $(OBJ)/libcairnlib.a

$(LIB_A): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(OBJ)/lib/%.o $(OBJ)/compiler/%.o $(OBJ)/gen/%.o $(OBJ)/farm/%.o $(OBJ)/agent/%.o: CFLAGS += -I.

ALL_TARGETS += $(LIB_A)

# tests/c/lib_check.c drives lib/ from the command line for tests/lib/test_lib.py: it
# links lib/ rather than the runtime the other tests/c harnesses link.
$(TBIN)/lib_check: $(OBJ)/tests/c/lib_check.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(shell pkg-config --libs libcjson openssl 2>/dev/null || echo -lcjson -lcrypto) $(LDLIBS)
$(OBJ)/tests/c/lib_check.o: CFLAGS += -I.

# tests/c/obs_check.c drives lib/obs.h for tests/lib/test_obs.py.
$(TBIN)/obs_check: $(OBJ)/tests/c/obs_check.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ -lm $(LDLIBS)
$(OBJ)/tests/c/obs_check.o: CFLAGS += -I.

endif
