/* server.c: the coordinator's HTTP on libmicrohttpd. No connection owns a thread
 * (docs/farm.md, "The server's threads"): libmicrohttpd's fixed pool of poll threads
 * reads and answers every connection. A request is admitted from its headers alone
 * (route, token, declared length) before any of its body is read; then its handler runs
 * here (the short routes), or the request is handed to the work pool or parked as a
 * long poll (hub.c). Every answer goes out here, and every refusal into the log. */
#include "serve/serve_internal.h"
#include "serve/conns_internal.h"
#include "serve/web_internal.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <microhttpd.h>

/* A file answered as the client reads it, hashed as it goes (reply_file). */
typedef struct {
    int fd;
    size_t len;
    Sha256 *hash;
    char sha[SHA256_HEX_LEN];
} FileStream;

#define FILE_PIECE (256 << 10)

static ssize_t file_piece(void *cls, uint64_t at, char *buf, size_t max) {
    FileStream *f = cls;
    if (at >= f->len) return MHD_CONTENT_READER_END_OF_STREAM;
    size_t want = f->len - at < max ? (size_t)(f->len - at) : max;
    ssize_t n = pread(f->fd, buf, want, (off_t)at);
    if (n <= 0 || !f->hash || sha256_add(f->hash, buf, (size_t)n) != 0)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    if (at + (uint64_t)n < f->len) return n;
    char got[SHA256_HEX_LEN];
    int ok = sha256_end(f->hash, got) == 0 && !strcmp(got, f->sha);
    f->hash = NULL;
    if (ok) return n;
    /* the last piece is held back: no client gets all of a blob that is not its name's */
    fprintf(stderr, "farm: blob %s is damaged (its bytes hash to %.16s...): its answer was cut\n",
            f->sha, got);
    return MHD_CONTENT_READER_END_WITH_ERROR;
}

static void file_done(void *cls) {
    FileStream *f = cls;
    close(f->fd);
    if (f->hash) {
        char ignored[SHA256_HEX_LEN];
        sha256_end(f->hash, ignored);
    }
    free(f);
}

/* The response streaming R's file (it owns the descriptor from now on). */
static struct MHD_Response *file_response(Reply *r) {
    FileStream *f = calloc(1, sizeof *f);
    int fd = r->file - 1;
    r->file = 0;
    if (!f) {
        close(fd);
        return NULL;
    }
    *f = (FileStream){.fd = fd, .len = r->file_len, .hash = sha256_begin()};
    memcpy(f->sha, r->file_sha, SHA256_HEX_LEN);
    struct MHD_Response *resp =
        MHD_create_response_from_callback(f->len, FILE_PIECE, file_piece, f, file_done);
    if (!resp) file_done(f);
    return resp;
}

/* The answer as libmicrohttpd's response (R gives up what it owned). CLOSE: the
 * connection closes once it is sent (a body declared and left unread). */
static struct MHD_Response *response_of(Reply *r, int close) {
    struct MHD_Response *resp;
    if (r->file) {
        resp = file_response(r);
    } else if (r->raw) {
        resp = MHD_create_response_from_buffer(r->raw_len, r->raw, MHD_RESPMEM_MUST_FREE);
        r->raw = NULL;
    } else {
        resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    }
    if (!resp) return NULL;
    if (r->raw_type) MHD_add_response_header(resp, "Content-Type", r->raw_type);
    if (close) MHD_add_response_header(resp, "Connection", "close");
    /* Every answer says what it is and may not be framed: pages style themselves and show
     * the plot, anything else (JSON, SVG, filed files) runs and loads nothing. */
    int page = r->raw_type && !strncmp(r->raw_type, "text/html", 9);
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Content-Security-Policy",
                            page ? "default-src 'none'; style-src 'unsafe-inline'; img-src 'self';"
                                   " frame-ancestors 'none'"
                                 : "default-src 'none'; frame-ancestors 'none'; sandbox");
    return resp;
}

/* Refusals always, every answer with CAIRN_FARM_LOG_ALL set: its route, status, time,
 * agent, and the run or job its path names. */
