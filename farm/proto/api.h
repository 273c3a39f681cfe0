/* api.h: the coordinator's HTTP API in one place (docs/farm.md, "HTTP API"): the error
 * codes, and for every request and answer body a struct, one builder and one parser.
 * The coordinator and the agent both call these, so a field name is spelt once.
 *
 * Builders return a new cJSON tree. Requests (built by agents and client verbs, printed
 * at once, sometimes megabytes of files) add their sub-trees by reference: the caller
 * keeps them alive until it deletes the built tree. Answers (built by the coordinator,
 * printed after the handler returns) copy theirs.
 *
 * Parsers check every field's type and bound (never a cast unchecked) and return 0, or
 * -1 with E naming the field. Strings and sub-trees they return point into the parsed
 * JSON: they live as long as it does. */
#ifndef CAIRN_FARM_API_H
#define CAIRN_FARM_API_H

#include <cjson/cJSON.h>

#include "proto/evidence.h"
#include "proto/http.h"
#include "proto/util.h"

/* Bounds on what a body may say (farm/core/fields.h holds the predicate to the same ones). */
#define PROTO_MAX_NAME 128                /* bytes: agent names, cell ids (a safe path component) */
#define PROTO_MAX_PATH 1024               /* bytes: case paths, evidence paths, file names */
#define PROTO_MAX_TEXT 4096               /* bytes: progress lines, PEM keys, messages */
#define PROTO_MAX_ID   9007199254740992.0 /* 2^53: ids and sizes stay exact in JSON */

/* Every error the API answers: its machine-readable code (the "code" field), its HTTP
 * status and what it means (docs/farm.md, "Error codes", says it at more length;
 * tests/farm/test_protocol.py checks the two agree). Clients branch on the code, never
 * on the message. */
#define PROTO_ERRORS(X)                                                                            \
    X(BAD_JSON, "bad_json", 400, "the body is not a JSON object, or spells a NUL in a string")     \
    X(BAD_FIELD, "bad_field", 400, "a field is missing, of another type or out of its bounds")     \
    X(BAD_ID, "bad_id", 400, "the id in the path is not a positive integer")                       \
    X(BUNDLE_MALFORMED, "bundle_malformed", 400, "the envelope or its statement is malformed")     \
    X(NO_TOKEN, "no_token", 401, "the request has no Authorization: Bearer token")                 \
    X(WRONG_TOKEN, "wrong_token", 401, "the token is not this route's (enrolment or admin)")       \
    X(UNKNOWN_AGENT, "unknown_agent", 401, "the agent token is unknown or revoked: enrol again")   \
    X(TOKEN_SUPERSEDED, "token_superseded", 401,                                                   \
      "this key was enrolled again: two agents share one key?")                                    \
    X(PROOF_REFUSED, "proof_refused", 401, "the proof of key possession or its nonce is refused")  \
    X(KEY_REVOKED, "key_revoked", 403, "the key belongs to a revoked agent")                       \
    X(WRONG_KEY, "wrong_key", 403, "the bundle is not signed by this agent's key")                 \
    X(NOT_FOUND, "not_found", 404, "no such job, run, agent, blob or file")                        \
    X(NO_ROUTE, "no_route", 404, "no route has this path")                                         \
    X(METHOD_NOT_ALLOWED, "method_not_allowed", 405, "the path takes another method")              \
    X(LEASE_LOST, "lease_lost", 409, "the job is not (or no longer) leased to this agent")         \
    X(ALREADY_FILED, "already_filed", 409, "another bundle is filed for this job")                 \
    X(FILING_BUSY, "filing_busy", 409, "another upload of this job is being filed: retry")         \
    X(REPLAYED, "replayed", 409, "the statement is about another job, cell or machine")            \
    X(NAME_TAKEN, "name_taken", 409, "another agent's key is enrolled under this machine name")    \
    X(GC_RUNNING, "gc_running", 409, "another collection is running in this farm: retry later")    \
    X(TOO_LARGE, "too_large", 413, "the body is over max_body_bytes, or the route takes none")     \
    X(BUNDLE_REJECTED, "bundle_rejected", 422, "a signature, subject, claim or field is refused")  \
    X(RESERVED_NAME, "reserved_name", 422, "a file name the coordinator writes itself")            \
    X(PATH_CLASH, "path_clash", 422, "a file name is also a folder of another (a and a/b)")        \
    X(DIGEST_MISMATCH, "digest_mismatch", 422, "the body's SHA-256 is not the one in the path")    \
    X(MISSING_BLOB, "missing_blob", 422, "the run's source archive has not been uploaded")         \
    X(TOO_MANY_REQUESTS, "too_many_requests", 429, "this client or agent is at one of its limits") \
    X(INTERNAL, "internal", 500, "the coordinator failed (its log says why)")                      \
    X(BUSY, "busy", 503, "the coordinator is at one of its limits in all: retry later")            \
    X(STORE_UNAVAILABLE, "store_unavailable", 503, "the store failed: nothing is known, retry")

