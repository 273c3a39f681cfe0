/* verify_stmt.c: CAIRN statements, calls, loops and reductions in the Z3 model (see
 * verify.h). Both arms of an `if` run, each under its condition; every write is guarded
 * by the activity it happens under. Loops, parallel regions and reductions unroll up to
 * --unwind iterations in index order (a region's lanes touch disjoint elements, so any
 * order gives the same state); a run that would take one more iteration is added to
 * `beyond`. Calls are inlined, with the callee's view extents and `requires` checked at
 * the call as the lowering checks them on entry. */
#include <stdlib.h>
#include <string.h>

#include "verify/verify.h"

#define VERIFY_MAX_DEPTH 16

static bool modelled_scalar(const Type *t) {
    return t && (type_is_scalar(t) || type_is_storage_float(t));
}

static Z3_ast fresh_const(Verifier *V, const char *name, Z3_sort sort) {
    char buf[64];
    snprintf(buf, sizeof buf, "%s!%d", name, V->fresh++);
    return Z3_mk_const(V->z, Z3_mk_string_symbol(V->z, buf), sort);
}

static Z3_sort array_sort(Verifier *V, const Type *elem) {
    return Z3_mk_array_sort(V->z, Z3_mk_bv_sort(V->z, 64), verify_sort(V, elem));
}

static Z3_ast zero_of(Verifier *V, const Type *t) {
    if (t->kind == TY_BOOL) return Z3_mk_false(V->z);
    if (type_is_compute_float(t)) return Z3_mk_fpa_zero(V->z, verify_sort(V, t), false);
    return verify_int_const(V, t, 0);
}

/* ---- loops ---- */

void verify_unroll(Verifier *V, const Binder *b, Span span,
                   void (*body)(Verifier *V, VVal i, void *ctx), void *ctx) {
    const Type *t = b->sym ? b->sym->type : b->count->type;
    VVal lo = b->lo ? verify_expr(V, b->lo) : (VVal){verify_int_const(V, t, 0), 0};
    VVal hi = verify_expr(V, b->count);
    bool sign = type_is_signed(t);
    Z3_ast saved = V->pc, ran = Z3_mk_true(V->z);
    unsigned saved_taint = V->pc_taint;
    for (unsigned k = 0; k <= V->opt->unwind; k++) {
        Z3_ast i = Z3_mk_bvadd(V->z, lo.t, verify_int_const(V, t, k));
        Z3_ast runs =
            verify_and(V, ran, sign ? Z3_mk_bvslt(V->z, i, hi.t) : Z3_mk_bvult(V->z, i, hi.t));
        if (k == V->opt->unwind) { /* one more iteration than modelled */
            V->pc = saved;
            V->beyond = verify_or(V, V->beyond, verify_and(V, verify_active(V), runs));
            break;
        }
        V->pc = verify_and(V, saved, runs);
        V->pc_taint = saved_taint | lo.taint | hi.taint;
        body(V, (VVal){i, lo.taint}, ctx);
        ran = runs;
    }
    V->pc = saved;
    V->pc_taint = saved_taint;
    (void)span;
}

typedef struct LoopBody {
    const Symbol *var;
    Block *body;
} LoopBody;

static void loop_body(Verifier *V, VVal i, void *ctx) {
    LoopBody *lb = ctx;
    int mark = V->nenv;
    if (lb->var)
        verify_bind(V, lb->var, verify_new_cell(V, lb->var->type, false, i.t, NULL, i.taint));
    verify_block(V, lb->body);
    V->nenv = mark;
}

/* ---- reductions ---- */

typedef struct Fold {
    Expr *e;
    const Type *t;
    VVal acc;
    bool wide; /* integer + on the pool: exact in 128 bits, checked at the end */
} Fold;

static Z3_ast identity(Verifier *V, ReduceOp op, const Type *t, unsigned width) {
    unsigned bits = (unsigned)type_bits(t);
    uint64_t ones = bits == 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
    uint64_t v = 0;
    if (op == RED_MUL) v = 1;
    if (op == RED_BITAND) v = ones;
    if (op == RED_MIN) v = type_is_signed(t) ? ones >> 1 : ones;
    if (op == RED_MAX) v = type_is_signed(t) ? (uint64_t)1 << (bits - 1) : 0;
    Z3_ast c = verify_int_const(V, t, v);
    return width > bits ? Z3_mk_sign_ext(V->z, width - bits, c) : c;
}