static void log_request(const Server *s, const Exchange *x, const Reply *r) {
    const Request *q = &x->q;
    double ms = (timing_now_seconds() - x->started) * 1000.0;
    if (r->status < 400 && !getenv("CAIRN_FARM_LOG_ALL")) return;
    char route[160] = "";
    if (x->route) snprintf(route, sizeof route, "%s %s", x->route->method, x->route->pattern);
    long id = q->arg ? strtol(q->arg, NULL, 10) : 0;
    int jobs = x->route && strstr(x->route->pattern, "/jobs/*"),
        runs = x->route && strstr(x->route->pattern, "/runs/*");
    LogFields f = {r->status >= 500   ? "error"
                   : r->status >= 400 ? "warn"
                                      : "info",
                   "request",
                   runs ? id : 0,
                   jobs ? id : 0,
                   q->agent.id,
                   route[0] ? route : NULL,
                   r->status,
                   ms};
    if (r->status >= 400)
        log_event(s, &f, "%s %s -> %d (%.1f ms): %s", q->method, q->path, r->status, ms, r->error);
    else log_event(s, &f, "%s %s -> %d (%.1f ms)", q->method, q->path, r->status, ms);
}

static int take_body(Exchange *x, const char *data, size_t size, long max) {
    if (x->too_big || x->len + size > (size_t)max) {
        x->too_big = 1; /* keep reading, keep nothing: the answer is 413 */
        return 0;
    }
    if (x->len + size + 1 > x->cap) {
        size_t cap = x->cap ? x->cap : 4096;
        while (cap < x->len + size + 1) cap *= 2;
        char *bigger = realloc(x->body, cap);
        if (!bigger) return -1;
        x->body = bigger;
        x->cap = cap;
    }
    memcpy(x->body + x->len, data, size);
    x->len += size;
    x->body[x->len] = '\0';
    return 0;
}

/* A JSON answer printed into raw bytes (its size is known then). */
static void print_json(Reply *r) {
    if (!r->json) return;
    char *text = cJSON_PrintUnformatted(r->json);
    int status = r->status;
    cJSON_Delete(r->json);
    r->json = NULL;
    if (!text) { /* out of memory: an empty 500, never half an answer */
        r->status = 500;
        snprintf(r->error, sizeof r->error, "out of memory printing the answer");
        return;
    }
    reply_raw(r, text, strlen(text), "application/json");
    r->status = status;
}

/* An answer kept in memory until sent counts against its client's address and all
 * (conns.c): over either bound it is refused instead (the short refusal is not counted;
 * a file streamed from disk costs no memory and is not counted either). */
static void bound_memory(Server *s, struct MHD_Connection *conn, Reply *r) {
    print_json(r);
    int rc = r->raw ? conns_queue_bytes(conn, r->raw_len) : 0;
    if (rc == 0) return;
    free(r->raw);
    r->raw = NULL;
    metrics_refused(s, rc == -1 ? REFUSED_MAX_QUEUED_BYTES_PER_ADDRESS : REFUSED_MAX_QUEUED_BYTES,
                    1);
    if (rc == -1)
        reply_error(r, PROTO_E_TOO_MANY_REQUESTS,
                    "answers kept for your address are over max_queued_bytes_per_address: "
                    "read them first");
    else reply_error(r, PROTO_E_BUSY, "answers kept for slow readers are over max_queued_bytes");
    print_json(r);
}

