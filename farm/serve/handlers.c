/* handlers.c: the coordinator's routes (the API is listed in docs/farm.md). Every
 * handler checks its input first and answers 4xx with a JSON error, changing nothing,
 * when the input is wrong. */
#include "serve/serve_internal.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "proto/api.h"
#include "core/core.h"
#include "proto/dsse.h"

/* The body as a JSON object (an empty body is {} where EMPTY_OK), else NULL and a 400. */
static cJSON *parse_body(Server *s, Request *q, Reply *r, int empty_ok) {
    if (empty_ok && q->len == 0) return cJSON_CreateObject();
    if (fields_has_nul(q->body, q->len)) {
        reply_error(r, PROTO_E_BAD_JSON, "the body spells a NUL (\\u0000) inside a string");
        return NULL;
    }
    /* counted before the parse, which costs a 64-byte node per value (before, 32 MiB of
     * [0,0,...] claims grew the coordinator by 0.7 to 1.3 GiB) */
    if (fields_json_values(q->body, q->len) > (size_t)s->cfg.max_json_values) {
        reply_error(r, PROTO_E_TOO_LARGE, "the body holds more than max_json_values (%ld)",
                    s->cfg.max_json_values);
        return NULL;
    }
    cJSON *j = cJSON_ParseWithLength(q->body, q->len);
    if (!j) reply_error(r, PROTO_E_BAD_JSON, "body is not valid JSON");
    else if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        j = NULL;
        reply_error(r, PROTO_E_BAD_JSON, "body must be a JSON object");
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

void handlers_health(Server *s, Request *q, Reply *r) {
    (void)s;
    (void)q;
    reply_json(r, 200, proto_ack_build(PROTO_ACK_HEALTHY));
}

/* --- agents ------------------------------------------------------------------------ */

static int random_token(char out[SHA256_HEX_LEN]) {
    unsigned char raw[32];
    if (RAND_bytes(raw, sizeof raw) != 1) return -1;
    hex_encode(raw, sizeof raw, out);
    return 0;
}

/* Enrolment challenges: nonces issued to whoever holds the enrolment token, each good
 * for one proof within NONCE_LIFE_S, at most max_challenges outstanding and
 * max_challenges_per_address from one client address. An outstanding nonce is never
 * pushed out for a newer one (1,100 challenges once evicted a victim's, and its enrolment
 * was refused): when the table is full a new challenge is refused instead. */
#define NONCE_LIFE_S 120.0

/* Issues a nonce to PEER: 0, or -1 when PEER holds its share, -2 when all are taken. */
static int nonce_issue(Server *s, const char *peer, char out[SHA256_HEX_LEN]) {
    if (random_token(out) != 0) return -2;
    double now = timing_steady_seconds();
    long free_slot = -1, mine = 0;
    pthread_mutex_lock(&s->nonces_lock);
    for (long i = 0; i < s->cfg.max_challenges; i++) {
        if (s->nonces[i].expires <= now) {
            if (free_slot < 0) free_slot = i;
        } else {
            mine += !strcmp(s->nonces[i].peer, peer);
        }
    }
    int rc = mine >= s->cfg.max_challenges_per_address ? -1 : free_slot < 0 ? -2 : 0;
    if (rc == 0) {
        snprintf(s->nonces[free_slot].nonce, SHA256_HEX_LEN, "%s", out);
        snprintf(s->nonces[free_slot].peer, sizeof s->nonces[free_slot].peer, "%s", peer);
        s->nonces[free_slot].expires = now + NONCE_LIFE_S;
    }
    pthread_mutex_unlock(&s->nonces_lock);
    return rc;
}

/* 1 when NONCE was issued, has not expired and was not used; it is used up now. */
static int nonce_take(Server *s, const char *nonce) {
    int found = 0;
    double now = timing_steady_seconds();
    pthread_mutex_lock(&s->nonces_lock);
    for (long i = 0; i < s->cfg.max_challenges && !found; i++) {
        if (s->nonces[i].expires > now && !strcmp(s->nonces[i].nonce, nonce)) {
            s->nonces[i] = (Nonce){0};
            found = 1;
        }
    }
    pthread_mutex_unlock(&s->nonces_lock);
    return found;
}

void handlers_challenge(Server *s, Request *q, Reply *r) {
    ProtoChallenge m = {.proof_type = ENROL_PROOF_TYPE, .expires_in_s = NONCE_LIFE_S};
    int rc = nonce_issue(s, q->peer ? q->peer : "", m.nonce);
    if (rc < 0)
        metrics_refused(s, rc == -1 ? REFUSED_MAX_CHALLENGES_PER_ADDRESS : REFUSED_MAX_CHALLENGES,
                        1);
    if (rc == -1)
        reply_error(r, PROTO_E_TOO_MANY_REQUESTS,
                    "your address holds max_challenges_per_address (%ld) challenges: use them,"
                    " or wait %.0f s",
                    s->cfg.max_challenges_per_address, NONCE_LIFE_S);
    else if (rc == -2)
        reply_error(r, PROTO_E_BUSY, "max_challenges (%ld) challenges are outstanding: retry",
                    s->cfg.max_challenges);
    else reply_json(r, 200, proto_challenge_build(&m));
}

/* The enrolment's proof of possession of KEY: a signature over a nonce this coordinator
 * issued, so nobody can enrol (or re-enrol, taking over) a key they do not hold. */
static int check_proof(Server *s, const cJSON *proof, EVP_PKEY *key, const char *name, Reply *r) {
    char nonce[SHA256_HEX_LEN];
    Err e = {{0}};
    if (dsse_enrol_proof_check(proof, key, name, nonce, &e) != 0)
        return reply_error(r, PROTO_E_PROOF_REFUSED, "proof of key possession refused: %s", e.msg);
    if (!nonce_take(s, nonce))
        return reply_error(r, PROTO_E_PROOF_REFUSED,
                           "proof of key possession refused: the nonce was not "
                           "issued, has expired or was used");
    return 0;
}

/* Capabilities are held to the bounds of any agent field, and in all to
 * max_capabilities_bytes (the prober's are about 1 KiB): 19 MiB of them were taken, and
 * every page and request of the agent carried them. Their text into *TEXT. */
static int check_capabilities(Server *s, const cJSON *caps, char **text, Reply *r) {
    Err e = {{0}};
    *text = cJSON_PrintUnformatted(caps);
    size_t len = strlen(*text);
    if (len > (size_t)s->cfg.max_capabilities_bytes)
        return reply_error(r, PROTO_E_BAD_FIELD,
                           "capabilities: %zu bytes, over max_capabilities_bytes (%ld)", len,
                           s->cfg.max_capabilities_bytes);
    if (fields_check_value(caps, "capabilities", &e) != 0)
        return reply_error(r, PROTO_E_BAD_FIELD, "%s", e.msg);
    return 0;
}

/* Enrols M's key (its proof checked) with CAPS_TEXT: the answer into R. */
static void enrol_key(Server *s, const ProtoEnrol *m, const char *caps_text, ProtoEnrolled *out,
                      Reply *r) {
    Err e = {{0}};
    char hash[SHA256_HEX_LEN];
    sha256_hex(out->token, strlen(out->token), hash);
    snprintf(out->farm, sizeof out->farm, "%s", s->farm_id);
    int allowed = db_enrol_allowed(s->db, out->keyid, s->cfg.max_agents);
    if (allowed != 1) { /* the one enrolment token may not make agents without end */
        if (allowed == DB_UNAVAILABLE)
            reply_error(r, PROTO_E_STORE_UNAVAILABLE, "the store failed: retry");
        else
            reply_error(r, PROTO_E_TOO_MANY_REQUESTS,
                        "max_agents (%ld) agents are enrolled: revoke one first",
                        s->cfg.max_agents);
        return;
    }
    DbEnrolment a = {m->name, out->keyid, m->public_key, caps_text, hash};
    int rc = db_agent_enrol(s->db, &a, &out->agent, &e);
    if (rc == 0) auth_forget_agent(s, out->agent); /* its old token means nothing now */
    if (rc == -2) reply_error(r, PROTO_E_KEY_REVOKED, "%s", e.msg);
    else if (rc == -3) reply_error(r, PROTO_E_NAME_TAKEN, "%s", e.msg);
    else if (rc != 0) reply_error(r, PROTO_E_INTERNAL, "%s", e.msg);
    else {
        reply_json(r, 200, proto_enrolled_build(out));
        log_event(s, &(LogFields){.event = "enrolled", .agent = out->agent, .duration_ms = -1},
                  "agent %ld (%s) enrolled, key %.16s...", out->agent, m->name, out->keyid);
    }
}

void handlers_enrol(Server *s, Request *q, Reply *r) {
    cJSON *body = parse_body(s, q, r, 0);
    if (!body) return;
    ProtoEnrol m;
    ProtoEnrolled out = {.lease_seconds = s->cfg.lease_seconds};
    Err e = {{0}};
    char *caps_text = NULL;
    int parsed = proto_enrol_parse(body, &m, &e);
    EVP_PKEY *key = parsed == 0 ? dsse_key_from_public_pem(m.public_key, &e) : NULL;
    if (parsed != 0) reply_error(r, PROTO_E_BAD_FIELD, "%s", e.msg);
    else if (!key)
        reply_error(r, PROTO_E_BAD_FIELD, "\"public_key\" must be an Ed25519 public key in PEM: %s",
                    e.msg);
    else if (check_capabilities(s, m.capabilities, &caps_text, r) != 0)
        ; /* the reply says why */
    else if (check_proof(s, m.proof, key, m.name, r) != 0)
        ; /* the reply says why */
    else if (dsse_key_id(key, out.keyid) != 0 || random_token(out.token) != 0)
        reply_error(r, PROTO_E_INTERNAL, "cannot make a token");
    else enrol_key(s, &m, caps_text, &out, r);
    free(caps_text);
    EVP_PKEY_free(key);
    cJSON_Delete(body);
}

void handlers_revoke(Server *s, Request *q, Reply *r) {
    long id;
    if (parse_id(q->arg, &id) != 0)
        reply_error(r, PROTO_E_BAD_ID, "agent id must be a positive integer");
    else if (db_agent_revoke(s->db, id) != 0) reply_error(r, PROTO_E_NOT_FOUND, "no agent %ld", id);
    else {
        auth_forget_agents(s); /* and no answer read before the revocation is cached */
        reply_json(r, 200, proto_ack_build(PROTO_ACK_REVOKED));
        hub_notify(s);
    }
}

/* --- claims and leases --------------------------------------------------------------- */

/* What a claim answer says about its run, from S's run cache (RunCache). */
static cJSON *run_facts(Server *s, long run, char sha[SHA256_HEX_LEN], long *size,
                        double *timeout_s) {
    RunCache *c = &s->runs;
    size_t i = (size_t)run % RUN_CACHE;
    cJSON *cases = NULL;
    pthread_mutex_lock(&c->lock);
    if (c->slot[i].run == run && c->slot[i].cases) {
        snprintf(sha, SHA256_HEX_LEN, "%s", c->slot[i].sha);
        *size = c->slot[i].size;
        *timeout_s = c->slot[i].timeout_s;
        cases = cJSON_Duplicate(c->slot[i].cases, 1);
    }
    pthread_mutex_unlock(&c->lock);
    if (cases) return cases;
    if (!db_run_of_job(s->db, run, sha, &cases, timeout_s)) return cJSON_CreateArray();
    db_blob_exists(s->db, sha, size);
    pthread_mutex_lock(&c->lock);
    cJSON_Delete(c->slot[i].cases);
    c->slot[i].run = run;
    snprintf(c->slot[i].sha, SHA256_HEX_LEN, "%s", sha);
    c->slot[i].size = *size;
    c->slot[i].timeout_s = *timeout_s;
    c->slot[i].cases = cJSON_Duplicate(cases, 1);
    pthread_mutex_unlock(&c->lock);
    return cases;
}

static cJSON *job_answer(Server *s, const Job *job) {
    ProtoJob m = {.job = job->id,
                  .run = job->run_id,
                  .attempt = job->attempt,
                  .cell = job->cell,
                  .timeout_s = 300,
                  .lease_seconds = s->cfg.lease_seconds,
                  .lease_expires = job->lease_expires};
    snprintf(m.cell_id, sizeof m.cell_id, "%.128s", job->cell_id); /* a safe component */
    snprintf(m.farm, sizeof m.farm, "%s", s->farm_id);
    cJSON *cases = run_facts(s, job->run_id, m.source_sha256, &m.source_size, &m.timeout_s);
    m.cases = cases;
    cJSON *j = proto_job_build(&m);
    cJSON_Delete(cases);
    return j;
}

/* A long poll holds no thread while it waits: when nothing fits, the handler asks the
 * server to park the request (r->park), and is called again when jobs may have become
 * claimable or when the deadline it set on the first call has passed. */
void handlers_claim(Server *s, Request *q, Reply *r) {
    pause_point("claim"); /* a test holds the HTTP thread that runs it */
    if (q->wait_until == 0) {
        cJSON *body = parse_body(s, q, r, 1);
        if (!body) return;
        ProtoClaim m;
        Err e = {{0}};
        int parsed = proto_claim_parse(body, &m, &e);
        cJSON_Delete(body);
        if (parsed != 0) {
            reply_error(r, PROTO_E_BAD_FIELD, "%s", e.msg);
            return;
        }
        double wait = m.wait_s;
        if (!(wait >= 0) || wait > s->cfg.claim_wait_max_seconds)
            wait = wait > 0 ? s->cfg.claim_wait_max_seconds : 0;
        q->wait_until = timing_steady_seconds() + wait; /* the waker's clock (hub.c) */
    }
    int stopping = hub_stopping(s);
    Job job;
    double began = timing_monotonic_seconds();
    int claimed = stopping ? 0 : db_claim(s->db, &q->agent, s->cfg.lease_seconds, &job);
    if (!stopping) metrics_claim(s, timing_monotonic_seconds() - began, claimed > 0);
    if (claimed > 0) {
        /* read back as agents read it: an answer missing a field (an allocation that
         * failed, the run's row unread) is a 500, the job left to its lease */
        cJSON *answer = job_answer(s, &job);
        ProtoJob check;
        Err e = {{0}};
        if (!answer || proto_job_parse(answer, &check, &e) != 0) {
            cJSON_Delete(answer);
            reply_error(r, PROTO_E_INTERNAL, "cannot answer the claim of job %ld: %s", job.id,
                        answer ? e.msg : "out of memory");
        } else reply_json(r, 200, answer);
        db_job_free(&job);
    } else if (claimed < 0) {
        auth_forget_agents(s); /* revoked at another coordinator: its cached token too */
        reply_error(r, PROTO_E_UNKNOWN_AGENT, "unknown or revoked agent token");
    } else if (stopping || timing_steady_seconds() >= q->wait_until) {
        r->status = 204;
    } else {
        r->park = 1;
    }
}

void handlers_heartbeat(Server *s, Request *q, Reply *r) {
    long id;
    cJSON *body = parse_body(s, q, r, 1);
    if (!body) return;
    ProtoHeartbeat m;
    ProtoLease out = {0};
    Err e = {{0}};
    if (parse_id(q->arg, &id) != 0) {
        reply_error(r, PROTO_E_BAD_ID, "job id must be a positive integer");
    } else if (proto_heartbeat_parse(body, &m, &e) != 0) {
        reply_error(r, PROTO_E_BAD_FIELD, "%s", e.msg);
    } else {
        int rc = db_heartbeat(s->db, id, q->agent.id, s->cfg.lease_seconds, m.progress,
                              &out.lease_expires);
        out.cancel = rc == 1;
        if (rc == DB_UNAVAILABLE)
            reply_error(r, PROTO_E_STORE_UNAVAILABLE, "job %ld: the store failed: retry", id);
        else if (rc < 0)
            reply_error(r, PROTO_E_LEASE_LOST, "job %ld is not leased to this agent", id);
        else reply_json(r, 200, proto_lease_build(&out));
    }
    cJSON_Delete(body);
}

/* --- uploads ----------------------------------------------------------------------- */

/* Agent A's key, decoded once (S's KeyCache). */
static EVP_PKEY *agent_key(Server *s, const Agent *a, Err *e) {
    KeyCache *c = &s->keys;
    EVP_PKEY *key = NULL;
    size_t slot = (size_t)a->id % KEY_CACHE;
    pthread_mutex_lock(&c->lock);
    if (c->slot[slot].key && c->slot[slot].agent == a->id &&
        !strcmp(c->slot[slot].keyid, a->keyid) && EVP_PKEY_up_ref(c->slot[slot].key))
        key = c->slot[slot].key;
    pthread_mutex_unlock(&c->lock);
    if (key) return key;
    key = dsse_key_from_public_pem(a->public_pem, e);
    if (!key) return NULL;
    pthread_mutex_lock(&c->lock);
    EVP_PKEY_free(c->slot[slot].key);
    c->slot[slot].agent = a->id;
    snprintf(c->slot[slot].keyid, SHA256_HEX_LEN, "%s", a->keyid);
    c->slot[slot].key = key;
    EVP_PKEY_up_ref(key);
    pthread_mutex_unlock(&c->lock);
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
    if (!copy) return NULL; /* out of memory: read as missing, the bundle refused */
    memcpy(copy, f->items[i].data, f->items[i].len);
    *len = f->items[i].len;
    return copy;
}

static void files_free(Files *f) {
    for (size_t i = 0; i < f->n; i++) free((void *)f->items[i].data);
    free(f->items);
    util_nameset_free(&f->index);
}

/* The folders and files the names in {"name": base64} would make: each name at most
 * max_path_depth components, and the distinct folders and files together at most
 * max_bundle_inodes (a 297 KiB upload of a/a/a... names made 59,983 folders). */
/* A file name that is also another file's folder (run.log and run.log/x), or a folder
 * of one of the two files the coordinator writes (agent.pub.pem/x): no folder can hold
 * both, and such a bundle, filed, broke the export of its whole run. FOLDERS: every
 * folder the names of OBJ make. */
static int check_clashes(const cJSON *obj, const NameSet *folders, Reply *r) {
    static const char *const ours[] = {"bundle.dsse.json", "agent.pub.pem"};
    size_t at;
    for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++)
        if (util_nameset_get(folders, ours[i], &at))
            return reply_error(r, PROTO_E_PATH_CLASH,
                               "a file name makes %s, a file the coordinator writes, a folder",
                               ours[i]);
    const cJSON *x;
    cJSON_ArrayForEach(x, obj) {
        if (util_nameset_get(folders, x->string, &at))
            return reply_error(r, PROTO_E_PATH_CLASH,
                               "file name %.200s is also the folder of another file", x->string);
    }
    return 0;
}

