/* ast_verify.c: the contract of ast.h checked between passes, as QBE's ssacheck checks
 * its IR: the shape every tree has (the children a kind requires are there), and, once
 * the checker has accepted the program, what the passes after it rely on (types,
 * symbols, calls' targets and arities, scans' void type, locals' numbers). A violation
 * is a compiler bug: ast_verify_or_die reports it and aborts. */
#include <stdio.h>
#include <stdlib.h>

#include "syntax/syntax.h"

typedef struct Verifier {
    AstStage stage;
    const Item *fn; /* the function being walked */
    const char *problem;
    Span where;
} Verifier;

/* Records the first violation; returns whether `ok` held. */
static bool need(Verifier *v, bool ok, Span where, const char *problem) {
    if (!ok && !v->problem) {
        v->problem = problem;
        v->where = where;
    }
    return ok;
}

static bool checked(const Verifier *v) { return v->stage == AST_CHECKED; }

static void verify_expr(Verifier *v, const Expr *e, Span at);
static void verify_block(Verifier *v, const Block *b, Span at);

/* A symbol the checker resolved: set, not poisoned, numbered within its function. */
static void verify_symbol(Verifier *v, const Symbol *s, Span at, const char *what) {
    if (!checked(v) || !need(v, s != NULL, at, what)) return;
    need(v, s->kind != SYM_POISON && s->type != NULL, at, "a resolved symbol without a type");
    bool local = s->kind == SYM_LOCAL || s->kind == SYM_PARAM || s->kind == SYM_LOOP ||
                 s->kind == SYM_BUFFER;
    if (local && v->fn)
        need(v, s->id >= 0 && s->id < v->fn->u.fn.nlocals, at,
             "a local's number is outside its function's nlocals");
}

static void verify_call(Verifier *v, const Expr *e) {
    need(v, e->u.call.callee != NULL, e->span, "a call without a callee");
    need(v, e->u.call.nargs == 0 || e->u.call.args != NULL, e->span, "a call's arguments missing");
    for (int i = 0; i < e->u.call.nargs; i++) verify_expr(v, e->u.call.args[i], e->span);
    if (!checked(v)) return;
    const Builtin b = e->u.call.builtin;
    const Item *fn = e->u.call.fn;
    if (!need(v, (b != BI_NONE) != (fn != NULL), e->span,
              "a call resolves to neither or both a builtin and a function"))
        return;
    if (b != BI_NONE) {
        need(v, (unsigned)b < BI_COUNT && ast_builtin_name(b)[0], e->span, "an unknown builtin");
        return;
    }
    if (need(v, fn->kind == ITEM_FN, e->span, "a call's function is not a fn item"))
        need(v, e->u.call.nargs == fn->u.fn.nparams, e->span,
             "a call's arity differs from its function's");
}

static void verify_reduce(Verifier *v, const Expr *e) {
    bool warp = e->u.reduce.mode == MODE_WARP; /* across a warp's lanes: no count */
    need(v, warp || e->u.reduce.count, e->span, "a reduce without its count");
    need(v, e->u.reduce.scan == (e->u.reduce.into != NULL), e->span,
         "a scan without its target, or a reduce with one");
    const Expr *parts[] = {e->u.reduce.lo, e->u.reduce.count, e->u.reduce.into};
    for (int k = 0; k < 3; k++)
        if (parts[k]) verify_expr(v, parts[k], e->span);
    verify_expr(v, e->u.reduce.body, e->span);
    if (!checked(v)) return;
    if (e->u.reduce.var)
        verify_symbol(v, e->u.reduce.var_sym, e->span, "a reduce's binder unresolved");
    if (e->u.reduce.scan)
        need(v, e->type->kind == TY_VOID, e->span, "a scan whose type is not void");
}

/* Every child a kind requires, then (checked) its type. */
static void verify_expr(Verifier *v, const Expr *e, Span at) {
    if (!need(v, e != NULL, at, "a missing expression")) return;
    need(v, e->span.line >= 1 && e->span.col >= 1, at, "an expression without a span");
    if (checked(v))
        need(v, e->type && e->type->kind != TY_ERROR, e->span, "an expression without a type");
    switch (e->kind) {
    case EXPR_NAME:
        need(v, e->u.name.name != NULL, e->span, "a name without its text");
        verify_symbol(v, e->u.name.sym, e->span, "a name that does not resolve");
        if (checked(v) && e->u.name.sym && e->u.name.sym->type && e->type &&
            e->u.name.sym->type->kind == TY_VIEW && !e->u.name.sym->type->u.view.extent)
            need(v, e->type->kind != TY_VIEW, e->span,
                 "a scalar rw<T> name typed as its view, not T");
        break;
    case EXPR_UNARY: verify_expr(v, e->u.unary.operand, e->span); break;
    case EXPR_BINARY:
        verify_expr(v, e->u.binary.lhs, e->span);
        verify_expr(v, e->u.binary.rhs, e->span);
        break;
    case EXPR_CALL: verify_call(v, e); break;
    case EXPR_INDEX:
        verify_expr(v, e->u.index.base, e->span);
        verify_expr(v, e->u.index.index, e->span);
        break;
    case EXPR_MEMBER:
        need(v, e->u.member.base && e->u.member.field, e->span, "a member without base or field");
        break;
    case EXPR_CONVERT:
        need(v, e->u.convert.to != NULL, e->span, "a conversion without its type");
        verify_expr(v, e->u.convert.arg, e->span);
        break;
    case EXPR_REDUCE: verify_reduce(v, e); break;
    default: break;
    }
}

