/* predict.c: bytes and operations of each function, as polynomials in its parameters
 * (see predict.h for the counting rules). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "syntax/syntax.h"
#include "predict/predict.h"

const char *const predict_space_names[SP_COUNT] = {"host", "device", "unified", "shared"};
const char *const predict_op_names[OP_COUNT] = {"f32",        "f64",         "int",
                                                "tensor_f16", "tensor_bf16", "tensor_fp8"};

#define PRED_MAX_DEPTH 16

/* ---- atoms and bindings ---- */

typedef struct PBind {
    const Symbol *sym;
    Poly value;
} PBind;

/* An enclosing loop: its variable's atom and range, for telling empty ranges apart. */
typedef struct PLoop {
    int atom;
    Poly lo, hi;
} PLoop;

#define PRED_MAX_LOOPS 16

typedef struct Pred {
    Program *prog;
    PAtoms *atoms;
    PCounts *c;
    Poly mult; /* how many times the current statement runs */
    PBind *env;
    int nenv, capenv;
    int depth;
    PLoop loops[PRED_MAX_LOOPS];
    int nloops;
} Pred;

static Poly named(Pred *P, const char *name, PAtomKind kind, const Poly *a, const Poly *b) {
    return predict_atom_poly(predict_atom(P->atoms, name, kind, a, b));
}

static void bind(Pred *P, const Symbol *s, Poly value) {
    if (P->nenv == P->capenv) {
        P->capenv = P->capenv ? 2 * P->capenv : 32;
        P->env = realloc(P->env, sizeof *P->env * (size_t)P->capenv);
        if (!P->env) abort();
    }
    P->env[P->nenv++] = (PBind){s, value};
}

static const Poly *check_lookup(Pred *P, const Symbol *s) {
    for (int i = P->nenv - 1; i >= 0; i--)
        if (P->env[i].sym == s) return &P->env[i].value;
    return NULL;
}

static void unbind_to(Pred *P, int mark) {
    while (P->nenv > mark) predict_poly_free(&P->env[--P->nenv].value);
}

/* The operations derived() folds or names, each spelt by its ops.def row. */
typedef enum DerivedOp { D_DIV, D_REM, D_SHL, D_SHR, D_MIN, D_MAX } DerivedOp;

static DerivedOp derived_op(const Expr *e) {
    if (e->kind == EXPR_CALL) return e->u.call.builtin == BI_MIN ? D_MIN : D_MAX;
    BinaryOp op = e->u.binary.op;
    return op == BIN_DIV ? D_DIV : op == BIN_REM ? D_REM : op == BIN_SHL ? D_SHL : D_SHR;
}

/* e = a OP b for / % << >> min max: folded when both are numbers (integer semantics), a
 * product for a shift left by a number, else a derived atom named after its text. */
static Poly derived(Pred *P, const Expr *e, Poly a, Poly b) {
    DerivedOp op = derived_op(e);
    const char *text = e->kind == EXPR_CALL ? ast_builtin_name(e->u.call.builtin)
                                            : ast_binop(e->u.binary.op)->spelling;
    double x, y;
    bool cx = predict_poly_const_value(&a, &x), cy = predict_poly_const_value(&b, &y);
    Poly r;
    if (cx && cy && !(y == 0 && (op == D_DIV || op == D_REM))) {
        double v = op == D_DIV   ? trunc(x / y)
                   : op == D_REM ? fmod(x, y)
                   : op == D_SHL ? ldexp(x, (int)y)
                   : op == D_SHR ? trunc(ldexp(x, -(int)y))
                   : op == D_MIN ? (x < y ? x : y)
                                 : (x < y ? y : x);
        r = predict_poly_const(v);
    } else if (cy && op == D_SHL) {
        Poly k = predict_poly_const(ldexp(1, (int)y));
        r = predict_poly_mul(&a, &k);
        predict_poly_free(&k);
    } else {
        if (cy && op == D_SHR) { /* a >> y is a / 2^y */
            predict_poly_free(&b);
            b = predict_poly_const(ldexp(1, (int)y));
            op = D_DIV, text = ast_binop(BIN_DIV)->spelling;
        }
        char *ta = predict_poly_text(&a, P->atoms), *tb = predict_poly_text(&b, P->atoms);
        bool fn = op == D_MIN || op == D_MAX;
        char *name = fn ? arena_printf(P->prog->arena, "%s(%s, %s)", text, ta, tb)
                        : arena_printf(P->prog->arena, "(%s %s %s)", ta, text, tb);
        PAtomKind kind = op == D_DIV   ? PA_DIV
                         : op == D_REM ? PA_REM
                         : op == D_MIN ? PA_MIN
                                       : PA_MAX;
        r = named(P, name, kind, &a, &b);
        free(ta), free(tb);
    }
    predict_poly_free(&a), predict_poly_free(&b);
    return r;
}

