/* verify_stmt.c: CAIRN statements and calls in the Z3 model, and the prologue of the
 * function under verification (see verify.h). Both arms of an `if` run, each under its
 * condition; every write is guarded by the activity it happens under. Calls are inlined,
 * with the callee's view extents and `requires` checked at the call as the lowering
 * checks them on entry; a recursive call, a cooperative region or a construct not
 * modelled gives everything it may write a fresh value with its reason (loops, regions
 * and reductions: verify_loop.c). */
#include <stdlib.h>
#include <string.h>

#include "verify/verify_internal.h"

#define VERIFY_MAX_DEPTH 16

static bool modelled_scalar(const Type *t) {
    return t && (type_is_scalar(t) || type_is_storage_float(t));
}

static Z3_ast zero_stored(Verifier *V, const Type *t) {
    if (t->kind == TY_BOOL) return Z3_mk_false(V->z);
    return Z3_mk_int(V->z, 0, verify_cell_sort(V, t));
}

/* ---- what a statement may write ---- */

typedef struct Writes {
    const Symbol **syms;
    int n, cap;
    bool returns;
} Writes;

static void add_write(Writes *w, const Expr *e) {
    if (e && e->kind == EXPR_INDEX) e = e->u.index.base;
    if (!e || e->kind != EXPR_NAME || !e->u.name.sym) return;
    for (int i = 0; i < w->n; i++)
        if (w->syms[i] == e->u.name.sym) return;
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 16;
        w->syms = realloc(w->syms, sizeof *w->syms * (size_t)w->cap);
        if (!w->syms) abort();
    }
    w->syms[w->n++] = e->u.name.sym;
}

static void writes_stmts(const Block *b, Writes *w);

/* A call writes what it passes to an `rw` parameter; an atomic its element; another
 * builtin (observe aside) any array it is given. */
static void writes_call(const Expr *e, Writes *w) {
    const Item *fn = e->u.call.builtin == BI_NONE ? e->u.call.fn : NULL;
    for (int i = 0; i < e->u.call.nargs; i++) {
        const Expr *a = e->u.call.args[i];
        if (fn && i < fn->u.fn.nparams) {
            const Type *pt = fn->u.fn.params[i]->type;
            if (pt->kind == TY_VIEW && pt->u.view.access == ACCESS_RW) add_write(w, a);
        } else if (ast_builtin_is_atomic(e->u.call.builtin)) {
            if (i == 0) add_write(w, a);
        } else if (e->u.call.builtin != BI_OBSERVE && a->kind == EXPR_NAME && a->u.name.sym &&
                   a->u.name.sym->type && a->u.name.sym->type->kind == TY_VIEW) {
            add_write(w, a);
        }
    }
}

/* Every expression, wherever it sits (a loop's bounds, a buffer's count, a region's
 * grid: ast_visit_exprs' walk, which the syntax keeps whole): a call's or a scan's
 * writes. */
static void writes_visit(Expr *e, void *ctx) {
    Writes *w = ctx;
    if (e->kind == EXPR_CALL) writes_call(e, w);
    if (e->kind == EXPR_REDUCE && e->u.reduce.scan) add_write(w, e->u.reduce.into);
}

/* The statements' own writes: assignments' targets, and whether one returns. No
 * default case: a new kind of statement does not compile here until someone says what
 * it writes. */
static void writes_stmt(const Stmt *s, Writes *w) {
    switch (s->kind) {
    case STMT_ASSIGN: add_write(w, s->u.assign.target); break;
    case STMT_RETURN: w->returns = true; break;
    case STMT_IF:
        writes_stmts(s->u.if_.then, w);
        if (s->u.if_.els) writes_stmt(s->u.if_.els, w);
        break;
    case STMT_FOR: writes_stmts(s->u.for_.body, w); break;
    case STMT_PARALLEL: writes_stmts(s->u.parallel.body, w); break;
    case STMT_BLOCKS: writes_stmts(s->u.blocks.body, w); break;
    case STMT_BLOCK: writes_stmts(s->u.block, w); break;
    case STMT_LET:
    case STMT_EXPR:
    case STMT_BUFFER:
    case STMT_SHARED:
    case STMT_BARRIER: break; /* what they write is in their expressions, or new */
    }
}

static void writes_stmts(const Block *b, Writes *w) {
    for (int i = 0; i < b->nstmts; i++) writes_stmt(b->stmts[i], w);
}

