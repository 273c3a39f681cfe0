/* api.c: the API's bodies built and parsed in one place (api.h says the rules). Each
 * parser reads its fields through the checked getters below, so a wrong type, a
 * fraction, NaN or an overlong string is an error naming the field, never a cast. */
#include "proto/api.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- error codes ------------------------------------------------------------------- */

static const struct {
    const char *name;
    int status;
} ERRORS[PROTO_E_COUNT] = {[PROTO_E_NONE] = {"none", 0},
#define PROTO_ERROR_ROW(id, name, status, doc) [PROTO_E_##id] = {name, status},
                           PROTO_ERRORS(PROTO_ERROR_ROW)
#undef PROTO_ERROR_ROW
};

static ProtoErrorCode known(ProtoErrorCode code) {
    return code > PROTO_E_NONE && code < PROTO_E_COUNT ? code : PROTO_E_NONE;
}

const char *proto_error_name(ProtoErrorCode code) { return ERRORS[known(code)].name; }
int proto_error_status(ProtoErrorCode code) { return ERRORS[known(code)].status; }

ProtoErrorCode proto_error_code(const char *name) {
    for (int c = PROTO_E_NONE + 1; name && c < PROTO_E_COUNT; c++)
        if (!strcmp(ERRORS[c].name, name)) return (ProtoErrorCode)c;
    return PROTO_E_NONE;
}

cJSON *proto_error_build(ProtoErrorCode code, const char *message) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "error", message);
    cJSON_AddStringToObject(j, "code", proto_error_name(code));
    cJSON_AddNumberToObject(j, "status", proto_error_status(code));
    return j;
}

void proto_error_parse(long status, const char *body, ProtoError *out) {
    cJSON *j = body ? cJSON_Parse(body) : NULL;
    const char *msg = json_str(j, "error");
    out->status = (int)status;
    out->code = proto_error_code(json_str(j, "code"));
    snprintf(out->message, sizeof out->message, "%s", msg ? msg : body ? body : "");
    cJSON_Delete(j);
}

long proto_send(Http *h, const HttpRequest *req, HttpResponse *out, ProtoError *err) {
    Err e = {{0}};
    *err = (ProtoError){0};
    if (http_request(h, req, out, &e) != 0) {
        err->status = -1;
        snprintf(err->message, sizeof err->message, "%.*s", (int)sizeof err->message - 1, e.msg);
        return -1;
    }
    if (out->status >= 400) proto_error_parse(out->status, out->body, err);
    return out->status;
}

long proto_call(Http *h, const ProtoCall *call, cJSON **answer, ProtoError *err) {
    char *text = call->req ? cJSON_PrintUnformatted(call->req) : NULL;
    HttpResponse r;
    HttpRequest req = {call->method,   call->path, NULL, text, text ? strlen(text) : 0,
                       call->timeout_s};
    long status = proto_send(h, &req, &r, err);
    free(text);
    if (answer) *answer = NULL;
    if (status < 0) return -1;
    if (answer && status < 400 && r.len) *answer = cJSON_ParseWithLength(r.body, r.len);
    http_response_free(&r);
    return status;
}

int proto_fail(Err *e, const char *what, const ProtoError *err) {
    if (err->status < 0) return err_set(e, "%s: %s", what, err->message);
    return err_set(e, "%s: HTTP %d %s: %s", what, err->status, proto_error_name(err->code),
                   err->message);
}

/* --- checked getters: 1 present, 0 absent (and not REQUIRED), -1 with E set -------- */

/* What a field must be: its key, whether it must be present, and its bounds (numbers:
 * lo..hi; strings: at most max bytes, and what `check` accepts, said as `what`). */
typedef struct Field {
    const char *key;
    int required;
    double lo, hi;
    size_t max;
    int (*check)(const char *);
    const char *what;
} Field;
enum { OPTIONAL = 0, REQUIRED = 1 };
#define NUMBER(k, from, to, req) (&(Field){.key = (k), .required = (req), .lo = (from), .hi = (to)})
#define TEXT(k, most, req)       (&(Field){.key = (k), .required = (req), .max = (most)})
#define CHECKED(k, test, said)   (&(Field){.key = (k), .check = (test), .what = (said)})
#define OPTIONAL_TEXT(k, most, test, said)                                                         \
    (&(Field){.key = (k), .max = (most), .check = (test), .what = (said)})

