/* serve_internal.h: what the files of farm/serve/ share and nothing outside it sees. One
 * job a file:
 *   config.c    the config file: defaults and bounds, in one table
 *   reply.c     answers: JSON, errors with their code, raw bytes
 *   routes.c    the route table: path, method, who may call it, where it runs
 *   auth.c      tokens, and the cache of agents by token
 *   hub.c       requests set aside without a thread: parked claims and the work pool
 *   server.c    libmicrohttpd: admission from the headers, bodies, answers, the log
 *   serve.c     the `serve` verb: options, opening the state, the background threads
 *   handlers.c  the API's routes; web*.c the dashboard (web_internal.h)
 *   report.c    each run's comparison, kept once the run has finished (report_values.c:
 *               the values cells hold, and how far apart they are)
 *   store.c     blobs by content on disk; gc.c the collector; migrate.c the layout before
 *   statedir.c  paths under the state folder, opened without following links
 *   conns.c     every connection's deadlines and the anonymous caps (conns_internal.h)
 *   metrics.c   GET /metrics: counters kept as requests run, the store's counts on request
 *   log.c       the log's lines: text for people, or one JSON object a line
 *   pause.c     points where a test build waits for its test (FARM_TEST_PAUSES) */
#ifndef CAIRN_FARM_SERVE_INTERNAL_H
#define CAIRN_FARM_SERVE_INTERNAL_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/types.h>

#include <openssl/types.h>

#include "proto/api.h"
#include "serve/serve.h"

struct MHD_Connection;
struct MHD_Daemon;

/* --- routes (routes.c) ------------------------------------------------------------ */

typedef enum { AUTH_NONE, AUTH_ENROL, AUTH_AGENT, AUTH_ADMIN, AUTH_AGENT_OR_ADMIN } AuthKind;

/* Where a route's handler runs: on libmicrohttpd's thread that read the request (short
 * work: a database row or two), on the work pool (signatures, file writes, fsyncs), or
 * on the page pool (the dashboard and filed files, for anyone), so that slow handlers
 * never hold the threads every connection needs, and pages never the farm's work. */
typedef enum { POOL_HTTP, POOL_WORK, POOL_PAGE } Pool;

/* Whether a route takes a body, and how large: a request with one for a route that takes
 * none, or that declares more than its route's limit, is refused from its headers (413),
 * before a byte of the body is read. Claims, heartbeats, challenges and the admin's
 * small verbs take max_small_body_bytes, enrolments max_enrol_body_bytes, uploads, runs
 * and source archives max_body_bytes (route_body_limit). */
typedef enum { BODY_NONE, BODY_SMALL, BODY_ENROL, BODY_TAKEN } Body;

typedef void (*Handler)(Server *s, Request *q, Reply *r);

typedef struct {
    const char *method;
    const char *pattern; /* segments; "*" captures one segment into Request.arg, a
                                final "**" the rest of the path */
    AuthKind auth;
    Handler handle;
    Pool pool;
    Body body;
} Route;

/* The route for Q's method and path, its variable segment copied into ARG (CAP bytes)
 * and Q->arg pointed at it; otherwise NULL with the 404 or 405 in R. */
const Route *route_find(Request *q, char *arg, size_t cap, Reply *r);
/* The route table's rows, and R's position in it. */
int route_count(void);
const Route *route_at(int i);
int route_index(const Route *r);
/* The most bytes of body ROUTE takes, and the name of the setting that says so. */
long route_body_limit(const Server *s, const Route *route, const char **setting);

/* --- one request between libmicrohttpd's calls (server.c, hub.c) ------------------ */

/* Where a request is while no thread runs it (hub.c; under the hub's lock). */
typedef enum {
    PARK_NONE,
    PARK_CLAIM,     /* a long poll, suspended until hub_notify or its deadline */
    PARK_WORK,      /* suspended, queued for its pool (work or pages) or running there */
    PARK_WORK_DONE, /* the pool's answer is in reply (or it was dropped), resumed */
} Parking;

/* One request's state between libmicrohttpd's calls: the route and the caller, known
 * from the headers alone, then the body, then (when set aside) its parking. */
