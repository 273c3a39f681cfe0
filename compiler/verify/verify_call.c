/* verify_call.c: calls and prologues in the Z3 model (see verify.h).
 *
 * A call is inlined: the callee's parameters bind the argument values (views and scalar
 * references share the caller's cell, so writes reach it), then its prologue runs as
 * the lowering's does on entry, with the trap naming the call: each view's extent is
 * evaluated (its own guards are the callee's, at the extent's place) and compared with
 * the argument's length, in parameter order, then `requires`. A recursive call is not
 * modelled: its result and everything it may write hold fresh values with that reason.
 *
 * The function under verification runs on fresh inputs whose view lengths are free: its
 * prologue is what its callers promise, so it is assumed rather than checked (a view's
 * length equals its extent wherever the extent evaluates, and `requires` holds), while
 * the extents' own guards stay properties: `x:ro<i32>[n * 4]` traps on entry, before any
 * promise is checked, when n * 4 overflows. An implementation is run with its prologue
 * checked instead, as its reference's callers would call it. */
#include <stdlib.h>
#include <string.h>

#include "verify/verify_internal.h"

#define VERIFY_MAX_DEPTH 16

static bool modelled_scalar(const Type *t) {
    return t && (type_is_scalar(t) || type_is_storage_float(t));
}

/* Binds a callee's parameters: views and references share the argument's cell. */
static bool bind_args(Verifier *V, const Item *fn, Expr *call, VVal *vals) {
    for (int i = 0; i < fn->u.fn.nparams; i++) {
        const Param *p = fn->u.fn.params[i];
        if (p->type->kind == TY_VIEW) {
            Expr *a = call->u.call.args[i];
            VCell *c = a->kind == EXPR_NAME ? verify_lookup(V, a->u.name.sym) : NULL;
            if (!c) return false;
            verify_bind(V, p->sym, c);
        } else if (modelled_scalar(p->type)) {
            unsigned taint = vals[i].taint;
            Z3_ast stored = verify_stored(V, vals[i], p->type, &taint);
            verify_bind(
                V, p->sym,
                verify_new_cell(V, (VCell){.elem = p->type, .val = stored, .taint = taint}));
        } else {
            return false;
        }
    }
    return true;
}

/* The prologue as a call runs it: each view's extent against its argument's length,
 * then `requires`, failing at `at`. */
static void prologue_checked(Verifier *V, const Item *fn, const void *node, Span at) {
    for (int i = 0; i < fn->u.fn.nparams; i++) {
        const Param *p = fn->u.fn.params[i];
        if (p->type->kind != TY_VIEW || !p->type->u.view.extent) continue;
        VCell *c = verify_lookup(V, p->sym);
        VVal ext = verify_expr(V, p->type->u.view.extent);
        Z3_ast ok = Z3_mk_eq(V->z, c->len, verify_to_u64(V, ext.t, p->type->u.view.extent->type));
        const char *what = arena_printf(V->prog->arena, "%s (%s)", fn->name, p->name);
        verify_guard(V, (VSite){VK_EXTENT, p, at, what}, ok, ext.taint);
    }
    if (fn->u.fn.requires) {
        VVal r = verify_expr(V, fn->u.fn.requires);
        verify_guard(V, (VSite){VK_REQUIRES, node, at, fn->name}, r.t, r.taint);
    }
}

/* A call not modelled: its result is fresh, and so is everything it may write. */
static VVal unmodelled_call(Verifier *V, Expr *e, const char *what) {
    verify_unmodelled(V, e, e->span, what);
    unsigned bit =
        verify_taint_bit(V, e->span, arena_printf(V->prog->arena, "%s is not modelled", what));
    verify_havoc_writes(V, NULL, e, bit);
    V->alive_taint |= bit;
    if (modelled_scalar(e->type)) return verify_havoc(V, e->type, e->span, what);
    return (VVal){NULL, 0, NULL};
}

VVal verify_call(Verifier *V, Expr *e) {
    const Item *fn = e->u.call.fn;
    VVal *vals = calloc((size_t)e->u.call.nargs + 1, sizeof *vals);
    if (!vals) abort();
    for (int i = 0; i < e->u.call.nargs; i++)
        if (modelled_scalar(fn->u.fn.params[i]->type)) vals[i] = verify_expr(V, e->u.call.args[i]);
    bool recursive = V->depth >= VERIFY_MAX_DEPTH || fn == V->running;
    for (int d = 0; d < V->depth && !recursive; d++) recursive = V->stack[d] == fn;
    int mark = V->nenv;
    bool bound = !recursive && bind_args(V, fn, e, vals);
    free(vals);
    if (!bound) {
        V->nenv = mark;
        const char *why = !recursive                     ? "this call's arguments"
                          : V->depth >= VERIFY_MAX_DEPTH ? "a call chain deeper than 16"
                                                         : "a recursive call";
        if (recursive) verify_skipped(V, fn, NULL, e->span, why);
        return unmodelled_call(V, e, why);
    }
    Z3_ast saved_pc = V->pc, saved_returned = V->returned, saved_ret = V->ret;
    unsigned saved_ret_taint = V->ret_taint;
    V->pc = verify_and(V, V->pc, Z3_mk_not(V->z, V->returned)); /* runs where the caller does */
    V->returned = Z3_mk_false(V->z);
    V->ret = modelled_scalar(fn->u.fn.ret)
                 ? verify_fresh(V, "noreturn", verify_cell_sort(V, fn->u.fn.ret))
                 : NULL;
    V->ret_taint = 0;
    prologue_checked(V, fn, e, e->span);
    V->stack[V->depth++] = fn;
    verify_block(V, fn->u.fn.body);
    V->depth--;
    VVal result =
        V->ret ? verify_load(V, V->ret, fn->u.fn.ret, V->ret_taint) : (VVal){NULL, 0, NULL};
    V->nenv = mark;
    V->pc = saved_pc;
    V->returned = saved_returned;
    V->ret = saved_ret;
    V->ret_taint = saved_ret_taint;
    return result;
}

