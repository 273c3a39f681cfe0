/* suite.c: one suite cell on this machine. For every case of the job: `cairn build`
 * under the cell's flags, run the program with CAIRN_OBSERVE set, read back its
 * observations and raw bits, and record exit status, trap, receipt and checks in the
 * in-toto Statement whose subjects are the receipts, raw observed outputs and logs. */
#include "agent.h"

#include <assert.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "proto/archive.h"
#include "proto/dsse.h"
#include "proto/evidence.h"

#define MAX_LOG_SUBJECT (64 * 1024)
#define MAX_TRAP_LINE   1024 /* the coordinator refuses strings over 4 KiB (farm/core/fields.h) */
#define MAX_OBS_LINE    (1 << 20)  /* one observation line */
#define MAX_RAW_SUBJECT (8L << 20) /* one raw observation file */

typedef struct {
    const SuiteEnv *env;
    long job;
    double every_s; /* heartbeat interval: a third of the lease, at most 1 s */
    char progress[512];
    int stop; /* 1 cancelled, -1 lease lost */
} Tick;

static int tick(void *ctx) {
    Tick *t = ctx;
    int rc = client_heartbeat(t->env->session, t->job, t->progress);
    if (rc != 0) {
        t->stop = rc;
        fprintf(stderr, "agent: job %ld %s: stopping\n", t->job,
                rc > 0 ? "cancelled by the coordinator" : "lease lost");
    }
    return rc;
}

/* Adds the file at PATH as subject NAME (and to FILES); returns its digest in SHA. */
static int add_subject(Bundle *b, const char *name, const char *path, size_t limit,
                       char sha[SHA256_HEX_LEN]) {
    size_t len = 0;
    char *data = fs_read(path, &len, NULL);
    if (!data || len > limit || !util_is_safe_relpath(name)) {
        free(data);
        return -1;
    }
    sha256_hex(data, len, sha);
    char *b64 = util_b64_encode(data, len);
    cJSON_AddStringToObject(b->files, name, b64);
    dsse_statement_add_subject(b->statement, name, sha);
    free(b64);
    free(data);
    return 0;
}

static void add_check(cJSON *checks, const char *name, int ok, const char *detail) {
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", name);
    cJSON_AddBoolToObject(c, "ok", ok);
    if (detail) { /* at most a line's worth: the coordinator bounds every string */
        char *line = strndup(detail, MAX_TRAP_LINE);
        cJSON_AddStringToObject(c, "detail", line);
        free(line);
    }
    cJSON_AddItemToArray(checks, c);
}

/* The first line of LOG mentioning "trap:", or NULL. */
static char *trap_line(const char *log) {
    char *text = fs_read(log, NULL, NULL);
    char *hit = text ? strstr(text, "trap:") : NULL;
    char *line = NULL;
    if (hit) {
        while (hit > text && hit[-1] != '\n') hit--;
        size_t n = strcspn(hit, "\n");
        line = strndup(hit, n < MAX_TRAP_LINE ? n : MAX_TRAP_LINE); /* the farm's bound */
    }
    free(text);
    return line;
}

/* Observation lines: data ones into OBS, {"check": name, "ok": bool} ones into CHECKS,
 * {"bound": observation, "ratio", "ok", "promise"} ones (a measured error/bound) into
 * BOUNDS as compare reads them, {"fixed": [names]} (bits a checker says are fixed) into
 * FIXED. */
/* A data observation the coordinator will accept (farm/core/fields.h), or NULL and why. */
static const char *bad_observation(const cJSON *j, size_t kept) {
    const char *name = json_str(j, "name"), *type = json_str(j, "type");
    double count = json_num(j, "count", -1);
    if (!j) return "is not JSON";
    if (!name || !*name || strlen(name) > EVIDENCE_MAX_NAME || !type || !*type ||
        strlen(type) > EVIDENCE_MAX_NAME)
        return "has no name and type of 1 to 256 bytes";
    if (!(count >= 0 && count <= 9007199254740992.0) || count != (double)(long long)count ||
        !sha256_is_hex(json_str(j, "sha256")))
        return "has no integer count and sha256 digest";
    return kept >= EVIDENCE_MAX_ITEMS ? "is past the 4096 observations a case may have" : NULL;
}