static int check_paths(Server *s, const cJSON *obj, Reply *r) {
    NameSet folders = {0};
    char **made =
        calloc((size_t)cJSON_GetArraySize(obj) * (size_t)s->cfg.max_path_depth + 1, sizeof *made);
    size_t nmade = 0, inodes = 2; /* the two files the coordinator adds */
    int rc = made ? 0 : reply_error(r, PROTO_E_INTERNAL, "out of memory checking file names");
    const cJSON *x;
    cJSON_ArrayForEach(x, (made ? obj : NULL)) {
        long depth = 1;
        for (const char *c = x->string; *c; c++) depth += *c == '/';
        if (depth > s->cfg.max_path_depth) {
            rc = reply_error(r, PROTO_E_BAD_FIELD,
                             "file name %.64s...: %ld components, over max_path_depth (%ld)",
                             x->string, depth, s->cfg.max_path_depth);
            break;
        }
        inodes++;
        for (const char *c = strchr(x->string, '/'); c; c = strchr(c + 1, '/')) {
            char *folder = strndup(x->string, (size_t)(c - x->string));
            int added = folder ? util_nameset_add(&folders, folder, 0) : -1;
            if (added == 0) made[nmade++] = folder, inodes++;
            else free(folder);
            if (added < 0) rc = reply_error(r, PROTO_E_INTERNAL, "out of memory checking names");
        }
        if (rc != 0) break;
        if (inodes > (size_t)s->cfg.max_bundle_inodes) {
            rc = reply_error(r, PROTO_E_BAD_FIELD,
                             "the files would make over max_bundle_inodes (%ld) files and folders",
                             s->cfg.max_bundle_inodes);
            break;
        }
    }
    if (rc == 0) rc = check_clashes(obj, &folders, r);
    util_nameset_free(&folders);
    for (size_t i = 0; i < nmade; i++) free(made[i]);
    free(made);
    return rc;
}

