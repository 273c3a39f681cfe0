/* db.c: the coordinator's store (see db.h), written once over a back end
 * (db_backend_internal.h): SQLite in a file under the state folder (db_sqlite.c, the
 * default) or PostgreSQL (db_pg.c, "store": "postgresql://..."), which several
 * coordinators may share; db_open.c picks one. Every statement here is spelled so that
 * both read it ($N parameters, RETURNING, ON CONFLICT).
 *
 * Acknowledging calls (filed bundles, enrolments, runs, blobs) borrow their connection
 * as durable: the back end makes their commits durable before the answer. Claims,
 * heartbeats and lease bookkeeping are not: after a power loss they may roll back,
 * which only means a lease runs out again. Job states and the claim never depend on
 * which coordinator answers: every change is one statement or one transaction, and a
 * claim locks the rows it reads (FOR UPDATE SKIP LOCKED on PostgreSQL). */
#include "db/db_backend_internal.h"

#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "proto/api.h"

void db_init_common(Db *db) {
    assert(db->be && db->be->acquire && db->be->query); /* the back end set its table */
    char host[64] = "host";
    gethostname(host, sizeof host - 1);
    snprintf(db->coordinator, sizeof db->coordinator, "%s-%ld", host, (long)getpid());
    pthread_mutex_init(&db->qlock, NULL);
    pthread_cond_init(&db->committed, NULL);
    if (db->be->enlist) db->be->enlist(db); /* after the id: the others see it alive */
}

void db_close(Db *db) {
    if (db) db->be->close(db);
}

void db_set_sync(Db *db, int full) { db->sync_full = full; }
int db_shared(const Db *db) { return db->be->shared; }
const char *db_coordinator(const Db *db) { return db->coordinator; }

/* The schema both back ends create; KEY is the type of an id the store assigns. */
char *db_schema(const char *key) {
    static const char fmt[] =
        "CREATE TABLE IF NOT EXISTS agents(id %1$s, name TEXT NOT NULL,"
        " keyid TEXT UNIQUE NOT NULL, public_pem TEXT NOT NULL, caps TEXT NOT NULL,"
        " token_hash TEXT UNIQUE, revoked INTEGER NOT NULL DEFAULT 0,"
        " enrolled_at DOUBLE PRECISION, last_seen DOUBLE PRECISION);"
        "CREATE TABLE IF NOT EXISTS blobs(sha256 TEXT PRIMARY KEY, size BIGINT NOT NULL,"
        " added_at DOUBLE PRECISION);"
        "CREATE TABLE IF NOT EXISTS runs(id %1$s, source_sha TEXT NOT NULL,"
        " matrix TEXT NOT NULL, cases TEXT NOT NULL, created_at DOUBLE PRECISION,"
        " cancelled INTEGER NOT NULL DEFAULT 0);"
        "CREATE TABLE IF NOT EXISTS jobs(id %1$s, run_id BIGINT NOT NULL,"
        " cell_id TEXT NOT NULL, cell TEXT NOT NULL, state TEXT NOT NULL, agent_id BIGINT,"
        " attempt INTEGER NOT NULL DEFAULT 0, lost INTEGER NOT NULL DEFAULT 0,"
        " lease_expires DOUBLE PRECISION, progress TEXT, bundle_sha TEXT, evidence TEXT,"
        " predicate TEXT, failure TEXT, updated_at DOUBLE PRECISION, UNIQUE(run_id, cell_id));"
        "CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, id);"
        "CREATE TABLE IF NOT EXISTS events(id %1$s, job_id BIGINT, agent_id BIGINT,"
        " kind TEXT NOT NULL, at DOUBLE PRECISION);"
        "CREATE TABLE IF NOT EXISTS unsettled(seq %1$s, job_id BIGINT NOT NULL,"
        " evidence TEXT NOT NULL, files TEXT NOT NULL, coordinator TEXT NOT NULL DEFAULT '');"
        "CREATE TABLE IF NOT EXISTS coordinators(id TEXT PRIMARY KEY, seen DOUBLE PRECISION,"
        " lock_key BIGINT);"
        "CREATE TABLE IF NOT EXISTS filings(evidence TEXT PRIMARY KEY, coordinator TEXT NOT NULL,"
        " job_id BIGINT NOT NULL, at DOUBLE PRECISION);"
        "CREATE TABLE IF NOT EXISTS farm(one INTEGER PRIMARY KEY, id TEXT NOT NULL,"
        " salt TEXT NOT NULL, tokens TEXT NOT NULL, created_at DOUBLE PRECISION);"
        "CREATE TABLE IF NOT EXISTS reports(run_id BIGINT PRIMARY KEY, summary TEXT NOT NULL,"
        " report TEXT NOT NULL, at DOUBLE PRECISION);"
        "CREATE TABLE IF NOT EXISTS case_history(case_path TEXT NOT NULL, run_id BIGINT NOT NULL,"
        " row_json TEXT NOT NULL, PRIMARY KEY(case_path, run_id));";
    size_t cap = sizeof fmt + 6 * strlen(key);
    char *sql = malloc(cap);
    snprintf(sql, cap, fmt, key);
    return sql;
}

/* Columns added after a store was first made ("TABLE COLUMN TYPE"): each back end adds
 * the ones missing when it opens a store (the same text makes them in a new one). */
const char *const db_added_columns[] = {
    "unsettled coordinator TEXT NOT NULL DEFAULT ''", /* issue 17 */
    "coordinators lock_key BIGINT",                   /* issue 24 */
    /* issue 28: bundles filed by content, run and job times, who submitted what */
    "jobs manifest TEXT",               /* the bundle as filed: envelope, digests */
    "jobs claimed_at DOUBLE PRECISION", /* the standing attempt's claim */
    "jobs finished_at DOUBLE PRECISION", "jobs result TEXT", /* the predicate's test result */
    "runs submitter TEXT", "runs commit_sha TEXT", "runs branch TEXT",
    "runs matrix_id TEXT",         /* its badge's name */
    "filings digests TEXT",        /* the blobs a filing pins */
    "reports version INTEGER",     /* DB_REPORT_VERSION: what a stored comparison holds */
    "agents superseded_hash TEXT", /* issue 39: the token an enrolment of its key replaced */
    NULL};

