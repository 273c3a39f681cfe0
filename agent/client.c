/* client.c: the agent's side of the coordinator API (docs/farm.md): enrol, long-poll
 * claims, heartbeats, source download, and signed uploads retried with backoff. */
#include "agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsse.h"

int client_enrol(Session *s, const char *url, const char *enrol_token, EVP_PKEY *key,
                 const char *name, const cJSON *caps, Err *e) {
    memset(s, 0, sizeof *s);
    s->http = http_new(url, enrol_token);
    s->key = key;
    snprintf(s->name, sizeof s->name, "%s", name);
    long status = 0;
    cJSON *answer = NULL, *proof = NULL;
    /* Proof of key possession: the coordinator's nonce, signed with our key. */
    int rc = http_json(s->http, "POST", "/api/v1/agents/challenge", NULL, 30, &status, &answer, e);
    if (rc == 0 && status == 200 && json_str(answer, "nonce"))
        proof = dsse_enrol_proof_sign(key, json_str(answer, "nonce"), name, e);
    else if (rc == 0) rc = err_set(e, "challenge: %ld", status);
    cJSON_Delete(answer);
    answer = NULL;
    if (!proof) return status == 401 ? -2 : -1;
    char *pem = dsse_key_public_pem(key);
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "name", name);
    cJSON_AddStringToObject(req, "public_key", pem);
    cJSON_AddItemReferenceToObject(req, "capabilities", (cJSON *)caps);
    cJSON_AddItemToObject(req, "proof", proof);
    free(pem);
    rc = http_json(s->http, "POST", "/api/v1/agents/enrol", req, 30, &status, &answer, e);
    cJSON_Delete(req);
    const char *token = json_str(answer, "token");
    if (rc == 0 && status == 200 && token) {
        snprintf(s->token, sizeof s->token, "%s", token);
        s->id = (long)json_num(answer, "agent", 0);
        http_set_token(s->http, s->token);
    } else if (rc == 0) {
        rc = status == 403 || status == 401 ? -2 : -1; /* refused: retrying will not help */
    }
    cJSON_Delete(answer);
    return rc;
}

void client_close(Session *s) {
    http_free(s->http);
    s->http = NULL;
}

int client_claim(Session *s, double wait_s, cJSON **job, Err *e) {
    cJSON *req = cJSON_CreateObject();
    cJSON_AddNumberToObject(req, "wait_s", wait_s);
    long status = 0;
    *job = NULL;
    int rc = http_json(s->http, "POST", "/api/v1/claim", req, (long)wait_s + 30, &status, job, e);
    cJSON_Delete(req);
    if (rc != 0) return -1;
    if (status == 200 && *job) return 1;
    cJSON_Delete(*job);
    *job = NULL;
    if (status == 204) return 0;
    if (status == 401) err_set(e, "401: the coordinator does not know this agent's token");
    return -1;
}

int client_heartbeat(Session *s, long job, const char *progress) {
    char path[128];
    snprintf(path, sizeof path, "/api/v1/jobs/%ld/heartbeat", job);
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "progress", progress);
    long status = 0;
    cJSON *answer = NULL;
    Err e = {{0}};
    int rc = http_json(s->http, "POST", path, req, 20, &status, &answer, &e);
    cJSON_Delete(req);
    int cancel = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(answer, "cancel"));
    cJSON_Delete(answer);
    if (rc != 0) return 0; /* unreachable for now: keep working, the lease may still hold */
    if (status == 200) return cancel ? 1 : 0;
    return status == 409 ? -1 : 0;
}

int client_fetch_blob(Session *s, const char *sha, char **data, size_t *len, Err *e) {
    char path[128], got[SHA256_HEX_LEN];
    snprintf(path, sizeof path, "/api/v1/blobs/%s", sha);
    HttpResponse r;
    if (http_request(s->http, "GET", path, NULL, NULL, 0, 300, &r, e) != 0) return -1;
    if (r.status != 200) {
        err_set(e, "source %s: HTTP %ld: %s", sha, r.status, http_error_text(&r));
        http_response_free(&r);
        return -1;
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

long client_upload(Session *s, long job, const cJSON *statement, const cJSON *files, int max_tries,
                   Err *e) {
    char *payload = cJSON_PrintUnformatted(statement);
    cJSON *env = dsse_sign(s->key, "application/vnd.in-toto+json", payload, strlen(payload), e);
    free(payload);
    if (!env) return -1;
    cJSON *body = cJSON_CreateObject();
    cJSON_AddItemToObject(body, "envelope", env);
    cJSON_AddItemReferenceToObject(body, "files", (cJSON *)files);
    char *text = cJSON_PrintUnformatted(body);
    cJSON_Delete(body);
    char path[128];
    snprintf(path, sizeof path, "/api/v1/jobs/%ld/bundle", job);
    long status = -1;
    long backoff_ms = 250;
    for (int attempt = 1; attempt <= max_tries; attempt++) {
        HttpResponse r;
        int rc = http_request(s->http, "POST", path, NULL, text, strlen(text), 120, &r, e);
        status = rc == 0 ? r.status : -1;
        if (rc == 0 && status >= 400)
            err_set(e, "upload of job %ld: HTTP %ld: %s", job, status, http_error_text(&r));
        if (rc == 0) http_response_free(&r);
        /* The same bytes again are safe: a second copy of a filed bundle answers 200. */
        int retry = status < 0 || status >= 500 || (status == 409 && strstr(e->msg, "being filed"));
        if (!retry) break;
        fprintf(stderr, "agent: upload of job %ld failed (%s), retry %d in %ld ms\n", job, e->msg,
                attempt, backoff_ms);
        timing_sleep_ms(backoff_ms);
        backoff_ms = backoff_ms * 2 > 8000 ? 8000 : backoff_ms * 2;
    }
    free(text);
    return status;
}
