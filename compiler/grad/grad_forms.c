/* grad_forms.c: what in f carries an adjoint, and which statements derive grad refuses.
 *
 * A value is active when it depends on a differentiated parameter: such a parameter, an
 * immutable float let whose value is active, or a sum (a float let mut that one
 * sequential loop adds into) that is added an active value. Only active values get
 * adjoints, so data (x and target in the spec's loss) costs nothing and a call on data
 * needs no gradient.
 *
 * The statement forms (E-GRAD-FORM otherwise):
 *   - a let mut is a float sum: assigned only by `s += e`, `s -= e`, `s = s + e` or
 *     `s = s - e`, all inside one sequential loop that follows it, and read only after
 *     that loop;
 *   - a float view f writes (an output) is written as out[i] = e, once per element: i is
 *     the binder of the loop or region around the write, which is no other loop's body;
 *     one loop per path writes it, once per pass; f never reads it;
 *   - an if with a return in it is a fork of the path: a branch that does not return
 *     leaves outputs and sums alone; an if with no return in it is a statement like
 *     any other (its backward twin is an if on the same condition), and a loop body
 *     writes each output at most once on every way through its ifs;
 *   - no return inside a loop, no local float buffer, no cooperative region.
 */
#include "grad/grad_internal.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Sum {
    const Symbol *sym;
    int depth;        /* loops around its let */
    const Stmt *loop; /* the one loop that adds into it (NULL: not yet seen) */
    bool done;        /* that loop has ended: reads are its final value */
} Sum;

typedef struct Walk {
    Grad *g;
    bool validate; /* first pass: refuse bad forms; later passes only grow */
    bool changed;
    const Stmt *loops[64]; /* enclosing loops and regions, outermost first */
    int depth;
    int plain_if; /* inside a branch that does not return, of an if that does */
    int *counts;  /* writes per parameter on this way through the loop body
                             * (outside loops: loops that write it on this path) */
    Sum *sums;
    int nsums, capsums;
    const Symbol **assigned; /* every local some statement assigns */
    int nassigned, capassigned;
} Walk;

void grad_refuse(Grad *g, Span sp, Code code, const char *help, const char *fmt, ...) {
    if (g->failed) return; /* one diagnostic per derive: the first mistake */
    g->failed = true;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_error(g->diags, sp, code, help, "%s", msg);
}

const Active *grad_active_of(const Grad *g, const Symbol *sym) {
    for (int i = 0; sym && i < g->nact; i++)
        if (g->act[i].sym == sym) return &g->act[i];
    return NULL;
}

static bool add_active(Grad *g, const Symbol *sym, const char *adj, const void *region) {
    if (grad_active_of(g, sym)) return false;
    if (g->nact == g->capact) g->act = grad_grow(g->act, &g->capact, sizeof *g->act);
    if (!adj) adj = grad_fresh_name(g, arena_printf(g->arena, "d_%s", sym->name));
    assert(sym && g->nact < g->capact);
    g->act[g->nact++] = (Active){sym, adj, region};
    return true;
}

bool grad_expr_active(const Grad *g, const Expr *e) {
    if (!e) return false;
    if (e->kind == EXPR_NAME) return grad_active_of(g, e->u.name.sym) != NULL;
    if (!e->type || !type_is_compute_float(e->type)) return false;
    switch (e->kind) {
    case EXPR_INDEX: return grad_expr_active(g, e->u.index.base);
    case EXPR_UNARY: return grad_expr_active(g, e->u.unary.operand);
    case EXPR_BINARY:
        return grad_expr_active(g, e->u.binary.lhs) || grad_expr_active(g, e->u.binary.rhs);
    case EXPR_CONVERT: return grad_expr_active(g, e->u.convert.arg);
    case EXPR_REDUCE: return grad_expr_active(g, e->u.reduce.body);
    case EXPR_CALL:
        for (int i = 0; i < e->u.call.nargs; i++)
            if (grad_expr_active(g, e->u.call.args[i])) return true;
        return false;
    default: return false;
    }
}

/* ---- the walk ---- */

