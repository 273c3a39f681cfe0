/* check_facts.c: each checked function's roundings and guards as typed entries on its
 * item (check.h, CheckFacts), read from ops.def's columns once, for the passes after
 * the checker: E-IMPL-NUMERICS here (check_summary.c), guard elision and verify's
 * reasons later. The walk visits every expression of the body, children before the
 * operation, in the order of the text. */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check_internal.h"

typedef struct FactWalk {
    const Item *fn;
    bool in_device, prologue; /* where the walk is (CheckRounding) */
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
    r.in_device = w->in_device;
    r.prologue = w->prologue;
    w->r = grow(w->r, &w->capr, w->nr, sizeof *w->r);
    w->r[w->nr++] = r;
}

/* One entry per trap kind of BITS, each the site (its node, span, operands, callee) in
 * the walk's function. */
static void add_guards(FactWalk *w, unsigned bits, CheckGuard site) {
    site.fn = w->fn;
    for (int k = 0; k < GK_COUNT; k++) {
        if (!(bits & (1u << k))) continue;
        w->g = grow(w->g, &w->capg, w->ng, sizeof *w->g);
        site.kind = (GuardKind)k;
        w->g[w->ng++] = site;
    }
}

static void add_callee(FactWalk *w, const Item *fn) {
    for (int i = 0; i < w->nc; i++)
        if (w->callees[i] == fn) return;
    w->callees = grow(w->callees, &w->capc, w->nc, sizeof *w->callees);
    w->callees[w->nc++] = fn;
}

/* ---- literals ---- */

/* A decimal number as its significant digits and a power of ten: value = D * 10^exp,
 * D without leading or trailing zeros ("" for zero). Reads "12.50e-3" and printf's
 * "%.Ne" output alike. */
static void decimal_normal(const char *s, char *digits, size_t cap, long *exp) {
    size_t n = 0;
    long frac = 0;
    bool after_point = false;
    for (; *s && *s != 'e' && *s != 'E'; s++) {
        if (*s == '.') after_point = true;
        if (*s < '0' || *s > '9' || (n == 0 && *s == '0')) {
            if (*s == '0' && after_point) frac++; /* a leading zero after the point */
            continue;
        }
        if (n + 1 < cap) digits[n++] = *s;
        frac += after_point;
    }
    *exp = (*s ? strtol(s + 1, NULL, 10) : 0) - frac;
    while (n > 0 && digits[n - 1] == '0') n--, (*exp)++;
    digits[n] = '\0';
}

/* Is the decimal literal exactly the double d (which holds the rounded literal)?
 * glibc's printf writes a double's exact decimal expansion (at most 767 digits). */
static bool literal_exact(const char *text, double d) {
    char want[1200], have[1200], printed[1300];
    long e1, e2;
    decimal_normal(text, want, sizeof want, &e1);
    snprintf(printed, sizeof printed, "%.1100e", fabs(d));
    decimal_normal(printed, have, sizeof have, &e2);
    return strcmp(want, have) == 0 && (want[0] == '\0' || e1 == e2);
}

/* A literal of a compute-float type is rounded once into it (strtod/strtof round
 * correctly to nearest; the lowering writes the result as a hex float): a rounding
 * unless the type holds its value exactly. An overflow to infinity is not listed. */
static void literal(FactWalk *w, const Expr *e, const Expr *lit) {
    const Type *t = e->type;
    if (!t || !type_is_compute_float(t)) return;
    bool rounded;
    if (lit->kind == EXPR_INT) {
        uint64_t v = lit->u.int_lit.value;
        int bits = 64 - (v ? __builtin_clzll(v) + __builtin_ctzll(v) : 64);
        rounded = bits > (t->kind == TY_F32 ? 24 : 53);
    } else {
        const char *text = lit->u.float_lit.text;
        double d = t->kind == TY_F32 ? (double)strtof(text, NULL) : strtod(text, NULL);
        rounded = !isinf(d) && !literal_exact(text, d);
    }
    if (rounded)
        add_rounding(w,
                     (CheckRounding){.kind = ROUND_LITERAL, .type = t, .node = e, .span = e->span});
}

/* ---- expressions ---- */

static void walk_expr(FactWalk *w, const Expr *e);

static void walk_binary(FactWalk *w, const Expr *e) {
    const OperatorInfo *op = ast_binop(e->u.binary.op);
    const Expr *l = e->u.binary.lhs, *r = e->u.binary.rhs;
    walk_expr(w, l);
    walk_expr(w, r);
    if (op->rounding == RND_ONCE && type_is_compute_float(e->type))
        add_rounding(
            w, (CheckRounding){.kind = ROUND_ARITH, .type = e->type, .node = e, .span = e->span});
    if (l->type && type_is_int(l->type))
        add_guards(w, op->guards, (CheckGuard){.node = e, .span = e->span, .operands = {l, r}});
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
    add_guards(w, bits,
               (CheckGuard){.node = e, .span = e->span, .operands = {e->u.convert.arg, NULL}});
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
           r == RND_OUTWARD || r == RND_CR;
}

