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
#include "core/results.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/util.h"

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

/* One cell's value for a case: a digest over every observation plus the exit status. */
static cJSON *cell_value(const CaseResult *c, const Evidence *cell) {
    cJSON *v = cJSON_CreateObject();
    char *text = NULL;
    size_t len = 0;
    FILE *lines = open_memstream(&text, &len); /* grows with every field, however long */
    for (size_t i = 0; i < c->n_obs; i++) {
        const Observation *o = &c->obs[i];
        fprintf(lines, "%s %s %.0f %s\n", o->name, o->type, o->count, o->sha256 ? o->sha256 : "");
    }
    fclose(lines);
    char digest[SHA256_HEX_LEN], shown[64];
    sha256_hex(text, len, digest);
    free(text);
    int build = c->build_status, status = c->exit_status;
    if (build == -2) /* the agent's mark for a build it stopped at the job's timeout */
        snprintf(shown, sizeof shown, "build-timeout");
    else if (build != 0) snprintf(shown, sizeof shown, "build-failed(%d)", build);
    else snprintf(shown, sizeof shown, "%.12s", c->n_obs ? digest : "no-obs");
    if (build == 0 && status != 0) {
        size_t n = strlen(shown);
        snprintf(shown + n, sizeof shown - n, " exit=%d", status);
    }
    cJSON_AddStringToObject(v, "value", shown);
    cJSON_AddNumberToObject(v, "observations", (double)c->n_obs);
    int checks_ok = build == 0;
    for (size_t i = 0; i < c->n_checks; i++) checks_ok &= c->checks[i].ok;
    cJSON_AddBoolToObject(v, "checks_ok", checks_ok);
    cJSON_AddBoolToObject(v, "unordered", c->unordered);
    /* Where the dashboard links: the filed folder, its bundle and this case's receipt. */
    if (cell->evidence) cJSON_AddStringToObject(v, "evidence", cell->evidence);
    if (cell->bundle_sha256) cJSON_AddStringToObject(v, "bundle_sha256", cell->bundle_sha256);
    if (c->receipt) cJSON_AddStringToObject(v, "receipt", c->receipt);
    return v;
}

/* A judgement: one verdict with the promise it checked, and the worst error/bound. */
typedef struct {
    Verdict verdict;
    const char *promise;
    char detail[200];
    double ratio; /* < 0: none measured */
} Judgement;

