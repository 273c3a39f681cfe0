/* layout_check.h: the checker's side of layouts (layout_check.c): folding layout
 * expressions to constants, proving them, their methods, and the fragment families'
 * reading rules. Used by check_builtin.c and check.c only. */
#ifndef CAIRN_LAYOUT_CHECK_H
#define CAIRN_LAYOUT_CHECK_H

#include "check/check_internal.h"
#include "syntax/syntax.h"

/* The layout a checked layout-typed expression holds (a name, or a constructor call),
 * folding it on first use; NULL when it has none (an error, reported elsewhere). */
const Layout *layout_check_value(Checker *c, Expr *e);

/* The rules of rows, cols, pad, swizzle, spread and the methods (.cosize() ...), after
 * their arguments are typed: E-CONST for an argument that is not constant, E-LAYOUT for
 * arguments that make no layout, one that is not injective, or a constant coordinate
 * outside it. Returns false after reporting. */
bool layout_check_rules(Checker *c, Expr *e, Builtin b, Expr *receiver);

/* A method call with constant arguments on a constant layout (TILE.cosize()) as an
 * integer, for const_eval_int; false when it is not one. */
bool layout_check_fold_int(Checker *c, const Expr *e, int64_t *out, int depth);

/* E-LAYOUT-CONSUMER (and E-EXTENT for a literal array too short) for mma_load and
 * mma_store of `frag` from `tile` laid out by `layout`. Returns false after reporting. */
bool layout_check_consumer(Checker *c, Expr *tile, Expr *layout, const Type *frag);

#endif