/* What needs the added columns: run after them. */
const char db_schema_late[] = "CREATE INDEX IF NOT EXISTS jobs_evidence ON jobs(evidence);"
                              /* One live agent a name (issue 39: sixteen enrolments at once
                               * under one free name on PostgreSQL made 2-8 live holders,
                               * each having seen the name free). Holders made so before
                               * the index are revoked but the first enrolled, as an
                               * enrolment after it would have been refused. */
                              "UPDATE agents SET revoked=1, token_hash=NULL WHERE revoked=0"
                              " AND EXISTS (SELECT 1 FROM agents o WHERE o.name=agents.name"
                              " AND o.revoked=0 AND o.id<agents.id);"
                              "CREATE UNIQUE INDEX IF NOT EXISTS agents_live_name ON agents(name)"
                              " WHERE revoked=0;"
                              "CREATE INDEX IF NOT EXISTS agents_superseded ON"
                              " agents(superseded_hash);"
                              "CREATE INDEX IF NOT EXISTS jobs_agent ON jobs(agent_id, id);"
                              "CREATE INDEX IF NOT EXISTS runs_matrix ON runs(matrix_id, id);";

void db_agent_free(Agent *a) {
    free(a->public_pem);
    if (a->caps && atomic_fetch_sub(&a->caps->refs, 1) == 1) {
        cJSON_Delete(a->caps->json);
        free(a->caps);
    }
    memset(a, 0, sizeof *a);
}

int db_agent_copy(Agent *to, const Agent *from) {
    *to = *from;
    to->caps = NULL;
    to->public_pem = from->public_pem ? strdup(from->public_pem) : NULL;
    if (!to->public_pem) {
        memset(to, 0, sizeof *to);
        return -1; /* out of memory (or FROM half made): nothing to free */
    }
    to->caps = from->caps;
    if (to->caps) atomic_fetch_add(&to->caps->refs, 1);
    return 0;
}

void db_job_free(Job *j) {
    cJSON_Delete(j->cell);
    memset(j, 0, sizeof *j);
}

/* --- statement helpers ------------------------------------------------------------- */

DbRows *db_query(Db *db, DbConn *c, const char *sql, const DbArg *args, int n) {
    return db->be->query(c, sql, args, n);
}

/* Runs SQL that returns no rows; returns how many rows it changed, -1 on failure. */
long db_exec(Db *db, DbConn *c, const char *sql, const DbArg *args, int n) {
    DbRows *r = db_query(db, c, sql, args, n);
    db->be->next(r);
    long changed = db->be->failed(r) ? -1 : db->be->changes(r);
    db->be->finish(r);
    return changed;
}

/* The first column of SQL's first row on a connection of its own, as text the caller
 * frees; NULL with no row (or out of memory). */
char *db_first_text(Db *db, const char *sql, const DbArg *args, int n) {
    DbConn *c = db->be->acquire(db, 0);
    DbRows *r = db_query(db, c, sql, args, n);
    char *text = db->be->next(r) ? strdup(db_col_text(db, r, 0)) : NULL;
    db->be->finish(r);
    db->be->release(db, c, 0);
    return text;
}

/* The same, parsed as JSON; NULL with no row or when it does not parse. */
cJSON *db_first_json(Db *db, const char *sql, const DbArg *args, int n) {
    char *text = db_first_text(db, sql, args, n);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    return j;
}

const char *db_col_text(Db *db, DbRows *r, int col) {
    const char *t = db->be->text(r, col);
    return t ? t : "";
}

long db_col_long(Db *db, DbRows *r, int col) { return (long)db->be->real(r, col); }

cJSON *db_col_json(Db *db, DbRows *r, int col) {
    cJSON *j = cJSON_Parse(db_col_text(db, r, col));
    return j ? j : cJSON_CreateNull();
}

static void event(Db *db, DbConn *c, long job, long agent, const char *kind) {
    db_exec(db, c, "INSERT INTO events(job_id, agent_id, kind, at) VALUES($1,$2,$3,$4)",
            DB_ARGS(DB_INT(job), DB_INT(agent), DB_TEXT(kind), DB_REAL(timing_now_seconds())));
}

static void announce(Db *db, DbConn *c) {
    if (db->be->announce) db->be->announce(c);
}

/* --- agents ------------------------------------------------------------------------ */

/* 1 when a live agent with another key than KEYID holds NAME. */
static int name_taken(Db *db, DbConn *c, const char *name, const char *keyid) {
    DbRows *r = db_query(db, c, "SELECT 1 FROM agents WHERE name=$1 AND keyid<>$2 AND revoked=0",
                         DB_ARGS(DB_TEXT(name), DB_TEXT(keyid)));
    int taken = db->be->next(r);
    db->be->finish(r);
    return taken;
}

