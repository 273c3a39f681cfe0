/* main.c: cairn-agent's verbs: keygen, probe, run (the job loop), and loadgen and sign
 * from their own files, listed once in AGENT_VERBS (dispatched by lib/command.h, as
 * cairn's commands are). */
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "proto/dsse.h"
#include "lib/command.h"
#include "lib/version.h"

static const char RUN_HELP[] =
    "usage: cairn-agent run --coordinator URL --token-file FILE --key KEYFILE [options]\n"
    "\n"
    "Probes the machine, enrols with the coordinator (FILE holds the enrol_token of its\n"
    "config on its first line; the agent gets its own bearer token back), then loops: long-poll a job\n"
    "that fits, fetch and check the source archive, build and run every case with cairn\n"
    "under the cell's flags while heartbeating, sign the evidence bundle and upload it\n"
    "(retried with backoff). Progress goes to stderr.\n"
    "\n"
    "  --token-file FILE     the enrol token (its first non-blank line, white space dropped)\n"
    "  --token TOKEN         the same on the command line, where every user of the host can\n"
    "                        read it in the process list: prefer --token-file\n"
    "  --cairn PATH          the cairn binary (default: cairn next to cairn-agent)\n"
    "  --name NAME           machine name in evidence paths (default: host name)\n"
    "  --labels a,b          machine labels jobs may require\n"
    "  --compilers gcc,clang offer only these compilers (default: every one found)\n"
    "  --sanitizers asan,tsan  offer only these sanitizers (\"none\": none)\n"
    "  --checker PATH        after each run, PATH append CASE LOG RAW adds measured\n"
    "                        error/bound lines to the observation log (tests/gpu/gpucheck.py)\n"
    "  --work DIR            scratch folder (default: $TMPDIR/cairn-agent-NAME)\n"
    "  --once                claim at most one job, run it, exit (--max-jobs 1)\n"
    "  --max-jobs N          exit after N jobs\n"
    "  --idle-exit S         exit after S seconds without a job (--exit-when-idle S too)\n"
    "                        (the three let a batch system run the agent as a job; an\n"
    "                        agent that stops by them exits 0)\n"
    "  --keep                keep each job's scratch folder\n";

static const char KEYGEN_HELP[] =
    "usage: cairn-agent keygen KEYFILE\n"
    "\n"
    "Writes a new Ed25519 private key to KEYFILE (PKCS#8 PEM, mode 0600) and its public\n"
    "key to KEYFILE.pub (SubjectPublicKeyInfo PEM: what `cairn-farm verify --key` and\n"
    "`openssl pkeyutl -verify -pubin` read). Prints the key id (SHA-256 of the raw key).\n";

static const char PROBE_HELP[] =
    "usage: cairn-agent probe [--cairn PATH] [--labels a,b] [--compilers ...]"
    " [--sanitizers ...]\n\nPrints the capabilities `run` would report.\n";

static int cmd_keygen(int argc, char **argv) {
    if (argc < 2) {
        fputs(KEYGEN_HELP, stderr);
        return 2;
    }
    Err e = {{0}};
    char pub_path[4096], kid[SHA256_HEX_LEN];
    EVP_PKEY *key = dsse_key_generate(&e);
    char *pem = key ? dsse_key_public_pem(key) : NULL;
    snprintf(pub_path, sizeof pub_path, "%s.pub", argv[1]);
    mode_t old = umask(077);
    int rc = !pem || dsse_key_save_private(key, argv[1], &e) != 0 ? -1 : 0;
    umask(old);
    if (rc == 0) rc = fs_write_atomic(pub_path, pem, strlen(pem), &e);
    if (rc == 0 && dsse_key_id(key, kid) == 0)
        printf("key %s\npublic key %s\nkey id %s\n", argv[1], pub_path, kid);
    else fprintf(stderr, "cairn-agent keygen: %s\n", e.msg);
    free(pem);
    EVP_PKEY_free(key);
    return rc == 0 ? 0 : 1;
}

