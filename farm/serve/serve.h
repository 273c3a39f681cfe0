/* serve.h: what the coordinator's HTTP plumbing (server.c), its route handlers
 * (handlers.c) and its file store (store.c) share. */
#ifndef CAIRN_FARM_SERVE_H
#define CAIRN_FARM_SERVE_H

#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>
#include <cjson/cJSON.h>

#include "proto/api.h"
#include "db/db.h"
#include "proto/util.h"

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
    long http_threads; /* libmicrohttpd's pool: every connection's I/O, the short routes */
    long work_threads; /* the work pool: uploads, enrolments, runs, blobs in, pages */
    int sync_full;     /* "sync": "full" (default): acknowledged bundles survive power
                                 loss; "process": they survive the coordinator's crash */
    char store[1024];  /* "": SQLite in the state folder; else a postgresql:// URI */
} FarmConfig;

#define MAX_FILING 256

typedef struct {
    Db *db;
    FarmConfig cfg;
    char state[1024];
    /* Requests set aside without a thread (server.c): long-polling claims and requests
     * queued for the work pool. wake_lock guards them, generation and stopping. */
    pthread_mutex_t wake_lock;
    pthread_cond_t wake;         /* the waker thread's: a sooner deadline, or stopping */
    pthread_cond_t work;         /* the work pool's: a request queued, or stopping */
    unsigned long generation;    /* bumped whenever jobs may have become claimable */
    pthread_mutex_t filing_lock; /* guards filing[]: jobs whose upload is being filed */
    long filing[MAX_FILING];
    int stopping; /* set under wake_lock when serve is shutting down */
    sem_t filers; /* uploads verifying or writing files at once */
} Server;

/* A request as the handlers see it, and the answer they fill in. */
typedef struct {
    const char *method;
    const char *path;
    const char *arg; /* the variable path segment ({id} or {sha}) */
    const char *body;
    size_t len;
    const char *bearer; /* the Authorization: Bearer token, or NULL */
    Agent agent;        /* filled for agent routes */
    double wait_until;  /* a long poll's deadline: 0 before its handler's first call, then
                                kept between calls (see Reply.park) */
} Request;

typedef struct {
    int status;
    cJSON *json; /* JSON answer, or */
    char *raw;   /* raw bytes (malloc'd) with raw_type */
    size_t raw_len;
    const char *raw_type;
    char error[256]; /* for the log when status >= 400 */
    int park;        /* nothing to answer yet: the server sets the request aside, holding no
                 thread, and calls the handler again once jobs may have become claimable
                 (server_notify) or at the request's wait_until. Claims only. */
} Reply;

/* An error answer: CODE's status and {"error": message, "code", "status"} (farm/proto/api.h
 * has the codes). Returns -1. Both live in handlers.c. */
int handlers_reply_error(Reply *r, ProtoErrorCode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void handlers_reply_json(Reply *r, int status, cJSON *json);

/* One request without a socket: the route for its method and path, its token, its
 * body's size, then the handler, all as a connection's request runs them (the API's
 * fuzz target drives the coordinator through it). Q->arg is set while it runs. */
void server_route(Server *s, Request *q, Reply *r);

/* Route handlers (handlers.c). */
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
void handlers_run_cancel(Server *s, Request *q, Reply *r);
void handlers_status(Server *s, Request *q, Reply *r);

/* Empties the cache of agents by token (after an enrolment or a revocation). */
void server_forget_agents(void);

/* Wakes every long-polling claim (new jobs, requeued jobs). */
void server_notify(Server *s);
/* 1 once serve is shutting down: long polls answer at once. */
int server_stopping(Server *s);

/* The store (store.c): blobs by digest, evidence folders filed atomically. */
void store_blob_path(const Server *s, const char *sha, char *out, size_t cap);
int store_blob(Server *s, const char *sha, const void *data, size_t len, Err *e);
/* Writes FILES (name -> bytes) plus the envelope and key into a temp folder, syncs it
 * and renames it to REL under the state folder; an existing REL is an error unless
 * REPLACE (the journal's rewrite after a power loss). */
typedef struct {
    const char *name;
    const unsigned char *data;
    size_t len;
} FileItem;
int store_evidence(Server *s, const char *rel, const FileItem *files, size_t n, int replace,
                   Err *e);
/* After a crash: write journalled folders again, drop temp folders and any evidence
 * folder no filed job points to. */
int store_reconcile(Server *s, Err *e);
/* Syncs the evidence written so far and drops its journal rows; returns how many. */
int store_settle(Server *s);

/* `cairn-farm serve` (argv[0] is the verb, lib/command.h). */
int server_main(int argc, char **argv);

#endif
