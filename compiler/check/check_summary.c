/* check_summary.c: what a function does, through the functions it calls.
 *
 * Lane effects (syntactic, before bodies are checked, and again once `derive grad` has
 * made its functions): whether a function starts
 * parallel work or uses what only the host has, so that a lane calling it is refused
 * (E-PARALLEL-NEST, E-PARALLEL-CALL). View reads (syntactic too): which elements a
 * function reads of each view parameter, so that a lane passing an array another lane
 * writes reads it where the callee does (E-LANE-RACE). Rounding signatures (after checking): the kinds of
 * rounding a function performs, from the entries the checker recorded on it and on the
 * functions it calls (check_facts.c), which an implementation must share with its
 * reference (E-IMPL-NUMERICS).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "check/check_internal.h"

/* ---- lane effects ---- */

typedef struct FnFacts {
    Item *fn;
    unsigned direct;
    Item **callees;
    int ncallees, cap;
} FnFacts;

static void add_callee(FnFacts *f, Item *callee) {
    for (int i = 0; i < f->ncallees; i++)
        if (f->callees[i] == callee) return;
    if (f->ncallees == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 4;
        f->callees = realloc(f->callees, sizeof(Item *) * (size_t)f->cap);
        if (!f->callees) abort();
    }
    f->callees[f->ncallees++] = callee;
}

/* The builtin a callee not bound to a symbol spells: a plain name or a std.X.Y path. */
static Builtin callee_builtin(const Expr *callee) {
    char spelling[64];
    if (callee->kind == EXPR_NAME) return ast_builtin_lookup(callee->u.name.name);
    const Expr *path = callee->kind == EXPR_MEMBER ? callee->u.member.base : NULL;
    if (!path || path->kind != EXPR_MEMBER || path->u.member.base->kind != EXPR_NAME)
        return BI_NONE;
    snprintf(spelling, sizeof spelling, "%s.%s.%s", path->u.member.base->u.name.name,
             path->u.member.field, callee->u.member.field);
    return ast_builtin_lookup(spelling);
}

/* What a builtin does to its caller's lanes, from its where column: one that starts
 * parallel work nests; one that runs in host code only needs the host. */
static unsigned builtin_effects(Builtin b) {
    unsigned where = ast_op(b)->where;
    if (b == BI_NONE) return 0;
    if (where & W_SPAWNS) return LANE_EFFECT_PARALLEL;
    return where & (W_LANE | W_DEVICE | W_REGION) ? 0 : LANE_EFFECT_HOST_ONLY;
}

static void facts_expr(Checker *c, FnFacts *f, const Expr *e);

static void facts_exprs(Checker *c, FnFacts *f, Expr *const *es, int n) {
    for (int i = 0; i < n; i++) facts_expr(c, f, es[i]);
}

static void facts_expr(Checker *c, FnFacts *f, const Expr *e) {
    if (!e) return;
    switch (e->kind) {
    case EXPR_UNARY: facts_expr(c, f, e->u.unary.operand); break;
    case EXPR_BINARY:
        facts_expr(c, f, e->u.binary.lhs);
        facts_expr(c, f, e->u.binary.rhs);
        break;
    case EXPR_INDEX:
        facts_expr(c, f, e->u.index.base);
        facts_expr(c, f, e->u.index.index);
        break;
    case EXPR_CONVERT: facts_expr(c, f, e->u.convert.arg); break;
    case EXPR_REDUCE:
        if (e->u.reduce.mode == MODE_PARALLEL) f->direct |= LANE_EFFECT_PARALLEL;
        facts_expr(c, f, e->u.reduce.lo);
        facts_expr(c, f, e->u.reduce.count);
        facts_expr(c, f, e->u.reduce.body);
        facts_expr(c, f, e->u.reduce.into);
        break;
    case EXPR_CALL: {
        const Expr *callee = e->u.call.callee;
        Symbol *s = callee->kind == EXPR_NAME ? check_lookup(c, callee->u.name.name) : NULL;
        if (s && s->kind == SYM_FN) add_callee(f, s->decl.item);
        else if (!s) f->direct |= builtin_effects(callee_builtin(callee));
        facts_exprs(c, f, e->u.call.args, e->u.call.nargs);
        break;
    }
    default: break;
    }
}