static int get_str(const cJSON *j, const Field *f, const char **out, Err *e) {
    const char *key = f->key;
    const size_t max = f->max;
    const int required = f->required;
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, key);
    *out = NULL;
    if (!x && !required) return 0;
    if (!cJSON_IsString(x) || strlen(x->valuestring) > max)
        return err_set(e, "\"%s\" must be a string of at most %zu bytes", key, max);
    *out = x->valuestring;
    return 1;
}

/* A string copied into OUT (CAP bytes) that F's check accepts. */
static int get_copy(const cJSON *j, const Field *f, char *out, size_t cap, Err *e) {
    const char *s = json_str(j, f->key);
    if (!s || strlen(s) >= cap || (f->check && !f->check(s)))
        return err_set(e, "\"%s\" must be %s", f->key, f->what);
    memcpy(out, s, strlen(s) + 1);
    return 0;
}

static int get_int(const cJSON *j, const Field *f, long *out, Err *e) {
    int rc = json_int(j, f->key, f->lo, f->hi, out);
    if (rc < 0 || (rc == 0 && f->required))
        return err_set(e, "\"%s\" must be an integer in [%.0f, %.0f]", f->key, f->lo, f->hi);
    return rc;
}

static int get_num(const cJSON *j, const Field *f, double *out, Err *e) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, f->key);
    if (!x && !f->required) return 0;
    if (!cJSON_IsNumber(x) || !(x->valuedouble >= f->lo && x->valuedouble <= f->hi))
        return err_set(e, "\"%s\" must be a number in [%g, %g]", f->key, f->lo, f->hi);
    *out = x->valuedouble;
    return 1;
}

static int get_bool(const cJSON *j, const char *key, int required, int *out, Err *e) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!x && !required) return 0;
    if (!cJSON_IsBool(x)) return err_set(e, "\"%s\" must be true or false", key);
    *out = cJSON_IsTrue(x);
    return 1;
}

static int get_obj(const cJSON *j, const char *key, const cJSON **out, Err *e) {
    *out = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsObject(*out) ? 0 : err_set(e, "\"%s\" must be an object", key);
}

static int is_object(const cJSON *j, Err *e) {
    return cJSON_IsObject(j) ? 0 : err_set(e, "the body must be a JSON object");
}

static int is_sha(const char *s) { return sha256_is_hex(s); }

/* Adds a sub-tree by reference (requests) or as a copy (answers): api.h says why. */
static void add_ref(cJSON *j, const char *key, const cJSON *sub) {
    if (sub) cJSON_AddItemReferenceToObject(j, key, (cJSON *)sub);
}
static void add_copy(cJSON *j, const char *key, const cJSON *sub) {
    if (sub) cJSON_AddItemToObject(j, key, cJSON_Duplicate(sub, 1));
}

/* --- enrolment --------------------------------------------------------------------- */

cJSON *proto_challenge_build(const ProtoChallenge *m) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "nonce", m->nonce);
    cJSON_AddStringToObject(j, "proof_type", m->proof_type);
    cJSON_AddNumberToObject(j, "expires_in_s", m->expires_in_s);
    return j;
}

int proto_challenge_parse(const cJSON *j, ProtoChallenge *m, Err *e) {
    *m = (ProtoChallenge){0};
    if (is_object(j, e) ||
        get_copy(j, CHECKED("nonce", is_sha, "64 hex digits"), m->nonce, sizeof m->nonce, e) ||
        get_copy(j, CHECKED("proof_type", NULL, "a string"), m->proof_type, sizeof m->proof_type,
                 e) ||
        get_num(j, NUMBER("expires_in_s", 0, 1e9, REQUIRED), &m->expires_in_s, e) < 0)
        return -1;
    return 0;
}

cJSON *proto_enrol_build(const ProtoEnrol *m) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", m->name);
    cJSON_AddStringToObject(j, "public_key", m->public_key);
    add_ref(j, "capabilities", m->capabilities);
    add_ref(j, "proof", m->proof);
    return j;
}

int proto_enrol_parse(const cJSON *j, ProtoEnrol *m, Err *e) {
    const cJSON *compilers;
    *m = (ProtoEnrol){0};
    if (is_object(j, e)) return -1;
    m->name = json_str(j, "name");
    if (!util_is_safe_component(m->name))
        return err_set(e, "\"name\" must be a string of [A-Za-z0-9._+-], at most %d",
                       PROTO_MAX_NAME);
    if (get_str(j, TEXT("public_key", PROTO_MAX_TEXT, REQUIRED), &m->public_key, e) < 0 ||
        get_obj(j, "capabilities", &m->capabilities, e) < 0 ||
        get_obj(m->capabilities, "compilers", &compilers, e) < 0)
        return -1;
    if (get_obj(j, "proof", &m->proof, e) < 0)
        return err_set(e, "\"proof\" must be a DSSE envelope signing a nonce from "
                          "POST /api/v1/agents/challenge");
    return 0;
}

