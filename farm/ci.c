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

cJSON *ci_get_json(Http *h, const char *path, const char *verb) {
    cJSON *answer = NULL;
    ProtoError pe;
    Err e = {{0}};
    long status = proto_call(h, &(ProtoCall){"GET", path, NULL, 60}, &answer, &pe);
    if (status < 0 || status >= 300) proto_fail(&e, path, &pe);
    else if (!answer) err_set(&e, "%s: no JSON answer", path);
    if (!e.msg[0]) return answer;
    fprintf(stderr, "cairn-farm %s: %s\n", verb, e.msg);
    cJSON_Delete(answer);
    return NULL;
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

static int write_junit(Http *h, long run, const CiJudge *j, const cJSON *local,
                       const cJSON *results) {
    char path[96];
    snprintf(path, sizeof path, "/api/v1/runs/%ld/report", run);
    cJSON *report = ci_get_json(h, path, j->verb); /* NULL: the local one, without values */
    JunitInput in = {report ? report : local, results, j->url, run};
    Err e = {{0}};
    int rc = junit_write(j->junit, &in, &e);
    if (rc != 0) fprintf(stderr, "cairn-farm %s: --junit %s\n", j->verb, e.msg);
    cJSON_Delete(report);
    return rc;
}

int ci_judge_run(Http *h, long run, const CiJudge *j) {
    char path[96];
    snprintf(path, sizeof path, "/api/v1/runs/%ld", run);
    cJSON *view = ci_get_json(h, path, j->verb);
    snprintf(path, sizeof path, "/api/v1/runs/%ld/results", run);
    cJSON *results = view ? ci_get_json(h, path, j->verb) : NULL;
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
