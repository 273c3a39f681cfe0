/* ci.h: a run's verdicts as a CI pipeline reads them (docs/farm.md, "CI and
 * monitoring"): `cairn-farm compare RUN` and `submit --wait` print the comparison,
 * write the JUnit file when asked (junit.h) and exit with one of the statuses below. */
#ifndef CAIRN_FARM_CI_H
#define CAIRN_FARM_CI_H

#include <cjson/cJSON.h>

#include "proto/http.h"

/* `submit --wait`'s exit statuses (and `compare`'s 0 and 1). */
enum {
    CI_KEPT = 0,   /* every case kept its promise (no-evidence cases prove nothing) */
    CI_BROKEN = 1, /* a case violates its contract or differs where the bits are fixed */
    CI_USAGE = 2,  /* bad arguments, an unreadable matrix, source or results file */
    CI_INFRA = 3,  /* the coordinator unreachable or refusing, the run cancelled, the
                      wait over --timeout, a run too large to compare */
};

/* GET PATH as JSON; NULL (reported as cairn-farm VERB's error) unless a 2xx JSON. */
cJSON *ci_get_json(Http *h, const char *path, const char *verb);

/* Run RUN's view (GET /api/v1/runs/RUN), held to the API's shape; NULL (reported as
 * cairn-farm VERB's error) when the coordinator did not answer one. */
cJSON *ci_get_view(Http *h, long run, const char *verb);

/* Whether no job of the run view RUN is queued or running any more. */
int ci_run_finished(const cJSON *run);

typedef struct {
    const char *verb;  /* for messages: "compare", "submit" */
    const char *url;   /* the coordinator, for the JUnit file's links */
    const char *junit; /* the JUnit file to write, or NULL */
    int json;          /* print the report as JSON */
} CiJudge;

/* Run RUN's comparison (its view, results and the coordinator's report, which holds the
 * differing values) printed and, when asked, written as JUnit; the exit status: CI_KEPT,
 * CI_BROKEN, or CI_INFRA when something could not be read or written or the comparison
 * was refused. */
int ci_judge_run(Http *h, long run, const CiJudge *j);

#endif
