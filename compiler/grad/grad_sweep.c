/* grad_sweep.c: the backward sweep, as CAIRN statements.
 *
 * backprop(e, a) writes statements that add a times the derivative of e into the
 * adjoints of what e reads (x[i] -> d_x[i] += ...; an active let v -> d_v += ...). The
 * statements of a path are swept in reverse, so an adjoint is complete before it is
 * propagated. A loop's backward twin is a loop over the same range whose body recomputes
 * the forward body's lets (and the sums it needs) and sweeps the body back; a region's
 * twin is a region, in which a lane may add only into adjoints of its own lets and into
 * element [i] of a view's adjoint (E-GRAD-RACE otherwise).
 */
#include "grad/grad_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static void backprop(Grad *g, const Expr *e, Expr *adj, StmtList *out);
static void sweep_stmts(Grad *g, Stmt *const *v, int n, StmtList *out);
static void rename_in_expr(Grad *g, const Expr *e);

/* An adjoint expression that may be copied rather than bound to a let. */
static bool simple(const Expr *a) {
    if (a->kind == EXPR_UNARY && a->u.unary.op == UN_NEG) a = a->u.unary.operand;
    if (a->kind == EXPR_NAME || a->kind == EXPR_FLOAT) return true;
    return a->kind == EXPR_INDEX && a->u.index.base->kind == EXPR_NAME &&
           (a->u.index.index->kind == EXPR_NAME || a->u.index.index->kind == EXPR_INT);
}

/* adj, bound to a fresh let first when it is used more than once and is not simple. */
static Expr *share(Grad *g, Expr *adj, int uses, StmtList *out) {
    if (uses < 2 || simple(adj)) return adj;
    const char *t = grad_fresh_name(g, "dt");
    grad_stmts_push(out, grad_mk_let(g, t, false, NULL, adj));
    return grad_mk_name(g, t, adj->span);
}

/* target += adj, or target -= a for adj = -a. */
static void add_into(Grad *g, Expr *target, Expr *adj, StmtList *out) {
    if (adj->kind == EXPR_UNARY && adj->u.unary.op == UN_NEG)
        grad_stmts_push(out, grad_mk_assign(g, ASSIGN_SUB, target, adj->u.unary.operand));
    else grad_stmts_push(out, grad_mk_assign(g, ASSIGN_ADD, target, adj));
}

static void backprop_name(Grad *g, const Expr *e, Expr *adj, StmtList *out) {
    const Active *a = grad_active_of(g, e->u.name.sym);
    assert(a && a->adj); /* backprop walks only active expressions: a name has an adjoint */
    if (g->region && a->region != g->region) {
        grad_refuse(g, e->span, E_GRAD_RACE,
                    "read inputs at [i] in the region (pass a value every lane needs as a "
                    "view), or differentiate a sequential loop",
                    "every lane reads %s, so every lane would add into %s", e->u.name.name, a->adj);
        return;
    }
    add_into(g, grad_mk_name(g, a->adj, e->span), adj, out);
}

static void backprop_index(Grad *g, const Expr *e, Expr *adj, StmtList *out) {
    const Expr *base = e->u.index.base, *idx = e->u.index.index;
    const Active *a = base->kind == EXPR_NAME ? grad_active_of(g, base->u.name.sym) : NULL;
    if (!a) {
        grad_refuse(g, e->span, E_GRAD_FORM, "index a view parameter",
                    "this element read is not differentiated");
        return;
    }
    if (g->region && (idx->kind != EXPR_NAME || idx->u.name.sym != g->lane)) {
        char *text = cairn_print_expr(e);
        grad_refuse(g, idx->span, E_GRAD_RACE,
                    "read x at [i] in the region, or differentiate a sequential loop",
                    "the adjoint of %s adds into %s at another lane's element",
                    text ? text : base->u.name.name, a->adj);
        free(text);
        return;
    }
    add_into(g, grad_mk_index(g, grad_mk_name(g, a->adj, base->span), grad_clone_expr(g, idx)), adj,
             out);
}