static enum MHD_Result answer(Server *s, struct MHD_Connection *conn, Exchange *x, Reply *r) {
    assert(!x->answered && !r->park); /* one answer per request, never a parked one */
    x->answered = 1;
    bound_memory(s, conn, r);
    log_request(s, x, r);
    metrics_http(s, x->route, r->status);
    conns_answering(conn);
    /* A body left unread (a refusal from the headers) is never read: the connection
     * closes once the answer is out. */
    struct MHD_Response *resp = response_of(r, x->has_body && !x->q.body);
    reply_free(r);
    if (!resp) return MHD_NO;
    enum MHD_Result rc = MHD_queue_response(conn, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    return rc;
}

/* Whether the headers declare a body: a Content-Length over 0, or a chunked one. */
static int declares_body(struct MHD_Connection *conn) {
    const char *length = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding") != NULL ||
           (length && strtod(length, NULL) > 0);
}

/* The headers are in: route, body, token and declared length are checked before any of
 * the body is read, so an anonymous or oversized upload, or a body on a route that takes
 * none, costs no memory. 0 to go on. */
static int admit(Server *s, struct MHD_Connection *conn, Exchange *x, Reply *r) {
    const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    const char *length = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
    if (auth && !strncmp(auth, "Bearer ", 7)) x->q.bearer = auth + 7;
    x->has_body = declares_body(conn);
    x->route = route_find(&x->q, x->arg, sizeof x->arg, r);
    int ok = x->route != NULL;
    if (ok && x->route->body == BODY_NONE && x->has_body)
        ok = reply_error(r, PROTO_E_TOO_LARGE, "%s %s takes no body", x->q.method,
                         x->route->pattern) == 0;
    ok = ok && auth_check(s, x->route->auth, &x->q, r) == 0;
    if (ok && x->q.agent.id)
        web_agent_seen(s, x->q.agent.id); /* the dashboard's "last heard from" */
    if (conns_headers_done(conn, ok && x->route->auth != AUTH_NONE, x->q.agent.id) != 0 && ok) {
        metrics_refused(s, REFUSED_MAX_CONNECTIONS_PER_AGENT, 1);
        ok = reply_error(r, PROTO_E_TOO_MANY_REQUESTS,
                         "agent %ld has max_connections_per_agent (%ld) connections open",
                         x->q.agent.id, s->cfg.max_connections_per_agent) == 0;
    }
    const char *setting;
    long limit = ok ? route_body_limit(s, x->route, &setting) : 0;
    if (ok && length && strtod(length, NULL) > (double)limit) {
        metrics_refused(s, REFUSED_MAX_BODY_BYTES, 1);
        ok = reply_error(r, PROTO_E_TOO_LARGE, "Content-Length %s is over %s (%ld)", length,
                         setting, limit) == 0;
    }
    return ok ? 0 : -1; /* refused with a body declared: the connection closes (answer) */
}

/* Runs an HTTP-pool route here; a claim that asks to wait is parked (and this returns
 * with the connection suspended) unless jobs may have become claimable meanwhile. */
static enum MHD_Result run_here(Server *s, Exchange *x) {
    for (;;) {
        Reply r = {0};
        unsigned long seen = hub_generation(s);
        x->route->handle(s, &x->q, &r);
        if (!r.park) return answer(s, x->conn, x, &r);
        assert(x->q.wait_until > 0); /* only a long poll parks, with its deadline set */
        int parked = hub_park_claim(s, x, seen);
        if (parked > 0) return MHD_YES;
        if (parked < 0) {
            r.park = 0;
            metrics_refused(s, REFUSED_MAX_CLAIMS_PER_AGENT, 1);
            reply_error(&r, PROTO_E_TOO_MANY_REQUESTS,
                        "agent %ld has max_claims_per_agent (%ld) long polls waiting",
                        x->q.agent.id, s->cfg.max_claims_per_agent);
            return answer(s, x->conn, x, &r);
        }
    }
}

/* A page request: one of its address's page slots, then a place in the page pool. */
static int page_refused(Server *s, Exchange *x, Reply *r) {
    if (conns_page_start(x->conn) == 0) return 0;
    metrics_refused(s, REFUSED_MAX_PAGES_PER_ADDRESS, 1);
    return reply_error(r, PROTO_E_TOO_MANY_REQUESTS,
                       "your address has max_pages_per_address (%ld) pages asked for",
                       s->cfg.max_pages_per_address);
}

/* The body is in (or the request resumed): answer, run, queue or park it. */
static enum MHD_Result dispatch(Server *s, Exchange *x) {
    Parking parking = hub_parking(s, x);
    if (parking == PARK_WORK_DONE && x->dropped) return MHD_NO; /* its client left */
    if (parking == PARK_WORK_DONE) return answer(s, x->conn, x, &x->reply);
    Reply r = {0};
    if (x->too_big) {
        metrics_refused(s, REFUSED_MAX_BODY_BYTES, 1);
        const char *setting;
        long limit = route_body_limit(s, x->route, &setting);
        reply_error(&r, PROTO_E_TOO_LARGE, "body larger than %s (%ld)", setting, limit);
        return answer(s, x->conn, x, &r);
    }
    if (x->route->pool == POOL_PAGE && page_refused(s, x, &r) != 0)
        return answer(s, x->conn, x, &r);
    conns_handling(x->conn);
    if (x->route->pool == POOL_HTTP) return run_here(s, x);
    int queued = hub_queue_work(s, x);
    if (queued > 0) return MHD_YES;
    if (queued == 0) return run_here(s, x);
    metrics_refused(s, REFUSED_MAX_QUEUED_PAGES, 1);
    reply_error(&r, PROTO_E_BUSY, "the page pool holds max_queued_pages (%ld) requests",
                s->cfg.max_queued_pages);
    return answer(s, x->conn, x, &r);
}

/* Copies one URL argument into the exchange's query ("key\0value\0...\0"); one that
 * does not fit whole is left out (pages read three short filters). */
static enum MHD_Result keep_argument(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value) {
    (void)kind;
    Exchange *x = cls;
    size_t used = 0;
    while (used < sizeof x->query && x->query[used]) { /* past each pair (a value may be "") */
        used += strlen(x->query + used) + 1;
        used += strlen(x->query + used) + 1;
    }
    size_t k = strlen(key), v = value ? strlen(value) : 0;
    if (used + k + v + 3 <= sizeof x->query) {
        memcpy(x->query + used, key, k + 1);
        memcpy(x->query + used + k + 1, value ? value : "", v + 1);
        x->query[used + k + v + 2] = '\0';
    }
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **state) {
    (void)version;
    Server *s = cls;
    Exchange *x = *state;
    if (!x) {
        *state = x = calloc(1, sizeof *x);
        if (!x) return MHD_NO;
        x->started = timing_now_seconds();
        x->conn = conn;
        x->q = (Request){.method = method, .path = url, .query = x->query};
        MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, keep_argument, x);
        conns_peer(conn, x->peer, sizeof x->peer);
        x->q.peer = x->peer;
        Reply r = {0};
        if (admit(s, conn, x, &r) == 0) return MHD_YES;
        return answer(s, conn, x, &r);
    }
    if (*upload_size) {
        if (x->answered) return MHD_NO; /* a body left unread: close, read nothing */
        const char *setting;
        long limit = route_body_limit(s, x->route, &setting);
        if (take_body(x, upload_data, *upload_size, limit) != 0) return MHD_NO;
        *upload_size = 0;
        return MHD_YES;
    }
    if (x->answered) return MHD_YES;
    x->q.body = x->body ? x->body : "";
    x->q.len = x->len;
    return dispatch(s, x);
}

