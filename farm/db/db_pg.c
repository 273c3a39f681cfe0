/* db_pg.c: the store in PostgreSQL through libpq ("store": "postgresql://..."), which
 * several coordinators may share (a back end: db_backend_internal.h). A small pool of
 * connections lent to one call each; a claim locks the queued rows it reads with FOR
 * UPDATE SKIP LOCKED, so two coordinators never hand one job to two agents. Commits
 * that acknowledge something run with synchronous_commit on (sync "full"): PostgreSQL
 * has flushed its WAL before the answer; the others run with it off, which after a
 * crash of the database server may only roll back lease bookkeeping. Coordinators tell
 * each other about queued and requeued jobs with NOTIFY on one channel; each listens on
 * a connection of its own, read on the reaper's tick. */
#include "db/db_backend_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <libpq-fe.h>

#include "core/core.h"

/* Connections per coordinator: the HTTP threads' calls (one of them committing a group
 * of filings) and the reaper each borrow one for the length of a call. */
#define PG_POOL 8

/* Serializes schema creation between coordinators starting at once. */
#define SCHEMA_LOCK 0x636169726eL

/* The first key of every coordinator's life lock (pg_advisory_lock(LIFE_LOCKS, KEY),
 * KEY its own): PostgreSQL holds it for as long as the coordinator's connection lives,
 * so a coordinator whose lock is free is gone (db_peers.c). "cair" in ASCII. */
#define LIFE_LOCKS 1667328370L

/* The coordinators whose life lock is held in this database ($1: before it, the sign
 * of life of a coordinator from before the life locks is stale). */
#define LIVE_SQL                                                                                   \
    "SELECT c.id FROM coordinators c WHERE EXISTS (SELECT 1 FROM pg_locks l WHERE"                 \
    " l.locktype='advisory' AND l.granted AND l.objsubid=2 AND l.classid=1667328370"               \
    " AND l.objid=c.lock_key::oid AND l.database=(SELECT oid FROM pg_database"                     \
    " WHERE datname=current_database())) OR (c.lock_key IS NULL AND c.seen > $1)"

/* The collector's lock (db_collector_lock): one collection at a time among every
 * coordinator on this database. "cairg" in ASCII. */
#define COLLECTOR_LOCK 0x6361697267L

#define CHANNEL "cairn_farm_jobs"

/* Statements each connection keeps prepared (parsed and planned once), by SQL text. */
#define PG_PREPARED 64

typedef struct {
    PGconn *pg;
    int busy;
    int sync_on;                 /* the session's synchronous_commit, -1 unknown */
    char *prepared[PG_PREPARED]; /* statement "sI" is prepared[I] */
    int nprepared;
} PgConn;

typedef struct {
    Db base;
    PgConn conns[PG_POOL];
    pthread_mutex_t lock; /* guards busy flags */
    pthread_cond_t freed;
    PGconn *listen;    /* LISTENs on CHANNEL and holds the life lock; the reaper's alone */
    long life_key;     /* this coordinator's life lock's second key (0: none held) */
    PgConn *collector; /* the pool's connection holding the collector's lock, or NULL */
} PgDb;

typedef struct {
    PGresult *res;
    int row, failed;
    long changes;
} PgRows;

static void forget_prepared(PgConn *c) {
    for (int i = 0; i < c->nprepared; i++) free(c->prepared[i]);
    c->nprepared = 0;
}

/* Lends a free connection, preferring one whose synchronous_commit is already what the
 * call wants (switching it costs a round trip). */