static void backprop_binary(Grad *g, const Expr *e, Expr *adj, StmtList *out) {
    const Expr *l = e->u.binary.lhs, *r = e->u.binary.rhs;
    bool la = grad_expr_active(g, l), ra = grad_expr_active(g, r);
    adj = share(g, adj, la + ra, out);
    Expr *adj2 = la && ra ? grad_clone_expr(g, adj) : adj;
    switch (e->u.binary.op) {
    case BIN_ADD:
        backprop(g, l, adj, out);
        backprop(g, r, adj2, out);
        return;
    case BIN_SUB:
        backprop(g, l, adj, out);
        backprop(g, r, grad_mk_neg(g, adj2), out);
        return;
    case BIN_MUL:
        if (la) backprop(g, l, grad_mk_binary(g, BIN_MUL, adj, grad_clone_expr(g, r)), out);
        if (ra) backprop(g, r, grad_mk_binary(g, BIN_MUL, grad_clone_expr(g, l), adj2), out);
        return;
    case BIN_DIV: /* d(l/r) = dl / r - dr * (l / r) / r */
        if (la) backprop(g, l, grad_mk_binary(g, BIN_DIV, adj, grad_clone_expr(g, r)), out);
        if (ra) {
            Expr *q = grad_mk_binary(g, BIN_DIV, grad_clone_expr(g, l), grad_clone_expr(g, r));
            Expr *d = grad_mk_binary(g, BIN_DIV, grad_mk_binary(g, BIN_MUL, adj2, q),
                                     grad_clone_expr(g, r));
            backprop(g, r, grad_mk_neg(g, d), out);
        }
        return;
    default:
        grad_refuse(g, e->span, E_GRAD_FORM,
                    "write it with + - * / and the forms of docs/gradients.md",
                    "%s on floats is not differentiated", ast_binary_op_text(e->u.binary.op));
    }
}

/* |x|: derivative -1 below zero, 1 at zero and above. */
static void backprop_abs(Grad *g, const Expr *x, Expr *adj, StmtList *out) {
    adj = share(g, adj, 2, out);
    StmtList neg = {0}, pos = {0};
    backprop(g, x, grad_mk_neg(g, adj), &neg);
    backprop(g, x, grad_clone_expr(g, adj), &pos);
    Stmt *s = ast_new_stmt(g->arena, STMT_IF, x->span);
    s->u.if_.cond =
        grad_mk_binary(g, BIN_LT, grad_clone_expr(g, x), grad_mk_float(g, "0.0", x->span));
    s->u.if_.then = grad_stmts_block(g, &neg, x->span);
    Stmt *els = ast_new_stmt(g->arena, STMT_BLOCK, x->span);
    els->u.block = grad_stmts_block(g, &pos, x->span);
    s->u.if_.els = els;
    grad_stmts_push(out, s);
}

static void backprop_call(Grad *g, const Expr *e, Expr *adj, StmtList *out);

static void backprop_builtin(Grad *g, const Expr *e, Expr *adj, StmtList *out) {
    const Expr *x = e->u.call.nargs ? e->u.call.args[0] : NULL;
    if (ast_op(e->u.call.builtin)->grad == GRAD_ZERO) return; /* ops.def: derivative 0 */
    switch (e->u.call.builtin) {
    case BI_SQRT: /* d sqrt(x) = dx / (2 sqrt(x)) */
        backprop(g, x,
                 grad_mk_binary(g, BIN_DIV, adj,
                                grad_mk_binary(g, BIN_MUL, grad_mk_float(g, "2.0", e->span),
                                               grad_clone_expr(g, e))),
                 out);
        return;
    case BI_ABS: backprop_abs(g, x, adj, out); return;
    case BI_MATH_EXP:
        backprop(g, x, grad_mk_binary(g, BIN_MUL, adj, grad_clone_expr(g, e)), out);
        return;
    case BI_MATH_LOG:
        backprop(g, x, grad_mk_binary(g, BIN_DIV, adj, grad_clone_expr(g, x)), out);
        return;
    case BI_NONE: backprop_call(g, e, adj, out); return;
    default:
        if (ast_builtin_is_cr(e->u.call.builtin)) { /* grad_cr.c */
            backprop(g, x, grad_cr_adjoint(g, e, adj), out);
            return;
        }
        grad_refuse(g, e->span, E_GRAD_FORM,
                    "derive grad differentiates sqrt, abs, floor, ceil, trunc, std.math.exp, "
                    "std.math.log and every std.cr function; write the function from those, "
                    "or as a function with a derived gradient of its own",
                    "%s is not differentiated", ast_builtin_name(e->u.call.builtin));
    }
}