static Sum *sum_of(Walk *w, const Symbol *sym) {
    for (int i = 0; sym && i < w->nsums; i++)
        if (w->sums[i].sym == sym) return &w->sums[i];
    return NULL;
}

static int param_index(const Grad *g, const Symbol *sym) {
    for (int i = 0; sym && i < g->fn->u.fn.nparams; i++)
        if (g->fn->u.fn.params[i]->sym == sym) return i;
    return -1;
}

static const void *innermost_region(const Walk *w) {
    for (int i = w->depth - 1; i >= 0; i--)
        if (w->loops[i]->kind == STMT_PARALLEL) return w->loops[i];
    return NULL;
}

static const Symbol *loop_binder(const Stmt *loop) {
    return loop->kind == STMT_FOR ? loop->u.for_.b.sym : loop->u.parallel.b.sym;
}

/* Reads: a sum before its loop ends, or an output at all, is refused. */
static void check_name_read(Expr *e, void *ctx) {
    if (e->kind != EXPR_NAME) return;
    Walk *w = ctx;
    const Symbol *sym = e->u.name.sym;
    Sum *s = sum_of(w, sym);
    int p = param_index(w->g, sym);
    if (s && !s->done)
        grad_refuse(w->g, e->span, E_GRAD_FORM, "read a sum only after the loop that adds into it",
                    "%s is read while its sum is still being added", sym->name);
    else if (p >= 0 && w->g->writes[p])
        grad_refuse(w->g, e->span, E_GRAD_FORM,
                    "read the inputs only: pass what f reads and what it writes as separate views",
                    "%s reads %s, which it writes; its adjoint would need the value "
                    "before the write",
                    w->g->fn->name, sym->name);
}

static void check_reads(Walk *w, const Expr *e) {
    if (!e || !w->validate) return;
    ast_visit_expr((Expr *)e, check_name_read, w); /* the walk only reads */
}

static void walk_block(Walk *w, const Block *b);

static void walk_let(Walk *w, const Stmt *s) {
    Grad *g = w->g;
    const Symbol *sym = s->u.let.sym;
    check_reads(w, s->u.let.init);
    if (!s->u.let.mut) {
        if (type_is_compute_float(sym->type) && grad_expr_active(g, s->u.let.init))
            w->changed |= add_active(g, sym, NULL, innermost_region(w));
        return;
    }
    bool assigned = false;
    for (int i = 0; i < w->nassigned; i++) assigned |= w->assigned[i] == sym;
    if (w->validate && !type_is_compute_float(sym->type) && assigned)
        grad_refuse(g, s->span, E_GRAD_FORM,
                    "use an immutable let; a let mut is differentiated only as a float sum "
                    "one sequential loop adds into (s += e)",
                    "%s is a let mut of %s", sym->name, type_name(sym->type, (char[32]){0}, 32));
    if (!type_is_compute_float(sym->type)) return;
    if (!sum_of(w, sym)) {
        if (w->nsums == w->capsums) w->sums = grad_grow(w->sums, &w->capsums, sizeof *w->sums);
        w->sums[w->nsums++] = (Sum){sym, w->depth, NULL, !assigned};
    }
    if (grad_expr_active(g, s->u.let.init))
        w->changed |= add_active(g, sym, NULL, innermost_region(w));
}

/* acc += e, acc -= e, acc = acc + e, acc = acc - e: the added term, or NULL. */
const Expr *grad_sum_term(const Stmt *s, const Symbol *sym) {
    const Expr *v = s->u.assign.value;
    if (s->u.assign.op == ASSIGN_ADD || s->u.assign.op == ASSIGN_SUB) return v;
    if (s->u.assign.op == ASSIGN_SET && v->kind == EXPR_BINARY &&
        (v->u.binary.op == BIN_ADD || v->u.binary.op == BIN_SUB) &&
        v->u.binary.lhs->kind == EXPR_NAME && v->u.binary.lhs->u.name.sym == sym)
        return v->u.binary.rhs;
    return NULL;
}

