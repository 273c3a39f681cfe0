/* fuzz_farm.c: the coordinator's API under libFuzzer (tests/fuzz/fuzz_farm.sh). An input
 * is either requests run through serve_route (the routing, authentication and handlers
 * a connection runs) against a throwaway state folder, or a bundle, envelope, proof or
 * source archive for the parsers behind uploads. Built with -DFUZZ_FARM_REPLAY it has a
 * main of its own that replays files: `make test` runs the kept corpus through it
 * (tests/fuzz/test_fuzz_farm.py).
 *
 * Input formats, chosen by the first line:
 *   METHOD PATH \n TOKEN \n BODY   requests, several joined by a line "====". TOKEN is
 *                                  "@enrol", "@admin", "@agent", "-" (none) or sent as it
 *                                  is; "@sign" is the agent's token with the body's
 *                                  "statement" signed into the "envelope" the route wants.
 *                                  In PATH and BODY, @job @run @cell @source @farm stand for
 *                                  the last claimed job, its run and cell, the source blob
 *                                  and the farm's identity (a signed statement that names
 *                                  no farm names this one).
 *   #bundle \n {"statement": S, "files": {name: text}}   S signed, then bundle_check
 *   #envelope \n ENVELOPE          bundle_check as it is (no files)
 *   #proof \n ENVELOPE             enrol_proof_check for the name "fuzz"
 *   #archive \n ARCHIVE            archive_unpack into a scratch folder
 *   #answer \n JSON                every parser of an answer (what agents and client
 *                                  verbs read from a coordinator they may not trust)
 *
 * Built with -DFUZZ_FARM_ALLOC_FAULTS too (fuzz_farm_faults), its malloc, calloc and
 * realloc fail the Nth call (FUZZ_FARM_FAIL_AT=N) counted from the end of the harness's
 * setup, as an LD_PRELOAD that fails the Nth call would: an input must then come back,
 * every allocation failure an error value (tests/fuzz/test_fuzz_farm.py sweeps N over
 * the filing and the comparison of tests/fuzz/corpus_farm/full_job). It prints "faults:
 * the Nth allocation failed" when it did, and how many allocations the input made. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>

#include "proto/api.h"
#include "proto/archive.h"
#include "core/core.h"
#include "proto/dsse.h"
#include "serve/serve.h"

#define ENROL_TOKEN "fuzz-enrol-token-0123456789"
#define ADMIN_TOKEN "fuzz-admin-token-0123456789"
#define AGENT_NAME  "fuzz"
#define SOURCE_TEXT "fuzz source archive"

#ifdef FUZZ_FARM_ALLOC_FAULTS
#include <stdatomic.h>
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);

static atomic_long allocations = -1; /* counted once armed (>= 0) */
static long fail_at;                 /* the allocation that fails (0: none) */
static atomic_int failed;

static int fails(void) {
    if (atomic_load(&allocations) < 0) return 0;
    long n = atomic_fetch_add(&allocations, 1) + 1;
    if (n != fail_at) return 0;
    atomic_store(&failed, 1);
    return 1;
}

void *malloc(size_t n) { return fails() ? NULL : __libc_malloc(n); }
void *calloc(size_t n, size_t size) { return fails() ? NULL : __libc_calloc(n, size); }
void *realloc(void *p, size_t n) { return fails() ? NULL : __libc_realloc(p, n); }

static void faults_arm(void) {
    const char *at = getenv("FUZZ_FARM_FAIL_AT");
    fail_at = at ? atol(at) : 0;
    atomic_store(&allocations, 0);
}

static void faults_report(void) {
    long n = atomic_exchange(&allocations, -1);
    printf("faults: %ld allocations%s\n", n, atomic_load(&failed) ? ", the chosen one failed" : "");
}
#endif

static Server *server;
static char state[1024];
static EVP_PKEY *agent_key_;
static char agent_token[SHA256_HEX_LEN], source_sha[SHA256_HEX_LEN], scratch[1100];
static long last_job, last_run;
static char last_cell[PROTO_MAX_NAME + 1] = "none";
static char farm_id[PROTO_FARM_ID_LEN]; /* the coordinator's farm, from the enrolment */

