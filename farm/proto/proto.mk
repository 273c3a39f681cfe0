# farm/proto/proto.mk: the protocol/evidence module shared by cairn-farm and cairn-agent,
# compiled once into $(OBJ)/farm/proto and linked into both. Included by farm/build.mk
# and agent/build.mk (whichever comes first defines it).
ifndef PROTO_MK
PROTO_MK := 1

FARM_PKGS := libmicrohttpd sqlite3 libcjson openssl libcurl
FARM_LIBS := $(shell pkg-config --libs $(FARM_PKGS) 2>/dev/null || \
               echo -lmicrohttpd -lsqlite3 -lcjson -lcrypto -lcurl)

PROTO_SRCS := $(wildcard farm/proto/*.c)
PROTO_OBJS := $(PROTO_SRCS:%.c=$(OBJ)/%.o)

# The farm and the agent include the shared module from farm/: "proto/api.h".
$(OBJ)/farm/%.o $(OBJ)/agent/%.o: CFLAGS += -Ifarm

endif
