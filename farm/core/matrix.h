/* matrix.h: a run's test matrix expanded into jobs, and which agents fit a job.
 * Matrix: {"compilers": [...], "sanitizers": [...], "modes": [...], "targets": [...],
 *          "machines": [[label, ...], ...], "repeat": N, "timeout_s": S, "cases": [...]}
 * One job per compiler x sanitizer x mode x target x machine label set (x repeat). A
 * target ("sm_90") goes to a device cell only on an agent with a GPU of that compute
 * capability, and makes an emulated cell build with --target sm_90 --emulate. */
#ifndef CAIRN_FARM_MATRIX_H
#define CAIRN_FARM_MATRIX_H

#include <cjson/cJSON.h>
#include "proto/util.h"

/* Returns [{"cell_id": ..., "cell": {compiler, sanitizer, mode, repeat, target, labels}}]. */
cJSON *matrix_expand(const cJSON *matrix, Err *e);
/* True when capabilities CAPS (as an agent reports them) satisfy CELL. */
int matrix_cell_fits(const cJSON *caps, const cJSON *cell);

#endif
