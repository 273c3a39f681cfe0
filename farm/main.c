/* main.c: cairn-farm's verbs, listed once in FARM_VERBS (dispatched by lib/command.h,
 * as cairn's commands are). `serve` runs the coordinator (serve/); the others are its
 * clients: submit, status, compare, cancel, revoke over HTTP, and verify offline. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/api.h"
#include "proto/archive.h"
#include "core/core.h"
#include "proto/dsse.h"
#include "proto/http.h"
#include "lib/command.h"
#include "lib/proc.h"
#include "lib/version.h"
#include "serve/serve.h"
#include "ci.h"
#include "export.h"
#include "junit.h"

typedef struct {
    const char *url, *token, *matrix, *key, *positional, *second;
    const char *submitter, *commit, *branch; /* submit's */
    const char *junit;                       /* --junit FILE: compare's and submit --wait's */
    double timeout;                          /* --timeout S: submit --wait's bound (0: none) */
    int wait, json;
} Opts;

static int usage_error(const char *verb, const char *msg) {
    fprintf(stderr, "cairn-farm %s: %s (see cairn-farm %s --help)\n", verb, msg, verb);
    return 2;
}

/* Parses the client verbs' options (argv[0] is the verb); 0, or -1 on error. */
static int parse_opts(int argc, char **argv, Opts *o) {
    memset(o, 0, sizeof *o);
    o->url = getenv("CAIRN_FARM_URL");
    o->token = getenv("CAIRN_FARM_TOKEN");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--coordinator") && next) {
            o->url = argv[++i];
        } else if (!strcmp(a, "--token") && next) {
            o->token = argv[++i];
        } else if (!strcmp(a, "--token-file") && next) {
            static char token[512];
            Err e = {{0}};
            if (util_read_token_file("cairn-farm", argv[++i], token, sizeof token, &e) != 0) {
                fprintf(stderr, "cairn-farm %s: --token-file %s\n", argv[0], e.msg);
                return -1;
            }
            o->token = token;
        } else if (!strcmp(a, "--matrix") && next) {
            o->matrix = argv[++i];
        } else if (!strcmp(a, "--key") && next) {
            o->key = argv[++i];
        } else if (!strcmp(a, "--submitter") && next) {
            o->submitter = argv[++i];
        } else if (!strcmp(a, "--commit") && next) {
            o->commit = argv[++i];
        } else if (!strcmp(a, "--branch") && next) {
            o->branch = argv[++i];
        } else if (!strcmp(a, "--junit") && next) {
            o->junit = argv[++i];
        } else if (!strcmp(a, "--timeout") && next) {
            char *end;
            o->timeout = strtod(argv[++i], &end);
            if (*end || !(o->timeout > 0 && o->timeout <= 1e7)) {
                fprintf(stderr, "cairn-farm %s: --timeout takes seconds in (0, 1e7]\n", argv[0]);
                return -1;
            }
        } else if (!strcmp(a, "--wait")) {
            o->wait = 1;
        } else if (!strcmp(a, "--json")) {
            o->json = 1;
        } else if (a[0] != '-' && !o->positional) {
            o->positional = a;
        } else if (a[0] != '-' && !o->second) {
            o->second = a;
        } else {
            fprintf(stderr, "cairn-farm %s: unknown argument %s\n", argv[0], a);
            return -1;
        }
    }
    return 0;
}

static Http *connect_or_complain(const Opts *o, const char *verb) {
    if (!o->url || !o->token) {
        usage_error(verb, "needs --coordinator URL and --token-file FILE (or --token ADMIN_TOKEN) "
                          "(or CAIRN_FARM_URL and CAIRN_FARM_TOKEN)");
        return NULL;
    }
    return http_new(o->url, o->token);
}

/* --- submit ------------------------------------------------------------------------ */

