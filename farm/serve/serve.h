/* serve.h: the coordinator (`cairn-farm serve`) as the rest of the farm sees it: its
 * configuration, the `serve` verb (farm/main.c), and a server without a socket whose
 * requests run through the same routing, authentication and handlers as a connection's
 * (the API's fuzz target, tests/fuzz/fuzz_farm.c). What the files of serve/ share with
 * each other is in serve/serve_internal.h. */
#ifndef CAIRN_FARM_SERVE_H
#define CAIRN_FARM_SERVE_H

#include <stddef.h>
#include <cjson/cJSON.h>

#include "db/db.h"
#include "proto/util.h"

/* The config file's settings (docs/farm.md, "Limits and security"); config.c holds their
 * defaults and bounds in one table. */
typedef struct {
    char listen[128]; /* host:port, port 0 picks a free one */
    char enrol_token[256];
    char admin_token[256];
    long max_body_bytes;
    long max_subjects;    /* per bundle (fields.h has the other bounds) */
    long max_connections; /* connection limits and timeouts: see conns_internal.h */
    long max_connections_per_address;
    long max_anonymous;
    long max_anonymous_per_address;
    double header_timeout_seconds;
    double body_timeout_seconds;
    double lease_seconds;
    long max_attempts;
    double claim_wait_max_seconds;
    double anonymous_timeout_seconds;  /* an anonymous request, headers to answer sent */
    double idle_timeout_seconds;       /* a connection with a token, between requests */
    double agent_cache_seconds;        /* an agent read from the store, trusted this long */
    long max_queued_bytes;             /* answers kept in memory for slow readers, in all */
    long max_queued_bytes_per_address; /* ... and for one client address */
    long http_threads;          /* libmicrohttpd's pool: every connection's I/O, the short routes */
    long work_threads;          /* the work pool: uploads, enrolments, runs, blobs in, views */
    long page_threads;          /* the page pool: the dashboard and filed files */
    long max_queued_pages;      /* page requests queued or running, in all */
    long max_pages_per_address; /* ... and from one client address */
    long max_compare_observations;   /* the work of one comparison (compare.h) */
    long max_decode_bytes;           /* raw bits one comparison decodes (report_values.c) */
    long max_connections_per_agent;  /* connections that have shown one agent's token */
    long max_claims_per_agent;       /* long polls one agent may have parked */
    long max_capabilities_bytes;     /* an agent's capabilities, as JSON text */
    long max_path_depth;             /* folders in a bundle's file names */
    long max_bundle_inodes;          /* files and folders one bundle may make */
    long max_challenges;             /* enrolment challenges outstanding, in all */
    long max_challenges_per_address; /* ... and from one client address */
    long wal_pages;                  /* SQLite's WAL is cut back to this many pages */
    long max_small_body_bytes;       /* claims, heartbeats, challenges, admin verbs */
    long max_enrol_body_bytes;       /* enrolments */
    long max_json_values;            /* values one request's JSON body may hold */
    long max_agents;                 /* live agents the enrolment token may make */
    long index_page_rows;            /* runs and machines on one page of the index */
    int sync_full;                   /* "sync": "full" (default): acknowledged bundles survive power
                                 loss; "process": they survive the coordinator's crash */
    char store[1024];                /* "": SQLite in the state folder; else a postgresql:// URI */
    int accept_new_tokens;           /* --accept-new-tokens: the store's farm changed its tokens */
    int metrics_admin;               /* "metrics": "admin": GET /metrics needs the admin token */
    int log_json;                    /* "log_format": "json": one JSON object a log line */
} FarmConfig;

/* Every setting at its default (config.c's table); the tokens empty. */
void serve_config_defaults(FarmConfig *c);

/* A coordinator: its config, store and state folder, and the requests it holds. */
typedef struct Server Server;

/* A request as the handlers see it, and the answer they fill in. */
typedef struct {
    const char *method;
    const char *path;
    const char *arg; /* the variable path segment ({id} or {sha}) */
    const char *body;
    size_t len;
    const char *bearer; /* the Authorization: Bearer token, or NULL */
    const char *peer;   /* the client's address as text, or NULL (no socket: the fuzz target) */
    const char *query;  /* the URL's arguments, "key\0value\0" pairs ending in "\0", or NULL */
    Agent agent;        /* filled for agent routes */
    double wait_until;  /* a long poll's deadline: 0 before its handler's first call, then
                                kept between calls (see Reply.park) */
} Request;

typedef struct {
    int status;
    cJSON *json; /* JSON answer, or */
    char *raw;   /* raw bytes (malloc'd) with raw_type, or */
    size_t raw_len;
    const char *raw_type;
    int file;        /* an open file's descriptor + 1 (0: none), streamed from disk as the */
    size_t file_len; /* client reads (never held in memory), its first file_len bytes, */
    char file_sha[SHA256_HEX_LEN]; /* which must have this digest (or the answer is cut) */
    char error[256];               /* for the log when status >= 400 */
    int park; /* nothing to answer yet: the server sets the request aside, holding no
                 thread, and calls the handler again once jobs may have become claimable
                 (hub_notify) or at the request's wait_until. Claims only. */
} Reply;

/* Opens a coordinator on the state folder STATE (made when missing) with CFG: the store
 * (CFG's, or STATE/farm.db), the evidence store reconciled after a crash. No thread is
 * started and nothing listens (serve_main does that). NULL with E set on failure. */
Server *serve_open(const char *state, const FarmConfig *cfg, Err *e);

/* One request without a socket: the route for its method and path, its token, its
 * body's size, then the handler, all as a connection's request runs them. Q->arg is set
 * while it runs; a claim that would wait answers 204 at once. */
void serve_route(Server *s, Request *q, Reply *r);

/* `cairn-farm serve` (argv[0] is the verb, lib/command.h). */
int serve_main(int argc, char **argv);

#endif
