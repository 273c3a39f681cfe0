/* db.c: the coordinator's SQLite store (see db.h). Every commit is in the WAL before the
 * call returns, so it survives a kill -9 of the coordinator. With sync "full", what
 * acknowledges something (filed bundles, enrolments, runs, blobs) is also fsynced before
 * the answer (unlock_acknowledged). Claims, heartbeats and lease bookkeeping are not:
 * after a power loss they may roll back, which only means a lease runs out again. */
#include "db.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "matrix.h"

/* A filed bundle waiting for the group commit (see db_job_done). */
typedef struct DoneReq {
    long job, agent;
    const char *sha, *rel, *pred, *journal;
    int result, finished;
    struct DoneReq *next;
} DoneReq;

struct Db {
    sqlite3 *sql;
    sqlite3 *ckpt; /* a second connection: checkpoints off the request path */
    pthread_mutex_t lock;
    pthread_mutex_t qlock; /* guards pending and the finished flags */
    pthread_cond_t queued, committed;
    DoneReq *pending;
    int sync_full; /* acknowledging commits fsync the WAL (see unlock_acknowledged) */
    int wal_fd;    /* the WAL file, fsynced by the group commit itself */
};

static void *committer(void *arg);

static const char SCHEMA[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA busy_timeout=5000;"
    "PRAGMA synchronous=NORMAL;"
    "CREATE TABLE IF NOT EXISTS agents(id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
    " keyid TEXT UNIQUE NOT NULL, public_pem TEXT NOT NULL, caps TEXT NOT NULL,"
    " token_hash TEXT UNIQUE, revoked INTEGER NOT NULL DEFAULT 0, enrolled_at REAL,"
    " last_seen REAL);"
    "CREATE TABLE IF NOT EXISTS blobs(sha256 TEXT PRIMARY KEY, size INTEGER NOT NULL,"
    " added_at REAL);"
    "CREATE TABLE IF NOT EXISTS runs(id INTEGER PRIMARY KEY, source_sha TEXT NOT NULL,"
    " matrix TEXT NOT NULL, cases TEXT NOT NULL, created_at REAL,"
    " cancelled INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS jobs(id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL,"
    " cell_id TEXT NOT NULL, cell TEXT NOT NULL, state TEXT NOT NULL, agent_id INTEGER,"
    " attempt INTEGER NOT NULL DEFAULT 0, lost INTEGER NOT NULL DEFAULT 0,"
    " lease_expires REAL, progress TEXT, bundle_sha TEXT, evidence TEXT, predicate TEXT,"
    " failure TEXT, updated_at REAL, UNIQUE(run_id, cell_id));"
    "CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, id);"
    "CREATE TABLE IF NOT EXISTS events(id INTEGER PRIMARY KEY, job_id INTEGER,"
    " agent_id INTEGER, kind TEXT NOT NULL, at REAL);"
    "CREATE TABLE IF NOT EXISTS unsettled(seq INTEGER PRIMARY KEY, job_id INTEGER NOT NULL,"
    " evidence TEXT NOT NULL, files TEXT NOT NULL);"
    /* Checkpoints run from db_checkpoint on their own connection, so that no claim or
     * upload pays for copying the WAL back and fsyncing the database file. */
    "PRAGMA wal_autocheckpoint=0;";

Db *db_open(const char *path, Err *e) {
    Db *db = calloc(1, sizeof *db);
    db->wal_fd = -1;
    pthread_mutex_init(&db->lock, NULL);
    pthread_mutex_init(&db->qlock, NULL);
    pthread_cond_init(&db->queued, NULL);
    pthread_cond_init(&db->committed, NULL);
    char *msg = NULL;
    if (sqlite3_open_v2(path, &db->sql,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                        NULL) != SQLITE_OK ||
        sqlite3_exec(db->sql, SCHEMA, NULL, NULL, &msg) != SQLITE_OK) {
        err_set(e, "database %s: %s", path, msg ? msg : sqlite3_errmsg(db->sql));
        sqlite3_free(msg);
        db_close(db);
        return NULL;
    }
    if (sqlite3_open_v2(path, &db->ckpt, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, NULL) !=
        SQLITE_OK) {
        err_set(e, "database %s: %s", path, sqlite3_errmsg(db->ckpt));
        db_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db->ckpt, 5000);
    char wal[4200];
    snprintf(wal, sizeof wal, "%s-wal", path);
    db->wal_fd = open(wal, O_RDONLY | O_CLOEXEC);
    if (db->wal_fd < 0) {
        err_set(e, "database %s: cannot open its WAL: %s", path, strerror(errno));
        db_close(db);
        return NULL;
    }
    pthread_t t;
    pthread_create(&t, NULL, committer, db);
    pthread_detach(t);
    return db;
}

void db_close(Db *db) {
    if (!db) return;
    if (db->wal_fd >= 0) close(db->wal_fd);
    sqlite3_close(db->ckpt);
    sqlite3_close(db->sql);
    pthread_mutex_destroy(&db->lock);
    free(db);
}

void agent_free(Agent *a) {
    free(a->public_pem);
    cJSON_Delete(a->caps);
    memset(a, 0, sizeof *a);
}

void job_free(Job *j) {
    cJSON_Delete(j->cell);
    memset(j, 0, sizeof *j);
}

/* --- statement helpers: prepare, bind by position, step ------------------------- */

static sqlite3_stmt *prep(Db *db, const char *sql) {
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
    return st;
}

static void exec(Db *db, const char *sql) { sqlite3_exec(db->sql, sql, NULL, NULL, NULL); }

/* The WAL holds every commit once it returns, so all commits survive a kill -9; with
 * sync "full" one that acknowledges something is also fsynced before the answer. The
 * fsync comes after the connection is released, so that claims and heartbeats never
 * wait behind the disk. It covers every frame written so far (this commit's included):
 * a checkpoint in between syncs the WAL before copying frames out of it, and the WAL is
 * only rewritten from its start after such a checkpoint. If the WAL cannot be synced,
 * nothing says which acknowledged rows are durable: stop, as PostgreSQL does, and let
 * the restart reconcile. */
static void unlock_acknowledged(Db *db) {
    pthread_mutex_unlock(&db->lock);
    if (db->sync_full && fdatasync(db->wal_fd) != 0) {
        fprintf(stderr, "farm: cannot fsync the database's WAL: %s\n", strerror(errno));
        abort();
    }
}

void db_set_sync(Db *db, int full) { db->sync_full = full; }

static const char *col_text(sqlite3_stmt *st, int i) {
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

static cJSON *col_json(sqlite3_stmt *st, int i) {
    cJSON *j = cJSON_Parse(col_text(st, i));
    return j ? j : cJSON_CreateNull();
}

/* Runs SQL with its one parameter bound to ID; returns the number of rows changed. */
static int exec_id(Db *db, const char *sql, long id) {
    sqlite3_stmt *st = prep(db, sql);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_step(st);
    sqlite3_finalize(st);
    return sqlite3_changes(db->sql);
}

static void event(Db *db, long job, long agent, const char *kind) {
    sqlite3_stmt *st = prep(db, "INSERT INTO events(job_id, agent_id, kind, at) VALUES(?,?,?,?)");
    sqlite3_bind_int64(st, 1, job);
    sqlite3_bind_int64(st, 2, agent);
    sqlite3_bind_text(st, 3, kind, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 4, timing_now_seconds());
    sqlite3_step(st);
    sqlite3_finalize(st);
}

/* --- agents ------------------------------------------------------------------------ */

int db_agent_enrol(Db *db, const char *name, const char *keyid, const char *public_pem,
                   const char *caps_json, const char *token_hash, long *id, Err *e) {
    pthread_mutex_lock(&db->lock);
    int rc = -1;
    sqlite3_stmt *st = prep(db, "SELECT id, revoked FROM agents WHERE keyid=?");
    sqlite3_bind_text(st, 1, keyid, -1, SQLITE_STATIC);
    int exists = sqlite3_step(st) == SQLITE_ROW;
    long found = exists ? (long)sqlite3_column_int64(st, 0) : 0;
    int revoked = exists && sqlite3_column_int(st, 1);
    sqlite3_finalize(st);
    if (revoked) {
        err_set(e, "this key belongs to a revoked agent");
        pthread_mutex_unlock(&db->lock);
        return -2;
    }
    st = prep(db,
              exists
                  ? "UPDATE agents SET name=?1, public_pem=?3, caps=?4, token_hash=?5, last_seen=?6"
                    " WHERE keyid=?2"
                  : "INSERT INTO agents(name, keyid, public_pem, caps, token_hash, enrolled_at,"
                    " last_seen) VALUES(?1,?2,?3,?4,?5,?6,?6)");
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, keyid, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, public_pem, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, caps_json, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, token_hash, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 6, timing_now_seconds());
    if (sqlite3_step(st) == SQLITE_DONE) {
        *id = exists ? found : (long)sqlite3_last_insert_rowid(db->sql);
        rc = 0;
    } else {
        err_set(e, "enrolment not stored: %s", sqlite3_errmsg(db->sql));
    }
    sqlite3_finalize(st);
    unlock_acknowledged(db);
    return rc;
}

int db_agent_by_token(Db *db, const char *token_hash, Agent *out) {
    pthread_mutex_lock(&db->lock);
    sqlite3_stmt *st = prep(db, "SELECT id, name, keyid, public_pem, caps, revoked FROM agents"
                                " WHERE token_hash=?");
    sqlite3_bind_text(st, 1, token_hash, -1, SQLITE_STATIC);
    int found = sqlite3_step(st) == SQLITE_ROW;
    if (found) {
        memset(out, 0, sizeof *out);
        out->id = (long)sqlite3_column_int64(st, 0);
        snprintf(out->name, sizeof out->name, "%s", col_text(st, 1));
        snprintf(out->keyid, sizeof out->keyid, "%s", col_text(st, 2));
        out->public_pem = strdup(col_text(st, 3));
        out->caps = col_json(st, 4);
        out->revoked = sqlite3_column_int(st, 5);
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&db->lock);
    return found && !out->revoked ? 1 : (found ? (agent_free(out), 0) : 0);
}

int db_agent_revoke(Db *db, long id) {
    pthread_mutex_lock(&db->lock);
    int changed = exec_id(db, "UPDATE agents SET revoked=1, token_hash=NULL WHERE id=?", id);
    /* Its running jobs go back to the queue now rather than when their leases end. */
    exec_id(db,
            "UPDATE jobs SET state='queued', agent_id=NULL, lease_expires=NULL"
            " WHERE agent_id=? AND state='running'",
            id);
    unlock_acknowledged(db);
    return changed ? 0 : -1;
}

/* --- blobs ------------------------------------------------------------------------- */

int db_blob_add(Db *db, const char *sha, long size) {
    pthread_mutex_lock(&db->lock);
    sqlite3_stmt *st = prep(db, "INSERT OR IGNORE INTO blobs(sha256, size, added_at)"
                                " VALUES(?,?,?)");
    sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, size);
    sqlite3_bind_double(st, 3, timing_now_seconds());
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
    unlock_acknowledged(db);
    return rc;
}