static void facts_block(Checker *c, FnFacts *f, const Block *b);

static void facts_stmt(Checker *c, FnFacts *f, const Stmt *s) {
    switch (s->kind) {
    case STMT_LET: facts_expr(c, f, s->u.let.init); break;
    case STMT_ASSIGN:
        facts_expr(c, f, s->u.assign.target);
        facts_expr(c, f, s->u.assign.value);
        break;
    case STMT_EXPR: facts_expr(c, f, s->u.expr); break;
    case STMT_IF:
        facts_expr(c, f, s->u.if_.cond);
        facts_block(c, f, s->u.if_.then);
        if (s->u.if_.els) facts_stmt(c, f, s->u.if_.els);
        break;
    case STMT_FOR:
        facts_expr(c, f, s->u.for_.b.lo);
        facts_expr(c, f, s->u.for_.b.count);
        facts_block(c, f, s->u.for_.body);
        break;
    case STMT_RETURN: facts_expr(c, f, s->u.ret.value); break;
    case STMT_PARALLEL:
        f->direct |= LANE_EFFECT_PARALLEL;
        facts_block(c, f, s->u.parallel.body);
        break;
    case STMT_BLOCKS:
        f->direct |= LANE_EFFECT_PARALLEL;
        facts_block(c, f, s->u.blocks.body);
        break;
    case STMT_BUFFER: f->direct |= LANE_EFFECT_HOST_ONLY; break;
    case STMT_SHARED:
    case STMT_BARRIER: break;
    case STMT_BLOCK: facts_block(c, f, s->u.block); break;
    }
}

static void facts_block(Checker *c, FnFacts *f, const Block *b) {
    for (int i = 0; i < b->nstmts; i++) facts_stmt(c, f, b->stmts[i]);
}

void check_lane_effects(Checker *c) {
    Program *p = c->prog;
    FnFacts *facts = calloc((size_t)p->nitems + 1, sizeof(FnFacts));
    if (!facts) abort();
    int n = 0;
    for (int i = 0; i < p->nitems; i++) {
        if (p->items[i]->kind != ITEM_FN) continue;
        FnFacts *f = &facts[n++];
        f->fn = p->items[i];
        facts_block(c, f, f->fn->u.fn.body);
        f->fn->u.fn.lane_effects = f->direct;
    }
    /* Propagate along calls until nothing changes (bits only grow: this ends). */
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < n; i++) {
            unsigned bits = facts[i].fn->u.fn.lane_effects;
            for (int j = 0; j < facts[i].ncallees; j++)
                bits |= facts[i].callees[j]->u.fn.lane_effects;
            if (bits != facts[i].fn->u.fn.lane_effects) {
                facts[i].fn->u.fn.lane_effects = bits;
                changed = true;
            }
        }
    }
    for (int i = 0; i < n; i++) free(facts[i].callees);
    free(facts);
}

/* ---- view reads ---- */

/* One pass over a function's body. Names resolve by spelling: a local never reuses a
 * parameter's name (E-DUPLICATE), so a name spelled as a parameter is that parameter. A
 * view parameter's name seen anywhere but as an index's base or a user call's argument
 * (a builtin's argument, a method's receiver, an alias) reads any element. */
typedef struct ReadWalk {
    Checker *c;
    Item *fn;
    int *uses, *counted; /* per parameter: names seen, and those an index or call explains */
    bool changed;
} ReadWalk;

