/* check.h: the checker, and the front end's entry points for every command that reads a
 * program (parse, then check; derive grad runs inside the check).
 *
 *   Diags d; diags_init(&d, NULL);
 *   LoadStatus status;
 *   Program *p = cairn_load(path, &d, &status, 0);  // read + parse + check
 *   if (!p) { diags_print(&d, stderr); ... exit 1 (2 when status == LOAD_IO_ERROR) }
 *   ... walk p (ast.h), then ast_program_free(p); diags_free(&d);
 */
#ifndef CAIRN_CHECK_H
#define CAIRN_CHECK_H

#include "syntax/syntax.h"

typedef enum LoadStatus { LOAD_OK, LOAD_REFUSED, LOAD_IO_ERROR, LOAD_PENDING } LoadStatus;

/* cairn_load's flags. LOAD_PENDING_OK: a program refused only with E-UNSUPPORTED (checked,
 * waiting only for a later stage of the back end: diag.h's deferred diagnostics) is
 * returned too, with status LOAD_PENDING and the reasons left in d; a model (verify,
 * predict) does not need the back end. */
enum { LOAD_PENDING_OK = 1u };

/* Reads, parses and checks path. Returns the checked program, or NULL with the reasons
 * in d (and *status, when given, saying whether the file could not be read). d->src is
 * pointed at the program's source so diags_print can show lines; keep the returned
 * program (or call diags_print) before program_free. On refusal the source stays alive
 * inside d until diags_free. */
Program *cairn_load(const char *path, Diags *d, LoadStatus *status, unsigned flags);
/* The same from text in memory (path only names it in messages). */
Program *cairn_load_text(const char *path, const char *text, size_t len, Diags *d);

/* The stages, for tools that need only some (cairn_parse: syntax/syntax.h). */
bool cairn_check(Program *p, Diags *d);

/* ---- what each checked function does, recorded once (check_facts.c) ----
 * The checker records on every function item of an accepted program (Item.u.fn.facts)
 * its roundings and its guards as typed entries, from ops.def's columns, in the order of
 * the function's text (children before the operation). Passes after the checker read
 * them instead of deciding again: E-IMPL-NUMERICS compares roundings through calls.
 * Walk a function's callees for what it does through them. */

typedef enum CheckRoundKind {
    ROUND_LITERAL, /* a literal its compute-float type does not hold exactly: type */
    ROUND_ARITH,   /* + - * / on a compute float, or its compound assignment: type */
    ROUND_CONVERT, /* T(x) with a float on either side, from != to: from, type */
    ROUND_BUILTIN, /* a builtin whose rounding column rounds (builtin): type, as signed */
    ROUND_REDUCE   /* reduce/scan + or * over a compute float: op, mode, on_device, type */
} CheckRoundKind;

typedef struct CheckRounding {
    CheckRoundKind kind;
    const Type *from; /* ROUND_CONVERT */
    const Type *type; /* the result's type (ROUND_BUILTIN: the one the signature names) */
    Builtin builtin;  /* ROUND_BUILTIN */
    ReduceOp op;      /* ROUND_REDUCE */
    ReduceMode mode;
    bool on_device, scan;
    bool in_device;   /* in a device lane or a cooperative region */
    bool shared;      /* an atomic on a block's shared array */
    bool mma_sync;    /* a fragment multiply of Mma fragments (not Wmma) */
    bool prologue;    /* from a parameter's extent or the requires clause */
    const Expr *node; /* the operation (a compound assignment: its target) */
    Span span;
} CheckRounding;

/* One guard site: where the generated code checks and traps (ops.def's guards columns). */
typedef struct CheckGuard {
    GuardKind kind;
    Span span;               /* line:col of the operation */
    const Item *fn;          /* the function holding it */
    const void *node;        /* the Expr (or, for ALLOC, the Stmt) it guards */
    const Expr *operands[2]; /* binary: lhs, rhs; index: base, index; convert: arg; call:
                              * its first two arguments (NULL when absent) */
    const Item *callee;      /* EXTENT and REQUIRES of a user call: the function called */
} CheckGuard;

typedef struct CheckFacts {
    CheckRounding *roundings;
    int nroundings;
    CheckGuard *guards;
    int nguards;
    const Item **callees; /* the user functions it calls, each once, in first-call order */
    int ncallees;
} CheckFacts;

/* The facts of a function or const item of a checked program (never NULL for one). The
 * roundings are in the order the generated code performs them (a parameter's extents,
 * the requires clause, then the body; operands before their operation), which the
 * receipt's `numerics` keeps (lower/numerics.c). */
const CheckFacts *check_facts(const Item *fn);

#endif