static void backprop_convert(Grad *g, const Expr *e, Expr *adj, StmtList *out) {
    const Expr *x = e->u.convert.arg;
    if (!x->type || !type_is_compute_float(x->type)) {
        grad_refuse(g, e->span, E_GRAD_FORM,
                    "convert between f32 and f64 only where a value is differentiated",
                    "this conversion is not differentiated");
        return;
    }
    if (x->type->kind != e->type->kind) adj = grad_mk_convert(g, x->type, adj);
    backprop(g, x, adj, out);
}

/* reduce + for/parallel i in n yield t: the adjoint of every term is the sum's. */
static void backprop_reduce(Grad *g, const Expr *e, Expr *adj, StmtList *out) {
    if (e->u.reduce.op != RED_ADD || e->u.reduce.scan || e->u.reduce.mode == MODE_WARP) {
        grad_refuse(g, e->span, E_GRAD_FORM,
                    "differentiate a sum: reduce + for or reduce + parallel",
                    "%s %s %s is not differentiated", e->u.reduce.scan ? "scan" : "reduce",
                    ast_reduce_op_text(e->u.reduce.op), ast_reduce_mode_text(e->u.reduce.mode));
        return;
    }
    bool parallel = e->u.reduce.mode == MODE_PARALLEL;
    if (!simple(adj) || (parallel && adj->kind != EXPR_NAME)) {
        const char *t = grad_fresh_name(g, "dt");
        grad_stmts_push(out, grad_mk_let(g, t, false, NULL, adj));
        adj = grad_mk_name(g, t, adj->span);
    }
    rename_in_expr(g, e);
    const void *saved_region = g->region;
    const Symbol *saved_lane = g->lane;
    if (parallel) {
        g->region = e;
        g->lane = e->u.reduce.var_sym;
    }
    StmtList body = {0};
    backprop(g, e->u.reduce.body, adj, &body);
    g->region = saved_region;
    g->lane = saved_lane;
    Stmt *s = ast_new_stmt(g->arena, parallel ? STMT_PARALLEL : STMT_FOR, e->span);
    const char *var = grad_name_for(g, e->u.reduce.var_sym, e->u.reduce.var);
    Binder b = {.var = var ? var : "_",
                .var_span = e->u.reduce.var_span,
                .lo = grad_clone_expr(g, e->u.reduce.lo),
                .count = grad_clone_expr(g, e->u.reduce.count)};
    Block *blk = grad_stmts_block(g, &body, e->span);
    if (parallel) {
        s->u.parallel.b = b;
        s->u.parallel.body = blk;
    } else {
        s->u.for_.b = b;
        s->u.for_.body = blk;
    }
    grad_stmts_push(out, s);
}

