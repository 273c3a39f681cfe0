/* compare.c: per case a row, per machine/cell a column, and a verdict that names the
 * promise it checked (the spec's table, numerics.md "Emulated device runs"):
 *   identical            every cell observed the same bits
 *   within-bound         bits differ in a case whose receipt lists an operation whose
 *                        order the hardware picks, and every cell measured the
 *                        observation within the contract's bound (worst error/bound)
 *   violates-contract    a measured bound or a contract check failed, or the case did
 *                        not run cleanly the same way everywhere (fails the run)
 *   differs-where-fixed  bits, exit statuses or the list of observations differ where
 *                        the language fixes them (fails the run)
 *   no-evidence          nothing to judge: the case observes nothing, or its bits differ
 *                        in an unordered operation no cell measured (never agreement)
 * Observations are matched by name and occurrence ("acc", "acc#2", ...). */
#include "core/compare.h"
#include "core/fields.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/util.h"

/* Verdicts from best to worst: a case takes the worst of its observations'. */
static const char *const VERDICTS[] = {"identical", "within-bound", "no-evidence",
                                       "violates-contract", "differs-where-fixed"};
enum { V_IDENTICAL, V_WITHIN, V_NO_EVIDENCE, V_VIOLATES, V_DIFFERS, V_COUNT };

#define P_FIXED                                                                                    \
    "fixed bits: the receipt lists only roundings the language fixes, so "                         \
    "emulated and device runs give the same bits"
#define P_UNORDERED_SAME "an operation whose order the hardware picks gave the same bits here"
#define P_RUN                                                                                      \
    "the run itself: builds, exit statuses and traps are the same everywhere "                     \
    "(integer arithmetic, conversions and every guard)"
#define P_CLEAN                                                                                    \
    "the case runs cleanly: it builds, exits 0, does not trap and its raw bits "                   \
    "match their digests"
#define P_OBSERVES  "the case observes what it computes"
#define P_SAME_LIST "every cell observes the same things (the program fixes its observations)"
#define P_MEASURED                                                                                 \
    "an unordered operation may differ only within its bound, and no cell "                        \
    "measured this observation against it"

/* The checks every run has (the agent's and make gpu's); any other is a contract check. */
static int is_run_check(const char *name) {
    static const char *const run_checks[] = {
        "build", "exit_status_0", "no_trap", "raw_bits_match_digests", "checker", NULL};
    for (int i = 0; run_checks[i]; i++)
        if (name && !strcmp(name, run_checks[i])) return 1;
    return 0;
}

static int is_true(const cJSON *o, const char *key) {
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* An exit or build status as an int. Uploads bound both since they were checked at the
 * door (farm/core/fields.c), but a results file or a bundle filed before then may carry
 * anything: out of range reads as STATUS_MALFORMED, never an unchecked cast. */
#define STATUS_MALFORMED (FIELD_STATUS_MIN - 1)
static int status_field(const cJSON *c, const char *key) {
    long v = 0;
    return json_int(c, key, FIELD_STATUS_MIN, FIELD_STATUS_MAX, &v) < 0 ? STATUS_MALFORMED : (int)v;
}

/* One cell's value for a case: a digest over every observation plus the exit status. */
static cJSON *cell_value(const cJSON *c, const cJSON *res) {
    cJSON *v = cJSON_CreateObject();
    const cJSON *obs = cJSON_GetObjectItemCaseSensitive(c, "observations"), *o;
    char *text = NULL;
    size_t len = 0;
    FILE *lines = open_memstream(&text, &len); /* grows with every field, however long */
    cJSON_ArrayForEach(o, obs) {
        const char *name = json_str(o, "name"), *type = json_str(o, "type");
        const char *sha = json_str(o, "sha256");
        fprintf(lines, "%s %s %.0f %s\n", name ? name : "", type ? type : "",
                json_num(o, "count", 0), sha ? sha : "");
    }
    fclose(lines);
    char digest[SHA256_HEX_LEN], shown[64];
    sha256_hex(text, len, digest);
    free(text);
    int build = status_field(c, "build_status"), status = status_field(c, "exit_status");
    if (build == -2) /* the agent's mark for a build it stopped at the job's timeout */
        snprintf(shown, sizeof shown, "build-timeout");
    else if (build != 0) snprintf(shown, sizeof shown, "build-failed(%d)", build);
    else snprintf(shown, sizeof shown, "%.12s", cJSON_GetArraySize(obs) ? digest : "no-obs");
    if (build == 0 && status != 0) {
        size_t n = strlen(shown);
        snprintf(shown + n, sizeof shown - n, " exit=%d", status);
    }
    cJSON_AddStringToObject(v, "value", shown);
    cJSON_AddNumberToObject(v, "observations", cJSON_GetArraySize(obs));
    int checks_ok = build == 0;
    const cJSON *chk;
    cJSON_ArrayForEach(chk, cJSON_GetObjectItemCaseSensitive(c, "checks")) {
        checks_ok &= is_true(chk, "ok");
    }
    cJSON_AddBoolToObject(v, "checks_ok", checks_ok);
    cJSON_AddBoolToObject(v, "unordered", is_true(c, "unordered"));
    /* Where the dashboard links: the filed folder, its bundle and this case's receipt. */
    static const char *const links[] = {"evidence", "bundle_sha256", NULL};
    for (int i = 0; links[i]; i++)
        if (json_str(res, links[i])) cJSON_AddStringToObject(v, links[i], json_str(res, links[i]));
    if (json_str(c, "receipt")) cJSON_AddStringToObject(v, "receipt", json_str(c, "receipt"));
    return v;
}

static const cJSON *find_case(const cJSON *pred, const char *name) {
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(pred, "cases")) {
        const char *n = json_str(c, "case");
        if (n && !strcmp(n, name)) return c;
    }
    return NULL;
}