int db_agent_enrol(Db *db, const DbEnrolment *a, long *id, Err *e) {
    const char *name = a->name, *keyid = a->keyid;
    DbConn *c = db->be->acquire(db, 1);
    DbRows *r =
        db_query(db, c, "SELECT revoked FROM agents WHERE keyid=$1", DB_ARGS(DB_TEXT(keyid)));
    int revoked = db->be->next(r) && db_col_long(db, r, 0);
    db->be->finish(r);
    int rc = -1;
    if (revoked) {
        err_set(e, "this key belongs to a revoked agent");
        rc = -2;
    } else if (name_taken(db, c, name, keyid)) {
        err_set(e,
                "machine name %s is enrolled with another key: revoke that agent first, or "
                "give this machine another --name",
                name);
        rc = -3;
    } else {
        r = db_query(db, c,
                     "INSERT INTO agents(name, keyid, public_pem, caps, token_hash, enrolled_at,"
                     " last_seen) VALUES($1,$2,$3,$4,$5,$6,$6) ON CONFLICT(keyid) DO UPDATE SET"
                     " name=excluded.name, public_pem=excluded.public_pem, caps=excluded.caps,"
                     " superseded_hash=agents.token_hash, token_hash=excluded.token_hash,"
                     " last_seen=excluded.last_seen RETURNING id",
                     DB_ARGS(DB_TEXT(name), DB_TEXT(keyid), DB_TEXT(a->public_pem),
                             DB_TEXT(a->caps_json), DB_TEXT(a->token_hash),
                             DB_REAL(timing_now_seconds())));
        if (db->be->next(r)) {
            *id = db_col_long(db, r, 0);
            rc = 0;
        } else if (name_taken(db, c, name, keyid)) { /* another coordinator's, just now */
            err_set(e, "machine name %s is enrolled with another key", name);
            rc = -3;
        } else {
            err_set(e, "enrolment not stored: %s", db->be->error(c));
        }
        db->be->finish(r);
    }
    db->be->release(db, c, 1);
    return rc;
}

/* DB_SUPERSEDED when TOKEN_HASH was a live agent's token until its key enrolled again,
 * else 0 (or DB_UNAVAILABLE). */
static int superseded(Db *db, DbConn *c, const char *token_hash) {
    DbRows *r = db_query(db, c, "SELECT 1 FROM agents WHERE superseded_hash=$1 AND revoked=0",
                         DB_ARGS(DB_TEXT(token_hash)));
    int found = db->be->next(r) ? DB_SUPERSEDED : db->be->failed(r) ? DB_UNAVAILABLE : 0;
    db->be->finish(r);
    return found;
}

int db_agent_by_token(Db *db, const char *token_hash, Agent *out) {
    DbConn *c = db->be->acquire(db, 0);
    DbRows *r = db_query(db, c,
                         "SELECT id, name, keyid, public_pem, caps, revoked FROM agents"
                         " WHERE token_hash=$1",
                         DB_ARGS(DB_TEXT(token_hash)));
    int found = db->be->next(r);
    int failed = !found && db->be->failed(r);
    if (found) {
        memset(out, 0, sizeof *out);
        out->id = db_col_long(db, r, 0);
        snprintf(out->name, sizeof out->name, "%s", db_col_text(db, r, 1));
        snprintf(out->keyid, sizeof out->keyid, "%s", db_col_text(db, r, 2));
        out->public_pem = strdup(db_col_text(db, r, 3));
        out->caps = calloc(1, sizeof *out->caps);
        if (out->caps) {
            out->caps->json = db_col_json(db, r, 4);
            atomic_init(&out->caps->refs, 1);
        }
        if (!out->public_pem || !out->caps) failed = 1; /* out of memory: as the store failing */
        out->revoked = (int)db_col_long(db, r, 5);
    }
    db->be->finish(r);
    if (!found && !failed) found = superseded(db, c, token_hash);
    db->be->release(db, c, 0);
    if (failed || found == DB_UNAVAILABLE) {
        if (found == 1) db_agent_free(out);
        return DB_UNAVAILABLE;
    }
    if (found == DB_SUPERSEDED) return DB_SUPERSEDED;
    return found && !out->revoked ? 1 : (found ? (db_agent_free(out), 0) : 0);
}

char *db_agent_pem(Db *db, long id) {
    return db_first_text(db, "SELECT public_pem FROM agents WHERE id=$1", DB_ARGS(DB_INT(id)));
}

int db_enrol_allowed(Db *db, const char *keyid, long max) {
    DbConn *c = db->be->acquire(db, 0);
    DbRows *r = db_query(db, c,
                         "SELECT (SELECT COUNT(*) FROM agents WHERE keyid=$1),"
                         " (SELECT COUNT(*) FROM agents WHERE revoked=0)",
                         DB_ARGS(DB_TEXT(keyid)));
    int allowed = DB_UNAVAILABLE;
    if (db->be->next(r)) allowed = db_col_long(db, r, 0) > 0 || db_col_long(db, r, 1) < max;
    db->be->finish(r);
    db->be->release(db, c, 0);
    return allowed;
}

int db_agent_revoke(Db *db, long id) {
    DbConn *c = db->be->acquire(db, 1);
    long changed = db_exec(db, c,
                           "UPDATE agents SET revoked=1, token_hash=NULL, superseded_hash=NULL"
                           " WHERE id=$1",
                           DB_ARGS(DB_INT(id)));
    /* Its running jobs go back to the queue now rather than when their leases end. */
    if (db_exec(db, c,
                "UPDATE jobs SET state='queued', agent_id=NULL, lease_expires=NULL"
                " WHERE agent_id=$1 AND state='running'",
                DB_ARGS(DB_INT(id))) > 0)
        announce(db, c);
    db->be->release(db, c, 1);
    return changed > 0 ? 0 : -1;
}

/* --- the farm's identity ---------------------------------------------------------- */

int db_farm_identity(Db *db, const FarmIdentity *fresh, FarmIdentity *stored) {
    DbConn *c = db->be->acquire(db, 1);
    db_exec(db, c,
            "INSERT INTO farm(one, id, salt, tokens, created_at) VALUES(1,$1,$2,$3,$4)"
            " ON CONFLICT(one) DO NOTHING",
            DB_ARGS(DB_TEXT(fresh->id), DB_TEXT(fresh->salt), DB_TEXT(fresh->tokens),
                    DB_REAL(timing_now_seconds())));
    DbRows *r = db_query(db, c, "SELECT id, salt, tokens FROM farm WHERE one=1", DB_NO_ARGS);
    int found = db->be->next(r);
    if (found) {
        snprintf(stored->id, sizeof stored->id, "%s", db_col_text(db, r, 0));
        snprintf(stored->salt, sizeof stored->salt, "%s", db_col_text(db, r, 1));
        snprintf(stored->tokens, sizeof stored->tokens, "%s", db_col_text(db, r, 2));
    }
    db->be->finish(r);
    db->be->release(db, c, 1);
    return found ? 0 : -1;
}

