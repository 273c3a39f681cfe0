/* server.c: `cairn-farm serve`: the coordinator's HTTP plumbing on libmicrohttpd,
 * authentication, routing, JSON errors and the request log. The handlers live in
 * handlers.c. No connection owns a thread (docs/farm.md, "The server's threads"):
 * libmicrohttpd's fixed pool of epoll threads reads and answers every connection and
 * runs the short routes; the routes that verify, write files or render pages go to a
 * fixed work pool; a long-polling claim is suspended, holding no thread, until jobs may
 * have become claimable or its wait runs out (the waker thread). */
#include "serve/serve.h"
#include "serve/conns_internal.h"
#include "serve/web_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>
#include <openssl/crypto.h>

typedef enum { AUTH_NONE, AUTH_ENROL, AUTH_AGENT, AUTH_ADMIN, AUTH_AGENT_OR_ADMIN } AuthKind;

/* Where a route's handler runs: on libmicrohttpd's thread that read the request (short
 * work: a database row or two), or on the work pool (signatures, file writes, fsyncs,
 * pages), so that slow handlers never hold the threads every connection needs. */
typedef enum { POOL_HTTP, POOL_WORK } Pool;

typedef struct {
    const char *method;
    const char *pattern; /* segments; "*" captures one segment into Request.arg, a
                                final "**" the rest of the path */
    AuthKind auth;
    void (*handle)(Server *, Request *, Reply *);
    Pool pool;
} Route;

static const Route ROUTES[] = {
    {"GET", "/healthz", AUTH_NONE, handlers_health, POOL_HTTP},
    {"GET", "/", AUTH_NONE, web_index, POOL_WORK},
    {"GET", "/runs/*", AUTH_NONE, web_run, POOL_WORK},
    {"GET", "/runs/*/plot.svg", AUTH_NONE, web_plot, POOL_WORK},
    {"GET", "/history/**", AUTH_NONE, web_history, POOL_WORK},
    {"GET", "/files/**", AUTH_NONE, web_file, POOL_WORK},
    {"GET", "/favicon.ico", AUTH_NONE, web_icon, POOL_HTTP},
    {"POST", "/api/v1/agents/challenge", AUTH_ENROL, handlers_challenge, POOL_HTTP},
    {"POST", "/api/v1/agents/enrol", AUTH_ENROL, handlers_enrol, POOL_WORK},
    {"POST", "/api/v1/agents/*/revoke", AUTH_ADMIN, handlers_revoke, POOL_WORK},
    {"POST", "/api/v1/claim", AUTH_AGENT, handlers_claim, POOL_HTTP},
    {"POST", "/api/v1/jobs/*/heartbeat", AUTH_AGENT, handlers_heartbeat, POOL_HTTP},
    {"POST", "/api/v1/jobs/*/bundle", AUTH_AGENT, handlers_upload, POOL_WORK},
    {"PUT", "/api/v1/blobs/*", AUTH_ADMIN, handlers_blob_put, POOL_WORK},
    {"GET", "/api/v1/blobs/*", AUTH_AGENT_OR_ADMIN, handlers_blob_get, POOL_HTTP},
    {"POST", "/api/v1/runs", AUTH_ADMIN, handlers_run_create, POOL_WORK},
    {"GET", "/api/v1/runs/*", AUTH_ADMIN, handlers_run_get, POOL_WORK},
    {"GET", "/api/v1/runs/*/results", AUTH_ADMIN, handlers_run_results, POOL_WORK},
    {"POST", "/api/v1/runs/*/cancel", AUTH_ADMIN, handlers_run_cancel, POOL_WORK},
    {"GET", "/api/v1/status", AUTH_ADMIN, handlers_status, POOL_WORK},
};

/* Matches PATH against PATTERN; on a match, the "*" segment is copied into ARG. */
static int match(const char *pattern, const char *path, char *arg, size_t cap) {
    arg[0] = '\0';
    while (*pattern && *path) {
        if (!strcmp(pattern, "**")) {
            size_t n = strlen(path);
            if (n >= cap) return 0;
            memcpy(arg, path, n + 1);
            return 1;
        }
        if (*pattern == '*') {
            size_t n = strcspn(path, "/");
            if (n == 0 || n >= cap) return 0;
            memcpy(arg, path, n);
            arg[n] = '\0';
            pattern++;
            path += n;
        } else if (*pattern++ != *path++) {
            return 0;
        }
    }
    return *pattern == '\0' && *path == '\0';
}

static int token_equals(const char *given, const char *expected) {
    size_t n = strlen(expected);
    return n > 0 && strlen(given) == n && CRYPTO_memcmp(given, expected, n) == 0;
}