/* Decodes {"name": base64} into FILES, with two slots to spare for what we add. A name
 * given twice is refused: one copy would be verified and the other written. */
static int decode_files(const cJSON *obj, Files *f, Reply *r) {
    f->items = calloc((size_t)cJSON_GetArraySize(obj) + 2, sizeof *f->items);
    f->n = 0;
    if (!f->items) return reply_error(r, PROTO_E_INTERNAL, "out of memory reading the files");
    const cJSON *x;
    cJSON_ArrayForEach(x, obj) {
        if (strlen(x->string) > FIELD_MAX_PATH)
            return reply_error(r, PROTO_E_BAD_FIELD, "file name %.64s...: longer than %d bytes",
                               x->string, FIELD_MAX_PATH);
        if (util_nameset_add(&f->index, x->string, f->n) != 0)
            return reply_error(r, PROTO_E_BAD_FIELD, "file name %s appears twice in \"files\"",
                               x->string);
        size_t len = 0;
        unsigned char *data = cJSON_IsString(x) ? util_b64_decode(x->valuestring, &len) : NULL;
        if (!data)
            return reply_error(r, PROTO_E_BAD_FIELD, "file %s: value must be canonical base64 text",
                               x->string);
        if (!strcmp(x->string, "bundle.dsse.json") || !strcmp(x->string, "agent.pub.pem")) {
            free(data); /* the coordinator writes these two itself */
            return reply_error(r, PROTO_E_RESERVED_NAME, "file name %s is reserved", x->string);
        }
        f->items[f->n++] = (FileItem){.name = x->string, .data = data, .len = len};
    }
    return 0;
}

