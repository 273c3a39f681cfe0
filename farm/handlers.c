/* handlers.c: the coordinator's routes (the API is listed in docs/farm.md). Every
 * handler checks its input first and answers 4xx with a JSON error, changing nothing,
 * when the input is wrong. */
#include "server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include <openssl/rand.h>

#include "bundle.h"
#include "dsse.h"
#include "fields.h"
#include "matrix.h"

static cJSON *parse_body(Request *q, Reply *r) {
    cJSON *j = cJSON_ParseWithLength(q->body, q->len);
    if (!j) reply_error(r, 400, "body is not valid JSON");
    else if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        j = NULL;
        reply_error(r, 400, "body must be a JSON object");
    }
    return j;
}

static int parse_id(const char *arg, long *id) {
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || *end || v <= 0) return -1;
    *id = v;
    return 0;
}

void h_health(Server *s, Request *q, Reply *r) {
    (void)s;
    (void)q;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "ok", 1);
    reply_json(r, 200, j);
}

/* --- agents ------------------------------------------------------------------------ */

static int random_token(char out[SHA256_HEX_LEN]) {
    unsigned char raw[32];
    if (RAND_bytes(raw, sizeof raw) != 1) return -1;
    for (int i = 0; i < 32; i++) sprintf(out + 2 * i, "%02x", raw[i]);
    return 0;
}

/* Enrolment challenges: nonces issued to whoever holds the enrolment token, each good
 * for one proof within NONCE_LIFE_S. When the table is full the oldest goes. */
#define NONCES       1024
#define NONCE_LIFE_S 120.0
static struct {
    char nonce[SHA256_HEX_LEN];
    double expires;
} nonces[NONCES];
static pthread_mutex_t nonces_lock = PTHREAD_MUTEX_INITIALIZER;

static int nonce_issue(char out[SHA256_HEX_LEN]) {
    if (random_token(out) != 0) return -1;
    pthread_mutex_lock(&nonces_lock);
    size_t slot = 0;
    for (size_t i = 1; i < NONCES; i++)
        if (nonces[i].expires < nonces[slot].expires) slot = i;
    snprintf(nonces[slot].nonce, SHA256_HEX_LEN, "%s", out);
    nonces[slot].expires = timing_now_seconds() + NONCE_LIFE_S;
    pthread_mutex_unlock(&nonces_lock);
    return 0;
}

/* 1 when NONCE was issued, has not expired and was not used; it is used up now. */
static int nonce_take(const char *nonce) {
    int found = 0;
    double now = timing_now_seconds();
    pthread_mutex_lock(&nonces_lock);
    for (size_t i = 0; i < NONCES && !found; i++) {
        if (nonces[i].expires > now && !strcmp(nonces[i].nonce, nonce)) {
            nonces[i].expires = 0;
            nonces[i].nonce[0] = '\0';
            found = 1;
        }
    }
    pthread_mutex_unlock(&nonces_lock);
    return found;
}

void h_challenge(Server *s, Request *q, Reply *r) {
    (void)s;
    (void)q;
    char nonce[SHA256_HEX_LEN];
    if (nonce_issue(nonce) != 0) {
        reply_error(r, 500, "cannot make a nonce");
        return;
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "nonce", nonce);
    cJSON_AddStringToObject(j, "proof_type", ENROL_PROOF_TYPE);
    cJSON_AddNumberToObject(j, "expires_in_s", NONCE_LIFE_S);
    reply_json(r, 200, j);
}

/* The enrolment's proof of possession of KEY: a signature over a nonce this coordinator
 * issued, so nobody can enrol (or re-enrol, taking over) a key they do not hold. */
static int check_proof(const cJSON *body, EVP_PKEY *key, const char *name, Reply *r) {
    const cJSON *proof = cJSON_GetObjectItemCaseSensitive(body, "proof");
    char nonce[SHA256_HEX_LEN];
    Err e = {{0}};
    if (!cJSON_IsObject(proof))
        return reply_error(r, 400,
                           "\"proof\" must be a DSSE envelope signing a nonce from "
                           "POST /api/v1/agents/challenge");
    if (dsse_enrol_proof_check(proof, key, name, nonce, &e) != 0)
        return reply_error(r, 401, "proof of key possession refused: %s", e.msg);
    if (!nonce_take(nonce))
        return reply_error(r, 401,
                           "proof of key possession refused: the nonce was not "
                           "issued, has expired or was used");
    return 0;
}