static void fold_step(Verifier *V, VVal i, void *ctx) {
    Fold *f = ctx;
    Expr *e = f->e;
    int mark = V->nenv;
    const Symbol *var = e->u.reduce.var_sym;
    if (var) verify_bind(V, var, verify_new_cell(V, var->type, false, i.t, NULL, i.taint));
    VVal v = verify_expr(V, e->u.reduce.body);
    V->nenv = mark;
    if (!type_is_int(f->t) || !v.t) return; /* a float fold is not modelled (its result is fresh) */
    Z3_context z = V->z;
    Z3_ast now;
    ReduceOp op = e->u.reduce.op;
    if (f->wide)
        now = Z3_mk_bvadd(z, f->acc.t,
                          type_is_signed(f->t)
                              ? Z3_mk_sign_ext(z, 128 - (unsigned)type_bits(f->t), v.t)
                              : Z3_mk_zero_ext(z, 128 - (unsigned)type_bits(f->t), v.t));
    else if (op == RED_ADD || op == RED_MUL)
        now = verify_arith(V, op == RED_ADD ? BIN_ADD : BIN_MUL, f->acc, v, f->t, e->span).t;
    else if (op == RED_MIN || op == RED_MAX) {
        bool sign = type_is_signed(f->t);
        Z3_ast lt = sign ? Z3_mk_bvslt(z, v.t, f->acc.t) : Z3_mk_bvult(z, v.t, f->acc.t);
        now = op == RED_MIN ? Z3_mk_ite(z, lt, v.t, f->acc.t) : Z3_mk_ite(z, lt, f->acc.t, v.t);
    } else if (op == RED_BITAND) now = Z3_mk_bvand(z, f->acc.t, v.t);
    else if (op == RED_BITOR) now = Z3_mk_bvor(z, f->acc.t, v.t);
    else now = Z3_mk_bvxor(z, f->acc.t, v.t);
    f->acc.t = Z3_mk_ite(z, verify_active(V), now, f->acc.t);
    f->acc.taint |= v.taint | V->pc_taint;
}

static Binder reduce_binder(Expr *e) {
    return (Binder){.var = e->u.reduce.var,
                    .var_span = e->u.reduce.var_span,
                    .sym = e->u.reduce.var_sym,
                    .lo = e->u.reduce.lo,
                    .count = e->u.reduce.count};
}

VVal verify_reduce(Verifier *V, Expr *e) {
    if (e->u.reduce.mode == MODE_WARP) {
        verify_unmodelled(V, e->span, "a warp reduction");
        return verify_havoc(V, e->type, e->span, "a warp reduction");
    }
    if (e->u.reduce.scan) { /* scans: the prefixes are not modelled */
        verify_unmodelled(V, e->span, "a scan");
        return (VVal){NULL, 0};
    }
    const Type *t = e->type;
    Fold f = {.e = e,
              .t = t,
              .wide =
                  type_is_int(t) && e->u.reduce.mode == MODE_PARALLEL && e->u.reduce.op == RED_ADD};
    if (type_is_int(t))
        f.acc = (VVal){identity(V, e->u.reduce.op, t, f.wide ? 128 : (unsigned)type_bits(t)), 0};
    Binder b = reduce_binder(e);
    verify_unroll(V, &b, e->span, fold_step, &f);
    if (type_is_float(t)) {
        const char *what = e->u.reduce.mode == MODE_FOR ? "a float reduction (reduce for)"
                                                        : "a float reduction (reduce parallel)";
        verify_unmodelled(V, e->span, what);
        return verify_havoc(V, t, e->span, what);
    }
    if (e->u.reduce.mode == MODE_PARALLEL && e->u.reduce.op == RED_MUL)
        f.acc.taint |= verify_taint_bit(
            V, e->span, "a pooled integer product (a partial's overflow depends on the pool)");
    if (!f.wide) return f.acc;
    unsigned bits = (unsigned)type_bits(t);
    Z3_ast r = Z3_mk_extract(V->z, bits - 1, 0, f.acc.t);
    Z3_ast back = type_is_signed(t) ? Z3_mk_sign_ext(V->z, 128 - bits, r)
                                    : Z3_mk_zero_ext(V->z, 128 - bits, r);
    verify_guard(V, VK_OVERFLOW, e->span, NULL, Z3_mk_eq(V->z, back, f.acc.t), f.acc.taint);
    return (VVal){r, f.acc.taint};
}

