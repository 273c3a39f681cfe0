/* client.c: the agent's side of the coordinator API (docs/farm.md): enrol, long-poll
 * claims, heartbeats, source download, and signed uploads retried with backoff. */
#include "agent.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/api.h"
#include "proto/dsse.h"

/* E for an answer that is not the one wanted: an error answer (by its code) or a
 * transport failure, else the parser's complaint already in E. Returns -1. */
static int failed(const char *what, long status, const ProtoError *pe, Err *e) {
    if (status < 0 || status >= 400) return proto_fail(e, what, pe);
    char why[sizeof e->msg];
    snprintf(why, sizeof why, "%s", e->msg[0] ? e->msg : "an unexpected answer");
    return err_set(e, "%s: HTTP %ld: %s", what, status, why);
}

/* Refusals that retrying will not change (enrolment): -2, else -1. */
static int refused(const ProtoError *pe) {
    return pe->code == PROTO_E_WRONG_TOKEN || pe->code == PROTO_E_KEY_REVOKED ||
                   pe->code == PROTO_E_PROOF_REFUSED || pe->code == PROTO_E_BAD_FIELD
               ? -2
               : -1;
}

int client_enrol(Session *s, const Enrolment *en, Err *e) {
    EVP_PKEY *key = en->key;
    const char *name = en->name;
    memset(s, 0, sizeof *s);
    s->http = http_new(en->url, en->token);
    s->key = key;
    snprintf(s->name, sizeof s->name, "%s", name);
    ProtoError pe;
    ProtoChallenge challenge;
    ProtoEnrolled enrolled;
    cJSON *answer = NULL;
    /* Proof of key possession: the coordinator's nonce, signed with our key. */
    long status = proto_call(s->http, &(ProtoCall){"POST", "/api/v1/agents/challenge", NULL, 30},
                             &answer, &pe);
    int ok = status == 200 && proto_challenge_parse(answer, &challenge, e) == 0;
    cJSON_Delete(answer);
    if (!ok) return failed("challenge", status, &pe, e), refused(&pe);
    cJSON *proof = dsse_enrol_proof_sign(key, challenge.nonce, name, e);
    if (!proof) return -1;
    char *pem = dsse_key_public_pem(key);
    ProtoEnrol m = {.name = name, .public_key = pem, .capabilities = en->caps, .proof = proof};
    cJSON *req = proto_enrol_build(&m);
    status =
        proto_call(s->http, &(ProtoCall){"POST", "/api/v1/agents/enrol", req, 30}, &answer, &pe);
    cJSON_Delete(req);
    cJSON_Delete(proof);
    free(pem);
    ok = status == 200 && proto_enrolled_parse(answer, &enrolled, e) == 0;
    cJSON_Delete(answer);
    if (!ok) return failed("enrol", status, &pe, e), refused(&pe);
    snprintf(s->token, sizeof s->token, "%s", enrolled.token);
    s->id = enrolled.agent;
    http_set_token(s->http, s->token);
    return 0;
}

void client_close(Session *s) {
    http_free(s->http);
    s->http = NULL;
}

int client_claim(Session *s, double wait_s, cJSON **answer, ProtoJob *job, Err *e) {
    ProtoClaim m = {.wait_s = wait_s};
    ProtoError pe;
    cJSON *req = proto_claim_build(&m);
    long status = proto_call(s->http, &(ProtoCall){"POST", "/api/v1/claim", req, (long)wait_s + 30},
                             answer, &pe);
    cJSON_Delete(req);
    if (status == 200 && proto_job_parse(*answer, job, e) == 0) return 1;
    cJSON_Delete(*answer);
    *answer = NULL;
    if (status == 204) return 0;
    failed("claim", status, &pe, e);
    /* forgotten or revoked: the caller enrols again (or stops); superseded: it stops */
    if (pe.code == PROTO_E_TOKEN_SUPERSEDED) return -3;
    return pe.code == PROTO_E_UNKNOWN_AGENT || pe.code == PROTO_E_NO_TOKEN ? -2 : -1;
}