void h_enrol(Server *s, Request *q, Reply *r) {
    cJSON *body = parse_body(q, r);
    if (!body) return;
    const char *name = json_str(body, "name"), *pem = json_str(body, "public_key");
    const cJSON *caps = cJSON_GetObjectItemCaseSensitive(body, "capabilities");
    Err e = {{0}};
    EVP_PKEY *key = pem ? dsse_key_from_public_pem(pem, &e) : NULL;
    char kid[SHA256_HEX_LEN], token[SHA256_HEX_LEN], hash[SHA256_HEX_LEN];
    long id = 0;
    if (!util_is_safe_component(name))
        reply_error(r, 400, "\"name\" must be a string of [A-Za-z0-9._+-], at most 128");
    else if (!key)
        reply_error(r, 400, "\"public_key\" must be an Ed25519 public key in PEM: %s", e.msg);
    else if (!cJSON_IsObject(caps) ||
             !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(caps, "compilers")))
        reply_error(r, 400, "\"capabilities\" must be an object with \"compilers\"");
    else if (check_proof(body, key, name, r) != 0)
        ; /* the reply says why */
    else if (dsse_key_id(key, kid) != 0 || random_token(token) != 0)
        reply_error(r, 500, "cannot make a token");
    else {
        sha256_hex(token, strlen(token), hash);
        char *caps_text = cJSON_PrintUnformatted(caps);
        int rc = db_agent_enrol(s->db, name, kid, pem, caps_text, hash, &id, &e);
        free(caps_text);
        server_forget_agents(); /* the agent's old token means nothing now */
        if (rc == -2) reply_error(r, 403, "%s", e.msg);
        else if (rc != 0) reply_error(r, 500, "%s", e.msg);
        else {
            cJSON *j = cJSON_CreateObject();
            cJSON_AddNumberToObject(j, "agent", id);
            cJSON_AddStringToObject(j, "token", token);
            cJSON_AddStringToObject(j, "keyid", kid);
            cJSON_AddNumberToObject(j, "lease_seconds", s->cfg.lease_seconds);
            reply_json(r, 200, j);
            fprintf(stderr, "farm: agent %ld (%s) enrolled, key %.16s...\n", id, name, kid);
        }
    }
    EVP_PKEY_free(key);
    cJSON_Delete(body);
}

void h_revoke(Server *s, Request *q, Reply *r) {
    long id;
    if (parse_id(q->arg, &id) != 0) reply_error(r, 400, "agent id must be a positive integer");
    else if (db_agent_revoke(s->db, id) != 0) reply_error(r, 404, "no agent %ld", id);
    else {
        server_forget_agents(); /* and no answer read before the revocation is cached */
        cJSON *j = cJSON_CreateObject();
        cJSON_AddBoolToObject(j, "revoked", 1);
        reply_json(r, 200, j);
        server_notify(s);
    }
}

/* --- claims and leases --------------------------------------------------------------- */

/* What a claim answer says about its run: runs never change once made, so this is
 * read from the database once per run rather than once per claim. */
#define RUN_CACHE 64
static struct {
    long run;
    char sha[SHA256_HEX_LEN];
    long size;
    double timeout_s;
    cJSON *cases;
} run_cache[RUN_CACHE];
static pthread_mutex_t run_cache_lock = PTHREAD_MUTEX_INITIALIZER;

