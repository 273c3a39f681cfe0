/* core.h: what the farm knows, below its store and its server: test matrices and the
 * jobs they expand to (matrix.h), the bounds on what agents report (fields.h), checking
 * an uploaded evidence bundle (bundle.h), a run's evidence as typed structs and the
 * verdicts (results.h), and comparing digests across cells and machines (compare.h). The store (db/), the server (serve/) and the client verbs
 * include this header; core/ includes only proto/ and lib/. */
#ifndef CAIRN_FARM_CORE_H
#define CAIRN_FARM_CORE_H

#include "core/bundle.h"
#include "core/compare.h"
#include "core/fields.h"
#include "core/matrix.h"
#include "core/results.h"

#endif