static void die(const char *what, const char *why) {
    fprintf(stderr, "fuzz_farm: %s: %s\n", what, why);
    abort();
}

/* Whose requests these are: the inputs' and the harness's own (its enrolments) come
 * from two client addresses, so that inputs holding their share of challenges never
 * starve the harness. */
static const char *peer = "harness";

/* One request through the router; the answer's JSON (or NULL) goes to *ANSWER. */
static int route(const char *method, const char *path, const char *bearer, const char *body,
                 size_t len, cJSON **answer) {
    char *copy = malloc(len + 1); /* exactly the body and its NUL, as the server has it */
    if (!copy) return 0;          /* the harness's own allocation failed (fuzz_farm_faults) */
    memcpy(copy, body, len);
    copy[len] = '\0';
    Request q = {
        .method = method, .path = path, .body = copy, .len = len, .bearer = bearer, .peer = peer};
    Reply r = {0};
    serve_route(server, &q, &r);
    if (getenv("FUZZ_FARM_VERBOSE")) /* the replay's log: tests/fuzz/test_fuzz_farm.py reads it */
        printf("%s %s -> %d %s\n", method, path, r.status,
               r.status >= 400 ? json_str(r.json, "code") : "");
    if (answer) *answer = r.json, r.json = NULL;
    if (r.status == 200 && !strcmp(path, "/api/v1/claim") && r.json) {
        ProtoJob job;
        Err e = {{0}};
        if (proto_job_parse(r.json, &job, &e) != 0) die("claim answer", e.msg); /* never sent */
        last_job = job.job, last_run = job.run;
        snprintf(last_cell, sizeof last_cell, "%s", job.cell_id);
    }
    cJSON_Delete(r.json);
    free(r.raw);
    db_agent_free(&q.agent);
    free(copy);
    return r.status;
}

static int route_json(const char *method, const char *path, const char *bearer, const cJSON *req,
                      cJSON **answer) {
    char *text = cJSON_PrintUnformatted(req);
    int status = route(method, path, bearer, text, strlen(text), answer);
    free(text);
    return status;
}

/* Enrols an agent with key number GENERATION through the API itself (an input that
 * revokes the agent makes the next one). */
static void enrol_agent(unsigned char generation) {
    const char *was = peer;
    peer = "harness";
    unsigned char seed[32] = "cairn fuzz_farm agent key seed!";
    seed[31] = generation;
    EVP_PKEY_free(agent_key_);
    agent_key_ = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, sizeof seed);
    cJSON *answer = NULL;
    ProtoChallenge ch;
    ProtoEnrolled out;
    Err e = {{0}};
    if (route("POST", "/api/v1/agents/challenge", ENROL_TOKEN, "", 0, &answer) != 200 ||
        proto_challenge_parse(answer, &ch, &e) != 0)
        die("challenge", e.msg);
    cJSON_Delete(answer);
    char *pem = dsse_key_public_pem(agent_key_);
    cJSON *caps = cJSON_Parse("{\"compilers\": {\"gcc\": {\"version\": \"fuzz\", \"sanitizers\": "
                              "[\"asan\", \"tsan\"]}}, \"gpus\": [], \"labels\": [\"fuzz\"]}");
    cJSON *proof = dsse_enrol_proof_sign(agent_key_, ch.nonce, AGENT_NAME, &e);
    ProtoEnrol m = {.name = AGENT_NAME, .public_key = pem, .capabilities = caps, .proof = proof};
    cJSON *req = proto_enrol_build(&m);
    if (route_json("POST", "/api/v1/agents/enrol", ENROL_TOKEN, req, &answer) != 200 ||
        proto_enrolled_parse(answer, &out, &e) != 0)
        die("enrol", e.msg);
    snprintf(agent_token, sizeof agent_token, "%s", out.token);
    snprintf(farm_id, sizeof farm_id, "%s", out.farm);
    cJSON_Delete(answer);
    cJSON_Delete(req);
    cJSON_Delete(proof);
    cJSON_Delete(caps);
    free(pem);
    peer = was;
}

/* The source blob the seeds' runs name (@source). */
static void upload_source(void) {
    char path[128];
    sha256_hex(SOURCE_TEXT, strlen(SOURCE_TEXT), source_sha);
    snprintf(path, sizeof path, "/api/v1/blobs/%s", source_sha);
    if (route("PUT", path, ADMIN_TOKEN, SOURCE_TEXT, strlen(SOURCE_TEXT), NULL) != 200)
        die("blob", "refused");
}

