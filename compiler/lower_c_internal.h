/* lower_c_internal.h: what the parts of the C lowering share (lower_c.c: program,
 * functions and statements; lower_c_expr.c: expressions and builtins;
 * lower_c_region.c: parallel regions and reductions; numerics.c: the receipt's entries).
 *
 * How expressions lower. Each expression becomes a C expression that is pure and cheap
 * (a temporary, an immutable name or a constant); whatever it needs first (guards,
 * calls, loops) is emitted as statements before it, in CAIRN's left-to-right order, so
 * the order of evaluation (which trap fires first, for one) never depends on the C
 * compiler. */
#ifndef CAIRN_LOWER_C_INTERNAL_H
#define CAIRN_LOWER_C_INTERNAL_H

#include <cjson/cJSON.h>

#include "ast.h"
#include "diag.h"
#include "driver_fs.h"

#define LOWER_MAX_LIVE 256

typedef struct Lower {
    Program *prog;
    Diags *diags;
    Arena *arena;
    strbuf *out;             /* where statements go now */
    strbuf protos, lanes, defs;
    cJSON *numerics;         /* {"function": [entry, ...]} */
    cJSON *entries;          /* the current function's array */
    const Item *fn;          /* the function being lowered */
    int tmp;                 /* numbers temporaries, lane functions and lane contexts */
    int indent;
    const Symbol *live[LOWER_MAX_LIVE]; /* buffers allocated so far, innermost last */
    int nlive;
    int live_base;           /* live[] below this belong to an enclosing C function */
} Lower;

/* ---- emitting ---- */
void emit(Lower *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *new_tmp(Lower *L);
const char *at(Lower *L, Span s);               /* CAIRN_AT(line, col) */
/* Reports something the checker accepts but the host lowering cannot do. */
void unsupported(Lower *L, Span s, const char *what);

/* ---- names and types ---- */
const char *c_scalar(const Type *t);            /* "double", "int32_t", "cairn_f16" */
const char *type_word(const Type *t);           /* "f64", "usize" (int helpers: "u64") */
const char *helper_suffix(const Type *t);       /* "i32", "u64" for usize, "f64" */
const char *sym_c(Lower *L, const Symbol *s);   /* the C name of a local, param, ... */
const char *sym_len(Lower *L, const Symbol *s); /* its element count, for a view */
bool is_view(const Type *t);                    /* a view with an extent (or a buffer) */
bool is_scalar_ref(const Type *t);              /* rw<T> without an extent */
const Symbol *expr_sym(const Expr *e);          /* the Symbol of a NAME, else NULL */

/* ---- expressions (lower_c_expr.c) ---- */
const char *lower_expr(Lower *L, Expr *e);      /* NULL for a void call */
/* The address of an element or of a scalar reference target, for stores and atomics. */
const char *lower_place(Lower *L, Expr *target);
/* The C arguments that pass view/ref/scalar `arg` to a parameter of type `param`. */
const char *lower_arg(Lower *L, Expr *arg, const Type *param);
/* Converts the C value `v` of type `from` to `to`, with guards and entries. */
const char *lower_convert(Lower *L, const char *v, const Type *from, const Type *to, Span s);
/* a OP b in type t, checked for integers. */
const char *lower_arith(Lower *L, BinaryOp op, const char *a, const char *b, const Type *t,
                        Span s);

/* ---- statements (lower_c.c) ---- */
void lower_block(Lower *L, const Block *b);

/* ---- regions and reductions (lower_c_region.c) ---- */
void lower_parallel(Lower *L, const Stmt *s);
const char *lower_reduce(Lower *L, Expr *e);

/* ---- numerics (numerics.c) ---- */
/* Adds an entry to the current function's list unless an equal one is there. */
void numerics_add(Lower *L, cJSON *entry);
void numerics_arith(Lower *L, const Type *t);
void numerics_convert(Lower *L, const Type *from, const Type *to);
void numerics_quantize(Lower *L, const Type *to, bool stochastic);
void numerics_fn(Lower *L, const char *op, const Type *t, const char *rounding);
void numerics_sum(Lower *L, const Type *t, const char *sum);
void numerics_product(Lower *L, const Type *t);
void numerics_matmul(Lower *L, const Type *t);
void numerics_unordered(Lower *L, const char *op, const Type *t);
void numerics_literal(Lower *L, const Type *t);

#endif
