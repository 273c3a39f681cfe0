/* loadgen.c: `cairn-agent loadgen`: N simulated agents driving a coordinator through its
 * real API (enrol, long-poll claim, signed upload) with tiny one-case bundles, so that
 * throughput and claim latency measure the coordinator, not cairn. Prints one JSON line. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "proto/dsse.h"

typedef struct {
    const char *url, *token;
    int index, target;
    atomic_int *filed;
    double *done_at; /* when the TARGETth job was filed (written by the agent that filed it) */
    double *lat;     /* claim latencies (ms) of this agent's successful claims */
    int nlat, cap;
    int errors;
    int enrol_retries;
} Sim;

static const char SIM_RECEIPT[] = "{\"cairn\":\"sim\",\"numerics\":{}}";

static cJSON *sim_caps(void) {
    return cJSON_Parse("{\"cairn\":\"sim\",\"compilers\":{\"gcc\":{\"version\":\"sim\","
                       "\"sanitizers\":[\"asan\",\"tsan\"]},\"clang\":{\"version\":\"sim\","
                       "\"sanitizers\":[\"asan\",\"tsan\"]}},\"gpus\":[],\"labels\":[\"sim\"]}");
}

/* A one-case statement about JOB, with its receipt as the only subject. */
static cJSON *sim_statement(const ProtoJob *job, const char *machine, cJSON *files) {
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "run", (double)job->run);
    cJSON_AddNumberToObject(p, "job", (double)job->job);
    cJSON_AddNumberToObject(p, "attempt", (double)job->attempt);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(p, "source"), "sha256", job->source_sha256);
    cJSON_AddStringToObject(p, "farm", job->farm);
    cJSON_AddStringToObject(p, "cairn_version", "sim");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(p, "machine"), "name", machine);
    cJSON *cell = cJSON_Duplicate(job->cell, 1);
    cJSON_AddStringToObject(cell, "id", job->cell_id);
    cJSON_AddItemToObject(p, "cell", cell);
    cJSON *c = cJSON_CreateObject();
    const char *case_path =
        cJSON_GetArrayItem(job->cases, 0)->valuestring; /* parsed: one at least */
    char name[1200], sha[SHA256_HEX_LEN];
    snprintf(name, sizeof name, "%s/receipt.json", case_path);
    sha256_hex(SIM_RECEIPT, strlen(SIM_RECEIPT), sha);
    cJSON_AddStringToObject(c, "case", case_path);
    cJSON_AddNumberToObject(c, "build_status", 0);
    cJSON_AddNumberToObject(c, "exit_status", 0);
    cJSON_AddStringToObject(c, "receipt", name);
    cJSON_AddBoolToObject(c, "unordered", 0);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", "x");
    cJSON_AddStringToObject(o, "type", "f64");
    cJSON_AddNumberToObject(o, "count", 1);
    cJSON_AddStringToObject(o, "sha256", sha);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(c, "observations"), o);
    cJSON_AddArrayToObject(c, "checks");
    cJSON_AddItemToArray(cJSON_AddArrayToObject(p, "cases"), c);
    cJSON *st = dsse_statement_new(p);
    dsse_statement_add_subject(st, name, sha);
    char *b64 = util_b64_encode(SIM_RECEIPT, strlen(SIM_RECEIPT));
    cJSON_AddStringToObject(files, name, b64);
    free(b64);
    return st;
}

/* Enrols as the real agent does, retrying with backoff: a thousand agents connecting at
 * once are anonymous until their headers are read, and the coordinator's caps on such
 * connections close the oldest of them (docs/farm.md, "Limits and security"). */
static int enrol(Sim *a, Session *s, const Enrolment *en, Err *e) {
    for (long backoff = 100;; backoff *= 2) {
        int rc = client_enrol(s, en, e);
        if (rc == 0) return 0;
        client_close(s);
        if (rc == -2 || backoff > 3200) return -1;
        a->enrol_retries++;
        timing_sleep_ms(backoff);
    }
}