int db_farm_tokens(Db *db, const char *tokens) {
    DbConn *c = db->be->acquire(db, 1);
    long n = db_exec(db, c, "UPDATE farm SET tokens=$1 WHERE one=1", DB_ARGS(DB_TEXT(tokens)));
    db->be->release(db, c, 1);
    return n == 1 ? 0 : -1;
}

/* --- blobs ------------------------------------------------------------------------- */

int db_blob_add(Db *db, const char *sha, long size) {
    DbConn *c = db->be->acquire(db, 1);
    long rc = db_exec(db, c,
                      "INSERT INTO blobs(sha256, size, added_at) VALUES($1,$2,$3)"
                      " ON CONFLICT DO NOTHING",
                      DB_ARGS(DB_TEXT(sha), DB_INT(size), DB_REAL(timing_now_seconds())));
    db->be->release(db, c, 1);
    return rc < 0 ? -1 : 0;
}

int db_blob_exists(Db *db, const char *sha, long *size) {
    DbConn *c = db->be->acquire(db, 0);
    DbRows *r = db_query(db, c, "SELECT size FROM blobs WHERE sha256=$1", DB_ARGS(DB_TEXT(sha)));
    int found = db->be->next(r);
    if (found && size) *size = db_col_long(db, r, 0);
    db->be->finish(r);
    db->be->release(db, c, 0);
    return found;
}

/* --- runs -------------------------------------------------------------------------- */

static int insert_jobs(Db *db, DbConn *c, long run, const cJSON *jobs) {
    int ok = 1;
    const cJSON *job;
    cJSON_ArrayForEach(job, jobs) {
        char *cell = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(job, "cell"));
        ok = ok && db_exec(db, c,
                           "INSERT INTO jobs(run_id, cell_id, cell, state, updated_at)"
                           " VALUES($1,$2,$3,'queued',$4)",
                           DB_ARGS(DB_INT(run), DB_TEXT(json_str(job, "cell_id")), DB_TEXT(cell),
                                   DB_REAL(timing_now_seconds()))) == 1;
        free(cell);
    }
    return ok;
}

long db_run_create(Db *db, const DbRun *run_in, Err *e) {
    const RunMeta *meta = run_in->meta;
    char *matrix_text = cJSON_PrintUnformatted(run_in->matrix);
    char *cases_text = cJSON_PrintUnformatted(run_in->cases);
    if (!matrix_text || !cases_text) { /* out of memory: nothing stored */
        free(matrix_text);
        free(cases_text);
        err_set(e, "run not stored: out of memory");
        return -1;
    }
    char matrix_id[SHA256_HEX_LEN];
    sha256_hex(matrix_text, strlen(matrix_text), matrix_id);
    matrix_id[16] = '\0';
    DbConn *c = db->be->acquire(db, 1);
    db_exec(db, c, db->be->begin, DB_NO_ARGS);
    DbRows *r =
        db_query(db, c,
                 "INSERT INTO runs(source_sha, matrix, cases, created_at, submitter,"
                 " commit_sha, branch, matrix_id) VALUES($1,$2,$3,$4,$5,$6,$7,$8)"
                 " RETURNING id",
                 DB_ARGS(DB_TEXT(run_in->source_sha), DB_TEXT(matrix_text), DB_TEXT(cases_text),
                         DB_REAL(timing_now_seconds()), DB_TEXT(meta->submitter),
                         DB_TEXT(meta->commit), DB_TEXT(meta->branch), DB_TEXT(matrix_id)));
    int ok = db->be->next(r);
    long run = ok ? db_col_long(db, r, 0) : -1;
    db->be->finish(r);
    ok = ok && insert_jobs(db, c, run, run_in->jobs);
    if (ok) announce(db, c);
    if (!ok) err_set(e, "run not stored: %s", db->be->error(c));
    ok = ok && db_exec(db, c, "COMMIT", DB_NO_ARGS) >= 0;
    if (!ok) db_exec(db, c, "ROLLBACK", DB_NO_ARGS);
    db->be->release(db, c, 1);
    free(matrix_text);
    free(cases_text);
    return ok ? run : -1;
}

int db_run_cancel(Db *db, long run_id) {
    DbConn *c = db->be->acquire(db, 1);
    long found = db_exec(db, c, "UPDATE runs SET cancelled=1 WHERE id=$1", DB_ARGS(DB_INT(run_id)));
    db_exec(db, c,
            "UPDATE jobs SET state='cancelled', updated_at=$1, finished_at=$1 WHERE run_id=$2"
            " AND state IN ('queued','running')",
            DB_ARGS(DB_REAL(timing_now_seconds()), DB_INT(run_id)));
    db->be->release(db, c, 1);
    return found > 0 ? 0 : -1;
}

/* --- jobs -------------------------------------------------------------------------- */

void db_job_from_row(Db *db, DbRows *r, Job *out) {
    memset(out, 0, sizeof *out);
    out->id = db_col_long(db, r, 0);
    out->run_id = db_col_long(db, r, 1);
    snprintf(out->cell_id, sizeof out->cell_id, "%s", db_col_text(db, r, 2));
    out->cell = db_col_json(db, r, 3);
    snprintf(out->state, sizeof out->state, "%s", db_col_text(db, r, 4));
    out->agent_id = db_col_long(db, r, 5);
    out->attempt = (int)db_col_long(db, r, 6);
    out->lease_expires = db->be->real(r, 7);
    snprintf(out->bundle_sha, sizeof out->bundle_sha, "%s", db_col_text(db, r, 8));
    assert(proto_job_state_known(out->state)); /* proto/api.h's states */
    /* a job is done only with its filed bundle (db_job_done); a running one has its agent */
    assert(strcmp(out->state, "done") || sha256_is_hex(out->bundle_sha));
    assert(strcmp(out->state, "running") || out->agent_id > 0);
}

