/* lower_mma.h: lowering of the tensor-core multiply, fragments and layout methods
 * (lower_mma.c), called from lower_c_expr.c's builtin dispatch. */
#ifndef CAIRN_LOWER_MMA_H
#define CAIRN_LOWER_MMA_H

#include "lower/lower_c_internal.h"

/* The emitter of mma_unordered, the fragment accesses and the layouts (ops.def):
 * lower_mma_call, declared with the others in lower_c_internal.h. */

/* A fragment fill, WmmaAcc[f32, 16, 16, 16](0.0) (an EXPR_CONVERT to a fragment type). */
const char *lower_fragment_fill(Lower *L, Expr *e);

/* The C type of a fragment (runtime/cairn_fragment.h: a struct of its elements). */
const char *lower_fragment_ctype(const Type *t);

#endif