static void cleanup(void) { fs_remove_tree(state); }

static void setup(void) {
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    Err e = {{0}};
    snprintf(state, sizeof state, "%s/fuzz-farm-XXXXXX", base);
    if (!mkdtemp(state)) die("mkdtemp", state);
    atexit(cleanup);
    FarmConfig cfg;
    serve_config_defaults(&cfg);
    cfg.max_body_bytes = 1 << 20;
    cfg.max_subjects = 64;
    cfg.lease_seconds = 60;
    cfg.claim_wait_max_seconds = 0; /* a claim never waits */
    cfg.sync_full = 0;
    /* Bounds small enough that inputs reach them (each has a seed that does): */
    cfg.max_path_depth = 6;
    cfg.max_bundle_inodes = 48;
    cfg.max_capabilities_bytes = 2048;
    cfg.max_compare_observations = 2000;
    cfg.max_challenges = 32; /* the harness's own enrolments ask from another address */
    cfg.max_challenges_per_address = 4;
    snprintf(cfg.enrol_token, sizeof cfg.enrol_token, ENROL_TOKEN);
    snprintf(cfg.admin_token, sizeof cfg.admin_token, ADMIN_TOKEN);
    if (!(server = serve_open(state, &cfg, &e))) die("serve_open", e.msg);
    snprintf(scratch, sizeof scratch, "%s/unpacked", state);
    enrol_agent(0);
    upload_source();
}

/* Copies TEXT (LEN bytes) into OUT (when not NULL) with the @names replaced; returns
 * the length of the result. */
static size_t replace_names(const char *text, size_t len, char *out) {
    char job[32], run[32];
    snprintf(job, sizeof job, "%ld", last_job);
    snprintf(run, sizeof run, "%ld", last_run);
    const char *names[] = {"@job", "@run", "@cell", "@source", "@farm"};
    const char *values[] = {job, run, last_cell, source_sha, farm_id};
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        int hit = -1;
        for (int k = 0; k < 5 && hit < 0; k++)
            if (text[i] == '@' && len - i >= strlen(names[k]) &&
                !memcmp(text + i, names[k], strlen(names[k])))
                hit = k;
        const char *from = hit < 0 ? text + i : values[hit];
        size_t took = hit < 0 ? 1 : strlen(names[hit]), gave = hit < 0 ? 1 : strlen(values[hit]);
        if (out) memcpy(out + n, from, gave);
        n += gave;
        i += took;
    }
    return n;
}

/* TEXT with the @names replaced: malloc'd to the exact size (large allocations are slow
 * under ASan), NUL-ended, its length in *OUT_LEN. */
static char *substitute(const char *text, size_t len, size_t *out_len) {
    *out_len = replace_names(text, len, NULL);
    char *out = malloc(*out_len + 1);
    if (!out) return NULL;
    replace_names(text, len, out);
    out[*out_len] = '\0';
    return out;
}

/* "@sign": the body's "statement" signed into the envelope of an upload body, naming
 * this farm as an agent's statements do when its predicate names none. */
static char *sign_upload(const char *body, size_t len, size_t *out_len) {
    cJSON *j = cJSON_ParseWithLength(body, len);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "statement");
    if (!st) {
        cJSON_Delete(j);
        return NULL;
    }
    cJSON *pred = cJSON_GetObjectItemCaseSensitive(st, "predicate");
    if (cJSON_IsObject(pred) && !cJSON_GetObjectItemCaseSensitive(pred, "farm"))
        cJSON_AddStringToObject(pred, "farm", farm_id);
    char *payload = cJSON_PrintUnformatted(st);
    Err e = {{0}};
    cJSON *env = dsse_sign(agent_key_, INTOTO_PAYLOAD_TYPE, payload ? payload : "",
                           payload ? strlen(payload) : 0, &e);
    ProtoUpload m = {.envelope = env, .files = cJSON_GetObjectItemCaseSensitive(j, "files")};
    cJSON *req = proto_upload_build(&m);
    char *text = cJSON_PrintUnformatted(req);
    *out_len = text ? strlen(text) : 0;
    cJSON_Delete(req);
    cJSON_Delete(env);
    free(payload);
    cJSON_Delete(j);
    return text;
}