static void walk_sum_add(Walk *w, const Stmt *s, Sum *sum) {
    Grad *g = w->g;
    const Expr *term = grad_sum_term(s, sum->sym);
    const char *name = sum->sym->name;
    if (w->validate && !term) {
        grad_refuse(g, s->span, E_GRAD_FORM,
                    "use immutable lets (let y2 = y * y;), or add into a sum: s += e",
                    "%s is assigned, but a let mut is differentiated only as a sum", name);
        return;
    }
    check_reads(w, term);
    if (!w->validate) goto activity;
    const Stmt *loop = sum->depth < w->depth ? w->loops[sum->depth] : NULL;
    for (int i = sum->depth; i < w->depth; i++)
        if (w->loops[i]->kind == STMT_PARALLEL) loop = NULL;
    if (!loop || (sum->loop && sum->loop != loop) || w->plain_if) {
        grad_refuse(
            g, s->span, E_GRAD_FORM,
            "add into a sum from one sequential loop: let mut s = 0.0; for i in 0..n { s += e; }",
            "%s is not added into by one sequential loop", name);
        return;
    }
    sum->loop = loop;
activity:
    if (term && grad_expr_active(g, term))
        w->changed |= add_active(g, sum->sym, NULL, innermost_region(w));
}

static void walk_write(Walk *w, const Stmt *s, int p) {
    Grad *g = w->g;
    const Expr *idx = s->u.assign.target->u.index.index;
    check_reads(w, idx);
    check_reads(w, s->u.assign.value);
    if (!w->validate) return;
    const Stmt *loop = w->depth ? w->loops[w->depth - 1] : NULL;
    const char *name = g->fn->u.fn.params[p]->name;
    if (w->depth > 1)
        grad_refuse(g, s->span, E_GRAD_FORM,
                    "write out[i] in the body of the outermost loop or region over i; "
                    "compute the value in the inner loop (a sum) first",
                    "%s is written inside a nested loop: each pass of the outer loop writes "
                    "it again",
                    name);
    else if (s->u.assign.op != ASSIGN_SET || !loop || w->plain_if || idx->kind != EXPR_NAME ||
             idx->u.name.sym != loop_binder(loop))
        grad_refuse(g, s->span, E_GRAD_FORM,
                    "write each output element once: out[i] = e in a loop or region over i",
                    "this write to %s is not a write of element [i] once by the loop over i", name);
    else if (++w->counts[p] > 1)
        grad_refuse(g, s->span, E_GRAD_FORM,
                    "compute the value with lets (or an if), then write out[i] once",
                    "%s[i] is written twice in one pass through the loop body", name);
}

static void walk_assign(Walk *w, const Stmt *s) {
    Grad *g = w->g;
    const Expr *t = s->u.assign.target;
    if (t->kind == EXPR_NAME) {
        Sum *sum = sum_of(w, t->u.name.sym);
        if (sum) {
            walk_sum_add(w, s, sum);
            return;
        }
        check_reads(w, s->u.assign.value);
        if (w->validate && t->type && type_is_compute_float(t->type))
            grad_refuse(g, s->span, E_GRAD_FORM,
                        "return the value, or write it to an element of an output view",
                        "%s writes the scalar %s", g->fn->name, t->u.name.name);
        return;
    }
    if (t->kind == EXPR_INDEX && t->u.index.base->kind == EXPR_NAME) {
        int p = param_index(g, t->u.index.base->u.name.sym);
        if (p >= 0 && g->writes[p]) {
            walk_write(w, s, p);
            return;
        }
    }
    check_reads(w, t);
    check_reads(w, s->u.assign.value);
}

static bool block_returns(const Block *b);

static bool stmt_returns(const Stmt *s) {
    if (s->kind == STMT_RETURN) return true;
    if (s->kind == STMT_BLOCK) return block_returns(s->u.block);
    if (s->kind != STMT_IF || !s->u.if_.els) return false;
    return block_returns(s->u.if_.then) && stmt_returns(s->u.if_.els);
}

static bool block_returns(const Block *b) {
    return b && b->nstmts && stmt_returns(b->stmts[b->nstmts - 1]);
}

static bool block_has_return(const Block *b);

