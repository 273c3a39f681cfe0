/* farm_two_servers.c: two coordinators in one process share nothing
 * (tests/farm/test_two_servers.py). Each has its own state folder, store and tokens; an
 * agent enrolled at A, and a run of each, go through serve_route. Then:
 *   - A's agent token, cached by A's agent cache, means nothing at B (401): a cache of
 *     agents in a file's statics let it authenticate at B;
 *   - each server's run 1 names its own source archive in its claim's answer: a run cache
 *     in a file's statics gave B's agent A's archive.
 * Prints one "ok: ..." line per check and exits 0, or names the failed check and exits 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>

#include "proto/api.h"
#include "proto/dsse.h"
#include "serve/serve.h"

typedef struct {
    Server *s;
    char state[1024];
    const char *enrol, *admin;
    char token[SHA256_HEX_LEN]; /* its agent's bearer token */
    char source[SHA256_HEX_LEN];
    EVP_PKEY *key;
} Farm;

static int failures;

static void check(int ok, const char *what) {
    printf("%s: %s\n", ok ? "ok" : "FAILED", what);
    failures += !ok;
}

static void die(const char *what, const char *why) {
    fprintf(stderr, "farm_two_servers: %s: %s\n", what, why);
    exit(2);
}

/* One request through F's router: its status, its JSON answer into *ANSWER (or freed). */
static int route(Farm *f, const char *method, const char *path, const char *bearer,
                 const char *body, cJSON **answer) {
    char *copy = strdup(body);
    Request q = {.method = method,
                 .path = path,
                 .body = copy,
                 .len = strlen(copy),
                 .bearer = bearer,
                 .peer = "test"};
    Reply r = {0};
    serve_route(f->s, &q, &r);
    if (answer) *answer = r.json, r.json = NULL;
    cJSON_Delete(r.json);
    free(r.raw);
    db_agent_free(&q.agent);
    free(copy);
    return r.status;
}

static void enrol(Farm *f, unsigned char seed_byte) {
    unsigned char seed[32] = "cairn two servers agent key seed";
    seed[31] = seed_byte;
    f->key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, sizeof seed);
    cJSON *answer = NULL;
    ProtoChallenge ch;
    ProtoEnrolled out;
    Err e = {{0}};
    if (route(f, "POST", "/api/v1/agents/challenge", f->enrol, "", &answer) != 200 ||
        proto_challenge_parse(answer, &ch, &e) != 0)
        die("challenge", e.msg);
    cJSON_Delete(answer);
    char *pem = dsse_key_public_pem(f->key);
    cJSON *caps = cJSON_Parse("{\"compilers\": {\"gcc\": {\"version\": \"12\", \"sanitizers\": "
                              "[]}}, \"gpus\": [], \"labels\": []}");
    cJSON *proof = dsse_enrol_proof_sign(f->key, ch.nonce, "agent", &e);
    ProtoEnrol m = {.name = "agent", .public_key = pem, .capabilities = caps, .proof = proof};
    cJSON *req = proto_enrol_build(&m);
    char *text = cJSON_PrintUnformatted(req);
    if (route(f, "POST", "/api/v1/agents/enrol", f->enrol, text, &answer) != 200 ||
        proto_enrolled_parse(answer, &out, &e) != 0)
        die("enrol", e.msg);
    snprintf(f->token, sizeof f->token, "%s", out.token);
    cJSON_Delete(answer);
    free(text);
    cJSON_Delete(req);
    cJSON_Delete(proof);
    cJSON_Delete(caps);
    free(pem);
}

/* F's source archive SOURCE as a blob, and run 1 over it. */
static void submit(Farm *f, const char *source) {
    char path[128], body[512];
    sha256_hex(source, strlen(source), f->source);
    snprintf(path, sizeof path, "/api/v1/blobs/%s", f->source);
    if (route(f, "PUT", path, f->admin, source, NULL) != 200) die("blob", path);
    snprintf(body, sizeof body, "{\"source\": \"%s\", \"matrix\": {}, \"cases\": [\"a.cairn\"]}",
             f->source);
    if (route(f, "POST", "/api/v1/runs", f->admin, body, NULL) != 201) die("run", body);
}

static void open_farm(Farm *f, const char *enrol_token, const char *admin_token) {
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(f->state, sizeof f->state, "%s/two-servers-XXXXXX", base);
    if (!mkdtemp(f->state)) die("mkdtemp", f->state);
    FarmConfig cfg;
    serve_config_defaults(&cfg);
    cfg.sync_full = 0;
    cfg.claim_wait_max_seconds = 0;
    snprintf(cfg.enrol_token, sizeof cfg.enrol_token, "%s", enrol_token);
    snprintf(cfg.admin_token, sizeof cfg.admin_token, "%s", admin_token);
    f->enrol = enrol_token, f->admin = admin_token;
    Err e = {{0}};
    if (!(f->s = serve_open(f->state, &cfg, &e))) die("serve_open", e.msg);
}

/* The source digest a claim at F answers with ("" when none is claimed). */
static void claim_source(Farm *f, char out[SHA256_HEX_LEN]) {
    cJSON *answer = NULL;
    ProtoJob job;
    Err e = {{0}};
    out[0] = '\0';
    if (route(f, "POST", "/api/v1/claim", f->token, "{\"wait_s\": 0}", &answer) == 200 &&
        proto_job_parse(answer, &job, &e) == 0)
        snprintf(out, SHA256_HEX_LEN, "%s", job.source_sha256);
    cJSON_Delete(answer);
}

int main(void) {
    static Farm a, b; /* reachable until exit */
    open_farm(&a, "enrol-token-of-farm-a-000", "admin-token-of-farm-a-000");
    open_farm(&b, "enrol-token-of-farm-b-111", "admin-token-of-farm-b-111");
    enrol(&a, 1);
    /* A's token, now in A's cache (an authenticated claim, nothing queued: 204). */
    check(route(&a, "POST", "/api/v1/claim", a.token, "{\"wait_s\": 0}", NULL) == 204,
          "A's agent claims at A (204: nothing queued)");
    check(route(&b, "POST", "/api/v1/claim", a.token, "{\"wait_s\": 0}", NULL) == 401,
          "A's agent token is refused at B (401)");
    enrol(&b, 2);
    submit(&a, "source archive of farm A");
    submit(&b, "source archive of farm B");
    char got_a[SHA256_HEX_LEN], got_b[SHA256_HEX_LEN];
    claim_source(&a, got_a); /* A's run 1, now in A's run cache */
    claim_source(&b, got_b);
    check(!strcmp(got_a, a.source), "A's claim names A's source archive");
    check(!strcmp(got_b, b.source), "B's claim names B's source archive, not A's");
    fs_remove_tree(a.state);
    fs_remove_tree(b.state);
    EVP_PKEY_free(a.key);
    EVP_PKEY_free(b.key);
    return failures ? 1 : 0;
}