/* A farm's identity: 32 lowercase hex digits. */
static int is_farm_id(const char *s) {
    size_t n = 0;
    while (s[n] && ((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f'))) n++;
    return n == 32 && !s[n];
}

cJSON *proto_enrolled_build(const ProtoEnrolled *m) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "agent", (double)m->agent);
    cJSON_AddStringToObject(j, "token", m->token);
    cJSON_AddStringToObject(j, "keyid", m->keyid);
    cJSON_AddNumberToObject(j, "lease_seconds", m->lease_seconds);
    cJSON_AddStringToObject(j, "farm", m->farm);
    return j;
}

int proto_enrolled_parse(const cJSON *j, ProtoEnrolled *m, Err *e) {
    *m = (ProtoEnrolled){0};
    if (is_object(j, e) ||
        get_int(j, NUMBER("agent", 1, PROTO_MAX_ID, REQUIRED), &m->agent, e) < 0 ||
        get_copy(j, CHECKED("token", NULL, "a string of at most 64 bytes"), m->token,
                 sizeof m->token, e) ||
        get_copy(j, CHECKED("keyid", is_sha, "64 hex digits"), m->keyid, sizeof m->keyid, e) ||
        get_num(j, NUMBER("lease_seconds", 0, 1e9, REQUIRED), &m->lease_seconds, e) < 0 ||
        get_copy(j, CHECKED("farm", is_farm_id, "32 hex digits"), m->farm, sizeof m->farm, e))
        return -1;
    return 0;
}

/* --- claims and leases ------------------------------------------------------------- */

cJSON *proto_claim_build(const ProtoClaim *m) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "wait_s", m->wait_s);
    return j;
}

int proto_claim_parse(const cJSON *j, ProtoClaim *m, Err *e) {
    *m = (ProtoClaim){0};
    return is_object(j, e) || get_num(j, NUMBER("wait_s", -1e9, 1e9, OPTIONAL), &m->wait_s, e) < 0
               ? -1
               : 0;
}

cJSON *proto_job_build(const ProtoJob *m) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "job", (double)m->job);
    cJSON_AddNumberToObject(j, "run", (double)m->run);
    cJSON_AddNumberToObject(j, "attempt", (double)m->attempt);
    cJSON_AddStringToObject(j, "cell_id", m->cell_id);
    add_copy(j, "cell", m->cell);
    cJSON *src = cJSON_AddObjectToObject(j, "source");
    cJSON_AddStringToObject(src, "sha256", m->source_sha256);
    cJSON_AddNumberToObject(src, "size", (double)m->source_size);
    add_copy(j, "cases", m->cases);
    cJSON_AddNumberToObject(j, "timeout_s", m->timeout_s);
    cJSON_AddNumberToObject(j, "lease_seconds", m->lease_seconds);
    cJSON_AddNumberToObject(j, "lease_expires", m->lease_expires);
    cJSON_AddStringToObject(j, "farm", m->farm);
    return j;
}

static int valid_cases(const cJSON *cases, Err *e) {
    const cJSON *c;
    if (!cJSON_IsArray(cases) || cJSON_GetArraySize(cases) == 0 ||
        cJSON_GetArraySize(cases) > EVIDENCE_MAX_ITEMS)
        return err_set(e, "\"cases\" must be a non-empty array of at most %d relative paths",
                       EVIDENCE_MAX_ITEMS);
    cJSON_ArrayForEach(c, cases) {
        if (!cJSON_IsString(c) || strlen(c->valuestring) > PROTO_MAX_PATH ||
            !util_is_safe_relpath(c->valuestring))
            return err_set(e, "\"cases\" must be a non-empty array of relative paths");
    }
    return 0;
}