static ProtoErrorCode verdict_code(BundleVerdict v) {
    switch (v) {
    case BUNDLE_MALFORMED: return PROTO_E_BUNDLE_MALFORMED;
    case BUNDLE_WRONG_KEY: return PROTO_E_WRONG_KEY;
    default: return PROTO_E_BUNDLE_REJECTED;
    }
}

/* The statement must be about this farm's job, its source and attempt: a bundle signed
 * for another farm (the same key enrolled in two), or for another attempt or source of
 * this job, is replayed. */
static int check_origin(Server *s, const cJSON *pred, const Job *job, Reply *r) {
    char sha[SHA256_HEX_LEN] = "";
    long size = 0;
    double timeout_s = 0;
    cJSON_Delete(run_facts(s, job->run_id, sha, &size, &timeout_s));
    const char *farm = json_str(pred, "farm");
    const char *source = json_str(cJSON_GetObjectItemCaseSensitive(pred, "source"), "sha256");
    if (!farm || strcmp(farm, s->farm_id) != 0)
        return reply_error(r, PROTO_E_REPLAYED,
                           "the statement's farm is not this farm (%s): signed for another?",
                           s->farm_id);
    if (!source || strcmp(source, sha) != 0)
        return reply_error(r, PROTO_E_REPLAYED,
                           "the statement's source is not run %ld's (%.16s...)", job->run_id, sha);
    if (json_num(pred, "attempt", -1) != (double)job->attempt)
        return reply_error(r, PROTO_E_REPLAYED, "the statement's attempt is %.0f, not %d",
                           json_num(pred, "attempt", -1), job->attempt);
    return 0;
}