/* ---- statements ---- */

static void write_cell(Verifier *V, VCell *c, Z3_ast now, unsigned taint) {
    c->val = Z3_mk_ite(V->z, verify_active(V), now, c->val);
    c->taint |= taint | V->pc_taint;
}

static void let_stmt(Verifier *V, Stmt *s) {
    const Symbol *sym = s->u.let.sym;
    if (!modelled_scalar(sym->type)) {
        verify_unmodelled(V, s->span, "a let of this type");
        V->alive_taint |= verify_taint_bit(V, s->span, "a let of this type is not modelled");
        return;
    }
    VVal v = verify_expr(V, s->u.let.init);
    if (!v.t) v = verify_havoc(V, sym->type, s->span, "this value");
    verify_bind(V, sym, verify_new_cell(V, sym->type, false, v.t, NULL, v.taint | V->pc_taint));
}

static void assign_stmt(Verifier *V, Stmt *s) {
    static const BinaryOp ops[] = {[ASSIGN_ADD] = BIN_ADD,
                                   [ASSIGN_SUB] = BIN_SUB,
                                   [ASSIGN_MUL] = BIN_MUL,
                                   [ASSIGN_DIV] = BIN_DIV};
    Expr *target = s->u.assign.target;
    VVal v = verify_expr(V, s->u.assign.value);
    if (!v.t) return;
    if (target->kind == EXPR_INDEX) {
        Z3_ast i;
        unsigned taint;
        VCell *c = verify_element(V, target, &i, &taint);
        if (!c) return;
        if (s->u.assign.op != ASSIGN_SET)
            v = verify_arith(V, ops[s->u.assign.op], (VVal){Z3_mk_select(V->z, c->val, i), taint},
                             v, target->type, s->span);
        write_cell(V, c, Z3_mk_store(V->z, c->val, i, v.t), v.taint | taint);
        return;
    }
    const Symbol *sym = target->kind == EXPR_NAME ? target->u.name.sym : NULL;
    VCell *c = sym ? verify_lookup(V, sym) : NULL;
    if (!c || c->array) {
        verify_unmodelled(V, s->span, "assigning to this expression");
        return;
    }
    if (s->u.assign.op != ASSIGN_SET)
        v = verify_arith(V, ops[s->u.assign.op], (VVal){c->val, c->taint}, v, target->type,
                         s->span);
    write_cell(V, c, v.t, v.taint);
}

static void stmt(Verifier *V, Stmt *s);

static void if_stmt(Verifier *V, Stmt *s) {
    VVal c = verify_expr(V, s->u.if_.cond);
    Z3_ast saved = V->pc;
    unsigned saved_taint = V->pc_taint;
    V->pc = verify_and(V, saved, c.t);
    V->pc_taint |= c.taint;
    verify_block(V, s->u.if_.then);
    if (s->u.if_.els) {
        V->pc = verify_and(V, saved, Z3_mk_not(V->z, c.t));
        stmt(V, s->u.if_.els);
    }
    V->pc = saved;
    V->pc_taint = saved_taint;
}

static void return_stmt(Verifier *V, Stmt *s) {
    VVal v = s->u.ret.value ? verify_expr(V, s->u.ret.value) : (VVal){NULL, 0};
    Z3_ast active = verify_active(V);
    if (v.t) {
        V->ret = V->ret ? Z3_mk_ite(V->z, active, v.t, V->ret) : v.t;
        V->ret_taint |= v.taint | V->pc_taint;
    }
    V->returned = verify_or(V, V->returned, active);
    V->alive_taint |= V->pc_taint;
}