/* An integer expression as a polynomial: + - * of names and literals, constants and
 * what derived() folds or names; anything else an opaque atom spelled as the source. */
static Poly value_poly(Pred *P, const Expr *e) {
    switch (e->kind) {
    case EXPR_INT: return predict_poly_const((double)e->u.int_lit.value);
    case EXPR_CONVERT: return value_poly(P, e->u.convert.arg);
    case EXPR_NAME: {
        const Symbol *s = e->u.name.sym;
        const Poly *bound = s ? check_lookup(P, s) : NULL;
        if (bound) return predict_poly_copy(bound);
        if (s && s->kind == SYM_CONST) return value_poly(P, s->decl.item->u.const_.value);
        return named(P, e->u.name.name, PA_NAME, NULL, NULL);
    }
    case EXPR_UNARY:
        if (e->u.unary.op == UN_NEG) {
            Poly a = value_poly(P, e->u.unary.operand), r = {0};
            predict_poly_add(&r, &a, -1);
            predict_poly_free(&a);
            return r;
        }
        break;
    case EXPR_BINARY: {
        BinaryOp op = e->u.binary.op;
        if (op != BIN_ADD && op != BIN_SUB && op != BIN_MUL && op != BIN_DIV && op != BIN_REM &&
            op != BIN_SHL && op != BIN_SHR)
            break;
        Poly a = value_poly(P, e->u.binary.lhs), b = value_poly(P, e->u.binary.rhs), r = {0};
        if (op == BIN_MUL) r = predict_poly_mul(&a, &b);
        else if (op == BIN_ADD || op == BIN_SUB) {
            predict_poly_add(&r, &a, 1);
            predict_poly_add(&r, &b, op == BIN_ADD ? 1 : -1);
        } else return derived(P, e, a, b);
        predict_poly_free(&a);
        predict_poly_free(&b);
        return r;
    }
    case EXPR_CALL:
        if ((e->u.call.builtin == BI_MIN || e->u.call.builtin == BI_MAX) && e->type &&
            type_is_int(e->type))
            return derived(P, e, value_poly(P, e->u.call.args[0]),
                           value_poly(P, e->u.call.args[1]));
        break;
    default: break;
    }
    char *text = cairn_print_expr(e);
    char *wrapped = arena_printf(P->prog->arena, "(%s)", text);
    free(text);
    return named(P, wrapped, PA_OPAQUE, NULL, NULL);
}

/* ---- counting ---- */

static void count(Poly *slot, Pred *P, double per_run) {
    predict_poly_add(slot, &P->mult, per_run);
}

static PSpace space_of(const Symbol *s) {
    const Type *t = s ? s->type : NULL;
    if (!t || t->kind != TY_VIEW) return SP_HOST;
    if (t->u.view.origin == VIEW_SHARED) return SP_SHARED;
    if (s->kind == SYM_BUFFER && s->decl.stmt) {
        Placement pl = s->decl.stmt->u.alloc.place;
        return pl == PLACE_DEVICE ? SP_DEVICE : pl == PLACE_UNIFIED ? SP_UNIFIED : SP_HOST;
    }
    return t->u.view.place == PLACE_DEVICE    ? SP_DEVICE
           : t->u.view.place == PLACE_UNIFIED ? SP_UNIFIED
                                              : SP_HOST;
}

static double elem_bytes(const Type *t) {
    if (t && t->kind == TY_VIEW) t = t->u.view.elem;
    if (!t || (!type_is_scalar(t) && !type_is_storage_float(t))) return 0;
    return t->kind == TY_BOOL ? 1 : type_bits(t) / 8.0;
}

static int op_kind(const Type *t) {
    if (!t) return -1;
    if (t->kind == TY_F32) return OP_F32;
    if (t->kind == TY_F64) return OP_F64;
    if (type_is_int(t)) return OP_INT;
    return -1;
}

static void expr(Pred *P, Expr *e);
static void block(Pred *P, Block *b);

static Poly trips_of(Pred *P, Expr *lo, Expr *count_e) {
    if (lo) expr(P, lo);
    expr(P, count_e);
    Poly t = value_poly(P, count_e);
    if (lo) {
        Poly l = value_poly(P, lo);
        predict_poly_add(&t, &l, -1);
        predict_poly_free(&l);
    }
    return t;
}

