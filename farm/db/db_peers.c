/* db_peers.c: the other coordinators sharing this store, and the bundles being filed
 * (docs/farm.md, "Several coordinators"). Whether a coordinator is alive decides who may
 * take over a filing another left behind (and with it the blobs it pinned) and whose
 * temp files may go, so only proof of death counts: on PostgreSQL each
 * coordinator holds a session advisory lock (its life lock, db_pg.c) for as long as it
 * is connected, and PostgreSQL releases it when the coordinator's connection goes,
 * killed or not. A coordinator without a row, or whose sign of life is merely stale (a
 * stall, a held row), is alive. SQLite has one coordinator: every other is gone.
 *
 * Filing a bundle first reserves its evidence path in `filings` (one row per path, the
 * coordinator that holds it, and the digests of the blobs the filing writes or finds in
 * the store: while the row lives they are pinned, and the collector keeps them). Only the
 * holder may commit the job's row with its manifest (db.c checks the reservation in the
 * committing statement and drops it there); a reservation is taken over only from a
 * coordinator proven dead. */
#include "db/db_backend_internal.h"

#include <stdio.h>
#include <string.h>

/* A coordinator from before the life locks counts as alive while its sign of life is
 * this recent (the reaper renews it every 200 ms). */
#define PEER_ALIVE_SECONDS 3.0

/* SQL selecting the live coordinators' ids ($1: the time before which an old
 * coordinator's sign of life is stale), or NULL when only this one is alive. */
static const char *live_sql(const Db *db) { return db->be->live; }

int db_peers_alive(Db *db) {
    if (!live_sql(db)) return 0;
    char sql[1024];
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM (%s) x WHERE x.id <> $2", live_sql(db));
    DbConn *c = db->be->acquire(db, 0);
    DbRows *r = db_query(
        db, c, sql,
        DB_ARGS(DB_REAL(timing_now_seconds() - PEER_ALIVE_SECONDS), DB_TEXT(db->coordinator)));
    int n = db->be->next(r) ? (int)db_col_long(db, r, 0) : 0;
    db->be->finish(r);
    db->be->release(db, c, 0);
    return n;
}

/* Whether coordinator ID is alive: this one; on a shared store, one holding its life
 * lock, or one without a row (nothing proves its death). */
static int alive(Db *db, DbConn *c, const char *id) {
    if (!strcmp(id, db->coordinator)) return 1;
    if (!live_sql(db)) return 0;
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT NOT EXISTS (SELECT 1 FROM coordinators WHERE id=$2) OR $2 IN (%s)",
             live_sql(db));
    DbRows *r = db_query(db, c, sql,
                         DB_ARGS(DB_REAL(timing_now_seconds() - PEER_ALIVE_SECONDS), DB_TEXT(id)));
    const char *v = db->be->next(r) ? db->be->text(r, 0) : NULL;
    int yes = !v || !strcmp(v, "t") || !strcmp(v, "1"); /* a failed query proves nothing */
    db->be->finish(r);
    return yes;
}

int db_filing_reserve(Db *db, const DbReserve *w, Err *e) {
    DbConn *c = db->be->acquire(db, 0);
    double now = timing_now_seconds();
    long added = db_exec(db, c,
                         "INSERT INTO filings(evidence, coordinator, job_id, at, digests)"
                         " VALUES($1,$2,$3,$4,$5) ON CONFLICT(evidence) DO NOTHING",
                         DB_ARGS(DB_TEXT(w->rel), DB_TEXT(db->coordinator), DB_INT(w->job),
                                 DB_REAL(now), DB_TEXT(w->digests)));
    int ours = added == 1;
    /* A failed INSERT (disk full, a read-only or immutable state folder, a store gone) is
     * not a live holder: it was answered 409 filing_busy, and the agent gave up. */
    if (added < 0) {
        err_set(e, "the store refused the filing's reservation: %s",
                c ? db->be->error(c) : "no connection");
        db->be->release(db, c, 0);
        return -1;
    }
    if (!ours) {
        char owner[sizeof db->coordinator] = "";
        DbRows *r = db_query(db, c, "SELECT coordinator FROM filings WHERE evidence=$1",
                             DB_ARGS(DB_TEXT(w->rel)));
        if (db->be->next(r)) snprintf(owner, sizeof owner, "%s", db_col_text(db, r, 0));
        db->be->finish(r);
        /* ours already (a filing that never gave it back), or taken over from the dead;
         * either way it pins this filing's blobs now */
        ours = owner[0] && (!strcmp(owner, db->coordinator) || !alive(db, c, owner)) &&
               db_exec(db, c,
                       "UPDATE filings SET coordinator=$1, job_id=$2, at=$3, digests=$6"
                       " WHERE evidence=$4 AND coordinator=$5",
                       DB_ARGS(DB_TEXT(db->coordinator), DB_INT(w->job), DB_REAL(now),
                               DB_TEXT(w->rel), DB_TEXT(owner), DB_TEXT(w->digests))) == 1;
        if (ours && strcmp(owner, db->coordinator) != 0)
            fprintf(stderr, "farm: %s: took over the filing of coordinator %s, which is gone\n",
                    w->rel, owner);
    }
    db->be->release(db, c, 0);
    return ours;
}

int db_filing_release(Db *db, const char *rel) {
    DbConn *c = db->be->acquire(db, 0);
    long n = db_exec(db, c, "DELETE FROM filings WHERE evidence=$1 AND coordinator=$2",
                     DB_ARGS(DB_TEXT(rel), DB_TEXT(db->coordinator)));
    db->be->release(db, c, 0);
    return n == 1 ? 0 : -1;
}

/* The condition "coordinator column COL names no live coordinator" ($1 as in live_sql,
 * $2 this coordinator) into OUT. */
static void dead_clause(const Db *db, const char *col, char *out, size_t cap) {
    if (live_sql(db)) snprintf(out, cap, "%s <> $2 AND %s NOT IN (%s)", col, col, live_sql(db));
    else snprintf(out, cap, "%s <> $2", col);
}

void db_peers_forget_dead(Db *db) {
    char where[1200], sql[1400];
    dead_clause(db, "coordinator", where, sizeof where);
    DbConn *c = db->be->acquire(db, 0);
    snprintf(sql, sizeof sql, "DELETE FROM filings WHERE %s", where);
    db_exec(db, c, sql,
            DB_ARGS(DB_REAL(timing_now_seconds() - PEER_ALIVE_SECONDS), DB_TEXT(db->coordinator)));
    db->be->release(db, c, 0);
}