/* ---- the function under verification ---- */

/* Fresh inputs: a constant per scalar, reference and view, and a free length per view. */
static void fresh_inputs(Verifier *V, const Item *fn) {
    int n = fn->u.fn.nparams;
    V->inputs = arena_alloc(V->prog->arena, sizeof(VCell) * (size_t)(n ? n : 1));
    V->ninputs = n;
    for (int i = 0; i < n; i++) {
        const Param *p = fn->u.fn.params[i];
        bool array = p->type->kind == TY_VIEW && p->type->u.view.extent;
        const Type *elem = p->type->kind == TY_VIEW ? p->type->u.view.elem : p->type;
        VCell *c = &V->inputs[i];
        *c = (VCell){.elem = elem, .array = array};
        Z3_sort s = verify_cell_sort(V, elem);
        if (array) {
            c->val = Z3_mk_const(V->z, Z3_mk_string_symbol(V->z, p->name),
                                 Z3_mk_array_sort(V->z, Z3_mk_bv_sort(V->z, 64), s));
            char *len = arena_printf(V->prog->arena, "%s.length", p->name);
            c->len = Z3_mk_const(V->z, Z3_mk_string_symbol(V->z, len), Z3_mk_bv_sort(V->z, 64));
            c->place = p->type->u.view.place;
        } else {
            c->val = Z3_mk_const(V->z, Z3_mk_string_symbol(V->z, p->name), s);
        }
    }
}

/* The prologue as the callers promise it: returns the assumption. Extents are evaluated
 * (their guards are properties) and equal the lengths where they evaluate; `requires`
 * holds, its own guards passing. */
static Z3_ast prologue_assumed(Verifier *V, const Item *fn) {
    Z3_ast assumption = Z3_mk_true(V->z);
    for (int i = 0; i < fn->u.fn.nparams; i++) {
        const Param *p = fn->u.fn.params[i];
        if (p->type->kind != TY_VIEW || !p->type->u.view.extent) continue;
        VCell *c = verify_lookup(V, p->sym);
        VVal ext = verify_expr(V, p->type->u.view.extent);
        Z3_ast eq = Z3_mk_eq(V->z, c->len, verify_to_u64(V, ext.t, p->type->u.view.extent->type));
        assumption = verify_and(V, assumption, Z3_mk_implies(V->z, verify_active(V), eq));
        V->assume_taint |= ext.taint;
    }
    if (fn->u.fn.requires) {
        bool collect = V->collect;
        Z3_ast alive = V->alive;
        V->collect = false;
        V->alive = Z3_mk_true(V->z);
        VVal r = verify_expr(V, fn->u.fn.requires);
        assumption = verify_and(V, assumption, verify_and(V, V->alive, r.t));
        V->assume_taint |= r.taint;
        V->collect = collect;
        V->alive = alive;
    }
    return assumption;
}

static void reset_state(Verifier *V) {
    V->pc = Z3_mk_true(V->z);
    V->alive = Z3_mk_true(V->z);
    V->returned = Z3_mk_false(V->z);
    V->pc_taint = V->alive_taint = V->ret_taint = 0;
    V->nenv = 0;
    V->depth = 0;
}

Z3_ast verify_run_top(Verifier *V, const Item *fn, bool checked, VVal *result, VCell **finals) {
    reset_state(V);
    V->running = fn;
    if (!V->inputs) fresh_inputs(V, fn);
    for (int i = 0; i < fn->u.fn.nparams; i++) {
        VCell *c = &V->inputs[i], *mine = verify_new_cell(V, *c);
        mine->taint = 0;
        verify_bind(V, fn->u.fn.params[i]->sym, mine);
    }
    Z3_ast assumption = Z3_mk_true(V->z);
    if (checked) prologue_checked(V, fn, fn, fn->name_span);
    else assumption = prologue_assumed(V, fn);
    V->ret = modelled_scalar(fn->u.fn.ret)
                 ? verify_fresh(V, "noreturn", verify_cell_sort(V, fn->u.fn.ret))
                 : NULL;
    for (int i = 0; i < fn->u.fn.nparams; i++)
        finals[i] = verify_lookup(V, fn->u.fn.params[i]->sym);
    verify_block(V, fn->u.fn.body);
    *result = V->ret ? verify_load(V, V->ret, fn->u.fn.ret, V->ret_taint) : (VVal){NULL, 0, NULL};
    return assumption;
}
