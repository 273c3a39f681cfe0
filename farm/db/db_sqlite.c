/* db_sqlite.c: the store in an SQLite file (WAL), the default back end
 * (db_backend_internal.h). One connection guarded by one mutex, lent to one call at a
 * time. Every commit is in the WAL before the call returns, so it survives a kill -9 of
 * the coordinator. With sync "full", a call that acknowledges something also fsyncs the
 * WAL before the answer (release, after the connection is unlocked). */
#include "db/db_backend_internal.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdint.h>

#include <sqlite3.h>

/* Prepared statements kept by their SQL text: preparing (parsing and planning) every
 * query anew cost 15 to 25% of the coordinator's CPU time per job under the load test,
 * and the store speaks a few dozen fixed statements, nearly all string literals. A
 * statement's slot is the hash of its text, remembered by the text's address so that a
 * literal is hashed once (a text found at a known address is still compared whole with
 * its slot's). A slot is lent to one query at a time. */
#define STATEMENTS 256

typedef struct {
    char *sql;
    sqlite3_stmt *st;
    int busy;
} Statement;

typedef struct {
    const char *at; /* a text's address */
    unsigned slot;  /* its hash's slot */
} Seen;

typedef struct {
    Db base;
    sqlite3 *sql;
    sqlite3 *ckpt; /* a second connection: checkpoints off the request path */
    pthread_mutex_t lock;
    int wal_fd;                 /* the WAL file, fsynced by acknowledging calls */
    int collector_fd;           /* FILE-collector, flocked by the collector (sq_collector) */
    Statement kept[STATEMENTS]; /* under lock, like the connection */
    Seen seen[STATEMENTS];      /* by address: which slot a text hashed to */
} SqliteDb;

/* A statement and where its stepping stands (the first step runs in query). */
typedef struct {
    sqlite3_stmt *st;
    Statement *kept; /* the slot it was lent from, or NULL: finalized when done */
    int rc, fresh;
    long changes;
} SqliteRows;

static const char PRAGMAS[] = "PRAGMA journal_mode=WAL;"
                              "PRAGMA busy_timeout=5000;"
                              "PRAGMA synchronous=NORMAL;";

static DbConn *sq_acquire(Db *db, int durable) {
    (void)durable;
    SqliteDb *s = (SqliteDb *)db;
    if (pthread_mutex_trylock(&s->lock) != 0) {
        double started = timing_monotonic_seconds();
        pthread_mutex_lock(&s->lock);
        db_note_pool_wait(db, started);
    }
    return (DbConn *)s;
}

/* The fsync comes after the connection is released, so that claims and heartbeats
 * never wait behind the disk. It covers every frame written so far (this commit's
 * included): a checkpoint in between syncs the WAL before copying frames out of it,
 * and the WAL is only rewritten from its start after such a checkpoint. If the WAL
 * cannot be synced, nothing says which acknowledged rows are durable: stop, as
 * PostgreSQL does, and let the restart reconcile. */
static void sq_release(Db *db, DbConn *c, int durable) {
    (void)c;
    SqliteDb *s = (SqliteDb *)db;
    pthread_mutex_unlock(&s->lock);
    if (durable && db->sync_full && fdatasync(s->wal_fd) != 0) {
        fprintf(stderr, "farm: cannot fsync the database's WAL: %s\n", strerror(errno));
        abort();
    }
}

/* Slots tried from a text's hash on: the one holding the text, else the first empty one
 * (with one slot per hash, two statements whose hashes met were prepared anew at every
 * call: the reporter's, 8% of the coordinator's CPU under the load test). */
#define PROBES 8

/* The slot of statement SQL, found by its address when seen before: the one that keeps
 * it, else an empty one to keep it in, else (all PROBES taken) its hash's own. */