typedef struct Exchange {
    Request q;
    const Route *route;
    char arg[1100]; /* a "**" capture: a case path or an evidence file */
    char *body;
    size_t len, cap;
    int too_big;
    int has_body;    /* the headers declare one (Content-Length over 0, or chunked) */
    int answered;    /* refused from its headers: the body, if any, is not read */
    int dropped;     /* its client left before its pool ran it: nothing to answer */
    char peer[64];   /* the client's address (q.peer) */
    char query[512]; /* the URL's arguments (q.query): what does not fit is left out */
    double started;
    struct MHD_Connection *conn;
    Parking parking;
    Reply reply;                  /* the work pool's answer */
    struct Exchange *prev, *next; /* in the list of parked claims or the work queue */
} Exchange;

/* --- the server's state ----------------------------------------------------------- */

/* A pool's queue, first in first out; LIMIT bounds what it holds (0: no bound). */
typedef struct {
    Exchange *head, *tail;
    long held;            /* requests queued or running */
    long limit;           /* at most this many held; more are refused (503) */
    pthread_cond_t ready; /* its threads': a request queued */
} WorkQueue;

/* Parked claims per agent, for max_claims_per_agent: a bucket per agent id modulo this,
 * each a short chain. */
#define HUB_CLAIM_BUCKETS 1024

/* The requests set aside without a thread (hub.c): long-polling claims and requests
 * queued for the work pool or the page pool. Every field is under lock. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;            /* the waker thread's: a sooner deadline, or stopping */
    pthread_cond_t settled;         /* a pool finished a request while stopping */
    unsigned long generation;       /* bumped whenever jobs may have become claimable */
    int stopping;                   /* serve is shutting down: nothing is parked any more */
    Exchange *claims, *claims_tail; /* parked claims, soonest deadline first */
    WorkQueue work, pages;
    struct Parked *parked[HUB_CLAIM_BUCKETS]; /* parked claims per agent (hub.c) */
} Hub;

#define MAX_FILING 256

/* An enrolment challenge outstanding (handlers.c): its nonce, who asked, until when. */
typedef struct {
    char nonce[SHA256_HEX_LEN];
    char peer[64];
    double expires; /* 0: a free slot */
} Nonce;

/* Agents by token hash (auth.c), so that most requests authenticate without the
 * database; see auth.c for when an entry is forgotten. Every field is under lock. */
#define AUTH_CACHE           4096 /* a slot per agent of a large fleet: a miss costs a database read */
#define AUTH_CACHE_FORGOTTEN 64
typedef struct {
    pthread_mutex_t lock;
    struct {
        char hash[SHA256_HEX_LEN];
        double read_at; /* timing_monotonic_seconds() when the database said so */
        Agent agent;
    } slot[AUTH_CACHE];
    unsigned long epoch; /* bumped by every flush */
    /* What the latest flushes forgot, at [epoch % AUTH_CACHE_FORGOTTEN]: an agent's id,
     * or 0 for all. */
    long forgotten[AUTH_CACHE_FORGOTTEN];
    double lifetime; /* agent_cache_seconds: an entry older than this is read again */
} AuthCache;

/* What a claim answer says about its run (handlers.c): runs never change once made, so
 * this is read from the database once per run rather than once per claim. */
#define RUN_CACHE 64
typedef struct {
    pthread_mutex_t lock;
    struct {
        long run;
        char sha[SHA256_HEX_LEN];
        long size;
        double timeout_s;
        cJSON *cases;
    } slot[RUN_CACHE];
} RunCache;

/* Agents' keys, decoded once (handlers.c): PEM decoding goes through OpenSSL 3's decoder
 * framework, far slower than the signature check itself. Keyed by agent id and key id. */
#define KEY_CACHE 1024
typedef struct {
    pthread_mutex_t lock;
    struct {
        long agent;
        char keyid[SHA256_HEX_LEN];
        EVP_PKEY *key;
    } slot[KEY_CACHE];
} KeyCache;

/* When agents were last heard from (any authenticated request), for the dashboard
 * (web.c): a slot per agent id modulo WEB_SEEN_SLOTS. */
#define WEB_SEEN_SLOTS 1024
typedef struct {
    pthread_mutex_t lock;
    struct {
        long id;
        double at;
    } slot[WEB_SEEN_SLOTS];
} WebSeen;

