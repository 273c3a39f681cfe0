/* evidence.h: what the agent and the coordinator agree on about a suite cell and its
 * evidence: cell names and the cairn flags they stand for, which receipts allow
 * differing digests, and the upload body that carries a bundle with its files. */
#ifndef CAIRN_FARM_EVIDENCE_H
#define CAIRN_FARM_EVIDENCE_H

#include <cjson/cJSON.h>
#include "proto/util.h"

/* Bounds the coordinator holds uploaded fields to (farm/core/fields.h has them all): the
 * agent keeps its observations within them rather than have its bundle refused. */
#define EVIDENCE_MAX_NAME   256    /* bytes of an observation's name or type */
#define EVIDENCE_MAX_ITEMS  4096   /* observations (or checks) of one case */
#define EVIDENCE_MAX_REPEAT 100000 /* copies of one cell in a run (a matrix's "repeat") */

/* A cell: compiler (gcc|clang), sanitizer (none|asan|tsan), mode (emulated|device).
 * Its id is "compiler-sanitizer-mode" (plus "-rN" for a repeat), safe as a folder name. */
typedef struct {
    char compiler[16];
    char sanitizer[16];
    char mode[16];
    int repeat; /* 0 for the first (or only) copy of a cell */
} Cell;

int evidence_cell_from_json(const cJSON *j, Cell *c, Err *e);
cJSON *evidence_cell_to_json(const Cell *c);
void evidence_cell_id(const Cell *c, char *out, size_t cap);
/* What `cairn build` takes for the sanitizer: "address,undefined", "thread" or NULL. */
const char *evidence_cell_sanitize_flag(const Cell *c);

/* The device target a GPU's compute capability ("9.0") builds for: "sm_90". The matrix
 * matches device cells to agents by it; the agent passes it to `cairn build --target`. */
void evidence_gpu_target(const char *compute_cap, char *out, size_t cap);

/* True when a build receipt lists an operation whose order the language leaves to the
 * hardware ("order": "unordered" in any numerics entry). */
int evidence_receipt_is_unordered(const cJSON *receipt);

/* Adds to the statement's predicate the fields of the in-toto test-result predicate
 * (https://in-toto.io/attestation/test-result/v0.1) with their meanings: result
 * PASSED/WARNED/FAILED, configuration (the receipts as resource descriptors) and
 * passedTests/warnedTests/failedTests (cases: a failed check / no observation / else).
 * The cairn predicate carries these and strictly more (docs/farm.md). */
void evidence_add_test_result(cJSON *statement);

/* A filed bundle's manifest ({"envelope": DSSE text, "files": {name: sha256}}) checked
 * against what was signed, for a store that may have been changed under us: the
 * statement of MANIFEST's envelope (owned), when the envelope's SHA-256 is BUNDLE_SHA
 * (not checked when NULL) and FILES names exactly the statement's subjects, each with
 * its signed digest, plus agent.pub.pem; NULL with E. */
cJSON *evidence_manifest_statement(const cJSON *manifest, const char *bundle_sha, Err *e);

/* The upload body: {"envelope": DSSE, "files": {name: base64}}. Every subject of the
 * statement names one of the files. */

#endif