/* Agents by token hash, so that most requests authenticate without the database. Any
 * enrolment or revocation here empties it (both can change which token means whom); one
 * at another coordinator sharing the store reaches this cache when its entry gets older
 * than AGENT_CACHE_SECONDS, so a revoked token works nowhere for longer than that. */
#define AGENT_CACHE         4096 /* a slot per agent of a large fleet: a miss costs a database read */
#define AGENT_CACHE_SECONDS 2.0
static struct {
    char hash[SHA256_HEX_LEN];
    double read_at; /* timing_monotonic_seconds() when the database said so */
    Agent agent;
} agent_cache[AGENT_CACHE];
static pthread_mutex_t agent_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long agent_epoch; /* bumped by every flush, under agent_cache_lock */

static void agent_copy(Agent *to, const Agent *from) {
    *to = *from;
    to->public_pem = strdup(from->public_pem);
    to->caps = cJSON_Duplicate(from->caps, 1);
}

static size_t cache_slot(const char *hash) {
    return (size_t)strtoul(
               (char[9]){hash[0], hash[1], hash[2], hash[3], hash[4], hash[5], hash[6], hash[7], 0},
               NULL, 16) %
           AGENT_CACHE;
}

/* A hit copies the agent into OUT; a miss returns the epoch to hand remember_agent. */
static int cached_agent(const char *hash, Agent *out, unsigned long *epoch) {
    size_t i = cache_slot(hash);
    pthread_mutex_lock(&agent_cache_lock);
    int hit = !strcmp(agent_cache[i].hash, hash) &&
              timing_monotonic_seconds() - agent_cache[i].read_at < AGENT_CACHE_SECONDS;
    if (hit) agent_copy(out, &agent_cache[i].agent);
    *epoch = agent_epoch;
    pthread_mutex_unlock(&agent_cache_lock);
    return hit;
}

/* Caches what the database said, unless a flush came in between (the answer may be
 * from before a revocation). */
static void remember_agent(const char *hash, const Agent *a, unsigned long epoch) {
    size_t i = cache_slot(hash);
    pthread_mutex_lock(&agent_cache_lock);
    if (epoch == agent_epoch) {
        if (agent_cache[i].hash[0]) db_agent_free(&agent_cache[i].agent);
        snprintf(agent_cache[i].hash, SHA256_HEX_LEN, "%s", hash);
        agent_cache[i].read_at = timing_monotonic_seconds();
        agent_copy(&agent_cache[i].agent, a);
    }
    pthread_mutex_unlock(&agent_cache_lock);
}

void server_forget_agents(void) {
    pthread_mutex_lock(&agent_cache_lock);
    for (size_t i = 0; i < AGENT_CACHE; i++) {
        if (agent_cache[i].hash[0]) db_agent_free(&agent_cache[i].agent);
        agent_cache[i].hash[0] = '\0';
    }
    agent_epoch++;
    pthread_mutex_unlock(&agent_cache_lock);
}

/* 0 when the request may go on; otherwise the 401 is already in R. */
static int authenticate(Server *s, const Route *route, Request *q, Reply *r) {
    if (route->auth == AUTH_NONE) return 0;
    if (!q->bearer)
        return handlers_reply_error(r, PROTO_E_NO_TOKEN, "missing Authorization: Bearer token");
    if (route->auth == AUTH_ENROL)
        return token_equals(q->bearer, s->cfg.enrol_token)
                   ? 0
                   : handlers_reply_error(r, PROTO_E_WRONG_TOKEN, "wrong enrolment token");
    int admin = token_equals(q->bearer, s->cfg.admin_token);
    if (route->auth == AUTH_ADMIN)
        return admin ? 0
                     : handlers_reply_error(r, PROTO_E_WRONG_TOKEN,
                                            "this route needs the admin token");
    if (admin && route->auth == AUTH_AGENT_OR_ADMIN) return 0;
    char hash[SHA256_HEX_LEN];
    sha256_hex(q->bearer, strlen(q->bearer), hash);
    unsigned long epoch;
    if (cached_agent(hash, &q->agent, &epoch)) return 0;
    if (!db_agent_by_token(s->db, hash, &q->agent))
        return handlers_reply_error(r, PROTO_E_UNKNOWN_AGENT, "unknown or revoked agent token");
    remember_agent(hash, &q->agent, epoch);
    return 0;
}

