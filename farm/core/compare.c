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

#include <assert.h>
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

/* One cell's result for a case, indexed once (a case may observe thousands of things,
 * and the comparison looks each one up in every cell): its observations by key (the name,
 * then "#2", "#3" for repeats; the first of two equal keys wins), the last bound entry
 * measured for each observation name, and the names it declares fixed. Building it is
 * linear in the case's size; every lookup after is constant time. */
typedef struct {
    const cJSON *c;
    const cJSON **objs; /* observations, in order */
    char **keys;        /* their keys (malloc'd) */
    size_t n;
    NameSet by_key; /* key -> index in objs */
    NameSet bounds; /* observation name -> the entry's index in bound_items */
    const cJSON **bound_items;
    NameSet fixed;
} CellIndex;

/* KEY of the K-th observation named NAME (K from 1): NAME, then NAME#K (malloc'd). */
static char *obs_key(const char *name, size_t k) {
    if (k == 1) return strdup(name);
    size_t cap = strlen(name) + 24;
    char *key = malloc(cap);
    snprintf(key, cap, "%s#%zu", name, k);
    return key;
}

static void index_observations(CellIndex *x) {
    const cJSON *obs = cJSON_GetObjectItemCaseSensitive(x->c, "observations"), *o;
    size_t n = (size_t)cJSON_GetArraySize(obs), distinct = 0;
    x->objs = calloc(n + 1, sizeof *x->objs);
    x->keys = calloc(n + 1, sizeof *x->keys);
    size_t *seen = calloc(n + 1, sizeof *seen); /* occurrences so far, per distinct name */
    NameSet names = {0};                        /* name -> its slot in seen */
    cJSON_ArrayForEach(o, obs) {
        const char *name = json_str(o, "name") ? json_str(o, "name") : "";
        size_t slot;
        if (!util_nameset_get(&names, name, &slot))
            util_nameset_add(&names, name, slot = distinct++);
        assert(slot < n && x->n < n);
        x->keys[x->n] = obs_key(name, ++seen[slot]);
        util_nameset_add(&x->by_key, x->keys[x->n], x->n);
        x->objs[x->n++] = o;
    }
    util_nameset_free(&names);
    free(seen);
}

static void index_cell(CellIndex *x, const cJSON *c) {
    *x = (CellIndex){.c = c};
    index_observations(x);
    const cJSON *bounds = cJSON_GetObjectItemCaseSensitive(c, "bounds"), *b, *f;
    int nb = cJSON_GetArraySize(bounds);
    x->bound_items = calloc((size_t)nb + 1, sizeof *x->bound_items);
    int i = 0;
    cJSON_ArrayForEach(b, bounds) x->bound_items[i++] = b;
    for (i = nb - 1; i >= 0; i--) { /* from the last: a name's last entry is the one kept */
        const char *o = json_str(x->bound_items[i], "observation");
        if (o) util_nameset_add(&x->bounds, o, (size_t)i);
    }
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(c, "fixed")) {
        if (cJSON_IsString(f)) util_nameset_add(&x->fixed, f->valuestring, 0);
    }
}

static void cell_index_free(CellIndex *x) {
    for (size_t i = 0; i < x->n; i++) free(x->keys[i]);
    free(x->keys);
    free(x->objs);
    free(x->bound_items);
    util_nameset_free(&x->by_key);
    util_nameset_free(&x->bounds);
    util_nameset_free(&x->fixed);
}

cJSON *compare_observation_keys(const cJSON *case_result) {
    CellIndex x = {.c = case_result};
    index_observations(&x);
    cJSON *out = cJSON_CreateObject();
    static const char *const fields[] = {"type", "count", "sha256", NULL};
    for (size_t i = 0; i < x.n; i++) {
        size_t first;
        if (util_nameset_get(&x.by_key, x.keys[i], &first) && first != i) continue; /* linear */
        cJSON *o = cJSON_AddObjectToObject(out, x.keys[i]);
        for (int k = 0; fields[k]; k++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(x.objs[i], fields[k]);
            if (v) cJSON_AddItemToObject(o, fields[k], cJSON_Duplicate(v, 1));
        }
    }
    cell_index_free(&x);
    return out;
}

