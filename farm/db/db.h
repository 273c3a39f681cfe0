/* db.h: the coordinator's store: agents, source blobs, runs, jobs and their events, in
 * SQLite (a file, the default) or PostgreSQL (which several coordinators may share).
 * Every function borrows a connection itself; callers never lock.
 * Job states: queued -> running -> done | failed | cancelled (running -> queued when a
 * lease runs out and attempts remain: each such loss is an agent_lost event). */
#ifndef CAIRN_FARM_DB_H
#define CAIRN_FARM_DB_H

#include <stdatomic.h>

#include <cjson/cJSON.h>
#include "proto/util.h"

typedef struct Db Db;

/* An agent's capabilities, parsed once and shared, read-only, by every copy of the
 * agent (the agent cache's and each request's: a thousand long polls of one agent hold
 * one copy). */
typedef struct {
    cJSON *json;
    atomic_int refs;
} AgentCaps;

typedef struct {
    long id;
    char name[129];
    char keyid[SHA256_HEX_LEN];
    char *public_pem; /* malloc'd */
    AgentCaps *caps;  /* shared: db_agent_copy takes a reference, db_agent_free drops one */
    int revoked;
} Agent;

typedef struct {
    long id, run_id, agent_id;
    int attempt;
    char state[16];
    char cell_id[160];
    cJSON *cell; /* owned: compiler, sanitizer, mode, repeat, labels */
    double lease_expires;
    char bundle_sha[SHA256_HEX_LEN];
} Job;

/* WHERE is a postgresql:// (or postgres://) connection URI, or else an SQLite file. */
Db *db_open(const char *where, Err *e);
void db_close(Db *db);
/* 1: acknowledged commits survive power loss (fsync); 0: they survive kill -9 only. */
void db_set_sync(Db *db, int full);
void db_agent_free(Agent *a);
/* TO becomes a copy of FROM (its capabilities shared). */
void db_agent_copy(Agent *to, const Agent *from);
void db_job_free(Job *j);

/* Agents: enrol by public key (the same key re-enrols the same agent with a new token
 * and fresh capabilities). Tokens are stored only as their SHA-256. */
int db_agent_enrol(Db *db, const char *name, const char *keyid, const char *public_pem,
                   const char *caps_json, const char *token_hash, long *id, Err *e);
int db_agent_by_token(Db *db, const char *token_hash, Agent *out);
int db_agent_revoke(Db *db, long id);

/* The farm a store belongs to: an id made once, and a fingerprint of its enrolment and
 * admin tokens (salted and stretched: serve/auth.c), so that a coordinator configured for
 * another farm does not join this one's database. */
typedef struct {
    char id[33];                 /* 32 hex digits */
    char salt[33];               /* 32 hex digits */
    char tokens[SHA256_HEX_LEN]; /* the fingerprint, 64 hex digits */
} FarmIdentity;
/* Stores FRESH as the store's identity unless it has one already; the one it has into
 * *STORED. */
int db_farm_identity(Db *db, const FarmIdentity *fresh, FarmIdentity *stored);
/* The farm's tokens changed on purpose: TOKENS is their new fingerprint. */
int db_farm_tokens(Db *db, const char *tokens);

int db_blob_add(Db *db, const char *sha, long size);
int db_blob_exists(Db *db, const char *sha, long *size);

/* Runs: the jobs array holds {cell_id, cell} objects made by the matrix expansion. */
long db_run_create(Db *db, const char *source_sha, const cJSON *matrix, const cJSON *cases,
                   const cJSON *jobs, Err *e);
int db_run_cancel(Db *db, long run_id);

/* Claims the first queued job AGENT can run; 1 when claimed, 0 when none fits, -1 when
 * the store says AGENT is revoked (the statement checks it: a coordinator's cache of
 * agents may be a moment behind a revocation made at another). */
int db_claim(Db *db, const Agent *agent, double lease_s, Job *out);
/* Extends the lease; returns 0 ok, 1 cancelled, -1 when the lease is not this agent's. */
int db_heartbeat(Db *db, long job_id, long agent_id, double lease_s, const char *progress,
                 double *expires);