static void buffer_stmt(Verifier *V, Stmt *s) {
    VVal n = verify_expr(V, s->u.alloc.count);
    const Type *elem = s->u.alloc.elem;
    Z3_ast zero = Z3_mk_const_array(V->z, Z3_mk_bv_sort(V->z, 64), zero_of(V, elem));
    Z3_ast len = verify_to_u64(V, n.t, s->u.alloc.count->type);
    verify_bind(V, s->u.alloc.sym, verify_new_cell(V, elem, true, zero, len, n.taint));
}

static void parallel_stmt(Verifier *V, Stmt *s) {
    LoopBody lb = {s->u.parallel.b.sym, s->u.parallel.body};
    V->in_parallel++;
    verify_unroll(V, &s->u.parallel.b, s->span, loop_body, &lb);
    V->in_parallel--;
}

static void stmt(Verifier *V, Stmt *s) {
    switch (s->kind) {
    case STMT_LET: let_stmt(V, s); break;
    case STMT_ASSIGN: assign_stmt(V, s); break;
    case STMT_EXPR: verify_expr(V, s->u.expr); break;
    case STMT_IF: if_stmt(V, s); break;
    case STMT_FOR: {
        LoopBody lb = {s->u.for_.b.sym, s->u.for_.body};
        verify_unroll(V, &s->u.for_.b, s->span, loop_body, &lb);
        break;
    }
    case STMT_RETURN: return_stmt(V, s); break;
    case STMT_PARALLEL: parallel_stmt(V, s); break;
    case STMT_BUFFER: buffer_stmt(V, s); break;
    case STMT_BLOCK: verify_block(V, s->u.block); break;
    default: { /* cooperative regions, shared arrays, barriers: everything after is unknown */
        const char *what = s->kind == STMT_BLOCKS   ? "a cooperative blocks region"
                           : s->kind == STMT_SHARED ? "a shared array"
                                                    : "a barrier";
        verify_unmodelled(V, s->span, what);
        V->alive_taint |=
            verify_taint_bit(V, s->span, arena_printf(V->prog->arena, "%s is not modelled", what));
        break;
    }
    }
}

void verify_block(Verifier *V, Block *b) {
    int mark = V->nenv;
    for (int i = 0; i < b->nstmts; i++) stmt(V, b->stmts[i]);
    V->nenv = mark;
}

/* ---- calls ---- */

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
            verify_bind(V, p->sym,
                        verify_new_cell(V, p->type, false, vals[i].t, NULL, vals[i].taint));
        } else {
            return false;
        }
    }
    return true;
}

/* The prologue: each view's extent against its argument's length, then `requires`. */
static void prologue_at_call(Verifier *V, const Item *fn, Span at) {
    for (int i = 0; i < fn->u.fn.nparams; i++) {
        const Param *p = fn->u.fn.params[i];
        if (p->type->kind != TY_VIEW || !p->type->u.view.extent) continue;
        VCell *c = verify_lookup(V, p->sym);
        VVal ext = verify_expr(V, p->type->u.view.extent);
        Z3_ast ok = Z3_mk_eq(V->z, c->len, verify_to_u64(V, ext.t, p->type->u.view.extent->type));
        verify_guard(V, VK_EXTENT, at, fn->name, ok, ext.taint);
    }
    if (fn->u.fn.requires) {
        VVal r = verify_expr(V, fn->u.fn.requires);
        verify_guard(V, VK_REQUIRES, at, fn->name, r.t, r.taint);
    }
}