static const cJSON *find_obs(const CellIndex *x, const char *key) {
    size_t i;
    return util_nameset_get(&x->by_key, key, &i) ? x->objs[i] : NULL;
}

/* The bound entries cells measured for observation NAME: a failed one is a violation;
 * returns how many cells measured it, with the promise they checked in *PROMISE. */
static int bound_entries(const CellIndex *cells, int n, const char *name, Judgement *j,
                         const char **promise) {
    int measured = 0;
    for (int i = 0; i < n; i++) {
        size_t at;
        if (!util_nameset_get(&cells[i].bounds, name, &at)) continue;
        const cJSON *found = cells[i].bound_items[at];
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
static int declared_fixed(const CellIndex *cells, int n, const char *key) {
    for (int i = 0; i < n; i++)
        if (util_nameset_get(&cells[i].fixed, key, NULL)) return 1;
    return 0;
}

/* One observation across the cells that ran the case. */
static cJSON *judge_obs(const CellIndex *cells, const char *const *cols, int n, const char *key,
                        int unordered, Judgement *j) {
    cJSON *row = cJSON_CreateObject(), *digests = cJSON_CreateObject();
    int present = 0, same = 1;
    unordered &= !declared_fixed(cells, n, key);
    const char *first = NULL;
    for (int i = 0; i < n; i++) {
        const cJSON *o = find_obs(&cells[i], key);
        const char *sha = o ? json_str(o, "sha256") : NULL;
        cJSON_AddStringToObject(digests, cols[i], sha ? sha : "-");
        present += o != NULL;
        if (!first) first = sha ? sha : "";
        same &= sha && !strcmp(sha, first);
    }
    *j = (Judgement){V_IDENTICAL, unordered ? P_UNORDERED_SAME : P_FIXED, "", -1};
    const char *base = strchr(key, '#') ? NULL : key; /* bounds name unrepeated ones */
    const char *promise = NULL;
    int measured = base ? bound_entries(cells, n, base, j, &promise) : 0;
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
    /* Every key any cell observed, each judged once, in the order first observed. */
    CellIndex *cells = calloc((size_t)n + 1, sizeof *cells);
    for (int i = 0; i < n; i++) index_cell(&cells[i], cases[i]);
    NameSet done = {0};
    for (int i = 0; i < n; i++) {
        for (size_t k = 0; k < cells[i].n; k++) {
            const char *key = cells[i].keys[k];
            if (util_nameset_add(&done, key, 0)) continue;
            cJSON_AddItemToArray(list, judge_obs(cells, cols, n, key, unordered, &j));
            worse(&worst, &j);
        }
    }
    util_nameset_free(&done);
    for (int i = 0; i < n; i++) cell_index_free(&cells[i]);
    free(cells);
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

/* The observations and bound entries RESULTS hold, over all their cases: what a
 * comparison reads (it is linear in them). */
static double compare_work(const cJSON *results) {
    double work = 0;
    const cJSON *res, *c;
    cJSON_ArrayForEach(res, results) {
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(
                                  cJSON_GetObjectItemCaseSensitive(res, "predicate"), "cases")) {
            work += 1 + cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(c, "observations")) +
                    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(c, "bounds"));
        }
    }
    return work;
}

/* Each result's cases by name (the first of two equal names wins). */
static NameSet *index_cases(const cJSON *results, int n) {
    NameSet *by_case = calloc((size_t)n + 1, sizeof *by_case);
    const cJSON *res, *c;
    int i = 0;
    cJSON_ArrayForEach(res, results) {
        size_t k = 0;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(
                                  cJSON_GetObjectItemCaseSensitive(res, "predicate"), "cases")) {
            if (json_str(c, "case")) util_nameset_add(&by_case[i], json_str(c, "case"), k);
            k++;
        }
        i++;
    }
    return by_case;
}