static const char SUBMIT_HELP[] =
    "usage: cairn-farm submit [--matrix FILE] [--wait [--junit FILE] [--timeout S]]\n"
    "                         [--commit SHA] [--branch NAME] [--submitter NAME]\n"
    "                         [--coordinator URL --token-file FILE] [DIR]\n"
    "\n"
    "Packs the source tree DIR (default .; .git, build, bin and hidden folders left out)\n"
    "into one content-addressed archive, uploads it, and starts a run over the matrix\n"
    "(default configs/matrix.json under DIR when present, else gcc plain). The cases are\n"
    "the matrix's \"cases\" list, or every examples/*.cairn in DIR. Prints the run id;\n"
    "with --wait, follows the run until every job has finished (at most --timeout S\n"
    "seconds), then prints its comparison as `compare` does, and with --junit FILE also\n"
    "writes it as JUnit XML (one testsuite per cell, one testcase per case).\n"
    "Exit status (for pipelines): 0 every case kept its promise, 1 a case violates its\n"
    "contract or differs where the bits are fixed, 2 usage (arguments, matrix, source, a\n"
    "request the coordinator refused with 4xx), 3 infrastructure (the coordinator\n"
    "unreachable or failing, the run cancelled, --timeout reached).\n"
    "The run records who submitted it (--submitter, else CAIRN_FARM_SUBMITTER, else\n"
    "USER@HOST) and the source's commit and branch (--commit, --branch; when DIR is a git\n"
    "checkout, read from git unless given: HEAD's commit and branch). The dashboard shows\n"
    "them; the archive's digest, not the commit, says what was built (a checkout with\n"
    "changes not committed is said so here).\n";

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static cJSON *default_cases(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/examples", dir);
    cJSON *cases = cJSON_CreateArray();
    DIR *d = opendir(path);
    char *names[4096];
    int n = 0;
    struct dirent *ent;
    while (d && (ent = readdir(d)) != NULL && n < 4096) {
        size_t len = strlen(ent->d_name);
        if (len > 6 && !strcmp(ent->d_name + len - 6, ".cairn") &&
            util_is_safe_component(ent->d_name))
            names[n++] = strdup(ent->d_name);
    }
    if (d) closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "examples/%s", names[i]);
        cJSON_AddItemToArray(cases, cJSON_CreateString(path));
        free(names[i]);
    }
    return cases;
}

static cJSON *load_matrix(const char *path, const char *dir, Err *e) {
    char fallback[4096];
    struct stat st;
    if (!path) {
        snprintf(fallback, sizeof fallback, "%s/configs/matrix.json", dir);
        if (stat(fallback, &st) != 0) return cJSON_Parse("{\"compilers\": [\"gcc\"]}");
        path = fallback;
    }
    return json_parse_file(path, e);
}

/* The next job row of a run view after *AT (rows that do not parse are skipped). */
static int next_job(const cJSON *view, const cJSON **at, ProtoJobRow *row) {
    ProtoRunView v;
    Err e = {{0}};
    if (!*at && proto_run_view_parse(view, &v, &e) != 0) return 0;
    for (*at = *at ? (*at)->next : v.jobs->child; *at; *at = (*at)->next)
        if (proto_job_row_parse(*at, row, &e) == 0) return 1;
    return 0;
}

static void print_progress(const cJSON *run) {
    int counts[PROTO_JOB_STATES] = {0};
    const cJSON *at = NULL;
    ProtoJobRow job;
    while (next_job(run, &at, &job)) {
        for (int k = 0; k < PROTO_JOB_STATES; k++)
            counts[k] += !strcmp(job.state, proto_job_states[k]);
    }
    ProtoRunView v;
    Err e = {{0}};
    printf("run %ld:", proto_run_view_parse(run, &v, &e) == 0 ? v.id : 0L);
    for (int k = 0; k < PROTO_JOB_STATES; k++) printf(" %s %d", proto_job_states[k], counts[k]);
    printf("\n");
    fflush(stdout);
}

/* Prints each job whose state or progress moved since the last look. */
static void print_moves(const cJSON *view, cJSON *last) {
    const cJSON *at = NULL;
    ProtoJobRow job;
    while (next_job(view, &at, &job)) {
        char key[32], now[600];
        snprintf(key, sizeof key, "%ld", job.job);
        const char *progress = job.progress;
        snprintf(now, sizeof now, "%s %s", job.state, progress ? progress : "");
        const char *before = json_str(last, key);
        if (before && !strcmp(before, now)) continue;
        printf("  job %-4s %-28s %-9s %-14s %s\n", key, job.cell_id, job.state,
               job.agent ? job.agent : "", progress && strcmp(progress, "claimed") ? progress : "");
        cJSON_DeleteItemFromObject(last, key);
        cJSON_AddStringToObject(last, key, now);
    }
    fflush(stdout);
}

