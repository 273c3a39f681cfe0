/* conns.c: every open connection in one list, with its phase and when the phase began,
 * and what each client address and each agent holds. A connection is closed from
 * outside libmicrohttpd's threads by shutdown(2) on its socket: the pool thread that
 * polls it then reads end-of-file and libmicrohttpd closes it (a connection set aside,
 * a parked claim or a request in a pool, is seen once it is resumed; hub.c drops the
 * work of a client that has gone). The list's lock is held from the shutdown until
 * libmicrohttpd's CLOSED notice removes the entry, and that notice comes before the
 * socket is closed, so a shutdown never meets a reused fd.
 *
 * A connection is anonymous until it shows a valid token, and its requests stay
 * anonymous in every phase until answered: the caps on anonymous connections count
 * them from their first byte to their answer's last, and their deadline runs that long
 * (before, only connections waiting for headers counted, and a body fed a byte at a
 * time, or an answer never read, held its slot for body_timeout_seconds). */
#include "serve/conns_internal.h"

#include <arpa/inet.h>
#include <assert.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "proto/util.h"

typedef enum {
    PHASE_HEADERS,   /* waiting for a request's headers (first, or after an answer) */
    PHASE_BODY,      /* headers in, the body arriving */
    PHASE_HANDLING,  /* a handler runs, or the request is parked or queued in a pool */
    PHASE_ANSWERING, /* the answer is queued and going out */
} Phase;

/* One client address: what its connections hold, for the per-address caps. */
typedef struct Peer {
    struct Peer *next; /* in its hash chain */
    struct sockaddr_storage addr;
    unsigned conns;     /* open connections */
    unsigned anonymous; /* of which in the anonymous list */
    unsigned pages;     /* page requests not yet answered */
    size_t queued;      /* bytes of answers kept in memory until sent */
} Peer;

/* One agent's connections (those that have shown its token). */
typedef struct AgentConns {
    struct AgentConns *next;
    long agent;
    unsigned conns;
} AgentConns;

typedef struct Conn {
    Conns *table; /* the server's, which it is in */
    struct Conn *prev, *next;
    struct Conn *anon_prev, *anon_next; /* in the anonymous list, oldest request first */
    int anonymous;                      /* in that list */
    int fd;
    Peer *peer;
    Phase phase;
    double since;  /* when the phase began */
    double asked;  /* when the request's headers were complete */
    double begun;  /* when its next request's first line was read (0: not yet) */
    int trusted;   /* has shown a valid token */
    long agent;    /* the agent whose token it showed, or 0 */
    int closing;   /* shut down, waiting for libmicrohttpd to notice */
    int paged;     /* its request holds one of its address's page slots */
    size_t queued; /* bytes of its answer kept in memory */
} Conn;

#define BUCKETS 4096

/* One server's connections (Server.conns): a process may hold several servers, each
 * with its own table and caps. Every field is under lock. */
struct Conns {
    ConnLimits limits;
    Conn *list;
    /* Anonymous connections, oldest request first (each joins at the end when a request
     * of it begins): the caps look at these alone, so that a new connection costs the
     * same with 5,000 agents connected as with none. */
    Conn *anon_head, *anon_tail;
    unsigned anon_count;
    size_t queued_total;
    Peer *peers[BUCKETS];
    AgentConns *agents[BUCKETS];
    unsigned long closed_anonymous[2]; /* by the cap on all, and the per-address cap */
    pthread_mutex_t lock;
};

Conns *conns_new(void) {
    Conns *t = calloc(1, sizeof *t);
    if (t) pthread_mutex_init(&t->lock, NULL);
    return t;
}

void conns_init(Conns *t, const ConnLimits *l) {
    pthread_mutex_lock(&t->lock);
    t->limits = *l;
    pthread_mutex_unlock(&t->lock);
}

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

static size_t address_bucket(const struct sockaddr_storage *a) {
    const unsigned char *p = NULL;
    size_t n = 0, h = 5381;
    if (a->ss_family == AF_INET)
        p = (const unsigned char *)&((const struct sockaddr_in *)a)->sin_addr, n = 4;
    else if (a->ss_family == AF_INET6)
        p = (const unsigned char *)&((const struct sockaddr_in6 *)a)->sin6_addr, n = 16;
    for (size_t i = 0; i < n; i++) h = h * 33 + p[i];
    return h % BUCKETS;
}