/* The route for Q's method and path; otherwise NULL with the 404 or 405 in R. */
static const Route *find_route(Request *q, char *arg, size_t cap, Reply *r) {
    int path_known = 0;
    for (size_t i = 0; i < sizeof ROUTES / sizeof ROUTES[0]; i++) {
        const Route *route = &ROUTES[i];
        if (!match(route->pattern, q->path, arg, cap)) continue;
        path_known = 1;
        if (strcmp(route->method, q->method) != 0) continue;
        q->arg = arg;
        return route;
    }
    if (path_known)
        handlers_reply_error(r, PROTO_E_METHOD_NOT_ALLOWED, "method %s not allowed on %s",
                             q->method, q->path);
    else handlers_reply_error(r, PROTO_E_NO_ROUTE, "no route %s %s", q->method, q->path);
    return NULL;
}

void server_route(Server *s, Request *q, Reply *r) {
    char arg[1100];
    const Route *route = find_route(q, arg, sizeof arg, r);
    if (!route || authenticate(s, route, q, r) != 0) return;
    if (q->len > (size_t)s->cfg.max_body_bytes)
        handlers_reply_error(r, PROTO_E_TOO_LARGE, "body larger than max_body_bytes (%ld)",
                             s->cfg.max_body_bytes);
    else route->handle(s, q, r);
    if (r->park) r->park = 0, r->status = 204; /* nothing waits here: an empty long poll */
}

/* --- libmicrohttpd glue ------------------------------------------------------------ */

/* Where a request is while no thread runs it (every field under wake_lock). */
typedef enum {
    PARK_NONE,
    PARK_CLAIM,     /* a long poll, suspended until server_notify or its deadline */
    PARK_WORK,      /* suspended, queued for the work pool or running there */
    PARK_WORK_DONE, /* the work pool's answer is in reply, the connection resumed */
} Parking;

/* One request's state between libmicrohttpd's calls: the route and the caller, known
 * from the headers alone, then the body, then (when set aside) its parking. */
typedef struct Upload {
    Request q;
    const Route *route;
    char arg[1100]; /* a "**" capture: a case path or an evidence file */
    char *body;
    size_t len, cap;
    int too_big;
    int answered; /* refused from its headers: the body, if any, is not read */
    double started;
    struct MHD_Connection *conn;
    Parking parking;
    Reply reply;                /* the work pool's answer */
    struct Upload *prev, *next; /* in the list of parked claims or the work queue */
} Upload;

static Server *g_server;

/* The parked requests, under g_server->wake_lock: claims waiting, soonest deadline
 * first; the work queue, first in first out; how many requests the work pool holds. */
static Upload *claims, *claims_tail;
static Upload *work_head, *work_tail;
static int work_held;

/* Inserts U by deadline, searching from the latest: deadlines mostly come in order. */
static void insert_claim(Upload *u) {
    Upload *after = claims_tail;
    while (after && after->q.wait_until > u->q.wait_until) after = after->prev;
    u->prev = after;
    u->next = after ? after->next : claims;
    if (u->next) u->next->prev = u;
    else claims_tail = u;
    if (after) after->next = u;
    else claims = u;
}

/* Resumes parked claims, soonest deadline first, while their deadline is at or before
 * UNTIL; libmicrohttpd then calls on_request again and each is tried once more. A claim
 * is not touched after its resumption: its thread may answer and free it at once. */
static void resume_claims(double until) {
    while (claims && claims->q.wait_until <= until) {
        Upload *u = claims;
        claims = u->next;
        if (claims) claims->prev = NULL;
        else claims_tail = NULL;
        u->prev = u->next = NULL;
        u->parking = PARK_NONE;
        MHD_resume_connection(u->conn);
    }
}

void server_notify(Server *s) {
    pthread_mutex_lock(&s->wake_lock);
    s->generation++;
    resume_claims(INFINITY);
    pthread_mutex_unlock(&s->wake_lock);
}

int server_stopping(Server *s) {
    pthread_mutex_lock(&s->wake_lock);
    int stopping = s->stopping;
    pthread_mutex_unlock(&s->wake_lock);
    return stopping;
}

static unsigned long generation(Server *s) {
    pthread_mutex_lock(&s->wake_lock);
    unsigned long g = s->generation;
    pthread_mutex_unlock(&s->wake_lock);
    return g;
}

/* Parks a claim that found nothing, unless jobs may have become claimable since SEEN
 * (then 0: try again now). Suspension and resumption both happen under wake_lock, so a
 * notify never falls between them. */
static int park_claim(Server *s, Upload *u, unsigned long seen) {
    pthread_mutex_lock(&s->wake_lock);
    int park = s->generation == seen && !s->stopping;
    if (park) {
        MHD_suspend_connection(u->conn);
        u->parking = PARK_CLAIM;
        insert_claim(u);
        if (claims == u) pthread_cond_signal(&s->wake); /* the waker's next deadline */
    }
    pthread_mutex_unlock(&s->wake_lock);
    return park;
}