/* Default cairn: the one beside this binary (else cairn on PATH). */
static const char *default_cairn(void) {
    static char path[PATH_MAX];
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return "cairn";
    self[n] = '\0';
    snprintf(path, sizeof path, "%s/cairn", dirname(self));
    return path;
}

/* A positive number for FLAG (whole when WHOLE), or -1 with the reason on stderr. */
static double positive_arg(const char *flag, const char *text, int whole) {
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end || !(v > 0 && v < 1e9) || (whole && v != (double)(long)v)) {
        fprintf(stderr, "cairn-agent run: %s wants a positive %s, not \"%s\"\n", flag,
                whole ? "whole number" : "number of seconds", text);
        return -1;
    }
    return v;
}

/* The field a string-valued flag of probe and run sets, or NULL. */
static const char **string_option(AgentOptions *o, const char *flag) {
    const struct {
        const char *flag;
        const char **field;
    } opts[] = {{"--coordinator", &o->coordinator},
                {"--token", &o->enrol_token},
                {"--token-file", &o->enrol_token_file},
                {"--key", &o->key_path},
                {"--cairn", &o->cairn},
                {"--labels", &o->labels},
                {"--compilers", &o->compilers},
                {"--sanitizers", &o->sanitizers},
                {"--work", &o->work},
                {"--checker", &o->checker}};
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++)
        if (!strcmp(flag, opts[k].flag)) return opts[k].field;
    return NULL;
}

/* Parses probe's and run's options (argv[0] is the verb); 0, or -1 on error. */
static int parse_run_opts(int argc, char **argv, AgentOptions *o) {
    static char work[PATH_MAX];
    memset(o, 0, sizeof *o);
    o->cairn = default_cairn();
    gethostname(o->name, sizeof o->name - 1);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **field = string_option(o, a);
        if (field && v) *field = argv[++i];
        else if (!strcmp(a, "--name") && v) snprintf(o->name, sizeof o->name, "%s", argv[++i]);
        else if ((!strcmp(a, "--idle-exit") || !strcmp(a, "--exit-when-idle")) && v) {
            if ((o->exit_when_idle = positive_arg(a, argv[++i], 0)) < 0) return -1;
        } else if (!strcmp(a, "--max-jobs") && v) {
            if ((o->max_jobs = (long)positive_arg(a, argv[++i], 1)) < 0) return -1;
        } else if (!strcmp(a, "--once")) o->max_jobs = 1;
        else if (!strcmp(a, "--keep")) o->keep = 1;
        else {
            fprintf(stderr, "cairn-agent %s: unknown argument %s (see --help)\n", argv[0], a);
            return -1;
        }
    }
    if (!util_is_safe_component(o->name)) {
        fprintf(stderr, "cairn-agent: machine name \"%s\" must be [A-Za-z0-9._+-]\n", o->name);
        return -1;
    }
    if (!o->work) {
        const char *tmp = getenv("TMPDIR");
        snprintf(work, sizeof work, "%s/cairn-agent-%s", tmp ? tmp : "/tmp", o->name);
        o->work = work;
    }
    Err e = {{0}};
    if (fs_mkdirs(o->work, &e) != 0) {
        fprintf(stderr, "cairn-agent: %s\n", e.msg);
        return -1;
    }
    return 0;
}

static int cmd_probe(int argc, char **argv) {
    AgentOptions o;
    if (parse_run_opts(argc, argv, &o) != 0) return 2;
    Err e = {{0}};
    cJSON *caps = probe_machine(&o, &e);
    if (!caps) {
        fprintf(stderr, "cairn-agent probe: %s\n", e.msg);
        return 1;
    }
    char *text = cJSON_Print(caps);
    puts(text);
    free(text);
    cJSON_Delete(caps);
    return 0;
}