static cJSON *run_facts(Server *s, long run, char sha[SHA256_HEX_LEN], long *size,
                        double *timeout_s) {
    size_t i = (size_t)run % RUN_CACHE;
    cJSON *cases = NULL;
    pthread_mutex_lock(&run_cache_lock);
    if (run_cache[i].run == run && run_cache[i].cases) {
        snprintf(sha, SHA256_HEX_LEN, "%s", run_cache[i].sha);
        *size = run_cache[i].size;
        *timeout_s = run_cache[i].timeout_s;
        cases = cJSON_Duplicate(run_cache[i].cases, 1);
    }
    pthread_mutex_unlock(&run_cache_lock);
    if (cases) return cases;
    if (!db_run_of_job(s->db, run, sha, &cases, timeout_s)) return cJSON_CreateArray();
    db_blob_exists(s->db, sha, size);
    pthread_mutex_lock(&run_cache_lock);
    cJSON_Delete(run_cache[i].cases);
    run_cache[i].run = run;
    snprintf(run_cache[i].sha, SHA256_HEX_LEN, "%s", sha);
    run_cache[i].size = *size;
    run_cache[i].timeout_s = *timeout_s;
    run_cache[i].cases = cJSON_Duplicate(cases, 1);
    pthread_mutex_unlock(&run_cache_lock);
    return cases;
}

static cJSON *job_answer(Server *s, const Job *job) {
    char sha[SHA256_HEX_LEN] = "";
    double timeout_s = 300;
    long size = 0;
    cJSON *cases = run_facts(s, job->run_id, sha, &size, &timeout_s);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "job", job->id);
    cJSON_AddNumberToObject(j, "run", job->run_id);
    cJSON_AddNumberToObject(j, "attempt", job->attempt);
    cJSON_AddStringToObject(j, "cell_id", job->cell_id);
    cJSON_AddItemToObject(j, "cell", cJSON_Duplicate(job->cell, 1));
    cJSON *src = cJSON_AddObjectToObject(j, "source");
    cJSON_AddStringToObject(src, "sha256", sha);
    cJSON_AddNumberToObject(src, "size", (double)size);
    cJSON_AddItemToObject(j, "cases", cases);
    cJSON_AddNumberToObject(j, "timeout_s", timeout_s);
    cJSON_AddNumberToObject(j, "lease_seconds", s->cfg.lease_seconds);
    cJSON_AddNumberToObject(j, "lease_expires", job->lease_expires);
    return j;
}

/* A long poll holds no thread while it waits: when nothing fits, the handler asks the
 * server to park the request (r->park), and is called again when jobs may have become
 * claimable or when the deadline it set on the first call has passed. */
void h_claim(Server *s, Request *q, Reply *r) {
    if (q->wait_until == 0) {
        cJSON *body = q->len ? parse_body(q, r) : cJSON_CreateObject();
        if (!body) return;
        double wait = json_num(body, "wait_s", 0);
        cJSON_Delete(body);
        if (!(wait >= 0) || wait > s->cfg.claim_wait_max_seconds)
            wait = wait > 0 ? s->cfg.claim_wait_max_seconds : 0;
        q->wait_until = timing_now_seconds() + wait;
    }
    int stopping = server_stopping(s);
    Job job;
    if (!stopping && db_claim(s->db, &q->agent, s->cfg.lease_seconds, &job)) {
        reply_json(r, 200, job_answer(s, &job));
        job_free(&job);
    } else if (stopping || timing_now_seconds() >= q->wait_until) {
        r->status = 204;
    } else {
        r->park = 1;
    }
}

void h_heartbeat(Server *s, Request *q, Reply *r) {
    long id;
    cJSON *body = q->len ? parse_body(q, r) : cJSON_CreateObject();
    if (!body) return;
    double expires = 0;
    const char *progress = json_str(body, "progress");
    if (parse_id(q->arg, &id) != 0) {
        reply_error(r, 400, "job id must be a positive integer");
    } else {
        int rc = db_heartbeat(s->db, id, q->agent.id, s->cfg.lease_seconds, progress, &expires);
        if (rc < 0) {
            reply_error(r, 409, "job %ld is not leased to this agent", id);
        } else {
            cJSON *j = cJSON_CreateObject();
            cJSON_AddBoolToObject(j, "cancel", rc == 1);
            cJSON_AddNumberToObject(j, "lease_expires", expires);
            reply_json(r, 200, j);
        }
    }
    cJSON_Delete(body);
}

/* --- uploads ----------------------------------------------------------------------- */

/* Agents' keys, decoded once: PEM decoding goes through OpenSSL 3's decoder framework,
 * far slower than the signature check itself. Keyed by agent id and key id. */
#define KEY_CACHE 1024
static struct {
    long agent;
    char keyid[SHA256_HEX_LEN];
    EVP_PKEY *key;
} key_cache[KEY_CACHE];
static pthread_mutex_t key_cache_lock = PTHREAD_MUTEX_INITIALIZER;