/* A line the observations could not take: the case fails loudly, naming the first. */
static void observation_refused(cJSON *checks, long line, const char *why, int *refused) {
    if ((*refused)++ == 0) {
        char detail[200];
        snprintf(detail, sizeof detail, "observation line %ld %s", line, why);
        add_check(checks, "observations_read", 0, detail);
    }
}

static void read_observations(const char *path, cJSON *obs, cJSON *checks, cJSON *bounds,
                              cJSON *fixed) {
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    long n = 0;
    int refused = 0;
    while (f && (got = getline(&line, &cap, f)) > 0) { /* lines of any length */
        n++;
        if (got > MAX_OBS_LINE) {
            observation_refused(checks, n, "is over 1 MiB", &refused);
            continue;
        }
        cJSON *j = cJSON_Parse(line);
        const char *why = NULL;
        if (json_str(j, "check") && strlen(json_str(j, "check")) > EVIDENCE_MAX_NAME)
            observation_refused(checks, n, "names a check of over 256 bytes", &refused);
        else if (json_str(j, "check"))
            add_check(checks, json_str(j, "check"),
                      cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "ok")),
                      json_str(j, "detail"));
        else if (json_str(j, "bound")) {
            cJSON *b = cJSON_Duplicate(j, 1);
            cJSON_AddStringToObject(b, "observation", json_str(j, "bound"));
            cJSON_AddItemToArray(bounds, b);
        } else if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "fixed"))) {
            const cJSON *f;
            cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(j, "fixed")) {
                if (cJSON_IsString(f))
                    cJSON_AddItemToArray(fixed, cJSON_CreateString(f->valuestring));
            }
        } else if ((why = bad_observation(j, (size_t)cJSON_GetArraySize(obs))) != NULL) {
            observation_refused(checks, n, why, &refused);
        } else { /* the four fields the farm reads; anything else stays in the log */
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", json_str(j, "name"));
            cJSON_AddStringToObject(o, "type", json_str(j, "type"));
            cJSON_AddNumberToObject(o, "count", json_num(j, "count", 0));
            cJSON_AddStringToObject(o, "sha256", json_str(j, "sha256"));
            cJSON_AddItemToArray(obs, o);
        }
        cJSON_Delete(j);
    }
    free(line);
    if (f) fclose(f);
}

/* Raw observed outputs become subjects; every observation's digest must be among them. */
static int add_raw(const char *raw_dir, const char *case_path, cJSON *obs, Bundle *b,
                   cJSON *checks) {
    DIR *d = opendir(raw_dir);
    if (!d) return -1; /* no raw bits were written: nothing to hold the digests to */
    cJSON *seen = cJSON_CreateArray();
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (ent->d_name[0] == '.' || !util_is_safe_component(ent->d_name)) continue;
        char path[4400], name[2048], sha[SHA256_HEX_LEN];
        snprintf(path, sizeof path, "%s/%s", raw_dir, ent->d_name);
        snprintf(name, sizeof name, "%s/obs/%s", case_path, ent->d_name);
        struct stat st;
        if (stat(path, &st) == 0 && st.st_size > MAX_RAW_SUBJECT) {
            char detail[300];
            snprintf(detail, sizeof detail, "%.200s is over the 8 MiB a raw observation may have",
                     ent->d_name);
            add_check(checks, "raw_within_limit", 0, detail);
        } else if (add_subject(b, name, path, MAX_RAW_SUBJECT, sha) == 0) {
            cJSON_AddItemToArray(seen, cJSON_CreateString(sha));
        }
    }
    closedir(d);
    int all = 1;
    const cJSON *o, *s;
    cJSON_ArrayForEach(o, obs) {
        int found = 0;
        cJSON_ArrayForEach(s, seen) {
            found |= json_str(o, "sha256") && !strcmp(s->valuestring, json_str(o, "sha256"));
        }
        all &= found;
    }
    cJSON_Delete(seen);
    return all;
}