/* Whether any job of a finished run was cancelled (the run was, or its jobs were). */
static int run_cancelled(const cJSON *run) {
    const cJSON *at = NULL;
    ProtoJobRow job;
    while (next_job(run, &at, &job))
        if (!strcmp(job.state, "cancelled")) return 1;
    return 0;
}

/* Follows RUN until every job has finished, at most TIMEOUT seconds (0: no bound): 0,
 * or CI_INFRA (reported) when the coordinator stopped answering, the run was cancelled
 * or the wait ran out. */
static int follow_run(Http *h, long run, double timeout) {
    cJSON *last = cJSON_CreateObject();
    double until = timing_monotonic_seconds() + timeout;
    int rc = CI_INFRA;
    for (;;) {
        cJSON *view = ci_get_view(h, run, "submit");
        if (!view) break;
        print_moves(view, last);
        int done = ci_run_finished(view), cancelled = done && run_cancelled(view);
        if (done) print_progress(view);
        cJSON_Delete(view);
        if (cancelled) fprintf(stderr, "cairn-farm submit: run %ld was cancelled\n", run);
        if (done) {
            rc = cancelled ? CI_INFRA : 0;
            break;
        }
        if (timeout > 0 && timing_monotonic_seconds() >= until) {
            fprintf(stderr, "cairn-farm submit: run %ld did not finish within --timeout %g s\n",
                    run, timeout);
            break;
        }
        timing_sleep_ms(500);
    }
    cJSON_Delete(last);
    return rc;
}

/* What git says of DIR with ARGS (NULL-ended, at most 6): its first line (malloc'd), or
 * NULL when DIR is not in a checkout (or git is missing). The tree is the submitter's
 * but its .git/config may be anyone's: `git status` ran its core.fsmonitor command as the
 * submitter, with CAIRN_FARM_TOKEN in its environment. So git runs with the fsmonitor
 * and hooks off, no system or global config, no optional locks, and an environment of
 * PATH and git's own settings alone (docs/farm.md, "Submitting"). */
static char *git_says(const char *dir, const char *const *args) {
    char *argv[20] = {"git", "--no-optional-locks",
                      "-c",  "core.fsmonitor=false",
                      "-c",  "core.hooksPath=/dev/null",
                      "-c",  "core.untrackedCache=false",
                      "-C",  (char *)dir};
    for (int i = 0; i < 6 && args[i]; i++) argv[10 + i] = (char *)args[i];
    const char *path = getenv("PATH");
    char path_env[4096];
    snprintf(path_env, sizeof path_env, "PATH=%s", path ? path : "/usr/bin:/bin");
    char *env[] = {path_env,
                   "HOME=/nonexistent",
                   "GIT_CONFIG_NOSYSTEM=1",
                   "GIT_CONFIG_GLOBAL=/dev/null",
                   "GIT_TERMINAL_PROMPT=0",
                   "LC_ALL=C",
                   NULL};
    char *out = NULL;
    int status = proc_output_env(argv, env, &out, NULL);
    if (status != 0 || !out) {
        free(out);
        return NULL;
    }
    out[strcspn(out, "\r\n")] = '\0';
    return out;
}

/* The run's submitter, commit and branch: what the options say, else the environment
 * and git (owned strings into OWNED, freed by the caller). */
static void run_meta(const Opts *o, const char *dir, ProtoRunCreate *m, char *owned[3]) {
    static char who[256];
    static const char *const head[] = {"rev-parse", "HEAD", NULL};
    static const char *const branch[] = {"symbolic-ref", "--short", "-q", "HEAD", NULL};
    static const char *const changes[] = {"status", "--porcelain", "--untracked-files=no",
                                          "--",     ".",           NULL};
    const char *user = getenv("USER"), *env = getenv("CAIRN_FARM_SUBMITTER");
    char host[128] = "";
    gethostname(host, sizeof host - 1);
    snprintf(who, sizeof who, "%s@%s", user ? user : "someone", host);
    m->submitter = o->submitter ? o->submitter : env ? env : who;
    m->commit = o->commit ? o->commit : (owned[0] = git_says(dir, head));
    owned[1] = o->branch ? NULL : git_says(dir, branch);
    m->branch = o->branch ? o->branch : owned[1] && owned[1][0] ? owned[1] : NULL;
    if (!o->commit && m->commit && (owned[2] = git_says(dir, changes)) && owned[2][0])
        fprintf(stderr,
                "cairn-farm submit: %s has changes not committed: the run names commit %.12s,"
                " which does not hold them\n",
                dir, m->commit);
}

