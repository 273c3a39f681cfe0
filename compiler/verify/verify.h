/* verify.h: `cairn verify`'s model of a checked program in Z3 (docs/tools.md).
 *
 * How a function is modelled. Each function is run symbolically once, straight through:
 * integers are bit-vectors of their width, bool is Bool, f32/f64 are Z3 floating-point
 * terms rounded to nearest-even, storage floats are bit-vectors of their width, and a
 * view is an array from 64-bit indices to elements with a length. Nothing branches: an
 * `if` runs both arms under its condition (the path condition `pc`), and every write is
 * `ite(active, new, old)` where active = pc && alive && !returned. `alive` turns false
 * where a guard fails (the program trapped there), `returned` where the current function
 * returned. Loops, regions and reductions unroll up to --unwind iterations; a run that
 * would go further is collected in `beyond`, excluded from every query, and makes a
 * verified property "verified for extents up to N" instead. Calls are inlined.
 *
 * Properties. Each guard the lowering emits (compiler/lower_c*.c, runtime/cairn_checked.h)
 * is a site; the property "this guard never fails" holds when no input reaches it with
 * its condition false. An `implements` declaration is the property "g returns the same
 * bits as its reference for every input": both run on the same inputs, and they differ
 * when one traps and the other does not, or the results or written views differ, where
 * the comparison is SMT equality (all NaNs one value, +0 and -0 two).
 *
 * What is not modelled: a value the model cannot give exactly (a storage float
 * conversion, quantize's exact quotient, mma_unordered, a float reduction, an atomic float
 * add, std.math, a construct not modelled yet) is a fresh unconstrained term carrying a
 * taint bit that names the reason; a property whose formula holds a tainted term answers
 * unknown with that reason. So the model never claims more than it proves. A std.cr
 * call is an uninterpreted function of its argument with facts that hold for every
 * input (verify_cr.c), tainted likewise.
 *
 * Files: verify_expr.c (expressions), verify_cr.c (std.cr), verify_stmt.c (statements, calls, loops),
 * verify_prop.c (properties, solving, verdicts), verify_cex.c (counterexamples and their
 * replay programs), cmd_verify.c (the command). */
#ifndef CAIRN_VERIFY_H
#define CAIRN_VERIFY_H

#include <stdbool.h>
#include <stdio.h>
#include <cjson/cJSON.h>
#include <z3.h>

#include "syntax/syntax.h"

#define VERIFY_MAX_REASONS 31 /* taint bits; bit 31 means "more reasons than bits" */

/* A scalar value: its term and the reasons (taint bits) it is not exact. */
typedef struct VVal {
    Z3_ast t;
    unsigned taint;
} VVal;

/* A variable, scalar reference or array: what a Symbol is bound to. Views passed to a
 * callee bind the callee's parameter to the caller's cell, so writes reach the caller. */
typedef struct VCell {
    const Type *elem; /* the scalar type held (element type for arrays) */
    bool array;
    Z3_ast val; /* the value, or the array term */
    Z3_ast len; /* arrays: the element count, 64 bits */
    unsigned taint;
} VCell;

typedef struct VBind {
    const Symbol *sym;
    VCell *cell;
} VBind;

/* The kinds of guard; VK_NAMES in verify_prop.c gives their wording. */
typedef enum VKind {
    VK_OVERFLOW,
    VK_DIVZERO,
    VK_SHIFT,
    VK_INDEX,
    VK_CONVERT,
    VK_FLOAT_CONVERT,
    VK_EXTENT,
    VK_QUANT_SCALE,
    VK_QUANT_NAN,
    VK_E4M3,
    VK_REQUIRES,
    VK_UNMODELLED,
    VK_IMPLEMENTS,
    VK_COUNT
} VKind;

/* One property: a guard site (all its unrolled and inlined copies together). */
typedef struct VProp {
    VKind kind;
    Span span;
    const char *detail; /* e.g. the callee of a requires, the unmodelled construct */
    Z3_ast violation;   /* some input reaches the site with its condition false */
    unsigned taint;
} VProp;

typedef struct VerifyOpts {
    unsigned unwind;  /* loop iterations modelled (default 8) */
    double timeout_s; /* per property (default 10) */
    bool json;
    const char *only;    /* --function NAME */
    const char *cex_dir; /* where replay programs go */
    FILE *out;
} VerifyOpts;

