/* lower_guard.c: guards proved for a whole loop, checked once before it (issue 33).
 *
 * A host loop (`for`, `reduce OP for`, a scan) whose body indexes views by affine
 * expressions of its binders (`a[i * n + k]`, `o[i - 1]`) runs in two copies:
 *
 *     <the loop's check>
 *     if (ok) { the loop, those guards left out } else { the loop, every guard kept }
 *
 * The check computes, in C's overflow-reporting builtins (so it never traps and never
 * overflows), an interval [lo, hi] for every integer +, - and * of the body whose
 * operands are intervals themselves: a binder's [first, last] (the loop's own, and those
 * of nested `for` and `reduce for` loops whose bounds are intervals), a name bound
 * before the loop and never assigned (a parameter, an immutable let, an outer binder),
 * an integer literal, or an immutable let of the body bound to an interval. ok holds
 * when each such operation's interval lies in its type (no value it takes during the
 * loop can overflow: the exact results of +, - and * over a box are bounded by the
 * box's corners) and each indexed element's interval lies in [0, the view's extent).
 * So in the first copy those guards can never fire, and every guard left in it fires
 * where and when it fires in the second. When ok is false (or cannot be computed), the
 * second copy, the loop as it always was, runs: a program that traps traps with the
 * same message at the same place either way, and every value is the same.
 *
 * The second copy is lowered with nothing new elided (L->fallback), so a nest of depth d
 * has at most d + 1 copies of its innermost body. Loops holding lanes (parallel
 * regions, pooled reductions, blocks) are not copied, nor loops calling a user
 * function: a second call site changes what the C compiler inlines, and with it the
 * order it gives the operands of a commutative float operation, which decides the
 * host's NaN when both operands are NaNs (x86 keeps the first one's payload and sign;
 * tests/device/programs/lanes_exact.cairn's ref_f32 showed it). Each elided guard is listed in
 * the receipt as proved ("guards": per function, what was proved and what is kept,
 * line:col); every site stays recorded through lower_at (the second copy names them),
 * so cairn verify --coverage sees the same places. cairn build --no-elide lowers every
 * loop as the second copy only.
 *
 * The first copy of an innermost loop (one holding no `for` or `reduce for`) is
 * unrolled four times (`#pragma GCC unroll 4`, which gcc and clang read): its remaining
 * guards (a running prefix's overflow, `h[k] + 1`, a data index) still branch per
 * element, in the written order, so every trap is the one the loop always raised; what
 * the unrolling removes is the loop's own increment, compare and branch per element,
 * which on a one-cycle loop cost as much as the guard (tests/bench/bench_kernels.sh:
 * the prefix sum and the histogram went from 1.2-1.7x hand C to about 1.0x). */
#include <assert.h>
#include <inttypes.h>
#include <string.h>

#include "lower/lower_c_internal.h"

#define FMT(...)       arena_printf(L->arena, __VA_ARGS__)
#define GUARD_MAX_SYMS 256

/* An integer interval as two C expressions of the node's type. */
typedef struct Range {
    const char *lo, *hi;
} Range;

/* One loop's analysis: the names with intervals, the names bound inside (no value
 * before the loop), the check's text and the nodes it proves. */
typedef struct Plan {
    Lower *L;
    const Symbol *ranged[GUARD_MAX_SYMS];
    Range range[GUARD_MAX_SYMS];
    int nranged;
    const Symbol *bound[GUARD_MAX_SYMS];
    int nbound;
    const char *ok; /* the check's flag */
    bool refused;   /* the loop holds lanes, or more names than the tables hold */
    bool nested;    /* the loop holds a loop (a `for` or a `reduce for`) */
    int mark;       /* L->nproved before this loop's proofs */
    Span loop;
} Plan;

static bool sym_in(const Symbol *const *set, int n, const Symbol *s) {
    for (int k = 0; k < n; k++)
        if (set[k] == s) return true;
    return false;
}

static void bind_inside(Plan *P, const Symbol *s) {
    if (!s) return;
    if (P->nbound == GUARD_MAX_SYMS) P->refused = true;
    else P->bound[P->nbound++] = s;
}

static void bind_range(Plan *P, const Symbol *s, Range r) {
    if (!s) return;
    if (P->nranged == GUARD_MAX_SYMS) {
        P->refused = true;
        return;
    }
    P->ranged[P->nranged] = s;
    P->range[P->nranged++] = r;
}

static void prove(Plan *P, const Expr *e) {
    Lower *L = P->L;
    if (lower_guard_proved(L, e)) return; /* an enclosing loop's check holds it */
    if (L->nproved == L->capproved) {
        int cap = L->capproved ? 2 * L->capproved : 64;
        const Expr **more = arena_alloc(L->arena, sizeof *more * (size_t)cap);
        if (L->nproved) memcpy(more, L->proved, sizeof *more * (size_t)L->nproved);
        L->proved = more, L->capproved = cap;
    }
    L->proved[L->nproved++] = e;
}

