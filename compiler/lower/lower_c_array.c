/* lower_c_array.c: a host parallel region whose body is the one assignment
 * `v[i] = F(e)`, i the region's index and e not naming v, where F is an f32 function of
 * std.cr or a conversion between f32 and f16 or bf16, is lowered to calls of the
 * runtime's array forms: cairn_cr_Ff_array (runtime/cairn_cr_array.h, std.cr in vector
 * registers with the scalar function's bits) and cairn_f32_to_f16_array,
 * cairn_f32_to_bf16_array, cairn_f16_to_f32_array, cairn_bf16_to_f32_array
 * (runtime/cairn_float.h: F16C where the CPU has it, proved equal to the scalar routine).
 *
 * Each lane function runs its indices in blocks of ARRAY_BLOCK: for every index in
 * order it evaluates e and the place v[i] exactly as the per-index lowering does (the
 * same index checks and traps, in the same order), keeping e's value and the place's
 * address; then one call of the array form on the block, then the stores. A lane's
 * stores are its own (E-ALIAS keeps another view from naming v's array, and e does not
 * name v), so deferring them within the block changes no value any lane reads; the
 * receipt records the same roundings. Device regions (and so every device lane, emulated
 * or on the GPU) keep the scalar functions. */
#include "lower/lower_c_internal.h"

#include <string.h>

#include "syntax/syntax.h"

#define FMT(...) arena_printf(L->arena, __VA_ARGS__)

enum { ARRAY_BLOCK = 256 };

/* The array form a region calls: its assignment, F's argument, the array function and
 * the element types it reads and writes. */
typedef struct ArrayOp {
    const Stmt *assign;
    Expr *arg;
    const char *fn;
    const Type *in, *out;
} ArrayOp;

/* Does e name symbol v? */
static bool names_symbol(const Expr *e, const Symbol *v) {
    SymSet used;
    lower_region_captures(NULL, e, NULL, &used);
    for (int i = 0; i < used.len; i++)
        if (used.items[i] == v) return true;
    return false;
}

/* The array function for F = v (a call or a conversion), or NULL. */
static const char *array_fn(Lower *L, const Expr *v) {
    if (v->kind == EXPR_CALL && ast_builtin_is_cr(v->u.call.builtin) && v->type->kind == TY_F32 &&
        v->u.call.nargs == 1)
        return FMT("cairn_cr_%sf_array", ast_builtin_name(v->u.call.builtin) + strlen("std.cr."));
    if (v->kind != EXPR_CONVERT) return NULL;
    TypeKind from = v->u.convert.arg->type->kind, to = v->u.convert.to->kind;
    if (from == TY_F32 && (to == TY_F16 || to == TY_BF16))
        return to == TY_F16 ? "cairn_f32_to_f16_array" : "cairn_f32_to_bf16_array";
    if ((from == TY_F16 || from == TY_BF16) && to == TY_F32)
        return from == TY_F16 ? "cairn_f16_to_f32_array" : "cairn_bf16_to_f32_array";
    return NULL;
}

/* Fills *op when host region s has the shape above. */
static bool array_shape(Lower *L, const Stmt *s, ArrayOp *op) {
    const Block *body = s->u.parallel.body;
    const Symbol *var = s->u.parallel.b.sym;
    if (s->u.parallel.on_device || !var || !body || body->nstmts != 1) return false;
    const Stmt *a = body->stmts[0];
    if (a->kind != STMT_ASSIGN || a->u.assign.op != ASSIGN_SET) return false;
    Expr *t = a->u.assign.target, *v = a->u.assign.value;
    if (t->kind != EXPR_INDEX || lower_expr_sym(t->u.index.index) != var) return false;
    const Symbol *view = lower_expr_sym(t->u.index.base);
    if (!view || !lower_is_view(view->type) || !v->type) return false;
    op->fn = array_fn(L, v);
    if (!op->fn) return false;
    op->assign = a;
    op->arg = v->kind == EXPR_CALL ? v->u.call.args[0] : v->u.convert.arg;
    op->in = op->arg->type;
    op->out = v->type;
    return !names_symbol(op->arg, view);
}

/* The lane function of host region s when its body has the shape above, in ln (returns
 * true; lower_parallel_pool then runs it on the pool); otherwise emits nothing. */
bool lower_array_lane(Lower *L, const Stmt *s, Lane *ln, const Type *it) {
    ArrayOp op;
    if (!array_shape(L, s, &op)) return false;
    Expr *v = op.assign->u.assign.value;
    lower_lane_open_blocks(L, ln, s->u.parallel.body, s->u.parallel.b.sym, it, ARRAY_BLOCK,
                           lower_c_scalar(op.in), lower_c_scalar(op.out));
    /* as lower_cr and lower_convert: the argument (the checker records the rounding) */
    const char *x = v->kind == EXPR_CONVERT && type_is_storage_float(op.out)
                        ? lower_expr_out(L, op.arg) /* its bits leave */
                        : lower_expr(L, op.arg);
    if (v->kind == EXPR_CALL) lower_use_runtime(L, LOWER_MODULE_CR | LOWER_MODULE_CR_ARRAY);
    else lower_use_runtime(L, LOWER_MODULE_FLOAT);
    const char *place = lower_place(L, op.assign->u.assign.target);
    if (x && place) {
        lower_emit(L, "cairn_v[cairn_k - cairn_b] = %s;", x);
        lower_emit(L, "cairn_at[cairn_k - cairn_b] = &%s;", place);
    }
    L->indent = 2;
    lower_emit(L, "}");
    lower_emit(L, "%s(cairn_v, cairn_w, cairn_m);", op.fn);
    lower_emit(L, "for (size_t cairn_j = 0; cairn_j < cairn_m; cairn_j++) "
                  "*cairn_at[cairn_j] = cairn_w[cairn_j];");
    lower_lane_close(L, ln, NULL);
    return true;
}