static EVP_PKEY *agent_key(const Agent *a, Err *e) {
    EVP_PKEY *key = NULL;
    size_t slot = (size_t)a->id % KEY_CACHE;
    pthread_mutex_lock(&key_cache_lock);
    if (key_cache[slot].key && key_cache[slot].agent == a->id &&
        !strcmp(key_cache[slot].keyid, a->keyid) && EVP_PKEY_up_ref(key_cache[slot].key))
        key = key_cache[slot].key;
    pthread_mutex_unlock(&key_cache_lock);
    if (key) return key;
    key = dsse_key_from_public_pem(a->public_pem, e);
    if (!key) return NULL;
    pthread_mutex_lock(&key_cache_lock);
    EVP_PKEY_free(key_cache[slot].key);
    key_cache[slot].agent = a->id;
    snprintf(key_cache[slot].keyid, SHA256_HEX_LEN, "%s", a->keyid);
    key_cache[slot].key = key;
    EVP_PKEY_up_ref(key);
    pthread_mutex_unlock(&key_cache_lock);
    return key;
}

typedef struct {
    FileItem *items;
    size_t n;
    NameSet index; /* name -> position in items */
} Files;

static char *read_item(void *ctx, const char *name, size_t *len) {
    Files *f = ctx;
    size_t i;
    if (!util_nameset_get(&f->index, name, &i)) return NULL;
    char *copy = malloc(f->items[i].len + 1);
    memcpy(copy, f->items[i].data, f->items[i].len);
    *len = f->items[i].len;
    return copy;
}

static void files_free(Files *f) {
    for (size_t i = 0; i < f->n; i++) free((void *)f->items[i].data);
    free(f->items);
    util_nameset_free(&f->index);
}

/* Decodes {"name": base64} into FILES, with two slots to spare for what we add. A name
 * given twice is refused: one copy would be verified and the other written. */
static int decode_files(const cJSON *obj, Files *f, Reply *r) {
    f->items = calloc((size_t)cJSON_GetArraySize(obj) + 2, sizeof *f->items);
    f->n = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, obj) {
        if (strlen(x->string) > FIELD_MAX_PATH)
            return reply_error(r, 400, "file name %.64s...: longer than %d bytes", x->string,
                               FIELD_MAX_PATH);
        if (util_nameset_add(&f->index, x->string, f->n) != 0)
            return reply_error(r, 400, "file name %s appears twice in \"files\"", x->string);
        size_t len = 0;
        unsigned char *data = cJSON_IsString(x) ? util_b64_decode(x->valuestring, &len) : NULL;
        if (!data)
            return reply_error(r, 400, "file %s: value must be canonical base64 text", x->string);
        if (!strcmp(x->string, "bundle.dsse.json") || !strcmp(x->string, "agent.pub.pem")) {
            free(data); /* the coordinator writes these two itself */
            return reply_error(r, 422, "file name %s is reserved", x->string);
        }
        f->items[f->n++] = (FileItem){x->string, data, len};
    }
    return 0;
}

static int verdict_status(BundleVerdict v) {
    switch (v) {
    case BUNDLE_MALFORMED: return 400;
    case BUNDLE_WRONG_KEY: return 403;
    default: return 422;
    }
}

/* The statement must be about this very job, by this very agent: anything else is a
 * bundle replayed from elsewhere. */
static int check_predicate(const cJSON *pred, const Job *job, const Agent *agent, Reply *r) {
    const cJSON *cell = cJSON_GetObjectItemCaseSensitive(pred, "cell");
    const cJSON *machine = cJSON_GetObjectItemCaseSensitive(pred, "machine");
    const char *ver = json_str(pred, "cairn_version");
    const char *cid = json_str(cell, "id"), *mname = json_str(machine, "name");
    if (json_num(pred, "job", -1) != (double)job->id ||
        json_num(pred, "run", -1) != (double)job->run_id)
        return reply_error(r, 409,
                           "the statement is about job %.0f of run %.0f, not job %ld "
                           "of run %ld (replayed bundle?)",
                           json_num(pred, "job", -1), json_num(pred, "run", -1), job->id,
                           job->run_id);
    if (!cid || strcmp(cid, job->cell_id) != 0)
        return reply_error(r, 409, "the statement's cell is not this job's cell %s", job->cell_id);
    if (!mname || strcmp(mname, agent->name) != 0)
        return reply_error(r, 409, "the statement's machine is not this agent (%s)", agent->name);
    if (!util_is_safe_component(ver))
        return reply_error(r, 400, "predicate.cairn_version must be a safe folder name");
    return 0;
}

