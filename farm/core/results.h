/* results.h: a run's evidence as typed structs, read from its JSON once. What GET
 * /api/v1/runs/RUN/results answers ([{machine, cell_id, evidence, bundle_sha256,
 * predicate}], the predicates held to fields.h at upload) or a results file (make gpu's,
 * held to nothing) is parsed here, and the comparison (compare.c), the reports and the
 * pages read the fields below instead of spelling the statement's keys again. Strings
 * are borrowed from the JSON, which must outlive the parse. Also the verdicts, as one
 * enum with their names spelt once. */
#ifndef CAIRN_FARM_RESULTS_H
#define CAIRN_FARM_RESULTS_H

#include <stddef.h>
#include <cjson/cJSON.h>

#include "proto/util.h"

/* Verdicts from best to worst: a case takes the worst of its observations'. */
typedef enum {
    VERDICT_IDENTICAL,
    VERDICT_WITHIN_BOUND,
    VERDICT_NO_EVIDENCE,
    VERDICT_VIOLATES_CONTRACT,
    VERDICT_DIFFERS_WHERE_FIXED,
    VERDICT_COUNT
} Verdict;

/* "identical", "within-bound", ... (docs/farm.md, "Verdicts"). */
const char *results_verdict_name(Verdict v);
/* NAME's verdict into *V: 0, or -1 when NAME names none (or is NULL). */
int results_verdict_parse(const char *name, Verdict *v);
/* The verdicts that fail a run: violates-contract, differs-where-fixed. */
int results_verdict_fails(Verdict v);

/* A build or exit status that is no integer in fields.h's range (a results file's). */
#define RESULTS_STATUS_MALFORMED (-65537)

typedef struct {
    const char *name;   /* "" when missing */
    const char *type;   /* "" when missing */
    const char *sha256; /* NULL when missing */
    double count;
    char *key; /* the name, then "NAME#2", "NAME#3" for repeats (owned) */
} Observation;

typedef struct {
    const char *name; /* NULL when missing */
    int ok;
} Check;

/* A measurement: {"observation", "bound", "ratio", "ok", "promise", "detail"}. */
typedef struct {
    const char *observation, *promise, *detail; /* NULL when missing */
    double ratio;                               /* INFINITY when missing */
    int ok;
} Bound;

/* One case of one cell's predicate. */
typedef struct {
    const char *path;              /* "case"; NULL when missing */
    int build_status, exit_status; /* RESULTS_STATUS_MALFORMED when not integers in range */
    const char *trap, *receipt;    /* NULL when none */
    int unordered;
    double duration_ms; /* -1 when not given */
    Observation *obs;
    size_t n_obs;
    Check *checks;
    size_t n_checks;
    Bound *bounds;
    size_t n_bounds;
    NameSet by_key;   /* observation key -> index in obs (the first of two equal keys) */
    NameSet bound_of; /* observation name -> index in bounds of its last entry */
    NameSet fixed;    /* names whose bits must agree although unordered */
} CaseResult;

/* One cell's filed evidence: a column of the comparison. */
typedef struct {
    const char *machine, *cell_id;        /* NULL when missing */
    const char *evidence, *bundle_sha256; /* where it was filed; NULL when not said */
    char column[400];                     /* "machine/cell_id" */
    CaseResult *cases;
    size_t n_cases;
    NameSet by_case; /* case path -> index in cases (the first of two equal paths) */
} Evidence;

typedef struct {
    Evidence *cells;
    size_t n;
} Results;

/* RESULTS' cells (a JSON array; anything else reads as none) into OUT. */
void results_parse(const cJSON *results, Results *out);
void results_free(Results *r);
/* One case result C (an element of a predicate's "cases") into OUT; results_case_free. */
void results_case_parse(const cJSON *c, CaseResult *out);
void results_case_free(CaseResult *c);
/* E's result for case PATH, or NULL. */
const CaseResult *results_case(const Evidence *e, const char *path);
/* C's observation of KEY, or NULL. */
const Observation *results_observation(const CaseResult *c, const char *key);

#endif