bool grad_has_return(const Stmt *s) {
    switch (s->kind) {
    case STMT_RETURN: return true;
    case STMT_IF:
        return block_has_return(s->u.if_.then) || (s->u.if_.els && grad_has_return(s->u.if_.els));
    case STMT_FOR: return block_has_return(s->u.for_.body);
    case STMT_PARALLEL: return block_has_return(s->u.parallel.body);
    case STMT_BLOCK: return block_has_return(s->u.block);
    default: return false;
    }
}

static bool block_has_return(const Block *b) {
    for (int i = 0; b && i < b->nstmts; i++)
        if (grad_has_return(b->stmts[i])) return true;
    return false;
}

/* A branch that returns is a path of its own; one that does not may not touch outputs
 * or sums (there would be no single path to sweep back). */
static void walk_branch(Walk *w, const Block *b) {
    bool plain = !block_returns(b);
    w->plain_if += plain;
    walk_block(w, b);
    w->plain_if -= plain;
}

static void walk_fork(Walk *w, const Stmt *s) {
    check_reads(w, s->u.if_.cond);
    walk_branch(w, s->u.if_.then);
    const Stmt *e = s->u.if_.els;
    if (!e) return;
    if (e->kind == STMT_IF) walk_fork(w, e);
    else walk_branch(w, e->u.block);
}

static void walk_else(Walk *w, const Stmt *e);

/* An if without a return: both branches are walked from the same write counts, and a
 * parameter counts as written as often as the branch that writes it most. */
static void walk_plain_if(Walk *w, const Stmt *s) {
    int n = w->g->fn->u.fn.nparams;
    int *before = w->counts ? calloc((size_t)n + 1, sizeof *before) : NULL;
    if (before) memcpy(before, w->counts, sizeof *before * (size_t)n);
    check_reads(w, s->u.if_.cond);
    walk_block(w, s->u.if_.then);
    for (int i = 0; before && i < n; i++) {
        int then = w->counts[i];
        w->counts[i] = before[i];
        before[i] = then;
    }
    walk_else(w, s->u.if_.els);
    for (int i = 0; before && i < n; i++)
        if (before[i] > w->counts[i]) w->counts[i] = before[i];
    free(before);
}

static void walk_else(Walk *w, const Stmt *e) {
    if (!e) return;
    if (e->kind == STMT_IF) walk_plain_if(w, e);
    else walk_block(w, e->u.block);
}

static void walk_if(Walk *w, const Stmt *s) {
    if (grad_has_return(s)) walk_fork(w, s);
    else walk_plain_if(w, s);
}

static void walk_loop(Walk *w, const Stmt *s, const Binder *b, const Block *body) {
    check_reads(w, b->lo);
    check_reads(w, b->count);
    if (w->depth == (int)(sizeof w->loops / sizeof w->loops[0])) {
        grad_refuse(w->g, s->span, E_GRAD_FORM, "nest fewer loops", "loops nested too deep");
        return;
    }
    int n = w->g->fn->u.fn.nparams;
    int *outer = w->counts;
    w->counts = calloc((size_t)n + 1, sizeof *w->counts);
    if (!w->counts) abort();
    w->loops[w->depth++] = s;
    walk_block(w, body);
    w->depth--;
    for (int p = 0; p < n && w->depth == 0; p++) /* outer: loops that write p */
        if (w->counts[p] && ++outer[p] > 1 && w->validate)
            grad_refuse(w->g, s->span, E_GRAD_FORM,
                        "write each output in one loop or region; compute the values first",
                        "%s is written by a second loop", w->g->fn->u.fn.params[p]->name);
    free(w->counts);
    w->counts = outer;
    for (int i = 0; i < w->nsums; i++)
        if (w->sums[i].loop == s) w->sums[i].done = true;
}

static void refuse_stmt(Walk *w, const Stmt *s, const char *what, const char *help) {
    if (w->validate)
        grad_refuse(w->g, s->span, E_GRAD_FORM, help, "%s is not differentiated", what);
}