int client_heartbeat(Session *s, long job, const char *progress) {
    char path[128];
    snprintf(path, sizeof path, "/api/v1/jobs/%ld/heartbeat", job);
    ProtoHeartbeat m = {.progress = progress};
    ProtoLease lease;
    ProtoError pe;
    Err e = {{0}};
    cJSON *req = proto_heartbeat_build(&m), *answer = NULL;
    long status = proto_call(s->http, &(ProtoCall){"POST", path, req, 20}, &answer, &pe);
    cJSON_Delete(req);
    int parsed = status == 200 ? proto_lease_parse(answer, &lease, &e) : -1;
    cJSON_Delete(answer);
    if (parsed == 0) return lease.cancel ? 1 : 0;
    /* Unreachable or another error: keep working, the lease may still hold. */
    return pe.code == PROTO_E_LEASE_LOST ? -1 : 0;
}
int client_fetch_blob(Session *s, const char *sha, char **data, size_t *len, Err *e) {
    char path[128], got[SHA256_HEX_LEN], what[128];
    snprintf(path, sizeof path, "/api/v1/blobs/%s", sha);
    snprintf(what, sizeof what, "source %.64s", sha);
    HttpResponse r;
    ProtoError pe;
    long status = proto_send(s->http, &(HttpRequest){"GET", path, NULL, NULL, 0, 300}, &r, &pe);
    if (status != 200) {
        if (status >= 0) http_response_free(&r);
        return failed(what, status, &pe, e);
    }
    sha256_hex(r.body, r.len, got);
    if (strcmp(got, sha) != 0) {
        http_response_free(&r);
        return err_set(e, "source archive digest is %s, expected %s", got, sha);
    }
    *data = r.body;
    *len = r.len;
    return 0;
}

/* 1 when R is a filing answer ({"filed", "bundle_sha256", ...}), else 0 with E set. */
static int filed(const HttpResponse *r, Err *e) {
    cJSON *j = cJSON_ParseWithLength(r->body, r->len);
    ProtoFiled m;
    Err why = {{0}};
    int ok = proto_filed_parse(j, &m, &why) == 0;
    if (!ok) err_set(e, "upload: HTTP 200 without a filing answer: %s", why.msg);
    cJSON_Delete(j);
    return ok;
}

long client_upload(Session *s, long job, const Bundle *b, int max_tries, Err *e) {
    assert(max_tries >= 1); /* else nothing is sent and no error is set */
    char *payload = cJSON_PrintUnformatted(b->statement);
    cJSON *env = dsse_sign(s->key, INTOTO_PAYLOAD_TYPE, payload, strlen(payload), e);
    free(payload);
    if (!env) return -1;
    ProtoUpload m = {.envelope = env, .files = b->files};
    cJSON *body = proto_upload_build(&m);
    char *text = cJSON_PrintUnformatted(body);
    cJSON_Delete(body);
    cJSON_Delete(env);
    char path[128], what[160];
    snprintf(path, sizeof path, "/api/v1/jobs/%ld/bundle", job);
    snprintf(what, sizeof what, "upload of job %ld", job);
    long status = -1;
    long backoff_ms = 250;
    for (int attempt = 1; attempt <= max_tries; attempt++) {
        HttpResponse r;
        ProtoError pe;
        status = proto_send(s->http, &(HttpRequest){"POST", path, NULL, text, strlen(text), 120},
                            &r, &pe);
        if (status == 200 && !filed(&r, e)) status = -1; /* not a filing answer: again */
        if (status >= 0) http_response_free(&r);
        if (status < 0 || status >= 400) proto_fail(e, what, &pe);
        /* The same bytes again are safe: a second copy of a filed bundle answers 200. */
        int retry = status < 0 || status >= 500 || pe.code == PROTO_E_FILING_BUSY;
        if (!retry) break;
        fprintf(stderr, "agent: upload of job %ld failed (%s), retry %d in %ld ms\n", job, e->msg,
                attempt, backoff_ms);
        timing_sleep_ms(backoff_ms);
        backoff_ms = backoff_ms * 2 > 8000 ? 8000 : backoff_ms * 2;
    }
    free(text);
    return status;
}