/* The exit status for an answer STATUS that refused a request: a 4xx is the caller's
 * (a token, a matrix), anything else (no answer, 5xx) the coordinator's. */
static int refused_status(long status) {
    return status >= 400 && status < 500 ? CI_USAGE : CI_INFRA;
}

static int upload_and_start(Http *h, const char *dir, cJSON *matrix, const Opts *o, long *run) {
    Err e = {{0}};
    size_t len = 0;
    char *archive = archive_pack(dir, &len, &e);
    if (!archive) {
        fprintf(stderr, "cairn-farm submit: %s\n", e.msg);
        return CI_USAGE;
    }
    char sha[SHA256_HEX_LEN], path[128];
    sha256_hex(archive, len, sha);
    snprintf(path, sizeof path, "/api/v1/blobs/%s", sha);
    HttpResponse r;
    ProtoError pe;
    ProtoBlob stored;
    Err why = {{0}};
    long status = proto_send(
        h, &(HttpRequest){"PUT", path, "application/octet-stream", archive, len, 300}, &r, &pe);
    free(archive);
    cJSON *blob = status == 200 ? cJSON_ParseWithLength(r.body, r.len) : NULL;
    if (status >= 0) http_response_free(&r);
    if (status != 200) proto_fail(&e, "upload failed", &pe);
    else if (proto_blob_parse(blob, &stored, &why) != 0 || strcmp(stored.sha256, sha) != 0 ||
             stored.size != (long)len)
        err_set(&e, "upload: the coordinator did not store %.16s... (%zu bytes): %s", sha, len,
                why.msg[0] ? why.msg : "it answered another digest or size");
    cJSON_Delete(blob);
    if (e.msg[0]) {
        fprintf(stderr, "cairn-farm submit: %s\n", e.msg);
        return status == 200 ? CI_INFRA : refused_status(status);
    }
    cJSON *cases = cJSON_GetObjectItemCaseSensitive(matrix, "cases");
    cJSON *own_cases = cases ? NULL : default_cases(dir), *answer = NULL;
    ProtoRunCreate m = {.source = sha, .matrix = matrix, .cases = cases ? cases : own_cases};
    char *owned[3] = {0};
    run_meta(o, dir, &m, owned);
    ProtoRunCreated created;
    cJSON *req = proto_run_create_build(&m);
    for (int i = 0; i < 3; i++) free(owned[i]);
    status = proto_call(h, &(ProtoCall){"POST", "/api/v1/runs", req, 60}, &answer, &pe);
    cJSON_Delete(req);
    cJSON_Delete(own_cases);
    if (status != 201) proto_fail(&e, "POST /api/v1/runs", &pe);
    int ok = status == 201 && proto_run_created_parse(answer, &created, &e) == 0;
    cJSON_Delete(answer);
    if (!ok) {
        fprintf(stderr, "cairn-farm submit: %s\n", e.msg);
        return status == 201 ? CI_INFRA : refused_status(status);
    }
    *run = created.run;
    printf("run %ld: %ld jobs, source %.16s... (%zu bytes)\n", *run, created.jobs, sha, len);
    fflush(stdout);
    return 0;
}