int proto_job_parse(const cJSON *j, ProtoJob *m, Err *e) {
    const cJSON *src;
    *m = (ProtoJob){0};
    if (is_object(j, e) || get_int(j, NUMBER("job", 1, PROTO_MAX_ID, REQUIRED), &m->job, e) < 0 ||
        get_int(j, NUMBER("run", 1, PROTO_MAX_ID, REQUIRED), &m->run, e) < 0 ||
        get_int(j, NUMBER("attempt", 0, 1e9, REQUIRED), &m->attempt, e) < 0 ||
        get_copy(j, CHECKED("cell_id", util_is_safe_component, "a safe folder name"), m->cell_id,
                 sizeof m->cell_id, e) ||
        get_obj(j, "cell", &m->cell, e) || get_obj(j, "source", &src, e) ||
        get_copy(src, CHECKED("sha256", is_sha, "64 hex digits"), m->source_sha256,
                 sizeof m->source_sha256, e) ||
        get_int(src, NUMBER("size", 0, PROTO_MAX_ID, OPTIONAL), &m->source_size, e) < 0 ||
        get_copy(j, CHECKED("farm", is_farm_id, "32 hex digits"), m->farm, sizeof m->farm, e))
        return -1;
    m->cases = cJSON_GetObjectItemCaseSensitive(j, "cases");
    m->timeout_s = 300;
    m->lease_seconds = 60;
    if (valid_cases(m->cases, e) ||
        get_num(j, NUMBER("timeout_s", 0, 1e9, OPTIONAL), &m->timeout_s, e) < 0 ||
        get_num(j, NUMBER("lease_seconds", 0, 1e9, OPTIONAL), &m->lease_seconds, e) < 0 ||
        get_num(j, NUMBER("lease_expires", 0, 1e12, OPTIONAL), &m->lease_expires, e) < 0)
        return -1;
    return 0;
}

cJSON *proto_heartbeat_build(const ProtoHeartbeat *m) {
    cJSON *j = cJSON_CreateObject();
    if (m->progress) cJSON_AddStringToObject(j, "progress", m->progress);
    return j;
}

int proto_heartbeat_parse(const cJSON *j, ProtoHeartbeat *m, Err *e) {
    *m = (ProtoHeartbeat){0};
    return is_object(j, e) ||
                   get_str(j, TEXT("progress", PROTO_MAX_TEXT, OPTIONAL), &m->progress, e) < 0
               ? -1
               : 0;
}

cJSON *proto_lease_build(const ProtoLease *m) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "cancel", m->cancel);
    cJSON_AddNumberToObject(j, "lease_expires", m->lease_expires);
    return j;
}

int proto_lease_parse(const cJSON *j, ProtoLease *m, Err *e) {
    *m = (ProtoLease){0};
    if (is_object(j, e) || get_bool(j, "cancel", 1, &m->cancel, e) < 0 ||
        get_num(j, NUMBER("lease_expires", 0, 1e12, OPTIONAL), &m->lease_expires, e) < 0)
        return -1;
    return 0;
}

/* --- uploads and blobs ------------------------------------------------------------- */

cJSON *proto_upload_build(const ProtoUpload *m) {
    cJSON *j = cJSON_CreateObject();
    add_ref(j, "envelope", m->envelope);
    add_ref(j, "files", m->files);
    return j;
}

int proto_upload_parse(const cJSON *j, ProtoUpload *m, Err *e) {
    *m = (ProtoUpload){0};
    if (is_object(j, e)) return -1;
    m->envelope = cJSON_GetObjectItemCaseSensitive(j, "envelope");
    m->files = cJSON_GetObjectItemCaseSensitive(j, "files");
    if (!cJSON_IsObject(m->envelope) || !cJSON_IsObject(m->files))
        return err_set(e, "body must be {\"envelope\": {...}, \"files\": {name: base64}}");
    return 0;
}

cJSON *proto_filed_build(const ProtoFiled *m) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "filed", m->filed);
    if (m->duplicate) cJSON_AddBoolToObject(j, "duplicate", 1);
    if (m->evidence) cJSON_AddStringToObject(j, "evidence", m->evidence);
    cJSON_AddStringToObject(j, "bundle_sha256", m->bundle_sha256);
    return j;
}

int proto_filed_parse(const cJSON *j, ProtoFiled *m, Err *e) {
    *m = (ProtoFiled){0};
    if (is_object(j, e) || get_bool(j, "filed", 1, &m->filed, e) < 0 ||
        get_bool(j, "duplicate", 0, &m->duplicate, e) < 0 ||
        get_str(j, TEXT("evidence", PROTO_MAX_PATH, m->filed), &m->evidence, e) < 0 ||
        get_copy(j, CHECKED("bundle_sha256", is_sha, "64 hex digits"), m->bundle_sha256,
                 sizeof m->bundle_sha256, e))
        return -1;
    return 0;
}