static void backprop(Grad *g, const Expr *e, Expr *adj, StmtList *out) {
    if (g->failed || !grad_expr_active(g, e)) return;
    switch (e->kind) {
    case EXPR_NAME: backprop_name(g, e, adj, out); return;
    case EXPR_INDEX: backprop_index(g, e, adj, out); return;
    case EXPR_UNARY:
        if (e->u.unary.op == UN_NEG) {
            backprop(g, e->u.unary.operand, grad_mk_neg(g, adj), out);
            return;
        }
        break;
    case EXPR_BINARY: backprop_binary(g, e, adj, out); return;
    case EXPR_CALL: backprop_builtin(g, e, adj, out); return;
    case EXPR_CONVERT: backprop_convert(g, e, adj, out); return;
    case EXPR_REDUCE: backprop_reduce(g, e, adj, out); return;
    default: break;
    }
    grad_refuse(g, e->span, E_GRAD_FORM, "write it with the forms of docs/gradients.md",
                "this expression is not differentiated");
}

/* ---- calls of functions with a derived gradient ---- */

/* A fresh zeroed buffer of view arg's extent, element type and placement, named from
 * base: the adjoint a call gets where no adjoint of f's may be passed. */
static Expr *zeroed_buffer(Grad *g, const Expr *call, const Expr *arg, const char *base,
                           StmtList *out) {
    const Type *t = arg->type;
    const char *tmp = grad_fresh_name(g, base);
    Stmt *buf = ast_new_stmt(g->arena, STMT_BUFFER, call->span);
    buf->u.alloc.name = tmp;
    buf->u.alloc.name_span = call->span;
    buf->u.alloc.elem = t->u.view.elem;
    buf->u.alloc.count = grad_clone_expr(g, t->u.view.extent);
    buf->u.alloc.place = t->u.view.place;
    buf->u.alloc.init = ast_new_expr(g->arena, EXPR_ZEROED, call->span);
    grad_stmts_push(out, buf);
    return grad_mk_name(g, tmp, arg->span);
}

/* Where the adjoint arguments of a call to f_grad put their statements: `before` the
 * call (fresh adjoints, zeroed buffers) and `after` it (what propagates them into the
 * arguments' own adjoints). */
typedef struct CallSides {
    StmtList *before, *after;
} CallSides;

/* The adjoint argument for parameter p of the callee, bound to arg; after the call,
 * `after` propagates it into arg's own adjoint. */
static Expr *call_adjoint(Grad *g, const Expr *call, const Param *p, const Expr *arg,
                          const CallSides *sides) {
    StmtList *out = sides->before, *after = sides->after;
    bool active = grad_expr_active(g, arg);
    const Type *t = p->type;
    if (t->kind == TY_VIEW && t->u.view.extent) {
        if (active && arg->kind == EXPR_NAME && !g->region)
            return grad_mk_name(g, grad_active_of(g, arg->u.name.sym)->adj, arg->span);
        if (active || g->region) {
            const char *what = arg->kind == EXPR_NAME ? arg->u.name.name : p->name;
            grad_refuse(g, arg->span, active ? E_GRAD_RACE : E_GRAD_FORM,
                        "call it outside the region, from a sequential loop",
                        "%s's gradient would add into all of %s's adjoint from every lane",
                        call->u.call.fn->name, what);
            return NULL;
        }
        return zeroed_buffer(g, call, arg, "d_unused", out);
    }
    const char *tmp = grad_fresh_name(g, active ? "d_arg" : "d_unused");
    grad_stmts_push(out, grad_mk_let(g, tmp, true, t, grad_mk_float(g, "0.0", arg->span)));
    if (active) backprop(g, arg, grad_mk_name(g, tmp, arg->span), after);
    return grad_mk_name(g, tmp, arg->span);
}

/* Whether the adjoint name adj is among the n adjoint arguments v already passed. */
static bool passed_before(Expr *const *v, int n, const Expr *adj) {
    for (int i = 0; i < n; i++)
        if (v[i]->kind == EXPR_NAME && strcmp(v[i]->u.name.name, adj->u.name.name) == 0)
            return true;
    return false;
}

/* The adjoint view adj is already passed to one rw parameter of the call, and the
 * checker refuses one view in two rw parameters (E-ALIAS): this one gets a fresh zeroed
 * buffer, which `after` adds into adj element by element (adding, never assigning). */
