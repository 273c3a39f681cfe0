# farm/: cairn-farm, the coordinator (serve) and its client verbs, plus the `demo`
# recipe. The protocol/evidence module it shares with cairn-agent is farm/proto.

include farm/proto/proto.mk

FARM_SRCS := $(wildcard farm/*.c)
FARM_OBJS := $(FARM_SRCS:%.c=$(OBJ)/%.o)

$(BIN)/cairn-farm: $(FARM_OBJS) $(PROTO_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(FARM_LIBS) $(LDLIBS)

ALL_TARGETS += $(BIN)/cairn-farm

# `make demo`: build everything, then farm/demo.sh runs a coordinator and an agent on
# loopback over the examples, prints the dashboard's URL and stops them again (KEEP=1:
# the coordinator stays up).
demo: all
	@BIN=$(abspath $(BIN)) KEEP=$(KEEP) farm/demo.sh
