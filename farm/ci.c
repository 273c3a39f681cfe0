/* ci.c: a run's verdicts for a pipeline (ci.h): the comparison printed as `compare` prints
 * it, the JUnit file from the coordinator's report (which holds the values that differ:
 * report_values.c) or, from a coordinator without one, from the comparison made here. */
#include "ci.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "junit.h"
#include "proto/api.h"

/* GET PATH as JSON into *OUT; the answer's HTTP status (-1: none), with E set unless a
 * 2xx JSON came back. */
static long get_json(Http *h, const char *path, cJSON **out, Err *e) {
    ProtoError pe;
    long status = proto_call(h, &(ProtoCall){"GET", path, NULL, 60}, out, &pe);
    if (status < 0 || status >= 300) proto_fail(e, path, &pe);
    else if (!*out) err_set(e, "%s: no JSON answer", path);
    if (e->msg[0]) {
        cJSON_Delete(*out);
        *out = NULL;
    }
    return status;
}

cJSON *ci_get_json(Http *h, const char *path, const char *verb) {
    cJSON *answer = NULL;
    Err e = {{0}};
    get_json(h, path, &answer, &e);
    if (e.msg[0]) fprintf(stderr, "cairn-farm %s: %s\n", verb, e.msg);
    return answer;
}

/* The answers below come from a coordinator, which may be broken or hostile: each is
 * held to the shape the API gives before anything is printed or written from it, so
 * that garbage ends as an error (CI_INFRA) and never as a verdict or a JUnit file. */

/* 0 when VIEW is run RUN's view with every job row well formed; else -1 with E. */
static int check_view(const cJSON *view, long run, Err *e) {
    ProtoRunView v;
    ProtoJobRow row;
    if (proto_run_view_parse(view, &v, e) != 0) return -1;
    if (v.id != run) return err_set(e, "it is the view of run %ld", v.id);
    const cJSON *j, *c;
    cJSON_ArrayForEach(j, v.jobs) {
        if (proto_job_row_parse(j, &row, e) != 0) return -1;
        if (!proto_job_state_known(row.state))
            return err_set(e, "job %ld: no state %.40s", row.job, row.state);
    }
    cJSON_ArrayForEach(c, v.cases) {
        if (!cJSON_IsString(c)) return err_set(e, "a case that is not a string");
    }
    return 0;
}

cJSON *ci_get_view(Http *h, long run, const char *verb) {
    char path[64];
    snprintf(path, sizeof path, "/api/v1/runs/%ld", run);
    cJSON *view = ci_get_json(h, path, verb);
    Err e = {{0}};
    if (view && check_view(view, run, &e) != 0) {
        fprintf(stderr, "cairn-farm %s: the coordinator's answer to GET %s is no run view: %s\n",
                verb, path, e.msg);
        cJSON_Delete(view);
        return NULL;
    }
    return view;
}

/* 0 when PRED has the shape compare reads: an object whose cases are a list of objects,
 * each one's observations (when present) a list of objects. Not fields.h's upload
 * bounds: a store may hold bundles filed before those bounds, and compare reads any
 * length (test_compare_survives_a_filed_huge_observation_type). */
static int check_predicate_shape(const cJSON *pred, const char *cell, Err *e) {
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(pred, "cases"), *c, *o;
    if (!cJSON_IsObject(pred) || !cJSON_IsArray(cases))
        return err_set(e, "%.64s: a predicate without its list of cases", cell);
    cJSON_ArrayForEach(c, cases) {
        const cJSON *obs = cJSON_GetObjectItemCaseSensitive(c, "observations");
        if (!cJSON_IsObject(c) || (obs && !cJSON_IsArray(obs)))
            return err_set(e, "%.64s: a case that is not an object with a list of observations",
                           cell);
        cJSON_ArrayForEach(o, obs) {
            if (!cJSON_IsObject(o))
                return err_set(e, "%.64s: an observation that is not an object", cell);
        }
    }
    return 0;
}

/* 0 when RESULTS is a list of filed cells, each predicate of the shape compare reads. */
static int check_results(const cJSON *results, Err *e) {
    if (!cJSON_IsArray(results)) return err_set(e, "not a list");
    const cJSON *r;
    cJSON_ArrayForEach(r, results) {
        if (!cJSON_IsObject(r) || !json_str(r, "machine") || !json_str(r, "cell_id"))
            return err_set(e, "a row without its machine and cell_id");
        const char *sha = json_str(r, "bundle_sha256");
        if (!sha || !sha256_is_hex(sha))
            return err_set(e, "%.64s/%.64s: no bundle_sha256", json_str(r, "machine"),
                           json_str(r, "cell_id"));
        if (check_predicate_shape(cJSON_GetObjectItemCaseSensitive(r, "predicate"),
                                  json_str(r, "cell_id"), e) != 0)
            return -1;
    }
    return 0;
}