static Expr *alias_part(Grad *g, const Expr *call, const Expr *arg, Expr *adj,
                        const CallSides *sides) {
    StmtList *out = sides->before, *after = sides->after;
    const char *name = adj->u.name.name;
    Expr *part = zeroed_buffer(g, call, arg, arena_printf(g->arena, "%s_part", name), out);
    const char *k = grad_fresh_name(g, "k");
    StmtList body = {0};
    grad_stmts_push(&body, grad_mk_assign(g, ASSIGN_ADD,
                                          grad_mk_index(g, grad_mk_name(g, name, adj->span),
                                                        grad_mk_name(g, k, adj->span)),
                                          grad_mk_index(g, part, grad_mk_name(g, k, adj->span))));
    Stmt *loop = ast_new_stmt(g->arena, STMT_FOR, call->span);
    loop->u.for_.b = (Binder){
        .var = k, .var_span = call->span, .count = grad_clone_expr(g, arg->type->u.view.extent)};
    loop->u.for_.body = grad_stmts_block(g, &body, call->span);
    grad_stmts_push(after, loop);
    return grad_mk_name(g, part->u.name.name, adj->span);
}

static void backprop_call(Grad *g, const Expr *e, Expr *adj, StmtList *out) {
    Item *callee = e->u.call.fn;
    const Item *d = callee ? grad_derive_of(g->prog, callee) : NULL;
    const char *name = callee ? callee->name : "this function";
    int n = callee ? callee->u.fn.nparams : 0;
    if (!d) {
        char *help = arena_printf(g->arena, "add `derive grad for %s;`", name);
        grad_refuse(g, e->span, E_GRAD_CALL, help, "%s has no derived gradient", name);
        return;
    }
    bool *mask = calloc((size_t)n + 1, sizeof *mask);
    Expr **args = arena_alloc(g->arena, sizeof(Expr *) * (size_t)(2 * n + 1));
    int nargs = 0;
    StmtList after = {0};
    if (!grad_wrt(callee, d, mask, NULL))
        grad_refuse(g, e->span, E_GRAD_CALL, "fix the derive grad for it",
                    "the derive grad for %s is refused", name);
    for (int i = 0; i < n && !g->failed; i++) {
        const Param *p = callee->u.fn.params[i];
        if (grad_param_is_float_view(p, ACCESS_RW))
            grad_refuse(g, e->u.call.args[i]->span, E_GRAD_FORM,
                        "call only functions that return their value", "%s writes the view %s",
                        name, p->name);
        else if (!mask[i] && grad_expr_active(g, e->u.call.args[i]))
            grad_refuse(g, e->u.call.args[i]->span, E_GRAD_CALL,
                        arena_printf(g->arena,
                                     "derive grad for %s without a list, or name %s in it", name,
                                     p->name),
                        "%s_grad has no adjoint for its parameter %s", name, p->name);
        args[nargs++] = grad_clone_expr(g, e->u.call.args[i]);
    }
    if (type_is_compute_float(callee->u.fn.ret)) args[nargs++] = adj;
    /* A scalar adjoint is always a fresh `let mut`; a view's is f's own adjoint, which
     * one call may name only once. */
    int first_adjoint = nargs;
    const CallSides sides = {out, &after};
    for (int i = 0; i < n && !g->failed; i++) {
        if (!mask[i]) continue;
        const Expr *arg = e->u.call.args[i];
        Expr *a = call_adjoint(g, e, callee->u.fn.params[i], arg, &sides);
        if (a && arg->type->kind == TY_VIEW &&
            passed_before(args + first_adjoint, nargs - first_adjoint, a))
            a = alias_part(g, e, arg, a, &sides);
        args[nargs++] = a;
    }
    free(mask);
    if (g->failed) {
        free(after.v);
        return;
    }
    Expr *call = ast_new_expr(g->arena, EXPR_CALL, e->span);
    call->u.call.callee = grad_mk_name(g, arena_printf(g->arena, "%s_grad", name), e->span);
    call->u.call.args = args;
    call->u.call.nargs = nargs;
    grad_stmts_push(out, grad_mk_expr_stmt(g, call));
    grad_stmts_append(out, &after);
    free(after.v);
}

