/* export.h: `cairn-farm export RUN DIR` (export.c): a run's filed bundles written out in
 * the folder layout that the offline verifiers read. */
#ifndef CAIRN_FARM_EXPORT_H
#define CAIRN_FARM_EXPORT_H

#include "proto/http.h"
#include "proto/util.h"

/* Writes every bundle filed for run RUN (its id as text) under DIR/evidence/..., each
 * file checked against its digest and each bundle verified from what was written; the
 * bundles and files written into *BUNDLES and *FILES. A bundle that cannot be exported is
 * reported on stderr and the others are still written. 0, or -1 with E (also when any
 * bundle was not exported). */
int export_run(Http *h, const char *run, const char *dir, long *bundles, long *files, Err *e);

#endif
