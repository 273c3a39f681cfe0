/* db_metrics.c: the store's counts that GET /metrics shows (serve/metrics.c): a few
 * aggregate statements over the indexed tables, cheap enough to answer a scrape every
 * second (docs/farm.md, "CI and monitoring", has the cost measured), and the waits
 * for a pooled connection the back ends counted. */
#include "db/db_backend_internal.h"

#include <string.h>

const char *const db_job_states[5] = {"queued", "running", "done", "failed", "cancelled"};

void db_note_pool_wait(Db *db, double started) {
    double us = (timing_monotonic_seconds() - started) * 1e6;
    atomic_fetch_add_explicit(&db->pool_waits, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&db->pool_wait_us, us > 0 ? (unsigned long)us : 0,
                              memory_order_relaxed);
}

/* The longs of SQL's one row into OUT[0..N). */
static int one_row(Db *db, DbConn *c, const char *sql, long *out, int n) {
    DbRows *r = db_query(db, c, sql, DB_NO_ARGS);
    int ok = r && db->be->next(r);
    for (int i = 0; ok && i < n; i++) out[i] = db_col_long(db, r, i);
    if (r) db->be->finish(r);
    return ok ? 0 : -1;
}

int db_metrics(Db *db, DbMetrics *out) {
    *out = (DbMetrics){0};
    DbConn *c = db->be->acquire(db, 0);
    DbRows *r = db_query(db, c, "SELECT state, COUNT(*) FROM jobs GROUP BY state", DB_NO_ARGS);
    int ok = r != NULL;
    while (ok && db->be->next(r)) {
        const char *state = db_col_text(db, r, 0);
        for (int i = 0; i < 5; i++)
            if (!strcmp(state, db_job_states[i])) out->jobs[i] = db_col_long(db, r, 1);
    }
    if (r) db->be->finish(r);
    long runs[3] = {0}, agents[2] = {0}, sources[2] = {0};
    ok = ok &&
         one_row(db, c,
                 "SELECT COUNT(*), COALESCE(SUM(CASE WHEN cancelled<>0 THEN 1 ELSE 0 END), 0),"
                 " (SELECT COUNT(DISTINCT run_id) FROM jobs WHERE state IN ('queued','running'))"
                 " FROM runs",
                 runs, 3) == 0 &&
         one_row(db, c,
                 "SELECT COUNT(*), COALESCE(SUM(CASE WHEN revoked<>0 THEN 1 ELSE 0 END), 0)"
                 " FROM agents",
                 agents, 2) == 0 &&
         one_row(db, c, "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM blobs", sources, 2) == 0;
    db->be->release(db, c, 0);
    /* A job is done only with its bundle filed (db_job_done): reading bundle_sha to
     * count them read every done row (19 ms a scrape with 18,000 jobs filed). */
    out->bundles = out->jobs[2];
    out->runs_cancelled = runs[1];
    out->runs_active = runs[2];
    out->runs_finished = runs[0] - runs[1] - runs[2] > 0 ? runs[0] - runs[1] - runs[2] : 0;
    out->agents = agents[0];
    out->agents_revoked = agents[1];
    out->sources = sources[0];
    out->source_bytes = sources[1];
    out->pool_waits = atomic_load_explicit(&db->pool_waits, memory_order_relaxed);
    out->pool_wait_seconds =
        (double)atomic_load_explicit(&db->pool_wait_us, memory_order_relaxed) / 1e6;
    return ok ? 0 : -1;
}