static int cmd_submit(int argc, char **argv) {
    Opts o;
    if (parse_opts(argc, argv, &o) != 0) return 2;
    if ((o.junit || o.timeout > 0) && !o.wait)
        return usage_error("submit", "--junit and --timeout go with --wait");
    Http *h = connect_or_complain(&o, "submit");
    if (!h) return 2;
    const char *dir = o.positional ? o.positional : ".";
    Err e = {{0}};
    cJSON *matrix = load_matrix(o.matrix, dir, &e);
    long run = 0;
    int rc = !matrix ? (fprintf(stderr, "cairn-farm submit: %s\n", e.msg), 2)
                     : upload_and_start(h, dir, matrix, &o, &run);
    if (rc == 0 && o.wait) rc = follow_run(h, run, o.timeout);
    if (rc == 0 && o.wait) rc = ci_judge_run(h, run, &(CiJudge){"submit", o.url, o.junit, o.json});
    cJSON_Delete(matrix);
    http_free(h);
    return rc;
}

/* --- status, cancel, revoke -------------------------------------------------------- */

static const char STATUS_HELP[] =
    "usage: cairn-farm status [RUN] [--json] [--coordinator URL --token-file FILE]\n"
    "\n"
    "Without RUN: the agents (capabilities, last seen), every run's job counts and the\n"
    "latest events (agent_lost ...). With RUN: each job's cell, state, agent, attempt,\n"
    "progress and where its evidence was filed.\n";

static void print_status(const cJSON *answer) {
    ProtoStatus st;
    ProtoAgentRow a;
    ProtoRunRow r;
    ProtoEventRow ev;
    const cJSON *row, *cc;
    Err e = {{0}};
    if (proto_status_parse(answer, &st, &e) != 0) {
        fprintf(stderr, "cairn-farm status: %s\n", e.msg);
        return;
    }
    printf("agents:\n");
    cJSON_ArrayForEach(row, st.agents) {
        if (proto_agent_row_parse(row, &a, &e) != 0) continue;
        printf("  %-3ld %-20s %s compilers:", a.id, a.name, a.revoked ? "REVOKED" : "active ");
        cJSON_ArrayForEach(cc, cJSON_GetObjectItemCaseSensitive(a.caps, "compilers"))
            printf(" %s", cc->string);
        printf(" gpus: %d\n", cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(a.caps, "gpus")));
    }
    printf("runs:\n");
    cJSON_ArrayForEach(row, st.runs) {
        if (proto_run_row_parse(row, &r, &e) == 0)
            printf("  %-3ld jobs %ld: queued %ld running %ld done %ld failed %ld cancelled %ld\n",
                   r.id, r.jobs, r.queued, r.running, r.done, r.failed, r.cancelled);
    }
    cJSON_ArrayForEach(row, st.events) {
        if (proto_event_row_parse(row, &ev, &e) == 0)
            printf("  event: job %ld agent %ld %s\n", ev.job, ev.agent, ev.kind);
    }
}

static void print_run(const cJSON *run) {
    const cJSON *at = NULL;
    ProtoJobRow j;
    print_progress(run);
    while (next_job(run, &at, &j))
        printf("  job %-5ld %-32s %-9s agent %-16s attempt %ld lost %ld %s%s%s\n", j.job, j.cell_id,
               j.state, j.agent ? j.agent : "-", j.attempt, j.lost, j.progress ? j.progress : "",
               j.failure ? " failure: " : "", j.failure ? j.failure : "");
}

static int cmd_status(int argc, char **argv) {
    Opts o;
    if (parse_opts(argc, argv, &o) != 0) return 2;
    Http *h = connect_or_complain(&o, "status");
    if (!h) return 2;
    char path[128];
    snprintf(path, sizeof path, o.positional ? "/api/v1/runs/%s" : "/api/v1/status%s",
             o.positional ? o.positional : "");
    cJSON *answer = ci_get_json(h, path, "status");
    http_free(h);
    if (!answer) return 1;
    if (o.json) {
        char *text = cJSON_Print(answer);
        puts(text);
        free(text);
    } else if (o.positional) {
        print_run(answer);
    } else {
        print_status(answer);
    }
    cJSON_Delete(answer);
    return 0;
}

static const char CANCEL_HELP[] =
    "usage: cairn-farm cancel RUN [--coordinator URL --token-file FILE]\n"
    "\nCancels every queued and running job of RUN; a running agent learns it at its next\n"
    "heartbeat, stops the case it runs and uploads nothing.\n";
