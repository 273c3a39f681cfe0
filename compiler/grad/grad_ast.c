/* grad_ast.c: the nodes derive grad writes. Every node is fresh and unchecked (no type,
 * no symbol), allocated from the program's arena, so the checker resolves and types
 * f_grad exactly as it would a function the user wrote. Copies of f's code are deep:
 * f's own checked nodes are never shared with f_grad. */
#include "grad/grad_internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *grad_grow(void *v, int *cap, size_t elem) {
    *cap = *cap ? *cap * 2 : 8;
    void *p = realloc(v, elem * (size_t)*cap);
    if (!p) {
        fputs("cairn: out of memory\n", stderr);
        abort();
    }
    return p;
}

void grad_stmts_push(StmtList *l, Stmt *s) {
    assert(s && l->n <= l->cap);
    if (l->n == l->cap) l->v = grad_grow(l->v, &l->cap, sizeof *l->v);
    l->v[l->n++] = s;
}

void grad_stmts_append(StmtList *l, const StmtList *more) {
    for (int i = 0; i < more->n; i++) grad_stmts_push(l, more->v[i]);
}

Block *grad_stmts_block(Grad *g, StmtList *l, Span span) {
    Stmt **v = l->n ? arena_copy(g->arena, l->v, sizeof(Stmt *) * (size_t)l->n) : NULL;
    Block *b = ast_new_block(g->arena, span, v, l->n);
    free(l->v);
    *l = (StmtList){0};
    return b;
}

Expr *grad_mk_name(Grad *g, const char *name, Span sp) {
    assert(name && *name);
    Expr *e = ast_new_expr(g->arena, EXPR_NAME, sp);
    e->u.name.name = name;
    return e;
}

Expr *grad_mk_float(Grad *g, const char *text, Span sp) {
    Expr *e = ast_new_expr(g->arena, EXPR_FLOAT, sp);
    e->u.float_lit.text = text;
    return e;
}

Expr *grad_mk_binary(Grad *g, BinaryOp op, Expr *lhs, Expr *rhs) {
    assert(lhs && rhs);
    Expr *e = ast_new_expr(g->arena, EXPR_BINARY, lhs->span);
    e->u.binary.op = op;
    e->u.binary.lhs = lhs;
    e->u.binary.rhs = rhs;
    return e;
}

/* -(-x) is x: the sweep negates adjoints of subtrahends, and twice is none. */
Expr *grad_mk_neg(Grad *g, Expr *x) {
    if (x->kind == EXPR_UNARY && x->u.unary.op == UN_NEG) return x->u.unary.operand;
    Expr *e = ast_new_expr(g->arena, EXPR_UNARY, x->span);
    e->u.unary.op = UN_NEG;
    e->u.unary.operand = x;
    return e;
}

Expr *grad_mk_index(Grad *g, Expr *base, Expr *index) {
    Expr *e = ast_new_expr(g->arena, EXPR_INDEX, base->span);
    e->u.index.base = base;
    e->u.index.index = index;
    return e;
}

Expr *grad_mk_convert(Grad *g, const Type *to, Expr *x) {
    Expr *e = ast_new_expr(g->arena, EXPR_CONVERT, x->span);
    e->u.convert.to = to;
    e->u.convert.arg = x;
    return e;
}

Stmt *grad_mk_let(Grad *g, const char *name, bool mut, const Type *declared, Expr *init) {
    Stmt *s = ast_new_stmt(g->arena, STMT_LET, init->span);
    s->u.let.name = name;
    s->u.let.name_span = init->span;
    s->u.let.mut = mut;
    s->u.let.declared = declared;
    s->u.let.init = init;
    return s;
}

Stmt *grad_mk_assign(Grad *g, AssignOp op, Expr *target, Expr *value) {
    /* an adjoint is added into a name or an element, never into an expression */
    assert(value && (target->kind == EXPR_NAME || target->kind == EXPR_INDEX));
    Stmt *s = ast_new_stmt(g->arena, STMT_ASSIGN, target->span);
    s->u.assign.op = op;
    s->u.assign.target = target;
    s->u.assign.value = value;
    return s;
}