/* What GET /metrics counts as it happens (metrics.c); every field a relaxed atomic. */
#define METRICS_ROUTES  48 /* at least the route table's rows, plus one for none */
#define METRICS_CODES   16 /* the statuses counted by name, plus one for any other */
#define METRICS_BUCKETS 13 /* the claim latency histogram's finite buckets */
/* The bounds whose refusals are counted (docs/farm.md, "Limits and security"). */
typedef enum {
    REFUSED_MAX_BODY_BYTES,
    REFUSED_MAX_CONNECTIONS_PER_AGENT,
    REFUSED_MAX_CLAIMS_PER_AGENT,
    REFUSED_MAX_QUEUED_BYTES,
    REFUSED_MAX_QUEUED_BYTES_PER_ADDRESS,
    REFUSED_MAX_QUEUED_PAGES,
    REFUSED_MAX_PAGES_PER_ADDRESS,
    REFUSED_MAX_CHALLENGES,
    REFUSED_MAX_CHALLENGES_PER_ADDRESS,
    REFUSED_DEADLINES, /* connections closed past a header, body or anonymous deadline */
    REFUSED_COUNT
} MetricsBound;
typedef struct {
    atomic_ulong http[METRICS_ROUTES][METRICS_CODES];
    atomic_ulong claim_buckets[METRICS_BUCKETS + 1]; /* the last: over every bound */
    atomic_ulong claim_us;                           /* the durations' sum, microseconds */
    atomic_ulong claims_job, claims_none, filed, filings_refused;
    atomic_ulong refused[REFUSED_COUNT];
    atomic_ulong blobs_written, blob_bytes_written;
    atomic_ulong gc_runs, gc_removed, gc_bytes_removed;
    atomic_long gc_kept; /* blobs the latest collection kept (-1: none ran) */
} Metrics;
/* Unfinished runs' comparisons (report.c), each kept until the run's jobs change (a
 * state, a filed bundle), so that views of an unfinished run do not compare it again
 * each: before, two anonymous views that disconnected held both page threads comparing
 * one run over and over. Computed under the lock: views take turns. */
#define INTERIM_RUNS 4
typedef struct {
    pthread_mutex_t lock;
    struct {
        long run;
        char stamp[SHA256_HEX_LEN]; /* what the comparison was made of (report.c) */
        cJSON *report;
    } slot[INTERIM_RUNS];
    unsigned next; /* the slot the next new comparison replaces */
} Interims;

/* One coordinator. Everything it holds is here, none of it in a file's statics, so that
 * one process may hold two servers (tests/c/farm_two_servers.c). */
struct Server {
    Db *db;
    FarmConfig cfg;
    char state[1024];
    int state_fd; /* the state folder, which every path under it is opened from (statedir.c) */
    int blobs_fd, tmp_fd; /* its blobs/ and tmp/ */
    char farm_id[33];     /* the farm's identity (auth_open), named in claims and statements */
    char enrol_digest[SHA256_HEX_LEN], admin_digest[SHA256_HEX_LEN]; /* the tokens' SHA-256 */
    Hub hub;
    pthread_mutex_t report_lock; /* the reporter's (report.c): report_due and its wake-up */
    pthread_cond_t report_cond;
    int report_due;
    pthread_mutex_t filing_lock; /* guards filing[]: jobs whose upload is being filed */
    long filing[MAX_FILING];     /* 0: a free slot; a job is in at most one slot */
    sem_t filers;                /* uploads verifying or writing files at once */
    pthread_mutex_t nonces_lock; /* guards nonces[] (cfg.max_challenges of them) */
    Nonce *nonces;
    AuthCache agents;        /* agents by token (auth.c) */
    RunCache runs;           /* claims' run facts (handlers.c) */
    KeyCache keys;           /* agents' decoded keys (handlers.c) */
    WebSeen seen;            /* when agents were last heard from (web.c) */
    Metrics metrics;         /* what GET /metrics counts (metrics.c) */
    Interims interims;       /* unfinished runs' comparisons (report.c) */
    pthread_mutex_t gc_lock; /* one collection at a time here (gc.c) */
    struct Conns *conns;     /* open connections and their caps (conns.c) */
};