VVal verify_call(Verifier *V, Expr *e) {
    const Item *fn = e->u.call.fn;
    VVal *vals = calloc((size_t)e->u.call.nargs + 1, sizeof *vals);
    if (!vals) abort();
    for (int i = 0; i < e->u.call.nargs; i++)
        if (modelled_scalar(fn->u.fn.params[i]->type)) vals[i] = verify_expr(V, e->u.call.args[i]);
    bool recursive = V->depth >= VERIFY_MAX_DEPTH;
    for (int d = 0; d < V->depth && !recursive; d++) recursive = V->stack[d] == fn;
    VVal result = {NULL, 0};
    int mark = V->nenv;
    if (recursive || !bind_args(V, fn, e, vals)) {
        V->nenv = mark;
        free(vals);
        const char *what = recursive ? "a recursive call" : "this call's arguments";
        verify_unmodelled(V, e->span, what); /* its writes are unknown: so is what follows */
        V->alive_taint |=
            verify_taint_bit(V, e->span, arena_printf(V->prog->arena, "%s is not modelled", what));
        if (modelled_scalar(e->type))
            return verify_havoc(V, e->type, e->span, "a call not modelled");
        return result;
    }
    free(vals);
    Z3_ast saved_pc = V->pc, saved_returned = V->returned, saved_ret = V->ret;
    unsigned saved_ret_taint = V->ret_taint;
    V->pc = verify_and(V, V->pc,
                       Z3_mk_not(V->z, V->returned)); /* the callee runs where the caller does */
    V->returned = Z3_mk_false(V->z);
    V->ret = modelled_scalar(fn->u.fn.ret)
                 ? fresh_const(V, "noreturn", verify_sort(V, fn->u.fn.ret))
                 : NULL;
    V->ret_taint = 0;
    prologue_at_call(V, fn, e->span);
    V->stack[V->depth++] = fn;
    verify_block(V, fn->u.fn.body);
    V->depth--;
    result = (VVal){V->ret, V->ret_taint};
    V->nenv = mark;
    V->pc = saved_pc;
    V->returned = saved_returned;
    V->ret = saved_ret;
    V->ret_taint = saved_ret_taint;
    return result;
}

/* ---- the function under verification ---- */

/* Fresh inputs: scalars and references first, then views, whose lengths are their
 * extents (the caller's extent check made them so). */
static void fresh_inputs(Verifier *V, const Item *fn) {
    int n = fn->u.fn.nparams;
    V->inputs = arena_alloc(V->prog->arena, sizeof(VCell) * (size_t)(n ? n : 1));
    V->ninputs = n;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            const Param *p = fn->u.fn.params[i];
            bool array = p->type->kind == TY_VIEW && p->type->u.view.extent;
            if (array != (pass == 1)) continue;
            const Type *elem = p->type->kind == TY_VIEW ? p->type->u.view.elem : p->type;
            Z3_symbol name = Z3_mk_string_symbol(V->z, p->name);
            VCell *c = &V->inputs[i];
            *c = (VCell){.elem = elem, .array = array};
            if (array) {
                VVal ext = verify_expr(V, p->type->u.view.extent);
                c->len = verify_to_u64(V, ext.t, p->type->u.view.extent->type);
                c->val = Z3_mk_const(V->z, name, array_sort(V, elem));
                c->taint = ext.taint;
            } else {
                c->val = Z3_mk_const(V->z, name, verify_sort(V, elem));
            }
            verify_bind(V, p->sym, verify_new_cell(V, elem, array, c->val, c->len, c->taint));
        }
    }
}

static void reset_state(Verifier *V) {
    V->pc = Z3_mk_true(V->z);
    V->alive = Z3_mk_true(V->z);
    V->returned = Z3_mk_false(V->z);
    V->pc_taint = V->alive_taint = V->ret_taint = 0;
    V->nenv = 0;
    V->depth = 0;
}

VVal verify_run_top(Verifier *V, const Item *fn, VCell **finals) {
    reset_state(V);
    if (!V->inputs) {
        fresh_inputs(V, fn);
    } else {
        for (int i = 0; i < fn->u.fn.nparams; i++) {
            VCell *c = &V->inputs[i];
            verify_bind(V, fn->u.fn.params[i]->sym,
                        verify_new_cell(V, c->elem, c->array, c->val, c->len, c->taint));
        }
    }
    if (fn->u.fn.requires) { /* assumed: the callers promise it, and checked it without a trap */
        bool collect = V->collect;
        V->collect = false;
        VVal r = verify_expr(V, fn->u.fn.requires);
        V->collect = collect;
        V->assume = verify_and(V, V->assume, verify_and(V, V->alive, r.t));
        V->alive = Z3_mk_true(V->z);
    }
    V->ret = modelled_scalar(fn->u.fn.ret)
                 ? fresh_const(V, "noreturn", verify_sort(V, fn->u.fn.ret))
                 : NULL;
    for (int i = 0; i < fn->u.fn.nparams; i++)
        finals[i] = verify_lookup(V, fn->u.fn.params[i]->sym);
    verify_block(V, fn->u.fn.body);
    return (VVal){V->ret, V->ret_taint};
}
