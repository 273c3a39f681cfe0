/* results.c: a run's results JSON parsed once into Evidence and CaseResult (results.h),
 * with each case's observations keyed by name and occurrence and its measurements by
 * observation, so that every later lookup is constant time. Tolerant: a results file
 * may hold anything, and a missing or mistyped field reads as its documented default. */
#include "core/results.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fields.h"

_Static_assert(RESULTS_STATUS_MALFORMED == FIELD_STATUS_MIN - 1, "one malformed status");

static const char *const VERDICT_NAMES[VERDICT_COUNT] = {
    "identical", "within-bound", "no-evidence", "violates-contract", "differs-where-fixed"};

const char *results_verdict_name(Verdict v) {
    assert(v >= 0 && v < VERDICT_COUNT);
    return VERDICT_NAMES[v];
}

int results_verdict_parse(const char *name, Verdict *v) {
    for (int i = 0; name && i < VERDICT_COUNT; i++)
        if (!strcmp(name, VERDICT_NAMES[i])) {
            *v = (Verdict)i;
            return 0;
        }
    return -1;
}

int results_verdict_fails(Verdict v) {
    return v == VERDICT_VIOLATES_CONTRACT || v == VERDICT_DIFFERS_WHERE_FIXED;
}

static int is_true(const cJSON *o, const char *key) {
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* An exit or build status as an int: out of range reads as malformed, never a cast. */
static int status_field(const cJSON *c, const char *key) {
    long v = 0;
    return json_int(c, key, FIELD_STATUS_MIN, FIELD_STATUS_MAX, &v) < 0 ? RESULTS_STATUS_MALFORMED
                                                                        : (int)v;
}

/* The elements under KEY of C (what cJSON_ArrayForEach walks), and how many. */
static const cJSON *items(const cJSON *c, const char *key, size_t *n) {
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(c, key);
    *n = (size_t)cJSON_GetArraySize(list);
    return list;
}

/* KEY of the K-th observation named NAME (K from 1): NAME, then NAME#K (malloc'd). */
static char *obs_key(const char *name, size_t k) {
    if (k == 1) return strdup(name);
    size_t cap = strlen(name) + 24;
    char *key = malloc(cap);
    snprintf(key, cap, "%s#%zu", name, k);
    return key;
}

static void parse_observations(const cJSON *c, CaseResult *out) {
    const cJSON *list = items(c, "observations", &out->n_obs), *o;
    out->obs = calloc(out->n_obs + 1, sizeof *out->obs);
    size_t *seen = calloc(out->n_obs + 1, sizeof *seen); /* occurrences, per distinct name */
    NameSet names = {0};                                 /* name -> its slot in seen */
    size_t i = 0, distinct = 0;
    cJSON_ArrayForEach(o, list) {
        Observation *x = &out->obs[i];
        x->name = json_str(o, "name") ? json_str(o, "name") : "";
        x->type = json_str(o, "type") ? json_str(o, "type") : "";
        x->sha256 = json_str(o, "sha256");
        x->count = json_num(o, "count", 0);
        size_t slot;
        if (!util_nameset_get(&names, x->name, &slot))
            util_nameset_add(&names, x->name, slot = distinct++);
        x->key = obs_key(x->name, ++seen[slot]);
        util_nameset_add(&out->by_key, x->key, i); /* the first of two equal keys stays */
        i++;
    }
    util_nameset_free(&names);
    free(seen);
}

static void parse_bounds(const cJSON *c, CaseResult *out) {
    const cJSON *list = items(c, "bounds", &out->n_bounds), *b;
    out->bounds = calloc(out->n_bounds + 1, sizeof *out->bounds);
    size_t i = 0;
    cJSON_ArrayForEach(b, list) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(b, "ratio");
        out->bounds[i++] =
            (Bound){json_str(b, "observation"), json_str(b, "promise"), json_str(b, "detail"),
                    cJSON_IsNumber(r) ? r->valuedouble : INFINITY, is_true(b, "ok")};
    }
    for (size_t k = out->n_bounds; k-- > 0;) /* from the last: a name's last entry is kept */
        if (out->bounds[k].observation)
            util_nameset_add(&out->bound_of, out->bounds[k].observation, k);
}

void results_case_parse(const cJSON *c, CaseResult *out) {
    *out = (CaseResult){.path = json_str(c, "case"),
                        .build_status = status_field(c, "build_status"),
                        .exit_status = status_field(c, "exit_status"),
                        .trap = json_str(c, "trap"),
                        .receipt = json_str(c, "receipt"),
                        .unordered = is_true(c, "unordered"),
                        .duration_ms = json_num(c, "duration_ms", -1)};
    parse_observations(c, out);
    parse_bounds(c, out);
    const cJSON *list = items(c, "checks", &out->n_checks), *x;
    out->checks = calloc(out->n_checks + 1, sizeof *out->checks);
    size_t i = 0;
    cJSON_ArrayForEach(x, list) out->checks[i++] = (Check){json_str(x, "name"), is_true(x, "ok")};
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(c, "fixed")) {
        if (cJSON_IsString(x)) util_nameset_add(&out->fixed, x->valuestring, 0);
    }
}

void results_case_free(CaseResult *c) {
    for (size_t i = 0; i < c->n_obs; i++) free(c->obs[i].key);
    free(c->obs);
    free(c->checks);
    free(c->bounds);
    util_nameset_free(&c->by_key);
    util_nameset_free(&c->bound_of);
    util_nameset_free(&c->fixed);
}

static void parse_evidence(const cJSON *res, Evidence *out) {
    *out = (Evidence){.machine = json_str(res, "machine"),
                      .cell_id = json_str(res, "cell_id"),
                      .evidence = json_str(res, "evidence"),
                      .bundle_sha256 = json_str(res, "bundle_sha256")};
    snprintf(out->column, sizeof out->column, "%s/%s", out->machine ? out->machine : "(null)",
             out->cell_id ? out->cell_id : "(null)");
    const cJSON *pred = cJSON_GetObjectItemCaseSensitive(res, "predicate"), *c;
    const cJSON *list = items(pred, "cases", &out->n_cases);
    out->cases = calloc(out->n_cases + 1, sizeof *out->cases);
    size_t i = 0;
    cJSON_ArrayForEach(c, list) {
        results_case_parse(c, &out->cases[i]);
        if (out->cases[i].path) util_nameset_add(&out->by_case, out->cases[i].path, i);
        i++;
    }
}

void results_parse(const cJSON *results, Results *out) {
    *out = (Results){0};
    if (!cJSON_IsArray(results)) return;
    out->n = (size_t)cJSON_GetArraySize(results);
    out->cells = calloc(out->n + 1, sizeof *out->cells);
    const cJSON *res;
    size_t i = 0;
    cJSON_ArrayForEach(res, results) parse_evidence(res, &out->cells[i++]);
}

void results_free(Results *r) {
    for (size_t i = 0; i < r->n; i++) {
        for (size_t k = 0; k < r->cells[i].n_cases; k++) results_case_free(&r->cells[i].cases[k]);
        free(r->cells[i].cases);
        util_nameset_free(&r->cells[i].by_case);
    }
    free(r->cells);
    *r = (Results){0};
}

const CaseResult *results_case(const Evidence *e, const char *path) {
    size_t i;
    return path && util_nameset_get(&e->by_case, path, &i) ? &e->cases[i] : NULL;
}

const Observation *results_observation(const CaseResult *c, const char *key) {
    size_t i;
    return util_nameset_get(&c->by_key, key, &i) ? &c->obs[i] : NULL;
}