/* ---- statements ---- */

static const Symbol *sum_target(const Grad *g, const Stmt *s) {
    const Expr *t = s->u.assign.target;
    return t->kind == EXPR_NAME && grad_active_of(g, t->u.name.sym) ? t->u.name.sym : NULL;
}

static int written_param(const Grad *g, const Stmt *s) {
    const Expr *t = s->u.assign.target;
    if (t->kind != EXPR_INDEX || t->u.index.base->kind != EXPR_NAME) return -1;
    for (int i = 0; i < g->fn->u.fn.nparams; i++)
        if (g->writes[i] && g->fn->u.fn.params[i]->sym == t->u.index.base->u.name.sym) return i;
    return -1;
}

static void sweep_assign(Grad *g, const Stmt *s, StmtList *out) {
    const Symbol *sum = sum_target(g, s);
    if (sum) {
        const Expr *term = grad_sum_term(s, sum);
        bool minus = s->u.assign.op == ASSIGN_SUB ||
                     (s->u.assign.op == ASSIGN_SET && s->u.assign.value->u.binary.op == BIN_SUB);
        Expr *adj = grad_mk_name(g, grad_active_of(g, sum)->adj, s->span);
        backprop(g, term, minus ? grad_mk_neg(g, adj) : adj, out);
        return;
    }
    int p = written_param(g, s);
    if (p < 0) return;
    Expr *d_out = grad_mk_name(g, g->d_param[p], s->u.assign.target->span);
    backprop(g, s->u.assign.value,
             grad_mk_index(g, d_out, grad_clone_expr(g, s->u.assign.target->u.index.index)), out);
}

static bool declares(const Block *b, const Symbol *sym);

/* Whether a let somewhere in s declares sym. */
static bool stmt_declares(const Stmt *t, const Symbol *sym) {
    switch (t->kind) {
    case STMT_LET: return t->u.let.sym == sym;
    case STMT_FOR: return declares(t->u.for_.body, sym);
    case STMT_BLOCK: return declares(t->u.block, sym);
    case STMT_IF:
        return declares(t->u.if_.then, sym) || (t->u.if_.els && stmt_declares(t->u.if_.els, sym));
    default: return false;
    }
}

static bool declares(const Block *b, const Symbol *sym) {
    for (int i = 0; b && i < b->nstmts; i++)
        if (stmt_declares(b->stmts[i], sym)) return true;
    return false;
}

typedef struct Recompute {
    const Block *scope; /* the forward body a twin recomputes */
    bool sums;          /* a sum declared in it is added */
} Recompute;

static Stmt *recompute_stmt(Grad *g, const Stmt *t, Recompute *r);

static Block *recompute_block(Grad *g, const Block *body, Recompute *r) {
    StmtList keep = {0};
    for (int i = 0; i < body->nstmts; i++) {
        Stmt *c = recompute_stmt(g, body->stmts[i], r);
        if (c) grad_stmts_push(&keep, c);
    }
    return grad_stmts_block(g, &keep, body->span);
}

/* What of t recomputes the lets and sums a twin of r->scope needs: lets, adds into sums
 * declared in the scope, and the loops and ifs holding them; never a write to an output.
 * A loop or if without such an add is dropped (NULL). */