static void judge(Judgement *j, Verdict verdict, const char *promise, const char *detail) {
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

/* The cells that ran one case, side by side: each one's result and column name. */
typedef struct {
    const CaseResult **cases;
    const char **cols;
    int n;
} Row;

/* The bound entries cells measured for observation NAME: a failed one is a violation;
 * returns how many cells measured it, with the promise they checked in *PROMISE. */
static int bound_entries(const Row *row, const char *name, Judgement *j, const char **promise) {
    int measured = 0;
    for (int i = 0; i < row->n; i++) {
        size_t at;
        if (!util_nameset_get(&row->cases[i]->bound_of, name, &at)) continue;
        const Bound *b = &row->cases[i]->bounds[at];
        measured++;
        *promise = b->promise ? b->promise : "the contract's bound";
        if ((!b->ok || !(b->ratio <= 1.0)) && j->verdict < VERDICT_VIOLATES_CONTRACT)
            judge(j, VERDICT_VIOLATES_CONTRACT, *promise, b->detail);
        if (b->ratio > j->ratio) j->ratio = b->ratio;
    }
    return measured;
}

/* Whether some cell declares observation KEY's bits fixed although its receipt lists an
 * unordered operation (make gpu's checker does for every observation no contract names).
 * A declaration can only make the judgement stricter. */
static int declared_fixed(const Row *row, const char *key) {
    for (int i = 0; i < row->n; i++)
        if (util_nameset_get(&row->cases[i]->fixed, key, NULL)) return 1;
    return 0;
}

/* J as a report row's fields: verdict, promise, detail, worst error/bound. */
static void add_judgement(cJSON *row, const Judgement *j) {
    cJSON_AddStringToObject(row, "verdict", results_verdict_name(j->verdict));
    cJSON_AddStringToObject(row, "promise", j->promise);
    if (j->detail[0]) cJSON_AddStringToObject(row, "detail", j->detail);
    if (j->ratio >= 0)
        cJSON_AddNumberToObject(row, "error_over_bound", isfinite(j->ratio) ? j->ratio : 1e308);
}

/* One observation across the cells that ran the case. */
static cJSON *judge_obs(const Row *cells, const char *key, int unordered, Judgement *j) {
    cJSON *row = cJSON_CreateObject(), *digests = cJSON_CreateObject();
    int present = 0, same = 1, n = cells->n;
    unordered &= !declared_fixed(cells, key);
    const char *first = NULL;
    for (int i = 0; i < n; i++) {
        const Observation *o = results_observation(cells->cases[i], key);
        const char *sha = o ? o->sha256 : NULL;
        cJSON_AddStringToObject(digests, cells->cols[i], sha ? sha : "-");
        present += o != NULL;
        if (!first) first = sha ? sha : "";
        same &= sha && !strcmp(sha, first);
    }
    *j = (Judgement){VERDICT_IDENTICAL, unordered ? P_UNORDERED_SAME : P_FIXED, "", -1};
    const char *base = strchr(key, '#') ? NULL : key; /* bounds name unrepeated ones */
    const char *promise = NULL;
    int measured = base ? bound_entries(cells, base, j, &promise) : 0;
    if (present < n)
        judge(j, VERDICT_DIFFERS_WHERE_FIXED, P_SAME_LIST, "observed in some cells only");
    else if (!same && !unordered) judge(j, VERDICT_DIFFERS_WHERE_FIXED, P_FIXED, "the bits differ");
    else if (!same && j->verdict < VERDICT_VIOLATES_CONTRACT)
        judge(j, measured == n ? VERDICT_WITHIN_BOUND : VERDICT_NO_EVIDENCE,
              measured == n ? promise : P_MEASURED,
              measured == n ? NULL : "the bits differ and are not measured in every cell");
    cJSON_AddStringToObject(row, "observation", key);
    add_judgement(row, j);
    cJSON_AddItemToObject(row, "digests", digests);
    return row;
}

/* The run itself: build, exit status and trap the same in every cell and clean; every
 * contract check (a check that is not one of the run's own) held. */
static void judge_run(const Row *row, Judgement *j) {
    int clean = 1, same = 1;
    const CaseResult *first = row->n ? row->cases[0] : NULL;
    for (int i = 0; i < row->n; i++) {
        const CaseResult *c = row->cases[i];
        for (size_t k = 0; k < c->n_checks; k++) {
            if (c->checks[k].ok) continue;
            if (is_run_check(c->checks[k].name)) clean = 0;
            else if (j->verdict < VERDICT_VIOLATES_CONTRACT)
                judge(j, VERDICT_VIOLATES_CONTRACT, "a contract check the program made",
                      c->checks[k].name);
        }
        clean &= c->build_status == 0;
        same &= c->build_status == first->build_status && c->exit_status == first->exit_status &&
                !c->trap == !first->trap;
    }
    if (!same)
        judge(j, VERDICT_DIFFERS_WHERE_FIXED, P_RUN, "builds, exit statuses or traps differ");
    else if (!clean && j->verdict < VERDICT_VIOLATES_CONTRACT)
        judge(j, VERDICT_VIOLATES_CONTRACT, P_CLEAN, "a run check failed in every cell alike");
}

/* The verdict of one case over the cells that ran it; fills ROW. */
static Verdict judge_case(cJSON *row, const Row *cells) {
    Judgement worst = {VERDICT_IDENTICAL, P_FIXED, "", -1}, j = worst;
    cJSON *list = cJSON_AddArrayToObject(row, "observations");
    int unordered = 0, observed = 0, n = cells->n;
    for (int i = 0; i < n; i++) {
        unordered |= cells->cases[i]->unordered;
        observed |= cells->cases[i]->n_obs > 0;
    }
    if (n == 0) judge(&worst, VERDICT_NO_EVIDENCE, P_OBSERVES, "no cell filed this case");
    else if (!observed) judge(&worst, VERDICT_NO_EVIDENCE, P_OBSERVES, "the case observes nothing");
    judge_run(cells, &j);
    worse(&worst, &j);
    /* Every key any cell observed, each judged once, in the order first observed. */
    NameSet done = {0};
    for (int i = 0; i < n; i++) {
        for (size_t k = 0; k < cells->cases[i]->n_obs; k++) {
            const char *key = cells->cases[i]->obs[k].key;
            if (util_nameset_add(&done, key, 0)) continue;
            cJSON_AddItemToArray(list, judge_obs(cells, key, unordered, &j));
            worse(&worst, &j);
        }
    }
    util_nameset_free(&done);
    if (n == 1 && worst.verdict == VERDICT_IDENTICAL)
        judge(&worst, VERDICT_IDENTICAL, worst.promise, "one cell ran it: nothing to compare with");
    add_judgement(row, &worst);
    return worst.verdict;
}

/* The observations and bound entries R holds, over all its cases: what a comparison
 * reads (it is linear in them). */
static double compare_work(const Results *r) {
    double work = 0;
    for (size_t i = 0; i < r->n; i++)
        for (size_t k = 0; k < r->cells[i].n_cases; k++)
            work += 1 + (double)r->cells[i].cases[k].n_obs + (double)r->cells[i].cases[k].n_bounds;
    return work;
}

/* Row ROW of case NAME: a cell per result that ran it (the first result of a column). */
static Verdict compare_case(cJSON *row, const char *name, const Results *r, Row *cells) {
    cJSON *values = cJSON_AddObjectToObject(row, "cells");
    NameSet filled = {0};
    cells->n = 0;
    for (size_t i = 0; i < r->n; i++) {
        const Evidence *cell = &r->cells[i];
        const CaseResult *c = results_case(cell, name);
        if (!c || util_nameset_add(&filled, cell->column, 0)) continue;
        cJSON_AddItemToObject(values, cell->column, cell_value(c, cell));
        cells->cases[cells->n] = c;
        cells->cols[cells->n++] = cell->column;
    }
    util_nameset_free(&filled);
    return judge_case(row, cells);
}

static void add_refusal(cJSON *report, double work, double max_work) {
    char why[200];
    snprintf(why, sizeof why,
             "not compared: its results hold %.0f observations and measurements, over "
             "max_compare_observations (%.0f)",
             work, max_work);
    cJSON_AddStringToObject(report, "refused", why);
}

cJSON *compare_results(const cJSON *results, const cJSON *cases, double max_work) {
    Results r;
    results_parse(results, &r);
    if (r.incomplete) { /* out of memory: no comparison, rather than a wrong one */
        results_free(&r);
        return NULL;
    }
    cJSON *report = cJSON_CreateObject();
    cJSON *columns = cJSON_AddArrayToObject(report, "columns");
    for (size_t i = 0; i < r.n; i++)
        cJSON_AddItemToArray(columns, cJSON_CreateString(r.cells[i].column));
    cJSON *rows = cJSON_AddArrayToObject(report, "cases");
    int counts[VERDICT_COUNT] = {0};
    double work = compare_work(&r);
    if (work > max_work) {
        add_refusal(report, work, max_work);
    } else {
        Row cells = {calloc(r.n + 1, sizeof *cells.cases), calloc(r.n + 1, sizeof *cells.cols), 0};
        const cJSON *c;
        cJSON_ArrayForEach(c, (cells.cases && cells.cols ? cases : NULL)) {
            if (!cJSON_IsString(c)) continue;
            cJSON *row = cJSON_CreateObject();
            cJSON_AddStringToObject(row, "case", c->valuestring);
            counts[compare_case(row, c->valuestring, &r, &cells)]++;
            cJSON_AddItemToArray(rows, row);
        }
        free(cells.cases);
        free(cells.cols);
    }
    results_free(&r);
    cJSON *summary = cJSON_AddObjectToObject(report, "counts");
    for (int v = 0; v < VERDICT_COUNT; v++)
        cJSON_AddNumberToObject(summary, results_verdict_name((Verdict)v), counts[v]);
    cJSON_AddBoolToObject(report, "ok",
                          work <= max_work && counts[VERDICT_VIOLATES_CONTRACT] +
                                                      counts[VERDICT_DIFFERS_WHERE_FIXED] ==
                                                  0);
    return report;
}

int compare_verdict_fails(const char *verdict) {
    Verdict v;
    return results_verdict_parse(verdict, &v) == 0 && results_verdict_fails(v);
}

void compare_print_counts(FILE *out, const cJSON *counts, const char *no_evidence_note) {
    for (int v = 0; v < VERDICT_COUNT; v++) {
        const char *name = results_verdict_name((Verdict)v);
        fprintf(out, "%s%.0f %s%s", v ? ", " : "", json_num(counts, name, 0), name,
                v == VERDICT_NO_EVIDENCE ? no_evidence_note : "");
    }
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
        if (!strcmp(json_str(row, "verdict"), results_verdict_name(VERDICT_IDENTICAL))) continue;
        if (!header++) fprintf(out, "\nwhy (each verdict names the promise it checked):\n");
        fprintf(out, "  %s: %s: %s%s%s\n", json_str(row, "case"), json_str(row, "verdict"),
                json_str(row, "promise"), json_str(row, "detail") ? " -- " : "",
                json_str(row, "detail") ? json_str(row, "detail") : "");
        cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(row, "observations")) {
            if (strcmp(json_str(o, "verdict"), results_verdict_name(VERDICT_IDENTICAL)) != 0)
                fprintf(out, "    observation %s: %s\n", json_str(o, "observation"),
                        json_str(o, "verdict"));
        }
    }
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(report, "counts");
    fputc('\n', out);
    compare_print_counts(out, counts, "");
    fputc('\n', out);
    fprintf(out, "%s\n",
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(report, "ok"))
                ? "compare: no case breaks a promise (no-evidence cases prove nothing)"
                : "compare: FAILED: a case breaks a promise (violates-contract or "
                  "differs-where-fixed)");
}

