/* check_facts.c: each checked function's roundings and guards as typed entries on its
 * item (check.h, CheckFacts), read from ops.def's columns once, for the passes after
 * the checker: E-IMPL-NUMERICS here (check_summary.c), guard elision and verify's
 * reasons later. The walk visits every expression of the body, children before the
 * operation, in the order of the text. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "check/check_internal.h"

typedef struct FactWalk {
    const Item *fn;
    CheckRounding *r;
    int nr, capr;
    CheckGuard *g;
    int ng, capg;
    const Item **callees;
    int nc, capc;
} FactWalk;

static void *grow(void *items, int *cap, int len, size_t size) {
    if (len < *cap) return items;
    *cap = *cap ? *cap * 2 : 8;
    void *more = realloc(items, size * (size_t)*cap);
    if (!more) abort();
    return more;
}

static void add_rounding(FactWalk *w, CheckRounding r) {
    w->r = grow(w->r, &w->capr, w->nr, sizeof *w->r);
    w->r[w->nr++] = r;
}

/* One entry per trap kind of BITS, all of node. */
static void add_guards(FactWalk *w, unsigned bits, const void *node, Span span, const Expr *a,
                       const Expr *b, const Item *callee) {
    for (int k = 0; k < GK_COUNT; k++) {
        if (!(bits & (1u << k))) continue;
        w->g = grow(w->g, &w->capg, w->ng, sizeof *w->g);
        w->g[w->ng++] = (CheckGuard){(GuardKind)k, span, w->fn, node, {a, b}, callee};
    }
}

static void add_callee(FactWalk *w, const Item *fn) {
    for (int i = 0; i < w->nc; i++)
        if (w->callees[i] == fn) return;
    w->callees = grow(w->callees, &w->capc, w->nc, sizeof *w->callees);
    w->callees[w->nc++] = fn;
}

static void walk_expr(FactWalk *w, const Expr *e);

static void walk_binary(FactWalk *w, const Expr *e) {
    const OperatorInfo *op = ast_binop(e->u.binary.op);
    const Expr *l = e->u.binary.lhs, *r = e->u.binary.rhs;
    walk_expr(w, l);
    walk_expr(w, r);
    if (op->rounding == RND_ONCE && type_is_compute_float(e->type))
        add_rounding(
            w, (CheckRounding){.kind = ROUND_ARITH, .type = e->type, .node = e, .span = e->span});
    if (l->type && type_is_int(l->type)) add_guards(w, op->guards, e, e->span, l, r, NULL);
}

static void walk_convert(FactWalk *w, const Expr *e) {
    const Type *from = e->u.convert.arg->type, *to = e->u.convert.to;
    walk_expr(w, e->u.convert.arg);
    if (!from || !to || type_equal(from, to)) return;
    if (type_is_float(to) || type_is_float(from))
        add_rounding(
            w, (CheckRounding){
                   .kind = ROUND_CONVERT, .from = from, .type = to, .node = e, .span = e->span});
    unsigned bits = 0;
    if (type_is_int(to)) bits = type_is_float(from) ? GB(FLOAT_CONVERT) : GB(CONVERT);
    if (to->kind == TY_F8E4M3) bits = GB(E4M3);
    add_guards(w, bits, e, e->span, e->u.convert.arg, NULL, NULL);
}

/* The type a signature names for a rounding builtin: its result's, or (a statement
 * call) its last argument's. */
static const Type *builtin_type(const Expr *e) {
    if (ast_op(e->u.call.builtin)->rounding == RND_OUTWARD)
        return e->u.call.nargs == 7 && e->u.call.args[5]->type &&
                       e->u.call.args[5]->type->kind == TY_VIEW
                   ? e->u.call.args[5]->type->u.view.elem
                   : NULL;
    if (e->type && e->type->kind != TY_VOID) return e->type;
    return e->u.call.nargs ? e->u.call.args[e->u.call.nargs - 1]->type : e->type;
}

static bool rounds(OpRounding r) {
    return r == RND_ONCE || r == RND_STOCHASTIC || r == RND_UNORDERED || r == RND_LIBM ||
           r == RND_OUTWARD;
}

static void walk_call(FactWalk *w, const Expr *e) {
    Builtin b = e->u.call.builtin;
    const Expr *a = e->u.call.nargs ? e->u.call.args[0] : NULL;
    const Expr *a2 = e->u.call.nargs > 1 ? e->u.call.args[1] : NULL;
    for (int i = 0; i < e->u.call.nargs; i++) walk_expr(w, e->u.call.args[i]);
    if (b == BI_NONE) {
        const Item *fn = e->u.call.fn;
        if (!fn) return;
        add_callee(w, fn);
        bool views = false;
        for (int i = 0; i < fn->u.fn.nparams; i++)
            views |= fn->u.fn.params[i]->type && fn->u.fn.params[i]->type->kind == TY_VIEW;
        add_guards(w, (views ? GB(EXTENT) : 0) | (fn->u.fn.requires ? GB(REQUIRES) : 0), e, e->span,
                   a, a2, fn);
        return;
    }
    const OpInfo *op = ast_op(b);
    const Type *t = builtin_type(e);
    if (rounds(op->rounding) && t)
        add_rounding(
            w, (CheckRounding){
                   .kind = ROUND_BUILTIN, .type = t, .builtin = b, .node = e, .span = e->span});
    unsigned bits = op->guards;
    if (op->family == FAM_EXACT && !(e->type && type_is_signed(e->type))) bits &= ~GB(OVERFLOW);
    add_guards(w, bits, e, e->span, a, a2, NULL);
}