cJSON *proto_blob_build(const ProtoBlob *m) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "sha256", m->sha256);
    cJSON_AddNumberToObject(j, "size", (double)m->size);
    return j;
}

int proto_blob_parse(const cJSON *j, ProtoBlob *m, Err *e) {
    *m = (ProtoBlob){0};
    if (is_object(j, e) ||
        get_copy(j, CHECKED("sha256", is_sha, "64 hex digits"), m->sha256, sizeof m->sha256, e) ||
        get_int(j, NUMBER("size", 0, PROTO_MAX_ID, REQUIRED), &m->size, e) < 0)
        return -1;
    return 0;
}

/* --- runs -------------------------------------------------------------------------- */

cJSON *proto_run_create_build(const ProtoRunCreate *m) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "source", m->source);
    add_ref(j, "matrix", m->matrix);
    add_ref(j, "cases", m->cases);
    if (m->submitter) cJSON_AddStringToObject(j, "submitter", m->submitter);
    if (m->commit) cJSON_AddStringToObject(j, "commit", m->commit);
    if (m->branch) cJSON_AddStringToObject(j, "branch", m->branch);
    return j;
}

/* Text people read on the dashboard: no control characters (UTF-8 beyond ASCII is
 * fine; pages escape the rest). */
static int printable(const char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) return 0;
    return 1;
}

/* An optional string of at most MAX bytes that CHECK accepts, into *OUT (NULL when absent). */
static int get_optional(const cJSON *j, const Field *f, const char **out, Err *e) {
    assert(!f->required && f->check);
    if (get_str(j, f, out, e) < 0) return -1;
    if (*out && (!**out || !f->check(*out)))
        return err_set(e, "\"%s\" must be %s", f->key, f->what);
    return 0;
}

static int is_commit(const char *s) {
    size_t n = strlen(s);
    return n >= 7 && n <= 64 && strspn(s, "0123456789abcdef") == n;
}

int proto_run_create_parse(const cJSON *j, ProtoRunCreate *m, Err *e) {
    *m = (ProtoRunCreate){0};
    if (is_object(j, e)) return -1;
    m->source = json_str(j, "source");
    m->matrix = cJSON_GetObjectItemCaseSensitive(j, "matrix");
    m->cases = cJSON_GetObjectItemCaseSensitive(j, "cases");
    if (!sha256_is_hex(m->source)) return err_set(e, "\"source\" must be the archive's sha256");
    if (get_optional(j, OPTIONAL_TEXT("submitter", PROTO_MAX_NAME, printable, "printable text"),
                     &m->submitter, e) < 0 ||
        get_optional(j, OPTIONAL_TEXT("commit", 64, is_commit, "7 to 64 lowercase hex digits"),
                     &m->commit, e) < 0 ||
        get_optional(j, OPTIONAL_TEXT("branch", PROTO_MAX_BRANCH, printable, "printable text"),
                     &m->branch, e) < 0)
        return -1;
    return valid_cases(m->cases, e);
}

cJSON *proto_run_created_build(const ProtoRunCreated *m) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "run", (double)m->run);
    cJSON_AddNumberToObject(j, "jobs", (double)m->jobs);
    return j;
}

int proto_run_created_parse(const cJSON *j, ProtoRunCreated *m, Err *e) {
    *m = (ProtoRunCreated){0};
    if (is_object(j, e) || get_int(j, NUMBER("run", 1, PROTO_MAX_ID, REQUIRED), &m->run, e) < 0 ||
        get_int(j, NUMBER("jobs", 0, PROTO_MAX_ID, REQUIRED), &m->jobs, e) < 0)
        return -1;
    return 0;
}

cJSON *proto_ack_build(const char *flag) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, flag, 1);
    return j;
}

int proto_ack_parse(const cJSON *j, const char *flag, Err *e) {
    int v = 0;
    if (is_object(j, e) || get_bool(j, flag, 1, &v, e) < 0) return -1;
    return v ? 0 : err_set(e, "\"%s\" is false", flag);
}

/* --- views ------------------------------------------------------------------------- */

/* A count column: an integer, or null (SUM over no rows) or absent for 0. */
static int get_count(const cJSON *j, const char *key, long *out, Err *e) {
    *out = 0;
    if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, key))) return 0;
    return get_int(j, NUMBER(key, 0, PROTO_MAX_ID, OPTIONAL), out, e);
}