static const char REVOKE_HELP[] =
    "usage: cairn-farm revoke AGENT [--coordinator URL --token-file FILE]\n"
    "\nRevokes agent AGENT (its id in `cairn-farm status`): its token stops working (401),\n"
    "its key cannot enrol again, and its running jobs go back to the queue.\n";

static int post_verb(int argc, char **argv, const char *fmt) {
    Opts o;
    if (parse_opts(argc, argv, &o) != 0) return 2;
    if (!o.positional) return usage_error(argv[0], "needs an id");
    Http *h = connect_or_complain(&o, argv[0]);
    if (!h) return 2;
    char path[256];
    snprintf(path, sizeof path, fmt, o.positional);
    /* cancel answers {"cancelled": true}, revoke {"revoked": true} */
    const char *flag = !strcmp(argv[0], "cancel") ? PROTO_ACK_CANCELLED : PROTO_ACK_REVOKED;
    cJSON *answer = NULL;
    ProtoError pe;
    Err e = {{0}};
    long status = proto_call(h, &(ProtoCall){"POST", path, NULL, 60}, &answer, &pe);
    http_free(h);
    if (status != 200) proto_fail(&e, path, &pe);
    int ok = status == 200 && proto_ack_parse(answer, flag, &e) == 0;
    cJSON_Delete(answer);
    if (!ok) {
        fprintf(stderr, "cairn-farm %s: %s\n", argv[0], e.msg);
        return 1;
    }
    printf("%s %s: done\n", argv[0], o.positional);
    return 0;
}

static int cmd_cancel(int argc, char **argv) {
    return post_verb(argc, argv, "/api/v1/runs/%s/cancel");
}

static int cmd_revoke(int argc, char **argv) {
    return post_verb(argc, argv, "/api/v1/agents/%s/revoke");
}

/* --- compare ----------------------------------------------------------------------- */

static const char COMPARE_HELP[] =
    "usage: cairn-farm compare RUN [--json] [--junit FILE] [--coordinator URL --token-file FILE]\n"
    "       cairn-farm compare RESULTS.json [--json] [--junit FILE]\n"
    "\n"
    "Prints per case a row and per machine/cell a column: a digest over every observation\n"
    "(name, type, count, SHA-256) and the exit status when not 0, then a verdict that names\n"
    "the promise it checked (docs/farm.md, \"Verdicts\"):\n"
    "  identical            the same bits everywhere\n"
    "  within-bound         bits differ in an operation whose order the hardware picks, and\n"
    "                       every cell measured them within the contract's bound (error/bound)\n"
    "  no-evidence          the case observes nothing, or differs where nobody measured it\n"
    "  violates-contract    a bound or contract check failed, or the case did not run cleanly\n"
    "  differs-where-fixed  bits, statuses or observations differ where the language fixes them\n"
    "A RESULTS file (make gpu writes one) is compared offline, without a coordinator.\n"
    "The comparison is linear in the observations and measurements the results hold;\n"
    "over a million of them it compares nothing and says so (exit 2 for a file, 3 for a\n"
    "run).\n"
    "--junit FILE also writes the comparison as JUnit XML: one testsuite per cell, one\n"
    "testcase per case, failures with the first differing value (docs/farm.md, \"CI and\n"
    "monitoring\").\n"
    "Exits 1 when any case violates-contract or differs-where-fixed, 0 otherwise; 2 for\n"
    "usage errors, 3 when the coordinator cannot be read.\n";

/* `compare RESULTS.json --junit FILE`: the JUnit file of a comparison made offline. */
static int compare_file_junit(const char *path, const Opts *o) {
    Err e = {{0}};
    cJSON *doc = NULL;
    const cJSON *results = NULL;
    cJSON *report = compare_load_file(path, &doc, &results, &e);
    int status = report ? compare_emit(report, o->json) : 2;
    if (!report) fprintf(stderr, "cairn-farm compare: %s\n", e.msg);
    else if (status != 2 && junit_write(o->junit, &(JunitInput){report, results, NULL, 0}, &e))
        status = (fprintf(stderr, "cairn-farm compare: --junit %s\n", e.msg), CI_INFRA);
    cJSON_Delete(report);
    cJSON_Delete(doc);
    return status;
}