int db_blob_exists(Db *db, const char *sha, long *size) {
    pthread_mutex_lock(&db->lock);
    sqlite3_stmt *st = prep(db, "SELECT size FROM blobs WHERE sha256=?");
    sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC);
    int found = sqlite3_step(st) == SQLITE_ROW;
    if (found && size) *size = (long)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    pthread_mutex_unlock(&db->lock);
    return found;
}

/* --- runs -------------------------------------------------------------------------- */

long db_run_create(Db *db, const char *source_sha, const cJSON *matrix, const cJSON *cases,
                   const cJSON *jobs, Err *e) {
    char *matrix_text = cJSON_PrintUnformatted(matrix);
    char *cases_text = cJSON_PrintUnformatted(cases);
    pthread_mutex_lock(&db->lock);
    exec(db, "BEGIN IMMEDIATE");
    sqlite3_stmt *st = prep(db, "INSERT INTO runs(source_sha, matrix, cases, created_at)"
                                " VALUES(?,?,?,?)");
    sqlite3_bind_text(st, 1, source_sha, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, matrix_text, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, cases_text, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 4, timing_now_seconds());
    int ok = sqlite3_step(st) == SQLITE_DONE;
    sqlite3_finalize(st);
    long run = (long)sqlite3_last_insert_rowid(db->sql);
    st = prep(db, "INSERT INTO jobs(run_id, cell_id, cell, state, updated_at)"
                  " VALUES(?,?,?,'queued',?)");
    const cJSON *job;
    cJSON_ArrayForEach(job, jobs) {
        char *cell = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(job, "cell"));
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_text(st, 2, json_str(job, "cell_id"), -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, cell, -1, SQLITE_TRANSIENT);
        sqlite3_bind_double(st, 4, timing_now_seconds());
        ok = ok && sqlite3_step(st) == SQLITE_DONE;
        free(cell);
    }
    sqlite3_finalize(st);
    if (!ok) err_set(e, "run not stored: %s", sqlite3_errmsg(db->sql));
    exec(db, ok ? "COMMIT" : "ROLLBACK");
    unlock_acknowledged(db);
    free(matrix_text);
    free(cases_text);
    return ok ? run : -1;
}

