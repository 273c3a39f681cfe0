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

/* What a lookup returns when the store itself failed (a PostgreSQL backend terminated,
 * the server restarting): nothing is known, which is not an absence. The API answers it
 * 503 store_unavailable, and agents retry. */
#define DB_UNAVAILABLE (-9)
/* A token that was a live agent's until its key enrolled again (db_agent_by_token). */
#define DB_SUPERSEDED (-8)

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
/* TO becomes a copy of FROM (its capabilities shared): 0, or -1 with TO zeroed when out of
 * memory. */
int db_agent_copy(Agent *to, const Agent *from);
void db_job_free(Job *j);

/* Agents: enrol by public key (the same key re-enrols the same agent with a new token
 * and fresh capabilities). Tokens are stored only as their SHA-256. */
typedef struct {
    const char *name, *keyid, *public_pem, *caps_json, *token_hash;
} DbEnrolment;
/* 0 with the agent's id in *ID; -2 a revoked key, -3 a name another key holds, -1 (E). */
int db_agent_enrol(Db *db, const DbEnrolment *a, long *id, Err *e);
/* 1 found (OUT filled), 0 no live agent has the token, DB_SUPERSEDED (it was the live
 * agent's last token before its key enrolled again: another process holds the key),
 * DB_UNAVAILABLE. */
int db_agent_by_token(Db *db, const char *token_hash, Agent *out);
/* The public key (PEM, malloc'd) enrolled for agent ID, revoked or not; NULL when there
 * is no such agent or the store failed. */
char *db_agent_pem(Db *db, long id);
/* Whether key KEYID may enrol while at most MAX agents may be live: 1 (a key enrolled
 * before, or fewer than MAX live agents), 0 (MAX live agents already), DB_UNAVAILABLE. */
int db_enrol_allowed(Db *db, const char *keyid, long max);
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

/* Who started a run and from what (cairn-farm submit --submitter/--commit/--branch, the
 * last two read from git when the source is a checkout): each may be NULL. */
typedef struct {
    const char *submitter, *commit, *branch;
} RunMeta;
/* Runs: the jobs array holds {cell_id, cell} objects made by the matrix expansion. The
 * run's matrix id (the first 16 hex digits of its canonical text's SHA-256, which its
 * badge is named by) is stored with it. */
typedef struct {
    const char *source_sha;
    const cJSON *matrix, *cases, *jobs;
    const RunMeta *meta;
} DbRun;
long db_run_create(Db *db, const DbRun *run, Err *e);
int db_run_cancel(Db *db, long run_id);

/* Claims the first queued job AGENT can run; 1 when claimed, 0 when none fits, -1 when
 * the store says AGENT is revoked (the statement checks it: a coordinator's cache of
 * agents may be a moment behind a revocation made at another). */
int db_claim(Db *db, const Agent *agent, double lease_s, Job *out);
/* Extends the lease; returns 0 ok, 1 cancelled, -1 when the lease is not this agent's,
 * DB_UNAVAILABLE. */
int db_heartbeat(Db *db, long job_id, long agent_id, double lease_s, const char *progress,
                 double *expires);
/* Returns the number of jobs whose lease ran out (requeued or failed as agent_lost),
 * plus 1 when another coordinator said that jobs may have become claimable; on a
 * shared store it also renews this coordinator's sign of life. Leases are kept on
 * timing_steady_seconds(), and one ending over LEASE_S from now is cut to LEASE_S. */
int db_reap(Db *db, int max_attempts, double lease_s);
/* 1 found (OUT filled), 0 no such job, DB_UNAVAILABLE. */
int db_job_get(Db *db, long job_id, Job *out);
/* Marks a running job of AGENT done, its bundle filed under the evidence path
 * EVIDENCE_PATH (evidence/<version>/<run>/<machine>/<cell>: the name its files are
 * served and exported under), whose reservation (db_filing_reserve) this coordinator
 * must hold: it is dropped in the same commit. MANIFEST is the bundle as filed
 * ({"envelope": DSSE text, "files": {name: sha256}}, JSON: the files are blobs in the
 * store by content), RESULT the predicate's test result (PASSED, WARNED, FAILED or
 * NULL). 0 ok, or why not: DB_DONE_MOVED_ON (the job is no longer running under this
 * agent's lease), DB_DONE_REVOKED (the agent was revoked), DB_DONE_NOT_OURS (another
 * coordinator took the reservation over), DB_DONE_FAILED (the commit failed). */