/* The statement must be about this very job, by this very agent: anything else is a
 * bundle replayed from elsewhere. */
static int check_predicate(Server *s, const cJSON *pred, const Job *job, const Agent *agent,
                           Reply *r) {
    const cJSON *cell = cJSON_GetObjectItemCaseSensitive(pred, "cell");
    const cJSON *machine = cJSON_GetObjectItemCaseSensitive(pred, "machine");
    const char *ver = json_str(pred, "cairn_version");
    const char *cid = json_str(cell, "id"), *mname = json_str(machine, "name");
    if (json_num(pred, "job", -1) != (double)job->id ||
        json_num(pred, "run", -1) != (double)job->run_id)
        return reply_error(r, PROTO_E_REPLAYED,
                           "the statement is about job %.0f of run %.0f, not job %ld "
                           "of run %ld (replayed bundle?)",
                           json_num(pred, "job", -1), json_num(pred, "run", -1), job->id,
                           job->run_id);
    if (!cid || strcmp(cid, job->cell_id) != 0)
        return reply_error(r, PROTO_E_REPLAYED, "the statement's cell is not this job's cell %s",
                           job->cell_id);
    if (!mname || strcmp(mname, agent->name) != 0)
        return reply_error(r, PROTO_E_REPLAYED, "the statement's machine is not this agent (%s)",
                           agent->name);
    if (!util_is_safe_component(ver))
        return reply_error(r, PROTO_E_BUNDLE_MALFORMED,
                           "predicate.cairn_version must be a safe folder name");
    return check_origin(s, pred, job, r);
}

/* Takes a filing slot for JOB; -1 when another upload of JOB holds one (or all are
 * taken). A job is in at most one slot. */
