# farm/: cairn-farm, the coordinator (serve) and its client verbs, plus the `demo`
# recipe. The protocol/evidence module it shares with cairn-agent is farm/proto; what it
# shares with cairn and cairn-agent is lib/.

include farm/proto/proto.mk
include lib/build.mk

# PostgreSQL's client library, for the postgresql:// store (db/db_pg.c) only.
PG_CFLAGS := $(shell pkg-config --cflags libpq 2>/dev/null || echo -I/usr/include/postgresql)
PG_LIBS := $(shell pkg-config --libs libpq 2>/dev/null || echo -lpq)
$(OBJ)/farm/db/db_pg.o: CFLAGS += $(PG_CFLAGS)

FARM_SRCS := $(filter-out farm/proto/%,$(wildcard farm/*.c farm/*/*.c))
FARM_OBJS := $(FARM_SRCS:%.c=$(OBJ)/%.o)

$(BIN)/cairn-farm: $(FARM_OBJS) $(PROTO_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(FARM_LIBS) $(PG_LIBS) $(LDLIBS)

ALL_TARGETS += $(BIN)/cairn-farm

# `make demo`: build everything, then farm/demo.sh runs a coordinator and an agent on
# loopback over the examples, prints the dashboard's URL and stops them again (KEEP=1:
# the coordinator stays up).
demo: all
	@BIN=$(abspath $(BIN)) KEEP=$(KEEP) farm/demo.sh

# The API's fuzz target (tests/fuzz/fuzz_farm.c) with a main of its own that replays
# files instead of libFuzzer's: tests/fuzz/test_fuzz_farm.py runs the kept corpus
# (tests/fuzz/corpus_farm) through it in `make test`; tests/fuzz/fuzz_farm.sh builds the
# same source with libFuzzer for `make fuzz`.
FUZZ_FARM_REPLAY := $(TBIN)/fuzz_farm_replay
$(OBJ)/tests/fuzz/fuzz_farm.o: CFLAGS += -I. -Ifarm -DFUZZ_FARM_REPLAY
$(FUZZ_FARM_REPLAY): $(OBJ)/tests/fuzz/fuzz_farm.o $(filter-out %/farm/main.o,$(FARM_OBJS)) $(PROTO_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(FARM_LIBS) $(PG_LIBS) $(LDLIBS)

ALL_TARGETS += $(FUZZ_FARM_REPLAY)

# The same replay with malloc, calloc and realloc failing the Nth call after setup
# (FUZZ_FARM_FAIL_AT): every allocation failure an error value (tests/fuzz/test_fuzz_farm.py).
FUZZ_FARM_FAULTS := $(TBIN)/fuzz_farm_faults
$(OBJ)/tests/fuzz/fuzz_farm_faults.o: tests/fuzz/fuzz_farm.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I. -Ifarm -DFUZZ_FARM_REPLAY -DFUZZ_FARM_ALLOC_FAULTS -MMD -MP -c $< -o $@
$(FUZZ_FARM_FAULTS): $(OBJ)/tests/fuzz/fuzz_farm_faults.o $(filter-out %/farm/main.o,$(FARM_OBJS)) $(PROTO_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(FARM_LIBS) $(PG_LIBS) $(LDLIBS)

ALL_TARGETS += $(FUZZ_FARM_FAULTS)

# tests/c/farm_two_servers.c: two coordinators in one process, sharing nothing
# (tests/farm/test_two_servers.py).
FARM_TWO_SERVERS := $(TBIN)/farm_two_servers
$(OBJ)/tests/c/farm_two_servers.o: CFLAGS += -I. -Ifarm
$(FARM_TWO_SERVERS): $(OBJ)/tests/c/farm_two_servers.o $(filter-out %/farm/main.o,$(FARM_OBJS)) $(PROTO_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(FARM_LIBS) $(PG_LIBS) $(LDLIBS)

ALL_TARGETS += $(FARM_TWO_SERVERS)

# The coordinator with its test pauses (serve/pause.c, FARM_TEST_PAUSES): the same objects
# but the files that hold pause points, built again apart. Tests that drive an
# interleaving run it (tests/farm/farmlib.py, FARM_PAUSES); bin/cairn-farm never pauses.
FARM_PAUSES := $(TBIN)/cairn-farm-pauses
PAUSE_SRCS := farm/serve/pause.c farm/serve/gc.c farm/serve/handlers.c farm/serve/hub.c \
	farm/serve/serve.c
PAUSE_OBJS := $(PAUSE_SRCS:%.c=$(OBJ)/pauses/%.o)
$(OBJ)/pauses/%.o: CFLAGS += -I. -Ifarm -DFARM_TEST_PAUSES
$(OBJ)/pauses/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@
$(FARM_PAUSES): $(filter-out $(PAUSE_SRCS:%.c=$(OBJ)/%.o),$(FARM_OBJS)) $(PAUSE_OBJS) $(PROTO_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(FARM_LIBS) $(PG_LIBS) $(LDLIBS)

ALL_TARGETS += $(FARM_PAUSES)
