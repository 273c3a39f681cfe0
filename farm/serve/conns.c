/* conns.c: every open connection in one list, with its phase and when the phase began.
 * A connection is closed from outside libmicrohttpd's threads by shutdown(2) on its
 * socket: the pool thread that polls it then reads end-of-file and libmicrohttpd closes
 * it. (A connection set aside, a parked claim or one on the work pool, is in the
 * HANDLING phase, which has no deadline here: hub.c ends its wait.) The list's lock is
 * held from the shutdown until libmicrohttpd's CLOSED notice removes the entry, and
 * that notice comes before the socket is closed, so a shutdown never meets a reused fd. */
#include "serve/conns_internal.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proto/util.h"

typedef enum {
    PHASE_HEADERS,   /* waiting for a request's headers (first, or after an answer) */
    PHASE_BODY,      /* headers in, the body arriving */
    PHASE_HANDLING,  /* a handler runs or is parked (a claim's long poll): its own limits */
    PHASE_ANSWERING, /* the answer is queued and going out */
} Phase;

typedef struct Conn {
    struct Conn *prev, *next;
    struct Conn *anon_prev, *anon_next; /* in the anonymous list, oldest first */
    int anonymous;                      /* in that list */
    int fd;
    struct sockaddr_storage addr;
    Phase phase;
    double since; /* when the phase began */
    int trusted;  /* has shown a valid token */
    int closing;  /* shut down, waiting for libmicrohttpd to notice */
} Conn;

static ConnLimits limits;
static Conn *conns;
/* The connections waiting for headers without a token, oldest phase first (each joins
 * at the end when its phase begins): the caps look at these alone, so that a new
 * connection costs the same with 5,000 agents connected as with none. */
static Conn *anon_head, *anon_tail;
static unsigned anon_count;
static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;

void conns_init(const ConnLimits *l) { limits = *l; }

static int same_address(const struct sockaddr_storage *a, const struct sockaddr_storage *b) {
    if (a->ss_family != b->ss_family) return 0;
    if (a->ss_family == AF_INET)
        return !memcmp(&((const struct sockaddr_in *)a)->sin_addr,
                       &((const struct sockaddr_in *)b)->sin_addr, sizeof(struct in_addr));
    if (a->ss_family == AF_INET6)
        return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
    return 1;
}

static void anon_leave(Conn *c) {
    if (!c->anonymous) return;
    if (c->anon_prev) c->anon_prev->anon_next = c->anon_next;
    else anon_head = c->anon_next;
    if (c->anon_next) c->anon_next->anon_prev = c->anon_prev;
    else anon_tail = c->anon_prev;
    c->anon_prev = c->anon_next = NULL;
    c->anonymous = 0;
    anon_count--;
}

/* Puts C in the anonymous list, or takes it out, after its phase or trust changed. */
static void anon_update(Conn *c) {
    anon_leave(c);
    if (c->trusted || c->closing || c->phase != PHASE_HEADERS) return;
    c->anon_prev = anon_tail;
    if (anon_tail) anon_tail->anon_next = c;
    else anon_head = c;
    anon_tail = c;
    c->anonymous = 1;
    anon_count++;
}

static void shut(Conn *c) {
    c->closing = 1;
    anon_leave(c);
    shutdown(c->fd, SHUT_RDWR);
}

/* Over a cap on anonymous waiting connections (all, or those from ADDR when not NULL):
 * the oldest one goes, so a newcomer always gets its chance to send headers. The list
 * holds about the cap in all, so counting one address's is short. */
static void make_room(const struct sockaddr_storage *addr, unsigned cap) {
    if (!addr) {
        if (anon_count > cap) shut(anon_head);
        return;
    }
    unsigned n = 0;
    Conn *oldest = NULL;
    for (Conn *c = anon_head; c; c = c->anon_next) {
        if (!same_address(addr, &c->addr)) continue;
        n++;
        if (!oldest) oldest = c;
    }
    if (n > cap) shut(oldest);
}

static void on_started(struct MHD_Connection *mc, void **socket_context) {
    const union MHD_ConnectionInfo *fd =
        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ad =
        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    Conn *c = calloc(1, sizeof *c);
    if (!c || !fd) {
        free(c);
        return;
    }
    c->fd = fd->connect_fd;
    if (ad && ad->client_addr)
        memcpy(&c->addr, ad->client_addr,
               ad->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                      : sizeof(struct sockaddr_in));
    c->phase = PHASE_HEADERS;
    c->since = timing_now_seconds();
    pthread_mutex_lock(&conns_lock);
    c->next = conns;
    if (conns) conns->prev = c;
    conns = c;
    anon_update(c);
    make_room(&c->addr, limits.max_anonymous_per_address);
    make_room(NULL, limits.max_anonymous);
    pthread_mutex_unlock(&conns_lock);
    *socket_context = c;
}

void conns_notify(void *cls, struct MHD_Connection *mc, void **socket_context,
                  enum MHD_ConnectionNotificationCode code) {
    (void)cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        on_started(mc, socket_context);
        return;
    }
    Conn *c = *socket_context;
    if (!c) return;
    pthread_mutex_lock(&conns_lock);
    anon_leave(c);
    if (c->prev) c->prev->next = c->next;
    else conns = c->next;
    if (c->next) c->next->prev = c->prev;
    pthread_mutex_unlock(&conns_lock);
    free(c);
    *socket_context = NULL;
}

static void set_phase(struct MHD_Connection *mc, Phase phase, int trusted) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    Conn *c = info ? info->socket_context : NULL;
    if (!c) return;
    pthread_mutex_lock(&conns_lock);
    c->phase = phase;
    c->since = timing_now_seconds();
    c->trusted |= trusted;
    anon_update(c);
    pthread_mutex_unlock(&conns_lock);
}

void conns_headers_done(struct MHD_Connection *c, int trusted) {
    set_phase(c, PHASE_BODY, trusted);
}

void conns_handling(struct MHD_Connection *c) { set_phase(c, PHASE_HANDLING, 0); }

void conns_answering(struct MHD_Connection *c) { set_phase(c, PHASE_ANSWERING, 0); }

void conns_request_done(struct MHD_Connection *c) { set_phase(c, PHASE_HEADERS, 0); }

/* The deadline of C's phase, or 0 for none. A trusted connection between requests is
 * left to libmicrohttpd's inactivity timeout: it has shown a token. */
static double deadline(const Conn *c) {
    switch (c->phase) {
    case PHASE_HEADERS: return c->trusted ? 0 : c->since + limits.header_timeout_s;
    case PHASE_BODY:
    case PHASE_ANSWERING: return c->since + limits.body_timeout_s;
    default: return 0;
    }
}

int conns_sweep(void) {
    double now = timing_now_seconds();
    int closed = 0;
    pthread_mutex_lock(&conns_lock);
    for (Conn *c = conns; c; c = c->next) {
        double d = deadline(c);
        if (!c->closing && d > 0 && now > d) {
            shut(c);
            closed++;
        }
    }
    pthread_mutex_unlock(&conns_lock);
    return closed;
}