typedef struct Verifier {
    Z3_context z;
    Program *prog;
    const VerifyOpts *opt;
    const Item *top; /* the function under verification */
    /* the symbolic state */
    Z3_ast pc, alive, returned, ret;
    unsigned pc_taint, alive_taint, ret_taint;
    Z3_ast beyond; /* some run goes past --unwind */
    Z3_ast assume; /* the top function's requires */
    VBind *env;
    int nenv, capenv;
    int depth;             /* calls inlined now */
    const Item *stack[16]; /* and which (a recursive call is not modelled) */
    int in_parallel;       /* inside a region's lanes */
    int fresh;             /* names fresh constants */
    bool has_float;        /* the model holds floating-point terms */
    /* what was found */
    VProp *props;
    int nprops, capprops;
    bool collect; /* record guards as properties (off for implements runs) */
    const char *reasons[VERIFY_MAX_REASONS];
    int nreasons;
    /* the top function's inputs as they were on entry, one per parameter, for
     * counterexamples and for running an implementation on the same inputs */
    VCell *inputs;
    int ninputs;
} Verifier;

/* ---- verify_expr.c ---- */
Z3_sort verify_sort(Verifier *V, const Type *t);
VVal verify_expr(Verifier *V, Expr *e);
/* a && b, a || b */
Z3_ast verify_and(Verifier *V, Z3_ast a, Z3_ast b);
Z3_ast verify_or(Verifier *V, Z3_ast a, Z3_ast b);
/* The current activity: pc && alive && !returned. */
Z3_ast verify_active(Verifier *V);
/* Records a guard: where active, ok must hold; failing kills `alive`. */
void verify_guard(Verifier *V, VKind kind, Span span, const char *detail, Z3_ast ok,
                  unsigned taint);
/* A fresh unconstrained value of type t tainted with reason (formatted at span). */
VVal verify_havoc(Verifier *V, const Type *t, Span span, const char *reason);
unsigned verify_taint_bit(Verifier *V, Span span, const char *reason);
/* An unmodelled construct that may trap: a property answered unknown, and the state
 * after it tainted. */
void verify_unmodelled(Verifier *V, Span span, const char *what);
VCell *verify_lookup(Verifier *V, const Symbol *s);
void verify_bind(Verifier *V, const Symbol *s, VCell *c);
VCell *verify_new_cell(Verifier *V, const Type *elem, bool array, Z3_ast val, Z3_ast len,
                       unsigned taint);
Z3_ast verify_u64(Verifier *V, uint64_t v);
/* Integer value v of type t widened to 64 bits (sign- or zero-extended). */
Z3_ast verify_to_u64(Verifier *V, Z3_ast v, const Type *t);
/* lo + k for a loop counter of type t. */
Z3_ast verify_int_const(Verifier *V, const Type *t, uint64_t v);
/* v[i] as a place: the index guard, then the array's cell and the 64-bit index (NULL
 * when the base is not a view by name, reported unmodelled). */
VCell *verify_element(Verifier *V, Expr *e, Z3_ast *index, unsigned *taint);
/* a OP b for integers (checked) or floats, with guards at span. */
VVal verify_arith(Verifier *V, BinaryOp op, VVal a, VVal b, const Type *t, Span span);

/* ---- verify_cr.c ---- */
/* A std.cr call: an uninterpreted function of its argument with its range facts. */
VVal verify_cr(Verifier *V, Expr *e);

/* ---- verify_stmt.c ---- */
void verify_block(Verifier *V, Block *b);
/* reduce and scan (scan answers NULL). */
VVal verify_reduce(Verifier *V, Expr *e);
/* Inlines a call of fn with evaluated arguments (cells for views and references). */
VVal verify_call(Verifier *V, Expr *call);
/* Runs fn as the top function: on fresh inputs (recorded in V->inputs, with V->assume
 * set to its requires) when V->inputs is NULL, else on those. Returns its result (t NULL
 * for none); *finals gets the cells of its parameters after the run. */
VVal verify_run_top(Verifier *V, const Item *fn, VCell **finals);
/* Unrolls `var in lo..count`, calling body(V, i, ctx) per iteration. */
void verify_unroll(Verifier *V, const Binder *b, Span span,
                   void (*body)(Verifier *V, VVal i, void *ctx), void *ctx);

/* ---- verify_prop.c ---- */
/* Verifies every function (or opt->only) of a checked program; returns the exit status
 * (0 all verified, 10 a counterexample, 5 inconclusive). */
int verify_program(Program *p, const VerifyOpts *opt);

/* ---- cmd_verify.c ---- */
/* Parses and checks path for `cairn CMD`; a program refused only with E-UNSUPPORTED
 * (constructs the back end does not lower yet) is returned too, with a note, since a
 * model does not need the back end. NULL with *rc = 1 (refused, printed) or 2 (I/O). */
Program *cmd_verify_load(const char *cmd, const char *path, int *rc);

/* ---- verify_cex.c ---- */
/* Prints the inputs of a satisfying model to out (when not NULL) and writes a replay
 * program; returns its path (malloc'ed) or NULL. *inputs_json gets the inputs as the
 * text of a JSON object (malloc'ed). */
char *verify_write_cex(Verifier *V, Z3_model m, const VProp *p, FILE *out, char **inputs_json);

#endif