static int filing_enter(Server *s, long job) {
    pthread_mutex_lock(&s->filing_lock);
    int slot = -1;
    for (int i = 0; i < MAX_FILING; i++) {
        if (s->filing[i] == job) {
            slot = -1;
            break;
        }
        if (s->filing[i] == 0 && slot < 0) slot = i;
    }
    if (slot >= 0) s->filing[slot] = job;
    pthread_mutex_unlock(&s->filing_lock);
    return slot;
}

static void filing_leave(Server *s, int slot) {
    pthread_mutex_lock(&s->filing_lock);
    s->filing[slot] = 0;
    pthread_mutex_unlock(&s->filing_lock);
}

/* The folder's files as {name: base64} for the evidence journal (see store.c). */
static char *journal_text(const Files *files) {
    cJSON *j = cJSON_CreateObject();
    for (size_t i = 0; i < files->n; i++) {
        char *b64 = util_b64_encode(files->items[i].data, files->items[i].len);
        cJSON_AddStringToObject(j, files->items[i].name, b64);
        free(b64);
    }
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return text;
}

/* Verifying and writing files is CPU and kernel work: a few uploads at a time do it as
 * fast as fifty, and leave the CPUs to the short requests (claims, heartbeats). */
static int store_files(Server *s, const char *rel, const Files *files, Err *e) {
    sem_wait(&s->filers);
    int rc = store_evidence(s, rel, files->items, files->n, 0, e);
    sem_post(&s->filers);
    return rc;
}

/* 0 when the job is running under this agent's lease; otherwise the reply is set
 * (including the 200 for a repeated upload of the bundle already filed). */
static int check_lease(const Job *job, const Agent *agent, const char *bundle_sha, Reply *r) {
    if (!strcmp(job->state, "done")) {
        if (job->agent_id == agent->id && !strcmp(job->bundle_sha, bundle_sha)) {
            cJSON *j = cJSON_CreateObject();
            cJSON_AddBoolToObject(j, "filed", 0);
            cJSON_AddBoolToObject(j, "duplicate", 1);
            cJSON_AddStringToObject(j, "bundle_sha256", bundle_sha);
            reply_json(r, 200, j);
            return -1;
        }
        return reply_error(r, 409, "job %ld already has a filed bundle", job->id);
    }
    if (strcmp(job->state, "running") != 0 || job->agent_id != agent->id)
        return reply_error(r, 409, "job %ld is %s and not leased to this agent", job->id,
                           job->state);
    return 0;
}

/* The lease read again inside the job's filing slot: uploads of one job file one at a
 * time, so a job found running here cannot be acknowledged by another upload before
 * this one's row commits or fails. */
static int lease_still_held(Server *s, long id, const Agent *agent, const char *bundle_sha,
                            Reply *r) {
    Job now = {0};
    int rc = db_job_get(s->db, id, &now) ? check_lease(&now, agent, bundle_sha, r)
                                         : reply_error(r, 404, "no job %ld", id);
    job_free(&now);
    return rc;
}