bool verify_havoc_writes(Verifier *V, Block *b, Expr *e, unsigned bit) {
    Writes w = {0};
    if (b) {
        ast_visit_exprs(b, writes_visit, &w);
        writes_stmts(b, &w);
    }
    if (e) ast_visit_expr(e, writes_visit, &w);
    VCell *done[64];
    int ndone = 0;
    for (int i = 0; i < w.n; i++) {
        VCell *c = verify_lookup(V, w.syms[i]);
        bool seen = false;
        for (int k = 0; k < ndone && !seen; k++) seen = done[k] == c;
        if (!c || seen) continue;
        verify_havoc_cell(V, c, bit);
        if (ndone < 64) done[ndone++] = c;
    }
    free(w.syms);
    return w.returns;
}

/* ---- statements ---- */

static void write_cell(Verifier *V, VCell *c, Z3_ast now, unsigned taint) {
    c->val = Z3_mk_ite(V->z, verify_active(V), now, c->val);
    c->taint |= taint | V->pc_taint;
}

static void let_stmt(Verifier *V, Stmt *s) {
    const Symbol *sym = s->u.let.sym;
    if (!modelled_scalar(sym->type)) {
        verify_unmodelled(V, s, s->span, "a let of this type");
        V->alive_taint |= verify_taint_bit(V, s->span, "a let of this type is not modelled");
        return;
    }
    VVal v = verify_expr(V, s->u.let.init);
    if (!v.t) v = verify_havoc(V, sym->type, s->span, "this value");
    unsigned taint = v.taint | V->pc_taint;
    Z3_ast stored = verify_stored(V, v, sym->type, &taint);
    verify_bind(V, sym,
                verify_new_cell(V, (VCell){.elem = sym->type, .val = stored, .taint = taint}));
}