static Statement *slot_of(SqliteDb *s, const char *sql) {
    Seen *x = &s->seen[((uintptr_t)sql >> 4) % STATEMENTS];
    Statement *k = x->at == sql ? &s->kept[x->slot] : NULL;
    if (k && k->sql && !strcmp(k->sql, sql)) return k;
    unsigned long h = 5381;
    for (const char *p = sql; *p; p++) h = h * 33 + (unsigned char)*p;
    unsigned home = (unsigned)(h % STATEMENTS), slot = home, empty = STATEMENTS;
    for (unsigned i = 0; i < PROBES; i++) {
        unsigned at = (home + i) % STATEMENTS;
        if (!s->kept[at].sql) {
            empty = empty < STATEMENTS ? empty : at;
        } else if (!strcmp(s->kept[at].sql, sql)) {
            empty = STATEMENTS;
            slot = at;
            break;
        }
    }
    *x = (Seen){sql, empty < STATEMENTS ? empty : slot};
    return &s->kept[x->slot];
}

/* Lends R a prepared statement for SQL: a kept one when its slot is free, else a new
 * one, kept in the slot when the slot is empty. */
static int prepare(SqliteDb *s, const char *sql, SqliteRows *r) {
    Statement *k = slot_of(s, sql);
    if (k->sql && !k->busy && !strcmp(k->sql, sql)) {
        k->busy = 1;
        r->st = k->st;
        r->kept = k;
        return 0;
    }
    unsigned flags = k->sql ? 0 : SQLITE_PREPARE_PERSISTENT;
    if (sqlite3_prepare_v3(s->sql, sql, -1, flags, &r->st, NULL) != SQLITE_OK) return -1;
    if (!k->sql && (k->sql = strdup(sql)) != NULL) { /* kept, unless out of memory */
        k->st = r->st;
        k->busy = 1;
        r->kept = k;
    }
    return 0;
}

/* What a query that could not even be started (out of memory) returns: failed, no rows,
 * and nothing for sq_finish to free. */
static SqliteRows NO_ROWS = {.rc = SQLITE_NOMEM};

static DbRows *sq_query(DbConn *c, const char *sql, const DbArg *args, int n) {
    SqliteDb *s = (SqliteDb *)c;
    SqliteRows *r = calloc(1, sizeof *r);
    if (!r) return (DbRows *)&NO_ROWS;
    r->fresh = 1;
    if (prepare(s, sql, r) != 0) {
        r->rc = SQLITE_ERROR;
        return (DbRows *)r;
    }
    /* $N names are numbered by first appearance: bind each by its name. */
    static const char *const names[] = {"$1", "$2",  "$3",  "$4",  "$5",  "$6",  "$7",  "$8",
                                        "$9", "$10", "$11", "$12", "$13", "$14", "$15", "$16"};
    assert(n <= (int)(sizeof names / sizeof names[0]));
    for (int i = 0; i < n; i++) {
        int at = sqlite3_bind_parameter_index(r->st, names[i]);
        if (at == 0) continue;
        if (args[i].kind == 'i') sqlite3_bind_int64(r->st, at, args[i].i);
        else if (args[i].kind == 'd') sqlite3_bind_double(r->st, at, args[i].d);
        else if (args[i].s) sqlite3_bind_text(r->st, at, args[i].s, -1, SQLITE_STATIC);
    }
    r->rc = sqlite3_step(r->st);
    r->changes = sqlite3_changes(s->sql);
    return (DbRows *)r;
}

static int sq_next(DbRows *rows) {
    SqliteRows *r = (SqliteRows *)rows;
    if (!r->fresh && r->rc == SQLITE_ROW) r->rc = sqlite3_step(r->st);
    r->fresh = 0;
    return r->rc == SQLITE_ROW;
}

static int sq_failed(const DbRows *rows) {
    const SqliteRows *r = (const SqliteRows *)rows;
    return r->rc != SQLITE_ROW && r->rc != SQLITE_DONE;
}

static long sq_changes(const DbRows *rows) { return ((const SqliteRows *)rows)->changes; }

static const char *sq_text(DbRows *rows, int col) {
    return (const char *)sqlite3_column_text(((SqliteRows *)rows)->st, col);
}