int compare_emit(const cJSON *report, int as_json) {
    if (!report) {
        fprintf(stderr, "cairn-farm compare: out of memory\n");
        return 2;
    }
    const char *refused = json_str(report, "refused");
    if (refused) {
        fprintf(stderr, "cairn-farm compare: %s\n", refused);
        return 2;
    }
    if (as_json) {
        char *text = cJSON_Print(report);
        puts(text);
        free(text);
    } else {
        compare_print(stdout, report);
    }
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(report, "ok")) ? 0 : 1;
}

/* Every case any result names, in first-seen order (when a file gives no case list). */
static cJSON *cases_of(const cJSON *results) {
    cJSON *cases = cJSON_CreateArray();
    NameSet seen = {0};
    Results r;
    results_parse(results, &r);
    for (size_t i = 0; i < r.n; i++)
        for (size_t k = 0; k < r.cells[i].n_cases; k++) {
            const char *name = r.cells[i].cases[k].path;
            if (name && !util_nameset_add(&seen, name, 0))
                cJSON_AddItemToArray(cases, cJSON_CreateString(name));
        }
    util_nameset_free(&seen);
    results_free(&r);
    return cases;
}

cJSON *compare_load_file(const char *path, cJSON **doc, const cJSON **results, Err *e) {
    if (!(*doc = json_parse_file(path, e))) return NULL;
    *results = cJSON_IsArray(*doc) ? *doc : cJSON_GetObjectItemCaseSensitive(*doc, "results");
    const cJSON *given = cJSON_GetObjectItemCaseSensitive(*doc, "cases");
    cJSON *cases = cJSON_IsArray(given) ? cJSON_Duplicate(given, 1) : cases_of(*results);
    cJSON *report = compare_results(*results, cases, COMPARE_MAX_WORK);
    cJSON_Delete(cases);
    return report;
}

int compare_file(const char *path, int as_json) {
    Err e = {{0}};
    cJSON *doc = NULL;
    const cJSON *results = NULL;
    cJSON *report = compare_load_file(path, &doc, &results, &e);
    if (!report) {
        fprintf(stderr, "cairn-farm compare: %s\n", e.msg);
        return 2;
    }
    int status = compare_emit(report, as_json);
    cJSON_Delete(report);
    cJSON_Delete(doc);
    return status;
}