static void access(Pred *P, Expr *index_expr, bool write, bool read) {
    const Symbol *s =
        index_expr->u.index.base->kind == EXPR_NAME ? index_expr->u.index.base->u.name.sym : NULL;
    double bytes = elem_bytes(s ? s->type : NULL);
    PSpace sp = space_of(s);
    if (read) count(&P->c->read[sp], P, bytes);
    if (write) count(&P->c->written[sp], P, bytes);
    expr(P, index_expr->u.index.index);
}

/* Runs body(ctx) `trips` times more than the current statement (no variable). */
static void repeat(Pred *P, Poly trips, void (*body)(Pred *, void *), void *ctx) {
    Poly saved = P->mult;
    P->mult = predict_poly_mul(&saved, &trips);
    predict_poly_free(&trips);
    body(P, ctx);
    predict_poly_free(&P->mult);
    P->mult = saved;
}

/* Whether p >= 0 for every value of the enclosing loops' variables it uses (checked at
 * both ends of each range: p is linear in them in every loop the language writes). */
static bool surely_nonneg(Pred *P, const Poly *p) {
    for (int l = P->nloops - 1; l >= 0; l--) {
        const PLoop *L = &P->loops[l];
        if (!predict_poly_uses(p, L->atom)) continue;
        Poly last = predict_poly_copy(&L->hi), one = predict_poly_const(1);
        predict_poly_add(&last, &one, -1);
        Poly at_lo = predict_poly_subst(p, L->atom, &L->lo),
             at_hi = predict_poly_subst(p, L->atom, &last);
        bool ok = surely_nonneg(P, &at_lo) && surely_nonneg(P, &at_hi);
        predict_poly_free(&last), predict_poly_free(&one), predict_poly_free(&at_lo),
            predict_poly_free(&at_hi);
        return ok;
    }
    return predict_poly_surely_nonneg(p, P->atoms);
}

/* p with the enclosing loops' variables at the ends that make a linear p largest (an
 * upper bound for a range whose emptiness depends on them). */
static Poly largest(Pred *P, const Poly *p) {
    Poly r = predict_poly_copy(p);
    for (int l = P->nloops - 1; l >= 0; l--) {
        const PLoop *L = &P->loops[l];
        if (!predict_poly_uses(&r, L->atom)) continue;
        Poly at_lo = predict_poly_subst(&r, L->atom, &L->lo);
        predict_poly_free(&r);
        r = at_lo; /* trip counts fall as an outer index rises (j in i..n) */
    }
    return r;
}

/* Adds scale * (the sum of `per` over the loop's variable a in lo..hi) into acc. */
/* A loop's range as add_summed sums over it: its variable's atom (-1: none), its bounds
 * and the factor every count is scaled by. */
typedef struct LoopSum {
    int a;
    const Poly *lo, *hi, *scale;
} LoopSum;

static void add_summed(Poly *acc, const Poly *per, const LoopSum *r) {
    int a = r->a;
    const Poly *lo = r->lo, *hi = r->hi, *scale = r->scale;
    Poly s = {0};
    if (a < 0 || !predict_poly_uses(per, a) || !predict_poly_sum(per, a, lo, hi, &s)) {
        Poly trips = predict_poly_copy(hi),
             fixed = a >= 0 ? predict_poly_subst(per, a, lo) : predict_poly_copy(per);
        predict_poly_add(&trips, lo, -1);
        s = predict_poly_mul(&fixed, &trips);
        predict_poly_free(&trips), predict_poly_free(&fixed);
    }
    Poly t = predict_poly_mul(&s, scale);
    predict_poly_add(acc, &t, 1);
    predict_poly_free(&s), predict_poly_free(&t);
}

static void loop_body(Pred *P, void *ctx);

/* Counts loop_body(ctx) once per index of `var in lo..hi`: the body's counts are
 * polynomials in the variable, summed exactly; a range that may be empty is gated by
 * [hi - lo > 0]. */