static int filing_enter(Server *s, long job) {
    assert(job > 0); /* 0 marks a free slot */
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

static void filing_leave(Server *s, int slot, long job) {
    (void)job; /* for the assert only */
    pthread_mutex_lock(&s->filing_lock);
    assert(slot >= 0 && slot < MAX_FILING && s->filing[slot] == job);
    s->filing[slot] = 0;
    pthread_mutex_unlock(&s->filing_lock);
}

/* Verifying and writing files is CPU and kernel work: a few uploads at a time do it as
 * fast as fifty, and leave the CPUs to the short requests (claims, heartbeats). */
static int write_blobs(Server *s, const Files *files, Err *e) {
    sem_wait(&s->filers);
    int rc = store_files(s, files->items, files->n, e);
    sem_post(&s->filers);
    return rc;
}

/* 0 when the job is running under this agent's lease; otherwise the reply is set
 * (including the 200 for a repeated upload of the bundle already filed). */
static int check_lease(const Job *job, const Agent *agent, const char *bundle_sha, Reply *r) {
    if (!strcmp(job->state, "done")) {
        if (job->agent_id == agent->id && !strcmp(job->bundle_sha, bundle_sha)) {
            ProtoFiled m = {.filed = 0, .duplicate = 1};
            snprintf(m.bundle_sha256, sizeof m.bundle_sha256, "%s", bundle_sha);
            reply_json(r, 200, proto_filed_build(&m));
            return -1;
        }
        return reply_error(r, PROTO_E_ALREADY_FILED, "job %ld already has a filed bundle", job->id);
    }
    if (strcmp(job->state, "running") != 0 || job->agent_id != agent->id)
        return reply_error(r, PROTO_E_LEASE_LOST, "job %ld is %s and not leased to this agent",
                           job->id, job->state);
    return 0;
}

/* Job ID into OUT: 1, or 0 answered on R (no such job: 404; the store failed: 503). */
static int job_or_refusal(Server *s, long id, Job *out, Reply *r) {
    int found = db_job_get(s->db, id, out);
    if (found == DB_UNAVAILABLE)
        reply_error(r, PROTO_E_STORE_UNAVAILABLE, "job %ld: the store failed: retry", id);
    else if (!found) reply_error(r, PROTO_E_NOT_FOUND, "no job %ld", id);
    return found == 1;
}

/* The lease read again inside the job's filing slot: uploads of one job file one at a
 * time, so a job found running here cannot be acknowledged by another upload before
 * this one's row commits or fails. */
static int lease_still_held(Server *s, long id, const Agent *agent, const char *bundle_sha,
                            Reply *r) {
    Job now = {0};
    int rc = job_or_refusal(s, id, &now, r) ? check_lease(&now, agent, bundle_sha, r) : -1;
    db_job_free(&now);
    return rc;
}

/* The predicate's test result when it is one of the three, else NULL. */
static const char *test_result(const cJSON *pred) {
    const char *result = json_str(pred, "result");
    return result && (!strcmp(result, "PASSED") || !strcmp(result, "WARNED") ||
                      !strcmp(result, "FAILED"))
               ? result
               : NULL;
}

/* An upload whose bundle was checked, on its way to be filed. */
typedef struct {
    const Job *job;
    const Agent *agent;
    const cJSON *pred, *statement;
    const char *env_text, *bundle_sha;
    Files *files;
} Upload;

/* A bundle's files and the job row they commit with. */
typedef struct {
    const Files *files;
    DbFiling row;
} Filing;

/* Files the checked bundle under its evidence path's reservation (db_filing_reserve),
 * which pins its blobs: they are stored (or found stored) by content, then the job's row
 * commits with the manifest. Across coordinators only the holder commits; a filing that
 * fails removes nothing (blobs are shared: the collector takes what nothing names). */
static void file_reserved(Server *s, const Filing *f, Reply *r) {
    Err e = {{0}};
    const char *rel = f->row.evidence_path;
    if (write_blobs(s, f->files, &e) != 0) {
        reply_error(r, PROTO_E_INTERNAL, "filing failed: %s", e.msg);
        db_filing_release(s->db, rel);
        return;
    }
    pause_point("filing-stored"); /* a test's collection runs while the pins alone hold */
    int done = db_job_done(s->db, &f->row);
    if (done == 0) {
        ProtoFiled m = {.filed = 1, .evidence = rel};
        snprintf(m.bundle_sha256, sizeof m.bundle_sha256, "%s", f->row.bundle_sha);
        reply_json(r, 200, proto_filed_build(&m));
        report_wake(s); /* the run's last job, maybe */
        return;
    }
    if (done != DB_DONE_NOT_OURS) db_filing_release(s->db, rel); /* still this filing's */
    if (done == DB_DONE_REVOKED)
        reply_error(r, PROTO_E_UNKNOWN_AGENT, "agent %ld was revoked", f->row.agent_id);
    else if (done == DB_DONE_FAILED)
        reply_error(r, PROTO_E_STORE_UNAVAILABLE, "job %ld's row did not commit: retry",
                    f->row.job_id);
    else
        reply_error(r, PROTO_E_LEASE_LOST, "job %ld moved on while its bundle was filed",
                    f->row.job_id);
}

/* Each file's SHA-256 from the statement's subjects (bundle_check compared every one
 * with its file, and every file is a subject). */
static void subject_digests(const cJSON *statement, Files *files) {
    const cJSON *x;
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(statement, "subject")) {
        size_t i;
        const char *sha = json_str(cJSON_GetObjectItemCaseSensitive(x, "digest"), "sha256");
        if (util_nameset_get(&files->index, json_str(x, "name"), &i) && sha256_is_hex(sha))
            snprintf(files->items[i].sha, sizeof files->items[i].sha, "%s", sha);
    }
    for (size_t i = 0; i < files->n; i++) assert(sha256_is_hex(files->items[i].sha));
}

/* Files an upload's checked bundle: the job and agent it is for, its statement, its
 * predicate (checked), its envelope's text and digest, and its files. */
