/* serve.c: `cairn-farm serve`, the coordinator's verb: its options, the state folder it
 * opens (the store, the evidence reconciled after a crash), the background threads (the
 * reaper here, the waker and the work pool in hub.c), listening (server.c), and a clean
 * stop on SIGINT or SIGTERM. */
#include "serve/serve_internal.h"
#include "serve/conns_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char SERVE_HELP[] =
    "usage: cairn-farm serve --state DIR --config FILE [--listen HOST:PORT] [--check-config]\n"
    "                        [--accept-new-tokens]\n"
    "\n"
    "The store remembers which farm it belongs to (an id, and a fingerprint of the farm's\n"
    "enrolment and admin tokens): a coordinator whose config has other tokens is refused.\n"
    "After changing a farm's tokens on purpose, start once with --accept-new-tokens.\n"
    "--check-config reads FILE, says what is wrong with it (exit 2) or nothing (exit 0),\n"
    "and starts nothing. Every count and span of seconds below has a range; a value\n"
    "outside it is refused by name (docs/farm.md lists each key's range).\n"
    "Runs the coordinator: the HTTP+JSON API (docs/farm.md), the job queue and the\n"
    "evidence store, all kept in DIR (farm.db, blobs/, tmp/, trash/). FILE is JSON:\n"
    "  {\"listen\": \"127.0.0.1:8470\", \"enrol_token\": \"...\", \"admin_token\": \"...\",\n"
    "   \"max_body_bytes\": 67108864, \"max_subjects\": 10000, \"lease_seconds\": 60,\n"
    "   \"max_small_body_bytes\": 65536, \"max_enrol_body_bytes\": 262144,\n"
    "   \"max_json_values\": 200000, \"max_agents\": 10000, \"index_page_rows\": 100,\n"
    "   \"max_path_depth\": 32, \"max_bundle_inodes\": 30000,\n"
    "   \"max_capabilities_bytes\": 65536, \"max_challenges\": 1024,\n"
    "   \"max_challenges_per_address\": 16,\n"
    "   \"max_attempts\": 3, \"claim_wait_max_seconds\": 30, \"sync\": \"full\",\n"
    "   \"max_connections\": 1000, \"max_connections_per_address\": 750,\n"
    "   \"max_anonymous\": 256, \"max_anonymous_per_address\": 64,\n"
    "   \"max_connections_per_agent\": 64, \"max_claims_per_agent\": 8,\n"
    "   \"max_queued_bytes\": 268435456, \"max_queued_bytes_per_address\": 33554432,\n"
    "   \"header_timeout_seconds\": 10, \"body_timeout_seconds\": 300,\n"
    "   \"anonymous_timeout_seconds\": 120, \"idle_timeout_seconds\": 120,\n"
    "   \"agent_cache_seconds\": 2,\n"
    "   \"http_threads\": 4, \"work_threads\": 8, \"page_threads\": 2,\n"
    "   \"max_queued_pages\": 64, \"max_pages_per_address\": 4,\n"
    "   \"max_compare_observations\": 1000000, \"max_decode_bytes\": 67108864,\n"
    "   \"wal_pages\": 1000,\n"
    "   \"store\": \"sqlite\", \"metrics\": \"open\", \"log_format\": \"text\"}\n"
    "store \"sqlite\" (default) keeps the database in DIR/farm.db; \"postgresql://...\" (a\n"
    "libpq URI) keeps it in PostgreSQL, which several coordinators may share along with\n"
    "one DIR (docs/farm.md, \"Several coordinators\").\n"
    "No connection has a thread of its own. http_threads poll threads read and answer\n"
    "every connection and run the short routes (claims, heartbeats, source downloads); a\n"
    "claim with nothing to do is suspended, holding no thread, until jobs may have become\n"
    "claimable or its wait_s runs out. work_threads run what verifies or writes files\n"
    "(uploads, enrolments, runs, blob uploads, the admin's views), two of them verifying\n"
    "or filing at once; page_threads run the dashboard's pages and filed files, at most\n"
    "max_queued_pages held and max_pages_per_address per client, so that pages never hold\n"
    "the threads the farm's work needs.\n"
    "Connections that have shown no token are capped in all and per address (the oldest\n"
    "is closed to make space); headers must be complete within header_timeout_seconds,\n"
    "an anonymous request answered within anonymous_timeout_seconds, a body and its\n"
    "answer within body_timeout_seconds, counted in total time; a connection with a\n"
    "token is closed idle_timeout_seconds after its answer unless its next request has\n"
    "come (one that came is answered, however late it is read); answers kept in memory\n"
    "for slow readers are bounded per address and in all (docs/farm.md, \"Limits and\n"
    "security\").\n"
    "sync \"full\" fsyncs every acknowledged bundle (it survives power loss); \"process\"\n"
    "only guarantees survival of the coordinator's own crash (kill -9), and is faster.\n"
    "Port 0 picks a free port. Once listening it writes DIR/serve.json ({\"url\", \"pid\"}).\n"
    "metrics \"open\" serves GET /metrics (Prometheus' text format) to anyone, \"admin\" only\n"
    "with the admin token; log_format \"json\" writes one JSON object a log line.\n"
    "SIGINT or SIGTERM stops it; kill -9 loses nothing acknowledged.\n";