static void loop(Pred *P, const Symbol *var, Expr *lo_e, Expr *hi_e, void *ctx) {
    if (lo_e) expr(P, lo_e);
    expr(P, hi_e);
    Poly lo = lo_e ? value_poly(P, lo_e) : predict_poly_const(0), hi = value_poly(P, hi_e);
    Poly trips = predict_poly_copy(&hi);
    predict_poly_add(&trips, &lo, -1);
    Poly gate = predict_poly_const(1);
    if (!surely_nonneg(P, &trips)) {
        Poly bound = largest(P, &trips), diff = predict_poly_copy(&bound);
        char *text = predict_poly_text(&bound, P->atoms);
        predict_poly_free(&gate);
        gate = named(P, arena_printf(P->prog->arena, "[%s > 0]", text), PA_POS, &bound, NULL);
        free(text);
        predict_poly_add(&diff, &trips, -1);
        if (!predict_poly_is_zero(&diff)) { /* emptiness depends on an outer index: bound it */
            predict_poly_free(&hi);
            hi = predict_poly_copy(&lo);
            predict_poly_add(&hi, &bound, 1);
        }
        predict_poly_free(&bound), predict_poly_free(&diff);
    }
    PCounts inner = {0}, *outer = P->c;
    Poly saved = P->mult;
    P->c = &inner;
    P->mult = predict_poly_const(1);
    int a = -1, mark = P->nenv;
    if (var && P->nloops < PRED_MAX_LOOPS) {
        a = predict_atom(P->atoms, arena_printf(P->prog->arena, "#%d", P->nloops), PA_LOOP, NULL,
                         NULL);
        if (a >= 0) {
            bind(P, var, predict_atom_poly(a));
            P->loops[P->nloops++] = (PLoop){a, lo, hi};
        }
    }
    loop_body(P, ctx);
    if (a >= 0) P->nloops--;
    unbind_to(P, mark);
    predict_poly_free(&P->mult);
    P->c = outer;
    P->mult = saved;
    Poly scale = predict_poly_mul(&saved, &gate);
    LoopSum range = {a, &lo, &hi, &scale};
    for (int s = 0; s < SP_COUNT; s++) {
        add_summed(&outer->read[s], &inner.read[s], &range);
        add_summed(&outer->written[s], &inner.written[s], &range);
    }
    for (int k = 0; k < OP_COUNT; k++) add_summed(&outer->ops[k], &inner.ops[k], &range);
    predict_counts_free(&inner);
    predict_poly_free(&lo), predict_poly_free(&hi), predict_poly_free(&trips),
        predict_poly_free(&gate), predict_poly_free(&scale);
}

typedef struct LoopCtx {
    Block *body;
    Expr *reduce;
} LoopCtx;

/* One iteration: a loop's block, or a reduction's yield and combining step (and a
 * scan's store). */
static void loop_body(Pred *P, void *ctx) {
    LoopCtx *lc = ctx;
    if (lc->body) block(P, lc->body);
    Expr *e = lc->reduce;
    if (!e) return;
    expr(P, e->u.reduce.body);
    int k = op_kind(e->u.reduce.scan ? e->u.reduce.body->type : e->type);
    bool exact =
        type_is_float(e->type) && e->u.reduce.mode == MODE_PARALLEL && e->u.reduce.op == RED_ADD;
    if (exact) count(&P->c->ops[OP_F64], P, 12); /* TwoSum steps: about twelve additions a term */
    else if (k >= 0 && ast_form_cost(FORM_REDUCE) != COST_NONE) count(&P->c->ops[k], P, 1);
    if (e->u.reduce.scan && e->u.reduce.into) {
        const Symbol *s = e->u.reduce.into->kind == EXPR_NAME ? e->u.reduce.into->u.name.sym : NULL;
        count(&P->c->written[space_of(s)], P, elem_bytes(s ? s->type : NULL));
    }
}

static void reduce(Pred *P, Expr *e) {
    LoopCtx lc = {NULL, e};
    loop(P, e->u.reduce.var_sym, e->u.reduce.lo, e->u.reduce.count, &lc);
}

static int tensor_kind(const Type *t) {
    if (t && t->kind == TY_VIEW) t = t->u.view.elem;
    if (t && t->kind == TY_FRAGMENT) t = t->u.frag.elem;
    if (!t) return OP_TENSOR_F16;
    if (t->kind == TY_BF16) return OP_TENSOR_BF16;
    if (t->kind == TY_F8E4M3 || t->kind == TY_F8E5M2) return OP_TENSOR_FP8;
    return OP_TENSOR_F16;
}