/* Reads the queued jobs in order and copies the first that AGENT can run into OUT. */
static int claim_scan(Db *db, DbConn *c, const Agent *agent, Job *out) {
    DbRows *r = db_query(db, c, "SELECT " DB_JOB_COLS " FROM jobs WHERE state='queued' ORDER BY id",
                         DB_NO_ARGS);
    int claimed = 0;
    while (!claimed && db->be->next(r)) {
        cJSON *cell = cJSON_Parse(db_col_text(db, r, 3));
        if (matrix_cell_fits(agent->caps->json, cell)) {
            db_job_from_row(db, r, out);
            assert(!strcmp(out->state, "queued")); /* what the scan asked for */
            claimed = 1;
        }
        cJSON_Delete(cell);
    }
    db->be->finish(r);
    return claimed;
}

/* A back end that several coordinators share claims its own way (db_pg.c); this one
 * holds the store's write lock from the scan to the update. */
/* A claimed job: running under AGENT's lease, its attempt counted. */
__attribute__((unused)) static int claimed_ok(const Job *job, const Agent *agent) {
    return !strcmp(job->state, "running") && job->agent_id == agent->id && job->attempt >= 1 &&
           job->lease_expires > 0;
}

/* Whether AGENT is revoked in the store (a cache elsewhere may not know yet). */
int db_agent_revoked(Db *db, DbConn *c, long agent) {
    DbRows *r = db_query(db, c, "SELECT revoked FROM agents WHERE id=$1", DB_ARGS(DB_INT(agent)));
    int revoked = !db->be->next(r) || db_col_long(db, r, 0) != 0;
    db->be->finish(r);
    return revoked;
}

int db_claim(Db *db, const Agent *agent, double lease_s, Job *out) {
    assert(agent->id > 0 && lease_s > 0);
    if (db->be->claim) {
        int found = db->be->claim(db, agent, lease_s, out);
        assert(found <= 0 || claimed_ok(out, agent));
        return found;
    }
    DbConn *c = db->be->acquire(db, 0);
    db_exec(db, c, db->be->begin, DB_NO_ARGS);
    int found, copied;
    if ((copied = found = claim_scan(db, c, agent, out))) {
        double now = timing_steady_seconds();
        out->attempt += 1;
        out->agent_id = agent->id;
        out->lease_expires = now + lease_s;
        snprintf(out->state, sizeof out->state, "running");
        found = db_exec(db, c,
                        "UPDATE jobs SET state='running', agent_id=$1, attempt=$2,"
                        " lease_expires=$3, progress='claimed', updated_at=$4, claimed_at=$4"
                        " WHERE id=$5"
                        " AND state='queued' AND EXISTS (SELECT 1 FROM agents WHERE id=$1"
                        " AND revoked=0)",
                        DB_ARGS(DB_INT(agent->id), DB_INT(out->attempt),
                                DB_REAL(out->lease_expires), DB_REAL(now), DB_INT(out->id))) == 1;
        /* the store's word: a cache of agents may be a moment behind a revocation */
        if (!found && db_agent_revoked(db, c, agent->id)) found = -1;
    }
    if (db_exec(db, c, "COMMIT", DB_NO_ARGS) < 0) {
        db_exec(db, c, "ROLLBACK", DB_NO_ARGS);
        found = found < 0 ? found : 0;
    }
    db->be->release(db, c, 0);
    if (copied && found <= 0) db_job_free(out);
    assert(found <= 0 || claimed_ok(out, agent));
    return found;
}

int db_heartbeat(Db *db, long job_id, long agent_id, double lease_s, const char *progress,
                 double *expires) {
    assert(lease_s > 0);
    DbConn *c = db->be->acquire(db, 0);
    double until = timing_steady_seconds() + lease_s;
    int rc = -1;
    long n = db_exec(db, c,
                     "UPDATE jobs SET lease_expires=$1, progress=$2, updated_at=$3 WHERE id=$4"
                     " AND agent_id=$5 AND state='running'",
                     DB_ARGS(DB_REAL(until), DB_TEXT(progress ? progress : ""),
                             DB_REAL(until - lease_s), DB_INT(job_id), DB_INT(agent_id)));
    if (n == 1) {
        *expires = until;
        rc = 0;
    } else if (n < 0) {
        rc = DB_UNAVAILABLE; /* the store failed: the lease may well be this agent's */
    } else {
        DbRows *r = db_query(db, c, "SELECT state FROM jobs WHERE id=$1 AND agent_id=$2",
                             DB_ARGS(DB_INT(job_id), DB_INT(agent_id)));
        if (db->be->next(r) && !strcmp(db_col_text(db, r, 0), "cancelled")) rc = 1;
        else if (db->be->failed(r)) rc = DB_UNAVAILABLE;
        db->be->finish(r);
    }
    db->be->release(db, c, 0);
    return rc;
}

/* Renews this coordinator's row, which tells the others it is alive (shared stores). */
static void renew_presence(Db *db, DbConn *c) {
    db_exec(db, c,
            "INSERT INTO coordinators(id, seen) VALUES($1,$2) ON CONFLICT(id) DO UPDATE"
            " SET seen=excluded.seen",
            DB_ARGS(DB_TEXT(db->coordinator), DB_REAL(timing_now_seconds())));
}