Stmt *grad_mk_expr_stmt(Grad *g, Expr *e) {
    Stmt *s = ast_new_stmt(g->arena, STMT_EXPR, e->span);
    s->u.expr = e;
    return s;
}

Stmt *grad_mk_return(Grad *g, Expr *value, Span sp) {
    Stmt *s = ast_new_stmt(g->arena, STMT_RETURN, sp);
    s->u.ret.value = value;
    return s;
}

/* ---- deep copies, without what the checker filled in ---- */

static Expr **clone_exprs(Grad *g, Expr *const *v, int n) {
    if (!n) return NULL;
    Expr **out = arena_alloc(g->arena, sizeof(Expr *) * (size_t)n);
    for (int i = 0; i < n; i++) out[i] = grad_clone_expr(g, v[i]);
    return out;
}

Expr *grad_clone_expr(Grad *g, const Expr *e) {
    if (!e) return NULL;
    Expr *c = ast_new_expr(g->arena, e->kind, e->span);
    c->u = e->u;
    switch (e->kind) {
    case EXPR_NAME:
        c->u.name.name = grad_name_for(g, e->u.name.sym, e->u.name.name);
        c->u.name.sym = NULL;
        break;
    case EXPR_UNARY: c->u.unary.operand = grad_clone_expr(g, e->u.unary.operand); break;
    case EXPR_BINARY:
        c->u.binary.lhs = grad_clone_expr(g, e->u.binary.lhs);
        c->u.binary.rhs = grad_clone_expr(g, e->u.binary.rhs);
        break;
    case EXPR_CALL:
        c->u.call.callee = grad_clone_expr(g, e->u.call.callee);
        c->u.call.args = clone_exprs(g, e->u.call.args, e->u.call.nargs);
        c->u.call.builtin = BI_NONE;
        c->u.call.fn = NULL;
        break;
    case EXPR_INDEX:
        c->u.index.base = grad_clone_expr(g, e->u.index.base);
        c->u.index.index = grad_clone_expr(g, e->u.index.index);
        break;
    case EXPR_MEMBER: c->u.member.base = grad_clone_expr(g, e->u.member.base); break;
    case EXPR_CONVERT:
        c->u.convert.to = grad_clone_type(g, e->u.convert.to);
        c->u.convert.arg = grad_clone_expr(g, e->u.convert.arg);
        break;
    case EXPR_REDUCE:
        c->u.reduce.var = grad_name_for(g, e->u.reduce.var_sym, e->u.reduce.var);
        c->u.reduce.var_sym = NULL;
        c->u.reduce.lo = grad_clone_expr(g, e->u.reduce.lo);
        c->u.reduce.count = grad_clone_expr(g, e->u.reduce.count);
        c->u.reduce.body = grad_clone_expr(g, e->u.reduce.body);
        c->u.reduce.into = grad_clone_expr(g, e->u.reduce.into);
        break;
    default: break; /* literals and `zeroed` carry no children */
    }
    return c;
}

/* A view type's extent is an expression over the parameters: copy it unresolved. */
const Type *grad_clone_type(Grad *g, const Type *t) {
    if (!t || t->kind != TY_VIEW || !t->u.view.extent) return t;
    TypeView v = t->u.view;
    v.extent = grad_clone_expr(g, v.extent);
    return type_new_view(g->arena, v);
}

static Binder clone_binder(Grad *g, const Binder *b) {
    Binder c = *b;
    c.var = grad_name_for(g, b->sym, b->var);
    c.sym = NULL;
    c.lo = grad_clone_expr(g, b->lo);
    c.count = grad_clone_expr(g, b->count);
    return c;
}