/* Enrols, retrying with backoff while the coordinator is unreachable. */
static int enrol(Session *s, const AgentOptions *o, EVP_PKEY *key, const cJSON *caps) {
    long backoff = 250;
    for (;;) {
        Err e = {{0}};
        Enrolment en = {o->coordinator, o->enrol_token, key, o->name, caps};
        int rc = client_enrol(s, &en, &e);
        if (rc == 0) {
            fprintf(stderr, "agent: %s enrolled as agent %ld with %s\n", o->name, s->id,
                    o->coordinator);
            return 0;
        }
        client_close(s);
        if (rc == -2) {
            fprintf(stderr, "cairn-agent: enrolment refused: %s\n", e.msg);
            return -1;
        }
        fprintf(stderr, "agent: enrol failed (%s), retry in %ld ms\n", e.msg, backoff);
        timing_sleep_ms(backoff);
        backoff = backoff * 2 > 8000 ? 8000 : backoff * 2;
    }
}

static void do_job(Session *s, const SuiteEnv *env, const ProtoJob *job) {
    long id = job->job;
    fprintf(stderr, "agent: job %ld claimed: run %ld cell %s attempt %ld, %d cases\n", id, job->run,
            job->cell_id, job->attempt, cJSON_GetArraySize(job->cases));
    Bundle b = {NULL, NULL};
    Err e = {{0}};
    int rc = suite_run(env, job, &b, &e);
    if (rc < 0)
        fprintf(stderr, "agent: job %ld failed before running: %s (its lease will run out)\n", id,
                e.msg);
    if (rc != 0) return;
    long status = client_upload(s, id, &b, 8, &e);
    if (status == 200) fprintf(stderr, "agent: job %ld: bundle uploaded and filed\n", id);
    else fprintf(stderr, "agent: job %ld: upload refused: %s\n", id, e.msg);
    cJSON_Delete(b.statement);
    cJSON_Delete(b.files);
}

/* The long poll's wait: 20 s, or what is left of --idle-exit (so it exits on time). */
static double claim_wait(const AgentOptions *o, double idle_since) {
    double left = o->exit_when_idle - (timing_now_seconds() - idle_since);
    if (o->exit_when_idle <= 0 || left >= 20) return 20;
    return left > 0.5 ? left : 0.5;
}

static int job_loop(const AgentOptions *o, EVP_PKEY *key, const cJSON *caps, const char *version) {
    Session s;
    if (enrol(&s, o, key, caps) != 0) return 1;
    SuiteEnv env = {o, &s, caps, version};
    double idle_since = timing_now_seconds();
    long backoff = 250, done = 0;
    for (;;) {
        cJSON *answer = NULL;
        ProtoJob job;
        Err e = {{0}};
        int rc = client_claim(&s, claim_wait(o, idle_since), &answer, &job, &e);
        if (rc > 0) {
            backoff = 250;
            do_job(&s, &env, &job);
            cJSON_Delete(answer);
            idle_since = timing_now_seconds();
            if (o->max_jobs > 0 && ++done >= o->max_jobs) {
                fprintf(stderr, "agent: %ld job%s done, exiting\n", done, done == 1 ? "" : "s");
                break;
            }
            continue;
        }
        if (rc == -3) { /* enrolling again would take the other agent's token: a livelock */
            fprintf(stderr,
                    "cairn-agent: another agent enrolled with this key (%s): stopping; give each"
                    " machine its own key (cairn-agent keygen)\n",
                    e.msg);
            client_close(&s);
            return 1;
        }
        if (rc < 0) {
            fprintf(stderr, "agent: claim failed (%s), retry in %ld ms\n", e.msg, backoff);
            if (rc == -2) { /* forgotten or revoked: enrol again (or stop) */
                client_close(&s);
                if (enrol(&s, o, key, caps) != 0) return 1;
            }
            timing_sleep_ms(backoff);
            backoff = backoff * 2 > 8000 ? 8000 : backoff * 2;
        }
        if (o->exit_when_idle > 0 && timing_now_seconds() - idle_since >= o->exit_when_idle) {
            fprintf(stderr, "agent: idle for %.0f s, exiting\n", o->exit_when_idle);
            break;
        }
    }
    client_close(&s);
    return 0;
}