typedef enum {
    PROTO_E_NONE = 0, /* no error, or one whose code this client does not know */
#define PROTO_ERROR_ENUM(id, name, status, doc) PROTO_E_##id,
    PROTO_ERRORS(PROTO_ERROR_ENUM)
#undef PROTO_ERROR_ENUM
        PROTO_E_COUNT
} ProtoErrorCode;

const char *proto_error_name(ProtoErrorCode code);
int proto_error_status(ProtoErrorCode code);
/* The code named NAME, or PROTO_E_NONE. */
ProtoErrorCode proto_error_code(const char *name);

/* {"error": MESSAGE, "code": NAME, "status": N}. */
typedef struct {
    int status;
    ProtoErrorCode code;
    char message[256];
} ProtoError;
cJSON *proto_error_build(ProtoErrorCode code, const char *message);
/* Reads an error answer of HTTP status STATUS (a body that is not one still gives the
 * status, PROTO_E_NONE and the body's first bytes as the message). */
void proto_error_parse(long status, const char *body, ProtoError *out);

/* One request to the coordinator (http.h's HttpRequest: its body, of its content type,
 * JSON when NULL, may be NULL). Returns the HTTP status with the answer in *OUT (the
 * caller frees it), ERR filled for statuses >= 400; or -1 on transport failure (ERR's
 * message says why, its code NONE, its status -1). */
long proto_send(Http *h, const HttpRequest *req, HttpResponse *out, ProtoError *err);
/* A call with a JSON body: METHOD PATH with REQ (or NULL), given up after timeout_s. */
typedef struct ProtoCall {
    const char *method, *path;
    const cJSON *req;
    long timeout_s;
} ProtoCall;
/* Sends CALL with proto_send and parses the answer into *ANSWER (NULL when empty, not
 * JSON or an error). */
long proto_call(Http *h, const ProtoCall *call, cJSON **answer, ProtoError *err);
/* E = "WHAT: HTTP 409 lease_lost: MESSAGE" (or "WHAT: " and the transport error); -1. */
int proto_fail(Err *e, const char *what, const ProtoError *err);

/* POST /api/v1/agents/challenge -> */
typedef struct {
    char nonce[SHA256_HEX_LEN];
    char proof_type[PROTO_MAX_NAME + 1];
    double expires_in_s;
} ProtoChallenge;
cJSON *proto_challenge_build(const ProtoChallenge *m);
int proto_challenge_parse(const cJSON *j, ProtoChallenge *m, Err *e);

/* POST /api/v1/agents/enrol */
typedef struct {
    const char *name;
    const char *public_key;    /* Ed25519, SubjectPublicKeyInfo PEM */
    const cJSON *capabilities; /* an object with "compilers" (agent/probe.c) */
    const cJSON *proof;        /* DSSE envelope over the challenge's nonce */
} ProtoEnrol;
cJSON *proto_enrol_build(const ProtoEnrol *m);
int proto_enrol_parse(const cJSON *j, ProtoEnrol *m, Err *e);

/* A farm's identity: 32 hex digits, made once per store (the coordinator's database). */
#define PROTO_FARM_ID_LEN 33

typedef struct {
    long agent;
    char token[SHA256_HEX_LEN];
    char keyid[SHA256_HEX_LEN];
    double lease_seconds;
    char farm[PROTO_FARM_ID_LEN]; /* the farm enrolled in */
} ProtoEnrolled;
cJSON *proto_enrolled_build(const ProtoEnrolled *m);
int proto_enrolled_parse(const cJSON *j, ProtoEnrolled *m, Err *e);

/* POST /api/v1/claim (an empty body is {"wait_s": 0}) -> a ProtoJob, or 204. */
typedef struct {
    double wait_s;
} ProtoClaim;
cJSON *proto_claim_build(const ProtoClaim *m);
int proto_claim_parse(const cJSON *j, ProtoClaim *m, Err *e);

typedef struct {
    long job, run, attempt;
    char cell_id[PROTO_MAX_NAME + 1];
    const cJSON *cell; /* {"compiler", "sanitizer", "mode", "target"?} */
    char source_sha256[SHA256_HEX_LEN];
    long source_size;
    const cJSON *cases; /* safe relative paths */
    double timeout_s, lease_seconds, lease_expires;
    char farm[PROTO_FARM_ID_LEN]; /* the farm the job is of: its statement names it */
} ProtoJob;
cJSON *proto_job_build(const ProtoJob *m);
int proto_job_parse(const cJSON *j, ProtoJob *m, Err *e);

/* POST /api/v1/jobs/ID/heartbeat */
typedef struct {
    const char *progress; /* NULL: none */
} ProtoHeartbeat;
cJSON *proto_heartbeat_build(const ProtoHeartbeat *m);
int proto_heartbeat_parse(const cJSON *j, ProtoHeartbeat *m, Err *e);