int db_run_cancel(Db *db, long run_id) {
    pthread_mutex_lock(&db->lock);
    int found = exec_id(db, "UPDATE runs SET cancelled=1 WHERE id=?", run_id);
    sqlite3_stmt *st = prep(db, "UPDATE jobs SET state='cancelled', updated_at=? WHERE run_id=?"
                                " AND state IN ('queued','running')");
    sqlite3_bind_double(st, 1, timing_now_seconds());
    sqlite3_bind_int64(st, 2, run_id);
    sqlite3_step(st);
    sqlite3_finalize(st);
    unlock_acknowledged(db);
    return found ? 0 : -1;
}

/* --- jobs -------------------------------------------------------------------------- */

static void job_from_row(sqlite3_stmt *st, Job *out) {
    memset(out, 0, sizeof *out);
    out->id = (long)sqlite3_column_int64(st, 0);
    out->run_id = (long)sqlite3_column_int64(st, 1);
    snprintf(out->cell_id, sizeof out->cell_id, "%s", col_text(st, 2));
    out->cell = col_json(st, 3);
    snprintf(out->state, sizeof out->state, "%s", col_text(st, 4));
    out->agent_id = (long)sqlite3_column_int64(st, 5);
    out->attempt = sqlite3_column_int(st, 6);
    out->lease_expires = sqlite3_column_double(st, 7);
    snprintf(out->bundle_sha, sizeof out->bundle_sha, "%s", col_text(st, 8));
}