/* A judgement: one verdict with the promise it checked, and the worst error/bound. */
typedef struct {
    int verdict;
    const char *promise;
    char detail[200];
    double ratio; /* < 0: none measured */
} Judgement;

static void judge(Judgement *j, int verdict, const char *promise, const char *detail) {
    j->verdict = verdict;
    j->promise = promise;
    snprintf(j->detail, sizeof j->detail, "%s", detail ? detail : "");
}

/* Keeps the worse of two judgements in WORST (the larger ratio among equals). */
static void worse(Judgement *worst, const Judgement *j) {
    double ratio = worst->ratio > j->ratio ? worst->ratio : j->ratio;
    if (j->verdict > worst->verdict) *worst = *j;
    worst->ratio = ratio;
}

/* The observation's key within its case: its name, then "#2", "#3" for repeats. */
static void obs_key(const cJSON *observations, const cJSON *o, char *out, size_t cap) {
    int seen = 0;
    const cJSON *p;
    const char *name = json_str(o, "name") ? json_str(o, "name") : "";
    cJSON_ArrayForEach(p, observations) {
        if (p == o) break;
        seen += json_str(p, "name") && !strcmp(json_str(p, "name"), name);
    }
    if (seen) snprintf(out, cap, "%s#%d", name, seen + 1);
    else snprintf(out, cap, "%s", name);
}

static const cJSON *find_obs(const cJSON *c, const char *key) {
    const cJSON *obs = cJSON_GetObjectItemCaseSensitive(c, "observations"), *o;
    char k[300];
    cJSON_ArrayForEach(o, obs) {
        obs_key(obs, o, k, sizeof k);
        if (!strcmp(k, key)) return o;
    }
    return NULL;
}

/* The bound entries cells measured for observation NAME: a failed one is a violation;
 * returns how many cells measured it, with the promise they checked in *PROMISE. */
static int bound_entries(cJSON *const *cases, int n, const char *name, Judgement *j,
                         const char **promise) {
    int measured = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *b, *found = NULL;
        cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(cases[i], "bounds")) {
            const char *o = json_str(b, "observation");
            if (o && !strcmp(o, name)) found = b;
        }
        if (!found) continue;
        measured++;
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(found, "ratio");
        double ratio = cJSON_IsNumber(r) ? r->valuedouble : INFINITY;
        *promise = json_str(found, "promise") ? json_str(found, "promise") : "the contract's bound";
        if ((!is_true(found, "ok") || !(ratio <= 1.0)) && j->verdict < V_VIOLATES)
            judge(j, V_VIOLATES, *promise, json_str(found, "detail"));
        if (ratio > j->ratio) j->ratio = ratio;
    }
    return measured;
}

/* Whether some cell declares observation KEY's bits fixed although its receipt lists an
 * unordered operation (make gpu's checker does for every observation no contract names).
 * A declaration can only make the judgement stricter. */