static void *sim_agent(void *arg) {
    Sim *a = arg;
    Err e = {{0}};
    char name[64];
    /* A machine name is one key's (the coordinator refuses a second): each run of
     * loadgen has keys of its own, so its names are its own too. */
    snprintf(name, sizeof name, "sim-%ld-%d", (long)getpid(), a->index);
    EVP_PKEY *key = dsse_key_generate(&e);
    cJSON *caps = sim_caps();
    Session s;
    if (!key || enrol(a, &s, &(Enrolment){a->url, a->token, key, name, caps}, &e) != 0) {
        fprintf(stderr, "loadgen: %s: %s\n", name, e.msg);
        a->errors++;
        cJSON_Delete(caps);
        EVP_PKEY_free(key);
        return NULL;
    }
    int empty = 0;
    while (atomic_load(a->filed) < a->target && empty < 3) {
        cJSON *answer = NULL;
        ProtoJob job;
        double t0 = timing_now_seconds();
        int rc = client_claim(&s, 1.0, &answer, &job, &e);
        double ms = (timing_now_seconds() - t0) * 1000.0;
        if (rc <= 0) {
            empty += rc == 0;
            a->errors += rc < 0;
            continue;
        }
        empty = 0;
        if (a->nlat == a->cap) {
            a->cap = a->cap ? 2 * a->cap : 256;
            a->lat = realloc(a->lat, (size_t)a->cap * sizeof *a->lat);
        }
        a->lat[a->nlat++] = ms;
        cJSON *files = cJSON_CreateObject();
        cJSON *st = sim_statement(&job, name, files);
        long status = client_upload(&s, job.job, &(Bundle){st, files}, 3, &e);
        if (status == 200 && atomic_fetch_add(a->filed, 1) + 1 == a->target)
            *a->done_at = timing_now_seconds(); /* one agent files the last job */
        else if (status != 200) a->errors++;
        cJSON_Delete(st);
        cJSON_Delete(files);
        cJSON_Delete(answer);
    }
    client_close(&s);
    cJSON_Delete(caps);
    EVP_PKEY_free(key);
    return NULL;
}

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static const char LOADGEN_HELP[] =
    "usage: cairn-agent loadgen --coordinator URL --token ENROL_TOKEN [--agents N] [--jobs N]\n"
    "\n"
    "Starts N simulated agents (default 50) that enrol, claim and upload signed one-case\n"
    "bundles until N jobs (default 2000) are filed or the queue stays empty. Submit the\n"
    "jobs first (e.g. a matrix with \"repeat\"). Prints {agents, jobs, seconds, jobs_per_s,\n"
    "wall_seconds, claim_p50_ms, claim_p99_ms, errors, enrol_retries} as one JSON line:\n"
    "seconds from the start (keys and enrolments included) to the last job filed, which\n"
    "jobs_per_s divides; wall_seconds until every agent stopped (the others' last claims\n"
    "wait up to 1 s for jobs that no longer come). An enrolment is retried with backoff\n"
    "(as the real agent does) up to 5 times.\n";

int loadgen_main(int argc, char **argv) {
    const char *url = NULL, *token = NULL;
    int agents = 50, jobs = 2000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(LOADGEN_HELP, stdout);
            return 0;
        } else if (!strcmp(a, "--coordinator") && v) {
            url = argv[++i];
        } else if (!strcmp(a, "--token") && v) {
            token = argv[++i];
        } else if (!strcmp(a, "--agents") && v) {
            agents = atoi(argv[++i]);
        } else if (!strcmp(a, "--jobs") && v) {
            jobs = atoi(argv[++i]);
        } else {
            fprintf(stderr, "cairn-agent loadgen: unknown argument %s (see --help)\n", a);
            return 2;
        }
    }
    if (!url || !token || agents < 1 || agents > 1000 || jobs < 1) {
        fprintf(stderr, "cairn-agent loadgen: needs --coordinator URL --token T, 1..1000 agents\n");
        return 2;
    }
    http_free(http_new(url, NULL)); /* global libcurl set-up before the threads start */
    atomic_int filed = 0;
    double done_at = 0;
    Sim *sims = calloc((size_t)agents, sizeof *sims);
    pthread_t *threads = calloc((size_t)agents, sizeof *threads);
    double t0 = timing_now_seconds();
    for (int i = 0; i < agents; i++) {
        sims[i] = (Sim){.url = url,
                        .token = token,
                        .index = i,
                        .target = jobs,
                        .filed = &filed,
                        .done_at = &done_at};
        pthread_create(&threads[i], NULL, sim_agent, &sims[i]);
    }
    int total = 0, errors = 0, retries = 0;
    for (int i = 0; i < agents; i++) {
        pthread_join(threads[i], NULL);
        total += sims[i].nlat;
        errors += sims[i].errors;
        retries += sims[i].enrol_retries;
    }
    double wall = timing_now_seconds() - t0;
    /* joined: every agent's write of done_at happened before */
    double secs = done_at > 0 ? done_at - t0 : wall;
    double *all = calloc((size_t)total + 1, sizeof *all);
    int n = 0;
    for (int i = 0; i < agents; i++) {
        memcpy(all + n, sims[i].lat, (size_t)sims[i].nlat * sizeof *all);
        n += sims[i].nlat;
        free(sims[i].lat);
    }
    qsort(all, (size_t)n, sizeof *all, cmp_double);
    printf("{\"agents\": %d, \"jobs\": %d, \"seconds\": %.3f, \"jobs_per_s\": %.1f, "
           "\"wall_seconds\": %.3f, \"claim_p50_ms\": %.2f, \"claim_p99_ms\": %.2f, "
           "\"errors\": %d, \"enrol_retries\": %d}\n",
           agents, atomic_load(&filed), secs, atomic_load(&filed) / secs, wall,
           n ? all[n / 2] : 0.0, n ? all[(int)(0.99 * (n - 1))] : 0.0, errors, retries);
    free(all);
    free(sims);
    free(threads);
    return atomic_load(&filed) >= jobs ? 0 : 1;
}