static void file_bundle(Server *s, const Job *job, const Agent *agent, const cJSON *pred,
                        char *env_text, const char *bundle_sha, Files *files, Reply *r) {
    char rel[1024];
    snprintf(rel, sizeof rel, "evidence/%s/%ld/%s/%s", json_str(pred, "cairn_version"), job->run_id,
             agent->name, job->cell_id);
    files->items[files->n++] =
        (FileItem){"bundle.dsse.json", (unsigned char *)env_text, strlen(env_text)};
    files->items[files->n++] =
        (FileItem){"agent.pub.pem", (unsigned char *)agent->public_pem, strlen(agent->public_pem)};
    int slot = filing_enter(s, job->id);
    Err e = {{0}};
    char *pred_text = cJSON_PrintUnformatted(pred);
    char *journal = s->cfg.sync_full ? journal_text(files) : NULL;
    if (slot < 0) {
        reply_error(r, 409, "another upload of job %ld is being filed", job->id);
    } else if (lease_still_held(s, job->id, agent, bundle_sha, r) != 0) {
        /* another upload of this job was filed and acknowledged while this one was
         * verified: its folder is not to be touched */
    } else if (store_files(s, rel, files, &e) != 0) {
        reply_error(r, 500, "filing failed: %s", e.msg);
    } else if (db_job_done(s->db, job->id, agent->id, bundle_sha, rel, pred_text, journal) != 0) {
        char full[2048];
        snprintf(full, sizeof full, "%s/%s", s->state, rel);
        fs_remove_tree(full);
        reply_error(r, 409, "job %ld moved on while its bundle was filed", job->id);
    } else {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddBoolToObject(j, "filed", 1);
        cJSON_AddStringToObject(j, "evidence", rel);
        cJSON_AddStringToObject(j, "bundle_sha256", bundle_sha);
        reply_json(r, 200, j);
    }
    if (slot >= 0) filing_leave(s, slot);
    free(pred_text);
    free(journal);
    files->n -= 2; /* the two added items are not ours to free */
}

void h_upload(Server *s, Request *q, Reply *r) {
    long id;
    if (parse_id(q->arg, &id) != 0) {
        reply_error(r, 400, "job id must be a positive integer");
        return;
    }
    if (fields_has_nul(q->body, q->len)) {
        reply_error(r, 400, "the body spells a NUL (\\u0000) inside a string");
        return;
    }
    cJSON *body = parse_body(q, r);
    if (!body) return;
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(body, "envelope");
    const cJSON *files_obj = cJSON_GetObjectItemCaseSensitive(body, "files");
    Files files = {0};
    Job job = {0};
    cJSON *statement = NULL;
    EVP_PKEY *key = NULL;
    char *env_text = NULL;
    char bundle_sha[SHA256_HEX_LEN];
    Err e = {{0}};
    if (!cJSON_IsObject(env) || !cJSON_IsObject(files_obj)) {
        reply_error(r, 400, "body must be {\"envelope\": {...}, \"files\": {name: base64}}");
        goto out;
    }
    if (decode_files(files_obj, &files, r) != 0) goto out;
    if (!db_job_get(s->db, id, &job)) {
        reply_error(r, 404, "no job %ld", id);
        goto out;
    }
    env_text = cJSON_PrintUnformatted(env);
    sha256_hex(env_text, strlen(env_text), bundle_sha);
    if (check_lease(&job, &q->agent, bundle_sha, r) != 0) goto out;
    key = agent_key(&q->agent, &e);
    sem_wait(&s->filers);
    BundleVerdict v = key ? bundle_check(env, key, read_item, &files, files_obj,
                                         (size_t)s->cfg.max_subjects, &statement, &e)
                          : BUNDLE_WRONG_KEY;
    sem_post(&s->filers);
    if (v != BUNDLE_OK) {
        reply_error(r, verdict_status(v), "bundle rejected: %s", e.msg);
        goto out;
    }
    const cJSON *pred = cJSON_GetObjectItemCaseSensitive(statement, "predicate");
    if (fields_check_predicate(pred, &e) != 0) {
        reply_error(r, 422, "bundle rejected: %s", e.msg);
        goto out;
    }
    if (check_predicate(pred, &job, &q->agent, r) == 0)
        file_bundle(s, &job, &q->agent, pred, env_text, bundle_sha, &files, r);
out:
    EVP_PKEY_free(key);
    cJSON_Delete(statement);
    free(env_text);
    files_free(&files);
    job_free(&job);
    cJSON_Delete(body);
}

/* --- blobs ------------------------------------------------------------------------- */