static int cmd_compare(int argc, char **argv) {
    Opts o;
    if (parse_opts(argc, argv, &o) != 0) return 2;
    if (!o.positional) return usage_error("compare", "needs a run id");
    if (o.positional[strspn(o.positional, "0123456789")]) /* not a run id: a results file */
        return o.junit ? compare_file_junit(o.positional, &o) : compare_file(o.positional, o.json);
    Http *h = connect_or_complain(&o, "compare");
    if (!h) return 2;
    int status = ci_judge_run(h, atol(o.positional), &(CiJudge){"compare", o.url, o.junit, o.json});
    http_free(h);
    return status;
}

/* --- gc, export ---------------------------------------------------------------------- */

static const char GC_HELP[] =
    "usage: cairn-farm gc [--coordinator URL --token-file FILE]\n"
    "\n"
    "Asks the coordinator to remove every blob in its state folder that nothing names: no\n"
    "filed bundle's manifest, no source archive, no filing in progress (docs/farm.md,\n"
    "\"Collecting blobs\"). Safe while agents upload, here and at other coordinators of\n"
    "the same farm. Prints what it kept and removed.\n";

static int cmd_gc(int argc, char **argv) {
    Opts o;
    if (parse_opts(argc, argv, &o) != 0) return 2;
    Http *h = connect_or_complain(&o, "gc");
    if (!h) return 2;
    cJSON *answer = NULL;
    ProtoError pe;
    Err e = {{0}};
    long status = proto_call(h, &(ProtoCall){"POST", "/api/v1/gc", NULL, 3600}, &answer, &pe);
    http_free(h);
    if (status != 200 || !answer) {
        proto_fail(&e, "POST /api/v1/gc", &pe);
        fprintf(stderr, "cairn-farm gc: %s\n", e.msg);
        cJSON_Delete(answer);
        return 1;
    }
    printf("gc: %.0f blob(s) kept, %.0f removed (%.0f bytes), %.0f put back, %.0f temp file(s)"
           " removed, in %.2f s\n",
           json_num(answer, "blobs", 0), json_num(answer, "removed", 0),
           json_num(answer, "bytes_removed", 0), json_num(answer, "put_back", 0),
           json_num(answer, "temps_removed", 0), json_num(answer, "seconds", 0));
    cJSON_Delete(answer);
    return 0;
}

static const char EXPORT_HELP[] =
    "usage: cairn-farm export RUN DIR [--coordinator URL --token-file FILE]\n"
    "\n"
    "Writes every bundle filed for RUN under DIR/evidence/<version>/<run>/<machine>/<cell>/:\n"
    "bundle.dsse.json, agent.pub.pem and every file its statement names, each checked\n"
    "against its SHA-256 as it arrives, then each bundle verified from what was written.\n"
    "Nothing under DIR is overwritten and no link there is followed: a file or link in\n"
    "the way fails the export.\n"
    "`cairn-farm verify`, farm/verify_openssl.sh and plain openssl check the result with\n"
    "no coordinator (docs/farm.md, \"Verifying offline\").\n";

static int cmd_export(int argc, char **argv) {
    Opts o;
    if (parse_opts(argc, argv, &o) != 0) return 2;
    if (!o.positional || !o.second || o.positional[strspn(o.positional, "0123456789")])
        return usage_error("export", "needs a run id and a folder");
    Http *h = connect_or_complain(&o, "export");
    if (!h) return 2;
    long bundles = 0, files = 0;
    Err e = {{0}};
    int rc = export_run(h, o.positional, o.second, &bundles, &files, &e);
    http_free(h);
    if (rc != 0) fprintf(stderr, "cairn-farm export: %s\n", e.msg);
    if (rc == 0 || bundles > 0)
        printf("exported run %s: %ld bundle(s), %ld file(s) under %s/evidence, each verified\n",
               o.positional, bundles, files, o.second);
    return rc != 0;
}

/* --- verify (offline) -------------------------------------------------------------- */

static const char VERIFY_HELP[] =
    "usage: cairn-farm verify BUNDLE --key PUB\n"
    "\n"
    "Checks offline that BUNDLE (a bundle.dsse.json) carries an Ed25519 signature by the\n"
    "key in PUB (PEM) over DSSE's PAE, that its payload is an in-toto Statement v1 with\n"
    "the cairn predicate, and that every subject's file (beside BUNDLE, as filed under\n"
    "evidence/) has the SHA-256 the statement names. docs/farm.md shows the same check\n"
    "with the openssl command line.\n";