/* mma_unordered(m, n, k, c, a, b): 2mnk operations; a and b read, c read and written. */
static void matmul(Pred *P, Expr *e) {
    Expr **a = e->u.call.args;
    if (e->u.call.nargs == 3) { /* fragments: one warp's M x N x K, for each of 32 threads */
        const Type *acc = a[0]->type;
        double flops = acc && acc->kind == TY_FRAGMENT
                           ? 2.0 * acc->u.frag.m * acc->u.frag.n * acc->u.frag.k / 32
                           : 0;
        count(&P->c->ops[tensor_kind(a[1]->type)], P, flops);
        return;
    }
    Poly m = value_poly(P, a[0]), n = value_poly(P, a[1]), k = value_poly(P, a[2]);
    Poly mn = predict_poly_mul(&m, &n), mk = predict_poly_mul(&m, &k),
         kn = predict_poly_mul(&k, &n), mnk = predict_poly_mul(&mn, &k);
    Poly saved = P->mult;
    const Symbol *sc = a[3]->kind == EXPR_NAME ? a[3]->u.name.sym : NULL;
    const Symbol *sa = a[4]->kind == EXPR_NAME ? a[4]->u.name.sym : NULL;
    const Symbol *sb = a[5]->kind == EXPR_NAME ? a[5]->u.name.sym : NULL;
    struct {
        Poly *elems;
        const Symbol *s;
        bool write;
    } parts[] = {{&mk, sa, false}, {&kn, sb, false}, {&mn, sc, false}, {&mn, sc, true}};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        P->mult = predict_poly_mul(&saved, parts[i].elems);
        Poly *slot = parts[i].write ? &P->c->written[space_of(parts[i].s)]
                                    : &P->c->read[space_of(parts[i].s)];
        count(slot, P, elem_bytes(parts[i].s ? parts[i].s->type : NULL));
        predict_poly_free(&P->mult);
    }
    P->mult = predict_poly_mul(&saved, &mnk);
    count(&P->c->ops[tensor_kind(sa ? sa->type : NULL)], P, 2);
    predict_poly_free(&P->mult);
    P->mult = saved;
    predict_poly_free(&m), predict_poly_free(&n), predict_poly_free(&k), predict_poly_free(&mn),
        predict_poly_free(&mk), predict_poly_free(&kn), predict_poly_free(&mnk);
}

static void user_call(Pred *P, Expr *e) {
    const Item *fn = e->u.call.fn;
    for (int i = 0; i < e->u.call.nargs; i++)
        if (e->u.call.args[i]->kind != EXPR_NAME) expr(P, e->u.call.args[i]);
    if (P->depth >= PRED_MAX_DEPTH) return;
    Poly *vals = calloc((size_t)fn->u.fn.nparams + 1, sizeof *vals);
    if (!vals) abort();
    for (int i = 0; i < fn->u.fn.nparams; i++) vals[i] = value_poly(P, e->u.call.args[i]);
    int mark = P->nenv;
    for (int i = 0; i < fn->u.fn.nparams; i++) bind(P, fn->u.fn.params[i]->sym, vals[i]);
    free(vals);
    P->depth++;
    block(P, fn->u.fn.body);
    P->depth--;
    unbind_to(P, mark);
}

static void call(Pred *P, Expr *e) {
    Builtin b = e->u.call.builtin;
    if (b == BI_NONE) {
        user_call(P, e);
        return;
    }
    OpCost cost = ast_op(b)->cost; /* ops.def's cost column */
    if (cost == COST_MATMUL) {
        matmul(P, e);
        return;
    }
    for (int i = 0; i < e->u.call.nargs; i++) expr(P, e->u.call.args[i]);
    if (cost == COST_GEMM) { /* the bracket GEMM: counted as two f64 operations a product */
        Poly m = value_poly(P, e->u.call.args[0]), n = value_poly(P, e->u.call.args[1]),
             k = value_poly(P, e->u.call.args[2]);
        Poly mn = predict_poly_mul(&m, &n), mnk = predict_poly_mul(&mn, &k), saved = P->mult;
        P->mult = predict_poly_mul(&saved, &mnk);
        count(&P->c->ops[OP_F64], P, 2);
        predict_poly_free(&P->mult);
        P->mult = saved;
        predict_poly_free(&m), predict_poly_free(&n), predict_poly_free(&k), predict_poly_free(&mn),
            predict_poly_free(&mnk);
        return;
    }
    int k = cost == COST_F32 ? OP_F32 : op_kind(e->type); /* quantize: x / scale */
    if (k >= 0 && cost != COST_NONE) count(&P->c->ops[k], P, 1);
}