static double sq_real(DbRows *rows, int col) {
    return sqlite3_column_double(((SqliteRows *)rows)->st, col);
}

static int sq_is_number(DbRows *rows, int col) {
    int type = sqlite3_column_type(((SqliteRows *)rows)->st, col);
    return type == SQLITE_INTEGER || type == SQLITE_FLOAT;
}

static void sq_finish(DbRows *rows) {
    SqliteRows *r = (SqliteRows *)rows;
    if (r == &NO_ROWS) return;
    if (r->kept) {
        sqlite3_reset(r->st);
        sqlite3_clear_bindings(r->st);
        r->kept->busy = 0;
    } else {
        sqlite3_finalize(r->st);
    }
    free(r);
}

static const char *sq_error(DbConn *c) { return sqlite3_errmsg(((SqliteDb *)c)->sql); }

/* Copies the WAL back into the database, passive (never waiting for a writer) and on
 * its own connection, so that claims and uploads seldom pay for the copy and the fsync
 * of farm.db. Two things kept the WAL growing without end (20.7 MB after 300 jobs,
 * farm.db at 4 KiB): a connection opens the WAL at its first read, and a checkpoint on
 * one that has not read copies nothing and still returns SQLITE_OK (this one never ran a
 * statement), so it reads first; and under steady load a passive checkpoint never
 * catches up with the writers, while the WAL starts over only once all of it is copied.
 * So the writing connection also checkpoints, as SQLite does by default, when a commit
 * leaves wal_pages frames in the WAL (sq_limit_wal): it copies only what this pass has
 * not. The final checkpoint empties the WAL. */
static void sq_checkpoint(Db *db, int final) {
    SqliteDb *s = (SqliteDb *)db;
    sqlite3_exec(s->ckpt, "SELECT COUNT(*) FROM sqlite_master", NULL, NULL, NULL);
    sqlite3_wal_checkpoint_v2(
        s->ckpt, NULL, final ? SQLITE_CHECKPOINT_TRUNCATE : SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
}

/* The WAL's limit on the writing connection: a commit that leaves PAGES frames in it
 * checkpoints (passive), and SQLite cuts the WAL back to PAGES pages when the next
 * commit starts it over. */
static void sq_limit_wal(Db *db, long pages) {
    SqliteDb *s = (SqliteDb *)db;
    char sql[64];
    pthread_mutex_lock(&s->lock);
    int size = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->sql, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        size = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    snprintf(sql, sizeof sql, "PRAGMA journal_size_limit=%lld; PRAGMA wal_autocheckpoint=%ld;",
             (long long)pages * (size ? size : 4096), pages);
    sqlite3_exec(s->sql, sql, NULL, NULL, NULL);
    pthread_mutex_unlock(&s->lock);
}

/* The collector's lock: an flock on the file beside the database, which every process
 * opening the same database opens on its own (so they exclude each other) and which the
 * kernel releases when its holder dies. */
static int sq_collector(Db *db, int take) {
    SqliteDb *s = (SqliteDb *)db;
    if (!take) return flock(s->collector_fd, LOCK_UN);
    if (flock(s->collector_fd, LOCK_EX | LOCK_NB) == 0) return 1;
    return errno == EWOULDBLOCK ? 0 : -1;
}

static void sq_close(Db *db) {
    SqliteDb *s = (SqliteDb *)db;
    for (int i = 0; i < STATEMENTS; i++) {
        sqlite3_finalize(s->kept[i].st);
        free(s->kept[i].sql);
    }
    if (s->wal_fd >= 0) close(s->wal_fd);
    if (s->collector_fd >= 0) close(s->collector_fd);
    sqlite3_close(s->ckpt);
    sqlite3_close(s->sql);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static const DbBackend SQLITE_BACKEND = {
    .acquire = sq_acquire,
    .release = sq_release,
    .query = sq_query,
    .next = sq_next,
    .failed = sq_failed,
    .changes = sq_changes,
    .text = sq_text,
    .real = sq_real,
    .is_number = sq_is_number,
    .finish = sq_finish,
    .error = sq_error,
    .news = NULL,
    .checkpoint = sq_checkpoint,
    .limit_wal = sq_limit_wal,
    .collector = sq_collector,
    .announce = NULL,
    .close = sq_close,
    .begin = "BEGIN IMMEDIATE",
    .claim = NULL,
    .shared = 0,
};

/* The database file, made (or kept) readable by its owner alone: it holds agents' token
 * hashes and every filed predicate. SQLite gives its WAL and shared memory the same
 * mode. A database others could read is tightened, with a word. */
static int private_file(const char *path, Err *e) {
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0) close(fd);
        return err_set(e, "database %s: %s", path, strerror(errno));
    }
    if (st.st_mode & 077) {
        fprintf(stderr, "farm: %s could be read by others (mode %03o): now 600\n", path,
                (unsigned)(st.st_mode & 0777));
        fchmod(fd, st.st_mode & 0700);
        static const char *const sides[] = {"-wal", "-shm"};
        for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
            char side[4200];
            snprintf(side, sizeof side, "%s%s", path, sides[i]);
            chmod(side, st.st_mode & 0700);
        }
    }
    close(fd);
    return 0;
}