static int declared_fixed(cJSON *const *cases, int n, const char *key) {
    for (int i = 0; i < n; i++) {
        const cJSON *f;
        cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(cases[i], "fixed")) {
            if (cJSON_IsString(f) && !strcmp(f->valuestring, key)) return 1;
        }
    }
    return 0;
}

/* One observation across the cells that ran the case. */
static cJSON *judge_obs(cJSON *const *cases, const char *const *cols, int n, const char *key,
                        int unordered, Judgement *j) {
    cJSON *row = cJSON_CreateObject(), *digests = cJSON_CreateObject();
    int present = 0, same = 1;
    unordered &= !declared_fixed(cases, n, key);
    const char *first = NULL;
    for (int i = 0; i < n; i++) {
        const cJSON *o = find_obs(cases[i], key);
        const char *sha = o ? json_str(o, "sha256") : NULL;
        cJSON_AddStringToObject(digests, cols[i], sha ? sha : "-");
        present += o != NULL;
        if (!first) first = sha ? sha : "";
        same &= sha && !strcmp(sha, first);
    }
    *j = (Judgement){V_IDENTICAL, unordered ? P_UNORDERED_SAME : P_FIXED, "", -1};
    const char *base = strchr(key, '#') ? NULL : key; /* bounds name unrepeated ones */
    const char *promise = NULL;
    int measured = base ? bound_entries(cases, n, base, j, &promise) : 0;
    if (present < n) judge(j, V_DIFFERS, P_SAME_LIST, "observed in some cells only");
    else if (!same && !unordered) judge(j, V_DIFFERS, P_FIXED, "the bits differ");
    else if (!same && j->verdict < V_VIOLATES)
        judge(j, measured == n ? V_WITHIN : V_NO_EVIDENCE, measured == n ? promise : P_MEASURED,
              measured == n ? NULL : "the bits differ and are not measured in every cell");
    cJSON_AddStringToObject(row, "observation", key);
    cJSON_AddStringToObject(row, "verdict", VERDICTS[j->verdict]);
    cJSON_AddStringToObject(row, "promise", j->promise);
    if (j->detail[0]) cJSON_AddStringToObject(row, "detail", j->detail);
    if (j->ratio >= 0)
        cJSON_AddNumberToObject(row, "error_over_bound", isfinite(j->ratio) ? j->ratio : 1e308);
    cJSON_AddItemToObject(row, "digests", digests);
    return row;
}

/* The run itself: build, exit status and trap the same in every cell and clean; every
 * contract check (a check that is not one of the run's own) held. */
static void judge_run(cJSON *const *cases, int n, Judgement *j) {
    int clean = 1, same = 1;
    for (int i = 0; i < n; i++) {
        const cJSON *chk;
        cJSON_ArrayForEach(chk, cJSON_GetObjectItemCaseSensitive(cases[i], "checks")) {
            const char *name = json_str(chk, "name");
            if (is_true(chk, "ok")) continue;
            if (is_run_check(name)) clean = 0;
            else if (j->verdict < V_VIOLATES)
                judge(j, V_VIOLATES, "a contract check the program made", name);
        }
        clean &= json_num(cases[i], "build_status", 0) == 0;
        same &= json_num(cases[i], "build_status", 0) == json_num(cases[0], "build_status", 0) &&
                json_num(cases[i], "exit_status", 0) == json_num(cases[0], "exit_status", 0) &&
                !json_str(cases[i], "trap") == !json_str(cases[0], "trap");
    }
    if (!same) judge(j, V_DIFFERS, P_RUN, "builds, exit statuses or traps differ");
    else if (!clean && j->verdict < V_VIOLATES)
        judge(j, V_VIOLATES, P_CLEAN, "a run check failed in every cell alike");
}