int db_reap(Db *db, int max_attempts, double lease_s) {
    assert(max_attempts >= 1 && lease_s > 0);
    double now = timing_steady_seconds();
    DbConn *c = db->be->acquire(db, 0);
    db_exec(db, c, db->be->begin, DB_NO_ARGS);
    /* A lease ends within lease_s of now: one that ends later was given before the wall
     * clock stepped back (or by a coordinator whose clock is ahead), and would strand a
     * dead agent's job for as long as the step. */
    db_exec(db, c, "UPDATE jobs SET lease_expires=$1 WHERE state='running' AND lease_expires > $1",
            DB_ARGS(DB_REAL(now + lease_s)));
    /* One statement decides which leases ran out, so that two coordinators' reapers
     * never count one loss twice. */
    DbRows *r = db_query(
        db, c,
        "UPDATE jobs SET lost=lost+1, lease_expires=NULL, updated_at=$1,"
        " finished_at=CASE WHEN attempt >= $2 THEN $1 ELSE NULL END,"
        " state=CASE WHEN attempt >= $2 THEN 'failed' ELSE 'queued' END,"
        " failure=CASE WHEN attempt >= $2 THEN 'agent_lost' ELSE failure END"
        " WHERE state='running' AND lease_expires < $1 RETURNING id, agent_id, state, attempt",
        DB_ARGS(DB_REAL(now), DB_INT(max_attempts)));
    long *lost = NULL; /* job, agent pairs */
    int n = 0;
    while (db->be->next(r)) {
        /* attempts are bounded: a lost job goes back to the queue only with attempts left */
        assert(!strcmp(db_col_text(db, r, 2), "failed")
                   ? db_col_long(db, r, 3) >= max_attempts
                   : !strcmp(db_col_text(db, r, 2), "queued") &&
                         db_col_long(db, r, 3) < max_attempts);
        lost = realloc(lost, (size_t)(n + 1) * 2 * sizeof *lost);
        lost[2 * n] = db_col_long(db, r, 0);
        lost[2 * n + 1] = db_col_long(db, r, 1);
        n++;
    }
    db->be->finish(r);
    for (int i = 0; i < n; i++) event(db, c, lost[2 * i], lost[2 * i + 1], "agent_lost");
    free(lost);
    if (n) announce(db, c);
    if (db->be->shared) renew_presence(db, c);
    db_exec(db, c, "COMMIT", DB_NO_ARGS);
    db->be->release(db, c, 0);
    int news = db->be->news ? db->be->news(db) : 0;
    return n + news;
}

int db_job_get(Db *db, long job_id, Job *out) {
    DbConn *c = db->be->acquire(db, 0);
    DbRows *r =
        db_query(db, c, "SELECT " DB_JOB_COLS " FROM jobs WHERE id=$1", DB_ARGS(DB_INT(job_id)));
    int found = db->be->next(r);
    if (found) db_job_from_row(db, r, out);
    else if (db->be->failed(r)) found = DB_UNAVAILABLE;
    db->be->finish(r);
    db->be->release(db, c, 0);
    return found;
}

/* Why request R's job was not marked done (0: it was): its reservation of the folder is
 * gone (another coordinator took it over), its agent was revoked, or the job moved on. */
static int done_refusal(Db *db, DbConn *c, const DoneReq *r) {
    DbRows *q = db_query(db, c,
                         "SELECT (SELECT COUNT(*) FROM filings WHERE evidence=$1 AND"
                         " coordinator=$2), (SELECT revoked FROM agents WHERE id=$3)",
                         DB_ARGS(DB_TEXT(r->rel), DB_TEXT(db->coordinator), DB_INT(r->agent)));
    int owned = db->be->next(q) && db_col_long(db, q, 0) > 0;
    int revoked = owned && db_col_long(db, q, 1) != 0;
    db->be->finish(q);
    return !owned ? DB_DONE_NOT_OURS : revoked ? DB_DONE_REVOKED : DB_DONE_MOVED_ON;
}

/* One filed bundle inside the group's transaction: the job's row with its manifest, only
 * while it is running under its agent's lease, the agent is not revoked and this
 * coordinator holds the evidence path's reservation (dropped here, with its pins: the
 * manifest pins the blobs from now on). */
static int commit_one(Db *db, DbConn *c, const DoneReq *r) {
    assert(r->rel[0] && r->manifest);
    double now = timing_now_seconds();
    if (db_exec(db, c,
                "UPDATE jobs SET state='done', bundle_sha=$1, evidence=$2,"
                " predicate=$3, progress='filed', lease_expires=NULL, updated_at=$4,"
                " finished_at=$4, manifest=$8, result=$9"
                " WHERE id=$5 AND agent_id=$6 AND state='running'"
                " AND EXISTS (SELECT 1 FROM agents WHERE id=$6 AND revoked=0)"
                " AND EXISTS (SELECT 1 FROM filings WHERE evidence=$2 AND coordinator=$7)",
                DB_ARGS(DB_TEXT(r->sha), DB_TEXT(r->rel), DB_TEXT(r->pred), DB_REAL(now),
                        DB_INT(r->job), DB_INT(r->agent), DB_TEXT(db->coordinator),
                        DB_TEXT(r->manifest), DB_TEXT(r->test_result))) != 1)
        return done_refusal(db, c, r);
    if (db_exec(db, c, "DELETE FROM filings WHERE evidence=$1 AND coordinator=$2",
                DB_ARGS(DB_TEXT(r->rel), DB_TEXT(db->coordinator))) != 1)
        return DB_DONE_FAILED;
    return 0;
}

/* Group commit: uploads that finish filing together share one commit (and, with sync
 * "full", one fsync). */
static void commit_batch(Db *db, DoneReq *batch) {
    DbConn *c = db->be->acquire(db, 1);
    db_exec(db, c, db->be->begin, DB_NO_ARGS);
    int failed = 0;
    for (DoneReq *r = batch; r; r = r->next) {
        assert(!r->finished);
        r->result = commit_one(db, c, r);
        failed |= r->result == DB_DONE_FAILED; /* a statement failed: the transaction is lost */
    }
    if (failed || db_exec(db, c, "COMMIT", DB_NO_ARGS) < 0) {
        db_exec(db, c, "ROLLBACK", DB_NO_ARGS);
        for (DoneReq *r = batch; r; r = r->next) r->result = DB_DONE_FAILED;
    }
    db->be->release(db, c, 1);
}

