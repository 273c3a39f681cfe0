/* conns_internal.h: the coordinator's guard on connections (docs/farm.md, "Limits and security").
 * libmicrohttpd limits connections only in count and closes them only after inactivity:
 * a client that trickles one header line every 50 s holds a slot for ever, and ~1,020
 * of them locked everyone out. This module times every connection's headers and body
 * by total time, and caps the connections that have not yet shown a token (in all and
 * per client address) by closing the oldest of them to make space, so that a flood of
 * anonymous half-sent requests cannot crowd out agents. */
#ifndef CAIRN_FARM_CONNS_INTERNAL_H
#define CAIRN_FARM_CONNS_INTERNAL_H

#include <microhttpd.h>

typedef struct {
    unsigned max_connections; /* in all: libmicrohttpd refuses beyond it */
    unsigned max_per_address; /* per client address: libmicrohttpd refuses beyond it */
    unsigned max_anonymous;   /* waiting for headers without a token, in all */
    unsigned max_anonymous_per_address;
    double header_timeout_s; /* connection (or previous answer) to complete headers */
    double body_timeout_s;   /* complete headers to the answer, and the answer out */
} ConnLimits;

void conns_init(const ConnLimits *limits);

/* MHD_OPTION_NOTIFY_CONNECTION: registers and unregisters every connection. */
void conns_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                  enum MHD_ConnectionNotificationCode code);

/* The request's headers are in; TRUSTED when it carried a valid token (its connection
 * is then exempt from the anonymous caps and the header timeout from now on). */
void conns_headers_done(struct MHD_Connection *c, int trusted);
/* A handler runs or its request is parked (no deadline: a claim may long-poll), then its
 * answer goes out. */
void conns_handling(struct MHD_Connection *c);
void conns_answering(struct MHD_Connection *c);
/* The request is answered: the connection waits for the next one's headers. */
void conns_request_done(struct MHD_Connection *c);

/* Closes every connection past its deadline; the reaper calls it a few times a second.
 * Returns how many it closed. */
int conns_sweep(void);

#endif