/* 0 when REPORT has the comparison's shape: columns of strings, cases each with its
 * name, verdict, cells and observations as the JUnit writer reads them. */
static int check_report(const cJSON *report, Err *e) {
    const cJSON *cols = cJSON_GetObjectItemCaseSensitive(report, "columns");
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(report, "cases"), *x, *o;
    if (!cJSON_IsArray(cols) || !cJSON_IsArray(cases))
        return err_set(e, "no columns and cases lists");
    cJSON_ArrayForEach(x, cols) {
        if (!cJSON_IsString(x)) return err_set(e, "a column that is not a string");
    }
    cJSON_ArrayForEach(x, cases) {
        Verdict v;
        const char *name = json_str(x, "case");
        const cJSON *obs = cJSON_GetObjectItemCaseSensitive(x, "observations");
        if (!name || !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(x, "cells")))
            return err_set(e, "a case without its name and cells");
        if (results_verdict_parse(json_str(x, "verdict"), &v) != 0)
            return err_set(e, "%.200s: no verdict", name);
        if (obs && !cJSON_IsArray(obs)) return err_set(e, "%.200s: observations not a list", name);
        cJSON_ArrayForEach(o, obs) {
            if (!cJSON_IsObject(o)) return err_set(e, "%.200s: an observation not an object", name);
        }
    }
    return 0;
}

int ci_run_finished(const cJSON *run) {
    ProtoRunView v;
    ProtoJobRow row;
    Err e = {{0}};
    if (proto_run_view_parse(run, &v, &e) != 0) return 1;
    const cJSON *j;
    cJSON_ArrayForEach(j, v.jobs) {
        if (proto_job_row_parse(j, &row, &e) == 0 &&
            (!strcmp(row.state, "queued") || !strcmp(row.state, "running")))
            return 0;
    }
    return 1;
}

/* Run RUN's report from the coordinator into *OUT (NULL from one that has none: a 404);
 * -1 when it answered something else than a well-formed report. */
static int get_report(Http *h, long run, const char *verb, cJSON **out) {
    char path[96];
    snprintf(path, sizeof path, "/api/v1/runs/%ld/report", run);
    Err e = {{0}};
    long status = get_json(h, path, out, &e);
    if (!e.msg[0] && check_report(*out, &e) != 0) {
        cJSON_Delete(*out);
        *out = NULL;
        fprintf(stderr, "cairn-farm %s: the coordinator's answer to GET %s is no report: %s\n",
                verb, path, e.msg);
        return -1;
    }
    if (e.msg[0] && status != 404) fprintf(stderr, "cairn-farm %s: %s\n", verb, e.msg);
    return e.msg[0] && status != 404 ? -1 : 0;
}

static int write_junit(Http *h, long run, const CiJudge *j, const cJSON *local,
                       const cJSON *results) {
    cJSON *report = NULL; /* NULL: the local one, without values */
    if (get_report(h, run, j->verb, &report) != 0) return -1;
    JunitInput in = {report ? report : local, results, j->url, run};
    Err e = {{0}};
    int rc = junit_write(j->junit, &in, &e);
    if (rc != 0) fprintf(stderr, "cairn-farm %s: --junit %s\n", j->verb, e.msg);
    cJSON_Delete(report);
    return rc;
}

int ci_judge_run(Http *h, long run, const CiJudge *j) {
    char path[96];
    cJSON *view = ci_get_view(h, run, j->verb);
    snprintf(path, sizeof path, "/api/v1/runs/%ld/results", run);
    cJSON *results = view ? ci_get_json(h, path, j->verb) : NULL;
    Err bad = {{0}};
    if (results && check_results(results, &bad) != 0) {
        fprintf(stderr, "cairn-farm %s: the coordinator's answer to GET %s is no results: %s\n",
                j->verb, path, bad.msg);
        cJSON_Delete(results);
        results = NULL;
    }
    if (!results) {
        cJSON_Delete(view);
        return CI_INFRA;
    }
    ProtoRunView v;
    Err e = {{0}};
    cJSON *report = compare_results(
        results, proto_run_view_parse(view, &v, &e) == 0 ? v.cases : NULL, COMPARE_MAX_WORK);
    int busy = !ci_run_finished(view);
    if (busy) cJSON_AddStringToObject(report, "note", "the run is not finished yet");
    int status = compare_emit(report, j->json);
    if (status != 2 && !j->json && busy) printf("note: run %ld is not finished yet\n", run);
    if (status == 2) status = CI_INFRA; /* refused: too large to compare here */
    else if (j->junit && write_junit(h, run, j, report, results) != 0) status = CI_INFRA;
    cJSON_Delete(report);
    cJSON_Delete(results);
    cJSON_Delete(view);
    return status;
}
