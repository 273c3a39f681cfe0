/* db_evidence.c: filed bundles as the store keeps them since issue 28 (docs/farm.md,
 * "Evidence by content"): each done job's manifest (its DSSE envelope and the digests of
 * its files, which are blobs in the state folder by content), the blobs the store refers
 * to (what the collector keeps), the layout before (a folder per bundle, and the journal
 * of folders not yet synced) for the migration at start, and a machine's page. */
#include "db/db_backend_internal.h"

#include <stdio.h>
#include <string.h>

cJSON *db_evidence_manifest(Db *db, const char *rel) {
    return db_first_json(db,
                         "SELECT manifest FROM jobs WHERE evidence=$1 AND state='done'"
                         " AND manifest IS NOT NULL",
                         DB_ARGS(DB_TEXT(rel)));
}

int db_blob_refs(Db *db, void (*each)(void *ctx, char kind, const char *text), void *ctx) {
    DbConn *c = db->be->acquire(db, 0);
    /* One statement: one snapshot, so a filing that moves its pins from its reservation
     * to its job's manifest in one commit is seen on one side or the other. */
    DbRows *r = db_query(db, c,
                         "SELECT 'm', manifest FROM jobs WHERE manifest IS NOT NULL"
                         " UNION ALL SELECT 'p', digests FROM filings WHERE digests IS NOT NULL"
                         " UNION ALL SELECT 'b', sha256 FROM blobs",
                         DB_NO_ARGS);
    while (db->be->next(r)) each(ctx, db_col_text(db, r, 0)[0], db_col_text(db, r, 1));
    int rc = db->be->failed(r) ? -1 : 0;
    db->be->finish(r);
    db->be->release(db, c, 0);
    return rc;
}

int db_blob_named(Db *db, const char *sha) {
    char quoted[SHA256_HEX_LEN + 8];
    snprintf(quoted, sizeof quoted, "%%\"%s\"%%", sha); /* a digest in JSON text: "SHA" */
    DbConn *c = db->be->acquire(db, 0);
    DbRows *r = db_query(db, c,
                         "SELECT CASE WHEN EXISTS (SELECT 1 FROM jobs WHERE manifest LIKE $1)"
                         " OR EXISTS (SELECT 1 FROM filings WHERE digests LIKE $1)"
                         " OR EXISTS (SELECT 1 FROM blobs WHERE sha256=$2) THEN 1 ELSE 0 END",
                         DB_ARGS(DB_TEXT(quoted), DB_TEXT(sha)));
    int named = db->be->next(r) ? (int)db_col_long(db, r, 0) : -1;
    if (db->be->failed(r)) named = -1;
    db->be->finish(r);
    db->be->release(db, c, 0);
    return named;
}

int db_collector_lock(Db *db) { return db->be->collector(db, 1); }

void db_collector_unlock(Db *db) { db->be->collector(db, 0); }

cJSON *db_legacy_filed(Db *db, long after, int limit) {
    static const char *const cols[] = {"job", "evidence", NULL};
    return db_rows_json(db,
                        "SELECT id, evidence FROM jobs WHERE state='done' AND manifest IS NULL"
                        " AND evidence IS NOT NULL AND id > $1 ORDER BY id LIMIT $2",
                        DB_ARGS(DB_INT(after), DB_INT(limit)), cols, "--");
}

cJSON *db_legacy_journal(Db *db) {
    static const char *const cols[] = {"job", "evidence", "files", NULL};
    return db_rows_json(db, "SELECT job_id, evidence, files FROM unsettled ORDER BY seq",
                        DB_NO_ARGS, cols, "--j");
}

int db_legacy_migrate(Db *db, const char *rel, const char *manifest) {
    DbConn *c = db->be->acquire(db, 1);
    db_exec(db, c, db->be->begin, DB_NO_ARGS);
    int ok = !manifest ||
             db_exec(db, c,
                     "UPDATE jobs SET manifest=$1 WHERE evidence=$2 AND state='done' AND"
                     " manifest IS NULL AND EXISTS (SELECT 1 FROM filings WHERE evidence=$2"
                     " AND coordinator=$3)",
                     DB_ARGS(DB_TEXT(manifest), DB_TEXT(rel), DB_TEXT(db->coordinator))) >= 0;
    ok = ok &&
         db_exec(db, c, "DELETE FROM filings WHERE evidence=$1 AND coordinator=$2",
                 DB_ARGS(DB_TEXT(rel), DB_TEXT(db->coordinator))) >= 0 &&
         db_exec(db, c, "DELETE FROM unsettled WHERE evidence=$1", DB_ARGS(DB_TEXT(rel))) >= 0;
    ok = ok && db_exec(db, c, "COMMIT", DB_NO_ARGS) >= 0;
    if (!ok) db_exec(db, c, "ROLLBACK", DB_NO_ARGS);
    db->be->release(db, c, 1);
    return ok ? 0 : -1;
}