#define BUILD_ARGV_MAX 16 /* cairn build's words, the terminating NULL among them */

typedef struct {
    const char *case_path; /* as listed in the run, relative to the source tree */
    const char *src_root;
    const char *out; /* this case's scratch folder */
    double timeout_s;
    const char *target; /* the cell's device target ("sm_90"), or NULL */
} CaseSpec;

/* The files of one case: its source, and what the build and the run write in c->out. */
typedef struct {
    char src[4096], prog[4096], blog[4096], rlog[4096], obs_log[4096], raw[4096];
    char receipt[4200];
} CasePaths;

static void case_paths(const CaseSpec *c, CasePaths *p) {
    snprintf(p->src, sizeof p->src, "%s/%s", c->src_root, c->case_path);
    snprintf(p->prog, sizeof p->prog, "%s/prog", c->out);
    snprintf(p->blog, sizeof p->blog, "%s/build.log", c->out);
    snprintf(p->rlog, sizeof p->rlog, "%s/run.log", c->out);
    snprintf(p->obs_log, sizeof p->obs_log, "%s/observe.jsonl", c->out);
    snprintf(p->raw, sizeof p->raw, "%s/raw", c->out);
    snprintf(p->receipt, sizeof p->receipt, "%s.receipt.json", p->prog);
}

/* `cairn build SRC -o PROG` for this cell: its compiler, sanitizer and target. */
static void build_argv(const SuiteEnv *env, const Cell *cell, const CaseSpec *c, const CasePaths *p,
                       char *argv[BUILD_ARGV_MAX]) {
    const char *cell_target = c->target;
    int n = 0;
    argv[n++] = (char *)env->opts->cairn;
    argv[n++] = "build";
    argv[n++] = (char *)p->src;
    argv[n++] = "-o";
    argv[n++] = (char *)p->prog;
    argv[n++] = "--cc";
    argv[n++] = (char *)cell->compiler;
    if (evidence_cell_sanitize_flag(cell)) {
        argv[n++] = "--sanitize";
        argv[n++] = (char *)evidence_cell_sanitize_flag(cell);
    }
    /* The cell's target, else for a device cell the first GPU's (compute_cap 9.0: sm_90). */
    static _Thread_local char target[32];
    snprintf(target, sizeof target, "%s", cell_target ? cell_target : "");
    if (!target[0] && !strcmp(cell->mode, "device"))
        evidence_gpu_target(
            json_str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(env->caps, "gpus"), 0),
                     "compute_cap"),
            target, sizeof target);
    if (target[0]) {
        argv[n++] = "--target";
        argv[n++] = target;
    }
    if (strcmp(cell->mode, "device") != 0 &&
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(env->caps, "cairn_emulate_flag")))
        argv[n++] = "--emulate";
    assert(n < BUILD_ARGV_MAX); /* at most 13 words: every flag above at once */
    argv[n] = NULL;
}