/* The enrol token from --token-file (util_read_token_file): a file keeps the token out
 * of the process list, where --token shows it to every user. */
static int read_token_file(AgentOptions *o, Err *e) {
    static char token[512];
    if (util_read_token_file("cairn-agent run", o->enrol_token_file, token, sizeof token, e) != 0)
        return -1;
    o->enrol_token = token;
    return 0;
}

static int cmd_run(int argc, char **argv) {
    AgentOptions o;
    if (parse_run_opts(argc, argv, &o) != 0) return 2;
    Err e = {{0}};
    if (o.enrol_token && o.enrol_token_file) {
        fprintf(stderr, "cairn-agent run: --token and --token-file: give one (see --help)\n");
        return 2;
    }
    if (o.enrol_token_file && read_token_file(&o, &e) != 0) {
        fprintf(stderr, "cairn-agent run: --token-file %s\n", e.msg);
        return 2;
    }
    if (!o.coordinator || !o.enrol_token || !o.key_path) {
        fprintf(stderr, "cairn-agent run: needs --coordinator URL --token-file FILE --key KEYFILE"
                        " (see --help)\n");
        return 2;
    }
    util_warn_if_readable("cairn-agent run", o.key_path, "the agent's private key");
    EVP_PKEY *key = dsse_key_load_private(o.key_path, &e);
    cJSON *caps = key ? probe_machine(&o, &e) : NULL;
    if (!caps) {
        fprintf(stderr, "cairn-agent run: %s\n", e.msg);
        EVP_PKEY_free(key);
        return 2;
    }
    const char *version = json_str(caps, "cairn");
    const cJSON *cc;
    fprintf(stderr, "agent: %s: cairn %s, gpus %d, compilers:", o.name, version,
            cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(caps, "gpus")));
    cJSON_ArrayForEach(cc, cJSON_GetObjectItemCaseSensitive(caps, "compilers"))
        fprintf(stderr, " %s %s", cc->string, json_str(cc, "version"));
    fprintf(stderr, "\n");
    int rc = job_loop(&o, key, caps, version);
    cJSON_Delete(caps);
    EVP_PKEY_free(key);
    return rc;
}

/* VERB(name, function, --help text or NULL when the verb prints its own, summary) */
#define AGENT_VERBS(VERB)                                                                          \
    VERB(keygen, cmd_keygen, KEYGEN_HELP, "KEYFILE: make an Ed25519 key (and KEYFILE.pub)")        \
    VERB(sign, sign_main, NULL, "--predicate P --files DIR --key KEYFILE: sign files (make gpu)")  \
    VERB(probe, cmd_probe, PROBE_HELP, "[options]: print what this machine offers (JSON)")         \
    VERB(run, cmd_run, RUN_HELP,                                                                   \
         "--coordinator URL --token ENROL_TOKEN --key KEYFILE [options]: enrol, then claim\n"      \
         "             jobs, run suite cells and upload signed bundles")                           \
    VERB(loadgen, loadgen_main, NULL, "--coordinator URL --token T: simulated agents (load tests)")

static const Command verbs[] = {AGENT_VERBS(COMMAND_ENTRY)};

int main(int argc, char **argv) {
    static const CommandSet set = {
        "cairn-agent",
        "verb",
        VERSION_CAIRN,
        "the CAIRN test farm's agent, which runs suite cells on this machine",
        "As a batch job, `run` stops (exit 0) after one job with --once, after N jobs with\n"
        "--max-jobs N, or after S seconds without one with --idle-exit S. docs/farm.md\n"
        "describes the farm.\n",
        verbs,
        sizeof verbs / sizeof verbs[0]};
    signal(SIGPIPE, SIG_IGN);
    return command_main(&set, argc, argv);
}