/* The record of ADDR, made when missing (NULL only when out of memory). */
static Peer *peer_of(Conns *t, const struct sockaddr_storage *addr) {
    Peer **at = &t->peers[address_bucket(addr)];
    for (Peer *p = *at; p; p = p->next)
        if (same_address(&p->addr, addr)) return p;
    Peer *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->addr = *addr;
    p->next = *at;
    *at = p;
    return p;
}

/* Drops P's record once no connection of it is left. */
static void peer_release(Conns *t, Peer *p) {
    if (p->conns) return;
    assert(!p->anonymous && !p->pages && !p->queued); /* each connection gave back its share */
    Peer **at = &t->peers[address_bucket(&p->addr)];
    while (*at != p) at = &(*at)->next;
    *at = p->next;
    free(p);
}

/* AGENT's record (made when MAKE), or NULL. */
static AgentConns *agent_of(Conns *t, long agent, int make) {
    AgentConns **at = &t->agents[(unsigned long)agent % BUCKETS];
    for (AgentConns *a = *at; a; a = a->next)
        if (a->agent == agent) return a;
    AgentConns *a = make ? calloc(1, sizeof *a) : NULL;
    if (!a) return NULL;
    a->agent = agent;
    a->next = *at;
    *at = a;
    return a;
}

static void agent_release(Conns *t, long agent) {
    AgentConns **at = &t->agents[(unsigned long)agent % BUCKETS];
    while (*at && (*at)->agent != agent) at = &(*at)->next;
    AgentConns *a = *at;
    assert(a && a->conns > 0);
    if (--a->conns == 0) {
        *at = a->next;
        free(a);
    }
}

static void anon_leave(Conn *c) {
    if (!c->anonymous) return;
    Conns *t = c->table;
    if (c->anon_prev) c->anon_prev->anon_next = c->anon_next;
    else t->anon_head = c->anon_next;
    if (c->anon_next) c->anon_next->anon_prev = c->anon_prev;
    else t->anon_tail = c->anon_prev;
    c->anon_prev = c->anon_next = NULL;
    c->anonymous = 0;
    t->anon_count--;
    c->peer->anonymous--;
}

/* Puts C at the anonymous list's end (a request of it begins), or takes it out once it
 * has shown a token or is closing. */
static void anon_update(Conn *c) {
    anon_leave(c);
    if (c->trusted || c->closing) return;
    Conns *t = c->table;
    c->anon_prev = t->anon_tail;
    if (t->anon_tail) t->anon_tail->anon_next = c;
    else t->anon_head = c;
    t->anon_tail = c;
    c->anonymous = 1;
    t->anon_count++;
    c->peer->anonymous++;
}

static void shut(Conn *c) {
    c->closing = 1;
    anon_leave(c);
    shutdown(c->fd, SHUT_RDWR);
}

/* Over a cap on anonymous connections (all, or those of PEER when not NULL): the oldest
 * request goes, so a newcomer always gets its chance; over the cap on all, the oldest of
 * the address holding the most, so a flood from a few addresses never pushes out a lone
 * client (an agent whose headers are not yet read) however fast it reconnects. The list
 * holds about the cap in all, so each search is short. */
static void make_room(Conns *t, const Peer *peer, unsigned cap) {
    if (!peer) {
        if (t->anon_count <= cap) return;
        Conn *victim = t->anon_head;
        for (Conn *c = t->anon_head; c; c = c->anon_next)
            if (c->peer->anonymous > victim->peer->anonymous) victim = c;
        shut(victim);
        t->closed_anonymous[0]++;
        return;
    }
    if (peer->anonymous <= cap) return;
    for (Conn *c = t->anon_head; c; c = c->anon_next) {
        if (c->peer == peer) {
            shut(c);
            t->closed_anonymous[1]++;
            return;
        }
    }
}