enum { DB_DONE_MOVED_ON = -1, DB_DONE_REVOKED = -2, DB_DONE_NOT_OURS = -3, DB_DONE_FAILED = -4 };
typedef struct {
    long job_id, agent_id;
    const char *bundle_sha, *evidence_path, *predicate_json, *manifest, *result;
} DbFiling;
int db_job_done(Db *db, const DbFiling *f);
/* What GET /metrics reads from the store: jobs by state (queued, running, done, failed,
 * cancelled), runs by state, agents enrolled and revoked, filed bundles, source archives
 * and their bytes, and the waits for a pooled connection since start. */
typedef struct {
    long jobs[5];
    long runs_active, runs_finished, runs_cancelled;
    long agents, agents_revoked;
    long bundles, sources, source_bytes;
    unsigned long pool_waits;
    double pool_wait_seconds;
} DbMetrics;
/* The job states DbMetrics.jobs counts, in its order. */
extern const char *const db_job_states[5];
/* 0 with OUT filled, or -1 when the store did not answer. */
int db_metrics(Db *db, DbMetrics *out);
/* Reserves the evidence path REL for this coordinator's filing of JOB (db_peers.c),
 * pinning the blobs DIGESTS (a JSON array of SHA-256s) against the collector until the
 * job's row commits or the reservation is released: 1 when it is this coordinator's now
 * (new, or taken over from a coordinator proven gone), 0 when a live coordinator holds
 * it, -1 with E when the store refused to write (disk full, a read-only state folder,
 * the store gone: a 5xx to answer, never a refusal). Only the holder commits a manifest
 * for REL. */
typedef struct {
    const char *rel;
    long job;
    const char *digests;
} DbReserve;
int db_filing_reserve(Db *db, const DbReserve *w, Err *e);
/* Gives REL's reservation back (a filing that failed); -1 when it was not held. */
int db_filing_release(Db *db, const char *rel);
/* Drops the reservations of coordinators proven gone (at start). */
void db_peers_forget_dead(Db *db);
/* Whether other coordinators may share the store; this coordinator's id (host-pid);
 * how many other coordinators are alive (db_peers.c: holding their life lock). */
int db_shared(const Db *db);
const char *db_coordinator(const Db *db);
int db_peers_alive(Db *db);
/* One collection at a time across the farm (serve/gc.c): the collector's lock, held by
 * one process among all those sharing the store (on PostgreSQL a session advisory lock on
 * a connection the holder keeps, on SQLite an flock beside the database file), released
 * by db_collector_unlock or by the holder's death. 1 taken, 0 another process holds it,
 * -1 the store failed. Not reentrant: a process's threads take turns outside it. */
int db_collector_lock(Db *db);
void db_collector_unlock(Db *db);
/* Whether the store names blob SHA now (a manifest, a pin or a source archive's row), read
 * afresh: 1 yes, 0 no, -1 the statement failed (then it must be kept). */
int db_blob_named(Db *db, const char *sha);
/* Copies the WAL back into the database (passive: never waits for, or blocks, a writer);
 * the final one, as the coordinator stops, waits for writers and empties the WAL. */
void db_checkpoint(Db *db);
void db_checkpoint_final(Db *db);
/* SQLite: once checkpointed, the WAL is cut back to PAGES pages when it starts over (it
 * otherwise keeps the size of its longest stretch). */
void db_set_wal_pages(Db *db, long pages);

/* Views for the client verbs (malloc'd cJSON). */
cJSON *db_run_view(Db *db, long run_id);
cJSON *db_run_results(Db *db, long run_id);
cJSON *db_status_view(Db *db);
/* The dashboard's index, one page of it: {"runs": at most LIMIT runs with an id below
 * RUNS_BEFORE (0: the newest), newest first, "agents": at most LIMIT live (not revoked)
 * agents with an id above AGENTS_AFTER, oldest first}; each row as db_status_view's. */
cJSON *db_index_view(Db *db, long runs_before, long agents_after, int limit);
/* Filed bundles (db_evidence.c). The manifest of the bundle filed under evidence path
 * REL (owned JSON), or NULL when no done job has one there. */