/* One "METHOD PATH\nTOKEN\nBODY" request. */
static void one_request(const char *text, size_t len) {
    const char *nl1 = memchr(text, '\n', len);
    const char *nl2 = nl1 ? memchr(nl1 + 1, '\n', len - (size_t)(nl1 + 1 - text)) : NULL;
    char line[1200], method[16], token[128];
    if (!nl2 || (size_t)(nl1 - text) >= sizeof line || (size_t)(nl2 - nl1 - 1) >= sizeof token)
        return;
    memcpy(line, text, (size_t)(nl1 - text));
    line[nl1 - text] = '\0';
    memcpy(token, nl1 + 1, (size_t)(nl2 - nl1 - 1));
    token[nl2 - nl1 - 1] = '\0';
    const char *space = strchr(line, ' ');
    if (!space || (size_t)(space - line) >= sizeof method) return;
    memcpy(method, line, (size_t)(space - line));
    method[space - line] = '\0';
    size_t path_len, body_len;
    char *path = substitute(space + 1, strlen(space + 1), &path_len);
    char *body = substitute(nl2 + 1, len - (size_t)(nl2 + 1 - text), &body_len);
    if (!path || !body) { /* the harness's own allocation failed (fuzz_farm_faults) */
        free(path);
        free(body);
        return;
    }
    const char *bearer = !strcmp(token, "@enrol")   ? ENROL_TOKEN
                         : !strcmp(token, "@admin") ? ADMIN_TOKEN
                         : !strcmp(token, "@agent") ? agent_token
                         : !strcmp(token, "@sign")  ? agent_token
                         : !strcmp(token, "-")      ? NULL
                                                    : token;
    if (!strcmp(token, "@sign")) {
        char *signed_body = sign_upload(body, body_len, &body_len);
        free(body);
        body = signed_body;
    }
    static unsigned char generation;
    peer = "fuzz";
    int status = body ? route(method, path, bearer, body, body_len, NULL) : 0;
    peer = "harness";
    if (status == 200 && strstr(path, "/revoke"))
        enrol_agent(++generation); /* the revoked one may have been ours */
    free(path);
    free(body);
}

static char *read_subject(void *ctx, const char *name, size_t *len) {
    const char *text = json_str(ctx, name);
    if (!text) return NULL;
    *len = strlen(text);
    return strdup(text);
}

/* A bundle (mode "#bundle": S signed first) through the upload's checks. */
static void check_bundle(const char *text, size_t len, int sign) {
    cJSON *j = cJSON_ParseWithLength(text, len), *env = NULL, *statement = NULL;
    const cJSON *files = sign ? cJSON_GetObjectItemCaseSensitive(j, "files") : NULL;
    Err e = {{0}};
    if (sign && cJSON_GetObjectItemCaseSensitive(j, "statement")) {
        char *payload = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(j, "statement"));
        env = dsse_sign(agent_key_, INTOTO_PAYLOAD_TYPE, payload, strlen(payload), &e);
        free(payload);
    }
    const cJSON *envelope = sign ? env : j;
    if (envelope &&
        bundle_check(envelope, agent_key_, &(BundleFiles){read_subject, (void *)files, files, 64},
                     &statement, &e) == BUNDLE_OK)
        fields_check_predicate(cJSON_GetObjectItemCaseSensitive(statement, "predicate"), &e);
    cJSON_Delete(statement);
    cJSON_Delete(env);
    cJSON_Delete(j);
}

static void check_proof(const char *text, size_t len) {
    cJSON *j = cJSON_ParseWithLength(text, len);
    char nonce[SHA256_HEX_LEN];
    Err e = {{0}};
    if (j) dsse_enrol_proof_check(j, agent_key_, AGENT_NAME, nonce, &e);
    cJSON_Delete(j);
}

/* Every answer parser over one JSON text; view rows through their row parsers. With
 * FUZZ_FARM_VERBOSE, one line names the parsers that accepted it ("rows" counted). */