static void verify_binder(Verifier *v, const Binder *b, Span at) {
    if (b->lo) verify_expr(v, b->lo, at);
    verify_expr(v, b->count, at);
    if (checked(v)) verify_symbol(v, b->sym, at, "a loop binder unresolved");
}

/* A for loop or a parallel region: its binder, then its body. */
static void verify_loop(Verifier *v, const Binder *b, const Block *body, Span at) {
    verify_binder(v, b, at);
    verify_block(v, body, at);
}

static void verify_stmt(Verifier *v, const Stmt *s, Span at) {
    if (!need(v, s != NULL, at, "a missing statement")) return;
    switch (s->kind) {
    case STMT_LET:
        verify_expr(v, s->u.let.init, s->span);
        if (checked(v)) verify_symbol(v, s->u.let.sym, s->span, "a let without its symbol");
        break;
    case STMT_ASSIGN:
        verify_expr(v, s->u.assign.target, s->span);
        verify_expr(v, s->u.assign.value, s->span);
        break;
    case STMT_EXPR: verify_expr(v, s->u.expr, s->span); break;
    case STMT_IF:
        verify_expr(v, s->u.if_.cond, s->span);
        verify_block(v, s->u.if_.then, s->span);
        if (s->u.if_.els)
            need(v, s->u.if_.els->kind == STMT_BLOCK || s->u.if_.els->kind == STMT_IF, s->span,
                 "an else that is neither a block nor an if");
        if (s->u.if_.els) verify_stmt(v, s->u.if_.els, s->span);
        break;
    case STMT_FOR: verify_loop(v, &s->u.for_.b, s->u.for_.body, s->span); break;
    case STMT_RETURN:
        if (s->u.ret.value) verify_expr(v, s->u.ret.value, s->span);
        break;
    case STMT_PARALLEL: verify_loop(v, &s->u.parallel.b, s->u.parallel.body, s->span); break;
    case STMT_BLOCKS:
        verify_binder(v, &s->u.blocks.grid, s->span);
        verify_binder(v, &s->u.blocks.threads, s->span);
        verify_block(v, s->u.blocks.body, s->span);
        need(v, !checked(v) || s->u.blocks.on_device, s->span,
             "a cooperative region not placed on the device");
        break;
    case STMT_BUFFER:
    case STMT_SHARED:
        need(v, s->u.alloc.elem && s->u.alloc.init && s->u.alloc.init->kind == EXPR_ZEROED, s->span,
             "an allocation without its element type or zeroed");
        verify_expr(v, s->u.alloc.count, s->span);
        if (checked(v))
            verify_symbol(v, s->u.alloc.sym, s->span, "an allocation without its symbol");
        break;
    case STMT_BARRIER: break;
    case STMT_BLOCK: verify_block(v, s->u.block, s->span); break;
    }
}

static void verify_block(Verifier *v, const Block *b, Span at) {
    if (!need(v, b != NULL, at, "a missing block")) return;
    need(v, b->nstmts == 0 || b->stmts != NULL, b->span, "a block's statements missing");
    for (int i = 0; i < b->nstmts; i++) verify_stmt(v, b->stmts[i], b->span);
}

static void verify_fn(Verifier *v, const Item *it) {
    v->fn = it;
    need(v, it->u.fn.ret != NULL, it->span, "a function without its return type");
    for (int i = 0; i < it->u.fn.nparams; i++) {
        const Param *pm = it->u.fn.params[i];
        if (!need(v, pm && pm->type, it->span, "a parameter without its type")) continue;
        if (checked(v)) verify_symbol(v, pm->sym, pm->span, "a parameter without its symbol");
    }
    verify_block(v, it->u.fn.body, it->span);
    if (it->u.fn.expr_body && it->u.fn.body)
        need(v, it->u.fn.body->nstmts == 1 && it->u.fn.body->stmts[0]->kind == STMT_RETURN,
             it->span, "an expression-bodied function whose body is not `return e;`");
    v->fn = NULL;
}

const char *ast_verify(const Program *p, AstStage stage, Span *where) {
    Verifier v = {.stage = stage};
    if (stage == AST_CHECKED) need(&v, p->checked, (Span){0}, "a program the checker refused");
    for (int i = 0; i < p->nitems && !v.problem; i++) {
        const Item *it = p->items[i];
        if (!need(&v, it != NULL && it->name != NULL, (Span){0}, "an item without its name")) break;
        if (checked(&v) && it->kind != ITEM_DERIVE)
            need(&v, it->sym != NULL, it->span, "an item without its symbol");
        if (it->kind == ITEM_FN) verify_fn(&v, it);
        else if (it->kind == ITEM_CONST) verify_expr(&v, it->u.const_.value, it->span);
        else if (it->kind == ITEM_DERIVE && checked(&v))
            need(&v, it->u.derive.target_fn != NULL, it->span, "a derive without its target");
    }
    if (v.problem && where) *where = v.where;
    return v.problem;
}

void ast_verify_or_die(const Program *p, AstStage stage, const char *after) {
    Span at = {0};
    const char *problem = ast_verify(p, stage, &at);
    if (!problem) return;
    fprintf(stderr,
            "cairn: internal error: after %s, %s:%d:%d: %s (the contract of syntax/ast.h; "
            "please report this program)\n",
            after, at.file ? at.file : p->src.path, at.line, at.col, problem);
    abort();
}