static void walk_reduce(FactWalk *w, const Expr *e) {
    walk_expr(w, e->u.reduce.lo);
    walk_expr(w, e->u.reduce.count);
    walk_expr(w, e->u.reduce.body);
    walk_expr(w, e->u.reduce.into);
    const Type *t = e->u.reduce.body->type;
    if (type_is_compute_float(t) && (e->u.reduce.op == RED_ADD || e->u.reduce.op == RED_MUL))
        add_rounding(w, (CheckRounding){.kind = ROUND_REDUCE,
                                        .type = t,
                                        .op = e->u.reduce.op,
                                        .mode = e->u.reduce.mode,
                                        .on_device = e->u.reduce.on_device,
                                        .node = e,
                                        .span = e->span});
}

static void walk_expr(FactWalk *w, const Expr *e) {
    if (!e) return;
    switch (e->kind) {
    case EXPR_UNARY:
        walk_expr(w, e->u.unary.operand);
        if (e->u.unary.op == UN_NEG && e->type && type_is_signed(e->type) &&
            e->u.unary.operand->kind != EXPR_INT)
            add_guards(w, ast_unop(UN_NEG)->guards, e, e->span, e->u.unary.operand, NULL, NULL);
        break;
    case EXPR_BINARY: walk_binary(w, e); break;
    case EXPR_INDEX:
        walk_expr(w, e->u.index.index);
        add_guards(w, ast_form_guards(FORM_INDEX), e, e->span, e->u.index.base, e->u.index.index,
                   NULL);
        break;
    case EXPR_CONVERT: walk_convert(w, e); break;
    case EXPR_CALL: walk_call(w, e); break;
    case EXPR_REDUCE: walk_reduce(w, e); break;
    case EXPR_MEMBER: walk_expr(w, e->u.member.base); break;
    default: break;
    }
}

static void walk_block(FactWalk *w, const Block *b);

static void walk_assign(FactWalk *w, const Stmt *s) {
    static const BinaryOp ops[] = {[ASSIGN_ADD] = BIN_ADD,
                                   [ASSIGN_SUB] = BIN_SUB,
                                   [ASSIGN_MUL] = BIN_MUL,
                                   [ASSIGN_DIV] = BIN_DIV};
    const Expr *target = s->u.assign.target;
    walk_expr(w, s->u.assign.value);
    walk_expr(w, target);
    if (s->u.assign.op == ASSIGN_SET || !target->type) return;
    if (type_is_compute_float(target->type))
        add_rounding(
            w, (CheckRounding){
                   .kind = ROUND_ARITH, .type = target->type, .node = target, .span = s->span});
    if (type_is_int(target->type))
        add_guards(w, ast_binop(ops[s->u.assign.op])->guards, target, s->span, target,
                   s->u.assign.value, NULL);
}

static void walk_stmt(FactWalk *w, const Stmt *s) {
    switch (s->kind) {
    case STMT_LET: walk_expr(w, s->u.let.init); break;
    case STMT_ASSIGN: walk_assign(w, s); break;
    case STMT_EXPR: walk_expr(w, s->u.expr); break;
    case STMT_IF:
        walk_expr(w, s->u.if_.cond);
        walk_block(w, s->u.if_.then);
        if (s->u.if_.els) walk_stmt(w, s->u.if_.els);
        break;
    case STMT_FOR:
        walk_expr(w, s->u.for_.b.lo);
        walk_expr(w, s->u.for_.b.count);
        walk_block(w, s->u.for_.body);
        break;
    case STMT_RETURN: walk_expr(w, s->u.ret.value); break;
    case STMT_PARALLEL:
        walk_expr(w, s->u.parallel.b.count);
        walk_block(w, s->u.parallel.body);
        break;
    case STMT_BLOCKS:
        walk_expr(w, s->u.blocks.grid.count);
        walk_expr(w, s->u.blocks.threads.count);
        walk_block(w, s->u.blocks.body);
        break;
    case STMT_BUFFER:
        walk_expr(w, s->u.alloc.count);
        add_guards(w, ast_form_guards(FORM_BUFFER), s, s->span, s->u.alloc.count, NULL, NULL);
        break;
    case STMT_SHARED: walk_expr(w, s->u.alloc.count); break;
    case STMT_BARRIER: break;
    case STMT_BLOCK: walk_block(w, s->u.block); break;
    }
}

static void walk_block(FactWalk *w, const Block *b) {
    for (int i = 0; i < b->nstmts; i++) walk_stmt(w, b->stmts[i]);
}

/* A copy of N items of SIZE in the program's arena (NULL when none), freeing ITEMS. */
static void *keep(Arena *a, void *items, int n, size_t size) {
    void *kept = n ? arena_alloc(a, size * (size_t)n) : NULL;
    if (n) memcpy(kept, items, size * (size_t)n);
    free(items);
    return kept;
}

void check_record_facts(Checker *c) {
    Program *p = c->prog;
    for (int i = 0; i < p->nitems; i++) {
        Item *it = p->items[i];
        if (it->kind != ITEM_FN) continue;
        FactWalk w = {.fn = it};
        walk_block(&w, it->u.fn.body);
        CheckFacts *f = arena_alloc(p->arena, sizeof *f);
        f->roundings = keep(p->arena, w.r, w.nr, sizeof *w.r);
        f->nroundings = w.nr;
        f->guards = keep(p->arena, w.g, w.ng, sizeof *w.g);
        f->nguards = w.ng;
        f->callees = keep(p->arena, (void *)w.callees, w.nc, sizeof *w.callees);
        f->ncallees = w.nc;
        it->u.fn.facts = f;
    }
}

const CheckFacts *check_facts(const Item *fn) {
    assert(fn->kind == ITEM_FN && fn->u.fn.facts && "a function of a checked program");
    return fn->u.fn.facts;
}
