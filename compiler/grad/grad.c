/* grad.c: `derive grad[...] for f;` -> f_grad (numerics.md "Gradients", docs/gradients.md).
 *
 * The checker calls cairn_derive_grad once f has checked. This file checks the target
 * and the list (E-GRAD), writes f_grad's signature
 *     f's parameters, seed:T when f returns a float T, d_x:rw<T> or rw<T>[n] per
 *     differentiated parameter, d_out:ro<T>[n] per float view f writes
 * and its body: a copy of f's body in which every return (and the end of a function
 * without a result) first runs the backward sweep of its path (grad_sweep.c), then
 * returns f's result. The function is appended to the program for the checker.
 */
#include "grad/grad_internal.h"

#include <stdlib.h>
#include <string.h>

bool grad_param_is_float_scalar(const Param *p) { return type_is_compute_float(p->type); }

bool grad_param_is_float_view(const Param *p, Access acc) {
    const Type *t = p->type;
    return t->kind == TY_VIEW && t->u.view.extent && t->u.view.access == acc &&
           type_is_compute_float(t->u.view.elem);
}

static bool differentiable(const Param *p) {
    return grad_param_is_float_scalar(p) || grad_param_is_float_view(p, ACCESS_RO);
}

const Item *grad_derive_of(const Program *p, const Item *fn) {
    for (int i = 0; i < p->nitems; i++) {
        const Item *it = p->items[i];
        if (it->kind == ITEM_DERIVE && strcmp(it->name, "grad") == 0 &&
            strcmp(it->u.derive.target, fn->name) == 0)
            return it;
    }
    return NULL;
}

static int param_named(const Item *fn, const char *name) {
    for (int i = 0; i < fn->u.fn.nparams; i++)
        if (strcmp(fn->u.fn.params[i]->name, name) == 0) return i;
    return -1;
}

static bool refuse_list(Diags *d, Span sp, const char *help, const char *msg, const char *name) {
    if (d) diag_error(d, sp, E_GRAD, help, msg, name);
    return false;
}

bool grad_wrt(Item *fn, const Item *derive, bool *mask, Diags *d) {
    int n = fn->u.fn.nparams;
    if (!derive->u.derive.has_list) {
        bool any = false;
        for (int i = 0; i < n; i++) any |= mask[i] = differentiable(fn->u.fn.params[i]);
        return any || refuse_list(d, derive->u.derive.target_span,
                                  "give f a float parameter or an ro view of floats",
                                  "%s has no f32 or f64 parameter to differentiate", fn->name);
    }
    if (!derive->u.derive.nwrt)
        return refuse_list(d, derive->span,
                           "name at least one parameter, or write derive grad for f;",
                           "the list of %s's parameters is empty", fn->name);
    for (int k = 0; k < derive->u.derive.nwrt; k++) {
        const char *name = derive->u.derive.wrt[k];
        Span sp = derive->u.derive.wrt_spans[k];
        int i = param_named(fn, name);
        if (i < 0)
            return refuse_list(d, sp, "name parameters of the function in the list",
                               "the function has no parameter named %s", name);
        if (mask[i])
            return refuse_list(d, sp, "name each parameter once", "%s is named twice", name);
        if (grad_param_is_float_view(fn->u.fn.params[i], ACCESS_RW))
            return refuse_list(
                d, sp,
                "leave it out: the gradient with respect to what f writes comes in as its d_ view",
                "%s is a view the function writes, not an input", name);
        if (!differentiable(fn->u.fn.params[i]))
            return refuse_list(d, sp, "name only f32 or f64 parameters and ro views of them",
                               "%s is not a float parameter: it has no adjoint", name);
        mask[i] = true;
    }
    return true;
}

/* ---- the target ---- */

static Item *find_fn(Program *p, const char *name) {
    for (int i = 0; i < p->nitems; i++)
        if (p->items[i]->kind == ITEM_FN && strcmp(p->items[i]->name, name) == 0)
            return p->items[i];
    return NULL;
}