static cJSON *run_case(const SuiteEnv *env, const Cell *cell, const CaseSpec *c, Tick *t,
                       Bundle *b) {
    CasePaths p;
    case_paths(c, &p);
    char *prog = p.prog, *blog = p.blog, *rlog = p.rlog, *obs_log = p.obs_log;
    char *raw = p.raw, *receipt = p.receipt;
    char name[4200], sha[SHA256_HEX_LEN];
    fs_mkdirs(raw, NULL);
    cJSON *r = cJSON_CreateObject(), *checks = cJSON_CreateArray();
    cJSON_AddStringToObject(r, "case", c->case_path);
    double start = timing_now_seconds();
    char *argv[BUILD_ARGV_MAX];
    build_argv(env, cell, c, &p, argv);
    ProcWatch watch = {c->src_root, NULL, blog, c->timeout_s, t->every_s, tick, t};
    int build = proc_watch(argv, &watch);
    cJSON_AddNumberToObject(r, "build_status", build);
    add_check(checks, "build", build == 0, build == PROC_TIMEOUT ? "timed out" : NULL);
    snprintf(name, sizeof name, "%s/receipt.json", c->case_path);
    if (build == 0 && add_subject(b, name, receipt, (size_t)-1, sha) == 0) {
        cJSON *rj = json_parse_file(receipt, NULL);
        cJSON_AddStringToObject(r, "receipt", name);
        cJSON_AddBoolToObject(r, "unordered", rj && evidence_receipt_is_unordered(rj));
        cJSON_Delete(rj);
    }
    cJSON *obs = cJSON_AddArrayToObject(r, "observations");
    if (build == 0 && !t->stop) {
        char env_obs[4200], env_raw[4200];
        snprintf(env_obs, sizeof env_obs, "CAIRN_OBSERVE=%s", obs_log);
        snprintf(env_raw, sizeof env_raw, "CAIRN_OBSERVE_RAW=%s", raw);
        char *child_env[] = {env_obs, env_raw, NULL};
        char *run_argv[] = {prog, NULL};
        ProcWatch run = watch;
        run.env = child_env, run.log = rlog;
        int status = proc_watch(run_argv, &run);
        char *trap = trap_line(rlog);
        cJSON_AddNumberToObject(r, "exit_status", status);
        if (trap) cJSON_AddStringToObject(r, "trap", trap);
        add_check(checks, "exit_status_0", status == 0,
                  status == PROC_TIMEOUT ? "timed out" : NULL);
        add_check(checks, "no_trap", trap == NULL, trap);
        free(trap);
        if (env->opts->checker) { /* measured bounds join the log (docs/farm.md) */
            char *check_argv[] = {
                (char *)env->opts->checker, "append", (char *)c->case_path, obs_log, raw, NULL};
            snprintf(name, sizeof name, "%s/checker.log", c->out);
            ProcWatch check = watch;
            check.log = name;
            add_check(checks, "checker", proc_watch(check_argv, &check) == 0, NULL);
        }
        read_observations(obs_log, obs, checks, cJSON_AddArrayToObject(r, "bounds"),
                          cJSON_AddArrayToObject(r, "fixed"));
        int raw_ok = add_raw(raw, c->case_path, obs, b, checks);
        add_check(checks, "raw_bits_match_digests", raw_ok != 0,
                  raw_ok < 0 ? "no raw bits written" : NULL);
        snprintf(name, sizeof name, "%s/run.log", c->case_path);
        add_subject(b, name, rlog, MAX_LOG_SUBJECT, sha);
    } else {
        snprintf(name, sizeof name, "%s/build.log", c->case_path);
        add_subject(b, name, blog, MAX_LOG_SUBJECT, sha);
    }
    cJSON_AddItemToObject(r, "checks", checks);
    cJSON_AddNumberToObject(r, "duration_ms", (timing_now_seconds() - start) * 1000.0);
    return r;
}