/* A text column: a string of at most MAX bytes, or null or absent for NULL. */
static int get_text(const cJSON *j, const char *key, size_t max, const char **out, Err *e) {
    *out = NULL;
    if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, key))) return 0;
    return get_str(j, TEXT(key, max, OPTIONAL), out, e);
}

static int get_array(const cJSON *j, const char *key, const cJSON **out, Err *e) {
    *out = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsArray(*out) ? 0 : err_set(e, "\"%s\" must be an array", key);
}

int proto_run_view_parse(const cJSON *j, ProtoRunView *m, Err *e) {
    *m = (ProtoRunView){0};
    if (is_object(j, e) || get_int(j, NUMBER("id", 1, PROTO_MAX_ID, REQUIRED), &m->id, e) < 0 ||
        get_array(j, "jobs", &m->jobs, e) || get_array(j, "cases", &m->cases, e))
        return -1;
    m->matrix = cJSON_GetObjectItemCaseSensitive(j, "matrix");
    return 0;
}

const char *const proto_job_states[PROTO_JOB_STATES] = {"queued", "running", "done", "failed",
                                                        "cancelled"};

int proto_job_state_known(const char *state) {
    for (int k = 0; k < PROTO_JOB_STATES; k++)
        if (!strcmp(state, proto_job_states[k])) return 1;
    return 0;
}

int proto_job_row_parse(const cJSON *j, ProtoJobRow *m, Err *e) {
    *m = (ProtoJobRow){0};
    if (is_object(j, e) || get_int(j, NUMBER("job", 1, PROTO_MAX_ID, REQUIRED), &m->job, e) < 0 ||
        get_count(j, "attempt", &m->attempt, e) < 0 || get_count(j, "lost", &m->lost, e) < 0 ||
        get_str(j, TEXT("cell_id", PROTO_MAX_NAME, REQUIRED), &m->cell_id, e) < 0 ||
        get_str(j, TEXT("state", PROTO_MAX_NAME, REQUIRED), &m->state, e) < 0 ||
        get_text(j, "agent", PROTO_MAX_NAME, &m->agent, e) < 0 ||
        get_text(j, "progress", PROTO_MAX_TEXT, &m->progress, e) < 0 ||
        get_text(j, "failure", PROTO_MAX_TEXT, &m->failure, e) < 0 ||
        get_text(j, "evidence", PROTO_MAX_PATH, &m->evidence, e) < 0)
        return -1;
    return 0;
}

int proto_status_parse(const cJSON *j, ProtoStatus *m, Err *e) {
    *m = (ProtoStatus){0};
    if (is_object(j, e) || get_array(j, "agents", &m->agents, e) ||
        get_array(j, "runs", &m->runs, e) || get_array(j, "events", &m->events, e))
        return -1;
    return 0;
}

int proto_agent_row_parse(const cJSON *j, ProtoAgentRow *m, Err *e) {
    long revoked = 0;
    *m = (ProtoAgentRow){0};
    if (is_object(j, e) || get_int(j, NUMBER("id", 1, PROTO_MAX_ID, REQUIRED), &m->id, e) < 0 ||
        get_str(j, TEXT("name", PROTO_MAX_NAME, REQUIRED), &m->name, e) < 0 ||
        get_count(j, "revoked", &revoked, e) < 0)
        return -1;
    m->revoked = revoked != 0;
    m->caps = cJSON_GetObjectItemCaseSensitive(j, "caps");
    return 0;
}

int proto_run_row_parse(const cJSON *j, ProtoRunRow *m, Err *e) {
    *m = (ProtoRunRow){0};
    if (is_object(j, e) || get_int(j, NUMBER("id", 1, PROTO_MAX_ID, REQUIRED), &m->id, e) < 0 ||
        get_count(j, "jobs", &m->jobs, e) < 0 || get_count(j, "queued", &m->queued, e) < 0 ||
        get_count(j, "running", &m->running, e) < 0 || get_count(j, "done", &m->done, e) < 0 ||
        get_count(j, "failed", &m->failed, e) < 0 ||
        get_count(j, "cancelled", &m->cancelled, e) < 0)
        return -1;
    return 0;
}

int proto_event_row_parse(const cJSON *j, ProtoEventRow *m, Err *e) {
    *m = (ProtoEventRow){0};
    if (is_object(j, e) || get_count(j, "job", &m->job, e) < 0 ||
        get_count(j, "agent", &m->agent, e) < 0 ||
        get_str(j, TEXT("kind", PROTO_MAX_NAME, REQUIRED), &m->kind, e) < 0)
        return -1;
    return 0;
}