/* Opens both connections, creates the schema and opens the WAL for fsyncs. */
static int sq_connect(SqliteDb *s, const char *path, Err *e) {
    if (private_file(path, e) != 0) return -1;
    char *msg = NULL, *schema = db_schema("INTEGER PRIMARY KEY");
    int ok = sqlite3_open_v2(path, &s->sql,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                             NULL) == SQLITE_OK &&
             sqlite3_exec(s->sql, PRAGMAS, NULL, NULL, &msg) == SQLITE_OK &&
             sqlite3_exec(s->sql, schema, NULL, NULL, &msg) == SQLITE_OK;
    free(schema);
    /* Columns a farm.db from before them lacks are added once (the error on later opens,
     * "duplicate column", is expected), then what needs them. */
    for (int i = 0; ok && db_added_columns[i]; i++) {
        const char *space = strchr(db_added_columns[i], ' ');
        assert(space); /* "TABLE COLUMN TYPE" */
        char alter[256];
        snprintf(alter, sizeof alter, "ALTER TABLE %.*s ADD COLUMN%s",
                 (int)(space - db_added_columns[i]), db_added_columns[i], space);
        sqlite3_exec(s->sql, alter, NULL, NULL, NULL);
    }
    ok = ok && sqlite3_exec(s->sql, db_schema_late, NULL, NULL, &msg) == SQLITE_OK;
    if (!ok) {
        err_set(e, "database %s: %s", path, msg ? msg : sqlite3_errmsg(s->sql));
        sqlite3_free(msg);
        return -1;
    }
    if (sqlite3_open_v2(path, &s->ckpt, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, NULL) !=
        SQLITE_OK)
        return err_set(e, "database %s: %s", path, sqlite3_errmsg(s->ckpt));
    sqlite3_busy_timeout(s->ckpt, 5000);
    char wal[4200];
    snprintf(wal, sizeof wal, "%s-wal", path);
    s->wal_fd = open(wal, O_RDONLY | O_CLOEXEC);
    if (s->wal_fd < 0)
        return err_set(e, "database %s: cannot open its WAL: %s", path, strerror(errno));
    char lock[4200];
    snprintf(lock, sizeof lock, "%s-collector", path);
    s->collector_fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (s->collector_fd < 0)
        return err_set(e, "database %s: cannot open %s: %s", path, lock, strerror(errno));
    return 0;
}

Db *db_sqlite_open(const char *path, Err *e) {
    SqliteDb *s = calloc(1, sizeof *s);
    s->base.be = &SQLITE_BACKEND;
    s->wal_fd = s->collector_fd = -1;
    pthread_mutex_init(&s->lock, NULL);
    if (sq_connect(s, path, e) != 0) {
        sq_close(&s->base);
        return NULL;
    }
    return &s->base;
}