static bool check_target(Grad *g, Item *fn) {
    Item *derive = g->derive;
    Span sp = derive->u.derive.target_span;
    const char *name = derive->u.derive.target;
    if (!fn) {
        diag_error(g->diags, sp, E_GRAD, "name a function of this program", "no function named %s",
                   name);
        return false;
    }
    if (grad_derive_of(g->prog, fn) != derive) {
        diag_error(g->diags, derive->span, E_GRAD, "derive each function's gradient once",
                   "%s's gradient is already derived", name);
        return false;
    }
    if (fn->u.fn.derived_from) {
        diag_error(g->diags, sp, E_GRAD, "differentiate the original function",
                   "%s is itself derived: derive grad does not differentiate a gradient", name);
        return false;
    }
    if (find_fn(g->prog, arena_printf(g->arena, "%s_grad", name))) {
        diag_error(g->diags, sp, E_GRAD, "rename the function that already has that name",
                   "%s_grad is already a function of this program", name);
        return false;
    }
    return true;
}

/* ---- the signature ---- */

static Param *new_param(Grad *g, const char *name, const Type *t, Span sp) {
    Param *p = arena_alloc(g->arena, sizeof *p);
    p->name = name;
    p->span = p->name_span = sp;
    p->type = t;
    return p;
}

static const Type *adjoint_type(Grad *g, const Type *t, Access acc) {
    if (t->kind != TY_VIEW)
        return type_new_view(g->arena, (TypeView){ACCESS_RW, t, NULL, PLACE_HOST, VIEW_PARAM});
    return type_new_view(g->arena,
                         (TypeView){acc, t->u.view.elem, grad_clone_expr(g, t->u.view.extent),
                                    t->u.view.place, VIEW_PARAM});
}

static void signature(Grad *g, Item *out) {
    const Item *fn = g->fn;
    int n = fn->u.fn.nparams, k = 0;
    Param **ps = arena_alloc(g->arena, sizeof(Param *) * (size_t)(2 * n + 1));
    for (int i = 0; i < n; i++) {
        const Param *p = fn->u.fn.params[i];
        ps[k++] = new_param(g, p->name, grad_clone_type(g, p->type), p->span);
    }
    if (g->has_seed) ps[k++] = new_param(g, g->seed, fn->u.fn.ret, g->derive->span);
    for (int i = 0; i < n; i++)
        if (g->wrt[i])
            ps[k++] =
                new_param(g, g->d_param[i], adjoint_type(g, fn->u.fn.params[i]->type, ACCESS_RW),
                          fn->u.fn.params[i]->span);
    for (int i = 0; i < n; i++)
        if (g->writes[i])
            ps[k++] =
                new_param(g, g->d_param[i], adjoint_type(g, fn->u.fn.params[i]->type, ACCESS_RO),
                          fn->u.fn.params[i]->span);
    out->u.fn.params = ps;
    out->u.fn.nparams = k;
}

/* ---- the body: f's code, with a backward sweep before every return ---- */

/* A path is the list of f's statements before a return, outermost first. */
typedef StmtList Path;

static void emit_return(Grad *g, const Stmt *s, Path *path, StmtList *out) {
    const Expr *v = s->u.ret.value;
    Expr *result = NULL;
    if (v) {
        grad_stmts_push(out,
                        grad_mk_let(g, g->result, false, g->fn->u.fn.ret, grad_clone_expr(g, v)));
        result = grad_mk_name(g, g->result, v->span);
    }
    grad_sweep_path(g, path->v, path->n, v, out);
    grad_stmts_push(out, grad_mk_return(g, result, s->span));
}

static Block *copy_block(Grad *g, const Block *b, Path *path, bool top);

static Stmt *copy_if(Grad *g, const Stmt *s, Path *path) {
    Stmt *c = ast_new_stmt(g->arena, STMT_IF, s->span);
    c->u.if_.cond = grad_clone_expr(g, s->u.if_.cond);
    c->u.if_.then = copy_block(g, s->u.if_.then, path, false);
    const Stmt *e = s->u.if_.els;
    if (e && e->kind == STMT_IF) c->u.if_.els = copy_if(g, e, path);
    else if (e) {
        Stmt *blk = ast_new_stmt(g->arena, STMT_BLOCK, e->span);
        blk->u.block = copy_block(g, e->u.block, path, false);
        c->u.if_.els = blk;
    }
    return c;
}

