/* db_backend_internal.h: what the store's logic (db.c, written once) asks of a back end
 * (db_sqlite.c, db_pg.c): borrowed connections, statements whose parameters are
 * written $1, $2... (both SQLite and PostgreSQL read that spelling), and their rows.
 * Private to farm/db/. The files depend on each other in one direction only: the back
 * ends fill in this table and use db.c's shared helpers below; db.c calls a back end
 * only through the table; db_open.c, the factory, is the one file that names both back
 * ends' constructors. */
#ifndef CAIRN_FARM_DB_BACKEND_INTERNAL_H
#define CAIRN_FARM_DB_BACKEND_INTERNAL_H

#include <pthread.h>

#include "db/db.h"

/* One bound parameter: 'i' integer, 'd' real, 's' text (NULL text binds SQL NULL). */
typedef struct {
    char kind;
    long long i;
    double d;
    const char *s;
} DbArg;

#define DB_INT(x)  ((DbArg){'i', (long long)(x), 0, NULL})
#define DB_REAL(x) ((DbArg){'d', 0, (x), NULL})
#define DB_TEXT(x) ((DbArg){'s', 0, 0, (x)})
/* An argument list for db_query and db_exec: DB_ARGS(DB_INT(id), DB_TEXT(name)). */
#define DB_ARGS(...)                                                                               \
    (const DbArg[]){__VA_ARGS__}, (int)(sizeof((DbArg[]){__VA_ARGS__}) / sizeof(DbArg))
#define DB_NO_ARGS NULL, 0

typedef struct DbConn DbConn;
typedef struct DbRows DbRows;

typedef struct {
    /* Lends a connection for one call. DURABLE: the call acknowledges something, so its
     * commits must be durable (as far as the sync setting asks) when release returns. */
    DbConn *(*acquire)(Db *db, int durable);
    void (*release)(Db *db, DbConn *c, int durable);
    /* Runs SQL; its rows are read with next (the first call gives the first row). */
    DbRows *(*query)(DbConn *c, const char *sql, const DbArg *args, int n);
    int (*next)(DbRows *r);                  /* 1: a row is there */
    int (*failed)(const DbRows *r);          /* the statement failed */
    long (*changes)(const DbRows *r);        /* rows changed by an INSERT, UPDATE or DELETE */
    const char *(*text)(DbRows *r, int col); /* NULL for SQL NULL */
    double (*real)(DbRows *r, int col);
    int (*is_number)(DbRows *r, int col);
    void (*finish)(DbRows *r);
    const char *(*error)(DbConn *c);
    /* On the reaper's tick: > 0 when another coordinator said that jobs may have become
     * claimable (db_reap passes that on); NULL when there are no others. */
    int (*news)(Db *db);
    /* Background upkeep, off the request path (FINAL: as the coordinator stops); or NULL. */
    void (*checkpoint)(Db *db, int final);
    void (*limit_wal)(Db *db, long pages); /* db_set_wal_pages; or NULL */
    /* The collector's lock across every process sharing the store (db_collector_lock):
     * TAKE 1 tries to take it (1 taken, 0 held by another, -1 failure), 0 gives it back. */
    int (*collector)(Db *db, int take);
    /* Tells the other coordinators that jobs were queued (inside the committing
     * transaction); NULL when there are none. */
    void (*announce)(DbConn *c);
    void (*close)(Db *db);
    const char *begin; /* starts a write transaction */
    /* Claims for AGENT as db_claim says; NULL: db.c's scan under the write lock. */
    int (*claim)(Db *db, const Agent *agent, double lease_s, Job *out);
    int shared; /* other coordinators may use the same store */
    /* SQL selecting the ids of the coordinators proven alive, with $1 the time before
     * which a sign of life (coordinators.seen) of one without a life lock is stale; NULL
     * when no other coordinator shares the store (db_peers.c). */
    const char *live;
    /* Registers this coordinator (db->coordinator) and takes its life lock, held for as
     * long as it lives; NULL when there are no others. */
    void (*enlist)(Db *db);
} DbBackend;

/* A filed bundle waiting for the group commit (see db_job_done). */
typedef struct DoneReq {
    long job, agent;
    const char *sha, *rel, *pred, *manifest, *test_result;
    int result, finished;
    struct DoneReq *next;
} DoneReq;

/* The part of every back end's handle that db.c uses; back ends embed it first. */
struct Db {
    const DbBackend *be;
    int sync_full;             /* acknowledging commits are durable against power loss */
    char coordinator[96];      /* this process: host-pid, in temp names and journal rows */
    pthread_mutex_t qlock;     /* guards pending, committing and the finished flags */
    pthread_cond_t committed;  /* a group commit ended */
    DoneReq *pending;          /* filings waiting for the next group commit */
    atomic_ulong pool_waits;   /* acquisitions that found no connection free (db_metrics) */
    atomic_ulong pool_wait_us; /* ... and how long they waited, in microseconds */
    int committing;            /* a filing is committing a group now (its leader) */
};

/* Statements over a borrowed connection, for db.c and the store's other files (db_*.c):
 * SQL's rows (read with be->next), or how many rows SQL changed (-1 on failure); a
 * column as text ("" for NULL), as a long, or parsed as JSON (null when it is not). */
DbRows *db_query(Db *db, DbConn *c, const char *sql, const DbArg *args, int n);
long db_exec(Db *db, DbConn *c, const char *sql, const DbArg *args, int n);
const char *db_col_text(Db *db, DbRows *r, int col);
/* SQL's first row's first column, on a connection of their own: as text the caller frees,
 * or parsed as JSON; NULL with no row. */
char *db_first_text(Db *db, const char *sql, const DbArg *args, int n);
cJSON *db_first_json(Db *db, const char *sql, const DbArg *args, int n);
long db_col_long(Db *db, DbRows *r, int col);
cJSON *db_col_json(Db *db, DbRows *r, int col);
/* Rows of SQL with its ARGS as JSON objects named NAMES; JSON_COLS has a 'j' for each
 * column that holds JSON text (a null column is null, a number a number). */
cJSON *db_rows_json(Db *db, const char *sql, const DbArg *args, int n, const char *const *names,
                    const char *json_cols);
/* Whether AGENT is revoked (or unknown) in the store. */
int db_agent_revoked(Db *db, DbConn *c, long agent);

/* A back end's acquire found no connection free at STARTED (timing_monotonic_seconds()):
 * counts the wait now that it has one (GET /metrics). */
void db_note_pool_wait(Db *db, double started);

/* Back ends' constructors, called by db_open.c alone: each connects, creates the schema
 * when missing and sets its table in the handle's be; db_open then calls
 * db_init_common. */
Db *db_sqlite_open(const char *path, Err *e);
Db *db_pg_open(const char *conninfo, Err *e);
/* A job's columns as claims and db_job_get read them, and OUT filled from such a row. */
#define DB_JOB_COLS "id, run_id, cell_id, cell, state, agent_id, attempt, lease_expires, bundle_sha"
void db_job_from_row(Db *db, DbRows *r, Job *out);
/* The schema (malloc'd SQL); KEY is the type of an id the store assigns. Then the
 * columns added since ("TABLE COLUMN TYPE", NULL-terminated), which each back end adds
 * where missing, and what needs them (indexes). */
char *db_schema(const char *key);
extern const char *const db_added_columns[];
extern const char db_schema_late[];
/* Fills in the shared part of a handle a back end opened (its be already set) and
 * readies the group commit (db_job_done). */
void db_init_common(Db *db);

#endif