bool lower_guard_proved(const Lower *L, const Expr *e) {
    for (int k = L->nproved - 1; k >= 0; k--)
        if (L->proved[k] == e) return true;
    return false;
}

/* ---- the check's text ---- */

static void require(Plan *P, const char *cond) { lower_emit(P->L, "%s &= %s;", P->ok, cond); }

/* A new variable of type t holding a OP b (OP "add", "sub" or "mul"), the check
 * requiring that it did not overflow; returns its name. */
static const char *checked(Plan *P, const char *t, const char *op, const char *a, const char *b) {
    Lower *L = P->L;
    const char *v = lower_new_tmp(L);
    lower_emit(L, "%s %s;", t, v);
    require(P, FMT("!__builtin_%s_overflow(%s, %s, &%s)", op, a, b, v));
    return v;
}

/* The interval a binder takes over [lo, hi) (the check requires lo < hi). */
static Range binder_range(Plan *P, const char *t, const char *lo, const char *hi) {
    const char *last = checked(P, t, "sub", hi, "1");
    require(P, arena_printf(P->L->arena, "(%s < %s)", lo, hi));
    return (Range){lo, last};
}

static Range op_range(Plan *P, const Type *type, BinaryOp op, Range a, Range b) {
    Lower *L = P->L;
    const char *t = lower_c_scalar(type);
    Range r;
    if (op == BIN_ADD || op == BIN_SUB) {
        const char *name = op == BIN_ADD ? "add" : "sub";
        r.lo = checked(P, t, name, a.lo, op == BIN_ADD ? b.lo : b.hi);
        r.hi = checked(P, t, name, a.hi, op == BIN_ADD ? b.hi : b.lo);
        return r;
    }
    assert(op == BIN_MUL);
    if (!type_is_signed(type)) { /* both operands at least 0: the product grows with each */
        r.lo = checked(P, t, "mul", a.lo, b.lo);
        r.hi = checked(P, t, "mul", a.hi, b.hi);
        return r;
    }
    const char *p[4];
    const char *ends[4][2] = {{a.lo, b.lo}, {a.lo, b.hi}, {a.hi, b.lo}, {a.hi, b.hi}};
    for (int k = 0; k < 4; k++) p[k] = checked(P, t, "mul", ends[k][0], ends[k][1]);
    r.lo = lower_new_tmp(L), r.hi = lower_new_tmp(L);
    lower_emit(L, "%s %s = %s < %s ? %s : %s, %s = %s > %s ? %s : %s;", t, r.lo, p[0], p[1], p[0],
               p[1], r.hi, p[0], p[1], p[0], p[1]);
    lower_emit(L, "%s = %s < %s ? %s : %s; %s = %s > %s ? %s : %s;", r.lo, p[2], r.lo, p[2], r.lo,
               r.hi, p[2], r.hi, p[2], r.hi);
    lower_emit(L, "%s = %s < %s ? %s : %s; %s = %s > %s ? %s : %s;", r.lo, p[3], r.lo, p[3], r.lo,
               r.hi, p[3], r.hi, p[3], r.hi);
    return r;
}

/* ---- the walk ---- */

static bool walk_expr(Plan *P, const Expr *e, Range *out);
static void walk_block(Plan *P, const Block *b);

static bool name_range(Plan *P, const Symbol *s, Range *out) {
    for (int k = P->nranged - 1; k >= 0; k--)
        if (P->ranged[k] == s) return *out = P->range[k], true;
    if (sym_in(P->bound, P->nbound, s) || s->mut || !type_is_int(s->type)) return false;
    if (s->kind != SYM_PARAM && s->kind != SYM_LOCAL && s->kind != SYM_LOOP) return false;
    if (lower_is_thread_sym(P->L, s)) return false;
    const char *c = lower_sym_c(P->L, s);
    *out = (Range){c, c};
    return true;
}

static void walk_index(Plan *P, const Expr *e) {
    Range r;
    bool ranged = walk_expr(P, e->u.index.index, &r);
    const Symbol *view = lower_expr_sym(e->u.index.base);
    if (!ranged || !view || !lower_is_view(view->type) || sym_in(P->bound, P->nbound, view) ||
        lower_is_thread_sym(P->L, view) || view->kind == SYM_CONST)
        return;
    Lower *L = P->L;
    const char *len = lower_sym_len(L, view);
    if (type_is_signed(e->u.index.index->type))
        require(P, FMT("(%s >= 0 && (uint64_t)%s < %s)", r.lo, r.hi, len));
    else require(P, FMT("((uint64_t)%s < %s)", r.hi, len));
    prove(P, e);
}