#define JOB_COLS "id, run_id, cell_id, cell, state, agent_id, attempt, lease_expires, bundle_sha"

int db_claim(Db *db, const Agent *agent, double lease_s, Job *out) {
    pthread_mutex_lock(&db->lock);
    sqlite3_stmt *st = prep(db, "SELECT " JOB_COLS " FROM jobs WHERE state='queued' ORDER BY id");
    int claimed = 0;
    while (!claimed && sqlite3_step(st) == SQLITE_ROW) {
        cJSON *cell = cJSON_Parse(col_text(st, 3));
        if (cell_fits(agent->caps, cell)) {
            job_from_row(st, out);
            claimed = 1;
        }
        cJSON_Delete(cell);
    }
    sqlite3_finalize(st);
    if (claimed) {
        double now = timing_now_seconds();
        out->attempt += 1;
        out->agent_id = agent->id;
        out->lease_expires = now + lease_s;
        snprintf(out->state, sizeof out->state, "running");
        st = prep(db, "UPDATE jobs SET state='running', agent_id=?, attempt=?, lease_expires=?,"
                      " progress='claimed', updated_at=? WHERE id=?");
        sqlite3_bind_int64(st, 1, agent->id);
        sqlite3_bind_int(st, 2, out->attempt);
        sqlite3_bind_double(st, 3, out->lease_expires);
        sqlite3_bind_double(st, 4, now);
        sqlite3_bind_int64(st, 5, out->id);
        sqlite3_step(st);
        sqlite3_finalize(st);
    }
    pthread_mutex_unlock(&db->lock);
    return claimed;
}