int db_evidence_state(Db *db, const char *rel) {
    DbConn *c = db->be->acquire(db, 0);
    DbRows *r = db_query(db, c,
                         "SELECT CASE WHEN manifest IS NULL THEN 0 ELSE 1 END FROM jobs"
                         " WHERE evidence=$1 AND state='done'",
                         DB_ARGS(DB_TEXT(rel)));
    int state = db->be->next(r) ? (int)db_col_long(db, r, 0) : -1;
    db->be->finish(r);
    db->be->release(db, c, 0);
    return state;
}

/* The jobs of agent AGENT that SQL's condition picks, newest first, at most LIMIT. */
static cJSON *machine_jobs(Db *db, long agent, const char *where, int limit) {
    static const char *const cols[] = {"job",     "run",        "cell_id",     "state",
                                       "attempt", "claimed_at", "finished_at", "failure",
                                       "result",  "evidence",   NULL};
    char sql[600];
    snprintf(sql, sizeof sql,
             "SELECT id, run_id, cell_id, state, attempt, claimed_at, finished_at, failure,"
             " result, evidence FROM jobs WHERE agent_id=$1%s ORDER BY id DESC LIMIT $2",
             where);
    return db_rows_json(db, sql, DB_ARGS(DB_INT(agent), DB_INT(limit)), cols, "----------");
}

/* What the page shows of one holder of a machine name, the agent ID (its jobs, failures,
 * leases lost and counts by state), added to OUT. */
static void holder_jobs(Db *db, long id, int limit, cJSON *out) {
    cJSON_AddItemToObject(out, "jobs", machine_jobs(db, id, "", limit));
    cJSON_AddItemToObject(out, "failures",
                          machine_jobs(db, id, " AND (state='failed' OR result='FAILED')", limit));
    static const char *const lost_cols[] = {"job", "at", NULL};
    cJSON_AddItemToObject(out, "lost",
                          db_rows_json(db,
                                       "SELECT job_id, at FROM events WHERE agent_id=$1 AND"
                                       " kind='agent_lost' ORDER BY id DESC LIMIT $2",
                                       DB_ARGS(DB_INT(id), DB_INT(limit)), lost_cols, "--"));
    static const char *const count_cols[] = {"state", "n", NULL};
    cJSON_AddItemToObject(out, "counts",
                          db_rows_json(db,
                                       "SELECT state, COUNT(*) FROM jobs WHERE agent_id=$1"
                                       " GROUP BY state ORDER BY state",
                                       DB_ARGS(DB_INT(id)), count_cols, "--"));
}

/* The agents that held NAME, the one shown first (live, else the latest enrolled) then
 * the others newest first, at most LIMIT. */
static cJSON *holders(Db *db, const char *name, int limit) {
    static const char *const cols[] = {"id",      "name",        "keyid",     "caps",
                                       "revoked", "enrolled_at", "last_seen", NULL};
    return db_rows_json(db,
                        "SELECT id, name, keyid, caps, revoked, enrolled_at, last_seen FROM agents"
                        " WHERE name=$1 ORDER BY revoked, id DESC LIMIT $2",
                        DB_ARGS(DB_TEXT(name), DB_INT(limit)), cols, "---j---");
}

cJSON *db_machine_view(Db *db, const char *name, int limit) {
    cJSON *agents = holders(db, name, DB_MACHINE_HOLDERS + 1);
    cJSON *agent = cJSON_DetachItemFromArray(agents, 0);
    if (!agent) {
        cJSON_Delete(agents);
        return NULL;
    }
    /* Every list is by agent id, never by name: a key revoked and another enrolled
     * under the same name are two agents, and what the first signed stays its own. */
    cJSON *out = cJSON_CreateObject();
    cJSON_AddItemToObject(out, "agent", agent);
    holder_jobs(db, (long)json_num(agent, "id", 0), limit, out);
    cJSON *previous;
    cJSON_ArrayForEach(previous, agents) {
        cJSON *theirs = cJSON_AddObjectToObject(previous, "held");
        holder_jobs(db, (long)json_num(previous, "id", 0), limit, theirs);
    }
    cJSON_AddItemToObject(out, "previous", agents);
    return out;
}
