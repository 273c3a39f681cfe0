/* verify.h: `cairn verify`, the public interface: prove with Z3 that no input keeping a
 * function's `requires` makes a guard fail, and that an implementation gives its
 * reference's bits (docs/tools.md). The model itself: verify_internal.h. */
#ifndef CAIRN_VERIFY_H
#define CAIRN_VERIFY_H

#include <stdbool.h>
#include <stdio.h>

#include "syntax/syntax.h"

#define VERIFY_BUDGET 40000000u /* --budget's default: Z3 rlimit units */

/* A place the built program can trap at (the lowering's trap sites, cmd_verify.c), and
 * the function or constant holding it (NULL: an entry's checks of its command line). */
typedef struct VerifySite {
    Span span;
    const Item *item;
} VerifySite;

typedef struct VerifyOpts {
    unsigned unwind;  /* loop iterations modelled (default 8) */
    unsigned budget;  /* Z3 resource units per property: decides verdicts (default
                       * VERIFY_BUDGET), the same on every machine at any load */
    double timeout_s; /* wall clock per property, only a safety bound (default 600):
                       * its expiry makes the verdict unknown, saying so */
    bool json;
    const char *only;        /* --function NAME */
    const char *cex_dir;     /* where replay programs go */
    const VerifySite *sites; /* the built program's trap sites (NULL: unknown) */
    int nsites;
    bool coverage; /* --coverage: compare sites and properties, decide nothing */
    FILE *out;
} VerifyOpts;

/* Verifies every function (or opt->only) of a checked program; returns the exit status
 * (0 all verified, 10 a counterexample, 5 inconclusive). */
int verify_program(Program *p, const VerifyOpts *opt);

#endif