static Stmt *recompute_stmt(Grad *g, const Stmt *t, Recompute *r) {
    Recompute inner = {r->scope, false};
    Stmt *c = NULL;
    switch (t->kind) {
    case STMT_LET: return grad_clone_stmt(g, t);
    case STMT_ASSIGN:
        if (t->u.assign.target->kind != EXPR_NAME ||
            !declares(r->scope, t->u.assign.target->u.name.sym))
            return NULL;
        r->sums = true;
        return grad_clone_stmt(g, t);
    case STMT_FOR:
        c = ast_new_stmt(g->arena, STMT_FOR, t->span);
        c->u.for_.b = t->u.for_.b;
        c->u.for_.b.var = grad_name_for(g, t->u.for_.b.sym, t->u.for_.b.var);
        c->u.for_.b.sym = NULL;
        c->u.for_.b.lo = grad_clone_expr(g, t->u.for_.b.lo);
        c->u.for_.b.count = grad_clone_expr(g, t->u.for_.b.count);
        c->u.for_.body = recompute_block(g, t->u.for_.body, &inner);
        break;
    case STMT_IF:
        c = ast_new_stmt(g->arena, STMT_IF, t->span);
        c->u.if_.cond = grad_clone_expr(g, t->u.if_.cond);
        c->u.if_.then = recompute_block(g, t->u.if_.then, &inner);
        if (t->u.if_.els) c->u.if_.els = recompute_stmt(g, t->u.if_.els, &inner);
        break;
    case STMT_BLOCK:
        c = ast_new_stmt(g->arena, STMT_BLOCK, t->span);
        c->u.block = recompute_block(g, t->u.block, &inner);
        break;
    default: return NULL;
    }
    if (!inner.sums) return NULL;
    r->sums = true;
    return c;
}

/* `let mut d_v:T = 0.0;` for every active let among v. */
static void declare_adjoints(Grad *g, Stmt *const *v, int n, StmtList *out) {
    for (int i = 0; i < n; i++) {
        const Active *a = v[i]->kind == STMT_LET ? grad_active_of(g, v[i]->u.let.sym) : NULL;
        if (a)
            grad_stmts_push(out, grad_mk_let(g, a->adj, true, a->sym->type,
                                             grad_mk_float(g, "0.0", v[i]->span)));
    }
}

static void rename_binder(Grad *g, const Expr *reduce) {
    grad_rename_if_reused(g, reduce->u.reduce.var_sym);
}

static void rename_in_expr(Grad *g, const Expr *e) { grad_each_reduce(g, e, rename_binder); }

/* What a twin of this block declares again: the lets and binders in it (the twin runs
 * after every name on its path is visible). */
static void rename_in_block(Grad *g, const Block *body) {
    for (int i = 0; body && i < body->nstmts; i++) {
        const Stmt *t = body->stmts[i];
        switch (t->kind) {
        case STMT_LET:
            grad_rename_if_reused(g, t->u.let.sym);
            rename_in_expr(g, t->u.let.init);
            break;
        case STMT_ASSIGN: rename_in_expr(g, t->u.assign.value); break;
        case STMT_FOR:
            grad_rename_if_reused(g, t->u.for_.b.sym);
            rename_in_block(g, t->u.for_.body);
            break;
        case STMT_PARALLEL:
            grad_rename_if_reused(g, t->u.parallel.b.sym);
            rename_in_block(g, t->u.parallel.body);
            break;
        case STMT_IF:
            rename_in_block(g, t->u.if_.then);
            if (t->u.if_.els && t->u.if_.els->kind == STMT_BLOCK)
                rename_in_block(g, t->u.if_.els->u.block);
            else if (t->u.if_.els) {
                Block one = {.stmts = (Stmt **)&t->u.if_.els, .nstmts = 1};
                rename_in_block(g, &one);
            }
            break;
        default: break;
        }
    }
}

/* The body of a backward twin: recomputes the forward body's lets and sums, declares
 * their adjoints and sweeps the body back. NULL when nothing in it is differentiated. */
static Block *twin_body(Grad *g, const Block *body) {
    StmtList back = {0}, twin = {0};
    sweep_stmts(g, body->stmts, body->nstmts, &back);
    if (!back.n) {
        free(back.v);
        return NULL;
    }
    Recompute r = {body, false};
    for (int i = 0; i < body->nstmts; i++) {
        Stmt *c = recompute_stmt(g, body->stmts[i], &r);
        if (c) grad_stmts_push(&twin, c);
    }
    declare_adjoints(g, body->stmts, body->nstmts, &twin);
    grad_stmts_append(&twin, &back);
    free(back.v);
    return grad_stmts_block(g, &twin, body->span);
}