/* The verdict of one case over the cells that ran it; fills ROW. */
static int judge_case(cJSON *row, cJSON *const *cases, const char *const *cols, int n) {
    Judgement worst = {V_IDENTICAL, P_FIXED, "", -1}, j = {V_IDENTICAL, P_FIXED, "", -1};
    cJSON *list = cJSON_AddArrayToObject(row, "observations");
    int unordered = 0, observed = 0;
    for (int i = 0; i < n; i++) {
        unordered |= is_true(cases[i], "unordered");
        const cJSON *obs = cJSON_GetObjectItemCaseSensitive(cases[i], "observations");
        observed |= cJSON_GetArraySize(obs) > 0;
    }
    if (n == 0) judge(&worst, V_NO_EVIDENCE, P_OBSERVES, "no cell filed this case");
    else if (!observed) judge(&worst, V_NO_EVIDENCE, P_OBSERVES, "the case observes nothing");
    judge_run(cases, n, &j);
    worse(&worst, &j);
    /* Every key any cell observed, each judged once. */
    cJSON *done = cJSON_CreateObject();
    for (int i = 0; i < n; i++) {
        const cJSON *obs = cJSON_GetObjectItemCaseSensitive(cases[i], "observations"), *o;
        cJSON_ArrayForEach(o, obs) {
            char key[300];
            obs_key(obs, o, key, sizeof key);
            if (cJSON_GetObjectItemCaseSensitive(done, key)) continue;
            cJSON_AddTrueToObject(done, key);
            cJSON_AddItemToArray(list, judge_obs(cases, cols, n, key, unordered, &j));
            worse(&worst, &j);
        }
    }
    cJSON_Delete(done);
    if (n == 1 && worst.verdict == V_IDENTICAL)
        judge(&worst, V_IDENTICAL, worst.promise, "one cell ran it: nothing to compare with");
    cJSON_AddStringToObject(row, "verdict", VERDICTS[worst.verdict]);
    cJSON_AddStringToObject(row, "promise", worst.promise);
    if (worst.detail[0]) cJSON_AddStringToObject(row, "detail", worst.detail);
    if (worst.ratio >= 0)
        cJSON_AddNumberToObject(row, "error_over_bound",
                                isfinite(worst.ratio) ? worst.ratio : 1e308);
    return worst.verdict;
}

cJSON *compare_results(const cJSON *results, const cJSON *cases) {
    cJSON *report = cJSON_CreateObject();
    cJSON *columns = cJSON_AddArrayToObject(report, "columns");
    const cJSON *res;
    int ncols = cJSON_GetArraySize(results);
    cJSON_ArrayForEach(res, results) {
        char col[400];
        snprintf(col, sizeof col, "%s/%s", json_str(res, "machine"), json_str(res, "cell_id"));
        cJSON_AddItemToArray(columns, cJSON_CreateString(col));
    }
    cJSON **found = calloc((size_t)ncols + 1, sizeof *found);
    const char **names = calloc((size_t)ncols + 1, sizeof *names);
    cJSON *rows = cJSON_AddArrayToObject(report, "cases");
    int counts[V_COUNT] = {0};
    const cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, "case", c->valuestring);
        cJSON *cells = cJSON_AddObjectToObject(row, "cells");
        const cJSON *col = columns->child;
        int n = 0;
        cJSON_ArrayForEach(res, results) {
            const cJSON *pc =
                find_case(cJSON_GetObjectItemCaseSensitive(res, "predicate"), c->valuestring);
            if (pc && !cJSON_GetObjectItemCaseSensitive(cells, col->valuestring)) {
                cJSON_AddItemToObject(cells, col->valuestring, cell_value(pc, res));
                found[n] = (cJSON *)pc;
                names[n++] = col->valuestring;
            }
            col = col->next;
        }
        counts[judge_case(row, found, names, n)]++;
        cJSON_AddItemToArray(rows, row);
    }
    free(found);
    free(names);
    cJSON *summary = cJSON_AddObjectToObject(report, "counts");
    for (int v = 0; v < V_COUNT; v++) cJSON_AddNumberToObject(summary, VERDICTS[v], counts[v]);
    cJSON_AddBoolToObject(report, "ok", counts[V_VIOLATES] + counts[V_DIFFERS] == 0);
    return report;
}

int compare_verdict_fails(const char *verdict) {
    return verdict &&
           (!strcmp(verdict, VERDICTS[V_VIOLATES]) || !strcmp(verdict, VERDICTS[V_DIFFERS]));
}