static DbConn *pg_acquire(Db *db, int durable) {
    PgDb *p = (PgDb *)db;
    int want = durable && db->sync_full;
    pthread_mutex_lock(&p->lock);
    PgConn *c = NULL;
    double waited = 0;
    for (;;) {
        for (int i = 0; i < PG_POOL; i++)
            if (!p->conns[i].busy && (!c || p->conns[i].sync_on == want)) c = &p->conns[i];
        if (c) break;
        if (!waited) waited = timing_monotonic_seconds();
        pthread_cond_wait(&p->freed, &p->lock);
    }
    if (waited) db_note_pool_wait(db, waited);
    c->busy = 1;
    pthread_mutex_unlock(&p->lock);
    if (PQstatus(c->pg) != CONNECTION_OK) {
        PQreset(c->pg); /* a new session: nothing prepared, settings back to defaults */
        forget_prepared(c);
        c->sync_on = -1;
    }
    if (c->sync_on != want) {
        PQclear(
            PQexec(c->pg, want ? "SET synchronous_commit TO on" : "SET synchronous_commit TO off"));
        c->sync_on = want;
    }
    return (DbConn *)c;
}

static void pg_release(Db *db, DbConn *conn, int durable) {
    (void)durable;
    PgDb *p = (PgDb *)db;
    pthread_mutex_lock(&p->lock);
    ((PgConn *)conn)->busy = 0;
    pthread_cond_signal(&p->freed);
    pthread_mutex_unlock(&p->lock);
}

/* The name of SQL prepared on C ("sI"), preparing it on first use; NULL for what is
 * not worth keeping (transaction control) or when the cache is full or preparing fails. */
static const char *prepared(PgConn *c, const char *sql, int n, char *name, size_t cap) {
    if (strncmp(sql, "SELECT", 6) && strncmp(sql, "INSERT", 6) && strncmp(sql, "UPDATE", 6) &&
        strncmp(sql, "DELETE", 6))
        return NULL;
    int i = 0;
    while (i < c->nprepared && strcmp(c->prepared[i], sql) != 0) i++;
    snprintf(name, cap, "s%d", i);
    if (i < c->nprepared) return name;
    if (i == PG_PREPARED) return NULL;
    PGresult *res = PQprepare(c->pg, name, sql, n, NULL);
    int ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    PQclear(res);
    if (!ok) return NULL;
    c->prepared[c->nprepared++] = strdup(sql);
    return name;
}

/* Parameters travel as text; PostgreSQL infers their types from the statement. */
/* What a query that could not even be started (out of memory) returns: failed, no rows,
 * and nothing for pg_finish to free. */
static PgRows NO_ROWS = {.row = -1, .failed = 1};

static DbRows *pg_query(DbConn *conn, const char *sql, const DbArg *args, int n) {
    PgConn *c = (PgConn *)conn;
    char numbers[16][32];
    const char *values[16];
    PgRows *r = calloc(1, sizeof *r);
    if (!r) return (DbRows *)&NO_ROWS;
    r->row = -1;
    if (n > 16) {
        r->failed = 1;
        return (DbRows *)r;
    }
    for (int i = 0; i < n; i++) {
        values[i] = numbers[i];
        if (args[i].kind == 'i') snprintf(numbers[i], sizeof numbers[i], "%lld", args[i].i);
        else if (args[i].kind == 'd') snprintf(numbers[i], sizeof numbers[i], "%.17g", args[i].d);
        else values[i] = args[i].s;
    }
    char name[16];
    const char *stmt = prepared(c, sql, n, name, sizeof name);
    r->res = stmt ? PQexecPrepared(c->pg, stmt, n, values, NULL, NULL, 0)
                  : PQexecParams(c->pg, sql, n, NULL, values, NULL, NULL, 0);
    ExecStatusType st = PQresultStatus(r->res);
    r->failed = st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK;
    r->changes = atol(PQcmdTuples(r->res));
    return (DbRows *)r;
}

static int pg_next(DbRows *rows) {
    PgRows *r = (PgRows *)rows;
    if (r->failed || r->row + 1 >= PQntuples(r->res)) return 0;
    r->row++;
    return 1;
}

static int pg_failed(const DbRows *rows) { return ((const PgRows *)rows)->failed; }
static long pg_changes(const DbRows *rows) { return ((const PgRows *)rows)->changes; }