static bool walk_binary(Plan *P, const Expr *e, Range *out) {
    Range a, b;
    bool ra = walk_expr(P, e->u.binary.lhs, &a);
    bool rb = walk_expr(P, e->u.binary.rhs, &b);
    BinaryOp op = e->u.binary.op;
    if (!ra || !rb || !type_is_int(e->type) || (op != BIN_ADD && op != BIN_SUB && op != BIN_MUL))
        return false;
    *out = op_range(P, e->type, op, a, b);
    prove(P, e);
    return true;
}

/* A nested loop's binder: its interval when its bounds have intervals, else a name
 * bound inside. */
static void walk_binder(Plan *P, const Symbol *var, const Type *t, const Expr *lo,
                        const Expr *count) {
    Range rl = {"0", "0"}, rc;
    bool ranged = lo ? walk_expr(P, lo, &rl) : true;
    ranged = walk_expr(P, count, &rc) && ranged;
    if (!var) return;
    if (!ranged) {
        bind_inside(P, var);
        return;
    }
    Lower *L = P->L;
    if (!lo) rl.lo = FMT("((%s)0)", lower_c_scalar(t));
    bind_range(P, var, binder_range(P, lower_c_scalar(t), rl.lo, rc.hi));
}

static bool walk_reduce(Plan *P, const Expr *e) {
    if (e->u.reduce.mode != MODE_FOR || e->u.reduce.on_device) {
        P->refused = true; /* lanes: their functions would be written twice */
        return false;
    }
    const Type *it = e->u.reduce.var_sym ? e->u.reduce.var_sym->type : e->u.reduce.count->type;
    P->nested = true;
    walk_binder(P, e->u.reduce.var_sym, it, e->u.reduce.lo, e->u.reduce.count);
    Range r;
    walk_expr(P, e->u.reduce.body, &r);
    return false;
}

static bool walk_expr(Plan *P, const Expr *e, Range *out) {
    if (!e || P->refused) return false;
    Lower *L = P->L;
    switch (e->kind) {
    case EXPR_INT:
        if (!type_is_int(e->type) || e->u.int_lit.overflow) return false;
        out->lo = out->hi =
            FMT("((%s)UINT64_C(%" PRIu64 "))", lower_c_scalar(e->type), e->u.int_lit.value);
        return true;
    case EXPR_NAME: return e->u.name.sym && name_range(P, e->u.name.sym, out);
    case EXPR_BINARY: return walk_binary(P, e, out);
    case EXPR_INDEX: walk_index(P, e); return false;
    case EXPR_UNARY: walk_expr(P, e->u.unary.operand, out); return false;
    case EXPR_CONVERT: walk_expr(P, e->u.convert.arg, out); return false;
    case EXPR_REDUCE: return walk_reduce(P, e);
    case EXPR_CALL: {
        if (e->u.call.fn) P->refused = true; /* a user function: see the file's comment */
        Range r;
        for (int k = 0; k < e->u.call.nargs; k++) walk_expr(P, e->u.call.args[k], &r);
        return false;
    }
    default: return false;
    }
}

static void walk_let(Plan *P, const Stmt *s) {
    Range r;
    const Symbol *sym = s->u.let.sym;
    if (walk_expr(P, s->u.let.init, &r) && sym && !sym->mut && type_is_int(sym->type))
        bind_range(P, sym, r);
    else bind_inside(P, sym);
}

static void walk_stmt(Plan *P, const Stmt *s) {
    Range r;
    switch (s->kind) {
    case STMT_LET: walk_let(P, s); break;
    case STMT_ASSIGN:
        walk_expr(P, s->u.assign.value, &r);
        walk_expr(P, s->u.assign.target, &r);
        break;
    case STMT_EXPR: walk_expr(P, s->u.expr, &r); break;
    case STMT_RETURN: walk_expr(P, s->u.ret.value, &r); break;
    case STMT_IF:
        walk_expr(P, s->u.if_.cond, &r);
        walk_block(P, s->u.if_.then);
        if (s->u.if_.els) walk_stmt(P, s->u.if_.els);
        break;
    case STMT_FOR:
        P->nested = true;
        walk_binder(P, s->u.for_.b.sym, lower_binder_type(&s->u.for_.b), s->u.for_.b.lo,
                    s->u.for_.b.count);
        walk_block(P, s->u.for_.body);
        break;
    case STMT_BUFFER:
        walk_expr(P, s->u.alloc.count, &r);
        bind_inside(P, s->u.alloc.sym);
        break;
    case STMT_BLOCK: walk_block(P, s->u.block); break;
    default: P->refused = true; break; /* lanes, blocks, shared arrays, barriers */
    }
}

