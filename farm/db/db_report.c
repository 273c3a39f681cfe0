/* db_report.c: runs' comparisons, kept once they are final (serve/report.c computes
 * them). A run whose jobs have all finished never changes again, so its comparison is
 * stored once: the report, a summary (verdict counts) and one history row per case. The
 * dashboard reads these instead of comparing every run on each request. A stored
 * comparison can always be computed again from the filed predicates, so its commit is
 * not an acknowledging one (db.h). */
#include "db/db_backend_internal.h"

#include <stdio.h>
#include <stdlib.h>

cJSON *db_runs_unreported(Db *db, int limit) {
    cJSON *ids = cJSON_CreateArray();
    DbConn *c = db->be->acquire(db, 0);
    DbRows *r = db_query(db, c,
                         "SELECT r.id FROM runs r WHERE NOT EXISTS (SELECT 1 FROM reports p"
                         " WHERE p.run_id=r.id) AND NOT EXISTS (SELECT 1 FROM jobs j WHERE"
                         " j.run_id=r.id AND j.state IN ('queued','running')) ORDER BY r.id"
                         " LIMIT $1",
                         DB_ARGS(DB_INT(limit)));
    while (db->be->next(r)) cJSON_AddItemToArray(ids, cJSON_CreateNumber(db->be->real(r, 0)));
    db->be->finish(r);
    db->be->release(db, c, 0);
    return ids;
}

int db_report_put(Db *db, long run, const char *summary, const char *report, const cJSON *rows) {
    DbConn *c = db->be->acquire(db, 0);
    db_exec(db, c, db->be->begin, DB_NO_ARGS);
    long n =
        db_exec(db, c,
                "INSERT INTO reports(run_id, summary, report, at, version) VALUES($1,$2,$3,$4,$5)"
                " ON CONFLICT(run_id) DO NOTHING",
                DB_ARGS(DB_INT(run), DB_TEXT(summary), DB_TEXT(report),
                        DB_REAL(timing_now_seconds()), DB_INT(DB_REPORT_VERSION)));
    int ok = n >= 0;
    const cJSON *row;
    if (n == 1) { /* the first to store it (another coordinator may have, meanwhile) */
        cJSON_ArrayForEach(row, rows) {
            char *text = cJSON_PrintUnformatted(row);
            ok = ok &&
                 db_exec(db, c,
                         "INSERT INTO case_history(case_path, run_id, row_json)"
                         " VALUES($1,$2,$3) ON CONFLICT DO NOTHING",
                         DB_ARGS(DB_TEXT(json_str(row, "case")), DB_INT(run), DB_TEXT(text))) >= 0;
            free(text);
        }
    }
    ok = ok && db_exec(db, c, "COMMIT", DB_NO_ARGS) >= 0;
    if (!ok) db_exec(db, c, "ROLLBACK", DB_NO_ARGS);
    db->be->release(db, c, 0);
    return ok ? 0 : -1;
}

int db_reports_outdated_drop(Db *db) {
    DbConn *c = db->be->acquire(db, 0);
    db_exec(db, c, db->be->begin, DB_NO_ARGS);
    db_exec(db, c,
            "DELETE FROM case_history WHERE run_id IN (SELECT run_id FROM reports WHERE"
            " version IS NULL OR version < $1)",
            DB_ARGS(DB_INT(DB_REPORT_VERSION)));
    long n = db_exec(db, c, "DELETE FROM reports WHERE version IS NULL OR version < $1",
                     DB_ARGS(DB_INT(DB_REPORT_VERSION)));
    if (db_exec(db, c, "COMMIT", DB_NO_ARGS) < 0) {
        db_exec(db, c, "ROLLBACK", DB_NO_ARGS);
        n = 0;
    }
    db->be->release(db, c, 0);
    return n < 0 ? 0 : (int)n;
}

cJSON *db_report_get(Db *db, long run) {
    return db_first_json(db, "SELECT report FROM reports WHERE run_id=$1", DB_ARGS(DB_INT(run)));
}

cJSON *db_report_summaries(Db *db, long first, long last) {
    cJSON *out = cJSON_CreateObject();
    DbConn *c = db->be->acquire(db, 0);
    DbRows *r =
        db_query(db, c, "SELECT run_id, summary FROM reports WHERE run_id >= $1 AND run_id <= $2",
                 DB_ARGS(DB_INT(first), DB_INT(last)));
    while (db->be->next(r)) {
        char id[32];
        snprintf(id, sizeof id, "%ld", db_col_long(db, r, 0));
        cJSON_AddItemToObject(out, id, db_col_json(db, r, 1));
    }
    db->be->finish(r);
    db->be->release(db, c, 0);
    return out;
}

cJSON *db_case_history(Db *db, const char *case_path) {
    cJSON *out = cJSON_CreateArray();
    DbConn *c = db->be->acquire(db, 0);
    DbRows *r = db_query(db, c,
                         "SELECT run_id, row_json FROM case_history WHERE case_path=$1"
                         " ORDER BY run_id",
                         DB_ARGS(DB_TEXT(case_path)));
    while (db->be->next(r)) {
        cJSON *entry = cJSON_CreateObject();
        cJSON_AddNumberToObject(entry, "run", db->be->real(r, 0));
        cJSON_AddItemToObject(entry, "row", db_col_json(db, r, 1));
        cJSON_AddItemToArray(out, entry);
    }
    db->be->finish(r);
    db->be->release(db, c, 0);
    return out;
}

cJSON *db_recent_reported(Db *db, int limit) {
    static const char *const cols[] = {"id",     "source_sha", "matrix_id", "created_at",
                                       "commit", "branch",     "submitter", NULL};
    return db_rows_json(db,
                        "SELECT r.id, r.source_sha, r.matrix_id, r.created_at, r.commit_sha,"
                        " r.branch, r.submitter FROM runs r JOIN reports p ON p.run_id=r.id"
                        " ORDER BY r.id DESC LIMIT $1",
                        DB_ARGS(DB_INT(limit)), cols, "-------");
}

cJSON *db_history_rows(Db *db, long first, long last) {
    static const char *const cols[] = {"run", "case", "row", NULL};
    return db_rows_json(db,
                        "SELECT run_id, case_path, row_json FROM case_history WHERE run_id >= $1"
                        " AND run_id <= $2 ORDER BY case_path, run_id",
                        DB_ARGS(DB_INT(first), DB_INT(last)), cols, "--j");
}

cJSON *db_matrix_latest(Db *db, const char *matrix_id) {
    static const char *const cols[] = {"run", "summary", NULL};
    cJSON *rows = db_rows_json(db,
                               "SELECT r.id, p.summary FROM runs r JOIN reports p ON"
                               " p.run_id=r.id WHERE r.matrix_id=$1 ORDER BY r.id DESC LIMIT 1",
                               DB_ARGS(DB_TEXT(matrix_id)), cols, "-j");
    cJSON *latest = cJSON_DetachItemFromArray(rows, 0);
    cJSON_Delete(rows);
    return latest;
}
