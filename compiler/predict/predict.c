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

/* ---- polynomials ---- */

void predict_poly_free(Poly *p) {
    free(p->t);
    p->t = NULL;
    p->n = 0;
}

bool predict_poly_is_zero(const Poly *p) {
    for (int i = 0; i < p->n; i++)
        if (p->t[i].coef != 0) return false;
    return true;
}

static void poly_add_term(Poly *p, const PTerm *t) {
    if (t->coef == 0) return;
    for (int i = 0; i < p->n; i++)
        if (memcmp(p->t[i].pow, t->pow, sizeof t->pow) == 0) {
            p->t[i].coef += t->coef;
            return;
        }
    p->t = realloc(p->t, sizeof *p->t * (size_t)(p->n + 1));
    if (!p->t) abort();
    p->t[p->n++] = *t;
}

static Poly poly_const(double c) {
    Poly p = {0};
    PTerm t = {.coef = c};
    poly_add_term(&p, &t);
    return p;
}

static Poly poly_copy(const Poly *a) {
    Poly p = {0};
    for (int i = 0; i < a->n; i++) poly_add_term(&p, &a->t[i]);
    return p;
}

/* *acc += scale * a */
void predict_poly_add(Poly *acc, const Poly *a, double scale) {
    for (int i = 0; i < a->n; i++) {
        PTerm t = a->t[i];
        t.coef *= scale;
        poly_add_term(acc, &t);
    }
}

static Poly poly_mul(const Poly *a, const Poly *b) {
    Poly p = {0};
    for (int i = 0; i < a->n; i++)
        for (int j = 0; j < b->n; j++) {
            PTerm t = {.coef = a->t[i].coef * b->t[j].coef};
            for (int k = 0; k < PRED_MAX_ATOMS; k++)
                t.pow[k] = (unsigned char)(a->t[i].pow[k] + b->t[j].pow[k]);
            poly_add_term(&p, &t);
        }
    return p;
}

bool predict_poly_eval(const Poly *p, const double *values, double *out) {
    double sum = 0;
    for (int i = 0; i < p->n; i++) {
        double term = p->t[i].coef;
        for (int k = 0; k < PRED_MAX_ATOMS; k++) {
            if (!p->t[i].pow[k]) continue;
            if (isnan(values[k])) return false;
            term *= pow(values[k], p->t[i].pow[k]);
        }
        sum += term;
    }
    *out = sum;
    return true;
}

char *predict_poly_text(const Poly *p, const PAtoms *atoms) {
    int order[PRED_MAX_ATOMS]; /* atoms alphabetically, so formulas read the same everywhere */
    for (int k = 0; k < atoms->n; k++) {
        int j = k;
        while (j > 0 && strcmp(atoms->name[order[j - 1]], atoms->name[k]) > 0)
            order[j] = order[j - 1], j--;
        order[j] = k;
    }
    StrBuf sb = {0};
    for (int i = 0; i < p->n; i++) {
        const PTerm *t = &p->t[i];
        if (t->coef == 0) continue;
        double c = fabs(t->coef);
        bool any = false;
        sb_puts(&sb, sb.len ? (t->coef < 0 ? " - " : " + ") : (t->coef < 0 ? "-" : ""));
        for (int k = 0; k < PRED_MAX_ATOMS; k++) any |= t->pow[k] != 0;
        if (c != 1 || !any) sb_printf(&sb, "%.15g", c);
        bool first = c == 1;
        for (int o = 0; o < atoms->n; o++)
            for (int e = 0; e < t->pow[order[o]]; e++) {
                sb_printf(&sb, "%s%s", first ? "" : "*", atoms->name[order[o]]);
                first = false;
            }
    }
    return sb.data ? sb.data : strdup("0");
}

/* ---- atoms and bindings ---- */

typedef struct PBind {
    const Symbol *sym;
    Poly value;
} PBind;

typedef struct Pred {
    Program *prog;
    PAtoms *atoms;
    PCounts *c;
    Poly mult; /* how many times the current statement runs */
    PBind *env;
    int nenv, capenv;
    int depth;
} Pred;