typedef struct {
    int cancel;
    double lease_expires;
} ProtoLease;
cJSON *proto_lease_build(const ProtoLease *m);
int proto_lease_parse(const cJSON *j, ProtoLease *m, Err *e);

/* POST /api/v1/jobs/ID/bundle */
typedef struct {
    const cJSON *envelope; /* DSSE over an in-toto Statement (dsse.h) */
    const cJSON *files;    /* {name: base64}, one per subject */
} ProtoUpload;
cJSON *proto_upload_build(const ProtoUpload *m);
int proto_upload_parse(const cJSON *j, ProtoUpload *m, Err *e);

typedef struct {
    int filed, duplicate;
    const char *evidence; /* the folder under the state folder; NULL for a duplicate */
    char bundle_sha256[SHA256_HEX_LEN];
} ProtoFiled;
cJSON *proto_filed_build(const ProtoFiled *m);
int proto_filed_parse(const cJSON *j, ProtoFiled *m, Err *e);

/* PUT /api/v1/blobs/SHA256 -> */
typedef struct {
    char sha256[SHA256_HEX_LEN];
    long size;
} ProtoBlob;
cJSON *proto_blob_build(const ProtoBlob *m);
int proto_blob_parse(const cJSON *j, ProtoBlob *m, Err *e);

/* POST /api/v1/runs */
#define PROTO_MAX_BRANCH 255 /* bytes of a branch name (git allows more; nobody uses them) */
typedef struct {
    const char *source;  /* the archive blob's SHA-256 */
    const cJSON *matrix; /* configs/matrix*.json (farm/core/matrix.c checks it) */
    const cJSON *cases;  /* non-empty, safe relative paths */
    /* optional (NULL): who or what submitted it (printable, at most PROTO_MAX_NAME
     * bytes), the source's commit (7 to 64 lowercase hex digits) and branch (printable,
     * at most PROTO_MAX_BRANCH bytes) */
    const char *submitter, *commit, *branch;
} ProtoRunCreate;
cJSON *proto_run_create_build(const ProtoRunCreate *m);
int proto_run_create_parse(const cJSON *j, ProtoRunCreate *m, Err *e);

typedef struct {
    long run, jobs;
} ProtoRunCreated;
cJSON *proto_run_created_build(const ProtoRunCreated *m);
int proto_run_created_parse(const cJSON *j, ProtoRunCreated *m, Err *e);

/* The one-flag answers: GET /healthz {"ok": true}, revoke {"revoked": true}, cancel
 * {"cancelled": true}. */
#define PROTO_ACK_HEALTHY   "ok"
#define PROTO_ACK_REVOKED   "revoked"
#define PROTO_ACK_CANCELLED "cancelled"
cJSON *proto_ack_build(const char *flag);
/* 0 when J is {FLAG: true}. */
int proto_ack_parse(const cJSON *j, const char *flag, Err *e);

/* The views (GET /api/v1/runs/ID, /results, /status) are the store's rows as JSON
 * (farm/db/db.c builds them); the client verbs read them through these. A row's null
 * column reads as absent (NULL, or 0 for a count). */
typedef struct {
    long id;
    const cJSON *matrix, *cases, *jobs; /* jobs: rows for proto_job_row_parse */
} ProtoRunView;
int proto_run_view_parse(const cJSON *j, ProtoRunView *m, Err *e);

typedef struct {
    long job, attempt, lost;
    const char *cell_id, *state, *agent, *progress, *failure, *evidence;
} ProtoJobRow;
int proto_job_row_parse(const cJSON *j, ProtoJobRow *m, Err *e);

/* The states a job moves through, in this order: queued -> running -> done | failed |
 * cancelled, and running -> queued when its lease runs out with attempts left. */
#define PROTO_JOB_STATES 5
extern const char *const proto_job_states[PROTO_JOB_STATES];
/* 1 when STATE is one of them. */
int proto_job_state_known(const char *state);

typedef struct {
    const cJSON *agents, *runs, *events; /* rows for the three parsers below */
} ProtoStatus;
int proto_status_parse(const cJSON *j, ProtoStatus *m, Err *e);

typedef struct {
    long id;
    const char *name;
    int revoked;
    const cJSON *caps; /* what the agent enrolled with */
} ProtoAgentRow;
int proto_agent_row_parse(const cJSON *j, ProtoAgentRow *m, Err *e);

typedef struct {
    long id, jobs, queued, running, done, failed, cancelled;
} ProtoRunRow;
int proto_run_row_parse(const cJSON *j, ProtoRunRow *m, Err *e);

typedef struct {
    long job, agent;
    const char *kind; /* agent_lost, ... */
} ProtoEventRow;
int proto_event_row_parse(const cJSON *j, ProtoEventRow *m, Err *e);

#endif