int db_heartbeat(Db *db, long job_id, long agent_id, double lease_s, const char *progress,
                 double *expires) {
    pthread_mutex_lock(&db->lock);
    sqlite3_stmt *st = prep(db, "SELECT state, agent_id FROM jobs WHERE id=?");
    sqlite3_bind_int64(st, 1, job_id);
    int rc = -1;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 1) == agent_id) {
        const char *state = col_text(st, 0);
        rc = !strcmp(state, "running") ? 0 : !strcmp(state, "cancelled") ? 1 : -1;
    }
    sqlite3_finalize(st);
    if (rc == 0) {
        *expires = timing_now_seconds() + lease_s;
        st = prep(db, "UPDATE jobs SET lease_expires=?, progress=?, updated_at=? WHERE id=?");
        sqlite3_bind_double(st, 1, *expires);
        sqlite3_bind_text(st, 2, progress ? progress : "", -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 3, timing_now_seconds());
        sqlite3_bind_int64(st, 4, job_id);
        sqlite3_step(st);
        sqlite3_finalize(st);
    }
    pthread_mutex_unlock(&db->lock);
    return rc;
}

int db_reap(Db *db, int max_attempts) {
    pthread_mutex_lock(&db->lock);
    double now = timing_now_seconds();
    exec(db, "BEGIN IMMEDIATE");
    sqlite3_stmt *st = prep(db, "SELECT id, agent_id FROM jobs WHERE state='running'"
                                " AND lease_expires < ?");
    sqlite3_bind_double(st, 1, now);
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        event(db, (long)sqlite3_column_int64(st, 0), (long)sqlite3_column_int64(st, 1),
              "agent_lost");
        n++;
    }
    sqlite3_finalize(st);
    if (n) {
        st = prep(db, "UPDATE jobs SET lost=lost+1, lease_expires=NULL, updated_at=?1,"
                      " state=CASE WHEN attempt >= ?2 THEN 'failed' ELSE 'queued' END,"
                      " failure=CASE WHEN attempt >= ?2 THEN 'agent_lost' ELSE failure END"
                      " WHERE state='running' AND lease_expires < ?1");
        sqlite3_bind_double(st, 1, now);
        sqlite3_bind_int(st, 2, max_attempts);
        sqlite3_step(st);
        sqlite3_finalize(st);
    }
    exec(db, "COMMIT");
    pthread_mutex_unlock(&db->lock);
    return n;
}

int db_job_get(Db *db, long job_id, Job *out) {
    pthread_mutex_lock(&db->lock);
    sqlite3_stmt *st = prep(db, "SELECT " JOB_COLS " FROM jobs WHERE id=?");
    sqlite3_bind_int64(st, 1, job_id);
    int found = sqlite3_step(st) == SQLITE_ROW;
    if (found) job_from_row(st, out);
    sqlite3_finalize(st);
    pthread_mutex_unlock(&db->lock);
    return found;
}

/* The filed folder's files, kept in the same commit as the job's row until db_settle
 * knows the folder itself is on disk. */