/* The waker: resumes parked claims whose wait has run out, sleeping until the next. */
static void *waker(void *arg) {
    Server *s = arg;
    pthread_mutex_lock(&s->wake_lock);
    for (;;) {
        resume_claims(timing_now_seconds());
        double d = claims ? claims->q.wait_until : timing_now_seconds() + 1;
        struct timespec until = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
        pthread_cond_timedwait(&s->wake, &s->wake_lock, &until);
    }
    return NULL;
}

/* Hands U to the work pool, its connection suspended until the answer is ready; when
 * serve is stopping (nothing may be suspended any more) it runs here instead. */
static int queue_work(Server *s, Upload *u) {
    pthread_mutex_lock(&s->wake_lock);
    int queued = !s->stopping;
    if (queued) {
        MHD_suspend_connection(u->conn);
        u->parking = PARK_WORK;
        if (work_tail) work_tail->next = u;
        else work_head = u;
        work_tail = u;
        work_held++;
        pthread_cond_signal(&s->work);
    }
    pthread_mutex_unlock(&s->wake_lock);
    return queued;
}

static void *worker(void *arg) {
    Server *s = arg;
    pthread_mutex_lock(&s->wake_lock);
    for (;;) {
        while (!work_head) pthread_cond_wait(&s->work, &s->wake_lock);
        Upload *u = work_head;
        work_head = u->next;
        if (!work_head) work_tail = NULL;
        u->next = NULL;
        pthread_mutex_unlock(&s->wake_lock);
        Reply r = {0};
        u->route->handle(s, &u->q, &r);
        pthread_mutex_lock(&s->wake_lock);
        u->reply = r;
        u->parking = PARK_WORK_DONE;
        work_held--;
        MHD_resume_connection(u->conn);
        if (s->stopping) pthread_cond_broadcast(&s->work); /* serve waits for work_held 0 */
    }
    return NULL;
}

static Parking parking_of(Server *s, Upload *u) {
    pthread_mutex_lock(&s->wake_lock);
    Parking p = u->parking;
    pthread_mutex_unlock(&s->wake_lock);
    return p;
}

