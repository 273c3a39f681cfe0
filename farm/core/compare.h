/* compare.h: verdicts per case across machines/cells behind `cairn-farm compare RUN`,
 * the run page and the dashboard (docs/farm.md, "Verdicts"). */
#ifndef CAIRN_FARM_COMPARE_H
#define CAIRN_FARM_COMPARE_H

#include <stdio.h>
#include <cjson/cJSON.h>

#include "proto/util.h"

/* The work a comparison may do when nobody says otherwise (the client verbs; the
 * coordinator's is max_compare_observations): observations and bound entries read. */
#define COMPARE_MAX_WORK 1e6

/* RESULTS is what GET /api/v1/runs/RUN/results answers: [{job, cell_id, machine,
 * evidence, bundle_sha256, predicate}]. Returns a report {columns, cases: [{case,
 * verdict, promise, detail, error_over_bound, cells, observations}], counts, ok}. Linear
 * in the observations and bound entries the results hold; over MAX_WORK of them it
 * compares nothing and says why in "refused" (cases empty, ok false). */
cJSON *compare_results(const cJSON *results, const cJSON *cases, double max_work);
/* True for the verdicts that fail a run: violates-contract, differs-where-fixed. */
int compare_verdict_fails(const char *verdict);
void compare_print(FILE *out, const cJSON *report);
/* A report's "counts" in words: "3 identical, 0 within-bound, 1 no-evidence" NOTE ", ...". */
void compare_print_counts(FILE *out, const cJSON *counts, const char *no_evidence_note);
/* Prints REPORT to stdout (JSON with AS_JSON), or why it was refused to stderr; returns
 * `cairn-farm compare`'s exit status: 0 ok, 1 a failing verdict, 2 refused. */
int compare_emit(const cJSON *report, int as_json);
/* `cairn-farm compare FILE`: the same report over a results file ([{machine, cell_id,
 * predicate}] or {"results": [...], "cases": [...]}), e.g. make gpu's; 0 ok, 1 a
 * failing verdict, 2 an unreadable file or one over COMPARE_MAX_WORK. */
int compare_file(const char *path, int as_json);
/* The report over the results file PATH (read into *DOC, owned by the caller, its
 * results array at *RESULTS), or NULL with E when it does not parse. */
cJSON *compare_load_file(const char *path, cJSON **doc, const cJSON **results, Err *e);

#endif