/* libmicrohttpd read a request's first line: its connection is no longer idle. The
 * answer is the request's first state (on_request's), none yet. */
static void *on_request_line(void *cls, const char *uri, struct MHD_Connection *conn) {
    (void)cls;
    (void)uri;
    conns_request_line(conn);
    return NULL;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **state,
                         enum MHD_RequestTerminationCode code) {
    (void)cls; /* the server, for the assert only */
    (void)code;
    Exchange *x = *state;
    if (x) {
        /* a request set aside is never freed: its claim list or work queue holds it */
        assert(hub_parking(cls, x) == PARK_NONE || hub_parking(cls, x) == PARK_WORK_DONE);
        reply_free(&x->reply); /* a pool's answer whose client left before it went out */
        db_agent_free(&x->q.agent);
        free(x->body);
        free(x);
    }
    *state = NULL;
    conns_request_done(conn);
}

static int parse_listen(const char *listen, struct sockaddr_in *addr, Err *e) {
    char host[128];
    unsigned port = 0;
    const char *colon = strrchr(listen, ':');
    if (!colon || sscanf(colon + 1, "%u", &port) != 1 || port > 65535 ||
        (size_t)(colon - listen) >= sizeof host)
        return err_set(e, "listen address \"%s\" is not HOST:PORT", listen);
    memcpy(host, listen, (size_t)(colon - listen));
    host[colon - listen] = '\0';
    memset(addr, 0, sizeof *addr);
    addr->sin_family = AF_INET;
    addr->sin_port = htons((unsigned short)port);
    if (inet_pton(AF_INET, host, &addr->sin_addr) != 1)
        return err_set(e, "listen host \"%s\" is not an IPv4 address", host);
    return 0;
}

