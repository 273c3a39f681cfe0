/* conns_internal.h: the coordinator's guard on connections (docs/farm.md, "Limits and security").
 * libmicrohttpd limits connections only in count and closes them only after inactivity:
 * a client that trickles one header line every 50 s, or a body a byte at a time, or that
 * never reads its answer, holds a slot for ever, and ~1,020 of them locked everyone out.
 * This module times every request by total time, from its connection (or previous
 * answer) to its answer's last byte, and caps what clients may hold: connections that
 * have shown no token (in all and per client address, closing the oldest to make
 * space), connections per agent, page requests and answers kept in memory per address. */
#ifndef CAIRN_FARM_CONNS_INTERNAL_H
#define CAIRN_FARM_CONNS_INTERNAL_H

#include <stddef.h>

#include <microhttpd.h>

typedef struct {
    unsigned max_connections; /* in all: libmicrohttpd refuses beyond it */
    unsigned max_per_address; /* per client address: libmicrohttpd refuses beyond it */
    unsigned max_anonymous;   /* connections that have shown no token, in all */
    unsigned max_anonymous_per_address;
    unsigned max_per_agent;         /* connections that have shown one agent's token */
    unsigned max_pages_per_address; /* page requests queued, running or answering */
    size_t max_queued;              /* bytes of answers kept in memory, in all */
    size_t max_queued_per_address;
    double header_timeout_s;    /* connection (or previous answer) to complete headers */
    double body_timeout_s;      /* complete headers to the body, and the answer out */
    double anonymous_timeout_s; /* an anonymous request's headers to its answer sent */
    double idle_timeout_s;      /* with a token: its previous answer to its next request */
} ConnLimits;

/* One server's connections and what each address and agent holds (Server.conns). */
typedef struct Conns Conns;

/* An empty table (NULL when out of memory); conns_init sets its caps before it serves. */
Conns *conns_new(void);
void conns_init(Conns *t, const ConnLimits *limits);

/* MHD_OPTION_NOTIFY_CONNECTION, with the server's table as CLS: registers and
 * unregisters every connection. */
void conns_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                  enum MHD_ConnectionNotificationCode code);

/* The request's headers are in; TRUSTED when it carried a valid token (its connection is
 * then exempt from the anonymous caps and deadlines from now on), AGENT the agent's id
 * (0: none). -1 when AGENT has max_per_agent connections open with this one: the
 * request is refused and the connection closed. */
int conns_headers_done(struct MHD_Connection *c, int trusted, long agent);
/* The first line of C's next request has been read (libmicrohttpd's URI callback): a
 * trusted connection's idle time is over, its headers have header_timeout_s. */
void conns_request_line(struct MHD_Connection *c);
/* A handler runs or its request is parked (a trusted request then has no deadline: a
 * claim may long-poll), then its answer goes out. */
void conns_handling(struct MHD_Connection *c);
void conns_answering(struct MHD_Connection *c);
/* The request is answered: the connection waits for the next one's headers, and what
 * the request held (its answer's bytes, its page) is given back. */
void conns_request_done(struct MHD_Connection *c);

/* BYTES of an answer kept in memory until sent, counted against the client's address
 * and all: 0, or -1 over max_queued_per_address, -2 over max_queued (refuse the answer).
 * An address (or the coordinator) with nothing queued may always queue one answer. */
int conns_queue_bytes(struct MHD_Connection *c, size_t bytes);
/* A page request from C's address: 0, or -1 when it holds max_pages_per_address. */
int conns_page_start(struct MHD_Connection *c);
/* The client's address as text ("" when unknown). */
void conns_peer(struct MHD_Connection *c, char *out, size_t cap);
/* Whether the client of a request set aside has gone (closed its side) or was closed. */
int conns_client_gone(struct MHD_Connection *c);

/* Closes every connection past its deadline; the reaper calls it a few times a second.
 * Returns how many it closed. */
int conns_sweep(Conns *t);
/* How many connections the caps on anonymous ones closed so far: over max_anonymous
 * (ALL) and over max_anonymous_per_address (PER_ADDRESS). GET /metrics reads them. */
void conns_closed_anonymous(Conns *t, unsigned long *all, unsigned long *per_address);

#endif