/* Returns the number of jobs whose lease ran out (requeued or failed as agent_lost),
 * plus 1 when another coordinator said that jobs may have become claimable; on a
 * shared store it also renews this coordinator's sign of life. */
int db_reap(Db *db, int max_attempts);
int db_job_get(Db *db, long job_id, Job *out);
/* Marks a running job of AGENT done, its bundle filed in EVIDENCE_PATH, whose
 * reservation (db_filing_reserve) this coordinator must hold: it is dropped in the same
 * commit. 0 ok, or why not: DB_DONE_MOVED_ON (the job is no longer running under this
 * agent's lease), DB_DONE_REVOKED (the agent was revoked), DB_DONE_NOT_OURS (another
 * coordinator took the reservation over: the folder is not this filing's any more),
 * DB_DONE_FAILED (the commit failed). JOURNAL, when not NULL, is the filed folder's
 * files ({name: base64}, JSON) committed with the row, so that the folder can be
 * written again after a power loss (see db_settle). */
enum { DB_DONE_MOVED_ON = -1, DB_DONE_REVOKED = -2, DB_DONE_NOT_OURS = -3, DB_DONE_FAILED = -4 };
int db_job_done(Db *db, long job_id, long agent_id, const char *bundle_sha,
                const char *evidence_path, const char *predicate_json, const char *journal);
/* Reserves the evidence folder REL for this coordinator's filing of JOB (db_peers.c):
 * 1 when it is this coordinator's now (new, or taken over from a coordinator proven
 * gone), 0 when a live coordinator holds it. Only the holder renames a folder into
 * REL or removes one there. */
int db_filing_reserve(Db *db, const char *rel, long job);
/* Gives REL's reservation back (a filing that failed); -1 when it was not held. */
int db_filing_release(Db *db, const char *rel);
/* Drops the reservations of coordinators proven gone (at start). */
void db_peers_forget_dead(Db *db);
/* Journal rows not yet settled, this coordinator's and those of coordinators that are
 * gone (which become its own): [{"evidence": REL, "files": {name: base64}}]. */
cJSON *db_unsettled(Db *db);
/* Calls SYNC_FILES (which makes every folder written so far durable, 0 on success) and
 * then drops the journal rows committed before it; returns how many. */
int db_settle(Db *db, int (*sync_files)(void *ctx), void *ctx);
/* Whether other coordinators may share the store; this coordinator's id (host-pid);
 * how many other coordinators are alive (db_peers.c: holding their life lock). */
int db_shared(const Db *db);
const char *db_coordinator(const Db *db);
int db_peers_alive(Db *db);
/* Copies the WAL back into the database (passive: never waits for, or blocks, a writer). */
void db_checkpoint(Db *db);

/* Views for the client verbs (malloc'd cJSON). */
cJSON *db_run_view(Db *db, long run_id);
cJSON *db_run_results(Db *db, long run_id);
cJSON *db_status_view(Db *db);
/* Evidence folders of filed bundles, for reconciling the store after a crash. */
cJSON *db_evidence_paths(Db *db);
/* Whether a filed (done) job points to the evidence folder REL. */
int db_evidence_filed(Db *db, const char *rel);
/* Runs' comparisons, kept once final (db_report.c; serve/report.c computes them). Runs
 * whose jobs have all finished and whose comparison is not stored, oldest first (at most
 * LIMIT): [id]. */
cJSON *db_runs_unreported(Db *db, int limit);
/* Stores run RUN's REPORT and SUMMARY (JSON texts) and its cases' history ROWS ([{"case",
 * ...}], one per case) once: a second store of the same run changes nothing. */
int db_report_put(Db *db, long run, const char *summary, const char *report, const cJSON *rows);
/* RUN's stored report, or NULL. */
cJSON *db_report_get(Db *db, long run);
/* {"ID": summary} for the stored comparisons of runs FIRST to LAST. */
cJSON *db_report_summaries(Db *db, long first, long last);
/* CASE's stored history rows, oldest run first: [{"run", "row"}]. */
cJSON *db_case_history(Db *db, const char *case_path);
/* Run id and cases for a job's claim answer (cases as a JSON array, owned). */
int db_run_of_job(Db *db, long run_id, char source_sha[SHA256_HEX_LEN], cJSON **cases,
                  double *timeout_s);

#endif