/* The backward twin of a loop or region: a loop or region over the same range. */
static void sweep_loop(Grad *g, const Stmt *s, StmtList *out) {
    bool region = s->kind == STMT_PARALLEL;
    const Binder *b = region ? &s->u.parallel.b : &s->u.for_.b;
    const Block *body = region ? s->u.parallel.body : s->u.for_.body;
    grad_rename_if_reused(g, b->sym);
    rename_in_block(g, body);
    const void *saved_region = g->region;
    const Symbol *saved_lane = g->lane;
    if (region) {
        g->region = s;
        g->lane = b->sym;
    }
    Block *twin = twin_body(g, body);
    g->region = saved_region;
    g->lane = saved_lane;
    if (!twin) return;
    Stmt *c = ast_new_stmt(g->arena, s->kind, s->span);
    Binder cb = *b;
    cb.var = grad_name_for(g, b->sym, b->var);
    cb.sym = NULL;
    cb.lo = grad_clone_expr(g, b->lo);
    cb.count = grad_clone_expr(g, b->count);
    if (region) {
        c->u.parallel.b = cb;
        c->u.parallel.body = twin;
    } else {
        c->u.for_.b = cb;
        c->u.for_.body = twin;
    }
    grad_stmts_push(out, c);
}

/* The backward twin of an if without a return: an if on the same condition whose
 * branches are the twins of the forward branches. */
static Stmt *sweep_if(Grad *g, const Stmt *s) {
    rename_in_block(g, s->u.if_.then);
    Block *then = twin_body(g, s->u.if_.then);
    Stmt *els = NULL;
    const Stmt *e = s->u.if_.els;
    if (e && e->kind == STMT_IF) {
        els = sweep_if(g, e);
    } else if (e) {
        rename_in_block(g, e->u.block);
        Block *b = twin_body(g, e->u.block);
        if (b) {
            els = ast_new_stmt(g->arena, STMT_BLOCK, e->span);
            els->u.block = b;
        }
    }
    if (!then && !els) return NULL;
    Stmt *c = ast_new_stmt(g->arena, STMT_IF, s->span);
    c->u.if_.cond = grad_clone_expr(g, s->u.if_.cond);
    c->u.if_.then = then ? then : ast_new_block(g->arena, s->u.if_.then->span, NULL, 0);
    c->u.if_.els = els;
    return c;
}

static void sweep_stmt(Grad *g, const Stmt *s, StmtList *out) {
    switch (s->kind) {
    case STMT_LET: {
        const Active *a = grad_active_of(g, s->u.let.sym);
        if (a) backprop(g, s->u.let.init, grad_mk_name(g, a->adj, s->span), out);
        return;
    }
    case STMT_ASSIGN: sweep_assign(g, s, out); return;
    case STMT_FOR:
    case STMT_PARALLEL: sweep_loop(g, s, out); return;
    case STMT_IF: {
        Stmt *c = sweep_if(g, s);
        if (c) grad_stmts_push(out, c);
        return;
    }
    default: return; /* the walk refused or found inert everything else */
    }
}

static void sweep_stmts(Grad *g, Stmt *const *v, int n, StmtList *out) {
    for (int i = n - 1; i >= 0 && !g->failed; i--) sweep_stmt(g, v[i], out);
}

void grad_sweep_path(Grad *g, Stmt *const *path, int npath, const Expr *ret, StmtList *out) {
    assert(npath >= 0 && (npath == 0 || path) && (!g->has_seed || g->seed));
    declare_adjoints(g, path, npath, out);
    if (ret && g->has_seed) backprop(g, ret, grad_mk_name(g, g->seed, ret->span), out);
    sweep_stmts(g, path, npath, out);
}
