/* lower_mma.h: lowering of the tensor-core multiply, fragments and layout methods
 * (lower_mma.c), called from lower_c_expr.c's builtin dispatch. */
#ifndef CAIRN_LOWER_MMA_H
#define CAIRN_LOWER_MMA_H

#include "lower/lower_c_internal.h"

/* True for the builtins lower_mma_call lowers. */
#define LOWER_MMA_BUILTIN(b)                                                                       \
    (((b) >= BI_MMA_UNORDERED && (b) <= BI_MMA_SET) ||                                             \
     ((b) >= BI_LAYOUT_ROWS && (b) <= BI_LAYOUT_COL))

/* The C value of the call (NULL for a statement call), after emitting what it needs. */
const char *lower_mma_call(Lower *L, Expr *e);

/* A fragment fill, WmmaAcc[f32, 16, 16, 16](0.0) (an EXPR_CONVERT to a fragment type). */
const char *lower_fragment_fill(Lower *L, Expr *e);

/* The C type of a fragment (runtime/cairn_fragment.h: a struct of its elements). */
const char *lower_fragment_ctype(const Type *t);

#endif