/* Connections MAX at most, and no more than the file descriptors allow: the soft limit
 * is raised to the hard one, and 64 descriptors are kept for the database and files. */
static unsigned connection_budget(long max) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return (unsigned)max;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)max + 64)
        max = rl.rlim_cur > 128 ? (long)rl.rlim_cur - 64 : 64;
    return (unsigned)max;
}

/* Each connection's buffer for headers and body chunks (libmicrohttpd's default is 32
 * KiB, zeroed for every request): our requests' headers take under 2 KiB, and bodies
 * pass through in chunks. 5,000 open connections held 160 MiB of such buffers. */
#define CONNECTION_MEMORY (16 << 10)

struct MHD_Daemon *server_start(Server *s, char *url, size_t cap, Err *e) {
    struct sockaddr_in addr;
    if (parse_listen(s->cfg.listen, &addr, e) != 0) return NULL;
    ConnLimits limits = {connection_budget(s->cfg.max_connections),
                         (unsigned)s->cfg.max_connections_per_address,
                         (unsigned)s->cfg.max_anonymous,
                         (unsigned)s->cfg.max_anonymous_per_address,
                         (unsigned)s->cfg.max_connections_per_agent,
                         (unsigned)s->cfg.max_pages_per_address,
                         (size_t)s->cfg.max_queued_bytes,
                         (size_t)s->cfg.max_queued_bytes_per_address,
                         s->cfg.header_timeout_seconds,
                         s->cfg.body_timeout_seconds,
                         s->cfg.anonymous_timeout_seconds,
                         s->cfg.idle_timeout_seconds};
    conns_init(s->conns, &limits);
    /* No inactivity timeout of libmicrohttpd's: it closed connections whose request had
     * come but was not yet read (its threads busy), and conns.c's deadlines cover every
     * phase. poll(2), never epoll: libmicrohttpd's epoll loop (MHD_epoll, 0.9.75 to its
     * master of 2025) takes 128 events a call and calls again while a call returned 128,
     * with the timeout it chose before the first, when none was ready: with no inactivity
     * timeout that is forever, and the connections whose events it took (a multiple of
     * 128: the 256 missing answers) wait for some other event on that thread.
     * poll handles every ready connection of a pass. Each pool thread polls its own. */
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_ALLOW_SUSPEND_RESUME |
            MHD_USE_ERROR_LOG,
        0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)s->cfg.http_threads, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, conns_notify, s->conns,
        MHD_OPTION_CONNECTION_LIMIT, limits.max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        limits.max_per_address, MHD_OPTION_URI_LOG_CALLBACK, on_request_line, s,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)0, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)CONNECTION_MEMORY, MHD_OPTION_END);
    if (!daemon) {
        err_set(e, "cannot listen on %s: %s", s->cfg.listen, strerror(errno));
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    char host[64];
    inet_ntop(AF_INET, &addr.sin_addr, host, sizeof host);
    snprintf(url, cap, "http://%s:%u", host, info ? info->port : ntohs(addr.sin_port));
    return daemon;
}

void server_stop(struct MHD_Daemon *daemon) { MHD_stop_daemon(daemon); }