static cJSON *predicate_head(const SuiteEnv *env, const ProtoJob *job, const Cell *cell) {
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "run", (double)job->run);
    cJSON_AddNumberToObject(p, "job", (double)job->job);
    cJSON_AddNumberToObject(p, "attempt", (double)job->attempt);
    cJSON_AddStringToObject(p, "cairn_version", env->cairn_version);
    cJSON *src = cJSON_AddObjectToObject(p, "source");
    cJSON_AddStringToObject(src, "sha256", job->source_sha256);
    cJSON_AddStringToObject(p, "farm", job->farm); /* the farm the job is of */
    cJSON *m = cJSON_AddObjectToObject(p, "machine");
    cJSON_AddStringToObject(m, "name", env->opts->name);
    static const char *const keys[] = {"cpu",  "cores", "os",     "gpus", "driver",
                                       "cuda", "nvcc",  "labels", NULL};
    for (int i = 0; keys[i]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(env->caps, keys[i]);
        if (v) cJSON_AddItemToObject(m, keys[i], cJSON_Duplicate(v, 1));
    }
    cJSON *c = evidence_cell_to_json(cell);
    cJSON_AddStringToObject(c, "id", job->cell_id);
    const char *target = json_str(job->cell, "target");
    if (target) cJSON_AddStringToObject(c, "target", target);
    const cJSON *cc = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(env->caps, "compilers"), cell->compiler);
    cJSON_AddStringToObject(c, "compiler_version",
                            json_str(cc, "version") ? json_str(cc, "version") : "");
    cJSON_AddItemToObject(p, "cell", c);
    cJSON_AddNumberToObject(p, "started_at", timing_now_seconds());
    return p;
}

static int fetch_source(const SuiteEnv *env, const ProtoJob *job, const char *dest, Err *e) {
    char *data = NULL;
    size_t len = 0;
    if (client_fetch_blob(env->session, job->source_sha256, &data, &len, e) != 0) return -1;
    int n = archive_unpack(data, len, dest, e);
    free(data);
    return n < 0 ? -1 : 0;
}

int suite_run(const SuiteEnv *env, const ProtoJob *job, Bundle *bundle, Err *e) {
    cJSON **statement = &bundle->statement, **files = &bundle->files;
    long id = job->job;
    Cell cell;
    char dir[2048], src[2200];
    snprintf(dir, sizeof dir, "%s/job-%ld-a%ld", env->opts->work, id, job->attempt);
    snprintf(src, sizeof src, "%s/src", dir);
    fs_remove_tree(dir);
    if (evidence_cell_from_json(job->cell, &cell, e) != 0 || fetch_source(env, job, src, e) != 0)
        return -1;
    *statement = dsse_statement_new(predicate_head(env, job, &cell));
    *files = cJSON_CreateObject();
    cJSON *results =
        cJSON_AddArrayToObject(cJSON_GetObjectItemCaseSensitive(*statement, "predicate"), "cases");
    const cJSON *cases = job->cases, *c;
    double lease = job->lease_seconds;
    Tick t = {.env = env, .job = id, .every_s = lease / 3 < 1.0 ? lease / 3 : 1.0};
    snprintf(t.progress, sizeof t.progress, "source unpacked");
    tick(&t); /* fetching may have taken a while: renew the lease before the cases */
    int i = 0, n = cJSON_GetArraySize(cases);
    cJSON_ArrayForEach(c, cases) {
        if (t.stop) break;
        char out[2400];
        snprintf(out, sizeof out, "%s/out/%d", dir, i++);
        snprintf(t.progress, sizeof t.progress, "case %d/%d %s", i, n, c->valuestring);
        fprintf(stderr, "agent: job %ld %s: %s\n", id, job->cell_id, t.progress);
        CaseSpec spec = {c->valuestring, src, out, job->timeout_s, json_str(job->cell, "target")};
        cJSON *r = run_case(env, &cell, &spec, &t, bundle);
        cJSON_AddItemToArray(results, r);
        fprintf(stderr, "agent: job %ld   build %.0f exit %.0f observations %d%s\n", id,
                json_num(r, "build_status", -1), json_num(r, "exit_status", -1),
                cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r, "observations")),
                cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "unordered")) ? " (unordered)"
                                                                               : "");
    }
    assert(cJSON_GetArraySize(results) == i); /* one result for every case begun */
    evidence_add_test_result(*statement);
    if (!env->opts->keep) fs_remove_tree(dir);
    if (!t.stop) {
        snprintf(t.progress, sizeof t.progress, "uploading");
        tick(&t); /* a fresh lease for the upload */
    }
    if (t.stop) {
        cJSON_Delete(*statement);
        cJSON_Delete(*files);
        *statement = *files = NULL;
        return 1;
    }
    return 0;
}