/* Copies b; a return gets the sweep of the statements before it on its path (those of
 * b and of the blocks around it). An if with a return in it copies its branches the same
 * way, and its branches' statements are not on the path after it; an if without one is
 * on the path like any statement. */
static Block *copy_block(Grad *g, const Block *b, Path *path, bool top) {
    StmtList out = {0};
    int mark = path->n;
    bool returned = false;
    for (int i = 0; i < b->nstmts && !returned && !g->failed; i++) {
        Stmt *s = b->stmts[i];
        if (s->kind == STMT_RETURN) {
            emit_return(g, s, path, &out);
            returned = true;
        } else if (s->kind == STMT_IF && grad_has_return(s))
            grad_stmts_push(&out, copy_if(g, s, path));
        else {
            grad_stmts_push(&out, grad_clone_stmt(g, s));
            grad_stmts_push(path, s);
        }
    }
    if (top && !returned && !g->failed) grad_sweep_path(g, path->v, path->n, NULL, &out);
    path->n = mark;
    return grad_stmts_block(g, &out, b->span);
}

/* ---- the entry point ---- */

static void name_adjoints(Grad *g) {
    const Item *fn = g->fn;
    grad_names_collect_fn(g, fn);
    grad_names_use(g, arena_printf(g->arena, "%s_grad", fn->name));
    g->seed = grad_fresh_name(g, "seed");
    g->result = grad_fresh_name(g, "result");
    for (int i = 0; i < fn->u.fn.nparams; i++)
        if (g->wrt[i] || g->writes[i])
            g->d_param[i] =
                grad_fresh_name(g, arena_printf(g->arena, "d_%s", fn->u.fn.params[i]->name));
}

static bool derive(Grad *g) {
    Item *fn = g->fn;
    int n = fn->u.fn.nparams;
    g->wrt = calloc((size_t)n + 1, sizeof *g->wrt);
    g->writes = calloc((size_t)n + 1, sizeof *g->writes);
    g->d_param = calloc((size_t)n + 1, sizeof *g->d_param);
    if (!g->wrt || !g->writes || !g->d_param) abort();
    if (!grad_wrt(fn, g->derive, g->wrt, g->diags)) return false;
    grad_find_writes(g);
    g->has_seed = type_is_compute_float(fn->u.fn.ret);
    bool outputs = false;
    for (int i = 0; i < n; i++) outputs |= g->writes[i];
    if (!g->has_seed && !outputs) {
        diag_error(g->diags, g->derive->u.derive.target_span, E_GRAD,
                   "differentiate a function that returns f32 or f64 or writes a float view",
                   "%s neither returns a float nor writes a float view: it has no gradient",
                   fn->name);
        return false;
    }
    name_adjoints(g);
    grad_find_active(g);
    if (g->failed) return false;
    Item *out = ast_new_item(g->arena, ITEM_FN, g->derive->span);
    out->name = arena_printf(g->arena, "%s_grad", fn->name);
    out->name_span = g->derive->span;
    out->u.fn.ret = fn->u.fn.ret;
    out->u.fn.ret_span = fn->u.fn.ret_span;
    out->u.fn.derived_from = fn;
    out->pub = g->derive->pub; /* `pub derive grad for f;` exports f_grad */
    signature(g, out);
    Path path = {0};
    out->u.fn.body = copy_block(g, fn->u.fn.body, &path, true);
    free(path.v);
    if (g->failed) return false;
    ast_program_add_item(g->prog, out);
    return true;
}

bool cairn_derive_grad(Program *p, Item *item, Diags *d) {
    Grad g = {.prog = p, .arena = p->arena, .diags = d, .derive = item};
    Item *fn =
        item->u.derive.target_fn ? item->u.derive.target_fn : find_fn(p, item->u.derive.target);
    bool ok = false;
    if (check_target(&g, fn)) {
        g.fn = fn;
        ok = derive(&g);
    }
    free(g.wrt);
    free(g.writes);
    free(g.d_param);
    free(g.act);
    free(g.names);
    free(g.ren_sym);
    free(g.ren_name);
    return ok;
}