static void file_bundle(Server *s, const Upload *u, Reply *r) {
    const Job *job = u->job;
    const Agent *agent = u->agent;
    const cJSON *pred = u->pred;
    const char *bundle_sha = u->bundle_sha;
    Files *files = u->files;
    char rel[1024];
    snprintf(rel, sizeof rel, "evidence/%s/%ld/%s/%s", json_str(pred, "cairn_version"), job->run_id,
             agent->name, job->cell_id);
    subject_digests(u->statement, files);
    FileItem *key = &files->items[files->n++];
    *key = (FileItem){.name = "agent.pub.pem",
                      .data = (const unsigned char *)agent->public_pem,
                      .len = strlen(agent->public_pem)};
    sha256_hex(key->data, key->len, key->sha);
    int slot = filing_enter(s, job->id), held;
    Err e = {{0}};
    unsigned long failures = util_json_failures();
    char *pred_text = cJSON_PrintUnformatted(pred);
    char *digests = store_digests(files->items, files->n);
    char *manifest = store_manifest(u->env_text, files->items, files->n);
    if (!pred_text || !digests || !manifest || util_json_failures() != failures) {
        /* out of memory: a manifest missing a file must never be filed */
        reply_error(r, PROTO_E_INTERNAL, "out of memory filing job %ld's bundle", job->id);
    } else if (slot < 0) {
        reply_error(r, PROTO_E_FILING_BUSY, "another upload of job %ld is being filed", job->id);
    } else if (lease_still_held(s, job->id, agent, bundle_sha, r) != 0) {
        /* another upload of this job was filed and acknowledged while this one was
         * verified: its folder is not to be touched */
    } else if ((held = db_filing_reserve(s->db, &(DbReserve){rel, job->id, digests}, &e)) < 0) {
        reply_error(r, PROTO_E_STORE_UNAVAILABLE, "job %ld not filed: %s", job->id, e.msg);
    } else if (!held) {
        reply_error(r, PROTO_E_FILING_BUSY,
                    "another coordinator is filing job %ld's bundle right now", job->id);
    } else {
        Filing f = {files,
                    {job->id, agent->id, bundle_sha, rel, pred_text, manifest, test_result(pred)}};
        file_reserved(s, &f, r);
    }
    if (slot >= 0) filing_leave(s, slot, job->id);
    free(pred_text);
    free(digests);
    free(manifest);
    files->n -= 1; /* the added key is not ours to free */
}

void handlers_upload(Server *s, Request *q, Reply *r) {
    long id;
    if (parse_id(q->arg, &id) != 0) {
        reply_error(r, PROTO_E_BAD_ID, "job id must be a positive integer");
        return;
    }
    cJSON *body = parse_body(s, q, r, 0);
    if (!body) return;
    ProtoUpload m;
    Files files = {0};
    Job job = {0};
    cJSON *statement = NULL;
    EVP_PKEY *key = NULL;
    char *env_text = NULL;
    char bundle_sha[SHA256_HEX_LEN];
    Err e = {{0}};
    if (proto_upload_parse(body, &m, &e) != 0) {
        reply_error(r, PROTO_E_BAD_FIELD, "%s", e.msg);
        goto out;
    }
    if (check_paths(s, m.files, r) != 0 || decode_files(m.files, &files, r) != 0) goto out;
    if (!job_or_refusal(s, id, &job, r)) goto out;
    env_text = cJSON_PrintUnformatted(m.envelope);
    if (!env_text) {
        reply_error(r, PROTO_E_INTERNAL, "out of memory reading job %ld's bundle", id);
        goto out;
    }
    sha256_hex(env_text, strlen(env_text), bundle_sha);
    if (!sha256_is_hex(bundle_sha)) { /* hashing failed (out of memory) */
        reply_error(r, PROTO_E_INTERNAL, "out of memory hashing job %ld's bundle", id);
        goto out;
    }
    if (check_lease(&job, &q->agent, bundle_sha, r) != 0) goto out;
    key = agent_key(s, &q->agent, &e);
    sem_wait(&s->filers);
    BundleVerdict v =
        key ? bundle_check(m.envelope, key,
                           &(BundleFiles){read_item, &files, m.files, (size_t)s->cfg.max_subjects},
                           &statement, &e)
            : BUNDLE_WRONG_KEY;
    sem_post(&s->filers);
    if (v != BUNDLE_OK) {
        reply_error(r, verdict_code(v), "bundle rejected: %s", e.msg);
        goto out;
    }
    const cJSON *pred = cJSON_GetObjectItemCaseSensitive(statement, "predicate");
    if (fields_check_predicate(pred, &e) != 0) {
        reply_error(r, PROTO_E_BUNDLE_REJECTED, "bundle rejected: %s", e.msg);
        goto out;
    }
    if (check_predicate(s, pred, &job, &q->agent, r) == 0)
        file_bundle(s, &(Upload){&job, &q->agent, pred, statement, env_text, bundle_sha, &files},
                    r);
out:
    metrics_filing(s, r->status == 200);
    EVP_PKEY_free(key);
    cJSON_Delete(statement);
    free(env_text);
    files_free(&files);
    db_job_free(&job);
    cJSON_Delete(body);
}

/* --- blobs ------------------------------------------------------------------------- */

void handlers_blob_put(Server *s, Request *q, Reply *r) {
    ProtoBlob m = {.size = (long)q->len};
    Err e = {{0}};
    if (!sha256_is_hex(q->arg)) {
        reply_error(r, PROTO_E_BAD_ID, "blob name must be 64 lowercase hex digits (its SHA-256)");
        return;
    }
    sha256_hex(q->body, q->len, m.sha256);
    if (strcmp(m.sha256, q->arg) != 0) {
        reply_error(r, PROTO_E_DIGEST_MISMATCH, "body's sha256 is %s, not %s", m.sha256, q->arg);
        return;
    }
    /* Always through the store, which compares the bytes there with these and replaces
     * them when they differ: a blob of the right size was trusted forever (an old
     * archive with one bit flipped stayed served after a correct PUT). */
    if (store_blob(s, m.sha256, q->body, q->len, &e) != 0) {
        reply_error(r, PROTO_E_INTERNAL, "%s", e.msg);
        return;
    }
    reply_json(r, 200, proto_blob_build(&m));
}

