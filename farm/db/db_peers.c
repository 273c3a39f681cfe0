/* db_peers.c: the other coordinators sharing this store, and the evidence folders being
 * filed (docs/farm.md, "Several coordinators"). Whether a coordinator is alive decides
 * who may replace a folder another left behind, whose temp folders may go, and whose
 * journal rows another takes over, so only proof of death counts: on PostgreSQL each
 * coordinator holds a session advisory lock (its life lock, db_pg.c) for as long as it
 * is connected, and PostgreSQL releases it when the coordinator's connection goes,
 * killed or not. A coordinator without a row, or whose sign of life is merely stale (a
 * stall, a held row), is alive. SQLite has one coordinator: every other is gone.
 *
 * Filing an evidence folder first reserves its path in `filings` (one row per path, the
 * coordinator that holds it). Only the holder may rename a folder into place, remove one
 * that no filed job points to, or commit the job's row (db.c checks the reservation in
 * the committing statement and drops it there); a reservation is taken over only from a
 * coordinator proven dead. So no upload ever removes a folder it does not own. */
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

int db_filing_reserve(Db *db, const char *rel, long job) {
    DbConn *c = db->be->acquire(db, 0);
    int ours = db_exec(db, c,
                       "INSERT INTO filings(evidence, coordinator, job_id, at) VALUES($1,$2,$3,$4)"
                       " ON CONFLICT(evidence) DO NOTHING",
                       DB_ARGS(DB_TEXT(rel), DB_TEXT(db->coordinator), DB_INT(job),
                               DB_REAL(timing_now_seconds()))) == 1;
    if (!ours) {
        char owner[sizeof db->coordinator] = "";
        DbRows *r = db_query(db, c, "SELECT coordinator FROM filings WHERE evidence=$1",
                             DB_ARGS(DB_TEXT(rel)));
        if (db->be->next(r)) snprintf(owner, sizeof owner, "%s", db_col_text(db, r, 0));
        db->be->finish(r);
        /* ours already (a filing that never gave it back), or taken over from the dead */
        ours =
            owner[0] &&
            (!strcmp(owner, db->coordinator) ||
             (!alive(db, c, owner) &&
              db_exec(db, c,
                      "UPDATE filings SET coordinator=$1, job_id=$2, at=$3"
                      " WHERE evidence=$4 AND coordinator=$5",
                      DB_ARGS(DB_TEXT(db->coordinator), DB_INT(job), DB_REAL(timing_now_seconds()),
                              DB_TEXT(rel), DB_TEXT(owner))) == 1));
        if (ours && strcmp(owner, db->coordinator) != 0)
            fprintf(stderr, "farm: %s: took over the filing of coordinator %s, which is gone\n",
                    rel, owner);
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

cJSON *db_unsettled(Db *db) {
    /* Rows of coordinators that are gone become this one's to write again and settle
     * (on SQLite, the one coordinator before this one). */
    char where[1200], sql[1400];
    dead_clause(db, "coordinator", where, sizeof where);
    snprintf(sql, sizeof sql, "UPDATE unsettled SET coordinator=$2 WHERE %s", where);
    DbConn *c = db->be->acquire(db, 1);
    db_exec(db, c, sql,
            DB_ARGS(DB_REAL(timing_now_seconds() - PEER_ALIVE_SECONDS), DB_TEXT(db->coordinator)));
    db->be->release(db, c, 1);
    cJSON *rows = cJSON_CreateArray();
    DbConn *q = db->be->acquire(db, 0);
    DbRows *r =
        db_query(db, q, "SELECT evidence, files FROM unsettled WHERE coordinator=$1 ORDER BY seq",
                 DB_ARGS(DB_TEXT(db->coordinator)));
    while (db->be->next(r)) {
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, "evidence", db_col_text(db, r, 0));
        cJSON_AddItemToObject(row, "files", db_col_json(db, r, 1));
        cJSON_AddItemToArray(rows, row);
    }
    db->be->finish(r);
    db->be->release(db, q, 0);
    return rows;
}
