# agent/: cairn-agent, linked with the protocol/evidence module from farm/proto and the
# shared library lib/.

include farm/proto/proto.mk
include lib/build.mk

AGENT_SRCS := $(wildcard agent/*.c)
AGENT_OBJS := $(AGENT_SRCS:%.c=$(OBJ)/%.o)

$(BIN)/cairn-agent: $(AGENT_OBJS) $(PROTO_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(FARM_LIBS) $(LDLIBS)

ALL_TARGETS += $(BIN)/cairn-agent