cJSON *db_evidence_manifest(Db *db, const char *rel);
/* Calls EACH for every blob the store refers to, read in one statement (so one moment's
 * view): KIND 'm' with a filed manifest's JSON text, 'p' with a reservation's pinned
 * digests (a JSON array), 'b' with a source archive's SHA-256. 0, or -1 when the
 * statement failed (then nothing may be collected). */
int db_blob_refs(Db *db, void (*each)(void *ctx, char kind, const char *text), void *ctx);
/* The layout before issue 28 (a folder per bundle): done jobs filed there and not yet
 * migrated, oldest first from after job AFTER, at most LIMIT: [{"job", "evidence"}]; and
 * its journal rows
 * (sync "full" wrote a folder's files there until the file system had synced them):
 * [{"job", "evidence", "files": {name: base64}}]. */
cJSON *db_legacy_filed(Db *db, long after, int limit);
cJSON *db_legacy_journal(Db *db);
/* Migrates the done job filed under REL: its MANIFEST is stored unless it has one,
 * under REL's reservation (taken by the caller with db_filing_reserve, dropped here),
 * and REL's journal rows go, in one durable commit (with MANIFEST NULL only the rows
 * go). 0, or -1 when the commit failed. */
int db_legacy_migrate(Db *db, const char *rel, const char *manifest);
/* What is filed under REL: 1 a done job with its manifest, 0 a done job not yet
 * migrated, -1 no done job. */
int db_evidence_state(Db *db, const char *rel);
/* Other agents that held one machine name (each revoked before the next enrolled) that
 * its page lists, newest first. */
#define DB_MACHINE_HOLDERS 8
/* The machine named NAME as its page shows it (db_evidence.c): {"agent": row (the live
 * one, else the latest enrolled), "jobs": its latest LIMIT jobs newest first, "failures":
 * its latest LIMIT failed jobs or bundles whose result is FAILED, "lost": leases it lost,
 * "counts": [{state, n}], "previous": [row with "held": {jobs, failures, lost, counts}]
 * for the other agents that held NAME}: each list that agent's alone, by its id. NULL
 * when no agent has that name. */
cJSON *db_machine_view(Db *db, const char *name, int limit);
/* Runs' comparisons, kept once final (db_report.c; serve/report.c computes them). Runs
 * whose jobs have all finished and whose comparison is not stored, oldest first (at most
 * LIMIT): [id]. */
cJSON *db_runs_unreported(Db *db, int limit);
/* Stores run RUN's REPORT and SUMMARY (JSON texts) and its cases' history ROWS ([{"case",
 * ...}], one per case) once: a second store of the same run changes nothing. */
int db_report_put(Db *db, long run, const char *summary, const char *report, const cJSON *rows);
/* What a stored comparison holds: 2 since issue 28 (values decoded, distances). Stored
 * comparisons of an older version are dropped at start, and the reporter compares those
 * runs once more; returns how many. */
#define DB_REPORT_VERSION 2
int db_reports_outdated_drop(Db *db);
/* RUN's stored report, or NULL. */
cJSON *db_report_get(Db *db, long run);
/* {"ID": summary} for the stored comparisons of runs FIRST to LAST. */
cJSON *db_report_summaries(Db *db, long first, long last);
/* CASE's stored history rows, oldest run first: [{"run", "row"}]. */
cJSON *db_case_history(Db *db, const char *case_path);
/* The newest LIMIT runs with a stored comparison, newest first: [{"id", "source_sha",
 * "matrix_id", "created_at", "commit", "branch", "submitter"}]; and the stored history
 * rows of runs FIRST to LAST: [{"run", "case", "row"}]. What the grid across runs reads. */
cJSON *db_recent_reported(Db *db, int limit);
cJSON *db_history_rows(Db *db, long first, long last);
/* The newest run of matrix MATRIX_ID with a stored comparison: {"run", "summary"}, or
 * NULL (its badge). */
cJSON *db_matrix_latest(Db *db, const char *matrix_id);
/* Run id and cases for a job's claim answer (cases as a JSON array, owned). */
int db_run_of_job(Db *db, long run_id, char source_sha[SHA256_HEX_LEN], cJSON **cases,
                  double *timeout_s);

#endif
