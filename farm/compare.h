/* compare.h: the digest comparison behind `cairn-farm compare RUN`. */
#ifndef CAIRN_FARM_COMPARE_H
#define CAIRN_FARM_COMPARE_H

#include <stdio.h>
#include <cjson/cJSON.h>

/* RESULTS is what GET /api/v1/runs/RUN/results answers: [{job, cell_id, machine,
 * predicate}]. Returns a report {columns, cases: [{case, verdict, cells}], ok}. */
cJSON *compare_results(const cJSON *results, const cJSON *cases);
void compare_print(FILE *out, const cJSON *report);

#endif
