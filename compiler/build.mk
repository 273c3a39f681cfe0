# compiler/: the cairn binary. Every compiler/*.c is part of it; it links the runtime
# only for what the compiler itself computes with (e.g. exact literal rounding).

CAIRN_SRCS := $(wildcard compiler/*.c)
CAIRN_OBJS := $(CAIRN_SRCS:%.c=$(OBJ)/%.o)
CAIRN_LIBS := $(shell pkg-config --libs libcjson openssl 2>/dev/null || echo -lcjson -lcrypto)

$(BIN)/cairn: $(CAIRN_OBJS) $(RUNTIME_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(CAIRN_LIBS) $(LDLIBS)

ifneq ($(CAIRN_SRCS),)
ALL_TARGETS += $(BIN)/cairn
endif