/* The parameter e names (-1: none), when it is a view (views) or a plain scalar. */
static int param_named(const Item *fn, const Expr *e, bool views) {
    if (e->kind != EXPR_NAME) return -1;
    for (int k = 0; k < fn->u.fn.nparams; k++) {
        const Param *p = fn->u.fn.params[k];
        bool view = p->type->kind == TY_VIEW;
        if (strcmp(p->name, e->u.name.name) != 0) continue;
        if (views ? view && p->type->u.view.extent : !view) return k;
        return -1;
    }
    return -1;
}

/* Joins "reads at [params[at]]" (at >= 0) or "reads any element" (at < 0) into p's set. */
static void reads_join(ReadWalk *w, int p, int at) {
    Param *prm = w->fn->u.fn.params[p];
    if (prm->reads == PARAM_READS_ANY) return;
    if (prm->reads == PARAM_READS_AT && prm->reads_at == at) return;
    if (prm->reads == PARAM_READS_NONE && at >= 0) prm->reads = PARAM_READS_AT, prm->reads_at = at;
    else prm->reads = PARAM_READS_ANY;
    w->changed = true;
}

/* A user call passing a view parameter reads what the callee reads of its parameter. */
static void reads_call(ReadWalk *w, const Expr *e) {
    const Expr *callee = e->u.call.callee;
    if (callee->kind == EXPR_MEMBER && param_named(w->fn, callee->u.member.base, true) >= 0)
        reads_join(w, param_named(w->fn, callee->u.member.base, true), -1); /* a receiver */
    Symbol *s = callee->kind == EXPR_NAME ? check_lookup(w->c, callee->u.name.name) : NULL;
    if (!s || s->kind != SYM_FN) return; /* a builtin's view arguments stay unexplained */
    const Item *g = s->decl.item;
    for (int i = 0; i < e->u.call.nargs && i < g->u.fn.nparams; i++) {
        int p = param_named(w->fn, e->u.call.args[i], true);
        const Param *q = g->u.fn.params[i];
        if (p < 0 || q->type->kind != TY_VIEW || !q->type->u.view.extent) continue;
        w->counted[p]++;
        if (q->reads == PARAM_READS_NONE) continue;
        int at = -1;
        if (q->reads == PARAM_READS_AT && q->reads_at < e->u.call.nargs)
            at = param_named(w->fn, e->u.call.args[q->reads_at], false);
        reads_join(w, p, at);
    }
}

static void reads_visit(Expr *e, void *ctx) {
    ReadWalk *w = ctx;
    int p;
    if (e->kind == EXPR_NAME && (p = param_named(w->fn, e, true)) >= 0) w->uses[p]++;
    else if (e->kind == EXPR_INDEX && (p = param_named(w->fn, e->u.index.base, true)) >= 0) {
        w->counted[p]++;
        reads_join(w, p, param_named(w->fn, e->u.index.index, false));
    } else if (e->kind == EXPR_CALL) reads_call(w, e);
}

static void reads_fn(ReadWalk *w) {
    int n = w->fn->u.fn.nparams;
    w->uses = calloc((size_t)n + 1, sizeof(int));
    w->counted = calloc((size_t)n + 1, sizeof(int));
    if (!w->uses || !w->counted) abort();
    ast_visit_exprs(w->fn->u.fn.body, reads_visit, w);
    for (int p = 0; p < n; p++)
        if (w->uses[p] > w->counted[p]) reads_join(w, p, -1);
    free(w->uses);
    free(w->counted);
}

void check_param_reads(Checker *c) {
    Program *prog = c->prog;
    for (int i = 0; i < prog->nitems; i++)
        if (prog->items[i]->kind == ITEM_FN)
            for (int k = 0; k < prog->items[i]->u.fn.nparams; k++)
                prog->items[i]->u.fn.params[k]->reads = PARAM_READS_NONE;
    /* Until nothing changes: a set only grows (none, one index, any), so this ends. */
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < prog->nitems; i++) {
            if (prog->items[i]->kind != ITEM_FN) continue;
            ReadWalk w = {.c = c, .fn = prog->items[i]};
            reads_fn(&w);
            changed |= w.changed;
        }
    }
}