void handlers_blob_get(Server *s, Request *q, Reply *r) {
    size_t len = 0;
    if (!sha256_is_hex(q->arg) || !db_blob_exists(s->db, q->arg, NULL)) {
        reply_error(r, PROTO_E_NOT_FOUND, "no blob %s", q->arg);
        return;
    }
    int fd = store_open_blob(s, q->arg, &len); /* streamed: a thousand agents fetch it at once */
    if (fd < 0) {
        reply_error(r, PROTO_E_INTERNAL, "blob %s is missing from the store", q->arg);
        return;
    }
    reply_file(r, fd, len, q->arg, "application/octet-stream");
}

/* --- runs and views ---------------------------------------------------------------- */

void handlers_run_create(Server *s, Request *q, Reply *r) {
    cJSON *body = parse_body(s, q, r, 0);
    if (!body) return;
    ProtoRunCreate m;
    ProtoRunCreated out = {0};
    Err e = {{0}};
    cJSON *jobs = NULL;
    if (proto_run_create_parse(body, &m, &e) != 0) reply_error(r, PROTO_E_BAD_FIELD, "%s", e.msg);
    else if (!db_blob_exists(s->db, m.source, NULL))
        reply_error(r, PROTO_E_MISSING_BLOB, "source blob %s has not been uploaded", m.source);
    else if (!(jobs = matrix_expand(m.matrix, &e))) reply_error(r, PROTO_E_BAD_FIELD, "%s", e.msg);
    else if ((out.run = db_run_create(s->db,
                                      &(DbRun){m.source, m.matrix, m.cases, jobs,
                                               &(RunMeta){m.submitter, m.commit, m.branch}},
                                      &e)) < 0)
        reply_error(r, PROTO_E_INTERNAL, "%s", e.msg);
    else {
        out.jobs = cJSON_GetArraySize(jobs);
        reply_json(r, 201, proto_run_created_build(&out));
        log_event(s, &(LogFields){.event = "run_created", .run = out.run, .duration_ms = -1},
                  "run %ld: %ld jobs over %d cases", out.run, out.jobs,
                  cJSON_GetArraySize(m.cases));
        hub_notify(s);
    }
    cJSON_Delete(jobs);
    cJSON_Delete(body);
}

static void run_view(Server *s, Request *q, Reply *r, cJSON *(*view)(Db *, long)) {
    long id;
    cJSON *run = NULL;
    if (parse_id(q->arg, &id) != 0)
        reply_error(r, PROTO_E_BAD_ID, "run id must be a positive integer");
    else if (!(run = db_run_view(s->db, id)))
        reply_error(r, PROTO_E_NOT_FOUND, "no run %s", q->arg);
    else if (view == db_run_view) reply_json(r, 200, run), run = NULL;
    else reply_json(r, 200, view(s->db, id));
    cJSON_Delete(run);
}

void handlers_run_get(Server *s, Request *q, Reply *r) { run_view(s, q, r, db_run_view); }

void handlers_run_results(Server *s, Request *q, Reply *r) { run_view(s, q, r, db_run_results); }

/* The run's comparison as the dashboard has it: with each cell's decoded values and
 * how the bits differ (report.c), what the JUnit file's failure messages quote. */
void handlers_run_report(Server *s, Request *q, Reply *r) {
    long id;
    cJSON *report = NULL;
    if (parse_id(q->arg, &id) != 0)
        reply_error(r, PROTO_E_BAD_ID, "run id must be a positive integer");
    else if (!(report = report_run(s, id, NULL)))
        reply_error(r, PROTO_E_NOT_FOUND, "no run %s", q->arg);
    else reply_json(r, 200, report);
}

void handlers_run_cancel(Server *s, Request *q, Reply *r) {
    long id;
    if (parse_id(q->arg, &id) != 0)
        reply_error(r, PROTO_E_BAD_ID, "run id must be a positive integer");
    else if (db_run_cancel(s->db, id) != 0) reply_error(r, PROTO_E_NOT_FOUND, "no run %ld", id);
    else {
        reply_json(r, 200, proto_ack_build(PROTO_ACK_CANCELLED));
        report_wake(s);
    }
}

void handlers_status(Server *s, Request *q, Reply *r) {
    (void)q;
    reply_json(r, 200, db_status_view(s->db));
}

void handlers_gc(Server *s, Request *q, Reply *r) {
    (void)q;
    Err e = {{0}};
    int busy = 0;
    cJSON *done = gc_collect(s, &busy, &e);
    if (done) metrics_gc(s, done);
    if (!done) reply_error(r, busy ? PROTO_E_GC_RUNNING : PROTO_E_INTERNAL, "gc: %s", e.msg);
    else {
        reply_json(r, 200, done);
        log_event(s, &(LogFields){.event = "gc", .duration_ms = json_num(done, "seconds", 0) * 1e3},
                  "gc: %.0f blob(s) removed (%.0f bytes), %.0f kept", json_num(done, "removed", 0),
                  json_num(done, "bytes_removed", 0), json_num(done, "blobs", 0));
    }
}