static const char *pg_text(DbRows *rows, int col) {
    PgRows *r = (PgRows *)rows;
    return PQgetisnull(r->res, r->row, col) ? NULL : PQgetvalue(r->res, r->row, col);
}

static double pg_real(DbRows *rows, int col) {
    const char *t = pg_text(rows, col);
    return t ? strtod(t, NULL) : 0;
}

static int pg_is_number(DbRows *rows, int col) {
    switch (PQftype(((PgRows *)rows)->res, col)) {
    case 20:
    case 21:
    case 23:
    case 700:
    case 701:
    case 1700: /* int8 int2 int4 float4 float8 numeric */ return 1;
    default: return 0;
    }
}

static void pg_finish(DbRows *rows) {
    PgRows *r = (PgRows *)rows;
    if (r == &NO_ROWS) return;
    PQclear(r->res);
    free(r);
}

static const char *pg_error(DbConn *c) { return PQerrorMessage(((PgConn *)c)->pg); }

static void pg_announce(DbConn *conn) {
    PgConn *c = (PgConn *)conn;
    PQclear(PQexec(c->pg, "NOTIFY " CHANNEL));
}

/* Takes this coordinator's life lock on the listening connection (the key it held
 * before, when it can: a connection that was reset lost it) and registers the key with
 * this coordinator's row, which the others read to tell whether it lives. */
static void pg_enlist(Db *db) {
    PgDb *p = (PgDb *)db;
    for (int tries = 0; tries < 64; tries++) {
        unsigned int r = 0;
        if (!p->life_key && getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) r = (unsigned)rand();
        long key = p->life_key ? p->life_key : 1 + (long)(r % 2147483646u);
        char sql[96];
        snprintf(sql, sizeof sql, "SELECT pg_try_advisory_lock(%ld, %ld)", LIFE_LOCKS, key);
        PGresult *res = PQexec(p->listen, sql);
        int got = PQresultStatus(res) == PGRES_TUPLES_OK && !strcmp(PQgetvalue(res, 0, 0), "t");
        PQclear(res);
        p->life_key = got ? key : 0; /* another coordinator's: draw again */
        if (got) break;
    }
    char seen[32], key[32];
    snprintf(seen, sizeof seen, "%.17g", timing_now_seconds());
    snprintf(key, sizeof key, "%ld", p->life_key);
    const char *values[] = {db->coordinator, seen, p->life_key ? key : NULL};
    PQclear(PQexecParams(p->listen,
                         "INSERT INTO coordinators(id, seen, lock_key) VALUES($1,$2,$3)"
                         " ON CONFLICT(id) DO UPDATE SET seen=excluded.seen,"
                         " lock_key=excluded.lock_key",
                         3, NULL, values, NULL, NULL, 0));
}

/* Takes the collector's lock on a connection borrowed from the pool and kept until it
 * is given back (a session lock: PostgreSQL drops it with the connection, so a holder
 * killed mid-collection holds nothing). */
static int pg_collector(Db *db, int take) {
    PgDb *p = (PgDb *)db;
    char sql[96];
    if (!take) {
        if (!p->collector) return 0;
        snprintf(sql, sizeof sql, "SELECT pg_advisory_unlock(%ld)", COLLECTOR_LOCK);
        PQclear(PQexec(p->collector->pg, sql));
        pg_release(db, (DbConn *)p->collector, 0);
        p->collector = NULL;
        return 0;
    }
    PgConn *c = (PgConn *)pg_acquire(db, 0);
    snprintf(sql, sizeof sql, "SELECT pg_try_advisory_lock(%ld)", COLLECTOR_LOCK);
    PGresult *res = PQexec(c->pg, sql);
    int got = PQresultStatus(res) != PGRES_TUPLES_OK ? -1 : !strcmp(PQgetvalue(res, 0, 0), "t");
    PQclear(res);
    if (got == 1) p->collector = c;
    else pg_release(db, (DbConn *)c, 0);
    return got;
}