static void expr(Pred *P, Expr *e) {
    if (!e) return;
    switch (e->kind) {
    case EXPR_UNARY: {
        expr(P, e->u.unary.operand);
        int k = op_kind(e->type);
        if (k >= 0 && ast_unop(e->u.unary.op)->cost != COST_NONE) count(&P->c->ops[k], P, 1);
        break;
    }
    case EXPR_BINARY: {
        expr(P, e->u.binary.lhs);
        expr(P, e->u.binary.rhs);
        BinaryOp op = e->u.binary.op;
        int k = op_kind(e->u.binary.lhs->type);
        if (k >= 0 && ast_binop(op)->cost != COST_NONE) count(&P->c->ops[k], P, 1);
        break;
    }
    case EXPR_CALL: call(P, e); break;
    case EXPR_INDEX: access(P, e, false, true); break;
    case EXPR_CONVERT:
        expr(P, e->u.convert.arg);
        if (op_kind(e->type) >= 0 && ast_form_cost(FORM_CONVERT) != COST_NONE)
            count(&P->c->ops[op_kind(e->type)], P, 1);
        break;
    case EXPR_REDUCE: reduce(P, e); break;
    case EXPR_MEMBER: expr(P, e->u.member.base); break;
    default: break;
    }
}

static void stmt(Pred *P, Stmt *s) {
    switch (s->kind) {
    case STMT_LET:
        expr(P, s->u.let.init);
        if (!s->u.let.mut && type_is_int(s->u.let.sym->type))
            bind(P, s->u.let.sym, value_poly(P, s->u.let.init));
        break;
    case STMT_ASSIGN: {
        expr(P, s->u.assign.value);
        Expr *t = s->u.assign.target;
        bool compound = s->u.assign.op != ASSIGN_SET;
        if (t->kind == EXPR_INDEX) access(P, t, true, compound);
        int k = op_kind(t->type);
        if (compound && k >= 0 && ast_binop(ast_assign_binop(s->u.assign.op))->cost != COST_NONE)
            count(&P->c->ops[k], P, 1);
        break;
    }
    case STMT_EXPR: expr(P, s->u.expr); break;
    case STMT_IF:
        expr(P, s->u.if_.cond);
        block(P, s->u.if_.then);
        if (s->u.if_.els) stmt(P, s->u.if_.els);
        break;
    case STMT_FOR:
    case STMT_PARALLEL: {
        const Binder *b = s->kind == STMT_FOR ? &s->u.for_.b : &s->u.parallel.b;
        LoopCtx lc = {s->kind == STMT_FOR ? s->u.for_.body : s->u.parallel.body, NULL};
        loop(P, b->sym, b->lo, b->count, &lc);
        break;
    }
    case STMT_BLOCKS: {
        Poly g = trips_of(P, s->u.blocks.grid.lo, s->u.blocks.grid.count);
        Poly t = trips_of(P, s->u.blocks.threads.lo, s->u.blocks.threads.count);
        LoopCtx lc = {s->u.blocks.body, NULL};
        repeat(P, predict_poly_mul(&g, &t), loop_body, &lc);
        predict_poly_free(&g);
        predict_poly_free(&t);
        break;
    }
    case STMT_RETURN: expr(P, s->u.ret.value); break;
    case STMT_BUFFER: {
        expr(P, s->u.alloc.count);
        Poly n = value_poly(P, s->u.alloc.count), saved = P->mult;
        P->mult = predict_poly_mul(&saved, &n);
        count(&P->c->written[space_of(s->u.alloc.sym)], P,
              elem_bytes(s->u.alloc.elem)); /* zeroed */
        predict_poly_free(&P->mult);
        P->mult = saved;
        predict_poly_free(&n);
        break;
    }
    case STMT_BLOCK: block(P, s->u.block); break;
    default: break;
    }
}

static void block(Pred *P, Block *b) {
    int mark = P->nenv;
    for (int i = 0; i < b->nstmts; i++) stmt(P, b->stmts[i]);
    unbind_to(P, mark);
}

bool predict_function(Program *p, const Item *fn, PAtoms *atoms, PCounts *out) {
    memset(out, 0, sizeof *out);
    Pred P = {.prog = p, .atoms = atoms, .c = out, .mult = predict_poly_const(1)};
    block(&P, fn->u.fn.body);
    predict_poly_free(&P.mult);
    unbind_to(&P, 0);
    free(P.env);
    return true;
}

void predict_counts_free(PCounts *c) {
    for (int i = 0; i < SP_COUNT; i++)
        predict_poly_free(&c->read[i]), predict_poly_free(&c->written[i]);
    for (int i = 0; i < OP_COUNT; i++) predict_poly_free(&c->ops[i]);
}