static int journal_add(Db *db, const DoneReq *r) {
    sqlite3_stmt *st = prep(db, "INSERT INTO unsettled(job_id, evidence, files) VALUES(?,?,?)");
    sqlite3_bind_int64(st, 1, r->job);
    sqlite3_bind_text(st, 2, r->rel, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, r->journal, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
    return rc;
}

/* Group commit: uploads that finish filing together share one commit and one fsync of
 * the WAL (see unlock_acknowledged). */
static void commit_batch(Db *db, DoneReq *batch) {
    pthread_mutex_lock(&db->lock);
    exec(db, "BEGIN IMMEDIATE");
    sqlite3_stmt *st = prep(db, "UPDATE jobs SET state='done', bundle_sha=?, evidence=?,"
                                " predicate=?, progress='filed', lease_expires=NULL,"
                                " updated_at=? WHERE id=? AND agent_id=? AND state='running'");
    for (DoneReq *r = batch; r; r = r->next) {
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, r->sha, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, r->rel, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, r->pred, -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 4, timing_now_seconds());
        sqlite3_bind_int64(st, 5, r->job);
        sqlite3_bind_int64(st, 6, r->agent);
        r->result = sqlite3_step(st) == SQLITE_DONE && sqlite3_changes(db->sql) == 1 ? 0 : -1;
        if (r->result == 0 && r->journal && journal_add(db, r) != 0) r->result = -1;
    }
    sqlite3_finalize(st);
    if (sqlite3_exec(db->sql, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        exec(db, "ROLLBACK");
        for (DoneReq *r = batch; r; r = r->next) r->result = -1;
    }
    unlock_acknowledged(db);
}

static void *committer(void *arg) {
    Db *db = arg;
    for (;;) {
        pthread_mutex_lock(&db->qlock);
        while (!db->pending) pthread_cond_wait(&db->queued, &db->qlock);
        DoneReq *batch = db->pending;
        db->pending = NULL;
        pthread_mutex_unlock(&db->qlock);
        commit_batch(db, batch);
        pthread_mutex_lock(&db->qlock);
        for (DoneReq *r = batch; r; r = r->next) r->finished = 1;
        pthread_cond_broadcast(&db->committed);
        pthread_mutex_unlock(&db->qlock);
    }
    return NULL;
}

int db_job_done(Db *db, long job_id, long agent_id, const char *bundle_sha,
                const char *evidence_path, const char *predicate_json, const char *journal) {
    DoneReq req = {job_id,  agent_id, bundle_sha, evidence_path, predicate_json,
                   journal, -1,       0,          NULL};
    pthread_mutex_lock(&db->qlock);
    req.next = db->pending;
    db->pending = &req;
    pthread_cond_signal(&db->queued);
    while (!req.finished) pthread_cond_wait(&db->committed, &db->qlock);
    pthread_mutex_unlock(&db->qlock);
    return req.result;
}

int db_run_of_job(Db *db, long run_id, char source_sha[SHA256_HEX_LEN], cJSON **cases,
                  double *timeout_s) {
    pthread_mutex_lock(&db->lock);
    sqlite3_stmt *st = prep(db, "SELECT source_sha, cases, matrix FROM runs WHERE id=?");
    sqlite3_bind_int64(st, 1, run_id);
    int found = sqlite3_step(st) == SQLITE_ROW;
    if (found) {
        snprintf(source_sha, SHA256_HEX_LEN, "%s", col_text(st, 0));
        *cases = col_json(st, 1);
        cJSON *matrix = col_json(st, 2);
        *timeout_s = json_num(matrix, "timeout_s", 300);
        cJSON_Delete(matrix);
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&db->lock);
    return found;
}

/* --- views ------------------------------------------------------------------------- */

static cJSON *rows_to_json(Db *db, const char *sql, long bind, const char *const *names,
                           const char *json_cols) {
    cJSON *arr = cJSON_CreateArray();
    pthread_mutex_lock(&db->lock);
    sqlite3_stmt *st = prep(db, sql);
    if (bind >= 0) sqlite3_bind_int64(st, 1, bind);
    while (sqlite3_step(st) == SQLITE_ROW) {
        cJSON *row = cJSON_CreateObject();
        for (int i = 0; names[i]; i++) {
            int type = sqlite3_column_type(st, i);
            if (json_cols[i] == 'j') cJSON_AddItemToObject(row, names[i], col_json(st, i));
            else if (type == SQLITE_NULL) cJSON_AddNullToObject(row, names[i]);
            else if (type == SQLITE_INTEGER || type == SQLITE_FLOAT)
                cJSON_AddNumberToObject(row, names[i], sqlite3_column_double(st, i));
            else cJSON_AddStringToObject(row, names[i], col_text(st, i));
        }
        cJSON_AddItemToArray(arr, row);
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&db->lock);
    return arr;
}

cJSON *db_run_view(Db *db, long run_id) {
    static const char *const run_cols[] = {"id",         "source_sha", "matrix", "cases",
                                           "created_at", "cancelled",  NULL};
    cJSON *runs = rows_to_json(db,
                               "SELECT id, source_sha, matrix, cases, created_at, cancelled"
                               " FROM runs WHERE id=?",
                               run_id, run_cols, "--jj--");
    cJSON *run = cJSON_DetachItemFromArray(runs, 0);
    cJSON_Delete(runs);
    if (!run) return NULL;
    static const char *const job_cols[] = {"job",     "cell_id",  "cell", "state",
                                           "agent",   "attempt",  "lost", "progress",
                                           "failure", "evidence", NULL};
    cJSON_AddItemToObject(
        run, "jobs",
        rows_to_json(
            db,
            "SELECT j.id, j.cell_id, j.cell, j.state, a.name, j.attempt, j.lost, j.progress,"
            " j.failure, j.evidence FROM jobs j LEFT JOIN agents a ON a.id=j.agent_id"
            " WHERE j.run_id=? ORDER BY j.id",
            run_id, job_cols, "--j-------"));
    return run;
}

cJSON *db_run_results(Db *db, long run_id) {
    static const char *const cols[] = {"job",           "cell_id",   "machine", "evidence",
                                       "bundle_sha256", "predicate", NULL};
    return rows_to_json(db,
                        "SELECT j.id, j.cell_id, a.name, j.evidence, j.bundle_sha,"
                        " j.predicate FROM jobs j JOIN agents a ON a.id=j.agent_id"
                        " WHERE j.run_id=? AND j.state='done' ORDER BY j.id",
                        run_id, cols, "-----j");
}

cJSON *db_status_view(Db *db) {
    static const char *const agent_cols[] = {"id",      "name",      "keyid", "caps",
                                             "revoked", "last_seen", NULL};
    static const char *const run_cols[] = {"id",   "source_sha", "jobs",      "queued", "running",
                                           "done", "failed",     "cancelled", NULL};
    cJSON *out = cJSON_CreateObject();
    cJSON_AddItemToObject(
        out, "agents",
        rows_to_json(db, "SELECT id, name, keyid, caps, revoked, last_seen FROM agents ORDER BY id",
                     -1, agent_cols, "---j--"));
    cJSON_AddItemToObject(
        out, "runs",
        rows_to_json(db,
                     "SELECT r.id, r.source_sha, COUNT(j.id), SUM(j.state='queued'),"
                     " SUM(j.state='running'), SUM(j.state='done'), SUM(j.state='failed'),"
                     " SUM(j.state='cancelled') FROM runs r LEFT JOIN jobs j ON j.run_id=r.id"
                     " GROUP BY r.id ORDER BY r.id",
                     -1, run_cols, "--------"));
    static const char *const event_cols[] = {"job", "agent", "kind", "at", NULL};
    cJSON_AddItemToObject(
        out, "events",
        rows_to_json(db, "SELECT job_id, agent_id, kind, at FROM events ORDER BY id DESC LIMIT 50",
                     -1, event_cols, "----"));
    return out;
}

cJSON *db_evidence_paths(Db *db) {
    static const char *const cols[] = {"evidence", NULL};
    return rows_to_json(db, "SELECT evidence FROM jobs WHERE state='done'", -1, cols, "-");
}

cJSON *db_unsettled(Db *db) {
    static const char *const cols[] = {"evidence", "files", NULL};
    return rows_to_json(db, "SELECT evidence, files FROM unsettled ORDER BY seq", -1, cols, "-j");
}

int db_settle(Db *db, int (*sync_files)(void *ctx), void *ctx) {
    pthread_mutex_lock(&db->lock);
    sqlite3_stmt *st = prep(db, "SELECT COALESCE(MAX(seq), 0) FROM unsettled");
    long last = sqlite3_step(st) == SQLITE_ROW ? (long)sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    pthread_mutex_unlock(&db->lock);
    /* Rows up to LAST were committed after their folders were written: once the file
     * system has synced, the folders no longer need them. Later rows wait for next time. */
    if (last == 0 || sync_files(ctx) != 0) return 0;
    pthread_mutex_lock(&db->lock);
    int n = exec_id(db, "DELETE FROM unsettled WHERE seq <= ?", last);
    pthread_mutex_unlock(&db->lock);
    return n;
}

void db_checkpoint(Db *db) {
    sqlite3_wal_checkpoint_v2(db->ckpt, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
}
