/* lower_c_cr_array.c: a host parallel region whose body is the one assignment
 * `v[i] = std.cr.F(e)` (F an f32 function, i the region's index, e not naming v) is
 * lowered to calls of the runtime's array form (runtime/cairn_cr_array.h), which
 * evaluates F in vector registers with the scalar function's bits.
 *
 * Each lane function runs its indices in blocks of CR_ARRAY_BLOCK: for every index in
 * order it evaluates e and the place v[i] exactly as the per-index lowering does (the
 * same index checks and traps, in the same order), keeping e's value and the place's
 * address; then one call of cairn_cr_Ff_array on the block, then the stores. A lane's
 * stores are its own (E-ALIAS keeps another view from naming v's array, and e does not
 * name v), so deferring them within the block changes no value any lane reads; the
 * receipt records the same rounding. Device regions (and so every device lane, emulated
 * or on the GPU) keep the scalar functions. */
#include "lower/lower_c_internal.h"

#include <string.h>

#include "syntax/syntax.h"

enum { CR_ARRAY_BLOCK = 256 };

/* Does e name symbol v? */
static bool names_symbol(const Expr *e, const Symbol *v) {
    SymSet used;
    lower_region_captures(NULL, e, NULL, &used);
    for (int i = 0; i < used.len; i++)
        if (used.items[i] == v) return true;
    return false;
}

/* The assignment of s's body when it has the shape above, else NULL. */
static const Stmt *cr_array_shape(const Stmt *s) {
    const Block *body = s->u.parallel.body;
    const Symbol *var = s->u.parallel.b.sym;
    if (s->u.parallel.on_device || !var || !body || body->nstmts != 1) return NULL;
    const Stmt *a = body->stmts[0];
    if (a->kind != STMT_ASSIGN || a->u.assign.op != ASSIGN_SET) return NULL;
    const Expr *t = a->u.assign.target, *v = a->u.assign.value;
    if (t->kind != EXPR_INDEX || lower_expr_sym(t->u.index.index) != var) return NULL;
    const Symbol *view = lower_expr_sym(t->u.index.base);
    if (!view || !lower_is_view(view->type)) return NULL;
    if (v->kind != EXPR_CALL || !ast_builtin_is_cr(v->u.call.builtin)) return NULL;
    if (!v->type || v->type->kind != TY_F32 || v->u.call.nargs != 1) return NULL;
    return names_symbol(v->u.call.args[0], view) ? NULL : a;
}

/* The lane function of host region s when its body has the shape above, in ln (returns
 * true; lower_parallel_pool then runs it on the pool); otherwise emits nothing. */
bool lower_cr_array_lane(Lower *L, const Stmt *s, Lane *ln, const Type *it) {
    const Stmt *a = cr_array_shape(s);
    if (!a) return false;
    Expr *call = a->u.assign.value;
    const char *name = ast_builtin_name(call->u.call.builtin) + strlen("std.cr.");
    lower_lane_open_blocks(L, ln, s->u.parallel.body, s->u.parallel.b.sym, it, CR_ARRAY_BLOCK);
    const char *x = lower_expr(L, call->u.call.args[0]);
    numerics_fn(L, ast_builtin_name(call->u.call.builtin), call->type, "correctly-rounded");
    const char *place = lower_place(L, a->u.assign.target);
    if (x && place) {
        lower_emit(L, "cairn_v[cairn_k - cairn_b] = %s;", x);
        lower_emit(L, "cairn_at[cairn_k - cairn_b] = &%s;", place);
    }
    L->indent = 2;
    lower_emit(L, "}");
    lower_emit(L, "cairn_cr_%sf_array(cairn_v, cairn_v, cairn_m);", name);
    lower_emit(L, "for (size_t cairn_j = 0; cairn_j < cairn_m; cairn_j++) "
                  "*cairn_at[cairn_j] = cairn_v[cairn_j];");
    lower_lane_close(L, ln, NULL);
    lower_use_runtime(L, LOWER_MODULE_CR | LOWER_MODULE_CR_ARRAY);
    return true;
}
