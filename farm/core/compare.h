/* compare.h: verdicts per case across machines/cells behind `cairn-farm compare RUN`,
 * the run page and the dashboard (docs/farm.md, "Verdicts"). */
#ifndef CAIRN_FARM_COMPARE_H
#define CAIRN_FARM_COMPARE_H

#include <stdio.h>
#include <cjson/cJSON.h>

/* RESULTS is what GET /api/v1/runs/RUN/results answers: [{job, cell_id, machine,
 * evidence, bundle_sha256, predicate}]. Returns a report {columns, cases: [{case,
 * verdict, promise, detail, error_over_bound, cells, observations}], counts, ok}. */
cJSON *compare_results(const cJSON *results, const cJSON *cases);
/* True for the verdicts that fail a run: violates-contract, differs-where-fixed. */
int compare_verdict_fails(const char *verdict);
void compare_print(FILE *out, const cJSON *report);
/* `cairn-farm compare FILE`: the same report over a results file ([{machine, cell_id,
 * predicate}] or {"results": [...], "cases": [...]}), e.g. make gpu's; 0 ok, 1 a
 * failing verdict, 2 an unreadable file. */
int compare_file(const char *path, int as_json);

#endif