static enum MHD_Result send_reply(struct MHD_Connection *conn, Reply *r) {
    struct MHD_Response *resp;
    if (r->raw) {
        resp = MHD_create_response_from_buffer(r->raw_len, r->raw, MHD_RESPMEM_MUST_FREE);
        MHD_add_response_header(resp, "Content-Type", r->raw_type);
    } else if (r->json) {
        char *text = cJSON_PrintUnformatted(r->json);
        resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
        MHD_add_response_header(resp, "Content-Type", "application/json");
    } else {
        resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    }
    enum MHD_Result rc = MHD_queue_response(conn, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    return rc;
}

static void log_request(const Request *q, const Reply *r, double started) {
    double ms = (timing_now_seconds() - started) * 1000.0;
    if (r->status >= 400)
        fprintf(stderr, "farm: %s %s -> %d (%.1f ms): %s\n", q->method, q->path, r->status, ms,
                r->error);
    else if (getenv("CAIRN_FARM_LOG_ALL"))
        fprintf(stderr, "farm: %s %s -> %d (%.1f ms)\n", q->method, q->path, r->status, ms);
}

static int take_body(Upload *u, const char *data, size_t size, long max) {
    if (u->too_big || u->len + size > (size_t)max) {
        u->too_big = 1; /* keep reading, keep nothing: the answer is 413 */
        return 0;
    }
    if (u->len + size + 1 > u->cap) {
        size_t cap = u->cap ? u->cap : 4096;
        while (cap < u->len + size + 1) cap *= 2;
        char *bigger = realloc(u->body, cap);
        if (!bigger) return -1;
        u->body = bigger;
        u->cap = cap;
    }
    memcpy(u->body + u->len, data, size);
    u->len += size;
    u->body[u->len] = '\0';
    return 0;
}

static enum MHD_Result answer(struct MHD_Connection *conn, Upload *u, Reply *r) {
    u->answered = 1;
    log_request(&u->q, r, u->started);
    conns_answering(conn);
    enum MHD_Result rc = send_reply(conn, r);
    cJSON_Delete(r->json);
    r->json = NULL;
    r->raw = NULL; /* libmicrohttpd frees it with the response */
    return rc;
}

/* The headers are in: route, token and declared length are checked before any of the
 * body is read, so an anonymous or oversized upload costs no memory. 0 to go on. */
static int admit(Server *s, struct MHD_Connection *conn, Upload *u, Reply *r) {
    const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    const char *length = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
    if (auth && !strncmp(auth, "Bearer ", 7)) u->q.bearer = auth + 7;
    u->route = find_route(&u->q, u->arg, sizeof u->arg, r);
    int ok = u->route && authenticate(s, u->route, &u->q, r) == 0;
    if (ok && u->q.agent.id) web_agent_seen(u->q.agent.id); /* the dashboard's "last heard from" */
    conns_headers_done(conn, ok && u->route->auth != AUTH_NONE);
    if (ok && length && strtod(length, NULL) > (double)s->cfg.max_body_bytes)
        ok = handlers_reply_error(r, PROTO_E_TOO_LARGE,
                                  "Content-Length %s is over max_body_bytes (%ld)", length,
                                  s->cfg.max_body_bytes) == 0;
    return ok ? 0 : -1;
}

/* Runs an HTTP-pool route here; a claim that asks to wait is parked (and this returns
 * with the connection suspended) unless jobs may have become claimable meanwhile. */
static enum MHD_Result run_here(Server *s, Upload *u) {
    for (;;) {
        Reply r = {0};
        unsigned long seen = generation(s);
        u->route->handle(s, &u->q, &r);
        if (!r.park) return answer(u->conn, u, &r);
        if (park_claim(s, u, seen)) return MHD_YES;
    }
}

/* The body is in (or the request resumed): answer, run, queue or park it. */
static enum MHD_Result dispatch(Server *s, Upload *u) {
    if (parking_of(s, u) == PARK_WORK_DONE) return answer(u->conn, u, &u->reply);
    if (u->too_big) {
        Reply r = {0};
        handlers_reply_error(&r, PROTO_E_TOO_LARGE, "body larger than max_body_bytes (%ld)",
                             s->cfg.max_body_bytes);
        return answer(u->conn, u, &r);
    }
    conns_handling(u->conn);
    if (u->route->pool == POOL_WORK && queue_work(s, u)) return MHD_YES;
    return run_here(s, u);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **state) {
    (void)cls;
    (void)version;
    Server *s = g_server;
    Upload *u = *state;
    if (!u) {
        *state = u = calloc(1, sizeof *u);
        if (!u) return MHD_NO;
        u->started = timing_now_seconds();
        u->conn = conn;
        u->q = (Request){.method = method, .path = url};
        Reply r = {0};
        if (admit(s, conn, u, &r) == 0) return MHD_YES;
        return answer(conn, u, &r);
    }
    if (*upload_size) {
        if (!u->answered && take_body(u, upload_data, *upload_size, s->cfg.max_body_bytes) != 0)
            return MHD_NO;
        *upload_size = 0;
        return MHD_YES;
    }
    if (u->answered) return MHD_YES;
    u->q.body = u->body ? u->body : "";
    u->q.len = u->len;
    return dispatch(s, u);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **state,
                         enum MHD_RequestTerminationCode code) {
    (void)cls;
    (void)code;
    Upload *u = *state;
    if (u) {
        /* a work pool's answer whose client left before it could go out */
        cJSON_Delete(u->reply.json);
        free(u->reply.raw);
        db_agent_free(&u->q.agent);
        free(u->body);
        free(u);
    }
    *state = NULL;
    conns_request_done(conn);
}

/* Serve is stopping: parked claims answer now, and the work pool finishes what it holds,
 * so that nothing is suspended when libmicrohttpd stops (it refuses to stop then). 0
 * when all is done within 30 s. */
static int settle_parked(Server *s) {
    double give_up = timing_now_seconds() + 30;
    pthread_mutex_lock(&s->wake_lock);
    s->stopping = 1;
    s->generation++;
    resume_claims(INFINITY);
    while (work_held > 0 && timing_now_seconds() < give_up) {
        struct timespec until = {(time_t)give_up, 0};
        pthread_cond_timedwait(&s->work, &s->wake_lock, &until);
    }
    int left = work_held;
    pthread_mutex_unlock(&s->wake_lock);
    return left ? -1 : 0;
}

/* --- configuration and the serve verb ---------------------------------------------- */

/* A config key read into a FarmConfig field, with the range it must lie in. */
typedef struct {
    const char *key;
    size_t at;
    double lo, hi;
} ConfigRange;

static int load_config(const char *path, FarmConfig *c, Err *e) {
    *c = (FarmConfig){.max_body_bytes = 64L << 20,
                      .max_subjects = 10000,
                      .max_connections = 1000,
                      .max_connections_per_address = 750,
                      .max_anonymous = 256,
                      .max_anonymous_per_address = 64,
                      .header_timeout_seconds = 10,
                      .body_timeout_seconds = 300,
                      .lease_seconds = 60,
                      .max_attempts = 3,
                      .claim_wait_max_seconds = 30,
                      .http_threads = 4,
                      .work_threads = 8,
                      .sync_full = 1};
    snprintf(c->listen, sizeof c->listen, "127.0.0.1:8470");
    if (!path)
        return err_set(e, "--config FILE is required (it holds the tokens; see configs/farm.json)");
    cJSON *j = json_parse_file(path, e);
    if (!j) return -1;
    const char *listen = json_str(j, "listen"), *enrol = json_str(j, "enrol_token");
    const char *admin = json_str(j, "admin_token"), *sync = json_str(j, "sync");
    const char *bad = NULL;
    if (listen) snprintf(c->listen, sizeof c->listen, "%s", listen);
    snprintf(c->enrol_token, sizeof c->enrol_token, "%s", enrol ? enrol : "");
    snprintf(c->admin_token, sizeof c->admin_token, "%s", admin ? admin : "");
    static const ConfigRange counts[] = {
        {"max_body_bytes", offsetof(FarmConfig, max_body_bytes), 1024, 1e12},
        {"max_subjects", offsetof(FarmConfig, max_subjects), 1, 1e7},
        {"max_connections", offsetof(FarmConfig, max_connections), 16, 1e5},
        {"max_connections_per_address", offsetof(FarmConfig, max_connections_per_address), 1, 1e5},
        {"max_anonymous", offsetof(FarmConfig, max_anonymous), 1, 1e5},
        {"max_anonymous_per_address", offsetof(FarmConfig, max_anonymous_per_address), 1, 1e5},
        {"http_threads", offsetof(FarmConfig, http_threads), 1, 256},
        {"work_threads", offsetof(FarmConfig, work_threads), 1, 256},
        {"max_attempts", offsetof(FarmConfig, max_attempts), 1, 1000},
    };
    static const ConfigRange spans[] = {
        {"header_timeout_seconds", offsetof(FarmConfig, header_timeout_seconds), 0.001, 86400},
        {"body_timeout_seconds", offsetof(FarmConfig, body_timeout_seconds), 0.001, 86400},
        {"lease_seconds", offsetof(FarmConfig, lease_seconds), 0.001, 1e6},
        {"claim_wait_max_seconds", offsetof(FarmConfig, claim_wait_max_seconds), 0, 3600},
    };
    char range[160] = "";
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (json_int(j, counts[i].key, counts[i].lo, counts[i].hi,
                     (long *)((char *)c + counts[i].at)) < 0)
            snprintf(range, sizeof range, "\"%s\" must be an integer in [%.0f, %.0f]",
                     counts[i].key, counts[i].lo, counts[i].hi);
    for (size_t i = 0; i < sizeof spans / sizeof spans[0]; i++) {
        double *v = (double *)((char *)c + spans[i].at);
        *v = json_num(j, spans[i].key, *v); /* a number past its range: refused, never cast */
        if (!(*v >= spans[i].lo && *v <= spans[i].hi))
            snprintf(range, sizeof range, "\"%s\" must be a number of seconds in [%g, %g]",
                     spans[i].key, spans[i].lo, spans[i].hi);
    }
    if (range[0]) bad = range;
    if (sync && strcmp(sync, "full") != 0 && strcmp(sync, "process") != 0)
        bad = "\"sync\" must be \"full\" or \"process\"";
    c->sync_full = !sync || !strcmp(sync, "full");
    const char *store = json_str(j, "store");
    if (store && strcmp(store, "sqlite") != 0 && strncmp(store, "postgresql://", 13) != 0 &&
        strncmp(store, "postgres://", 11) != 0)
        bad = "\"store\" must be \"sqlite\" or a postgresql:// URI";
    snprintf(c->store, sizeof c->store, "%s", store && strcmp(store, "sqlite") ? store : "");
    cJSON_Delete(j);
    if (bad) return err_set(e, "%s: %s", path, bad);
    if (strlen(c->enrol_token) < 16 || strlen(c->admin_token) < 16)
        return err_set(e, "%s: enrol_token and admin_token must be at least 16 characters", path);
    return 0;
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

/* Uploads verifying signatures or writing files at once (see store_files in handlers.c),
 * among the work pool's threads: as many as this machine class has cores. More only adds
 * runnable threads that preempt the short requests; under the load test 2 took the claim
 * p50 from 8 ms to 2 ms. The rest of the work pool parses bodies and waits for the group
 * commit's fsync, which costs no CPU. */
#define FILERS 2

/* The journal settles every SETTLE_TICKS ticks (one second): a syncfs every tick made
 * claims' WAL writes wait behind the file system's writeback (server-side claim p50
 * 6 ms instead of 0.3 ms under the load test). */
#define SETTLE_TICKS 5

/* Background work, off every request's path: expired leases, the evidence journal's
 * settling (sync "full") and WAL checkpoints. */
static void *reaper(void *arg) {
    Server *s = arg;
    for (unsigned long tick = 1;; tick++) {
        timing_sleep_ms(200);
        conns_sweep();
        if (db_reap(s->db, s->cfg.max_attempts) > 0) server_notify(s);
        if (s->cfg.sync_full && tick % SETTLE_TICKS == 0) store_settle(s);
        db_checkpoint(s->db);
    }
    return NULL;
}

static const char SERVE_HELP[] =
    "usage: cairn-farm serve --state DIR --config FILE [--listen HOST:PORT] [--check-config]\n"
    "\n"
    "--check-config reads FILE, says what is wrong with it (exit 2) or nothing (exit 0),\n"
    "and starts nothing. Every count and span of seconds below has a range; a value\n"
    "outside it is refused by name.\n"
    "Runs the coordinator: the HTTP+JSON API (docs/farm.md), the job queue and the\n"
    "evidence store, all kept in DIR (farm.db, blobs/, evidence/, tmp/). FILE is JSON:\n"
    "  {\"listen\": \"127.0.0.1:8470\", \"enrol_token\": \"...\", \"admin_token\": \"...\",\n"
    "   \"max_body_bytes\": 67108864, \"max_subjects\": 10000, \"lease_seconds\": 60,\n"
    "   \"max_attempts\": 3, \"claim_wait_max_seconds\": 30, \"sync\": \"full\",\n"
    "   \"max_connections\": 1000, \"max_connections_per_address\": 750,\n"
    "   \"max_anonymous\": 256, \"max_anonymous_per_address\": 64,\n"
    "   \"header_timeout_seconds\": 10, \"body_timeout_seconds\": 300,\n"
    "   \"http_threads\": 4, \"work_threads\": 8, \"store\": \"sqlite\"}\n"
    "store \"sqlite\" (default) keeps the database in DIR/farm.db; \"postgresql://...\" (a\n"
    "libpq URI) keeps it in PostgreSQL, which several coordinators may share along with\n"
    "one DIR (docs/farm.md, \"Several coordinators\").\n"
    "No connection has a thread of its own. http_threads (1-256) epoll threads read and\n"
    "answer every connection and run the short routes (claims, heartbeats, source\n"
    "downloads); a claim with nothing to do is suspended, holding no thread, until jobs\n"
    "may have become claimable or its wait_s runs out. work_threads (1-256) run what\n"
    "verifies, writes files or renders pages (uploads, enrolments, runs, blob uploads,\n"
    "the dashboard), two of them verifying or filing at once, so that slow uploads never\n"
    "hold the threads the claims need.\n"
    "Connections that have shown no token yet and wait for headers are capped in all and\n"
    "per address (the oldest is closed to make space); headers must be complete within\n"
    "header_timeout_seconds, a body and its answer within body_timeout_seconds, counted\n"
    "in total time (docs/farm.md, \"Limits and security\").\n"
    "sync \"full\" fsyncs every acknowledged bundle (it survives power loss); \"process\"\n"
    "only guarantees survival of the coordinator's own crash (kill -9), and is faster.\n"
    "Port 0 picks a free port. Once listening it writes DIR/serve.json ({\"url\", \"pid\"}).\n"
    "SIGINT or SIGTERM stops it; kill -9 loses nothing acknowledged.\n";

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

static int start_http(Server *s, struct MHD_Daemon **daemon, char *url, size_t cap, Err *e) {
    struct sockaddr_in addr;
    if (parse_listen(s->cfg.listen, &addr, e) != 0) return -1;
    g_server = s;
    ConnLimits limits = {connection_budget(s->cfg.max_connections),
                         (unsigned)s->cfg.max_connections_per_address,
                         (unsigned)s->cfg.max_anonymous,
                         (unsigned)s->cfg.max_anonymous_per_address,
                         s->cfg.header_timeout_seconds,
                         s->cfg.body_timeout_seconds};
    conns_init(&limits);
    /* epoll where the system has it; each pool thread waits on its own connections. */
    *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME |
            MHD_USE_ERROR_LOG,
        0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)s->cfg.http_threads, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, NULL, MHD_OPTION_NOTIFY_CONNECTION, conns_notify, NULL,
        MHD_OPTION_CONNECTION_LIMIT, limits.max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        limits.max_per_address, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY, MHD_OPTION_END);
    if (!*daemon) return err_set(e, "cannot listen on %s: %s", s->cfg.listen, strerror(errno));
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(*daemon, MHD_DAEMON_INFO_BIND_PORT);
    char host[64];
    inet_ntop(AF_INET, &addr.sin_addr, host, sizeof host);
    snprintf(url, cap, "http://%s:%u", host, info ? info->port : ntohs(addr.sin_port));
    return 0;
}