/* The arguments in the order the generated code evaluates them: an atomic's element
 * (its index) after its operands. */
static void walk_args(FactWalk *w, const Expr *e) {
    int n = e->u.call.nargs;
    bool atomic = ast_builtin_is_atomic(e->u.call.builtin);
    for (int i = atomic ? 1 : 0; i < n; i++) walk_expr(w, e->u.call.args[i]);
    if (atomic && n) walk_expr(w, e->u.call.args[0]);
}

/* A rounding builtin's entry: the operand type its contract names in from (an atomic's
 * element, a multiply's inputs) and the mma's instruction family. */
static CheckRounding builtin_rounding(const Expr *e, const Type *t) {
    CheckRounding r = {
        .kind = ROUND_BUILTIN, .type = t, .builtin = e->u.call.builtin, .node = e, .span = e->span};
    Expr *const *a = e->u.call.args;
    if (r.builtin == BI_ATOMIC_ADD_UNORDERED) {
        r.from = a[0]->type;
        const Expr *base = a[0]->kind == EXPR_INDEX ? a[0]->u.index.base : NULL;
        const Symbol *s = base && base->kind == EXPR_NAME ? base->u.name.sym : NULL;
        r.shared =
            s && s->type && s->type->kind == TY_VIEW && s->type->u.view.origin == VIEW_SHARED;
    } else if (r.builtin == BI_MMA_UNORDERED && e->u.call.nargs == 6) {
        r.from = a[4]->type->u.view.elem;
    } else if (r.builtin == BI_MMA_UNORDERED) {
        r.from = a[1]->type->u.frag.elem;
        r.mma_sync = a[0]->type->u.frag.family == FRAG_MMA;
    }
    return r;
}

static void walk_call(FactWalk *w, const Expr *e) {
    Builtin b = e->u.call.builtin;
    const Expr *a = e->u.call.nargs ? e->u.call.args[0] : NULL;
    const Expr *a2 = e->u.call.nargs > 1 ? e->u.call.args[1] : NULL;
    walk_args(w, e);
    if (b == BI_NONE) {
        const Item *fn = e->u.call.fn;
        if (!fn) return;
        add_callee(w, fn);
        bool views = false;
        for (int i = 0; i < fn->u.fn.nparams; i++)
            views |= fn->u.fn.params[i]->type && fn->u.fn.params[i]->type->kind == TY_VIEW;
        add_guards(w, (views ? GB(EXTENT) : 0) | (fn->u.fn.requires ? GB(REQUIRES) : 0),
                   (CheckGuard){.node = e, .span = e->span, .operands = {a, a2}, .callee = fn});
        return;
    }
    const OpInfo *op = ast_op(b);
    const Type *t = builtin_type(e);
    if (rounds(op->rounding) && t) add_rounding(w, builtin_rounding(e, t));
    unsigned bits = op->guards;
    if (op->family == FAM_EXACT && !(e->type && type_is_signed(e->type))) bits &= ~GB(OVERFLOW);
    add_guards(w, bits, (CheckGuard){.node = e, .span = e->span, .operands = {a, a2}});
}

/* A reduction: its bounds (a warp's has none), then its terms and its rounding; a device
 * sum's terms run on the device, after the rounding is named. */
static void walk_reduce(FactWalk *w, const Expr *e) {
    const Type *t = e->u.reduce.body->type;
    bool floats =
        type_is_compute_float(t) && (e->u.reduce.op == RED_ADD || e->u.reduce.op == RED_MUL);
    CheckRounding r = {.kind = ROUND_REDUCE,
                       .type = t,
                       .op = e->u.reduce.op,
                       .mode = e->u.reduce.mode,
                       .on_device = e->u.reduce.on_device,
                       .scan = e->u.reduce.scan,
                       .node = e,
                       .span = e->span};
    if (e->u.reduce.mode != MODE_WARP) {
        walk_expr(w, e->u.reduce.lo);
        walk_expr(w, e->u.reduce.count);
    }
    bool device_sum = e->u.reduce.mode == MODE_PARALLEL && e->u.reduce.on_device;
    if (device_sum && floats) add_rounding(w, r);
    bool was = w->in_device;
    if (e->u.reduce.mode == MODE_PARALLEL) w->in_device = e->u.reduce.on_device;
    walk_expr(w, e->u.reduce.body);
    w->in_device = was;
    walk_expr(w, e->u.reduce.into);
    if (!device_sum && floats) add_rounding(w, r);
}

