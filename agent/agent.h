/* agent.h: what cairn-agent's parts share: its options, the machine probe (probe.c),
 * the coordinator client (client.c), the suite runner (suite.c) and the simulated agents of the load generator (loadgen.c). */
#ifndef CAIRN_AGENT_H
#define CAIRN_AGENT_H

#include <cjson/cJSON.h>
#include <openssl/evp.h>

#include "proto/api.h"
#include "proto/http.h"
#include "lib/proc.h"
#include "proto/util.h"

typedef struct {
    const char *coordinator; /* base URL */
    const char *enrol_token;
    const char *enrol_token_file; /* --token-file: read into enrol_token by run */
    const char *key_path;
    const char *cairn;      /* path of the cairn binary */
    const char *work;       /* scratch folder for jobs */
    char name[129];         /* machine name, as filed in evidence paths */
    const char *labels;     /* comma-separated machine labels */
    const char *compilers;  /* limit offered compilers (comma list), or NULL */
    const char *sanitizers; /* limit offered sanitizers ("none" for none), or NULL */
    long max_jobs;          /* exit after this many jobs (0: never; --once is 1) */
    double exit_when_idle;  /* exit after this many seconds without a job (0: never) */
    int keep;               /* keep job folders */
    const char *checker;    /* measures bounds after each run (make gpu's), or NULL */
} AgentOptions;

/* A connection to the coordinator as one enrolled agent. */
typedef struct {
    Http *http;
    EVP_PKEY *key;
    char token[128];
    long id;
    char name[129];
} Session;

/* probe.c: {"compilers": {NAME: {"version", "sanitizers": [...]}}, "gpus": [...],
 * "driver", "cuda", "labels", "cpu", "os", "cairn"}. */
cJSON *probe_machine(const AgentOptions *o, Err *e);
/* The version `cairn --version` prints ("0.1.0"), or -1. */
int probe_cairn_version(const char *cairn, char *out, size_t cap, Err *e);

/* Who enrols where: the coordinator's URL and enrolment token, the agent's key, its
 * machine name and what it offers (probe_machine's capabilities). */
typedef struct {
    const char *url;
    const char *token;
    EVP_PKEY *key;
    const char *name;
    const cJSON *caps;
} Enrolment;

/* What a job's upload carries: the in-toto statement (signed when uploaded) and the
 * files its subjects name ({name: base64}). */
typedef struct {
    cJSON *statement;
    cJSON *files;
} Bundle;

/* client.c: enrol, claim, heartbeat, upload with retries and backoff. */
int client_enrol(Session *s, const Enrolment *en, Err *e);
void client_close(Session *s);
/* 1 with a job in *JOB (pointing into *ANSWER, which the caller deletes), 0 when the
 * long poll ended empty, -1 on error (e->msg), -2 when the coordinator no longer knows
 * this agent's token (enrol again), -3 when its key was enrolled again since (another
 * process holds it: stop). */
int client_claim(Session *s, double wait_s, cJSON **answer, ProtoJob *job, Err *e);
/* 0 keep going, 1 cancelled, -1 the lease is gone (or the coordinator is unreachable). */
int client_heartbeat(Session *s, long job, const char *progress);
int client_fetch_blob(Session *s, const char *sha, char **data, size_t *len, Err *e);
/* Signs B's statement and uploads it with its files; retries transport errors and 5xx
 * with backoff, MAX_TRIES times at most. Returns the HTTP status of the final answer, or
 * -1. */
long client_upload(Session *s, long job, const Bundle *b, int max_tries, Err *e);

/* suite.c: runs one claimed job (the suite cell) and fills STATEMENT and FILES. */
typedef struct {
    const AgentOptions *opts;
    Session *session;
    const cJSON *caps;
    const char *cairn_version;
} SuiteEnv;
/* 0 done (*OUT's statement and files filled), 1 cancelled, -1 failed before any case
 * ran. */
int suite_run(const SuiteEnv *env, const ProtoJob *job, Bundle *out, Err *e);

/* The verbs other files hold (argv[0] is the verb, lib/command.h): loadgen.c's
 * `cairn-agent loadgen`, and sign.c's `cairn-agent sign` (make gpu signs its bundle
 * with it). */
int loadgen_main(int argc, char **argv);
int sign_main(int argc, char **argv);

#endif