static void assign_stmt(Verifier *V, Stmt *s) {
    Expr *target = s->u.assign.target;
    const Type *t = target->type;
    VVal v = verify_expr(V, s->u.assign.value);
    if (!v.t) return;
    if (target->kind == EXPR_INDEX) {
        Z3_ast i;
        unsigned taint;
        VCell *c = verify_element(V, target, &i, &taint);
        if (!c) return;
        if (s->u.assign.op != ASSIGN_SET)
            v = verify_arith(V, (VArith){ast_assign_binop(s->u.assign.op), t, s, s->span},
                             verify_load(V, Z3_mk_select(V->z, c->val, i), t, taint), v);
        unsigned vt = v.taint | taint;
        Z3_ast stored = verify_stored(V, v, t, &vt);
        write_cell(V, c, Z3_mk_store(V->z, c->val, i, stored), vt);
        return;
    }
    const Symbol *sym = target->kind == EXPR_NAME ? target->u.name.sym : NULL;
    VCell *c = sym ? verify_lookup(V, sym) : NULL;
    if (!c || c->array) {
        verify_unmodelled(V, s, s->span, "assigning to this expression");
        return;
    }
    if (s->u.assign.op != ASSIGN_SET)
        v = verify_arith(V, (VArith){ast_assign_binop(s->u.assign.op), t, s, s->span},
                         verify_load(V, c->val, t, c->taint), v);
    unsigned vt = v.taint;
    Z3_ast stored = verify_stored(V, v, t, &vt);
    write_cell(V, c, stored, vt);
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

static void return_stmt(Verifier *V, Stmt *s, const Type *ret) {
    VVal v = s->u.ret.value ? verify_expr(V, s->u.ret.value) : (VVal){NULL, 0, NULL};
    Z3_ast active = verify_active(V);
    if (v.t && V->ret) {
        unsigned taint = v.taint | V->pc_taint;
        Z3_ast stored = verify_stored(V, v, ret, &taint);
        V->ret = Z3_mk_ite(V->z, active, stored, V->ret);
        V->ret_taint |= taint;
    }
    V->returned = verify_or(V, V->returned, active);
    V->alive_taint |= V->pc_taint;
}

/* buffer b:T[n]: cairn_zeroed traps "buffer too large" when n * sizeof(T) does not fit
 * a size_t (n = 0 allocates nothing). Whether the memory exists is the machine's: the
 * model assumes an allocation the guard lets through succeeds. */
static void buffer_stmt(Verifier *V, Stmt *s) {
    VVal n = verify_expr(V, s->u.alloc.count);
    const Type *elem = s->u.alloc.elem;
    Z3_ast len = verify_to_u64(V, n.t, s->u.alloc.count->type);
    uint64_t size = elem->kind == TY_BOOL ? 1 : (uint64_t)type_bits(elem) / 8;
    Z3_ast ok = verify_or(V, Z3_mk_eq(V->z, len, verify_u64(V, 0)),
                          Z3_mk_bvule(V->z, len, verify_u64(V, UINT64_MAX / (size ? size : 1))));
    verify_guard(V, (VSite){VK_ALLOC, s, s->span, NULL}, ok, n.taint);
    Z3_ast zero = Z3_mk_const_array(V->z, Z3_mk_bv_sort(V->z, 64), zero_stored(V, elem));
    VCell *c = verify_new_cell(
        V, (VCell){.elem = elem, .array = true, .val = zero, .len = len, .taint = n.taint});
    c->place = s->u.alloc.place;
    verify_bind(V, s->u.alloc.sym, c);
}

/* A blocks region's grid and thread counts, run on the host before the launch (their
 * guards, their calls' writes), and the launch's limits the lowering checks after them
 * (lower_blocks): at most 1024 threads a block, 2^31 - 1 blocks. */
static void launch_shape(Verifier *V, Stmt *s) {
    const Binder *shape[2] = {&s->u.blocks.grid, &s->u.blocks.threads};
    Z3_ast n[2];
    unsigned taint[2];
    for (int k = 0; k < 2; k++) {
        const Type *t = shape[k]->sym ? shape[k]->sym->type : shape[k]->count->type;
        VVal lo = shape[k]->lo ? verify_expr(V, shape[k]->lo)
                               : (VVal){verify_int_const(V, t, 0), 0, NULL};
        VVal hi = verify_expr(V, shape[k]->count);
        n[k] = verify_lane_count(V, lo, hi, t);
        taint[k] = lo.taint | hi.taint;
    }
    Expr *threads = shape[1]->count, *grid = shape[0]->count;
    verify_guard(V, (VSite){VK_LAUNCH, threads, threads->span, "a block of more than 1024 threads"},
                 Z3_mk_bvule(V->z, n[1], verify_u64(V, 1024)), taint[1]);
    verify_guard(V,
                 (VSite){VK_LAUNCH, grid, grid->span, "more blocks than one device launch holds"},
                 Z3_mk_bvule(V->z, n[0], verify_u64(V, 0x7fffffff)), taint[0]);
}

/* Cooperative regions, shared arrays, barriers: not modelled; what the region writes
 * holds a fresh value after it, and everything after depends on it. A region's grid
 * and thread counts run on the host before the launch, as modelled code: their guards
 * are properties and their calls' writes happen. */
static void coop_stmt(Verifier *V, Stmt *s) {
    const char *what = s->kind == STMT_BLOCKS   ? "a cooperative blocks region"
                       : s->kind == STMT_SHARED ? "a shared array"
                                                : "a barrier";
    if (s->kind == STMT_BLOCKS) launch_shape(V, s);
    verify_unmodelled(V, s, s->span, what);
    unsigned bit =
        verify_taint_bit(V, s->span, arena_printf(V->prog->arena, "%s is not modelled", what));
    if (s->kind == STMT_BLOCKS) {
        verify_skipped(V, NULL, s->u.blocks.body, s->span, what);
        verify_havoc_writes(V, s->u.blocks.body, NULL, bit);
    }
    V->alive_taint |= bit;
}

static void stmt(Verifier *V, Stmt *s) {
    switch (s->kind) {
    case STMT_LET: let_stmt(V, s); break;
    case STMT_ASSIGN: assign_stmt(V, s); break;
    case STMT_EXPR: verify_expr(V, s->u.expr); break;
    case STMT_IF: if_stmt(V, s); break;
    case STMT_FOR: verify_for(V, s); break;
    case STMT_RETURN:
        return_stmt(V, s, V->depth ? V->stack[V->depth - 1]->u.fn.ret : V->running->u.fn.ret);
        break;
    case STMT_PARALLEL: verify_parallel(V, s); break;
    case STMT_BUFFER: buffer_stmt(V, s); break;
    case STMT_BLOCK: verify_block(V, s->u.block); break;
    default: coop_stmt(V, s); break;
    }
}

void verify_block(Verifier *V, Block *b) {
    int mark = V->nenv;
    for (int i = 0; i < b->nstmts; i++) stmt(V, b->stmts[i]);
    V->nenv = mark;
}