static void print_table(FILE *out, const cJSON *report) {
    const cJSON *columns = cJSON_GetObjectItemCaseSensitive(report, "columns"), *col, *row;
    int i = 1, width = 36; /* the case column fits the longest case path */
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(report, "cases")) {
        int n = (int)strlen(json_str(row, "case"));
        width = n + 1 > width ? (n + 1 < 120 ? n + 1 : 120) : width;
    }
    fprintf(out, "columns (machine/cell):\n");
    cJSON_ArrayForEach(col, columns) fprintf(out, "  [%d] %s\n", i++, col->valuestring);
    fprintf(out, "\n%-*s", width, "case");
    for (int k = 1; k < i; k++) {
        char head[16];
        snprintf(head, sizeof head, "[%d]", k);
        fprintf(out, " %-19s", head);
    }
    fprintf(out, " %-19s error/bound\n", "verdict");
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(report, "cases")) {
        fprintf(out, "%-*s", width, json_str(row, "case"));
        const cJSON *cells = cJSON_GetObjectItemCaseSensitive(row, "cells");
        cJSON_ArrayForEach(col, columns) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(cells, col->valuestring);
            fprintf(out, " %-19s", v ? json_str(v, "value") : "-");
        }
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(row, "error_over_bound");
        if (cJSON_IsNumber(r)) /* rounded away from 1, so the figure never flatters */
            fprintf(out, " %-19s %.4f\n", json_str(row, "verdict"),
                    r->valuedouble > 1 ? ceil(r->valuedouble * 1e4) / 1e4
                                       : floor(r->valuedouble * 1e4) / 1e4);
        else fprintf(out, " %-19s -\n", json_str(row, "verdict"));
    }
}

void compare_print(FILE *out, const cJSON *report) {
    print_table(out, report);
    const cJSON *row, *o;
    int header = 0;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(report, "cases")) {
        if (!strcmp(json_str(row, "verdict"), "identical")) continue;
        if (!header++) fprintf(out, "\nwhy (each verdict names the promise it checked):\n");
        fprintf(out, "  %s: %s: %s%s%s\n", json_str(row, "case"), json_str(row, "verdict"),
                json_str(row, "promise"), json_str(row, "detail") ? " -- " : "",
                json_str(row, "detail") ? json_str(row, "detail") : "");
        cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(row, "observations")) {
            if (strcmp(json_str(o, "verdict"), "identical") != 0)
                fprintf(out, "    observation %s: %s\n", json_str(o, "observation"),
                        json_str(o, "verdict"));
        }
    }
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(report, "counts");
    fprintf(out,
            "\n%.0f identical, %.0f within-bound, %.0f no-evidence, %.0f violates-contract, "
            "%.0f differs-where-fixed\n",
            json_num(counts, "identical", 0), json_num(counts, "within-bound", 0),
            json_num(counts, "no-evidence", 0), json_num(counts, "violates-contract", 0),
            json_num(counts, "differs-where-fixed", 0));
    fprintf(out, "%s\n",
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(report, "ok"))
                ? "compare: no case breaks a promise (no-evidence cases prove nothing)"
                : "compare: FAILED: a case breaks a promise (violates-contract or "
                  "differs-where-fixed)");
}

/* Every case any result names, in first-seen order (when a file gives no case list). */
static cJSON *cases_of(const cJSON *results) {
    cJSON *cases = cJSON_CreateArray();
    const cJSON *res, *c;
    cJSON_ArrayForEach(res, results) {
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(
                                  cJSON_GetObjectItemCaseSensitive(res, "predicate"), "cases")) {
            const char *name = json_str(c, "case");
            int seen = 0;
            const cJSON *s;
            cJSON_ArrayForEach(s, cases) { seen |= name && !strcmp(s->valuestring, name); }
            if (name && !seen) cJSON_AddItemToArray(cases, cJSON_CreateString(name));
        }
    }
    return cases;
}

int compare_file(const char *path, int as_json) {
    Err e = {{0}};
    cJSON *doc = json_parse_file(path, &e);
    if (!doc) {
        fprintf(stderr, "cairn-farm compare: %s\n", e.msg);
        return 2;
    }
    const cJSON *results =
        cJSON_IsArray(doc) ? doc : cJSON_GetObjectItemCaseSensitive(doc, "results");
    const cJSON *given = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    cJSON *cases = cJSON_IsArray(given) ? cJSON_Duplicate(given, 1) : cases_of(results);
    cJSON *report = compare_results(results, cases);
    if (as_json) {
        char *text = cJSON_Print(report);
        puts(text);
        free(text);
    } else {
        compare_print(stdout, report);
    }
    int ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(report, "ok"));
    cJSON_Delete(report);
    cJSON_Delete(cases);
    cJSON_Delete(doc);
    return ok ? 0 : 1;
}