Block *grad_clone_block(Grad *g, const Block *b) {
    if (!b) return NULL;
    Stmt **v = b->nstmts ? arena_alloc(g->arena, sizeof(Stmt *) * (size_t)b->nstmts) : NULL;
    for (int i = 0; i < b->nstmts; i++) v[i] = grad_clone_stmt(g, b->stmts[i]);
    return ast_new_block(g->arena, b->span, v, b->nstmts);
}

Stmt *grad_clone_stmt(Grad *g, const Stmt *s) {
    Stmt *c = ast_new_stmt(g->arena, s->kind, s->span);
    c->u = s->u;
    switch (s->kind) {
    case STMT_LET:
        c->u.let.name = grad_name_for(g, s->u.let.sym, s->u.let.name);
        c->u.let.sym = NULL;
        c->u.let.declared = grad_clone_type(g, s->u.let.declared);
        c->u.let.init = grad_clone_expr(g, s->u.let.init);
        break;
    case STMT_ASSIGN:
        c->u.assign.target = grad_clone_expr(g, s->u.assign.target);
        c->u.assign.value = grad_clone_expr(g, s->u.assign.value);
        break;
    case STMT_EXPR: c->u.expr = grad_clone_expr(g, s->u.expr); break;
    case STMT_IF:
        c->u.if_.cond = grad_clone_expr(g, s->u.if_.cond);
        c->u.if_.then = grad_clone_block(g, s->u.if_.then);
        c->u.if_.els = s->u.if_.els ? grad_clone_stmt(g, s->u.if_.els) : NULL;
        break;
    case STMT_FOR:
        c->u.for_.b = clone_binder(g, &s->u.for_.b);
        c->u.for_.body = grad_clone_block(g, s->u.for_.body);
        break;
    case STMT_PARALLEL:
        c->u.parallel.b = clone_binder(g, &s->u.parallel.b);
        c->u.parallel.body = grad_clone_block(g, s->u.parallel.body);
        break;
    case STMT_BLOCKS:
        c->u.blocks.grid = clone_binder(g, &s->u.blocks.grid);
        c->u.blocks.threads = clone_binder(g, &s->u.blocks.threads);
        c->u.blocks.body = grad_clone_block(g, s->u.blocks.body);
        break;
    case STMT_RETURN: c->u.ret.value = grad_clone_expr(g, s->u.ret.value); break;
    case STMT_BUFFER:
    case STMT_SHARED:
        c->u.alloc.sym = NULL;
        c->u.alloc.count = grad_clone_expr(g, s->u.alloc.count);
        c->u.alloc.init = grad_clone_expr(g, s->u.alloc.init);
        break;
    case STMT_BLOCK: c->u.block = grad_clone_block(g, s->u.block); break;
    case STMT_BARRIER: break;
    }
    return c;
}

/* ---- names: f_grad's own names never collide with f's or the program's ---- */

void grad_names_use(Grad *g, const char *name) {
    if (g->nnames == g->capnames) g->names = grad_grow(g->names, &g->capnames, sizeof *g->names);
    g->names[g->nnames++] = name;
}

static bool name_taken(const Grad *g, const char *name) {
    for (int i = 0; i < g->nnames; i++)
        if (strcmp(g->names[i], name) == 0) return true;
    return false;
}

const char *grad_fresh_name(Grad *g, const char *base) {
    const char *name = base;
    for (int k = 1; name_taken(g, name); k++) name = arena_printf(g->arena, "%s_%d", base, k);
    if (name != base) name = arena_strdup(g->arena, name);
    assert(!name_taken(g, name)); /* fresh: no name f or f_grad uses already */
    grad_names_use(g, name);
    return name;
}

static void names_in_block(Grad *g, const Block *b);