/* ---- rounding signatures ---- */

typedef struct StrSet {
    char **items;
    int len, cap;
} StrSet;

static void set_add(StrSet *s, const char *text) {
    for (int i = 0; i < s->len; i++)
        if (strcmp(s->items[i], text) == 0) return;
    if (s->len == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        s->items = realloc(s->items, sizeof(char *) * (size_t)s->cap);
        if (!s->items) abort();
    }
    s->items[s->len] = strdup(text);
    if (!s->items[s->len]) abort();
    s->len++;
}

/* A function's signature from its recorded roundings (check_facts.c) and its callees'. */
typedef struct SigWalk {
    StrSet set;
    const Item **visited;
    int nvisited, cap;
} SigWalk;

static void sig_add(SigWalk *w, const char *kind, const Type *t) {
    char buf[96];
    snprintf(buf, sizeof buf, "%s %s", kind, check_type_text(t));
    set_add(&w->set, buf);
}

/* The rounding classes a signature names by the builtin's name and type: those whose
 * bits depend on how the machine computes them. A correctly rounded function has one
 * answer, so it is not named. */
static bool sig_rounds(OpRounding r) {
    return r == RND_ONCE || r == RND_STOCHASTIC || r == RND_UNORDERED || r == RND_LIBM ||
           r == RND_OUTWARD;
}

static void sig_rounding(SigWalk *w, const CheckRounding *r) {
    char buf[96];
    if (r->prologue) return; /* what callers promise, not what the function computes */
    switch (r->kind) {
    case ROUND_LITERAL: break; /* a constant: the same in any implementation */
    case ROUND_ARITH: sig_add(w, "arithmetic", r->type); break;
    case ROUND_CONVERT:
        snprintf(buf, sizeof buf, "convert %s", check_type_text(r->from));
        sig_add(w, buf, r->type);
        break;
    case ROUND_BUILTIN:
        if (sig_rounds(ast_op(r->builtin)->rounding))
            sig_add(w, ast_builtin_name(r->builtin), r->type);
        break;
    case ROUND_REDUCE:
        sig_add(w,
                r->mode == MODE_PARALLEL && r->op == RED_ADD
                    ? (r->on_device ? "unordered sum" : "exact sum")
                : r->mode == MODE_WARP ? "warp reduction"
                                       : "arithmetic",
                r->type);
        break;
    }
}

static void sig_fn(SigWalk *w, const Item *fn) {
    for (int i = 0; i < w->nvisited; i++)
        if (w->visited[i] == fn) return;
    if (w->nvisited == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 8;
        w->visited = realloc(w->visited, sizeof(Item *) * (size_t)w->cap);
        if (!w->visited) abort();
    }
    w->visited[w->nvisited++] = fn;
    const CheckFacts *f = check_facts(fn);
    for (int i = 0; i < f->nroundings; i++) sig_rounding(w, &f->roundings[i]);
    for (int i = 0; i < f->ncallees; i++) sig_fn(w, f->callees[i]);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char *check_rounding_signature(const Item *fn) {
    assert(fn->kind == ITEM_FN); /* a checked function (check_internal.h) */
    SigWalk w = {0};
    sig_fn(&w, fn);
    if (w.set.len)
        qsort(w.set.items, (size_t)w.set.len, sizeof(char *),
              cmp_str); /* items is NULL when empty */
    size_t total = 1;
    for (int i = 0; i < w.set.len; i++) total += strlen(w.set.items[i]) + 2;
    char *out = malloc(total);
    if (!out) abort();
    out[0] = '\0';
    for (int i = 0; i < w.set.len; i++) {
        if (i) strcat(out, ", ");
        strcat(out, w.set.items[i]);
        free(w.set.items[i]);
    }
    free(w.set.items);
    free(w.visited);
    return out;
}