static void walk_stmt(Walk *w, const Stmt *s) {
    switch (s->kind) {
    case STMT_LET: walk_let(w, s); break;
    case STMT_ASSIGN: walk_assign(w, s); break;
    case STMT_EXPR: check_reads(w, s->u.expr); break;
    case STMT_IF: walk_if(w, s); break;
    case STMT_FOR: walk_loop(w, s, &s->u.for_.b, s->u.for_.body); break;
    case STMT_PARALLEL: walk_loop(w, s, &s->u.parallel.b, s->u.parallel.body); break;
    case STMT_RETURN:
        check_reads(w, s->u.ret.value);
        if (w->depth || w->plain_if)
            refuse_stmt(w, s, "a return inside a loop",
                        "return after the loop; inside it, write outputs or add into a sum");
        break;
    case STMT_BUFFER:
        if (type_is_float(s->u.alloc.elem))
            refuse_stmt(w, s, "a local float buffer",
                        "pass the buffer as an rw view parameter, or compute with lets and sums");
        break;
    case STMT_BLOCKS:
    case STMT_SHARED:
    case STMT_BARRIER:
        refuse_stmt(w, s, "a cooperative region", "write a parallel region or a loop");
        break;
    case STMT_BLOCK:
        refuse_stmt(w, s, "a bare block", "write its statements without the braces");
        break;
    }
}

static void walk_block(Walk *w, const Block *b) {
    for (int i = 0; b && i < b->nstmts && !w->g->failed; i++) walk_stmt(w, b->stmts[i]);
}

/* ---- before the walk: what f assigns and which views it writes ---- */

static void note_assigned(Walk *w, const Block *b);

static void note_stmt(Walk *w, const Stmt *s) {
    Grad *g = w->g;
    switch (s->kind) {
    case STMT_ASSIGN: {
        const Expr *t = s->u.assign.target;
        if (t->kind == EXPR_INDEX) t = t->u.index.base;
        if (t->kind != EXPR_NAME) break;
        int p = param_index(g, t->u.name.sym);
        if (p >= 0 && s->u.assign.target->kind == EXPR_INDEX &&
            grad_param_is_float_view(g->fn->u.fn.params[p], ACCESS_RW))
            g->writes[p] = true;
        if (w->nassigned == w->capassigned)
            w->assigned = grad_grow(w->assigned, &w->capassigned, sizeof *w->assigned);
        w->assigned[w->nassigned++] = t->u.name.sym;
        break;
    }
    case STMT_IF:
        note_assigned(w, s->u.if_.then);
        if (s->u.if_.els) note_stmt(w, s->u.if_.els);
        break;
    case STMT_FOR: note_assigned(w, s->u.for_.body); break;
    case STMT_PARALLEL: note_assigned(w, s->u.parallel.body); break;
    case STMT_BLOCK: note_assigned(w, s->u.block); break;
    default: break;
    }
}

static void note_assigned(Walk *w, const Block *b) {
    for (int i = 0; b && i < b->nstmts; i++) note_stmt(w, b->stmts[i]);
}

void grad_find_writes(Grad *g) {
    Walk w = {.g = g};
    note_assigned(&w, g->fn->u.fn.body);
    free(w.assigned);
}

void grad_find_active(Grad *g) {
    Walk w = {.g = g, .validate = true};
    note_assigned(&w, g->fn->u.fn.body);
    for (int i = 0; i < g->fn->u.fn.nparams; i++)
        if (g->wrt[i]) add_active(g, g->fn->u.fn.params[i]->sym, g->d_param[i], NULL);
    /* Activity only grows, and each pass sees what the last one found (a sum's term is
     * a let inside its loop, read after the let mut was met). */
    int n = g->fn->u.fn.nparams;
    int *loops_writing = calloc((size_t)n + 1, sizeof *loops_writing);
    if (!loops_writing) abort();
    do {
        w.changed = false;
        w.nsums = 0;
        memset(loops_writing, 0, sizeof *loops_writing * (size_t)(n + 1));
        w.counts = loops_writing;
        walk_block(&w, g->fn->u.fn.body);
        w.validate = false;
    } while (w.changed && !g->failed);
    free(loops_writing);
    free(w.sums);
    free(w.assigned);
}