static void walk_expr(FactWalk *w, const Expr *e) {
    if (!e) return;
    switch (e->kind) {
    case EXPR_INT:
    case EXPR_FLOAT: literal(w, e, e); break;
    case EXPR_UNARY:
        if (e->u.unary.op == UN_NEG && e->u.unary.operand->kind == EXPR_INT) {
            literal(w, e, e->u.unary.operand); /* one constant, of the negation's type */
            break;
        }
        walk_expr(w, e->u.unary.operand);
        if (e->u.unary.op == UN_NEG && e->type && type_is_signed(e->type) &&
            e->u.unary.operand->kind != EXPR_INT)
            add_guards(
                w, ast_unop(UN_NEG)->guards,
                (CheckGuard){.node = e, .span = e->span, .operands = {e->u.unary.operand, NULL}});
        break;
    case EXPR_BINARY: walk_binary(w, e); break;
    case EXPR_INDEX:
        walk_expr(w, e->u.index.index);
        add_guards(w, ast_form_guards(FORM_INDEX),
                   (CheckGuard){.node = e,
                                .span = e->span,
                                .operands = {e->u.index.base, e->u.index.index}});
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
    const Expr *target = s->u.assign.target;
    walk_expr(w, s->u.assign.value);
    walk_expr(w, target);
    if (s->u.assign.op == ASSIGN_SET || !target->type) return;
    if (type_is_compute_float(target->type))
        add_rounding(
            w, (CheckRounding){
                   .kind = ROUND_ARITH, .type = target->type, .node = target, .span = s->span});
    if (type_is_int(target->type))
        add_guards(
            w, ast_binop(ast_assign_binop(s->u.assign.op))->guards,
            (CheckGuard){.node = target, .span = s->span, .operands = {target, s->u.assign.value}});
}

/* A parallel region (a, device: its placement) or a cooperative one (a and b). */
static void walk_region(FactWalk *w, const Binder *a, const Binder *b, bool device,
                        const Block *body) {
    walk_expr(w, a->lo);
    walk_expr(w, a->count);
    if (b) walk_expr(w, b->lo), walk_expr(w, b->count);
    bool was = w->in_device;
    w->in_device = device;
    walk_block(w, body);
    w->in_device = was;
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
        walk_region(w, &s->u.parallel.b, NULL, s->u.parallel.on_device, s->u.parallel.body);
        break;
    case STMT_BLOCKS:
        walk_region(w, &s->u.blocks.grid, &s->u.blocks.threads, true, s->u.blocks.body);
        break;
    case STMT_BUFFER:
        walk_expr(w, s->u.alloc.count);
        add_guards(w, ast_form_guards(FORM_BUFFER),
                   (CheckGuard){.node = s, .span = s->span, .operands = {s->u.alloc.count, NULL}});
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

static CheckFacts *kept_facts(Arena *a, FactWalk *w) {
    CheckFacts *f = arena_alloc(a, sizeof *f);
    f->roundings = keep(a, w->r, w->nr, sizeof *w->r);
    f->nroundings = w->nr;
    f->guards = keep(a, w->g, w->ng, sizeof *w->g);
    f->nguards = w->ng;
    f->callees = keep(a, (void *)w->callees, w->nc, sizeof *w->callees);
    f->ncallees = w->nc;
    return f;
}

/* A function: what its entry checks (each view parameter's extent, then the requires
 * clause), then its body. */
static void walk_fn(FactWalk *w, const Item *it) {
    w->prologue = true;
    for (int i = 0; i < it->u.fn.nparams; i++) {
        const Type *t = it->u.fn.params[i]->type;
        if (t && t->kind == TY_VIEW && t->u.view.extent) walk_expr(w, t->u.view.extent);
    }
    walk_expr(w, it->u.fn.requires);
    w->prologue = false;
    walk_block(w, it->u.fn.body);
}

void check_record_facts(Checker *c) {
    Program *p = c->prog;
    for (int i = 0; i < p->nitems; i++) {
        Item *it = p->items[i];
        FactWalk w = {.fn = it};
        if (it->kind == ITEM_FN) {
            walk_fn(&w, it);
            it->u.fn.facts = kept_facts(p->arena, &w);
        } else if (it->kind == ITEM_CONST) {
            walk_expr(&w, it->u.const_.value);
            it->u.const_.facts = kept_facts(p->arena, &w);
        }
    }
}

const CheckFacts *check_facts(const Item *it) {
    const CheckFacts *f = it->kind == ITEM_FN      ? it->u.fn.facts
                          : it->kind == ITEM_CONST ? it->u.const_.facts
                                                   : NULL;
    assert(f && "a function or const of a checked program");
    return f;
}