/* Whether any coordinator announced jobs since the last tick (this one's own
 * announcements included: its waiters were woken already, one more wake is harmless). */
static int pg_news(Db *db) {
    PgDb *p = (PgDb *)db;
    if (PQstatus(p->listen) != CONNECTION_OK) {
        PQreset(p->listen);
        PQclear(PQexec(p->listen, "LISTEN " CHANNEL));
        pg_enlist(db); /* the reset connection holds no lock: alive again */
        return 1;      /* announcements may have been missed meanwhile */
    }
    int news = 0;
    PQconsumeInput(p->listen);
    PGnotify *n;
    while ((n = PQnotifies(p->listen)) != NULL) {
        news = 1;
        PQfreemem(n);
    }
    return news;
}

/* Claims scan this many queued jobs at a time for those the agent can run. */
#define CLAIM_PAGE 16
/* A claim whose candidates were all taken by others meanwhile scans again, this often. */
#define CLAIM_TRIES 8

/* Up to a page of queued jobs after *AFTER that AGENT can run, as a PostgreSQL array
 * literal in IDS; returns how many rows the page held (*AFTER moves to its last). */
static int claim_candidates(DbConn *c, const Agent *agent, long *after, char *ids, size_t cap,
                            int *fitting) {
    DbRows *r = pg_query(c,
                         "SELECT id, cell FROM jobs WHERE state='queued' AND id > $1"
                         " ORDER BY id LIMIT $2",
                         DB_ARGS(DB_INT(*after), DB_INT(CLAIM_PAGE)));
    int seen = 0;
    size_t used = (size_t)snprintf(ids, cap, "{");
    *fitting = 0;
    while (pg_next(r)) {
        seen++;
        *after = (long)pg_real(r, 0);
        cJSON *cell = cJSON_Parse(pg_text(r, 1));
        if (matrix_cell_fits(agent->caps->json, cell) && used + 24 < cap)
            used +=
                (size_t)snprintf(ids + used, cap - used, "%s%ld", (*fitting)++ ? "," : "", *after);
        cJSON_Delete(cell);
    }
    snprintf(ids + used, cap - used, "}");
    pg_finish(r);
    return seen;
}

/* Claims in two statements and no explicit transaction: a scan without locks finds the
 * queued jobs AGENT can run, and one UPDATE takes the first of them that is still
 * queued and that no other claim holds (FOR UPDATE SKIP LOCKED), at this coordinator or
 * another: one job never goes to two agents, and concurrent claims take different rows
 * instead of queueing behind one. */
static int pg_claim(Db *db, const Agent *agent, double lease_s, Job *out) {
    DbConn *c = pg_acquire(db, 0);
    char ids[CLAIM_PAGE * 24];
    long after = 0;
    int claimed = 0, tries = 0, fitting;
    while (claimed == 0) {
        int seen = claim_candidates(c, agent, &after, ids, sizeof ids, &fitting);
        if (fitting) {
            double now = timing_steady_seconds(); /* leases: no wall-clock step moves them */
            DbRows *r = pg_query(
                c,
                "UPDATE jobs SET state='running', agent_id=$1, attempt=attempt+1,"
                " lease_expires=$2, progress='claimed', updated_at=$3, claimed_at=$3 WHERE id=(SELECT id"
                " FROM jobs WHERE id=ANY($4::bigint[]) AND state='queued' ORDER BY id LIMIT 1"
                " FOR UPDATE SKIP LOCKED) AND EXISTS (SELECT 1 FROM agents WHERE id=$1 AND"
                " revoked=0) RETURNING " DB_JOB_COLS,
                DB_ARGS(DB_INT(agent->id), DB_REAL(now + lease_s), DB_REAL(now), DB_TEXT(ids)));
            if ((claimed = pg_next(r))) db_job_from_row(db, r, out);
            pg_finish(r);
            if (!claimed && db_agent_revoked(db, c, agent->id)) {
                claimed = -1; /* the store's word: a cache may be a moment behind it */
                break;
            }
            if (!claimed && ++tries < CLAIM_TRIES) after = 0; /* all taken meanwhile */
            else if (!claimed) break;
        } else if (seen < CLAIM_PAGE) {
            break;
        }
    }
    pg_release(db, c, 0);
    return claimed;
}