/* Uploads verifying signatures or writing files at once (see store_files in handlers.c),
 * among the work pool's threads: as many as this machine class has cores. More only adds
 * runnable threads that preempt the short requests; under the load test 2 took the claim
 * p50 from 8 ms to 2 ms. The rest of the work pool parses bodies and waits for the group
 * commit's fsync, which costs no CPU. */
#define FILERS 2

/* Background work, off every request's path: connections past their deadlines, expired
 * leases and WAL checkpoints. */
static void *reaper(void *arg) {
    Server *s = arg;
    for (;;) {
        timing_sleep_ms(200);
        /* tests hold a pass at either end: test_clock_steps.py (with "reaped"), and
         * test_idle_connections.py, which lets deadlines pass before a sweep */
        pause_point("reaping");
        metrics_refused(s, REFUSED_DEADLINES, (unsigned long)conns_sweep(s->conns));
        if (db_reap(s->db, s->cfg.max_attempts, s->cfg.lease_seconds) > 0) {
            hub_notify(s);
            report_wake(s); /* a job failed as agent_lost may have ended its run */
        }
        db_checkpoint(s->db);
        pause_point("reaped"); /* tests/farm/test_clock_steps.py: a whole pass ran */
    }
    return NULL;
}

Server *serve_open(const char *state, const FarmConfig *cfg, Err *e) {
    util_json_watch(); /* a comparison knows when cJSON left a node out */
    Server *s = calloc(1, sizeof *s);
    if (!s) {
        err_set(e, "out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    snprintf(s->state, sizeof s->state, "%s", state);
    hub_init(&s->hub);
    pthread_mutex_init(&s->filing_lock, NULL);
    pthread_mutex_init(&s->report_lock, NULL);
    pthread_mutex_init(&s->nonces_lock, NULL);
    pthread_mutex_init(&s->agents.lock, NULL);
    s->agents.lifetime = cfg->agent_cache_seconds;
    pthread_mutex_init(&s->runs.lock, NULL);
    pthread_mutex_init(&s->keys.lock, NULL);
    pthread_mutex_init(&s->seen.lock, NULL);
    pthread_mutex_init(&s->gc_lock, NULL);
    pthread_mutex_init(&s->interims.lock, NULL);
    s->conns = conns_new();
    s->nonces = calloc((size_t)cfg->max_challenges + 1, sizeof *s->nonces);
    if (!s->conns || !s->nonces) {
        err_set(e, "out of memory");
        free(s->conns);
        free(s->nonces);
        free(s);
        return NULL;
    }
    timing_cond_init(&s->report_cond); /* the reporter's second: monotonic */
    sem_init(&s->filers, 0, FILERS);
    char path[1200];
    snprintf(path, sizeof path, "%s/farm.db", s->state);
    s->state_fd = s->blobs_fd = s->tmp_fd = -1;
    if (fs_mkdirs(s->state, e) == 0 &&
        (s->state_fd = open(s->state, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        err_set(e, "cannot open the state folder %s: %s", s->state, strerror(errno));
    if (s->state_fd >= 0 && ((s->blobs_fd = statedir_open_dir(s->state_fd, "blobs", 1)) < 0 ||
                             (s->tmp_fd = statedir_open_dir(s->state_fd, "tmp", 1)) < 0))
        err_set(e, "cannot open %s/blobs and %s/tmp: %s", s->state, s->state, strerror(errno));
    else if (s->state_fd >= 0) s->db = db_open(s->cfg.store[0] ? s->cfg.store : path, e);
    if (s->db) db_set_sync(s->db, s->cfg.sync_full);
    if (s->db) db_set_wal_pages(s->db, s->cfg.wal_pages);
    if (s->db && auth_open(s, e) == 0 && store_reconcile(s, e) == 0) return s;
    free(s); /* an open store stays (its connections, a PostgreSQL life lock): the caller exits */
    return NULL;
}

typedef struct {
    const char *state, *config, *listen;
    int check_only, accept_new_tokens;
} ServeArgs;

/* -1 when the arguments are good; otherwise the exit status (0 after --help). */
static int parse_args(int argc, char **argv, ServeArgs *a) {
    *a = (ServeArgs){0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(SERVE_HELP, stdout);
            return 0;
        } else if (!strcmp(argv[i], "--state") && i + 1 < argc) {
            a->state = argv[++i];
        } else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
            a->config = argv[++i];
        } else if (!strcmp(argv[i], "--listen") && i + 1 < argc) {
            a->listen = argv[++i];
        } else if (!strcmp(argv[i], "--check-config")) {
            a->check_only = 1;
        } else if (!strcmp(argv[i], "--accept-new-tokens")) {
            a->accept_new_tokens = 1;
        } else {
            fprintf(stderr, "cairn-farm serve: unknown argument %s (see --help)\n", argv[i]);
            return 2;
        }
    }
    if (!a->state) {
        fprintf(stderr, "cairn-farm serve: --state DIR is required (see --help)\n");
        return 2;
    }
    return -1;
}

/* Writes STATE/serve.json: where this coordinator answers, and its process id. */
static void write_info(const Server *s, const char *url) {
    cJSON *info = cJSON_CreateObject();
    cJSON_AddStringToObject(info, "url", url);
    cJSON_AddNumberToObject(info, "pid", (double)getpid());
    char *text = cJSON_Print(info);
    if (statedir_replace(s->state_fd, "serve.json", text, strlen(text), 0) != 0)
        fprintf(stderr, "cairn-farm serve: cannot write %s/serve.json: %s\n", s->state,
                strerror(errno));
    free(text);
    cJSON_Delete(info);
}

/* Runs the coordinator on S until SIGINT or SIGTERM (blocked in STOP); the exit status. */
static int run(Server *s, sigset_t *stop) {
    Err e = {{0}};
    char url[256];
    pthread_t t;
    pthread_create(&t, NULL, reaper, s); /* this thread and the hub's run until exit */
    pthread_detach(t);
    hub_start(s);
    report_start(s);
    struct MHD_Daemon *daemon = server_start(s, url, sizeof url, &e);
    if (!daemon) {
        fprintf(stderr, "cairn-farm serve: %s\n", e.msg);
        return 1;
    }
    write_info(s, url);
    log_event(s, &(LogFields){.event = "listening", .duration_ms = -1},
              "listening on %s, state in %s", url, s->state);
    int sig = 0;
    sigwait(stop, &sig);
    log_event(s, &(LogFields){.event = "stopping", .duration_ms = -1}, "stopping (signal %d)", sig);
    if (hub_settle(s) != 0) {
        /* libmicrohttpd cannot stop with a request suspended: leave it to exit */
        log_event(s, &(LogFields){"error", "stopping", .duration_ms = -1},
                  "the work pool did not finish within 30 s; exiting");
        return 1;
    }
    server_stop(daemon);
    db_checkpoint_final(s->db); /* nothing is left in a WAL that outlives the process */
    return 0;
}

int serve_main(int argc, char **argv) {
    ServeArgs a;
    int status = parse_args(argc, argv, &a);
    if (status >= 0) return status;
    FarmConfig cfg;
    Err e = {{0}};
    if (config_load(a.config, &cfg, &e) != 0) {
        fprintf(stderr, "cairn-farm serve: %s\n", e.msg);
        return 2;
    }
    if (a.check_only) return 0;
    if (statedir_check(a.state, a.config, &e) != 0) {
        fprintf(stderr, "cairn-farm serve: %s\n", e.msg);
        return 2;
    }
    if (a.listen) snprintf(cfg.listen, sizeof cfg.listen, "%s", a.listen);
    cfg.accept_new_tokens = a.accept_new_tokens;
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
    Server *s = serve_open(a.state, &cfg, &e);
    if (!s) {
        fprintf(stderr, "cairn-farm serve: %s\n", e.msg);
        return 1;
    }
    return run(s, &stop);
}