/* --- the log (log.c) -------------------------------------------------------------- */

/* What a log line is about, beside its message: 0, NULL or a negative duration when it
 * has no such field. */
typedef struct {
    const char *level; /* "info" (NULL), "warn", "error" */
    const char *event; /* "request", "enrolled", "run_created", ... */
    long run, job, agent;
    const char *route; /* the route's method and pattern */
    int status;
    double duration_ms;
} LogFields;
/* One log line: "farm: MESSAGE" as text, or a JSON object with F's fields. */
void log_event(const Server *s, const LogFields *f, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* --- metrics (metrics.c) ---------------------------------------------------------- */

/* Counts an answer of STATUS to ROUTE (NULL: none matched). */
void metrics_http(Server *s, const Route *route, int status);
/* Counts a claim's try that took SECONDS and found a job (CLAIMED) or none. */
void metrics_claim(Server *s, double seconds, int claimed);
/* Counts an upload filed (FILED) or refused. */
void metrics_filing(Server *s, int filed);
/* Counts N refusals (or closures) by bound B. */
void metrics_refused(Server *s, MetricsBound b, unsigned long n);
/* Counts a blob written (not one found stored already) of BYTES. */
void metrics_blob_written(Server *s, size_t bytes);
/* Counts a collection (gc_collect's answer DONE). */
void metrics_gc(Server *s, const cJSON *done);
/* GET /metrics: the Prometheus text format (open, or the admin token's with "metrics":
 * "admin"). */
void metrics_route(Server *s, Request *q, Reply *r);

/* --- the config (config.c) -------------------------------------------------------- */

/* Reads the config file PATH into C (defaults for what it leaves out); -1 with E naming
 * the file and the first setting refused. */
int config_load(const char *path, FarmConfig *c, Err *e);

/* --- answers (reply.c) ------------------------------------------------------------ */

/* An error answer: CODE's status and {"error": message, "code", "status"} (farm/proto/api.h
 * has the codes). Returns -1. */
int reply_error(Reply *r, ProtoErrorCode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A JSON answer (R owns JSON; one set before is freed). */
void reply_json(Reply *r, int status, cJSON *json);
/* A 200 of raw bytes (R owns DATA, malloc'd) of the given content type. */
void reply_raw(Reply *r, char *data, size_t len, const char *type);
/* A 200 of the first LEN bytes of the open file FD (R owns it), streamed from disk and
 * hashed as it goes: when they are not SHA's, the answer is cut before its last piece
 * (the client sees fewer bytes than its Content-Length) and the damage is logged. */
void reply_file(Reply *r, int fd, size_t len, const char *sha, const char *type);
/* Frees what R owns. */
void reply_free(Reply *r);

/* --- authentication (auth.c) ------------------------------------------------------ */

/* At start: the config's tokens as digests, and the farm the store belongs to, which
 * must be the one these tokens are for (unless cfg.accept_new_tokens); -1 with E. */
int auth_open(Server *s, Err *e);
/* 0 when Q's token is good for a route that needs NEED (Q->agent filled for an agent);
 * otherwise -1 with the 401 in R. */
int auth_check(Server *s, AuthKind need, Request *q, Reply *r);
/* Empties the cache of agents by token (after a revocation). */
void auth_forget_agents(Server *s);
/* Forgets agent ID's cached tokens (after it enrolled: its old token means nothing). */
void auth_forget_agent(Server *s, long id);

/* --- requests set aside (hub.c) --------------------------------------------------- */

void hub_init(Hub *h);
/* Starts the waker of parked claims and the work pool's threads (for good). */
void hub_start(Server *s);
/* Wakes every long-polling claim (new jobs, requeued jobs). */
void hub_notify(Server *s);
/* 1 once serve is shutting down: long polls answer at once. */
int hub_stopping(Server *s);
/* How many times jobs may have become claimable so far (see hub_park_claim). */
unsigned long hub_generation(Server *s);
/* Parks X, a claim that found nothing, its connection suspended: 1, unless jobs may
 * have become claimable since SEEN (a hub_generation) or serve is stopping: then 0, try
 * again now; -1 when its agent has max_claims_per_agent claims parked (refuse it). */
int hub_park_claim(Server *s, Exchange *x, unsigned long seen);
/* Hands X to its route's pool (work or pages), its connection suspended until the
 * answer is in X->reply: 1; 0 when serve is stopping (nothing may be suspended any more:
 * run it here); -1 when the pool holds its limit already (refuse it). A pool drops the
 * work of a client that has gone before it runs (X->dropped). */
int hub_queue_work(Server *s, Exchange *x);
Parking hub_parking(Server *s, const Exchange *x);
/* Serve is stopping: parked claims answer now and the work pool finishes what it holds,
 * so that nothing is suspended when libmicrohttpd stops. 0 when done within 30 s. */
int hub_settle(Server *s);

/* --- libmicrohttpd (server.c) ----------------------------------------------------- */

/* Listens on S's address with libmicrohttpd's pool; the URL it answers at into URL. */
struct MHD_Daemon *server_start(Server *s, char *url, size_t cap, Err *e);
void server_stop(struct MHD_Daemon *daemon);

/* --- route handlers (handlers.c; the dashboard's are in web_internal.h) ------------ */

void handlers_health(Server *s, Request *q, Reply *r);
void handlers_challenge(Server *s, Request *q, Reply *r);
void handlers_enrol(Server *s, Request *q, Reply *r);
void handlers_revoke(Server *s, Request *q, Reply *r);
void handlers_claim(Server *s, Request *q, Reply *r);
void handlers_heartbeat(Server *s, Request *q, Reply *r);
void handlers_upload(Server *s, Request *q, Reply *r);
void handlers_blob_put(Server *s, Request *q, Reply *r);
void handlers_blob_get(Server *s, Request *q, Reply *r);
void handlers_run_create(Server *s, Request *q, Reply *r);
void handlers_run_get(Server *s, Request *q, Reply *r);
void handlers_run_results(Server *s, Request *q, Reply *r);
void handlers_run_report(Server *s, Request *q, Reply *r);
void handlers_run_cancel(Server *s, Request *q, Reply *r);
void handlers_status(Server *s, Request *q, Reply *r);
void handlers_gc(Server *s, Request *q, Reply *r);

/* --- runs' comparisons (report.c) ------------------------------------------------- */

/* Run RUN's comparison with each cell's worst error/bound ("ratios": {column: {case:
 * ratio}}): the stored one once the run has finished, else compared now; its view into
 * *RUN_VIEW when not NULL. NULL when there is no such run. */
cJSON *report_run(Server *s, long run, cJSON **run_view);
/* Adds to REPORT (compare_results over RESULTS) what its cells hold (report_values.c):
 * per case "decoded" {sha256: values}, per observation whose bits differ "diffs" {column:
 * how}, per cell its "log" and whether it is empty; at most max_decode_bytes read. */
void report_values(Server *s, cJSON *report, const cJSON *results);
/* Starts the reporter, which stores each finished run's comparison once (for good). */
void report_start(Server *s);
/* A run may have finished (a job filed, failed or cancelled): the reporter looks now. */
void report_wake(Server *s);

/* --- the state folder (statedir.c) ------------------------------------------------ */

/* Paths under the state folder, opened from a folder's descriptor DIR one component at a
 * time and never through a symbolic link: the folder REL (made where missing with MAKE),
 * the file REL (its folders made with MAKE_DIRS), a new file REL (O_EXCL: never an
 * existing one) with DATA, synced with SYNC. Each returns -1 with errno on failure. */
int statedir_open_dir(int dir, const char *rel, int make);
int statedir_open_file(int dir, const char *rel, int flags, mode_t mode, int make_dirs);
int statedir_write_new(int dir, const char *rel, const void *data, size_t len, int sync);
/* Replaces NAME in DIR with DATA: written under a random name first, then renamed. */
int statedir_replace(int dir, const char *name, const void *data, size_t len, int sync);
/* The regular file REL under DIR, at most MAX bytes, read whole (malloc'd, NUL-terminated,
 * its size into *LEN); NULL otherwise. */
char *statedir_read(int dir, const char *rel, size_t max, size_t *len);
/* PREFIX and 16 random hex digits: names nobody can plant a link under in advance. */
void statedir_random_name(const char *prefix, char *out, size_t cap);
/* Removes NAME in DIR and everything under it, following no link (0 when absent). */
int statedir_remove(int dir, const char *name);
/* At start: the state folder STATE and its evidence/, tmp/, blobs/ and trash/ must be folders
 * (not links) that others may not write, and CONFIG a file others may not write (a
 * warning when its group may write either, or others may read its tokens). -1 with E
 * saying how to fix it. */
int statedir_check(const char *state, const char *config, Err *e);

/* --- the store on disk (store.c) -------------------------------------------------- */

/* One file of a bundle: its name in the bundle, its bytes and their SHA-256. */
typedef struct {
    const char *name;
    const unsigned char *data;
    size_t len;
    char sha[SHA256_HEX_LEN];
} FileItem;

/* Where blob SHA lives under the state folder: blobs/aa/bb/SHA. */
void store_blob_path(const char *sha, char *out, size_t cap);
/* Stores DATA (whose SHA-256 is SHA) once: nothing when a blob of that name and size is
 * there (0), else written under a random name in tmp/, fsynced (sync "full"), renamed
 * into place and its folder fsynced (1); -1 with E. */
int store_put(Server *s, const char *sha, const void *data, size_t len, Err *e);
/* 1 when the plain file NAME in DIR (no link followed) hashes to SHA, else 0 (other
 * bytes, unreadable, not a plain file): checked before a blob is moved into its name. */
int store_digest_is(int dir, const char *name, const char *sha);
/* A source archive: its row, then its blob. */
int store_blob(Server *s, const char *sha, const void *data, size_t len, Err *e);
/* Opens blob SHA for reading: a regular file with no other hard link, opened from the
 * state folder without following links, so that nothing outside it is ever served; its
 * size into *LEN. -1 when there is none. */
int store_open_blob(const Server *s, const char *sha, size_t *len);
/* Blob SHA's bytes (malloc'd, NUL-terminated) when it is at most MAX bytes, else NULL. */
char *store_read_blob(const Server *s, const char *sha, size_t max, size_t *len);
/* Stores every one of FILES (store_put); 0, or -1 with E. */
int store_files(Server *s, const FileItem *files, size_t n, Err *e);
/* FILES' digests as a JSON array (what a filing's reservation pins), and the manifest of
 * a bundle whose envelope is ENVELOPE: {"envelope", "files": {name: sha256}} (malloc'd). */
char *store_digests(const FileItem *files, size_t n);
char *store_manifest(const char *envelope, const FileItem *files, size_t n);
/* Whether NAME in DIR may be dropped as a dead write's: always without PEERS (other live
 * coordinators), else once older than ten minutes (by its change time). */
int store_droppable(int dir, const char *name, int peers);
/* Drops temp files in tmp/ (all, or with PEERS only the old ones); how many, or -1. */
int store_drop_temps(Server *s, int peers);
/* At start, before anything is served: drop temp files of dead writes, put back blobs a
 * stopped collection had taken, migrate the layout before issue 28 (migrate.c). */
int store_reconcile(Server *s, Err *e);

/* The collector (gc.c): removes every blob nothing names, safely while filings go on
 * here and at other coordinators; {"blobs", "removed", "bytes_removed", "put_back",
 * "temps_removed", "seconds"}, or NULL with E (then nothing named was removed), *BUSY
 * set when another collection in the farm holds the collector's lock. */
cJSON *gc_collect(Server *s, int *busy, Err *e);
/* Puts back the blobs in trash/ that something names, removes the rest (a collection
 * stopped half way), under the collector's lock (left alone, with a word, while another
 * collection holds it); 0, or -1 with E. */
int gc_recover(Server *s, Err *e);

/* A point NAME where the test build of the coordinator (FARM_TEST_PAUSES) waits while
 * its test holds the gate (pause.c); nothing in every other build. */
#ifdef FARM_TEST_PAUSES
void pause_point(const char *name);
#else
static inline void pause_point(const char *name) { (void)name; }
#endif

/* The layout before issue 28 (migrate.c): folders per bundle, the journal, source
 * archives one level deep, migrated to blobs and manifests. 0, or -1 with E. */
int migrate_legacy(Server *s, int peers, Err *e);

#endif