static char *read_beside(void *ctx, const char *name, size_t *len) {
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", (const char *)ctx, name);
    return fs_read(path, len, NULL);
}

static int cmd_verify(int argc, char **argv) {
    Opts o;
    if (parse_opts(argc, argv, &o) != 0) return 2;
    if (!o.positional || !o.key) return usage_error("verify", "needs BUNDLE and --key PUB");
    Err e = {{0}};
    EVP_PKEY *key = dsse_key_load_public(o.key, &e);
    cJSON *env = key ? json_parse_file(o.positional, &e) : NULL;
    if (!env) {
        EVP_PKEY_free(key);
        fprintf(stderr, "cairn-farm verify: %s\n", e.msg);
        return 2;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", o.positional);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");
    cJSON *statement = NULL;
    BundleVerdict v =
        bundle_check(env, key, &(BundleFiles){read_beside, dir, NULL, SIZE_MAX}, &statement, &e);
    if (v == BUNDLE_OK) {
        const cJSON *pred = cJSON_GetObjectItemCaseSensitive(statement, "predicate");
        printf("verified: %s\n  signed by key %s\n  %d subjects match their files\n"
               "  run %.0f job %.0f machine %s cell %s cairn %s\n",
               o.positional,
               json_str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(env, "signatures"), 0),
                        "keyid"),
               cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(statement, "subject")),
               json_num(pred, "run", 0), json_num(pred, "job", 0),
               json_str(cJSON_GetObjectItemCaseSensitive(pred, "machine"), "name"),
               json_str(cJSON_GetObjectItemCaseSensitive(pred, "cell"), "id"),
               json_str(pred, "cairn_version"));
    } else {
        fprintf(stderr, "cairn-farm verify: FAILED: %s\n", e.msg);
    }
    cJSON_Delete(statement);
    cJSON_Delete(env);
    EVP_PKEY_free(key);
    return v == BUNDLE_OK ? 0 : 1;
}

/* VERB(name, function, --help text or NULL when the verb prints its own, summary) */
#define FARM_VERBS(VERB)                                                                           \
    VERB(serve, serve_main, NULL, "--state DIR --config FILE [--listen H:P]: the coordinator")     \
    VERB(submit, cmd_submit, SUBMIT_HELP,                                                          \
         "[--matrix FILE] [--wait [--junit FILE]] [DIR]: upload DIR, start a run")                 \
    VERB(status, cmd_status, STATUS_HELP, "[RUN]: agents, runs and jobs")                          \
    VERB(compare, cmd_compare, COMPARE_HELP, "RUN [--json]: digests per case and machine/cell")    \
    VERB(cancel, cmd_cancel, CANCEL_HELP, "RUN: cancel a run (reaches running agents)")            \
    VERB(revoke, cmd_revoke, REVOKE_HELP, "AGENT: revoke an agent's key and token")                \
    VERB(gc, cmd_gc, GC_HELP, ": remove the blobs nothing names")                                  \
    VERB(export, cmd_export, EXPORT_HELP, "RUN DIR: write a run's bundles out as folders")         \
    VERB(verify, cmd_verify, VERIFY_HELP, "BUNDLE --key PUB: check a bundle offline")

static const Command verbs[] = {FARM_VERBS(COMMAND_ENTRY)};

int main(int argc, char **argv) {
    static const CommandSet set = {
        "cairn-farm",
        "verb",
        VERSION_CAIRN,
        "the CAIRN test farm's coordinator and its clients",
        "Client verbs take --coordinator URL and --token-file FILE (the admin token on its\n"
        "first line; --token ADMIN_TOKEN shows it in the process list), or the environment\n"
        "variables CAIRN_FARM_URL and CAIRN_FARM_TOKEN. docs/farm.md describes the API, the\n"
        "bundle format and deployment.\n",
        verbs,
        sizeof verbs / sizeof verbs[0]};
    return command_main(&set, argc, argv);
}