static void on_started(Conns *t, struct MHD_Connection *mc, void **socket_context) {
    const union MHD_ConnectionInfo *fd =
        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ad =
        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    struct sockaddr_storage addr = {0};
    if (ad && ad->client_addr)
        memcpy(&addr, ad->client_addr,
               ad->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                      : sizeof(struct sockaddr_in));
    Conn *c = fd ? calloc(1, sizeof *c) : NULL;
    pthread_mutex_lock(&t->lock);
    Peer *peer = c ? peer_of(t, &addr) : NULL;
    if (!peer) { /* out of memory: closed, as no deadline of ours would ever close it */
        pthread_mutex_unlock(&t->lock);
        if (fd) shutdown(fd->connect_fd, SHUT_RDWR);
        free(c);
        return;
    }
    c->table = t;
    c->fd = fd->connect_fd;
    c->peer = peer;
    peer->conns++;
    c->phase = PHASE_HEADERS;
    c->since = timing_now_seconds();
    c->next = t->list;
    if (t->list) t->list->prev = c;
    t->list = c;
    anon_update(c);
    make_room(t, peer, t->limits.max_anonymous_per_address);
    make_room(t, NULL, t->limits.max_anonymous);
    pthread_mutex_unlock(&t->lock);
    *socket_context = c;
}

/* What C's request held, given back (under the lock). */
static void give_back(Conn *c) {
    Conns *t = c->table;
    assert(c->peer->queued >= c->queued && t->queued_total >= c->queued);
    c->peer->queued -= c->queued;
    t->queued_total -= c->queued;
    c->queued = 0;
    if (c->paged) c->peer->pages--;
    c->paged = 0;
}

void conns_notify(void *cls, struct MHD_Connection *mc, void **socket_context,
                  enum MHD_ConnectionNotificationCode code) {
    Conns *t = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        on_started(t, mc, socket_context);
        return;
    }
    Conn *c = *socket_context;
    if (!c) return;
    pthread_mutex_lock(&t->lock);
    anon_leave(c);
    give_back(c);
    if (c->agent) agent_release(t, c->agent);
    c->peer->conns--;
    peer_release(t, c->peer);
    if (c->prev) c->prev->next = c->next;
    else t->list = c->next;
    if (c->next) c->next->prev = c->prev;
    pthread_mutex_unlock(&t->lock);
    free(c);
    *socket_context = NULL;
}

static Conn *conn_of(struct MHD_Connection *mc) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

static void set_phase(Conn *c, Phase phase) {
    c->phase = phase;
    c->since = timing_now_seconds();
    c->begun = 0;
}

void conns_request_line(struct MHD_Connection *mc) {
    Conn *c = conn_of(mc);
    if (!c) return;
    pthread_mutex_lock(&c->table->lock);
    if (c->phase == PHASE_HEADERS) c->begun = timing_now_seconds();
    pthread_mutex_unlock(&c->table->lock);
}