static void walk_block(Plan *P, const Block *b) {
    for (int k = 0; b && k < b->nstmts && !P->refused; k++) walk_stmt(P, b->stmts[k]);
}

/* ---- the receipt's list ---- */

static cJSON *item_guards(Lower *L, const char *list) {
    const char *name = L->item ? L->item->name : "";
    cJSON *fn = cJSON_GetObjectItemCaseSensitive(L->guards, name);
    if (!fn) {
        fn = cJSON_AddObjectToObject(L->guards, name);
        cJSON_AddArrayToObject(fn, "proved");
        cJSON_AddArrayToObject(fn, "kept");
    }
    return cJSON_GetObjectItemCaseSensitive(fn, list);
}

static const char *guard_kind(const Expr *e) {
    return e->kind == EXPR_INDEX ? "index" : e->kind == EXPR_REDUCE ? "scan index" : "overflow";
}

static void list_proved(Plan *P) {
    Lower *L = P->L;
    cJSON *proved = item_guards(L, "proved");
    for (int k = P->mark; k < L->nproved; k++) {
        const Expr *e = L->proved[k];
        Span s = e->kind == EXPR_REDUCE ? e->u.reduce.into->span : e->span;
        cJSON *g = cJSON_CreateObject();
        cJSON_AddStringToObject(g, "at", FMT("%d:%d", s.line, s.col));
        cJSON_AddStringToObject(g, "guard", guard_kind(e));
        cJSON_AddStringToObject(
            g, "by",
            FMT("loop bounds, checked once before the loop at %d:%d", P->loop.line, P->loop.col));
        cJSON_AddItemToArray(proved, g);
    }
}

void lower_guard_kept(Lower *L, Span s) {
    if (L->fallback || L->in_device || !L->guards) return;
    cJSON *kept = item_guards(L, "kept");
    const char *at = FMT("%d:%d", s.line, s.col);
    cJSON *g;
    cJSON_ArrayForEach(g, kept) if (strcmp(g->valuestring, at) == 0) return;
    cJSON_AddItemToArray(kept, cJSON_CreateString(at));
}

/* ---- the two copies ---- */

void lower_loop_head(Lower *L, const char *type, const char *i, const char *lo, const char *hi) {
    if (L->unroll) lower_emit(L, "#pragma GCC unroll 4");
    L->unroll = false; /* the loop's own body holds no loop: nothing else to mark */
    lower_emit(L, "for (%s %s = %s; %s < %s; %s++) {", type, i, lo, i, hi, i);
}

/* Plans the loop g into P, its check written to `check`; true when it proves a guard. */
static bool plan_loop(Lower *L, const GuardLoop *g, Plan *P, StrBuf *check) {
    *P = (Plan){.L = L, .mark = L->nproved, .loop = g->span};
    StrBuf *saved = L->out;
    L->out = check;
    P->ok = lower_new_tmp(L);
    lower_emit(L, "unsigned %s = 1;", P->ok);
    const char *t = lower_c_scalar(g->type);
    Range own = binder_range(P, t, g->lo, g->hi);
    bind_range(P, g->var, own);
    walk_block(P, g->body);
    Range r;
    if (g->yield) walk_expr(P, g->yield, &r);
    if (g->scan) { /* out[i - lo]: the count of indices within out's extent */
        const char *n = checked(P, "uint64_t", "sub", g->hi, g->lo);
        require(P, FMT("(%s <= %s)", n, lower_sym_len(L, lower_expr_sym(g->scan->u.reduce.into))));
        prove(P, g->scan);
    }
    L->out = saved;
    if (P->refused || L->nproved == P->mark) {
        L->nproved = P->mark;
        return false;
    }
    return true;
}

void lower_guarded_loop(Lower *L, const GuardLoop *g, LowerLoopEmit *emit, void *ctx) {
    if (L->opt->no_elide || L->fallback || L->in_device || L->coop_thread || L->nthread_syms) {
        emit(L, ctx);
        return;
    }
    Plan P;
    StrBuf check = {0};
    int tmp = L->tmp;
    if (!plan_loop(L, g, &P, &check)) {
        L->tmp = tmp; /* nothing proved: the loop's C as without elision */
        sb_free(&check);
        emit(L, ctx);
        return;
    }
    sb_append(L->out, check.data, check.len);
    sb_free(&check);
    list_proved(&P);
    lower_emit(L, "if (%s) {", P.ok);
    L->indent++;
    L->unroll = !P.nested;
    emit(L, ctx);
    L->unroll = false;
    L->indent--;
    L->nproved = P.mark; /* the checked copy: only what enclosing loops proved */
    lower_emit(L, "} else {");
    L->indent++;
    L->fallback++;
    emit(L, ctx);
    L->fallback--;
    L->indent--;
    lower_emit(L, "}");
}