static void pg_close(Db *db) {
    PgDb *p = (PgDb *)db;
    for (int i = 0; i < PG_POOL; i++) {
        if (p->conns[i].pg) PQfinish(p->conns[i].pg);
        forget_prepared(&p->conns[i]);
    }
    if (p->listen) PQfinish(p->listen);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->freed);
    free(p);
}

static const DbBackend PG_BACKEND = {
    .acquire = pg_acquire,
    .release = pg_release,
    .query = pg_query,
    .next = pg_next,
    .failed = pg_failed,
    .changes = pg_changes,
    .text = pg_text,
    .real = pg_real,
    .is_number = pg_is_number,
    .finish = pg_finish,
    .error = pg_error,
    .news = pg_news,
    .checkpoint = NULL,
    .limit_wal = NULL,
    .collector = pg_collector,
    .announce = pg_announce,
    .close = pg_close,
    .begin = "BEGIN",
    .claim = pg_claim,
    .shared = 1,
    .live = LIVE_SQL,
    .enlist = pg_enlist,
};

static int pg_ok(PGresult *res) {
    ExecStatusType st = PQresultStatus(res);
    PQclear(res);
    return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
}

/* Opens the pool and the listening connection and creates the schema when missing. */
static int pg_connect(PgDb *p, const char *conninfo, Err *e) {
    for (int i = 0; i <= PG_POOL; i++) {
        PGconn *pg = PQconnectdb(conninfo);
        if (PQstatus(pg) != CONNECTION_OK) {
            err_set(e, "PostgreSQL store: %s", PQerrorMessage(pg));
            PQfinish(pg);
            return -1;
        }
        PQclear(PQexec(pg, "SET client_min_messages TO warning"));
        if (i < PG_POOL) p->conns[i] = (PgConn){.pg = pg, .sync_on = -1};
        else p->listen = pg;
    }
    /* under the schema lock: the tables, the columns a store from before them lacks, and
     * what needs those */
    char *schema = db_schema("BIGSERIAL PRIMARY KEY"), *sql = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&sql, &len);
    fprintf(f, "SELECT pg_advisory_lock(%ld);%s", SCHEMA_LOCK, schema);
    for (int i = 0; db_added_columns[i]; i++) {
        const char *space = strchr(db_added_columns[i], ' ');
        fprintf(f, "ALTER TABLE %.*s ADD COLUMN IF NOT EXISTS%s;",
                (int)(space - db_added_columns[i]), db_added_columns[i], space);
    }
    fprintf(f, "%sSELECT pg_advisory_unlock(%ld);", db_schema_late, SCHEMA_LOCK);
    fclose(f);
    int ok = pg_ok(PQexec(p->conns[0].pg, sql));
    free(schema);
    free(sql);
    if (!ok) return err_set(e, "PostgreSQL store: %s", PQerrorMessage(p->conns[0].pg));
    if (!pg_ok(PQexec(p->listen, "LISTEN " CHANNEL)))
        return err_set(e, "PostgreSQL store: %s", PQerrorMessage(p->listen));
    return 0;
}

Db *db_pg_open(const char *conninfo, Err *e) {
    PgDb *p = calloc(1, sizeof *p);
    p->base.be = &PG_BACKEND;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->freed, NULL);
    if (pg_connect(p, conninfo, e) != 0) {
        pg_close(&p->base);
        return NULL;
    }
    return &p->base;
}