static Poly atom(Pred *P, const char *name) {
    int k = 0;
    while (k < P->atoms->n && strcmp(P->atoms->name[k], name) != 0) k++;
    if (k == P->atoms->n) {
        if (k == PRED_MAX_ATOMS) {
            P->atoms->overflow = true;
            return poly_const(1);
        }
        P->atoms->name[P->atoms->n++] = arena_strdup(P->prog->arena, name);
    }
    PTerm t = {.coef = 1};
    t.pow[k] = 1;
    Poly p = {0};
    poly_add_term(&p, &t);
    return p;
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

/* An integer expression as a polynomial: + - * of names and literals; anything else is
 * an opaque atom spelled as the source. */
static Poly value_poly(Pred *P, const Expr *e) {
    switch (e->kind) {
    case EXPR_INT: return poly_const((double)e->u.int_lit.value);
    case EXPR_CONVERT: return value_poly(P, e->u.convert.arg);
    case EXPR_NAME: {
        const Symbol *s = e->u.name.sym;
        const Poly *bound = s ? check_lookup(P, s) : NULL;
        if (bound) return poly_copy(bound);
        if (s && s->kind == SYM_CONST) return value_poly(P, s->decl.item->u.const_.value);
        return atom(P, e->u.name.name);
    }
    case EXPR_BINARY: {
        BinaryOp op = e->u.binary.op;
        if (op == BIN_ADD || op == BIN_SUB || op == BIN_MUL) {
            Poly a = value_poly(P, e->u.binary.lhs), b = value_poly(P, e->u.binary.rhs), r = {0};
            if (op == BIN_MUL) r = poly_mul(&a, &b);
            else {
                predict_poly_add(&r, &a, 1);
                predict_poly_add(&r, &b, op == BIN_ADD ? 1 : -1);
            }
            predict_poly_free(&a);
            predict_poly_free(&b);
            return r;
        }
        break;
    }
    default: break;
    }
    char *text = cairn_print_expr(e);
    char *wrapped = arena_printf(P->prog->arena, "(%s)", text);
    free(text);
    return atom(P, wrapped);
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

static void access(Pred *P, Expr *index_expr, bool write, bool read) {
    const Symbol *s =
        index_expr->u.index.base->kind == EXPR_NAME ? index_expr->u.index.base->u.name.sym : NULL;
    double bytes = elem_bytes(s ? s->type : NULL);
    PSpace sp = space_of(s);
    if (read) count(&P->c->read[sp], P, bytes);
    if (write) count(&P->c->written[sp], P, bytes);
    expr(P, index_expr->u.index.index);
}

/* Runs body(ctx) `trips` times more than the current statement. */
static void repeat(Pred *P, Poly trips, void (*body)(Pred *, void *), void *ctx) {
    Poly saved = P->mult;
    P->mult = poly_mul(&saved, &trips);
    predict_poly_free(&trips);
    body(P, ctx);
    predict_poly_free(&P->mult);
    P->mult = saved;
}

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

typedef struct LoopCtx {
    const Symbol *var;
    Expr *hi;
    Block *body;
    Expr *yield;
} LoopCtx;

static void loop_body(Pred *P, void *ctx) {
    LoopCtx *lc = ctx;
    int mark = P->nenv;
    if (lc->var) bind(P, lc->var, value_poly(P, lc->hi)); /* a bound by it: at most hi */
    if (lc->body) block(P, lc->body);
    if (lc->yield) expr(P, lc->yield);
    unbind_to(P, mark);
}

static void reduce(Pred *P, Expr *e) {
    Poly trips = trips_of(P, e->u.reduce.lo, e->u.reduce.count);
    LoopCtx lc = {e->u.reduce.var_sym, e->u.reduce.count, NULL, e->u.reduce.body};
    repeat(P, poly_copy(&trips), loop_body, &lc);
    int k = op_kind(e->type);
    bool exact =
        type_is_float(e->type) && e->u.reduce.mode == MODE_PARALLEL && e->u.reduce.op == RED_ADD;
    Poly saved = P->mult;
    P->mult = poly_mul(&saved, &trips);
    if (exact) count(&P->c->ops[OP_F64], P, 12); /* TwoSum steps: about twelve additions a term */
    else if (k >= 0) count(&P->c->ops[k], P, 1);
    if (e->u.reduce.scan && e->u.reduce.into) {
        const Symbol *s = e->u.reduce.into->kind == EXPR_NAME ? e->u.reduce.into->u.name.sym : NULL;
        count(&P->c->written[space_of(s)], P, elem_bytes(s ? s->type : NULL));
    }
    predict_poly_free(&P->mult);
    P->mult = saved;
    predict_poly_free(&trips);
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
    Poly mn = poly_mul(&m, &n), mk = poly_mul(&m, &k), kn = poly_mul(&k, &n),
         mnk = poly_mul(&mn, &k);
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
        P->mult = poly_mul(&saved, parts[i].elems);
        Poly *slot = parts[i].write ? &P->c->written[space_of(parts[i].s)]
                                    : &P->c->read[space_of(parts[i].s)];
        count(slot, P, elem_bytes(parts[i].s ? parts[i].s->type : NULL));
        predict_poly_free(&P->mult);
    }
    P->mult = poly_mul(&saved, &mnk);
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
    if (b == BI_MMA_UNORDERED) {
        matmul(P, e);
        return;
    }
    for (int i = 0; i < e->u.call.nargs; i++) expr(P, e->u.call.args[i]);
    if (b == BI_MM_ENCLOSE) { /* the bracket GEMM: counted as two f64 operations a product */
        Poly m = value_poly(P, e->u.call.args[0]), n = value_poly(P, e->u.call.args[1]),
             k = value_poly(P, e->u.call.args[2]);
        Poly mn = poly_mul(&m, &n), mnk = poly_mul(&mn, &k), saved = P->mult;
        P->mult = poly_mul(&saved, &mnk);
        count(&P->c->ops[OP_F64], P, 2);
        predict_poly_free(&P->mult);
        P->mult = saved;
        predict_poly_free(&m), predict_poly_free(&n), predict_poly_free(&k), predict_poly_free(&mn),
            predict_poly_free(&mnk);
        return;
    }
    int k =
        b == BI_QUANTIZE || b == BI_QUANTIZE_STOCHASTIC ? OP_F32 : op_kind(e->type); /* x / scale */
    if (k >= 0 && b != BI_TO_BITS && b != BI_FROM_BITS && b != BI_OBSERVE)
        count(&P->c->ops[k], P, 1);
}

static void expr(Pred *P, Expr *e) {
    if (!e) return;
    switch (e->kind) {
    case EXPR_UNARY: expr(P, e->u.unary.operand); break;
    case EXPR_BINARY: {
        expr(P, e->u.binary.lhs);
        expr(P, e->u.binary.rhs);
        BinaryOp op = e->u.binary.op;
        int k = op_kind(e->u.binary.lhs->type);
        if (k >= 0 && !(op >= BIN_EQ && op <= BIN_OR)) count(&P->c->ops[k], P, 1);
        break;
    }
    case EXPR_CALL: call(P, e); break;
    case EXPR_INDEX: access(P, e, false, true); break;
    case EXPR_CONVERT: expr(P, e->u.convert.arg); break;
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
        if (compound && k >= 0) count(&P->c->ops[k], P, 1);
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
        LoopCtx lc = {b->sym, b->count, s->kind == STMT_FOR ? s->u.for_.body : s->u.parallel.body,
                      NULL};
        repeat(P, trips_of(P, b->lo, b->count), loop_body, &lc);
        break;
    }
    case STMT_BLOCKS: {
        Poly g = trips_of(P, s->u.blocks.grid.lo, s->u.blocks.grid.count);
        Poly t = trips_of(P, s->u.blocks.threads.lo, s->u.blocks.threads.count);
        LoopCtx lc = {NULL, NULL, s->u.blocks.body, NULL};
        repeat(P, poly_mul(&g, &t), loop_body, &lc);
        predict_poly_free(&g);
        predict_poly_free(&t);
        break;
    }
    case STMT_RETURN: expr(P, s->u.ret.value); break;
    case STMT_BUFFER: {
        expr(P, s->u.alloc.count);
        Poly n = value_poly(P, s->u.alloc.count), saved = P->mult;
        P->mult = poly_mul(&saved, &n);
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
    Pred P = {.prog = p, .atoms = atoms, .c = out, .mult = poly_const(1)};
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