static int open_state(Server *s, Err *e) {
    char path[1200];
    if (fs_mkdirs(s->state, e) != 0) return -1;
    snprintf(path, sizeof path, "%s/farm.db", s->state);
    s->db = db_open(s->cfg.store[0] ? s->cfg.store : path, e);
    if (s->db) db_set_sync(s->db, s->cfg.sync_full);
    return s->db && store_reconcile(s, e) == 0 ? 0 : -1;
}

/* The threads beside libmicrohttpd's pool: the reaper, the waker of parked claims and
 * the work pool. They run until the process ends. */
static void start_threads(Server *s) {
    pthread_t t;
    pthread_create(&t, NULL, reaper, s);
    pthread_detach(t);
    pthread_create(&t, NULL, waker, s);
    pthread_detach(t);
    for (long i = 0; i < s->cfg.work_threads; i++) {
        pthread_create(&t, NULL, worker, s);
        pthread_detach(t);
    }
}

int server_main(int argc, char **argv) {
    const char *state = NULL, *config = NULL, *listen = NULL;
    int check_only = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(SERVE_HELP, stdout);
            return 0;
        } else if (!strcmp(argv[i], "--state") && i + 1 < argc) {
            state = argv[++i];
        } else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
            config = argv[++i];
        } else if (!strcmp(argv[i], "--listen") && i + 1 < argc) {
            listen = argv[++i];
        } else if (!strcmp(argv[i], "--check-config")) {
            check_only = 1;
        } else {
            fprintf(stderr, "cairn-farm serve: unknown argument %s (see --help)\n", argv[i]);
            return 2;
        }
    }
    static Server s;
    Err e = {{0}};
    if (!state) {
        fprintf(stderr, "cairn-farm serve: --state DIR is required (see --help)\n");
        return 2;
    }
    snprintf(s.state, sizeof s.state, "%s", state);
    pthread_mutex_init(&s.wake_lock, NULL);
    pthread_cond_init(&s.wake, NULL);
    pthread_cond_init(&s.work, NULL);
    pthread_mutex_init(&s.filing_lock, NULL);
    sem_init(&s.filers, 0, FILERS);
    if (load_config(config, &s.cfg, &e) != 0) {
        fprintf(stderr, "cairn-farm serve: %s\n", e.msg);
        return 2;
    }
    if (check_only) return 0;
    if (listen) snprintf(s.cfg.listen, sizeof s.cfg.listen, "%s", listen);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL); /* every thread inherits the mask */
    signal(SIGPIPE, SIG_IGN);
    /* Many threads allocate and free request bodies: keep freed memory in
     * the heap instead of returning it to the kernel (and flushing TLBs) every time. */
    mallopt(M_MMAP_THRESHOLD, 8 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    struct MHD_Daemon *daemon = NULL;
    char url[256], info_path[1200];
    if (open_state(&s, &e) != 0) {
        fprintf(stderr, "cairn-farm serve: %s\n", e.msg);
        return 1;
    }
    start_threads(&s);
    if (start_http(&s, &daemon, url, sizeof url, &e) != 0) {
        fprintf(stderr, "cairn-farm serve: %s\n", e.msg);
        return 1;
    }
    cJSON *info = cJSON_CreateObject();
    cJSON_AddStringToObject(info, "url", url);
    cJSON_AddNumberToObject(info, "pid", (double)getpid());
    char *text = cJSON_Print(info);
    snprintf(info_path, sizeof info_path, "%s/serve.json", s.state);
    fs_write_atomic(info_path, text, strlen(text), &e);
    free(text);
    cJSON_Delete(info);
    fprintf(stderr, "farm: listening on %s, state in %s\n", url, s.state);
    int sig = 0;
    sigwait(&stop, &sig);
    fprintf(stderr, "farm: stopping (signal %d)\n", sig);
    if (settle_parked(&s) != 0) {
        /* libmicrohttpd cannot stop with a request suspended: leave it to exit */
        fprintf(stderr, "farm: the work pool did not finish within 30 s; exiting\n");
        return 1;
    }
    MHD_stop_daemon(daemon);
    return 0;
}
