# agent/: cairn-agent, linked with the protocol/evidence module from farm/proto.

include farm/proto/proto.mk

AGENT_SRCS := $(wildcard agent/*.c)
AGENT_OBJS := $(AGENT_SRCS:%.c=$(OBJ)/%.o)

$(BIN)/cairn-agent: $(AGENT_OBJS) $(PROTO_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(FARM_LIBS) $(LDLIBS)

ALL_TARGETS += $(BIN)/cairn-agent