void grad_each_reduce(Grad *g, const Expr *e, void (*visit)(Grad *g, const Expr *reduce)) {
    if (!e) return;
    switch (e->kind) {
    case EXPR_REDUCE:
        visit(g, e);
        grad_each_reduce(g, e->u.reduce.body, visit);
        return;
    case EXPR_UNARY: grad_each_reduce(g, e->u.unary.operand, visit); return;
    case EXPR_BINARY:
        grad_each_reduce(g, e->u.binary.lhs, visit);
        grad_each_reduce(g, e->u.binary.rhs, visit);
        return;
    case EXPR_CONVERT: grad_each_reduce(g, e->u.convert.arg, visit); return;
    case EXPR_INDEX: grad_each_reduce(g, e->u.index.index, visit); return;
    case EXPR_CALL:
        for (int i = 0; i < e->u.call.nargs; i++) grad_each_reduce(g, e->u.call.args[i], visit);
        return;
    default: return;
    }
}

/* A reduce's binder is a name too (its copy in a twin runs where later lets are seen). */
static void use_binder(Grad *g, const Expr *reduce) {
    if (reduce->u.reduce.var) grad_names_use(g, reduce->u.reduce.var);
}

static void names_in_expr(Grad *g, const Expr *e) { grad_each_reduce(g, e, use_binder); }

static void names_in_stmt(Grad *g, const Stmt *s) {
    switch (s->kind) {
    case STMT_LET:
        grad_names_use(g, s->u.let.name);
        names_in_expr(g, s->u.let.init);
        break;
    case STMT_ASSIGN: names_in_expr(g, s->u.assign.value); break;
    case STMT_RETURN: names_in_expr(g, s->u.ret.value); break;
    case STMT_BUFFER:
    case STMT_SHARED: grad_names_use(g, s->u.alloc.name); break;
    case STMT_IF:
        names_in_block(g, s->u.if_.then);
        if (s->u.if_.els) names_in_stmt(g, s->u.if_.els);
        break;
    case STMT_FOR:
        grad_names_use(g, s->u.for_.b.var);
        names_in_block(g, s->u.for_.body);
        break;
    case STMT_PARALLEL:
        grad_names_use(g, s->u.parallel.b.var);
        names_in_block(g, s->u.parallel.body);
        break;
    case STMT_BLOCKS: names_in_block(g, s->u.blocks.body); break;
    case STMT_BLOCK: names_in_block(g, s->u.block); break;
    default: break;
    }
}

static void names_in_block(Grad *g, const Block *b) {
    for (int i = 0; b && i < b->nstmts; i++) names_in_stmt(g, b->stmts[i]);
}

/* Top-level names, f's parameters and every local f declares. */
void grad_names_collect_fn(Grad *g, const Item *fn) {
    for (int i = 0; i < g->prog->nitems; i++)
        if (g->prog->items[i]->name) grad_names_use(g, g->prog->items[i]->name);
    for (int i = 0; i < fn->u.fn.nparams; i++) grad_names_use(g, fn->u.fn.params[i]->name);
    names_in_block(g, fn->u.fn.body);
}

static int name_count(const Grad *g, const char *name) {
    int n = 0;
    for (int i = 0; i < g->nnames; i++) n += strcmp(g->names[i], name) == 0;
    return n;
}

const char *grad_name_for(const Grad *g, const Symbol *sym, const char *name) {
    for (int i = 0; sym && i < g->nren; i++)
        if (g->ren_sym[i] == sym) return g->ren_name[i];
    return name;
}

void grad_rename_if_reused(Grad *g, const Symbol *sym) {
    if (!sym || grad_name_for(g, sym, NULL) || name_count(g, sym->name) < 2) return;
    if (g->nren == g->capren) {
        int cap = g->capren;
        g->ren_sym = grad_grow(g->ren_sym, &cap, sizeof *g->ren_sym);
        g->ren_name = grad_grow(g->ren_name, &g->capren, sizeof *g->ren_name);
    }
    g->ren_sym[g->nren] = sym;
    g->ren_name[g->nren++] = grad_fresh_name(g, sym->name);
}
