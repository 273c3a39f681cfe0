/* grad_cr.c: the derivatives of the correctly rounded functions (std.cr), written in
 * terms of std.cr itself (docs/gradients.md says why each form is exact enough):
 *
 *   exp x -> exp x        exp2 x -> exp2 x * ln 2     expm1 x -> exp x
 *   log x -> 1 / x        log2 x -> 1 / (x ln 2)      log1p x -> 1 / (1 + x)
 *   tanh x -> 4 sigmoid(2x) sigmoid(-2x)              sigmoid x -> sigmoid x sigmoid(-x)
 *   sin x -> cos x        cos x -> -sin x
 *
 * Products of values that are each correctly rounded, with no difference of nearly equal
 * terms: 1 - tanh^2 x and 1 - sigmoid x would lose every bit where tanh x or sigmoid x is
 * near 1; sigmoid(-x) is that difference computed without cancellation. */
#include "grad/grad_internal.h"

#define LN2_TEXT "0.69314718055994530941723212145817656807550013436025525412068"

/* std.cr.NAME(x), a fresh unchecked call the checker types from x. */
static Expr *cr_call(Grad *g, const char *name, Expr *x) {
    Expr *path = grad_mk_name(g, "std", x->span);
    for (int k = 0; k < 2; k++) {
        Expr *m = ast_new_expr(g->arena, EXPR_MEMBER, x->span);
        m->u.member.base = path;
        m->u.member.field = k ? name : "cr";
        path = m;
    }
    Expr *c = ast_new_expr(g->arena, EXPR_CALL, x->span);
    c->u.call.callee = path;
    c->u.call.args = arena_alloc(g->arena, sizeof(Expr *));
    c->u.call.args[0] = x;
    c->u.call.nargs = 1;
    return c;
}

static Expr *mul(Grad *g, Expr *a, Expr *b) { return grad_mk_binary(g, BIN_MUL, a, b); }

Expr *grad_cr_adjoint(Grad *g, const Expr *e, Expr *adj) {
    const Expr *x = e->u.call.args[0];
    Expr *cx = grad_clone_expr(g, x), *ce = grad_clone_expr(g, e);
    Span sp = e->span;
    switch (e->u.call.builtin) {
    case BI_CR_EXP: return mul(g, adj, ce);
    case BI_CR_EXP2: return mul(g, adj, mul(g, ce, grad_mk_float(g, LN2_TEXT, sp)));
    case BI_CR_EXPM1: return mul(g, adj, cr_call(g, "exp", cx));
    case BI_CR_LOG: return grad_mk_binary(g, BIN_DIV, adj, cx);
    case BI_CR_LOG2:
        return grad_mk_binary(g, BIN_DIV, adj, mul(g, cx, grad_mk_float(g, LN2_TEXT, sp)));
    case BI_CR_LOG1P:
        return grad_mk_binary(g, BIN_DIV, adj,
                              grad_mk_binary(g, BIN_ADD, grad_mk_float(g, "1.0", sp), cx));
    case BI_CR_TANH: {
        Expr *two_x = mul(g, grad_mk_float(g, "2.0", sp), cx);
        Expr *minus = grad_mk_neg(g, mul(g, grad_mk_float(g, "2.0", sp), grad_clone_expr(g, x)));
        Expr *s = mul(g, cr_call(g, "sigmoid", two_x), cr_call(g, "sigmoid", minus));
        return mul(g, adj, mul(g, grad_mk_float(g, "4.0", sp), s));
    }
    case BI_CR_SIGMOID: return mul(g, adj, mul(g, ce, cr_call(g, "sigmoid", grad_mk_neg(g, cx))));
    case BI_CR_SIN: return mul(g, adj, cr_call(g, "cos", cx));
    default: /* cos */ return grad_mk_neg(g, mul(g, adj, cr_call(g, "sin", cx)));
    }
}