/* Row ROW of case NAME: a cell per result that ran it (the first result of a column). */
static int compare_case(cJSON *row, const char *name, const cJSON *results, const cJSON *columns,
                        const NameSet *by_case, cJSON **found, const char **names) {
    cJSON *cells = cJSON_AddObjectToObject(row, "cells");
    const cJSON *col = columns->child, *res;
    NameSet filled = {0};
    int n = 0, i = 0;
    cJSON_ArrayForEach(res, results) {
        size_t k;
        if (util_nameset_get(&by_case[i], name, &k) &&
            !util_nameset_add(&filled, col->valuestring, 0)) {
            const cJSON *pc =
                cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
                                       cJSON_GetObjectItemCaseSensitive(res, "predicate"), "cases"),
                                   (int)k);
            cJSON_AddItemToObject(cells, col->valuestring, cell_value(pc, res));
            found[n] = (cJSON *)pc;
            names[n++] = col->valuestring;
        }
        col = col->next;
        i++;
    }
    util_nameset_free(&filled);
    return judge_case(row, found, names, n);
}

cJSON *compare_results(const cJSON *results, const cJSON *cases, double max_work) {
    cJSON *report = cJSON_CreateObject();
    cJSON *columns = cJSON_AddArrayToObject(report, "columns");
    const cJSON *res;
    int ncols = cJSON_GetArraySize(results);
    cJSON_ArrayForEach(res, results) {
        char col[400];
        snprintf(col, sizeof col, "%s/%s", json_str(res, "machine"), json_str(res, "cell_id"));
        cJSON_AddItemToArray(columns, cJSON_CreateString(col));
    }
    cJSON *rows = cJSON_AddArrayToObject(report, "cases");
    int counts[V_COUNT] = {0};
    double work = compare_work(results);
    if (work > max_work) {
        char why[200];
        snprintf(why, sizeof why,
                 "not compared: its results hold %.0f observations and measurements, over "
                 "max_compare_observations (%.0f)",
                 work, max_work);
        cJSON_AddStringToObject(report, "refused", why);
    } else {
        NameSet *by_case = index_cases(results, ncols);
        cJSON **found = calloc((size_t)ncols + 1, sizeof *found);
        const char **names = calloc((size_t)ncols + 1, sizeof *names);
        const cJSON *c;
        cJSON_ArrayForEach(c, cases) {
            if (!cJSON_IsString(c)) continue;
            cJSON *row = cJSON_CreateObject();
            cJSON_AddStringToObject(row, "case", c->valuestring);
            counts[compare_case(row, c->valuestring, results, columns, by_case, found, names)]++;
            cJSON_AddItemToArray(rows, row);
        }
        for (int i = 0; i < ncols; i++) util_nameset_free(&by_case[i]);
        free(by_case);
        free(found);
        free(names);
    }
    cJSON *summary = cJSON_AddObjectToObject(report, "counts");
    for (int v = 0; v < V_COUNT; v++) cJSON_AddNumberToObject(summary, VERDICTS[v], counts[v]);
    cJSON_AddBoolToObject(report, "ok",
                          work <= max_work && counts[V_VIOLATES] + counts[V_DIFFERS] == 0);
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

int compare_emit(const cJSON *report, int as_json) {
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
    const cJSON *res, *c;
    cJSON_ArrayForEach(res, results) {
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(
                                  cJSON_GetObjectItemCaseSensitive(res, "predicate"), "cases")) {
            const char *name = json_str(c, "case");
            if (name && !util_nameset_add(&seen, name, 0))
                cJSON_AddItemToArray(cases, cJSON_CreateString(name));
        }
    }
    util_nameset_free(&seen);
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
    cJSON *report = compare_results(results, cases, COMPARE_MAX_WORK);
    int status = compare_emit(report, as_json);
    cJSON_Delete(report);
    cJSON_Delete(cases);
    cJSON_Delete(doc);
    return status;
}