void h_blob_put(Server *s, Request *q, Reply *r) {
    char got[SHA256_HEX_LEN];
    Err e = {{0}};
    if (!sha256_is_hex(q->arg)) {
        reply_error(r, 400, "blob name must be 64 lowercase hex digits (its SHA-256)");
        return;
    }
    sha256_hex(q->body, q->len, got);
    if (strcmp(got, q->arg) != 0) {
        reply_error(r, 422, "body's sha256 is %s, not %s", got, q->arg);
        return;
    }
    if (!db_blob_exists(s->db, got, NULL) && store_blob(s, got, q->body, q->len, &e) != 0) {
        reply_error(r, 500, "%s", e.msg);
        return;
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "sha256", got);
    cJSON_AddNumberToObject(j, "size", (double)q->len);
    reply_json(r, 200, j);
}

void h_blob_get(Server *s, Request *q, Reply *r) {
    char path[1400];
    size_t len = 0;
    if (!sha256_is_hex(q->arg) || !db_blob_exists(s->db, q->arg, NULL)) {
        reply_error(r, 404, "no blob %s", q->arg);
        return;
    }
    blob_path(s, q->arg, path, sizeof path);
    r->raw = fs_read(path, &len, NULL);
    if (!r->raw) {
        reply_error(r, 500, "blob %s is missing from the store", q->arg);
        return;
    }
    r->raw_len = len;
    r->raw_type = "application/octet-stream";
    r->status = 200;
}

/* --- runs and views ---------------------------------------------------------------- */

static int valid_cases(const cJSON *cases) {
    if (!cJSON_IsArray(cases) || cJSON_GetArraySize(cases) == 0) return 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        if (!cJSON_IsString(c) || !util_is_safe_relpath(c->valuestring)) return 0;
    }
    return 1;
}

void h_run_create(Server *s, Request *q, Reply *r) {
    cJSON *body = parse_body(q, r);
    if (!body) return;
    const char *source = json_str(body, "source");
    const cJSON *matrix = cJSON_GetObjectItemCaseSensitive(body, "matrix");
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(body, "cases");
    Err e = {{0}};
    cJSON *jobs = NULL;
    if (!sha256_is_hex(source)) reply_error(r, 400, "\"source\" must be the archive's sha256");
    else if (!valid_cases(cases))
        reply_error(r, 400, "\"cases\" must be a non-empty array of relative paths");
    else if (!db_blob_exists(s->db, source, NULL))
        reply_error(r, 422, "source blob %s has not been uploaded", source);
    else if (!(jobs = matrix_expand(matrix, &e))) reply_error(r, 400, "%s", e.msg);
    else {
        long run = db_run_create(s->db, source, matrix, cases, jobs, &e);
        if (run < 0) {
            reply_error(r, 500, "%s", e.msg);
        } else {
            cJSON *j = cJSON_CreateObject();
            cJSON_AddNumberToObject(j, "run", run);
            cJSON_AddNumberToObject(j, "jobs", cJSON_GetArraySize(jobs));
            reply_json(r, 201, j);
            fprintf(stderr, "farm: run %ld: %d jobs over %d cases\n", run, cJSON_GetArraySize(jobs),
                    cJSON_GetArraySize(cases));
            server_notify(s);
        }
    }
    cJSON_Delete(jobs);
    cJSON_Delete(body);
}

static void run_view(Server *s, Request *q, Reply *r, cJSON *(*view)(Db *, long)) {
    long id;
    cJSON *run = NULL;
    if (parse_id(q->arg, &id) != 0) reply_error(r, 400, "run id must be a positive integer");
    else if (!(run = db_run_view(s->db, id))) reply_error(r, 404, "no run %s", q->arg);
    else if (view == db_run_view) reply_json(r, 200, run), run = NULL;
    else reply_json(r, 200, view(s->db, id));
    cJSON_Delete(run);
}

void h_run_get(Server *s, Request *q, Reply *r) { run_view(s, q, r, db_run_view); }

void h_run_results(Server *s, Request *q, Reply *r) { run_view(s, q, r, db_run_results); }

void h_run_cancel(Server *s, Request *q, Reply *r) {
    long id;
    if (parse_id(q->arg, &id) != 0) reply_error(r, 400, "run id must be a positive integer");
    else if (db_run_cancel(s->db, id) != 0) reply_error(r, 404, "no run %ld", id);
    else {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddBoolToObject(j, "cancelled", 1);
        reply_json(r, 200, j);
    }
}

void h_status(Server *s, Request *q, Reply *r) {
    (void)q;
    reply_json(r, 200, db_status_view(s->db));
}