int db_job_done(Db *db, const DbFiling *f) {
    /* running -> done only with what a filed job carries: its bundle and its manifest */
    assert(f->job_id > 0 && f->agent_id > 0 && sha256_is_hex(f->bundle_sha));
    assert(f->evidence_path && f->evidence_path[0] && f->predicate_json && f->manifest);
    DoneReq req = {.job = f->job_id,
                   .agent = f->agent_id,
                   .sha = f->bundle_sha,
                   .rel = f->evidence_path,
                   .pred = f->predicate_json,
                   .manifest = f->manifest,
                   .test_result = f->result,
                   .result = -1};
    /* The first filing to find no commit running commits its own row and every one
     * queued meanwhile (a leader, no thread of its own to wake); the others wait for it. */
    pthread_mutex_lock(&db->qlock);
    req.next = db->pending;
    db->pending = &req;
    while (!req.finished) {
        if (db->committing) {
            pthread_cond_wait(&db->committed, &db->qlock);
            continue;
        }
        DoneReq *batch = db->pending;
        db->pending = NULL;
        db->committing = 1;
        pthread_mutex_unlock(&db->qlock);
        commit_batch(db, batch);
        pthread_mutex_lock(&db->qlock);
        for (DoneReq *r = batch; r; r = r->next) r->finished = 1;
        db->committing = 0;
        pthread_cond_broadcast(&db->committed);
    }
    pthread_mutex_unlock(&db->qlock);
    assert(req.result <= 0 && req.result >= DB_DONE_FAILED);
    return req.result;
}

int db_run_of_job(Db *db, long run_id, char source_sha[SHA256_HEX_LEN], cJSON **cases,
                  double *timeout_s) {
    DbConn *c = db->be->acquire(db, 0);
    DbRows *r = db_query(db, c, "SELECT source_sha, cases, matrix FROM runs WHERE id=$1",
                         DB_ARGS(DB_INT(run_id)));
    int found = db->be->next(r);
    if (found) {
        snprintf(source_sha, SHA256_HEX_LEN, "%s", db_col_text(db, r, 0));
        *cases = db_col_json(db, r, 1);
        cJSON *matrix = db_col_json(db, r, 2);
        *timeout_s = json_num(matrix, "timeout_s", 300);
        cJSON_Delete(matrix);
    }
    db->be->finish(r);
    db->be->release(db, c, 0);
    return found;
}

void db_checkpoint(Db *db) {
    if (db->be->checkpoint) db->be->checkpoint(db, 0);
}

void db_checkpoint_final(Db *db) {
    if (db->be->checkpoint) db->be->checkpoint(db, 1);
}

void db_set_wal_pages(Db *db, long pages) {
    if (db->be->limit_wal) db->be->limit_wal(db, pages);
}

/* --- views ------------------------------------------------------------------------- */

cJSON *db_rows_json(Db *db, const char *sql, const DbArg *args, int n, const char *const *names,
                    const char *json_cols) {
    cJSON *arr = cJSON_CreateArray();
    DbConn *c = db->be->acquire(db, 0);
    DbRows *r = db_query(db, c, sql, args, n);
    while (db->be->next(r)) {
        cJSON *row = cJSON_CreateObject();
        for (int i = 0; names[i]; i++) {
            if (json_cols[i] == 'j') cJSON_AddItemToObject(row, names[i], db_col_json(db, r, i));
            else if (!db->be->text(r, i)) cJSON_AddNullToObject(row, names[i]);
            else if (db->be->is_number(r, i))
                cJSON_AddNumberToObject(row, names[i], db->be->real(r, i));
            else cJSON_AddStringToObject(row, names[i], db_col_text(db, r, i));
        }
        cJSON_AddItemToArray(arr, row);
    }
    db->be->finish(r);
    db->be->release(db, c, 0);
    return arr;
}

/* A run's columns as its view shows them: started is its first job's claim still
 * standing, finished its last job's end once none is queued or running. */
#define RUN_COLS                                                                                   \
    "id, source_sha, matrix, cases, created_at, cancelled, submitter, commit_sha, branch,"         \
    " matrix_id, (SELECT MIN(claimed_at) FROM jobs WHERE run_id=r.id),"                            \
    " CASE WHEN EXISTS (SELECT 1 FROM jobs WHERE run_id=r.id AND state IN ('queued','running'))"   \
    " THEN NULL ELSE (SELECT MAX(finished_at) FROM jobs WHERE run_id=r.id) END"

cJSON *db_run_view(Db *db, long run_id) {
    static const char *const run_cols[] = {
        "id",     "source_sha", "matrix",    "cases",   "created_at", "cancelled", "submitter",
        "commit", "branch",     "matrix_id", "started", "finished",   NULL};
    cJSON *runs = db_rows_json(db, "SELECT " RUN_COLS " FROM runs r WHERE id=$1",
                               DB_ARGS(DB_INT(run_id)), run_cols, "--jj---------");
    cJSON *run = cJSON_DetachItemFromArray(runs, 0);
    cJSON_Delete(runs);
    if (!run) return NULL;
    static const char *const job_cols[] = {
        "job",      "cell_id", "cell",     "state",      "agent",       "attempt", "lost",
        "progress", "failure", "evidence", "claimed_at", "finished_at", "result",  NULL};
    cJSON_AddItemToObject(
        run, "jobs",
        db_rows_json(
            db,
            "SELECT j.id, j.cell_id, j.cell, j.state, a.name, j.attempt, j.lost, j.progress,"
            " j.failure, j.evidence, j.claimed_at, j.finished_at, j.result FROM jobs j"
            " LEFT JOIN agents a ON a.id=j.agent_id WHERE j.run_id=$1 ORDER BY j.id",
            DB_ARGS(DB_INT(run_id)), job_cols, "--j----------"));
    return run;
}