int conns_headers_done(struct MHD_Connection *mc, int trusted, long agent) {
    Conn *c = conn_of(mc);
    if (!c) return 0;
    int rc = 0;
    Conns *t = c->table;
    pthread_mutex_lock(&t->lock);
    set_phase(c, PHASE_BODY);
    c->asked = c->since;
    c->trusted |= trusted;
    if (trusted) anon_leave(c);
    if (agent > 0 && c->agent == 0) {
        AgentConns *a = agent_of(t, agent, 1);
        if (a) c->agent = agent, a->conns++;
    }
    if (c->agent) {
        AgentConns *a = agent_of(t, c->agent, 0);
        rc = a && a->conns > t->limits.max_per_agent ? -1 : 0;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

static void conns_set(struct MHD_Connection *mc, Phase phase) {
    Conn *c = conn_of(mc);
    if (!c) return;
    pthread_mutex_lock(&c->table->lock);
    set_phase(c, phase);
    if (phase == PHASE_HEADERS) {
        give_back(c);
        anon_update(c); /* its next request is the newest */
    }
    pthread_mutex_unlock(&c->table->lock);
}

void conns_handling(struct MHD_Connection *c) { conns_set(c, PHASE_HANDLING); }

void conns_answering(struct MHD_Connection *c) { conns_set(c, PHASE_ANSWERING); }

void conns_request_done(struct MHD_Connection *c) { conns_set(c, PHASE_HEADERS); }

int conns_queue_bytes(struct MHD_Connection *mc, size_t bytes) {
    Conn *c = conn_of(mc);
    if (!c) return 0;
    int rc = 0;
    Conns *t = c->table;
    pthread_mutex_lock(&t->lock);
    if (c->peer->queued && c->peer->queued + bytes > t->limits.max_queued_per_address) rc = -1;
    else if (t->queued_total && t->queued_total + bytes > t->limits.max_queued) rc = -2;
    else {
        c->queued += bytes;
        c->peer->queued += bytes;
        t->queued_total += bytes;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

int conns_page_start(struct MHD_Connection *mc) {
    Conn *c = conn_of(mc);
    if (!c) return 0;
    int rc = 0;
    pthread_mutex_lock(&c->table->lock);
    assert(!c->paged); /* one request at a time per connection */
    if (c->peer->pages >= c->table->limits.max_pages_per_address) rc = -1;
    else c->paged = 1, c->peer->pages++;
    pthread_mutex_unlock(&c->table->lock);
    return rc;
}

void conns_peer(struct MHD_Connection *mc, char *out, size_t cap) {
    Conn *c = conn_of(mc);
    out[0] = '\0';
    if (!c || !cap) return;
    const struct sockaddr_storage *a = &c->peer->addr; /* fixed while c is open */
    if (a->ss_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)a)->sin_addr, out, (socklen_t)cap);
    else if (a->ss_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)a)->sin6_addr, out, (socklen_t)cap);
}

int conns_client_gone(struct MHD_Connection *mc) {
    Conn *c = conn_of(mc);
    if (!c) return 0;
    pthread_mutex_lock(&c->table->lock);
    int closing = c->closing;
    struct pollfd p = {.fd = c->fd, .events = POLLRDHUP};
    int gone = closing || (poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)));
    pthread_mutex_unlock(&c->table->lock);
    return gone;
}

/* The deadline of C's phase, or 0 for none. A trusted connection between requests has
 * idle_timeout_s, and once its next request's first line is in, header_timeout_s for the
 * rest of its headers; its handling (a long poll) is hub.c's. An anonymous request is
 * answered, last byte out, within anonymous_timeout_s. These deadlines are all there
 * is: libmicrohttpd's own inactivity timeout is off (server.c). */
static double deadline(const Conn *c) {
    const ConnLimits *limits = &c->table->limits;
    if (c->phase == PHASE_HEADERS && c->trusted)
        return c->begun ? c->begun + limits->header_timeout_s : c->since + limits->idle_timeout_s;
    if (c->phase == PHASE_HEADERS) return c->since + limits->header_timeout_s;
    if (!c->trusted) return c->asked + limits->anonymous_timeout_s;
    return c->phase == PHASE_HANDLING ? 0 : c->since + limits->body_timeout_s;
}

void conns_closed_anonymous(Conns *t, unsigned long *all, unsigned long *per_address) {
    pthread_mutex_lock(&t->lock);
    *all = t->closed_anonymous[0];
    *per_address = t->closed_anonymous[1];
    pthread_mutex_unlock(&t->lock);
}

/* Whether C is a trusted connection between requests whose next request has come, its
 * bytes not yet read: libmicrohttpd's threads may be that late to read it when busy
 * (its own inactivity timeout closed 1,305 such connections at once, 24 s after their
 * requests came, at load 14), and a request that came in time is answered. */
static int request_waiting(const Conn *c) {
    int unread = 0;
    return c->phase == PHASE_HEADERS && c->trusted && !c->begun &&
           ioctl(c->fd, FIONREAD, &unread) == 0 && unread > 0;
}

int conns_sweep(Conns *t) {
    double now = timing_now_seconds();
    int closed = 0;
    pthread_mutex_lock(&t->lock);
    for (Conn *c = t->list; c; c = c->next) {
        double d = deadline(c);
        if (!c->closing && d > 0 && now > d && !request_waiting(c)) {
            shut(c);
            closed++;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return closed;
}