static void parse_answers(const char *text, size_t len) {
    cJSON *j = cJSON_ParseWithLength(text, len);
    char *copy = strndup(text, len), seen[512] = "answer:";
    Err e = {{0}};
    ProtoError pe;
    union {
        ProtoChallenge challenge;
        ProtoEnrolled enrolled;
        ProtoJob job;
        ProtoLease lease;
        ProtoFiled filed;
        ProtoBlob blob;
        ProtoRunCreated created;
        ProtoRunView view;
        ProtoJobRow job_row;
        ProtoStatus status;
        ProtoAgentRow agent_row;
        ProtoRunRow run_row;
        ProtoEventRow event_row;
    } m;
    const cJSON *row;
    int rows = 0;
#define ACCEPTS(name, call)                                                                        \
    if ((call) == 0) strcat(seen, " " name)
    proto_error_parse(409, copy, &pe);
    if (pe.code != PROTO_E_NONE) strcat(seen, " error");
    ACCEPTS("challenge", proto_challenge_parse(j, &m.challenge, &e));
    ACCEPTS("enrolled", proto_enrolled_parse(j, &m.enrolled, &e));
    ACCEPTS("job", proto_job_parse(j, &m.job, &e));
    ACCEPTS("lease", proto_lease_parse(j, &m.lease, &e));
    ACCEPTS("filed", proto_filed_parse(j, &m.filed, &e));
    ACCEPTS("blob", proto_blob_parse(j, &m.blob, &e));
    ACCEPTS("created", proto_run_created_parse(j, &m.created, &e));
    ACCEPTS("ack", proto_ack_parse(j, PROTO_ACK_CANCELLED, &e));
    if (proto_run_view_parse(j, &m.view, &e) == 0) {
        strcat(seen, " run_view");
        cJSON_ArrayForEach(row, m.view.jobs) rows += proto_job_row_parse(row, &m.job_row, &e) == 0;
    }
    if (proto_status_parse(j, &m.status, &e) == 0) {
        ProtoStatus st = m.status;
        strcat(seen, " status");
        cJSON_ArrayForEach(row, st.agents) rows +=
            proto_agent_row_parse(row, &m.agent_row, &e) == 0;
        cJSON_ArrayForEach(row, st.runs) rows += proto_run_row_parse(row, &m.run_row, &e) == 0;
        cJSON_ArrayForEach(row, st.events) rows +=
            proto_event_row_parse(row, &m.event_row, &e) == 0;
    }
#undef ACCEPTS
    if (getenv("FUZZ_FARM_VERBOSE")) printf("%s rows=%d\n", seen, rows);
    free(copy);
    cJSON_Delete(j);
}

static int starts(const uint8_t *data, size_t size, const char *head) {
    return size >= strlen(head) && !memcmp(data, head, strlen(head));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int ready;
    const char *text = (const char *)data;
    Err e = {{0}};
    if (starts(data, size, "#answer\n")) {
        parse_answers(text + 8, size - 8); /* needs no coordinator */
        return 0;
    }
    if (!ready) setup(), ready = 1;
#ifdef FUZZ_FARM_ALLOC_FAULTS
    faults_arm();
#endif
    if (starts(data, size, "#bundle\n")) check_bundle(text + 8, size - 8, 1);
    else if (starts(data, size, "#envelope\n")) check_bundle(text + 10, size - 10, 0);
    else if (starts(data, size, "#proof\n")) check_proof(text + 7, size - 7);
    else if (starts(data, size, "#archive\n")) {
        archive_unpack(text + 9, size - 9, scratch, &e);
        fs_remove_tree(scratch);
    } else {
        static const char SEP[] = "\n====\n";
        for (size_t at = 0; at < size;) {
            const char *end = memmem(text + at, size - at, SEP, strlen(SEP));
            size_t n = end ? (size_t)(end - (text + at)) : size - at;
            one_request(text + at, n);
            at += n + (end ? strlen(SEP) : 0);
        }
    }
#ifdef FUZZ_FARM_ALLOC_FAULTS
    faults_report();
#endif
    return 0;
}

#ifdef FUZZ_FARM_REPLAY
#include "fuzz_replay.h"
int main(int argc, char **argv) { return fuzz_replay_main("fuzz_farm", argc, argv, 0); }
#endif