/* A result row's predicate checked against its signed bundle (the row's manifest, which
 * goes): a stored predicate that differs (a byte changed in the database) is replaced by
 * the signed one; with no bundle to check it against (its manifest damaged too) it is
 * served as null, with "damaged" saying why. Either way the log names the job. */
static void signed_predicate(cJSON *row) {
    Err e = {{0}};
    cJSON *manifest = cJSON_DetachItemFromObjectCaseSensitive(row, "manifest");
    cJSON *st = evidence_manifest_statement(manifest, json_str(row, "bundle_sha256"), &e);
    cJSON_Delete(manifest);
    const cJSON *stored = cJSON_GetObjectItemCaseSensitive(row, "predicate");
    cJSON *signed_pred = cJSON_DetachItemFromObjectCaseSensitive(st, "predicate");
    cJSON_Delete(st);
    if (signed_pred && cJSON_Compare(signed_pred, stored, 1)) {
        cJSON_Delete(signed_pred);
        return;
    }
    if (!signed_pred && !e.msg[0]) err_set(&e, "its statement has no predicate");
    fprintf(stderr, "farm: job %.0f: the stored predicate %s: %s\n", json_num(row, "job", 0),
            signed_pred ? "differs from its signed bundle" : "cannot be checked",
            signed_pred ? "the signed one is served" : e.msg);
    if (!signed_pred) {
        cJSON_AddStringToObject(row, "damaged", e.msg);
        signed_pred = cJSON_CreateNull();
    }
    cJSON_ReplaceItemInObjectCaseSensitive(row, "predicate", signed_pred);
}

cJSON *db_run_results(Db *db, long run_id) {
    static const char *const cols[] = {"job",           "cell_id",   "machine",  "evidence",
                                       "bundle_sha256", "predicate", "manifest", NULL};
    cJSON *rows =
        db_rows_json(db,
                     "SELECT j.id, j.cell_id, a.name, j.evidence, j.bundle_sha,"
                     " j.predicate, j.manifest FROM jobs j JOIN agents a ON a.id=j.agent_id"
                     " WHERE j.run_id=$1 AND j.state='done' ORDER BY j.id",
                     DB_ARGS(DB_INT(run_id)), cols, "-----jj");
    cJSON *row;
    cJSON_ArrayForEach(row, rows) signed_predicate(row);
    return rows;
}

#define COUNT_STATE(s) " SUM(CASE WHEN j.state='" s "' THEN 1 ELSE 0 END)"

/* A run's row as the status and the index read it (FROM runs r, jobs joined as j). */
#define RUN_ROW_SQL                                                                                                                                           \
    "SELECT r.id, r.source_sha, COUNT(j.id)," COUNT_STATE("queued") "," COUNT_STATE("running") "," COUNT_STATE(                                               \
        "done") "," COUNT_STATE("failed") "," COUNT_STATE("cancelled") ", r.created_at, r.submitter, r.commit_sha, r.branch, r.matrix_id, MIN(j.claimed_at)," \
                                                                       " CASE WHEN" COUNT_STATE("queued") " +" COUNT_STATE(                                   \
                                                                           "running") " > 0"                                                                  \
                                                                                      " THEN NULL ELSE MAX(j.finished_at) END FROM runs r LEFT JOIN jobs j ON j.run_id=r.id"
static const char *const AGENT_ROW_COLS[] = {"id",      "name",      "keyid", "caps",
                                             "revoked", "last_seen", NULL};
static const char *const RUN_ROW_COLS[] = {
    "id",         "source_sha", "jobs",   "queued", "running",   "done",    "failed",   "cancelled",
    "created_at", "submitter",  "commit", "branch", "matrix_id", "started", "finished", NULL};

cJSON *db_status_view(Db *db) {
    cJSON *out = cJSON_CreateObject();
    cJSON_AddItemToObject(
        out, "agents",
        db_rows_json(db, "SELECT id, name, keyid, caps, revoked, last_seen FROM agents ORDER BY id",
                     DB_NO_ARGS, AGENT_ROW_COLS, "---j--"));
    cJSON_AddItemToObject(out, "runs",
                          db_rows_json(db, RUN_ROW_SQL " GROUP BY r.id ORDER BY r.id", DB_NO_ARGS,
                                       RUN_ROW_COLS, "--------------"));
    static const char *const event_cols[] = {"job", "agent", "kind", "at", NULL};
    cJSON_AddItemToObject(
        out, "events",
        db_rows_json(db, "SELECT job_id, agent_id, kind, at FROM events ORDER BY id DESC LIMIT 50",
                     DB_NO_ARGS, event_cols, "----"));
    return out;
}

cJSON *db_index_view(Db *db, long runs_before, long agents_after, int limit) {
    cJSON *out = cJSON_CreateObject();
    cJSON_AddItemToObject(
        out, "agents",
        db_rows_json(db,
                     "SELECT id, name, keyid, caps, revoked, last_seen FROM agents"
                     " WHERE revoked=0 AND id > $1 ORDER BY id LIMIT $2",
                     DB_ARGS(DB_INT(agents_after), DB_INT(limit)), AGENT_ROW_COLS, "---j--"));
    cJSON_AddItemToObject(
        out, "runs",
        db_rows_json(db, RUN_ROW_SQL " WHERE r.id < $1 GROUP BY r.id ORDER BY r.id DESC LIMIT $2",
                     DB_ARGS(DB_INT(runs_before > 0 ? runs_before : LONG_MAX), DB_INT(limit)),
                     RUN_ROW_COLS, "--------------"));
    return out;
}
