/* verify_cr.c: std.cr calls in the model (docs/tools.md, "cairn verify").
 *
 * A correctly rounded function has one result for each input, on every machine, so a
 * call is the application of an uninterpreted function of its argument (one per
 * function and type: equal arguments give equal results), constrained by facts that
 * hold for the rounded results of every input. A fact about the exact value carries
 * over when its bounds are representable: rounding to nearest is monotonic and leaves a
 * representable value where it is (exp(x) >= 0 for every x, but not > 0: e^-200 rounds
 * to 0 in f32). The facts are added to what every query assumes (V->side); the result
 * carries a range bit (V->range_bits): a query unsat through it is verified, since the
 * real function is one of those the facts allow, while a model through it answers
 * unknown instead of showing a counterexample no real run gives. Its bits are exact: the
 * runtime returns one NaN pattern for every NaN result. */
#include <math.h>
#include <string.h>

#include "verify/verify_internal.h"

/* Short names for the FP predicates. */
static Z3_ast fp(Verifier *V, const Type *t, double v) {
    return Z3_mk_fpa_numeral_double(V->z, v, verify_sort(V, t));
}
static Z3_ast ge(Verifier *V, Z3_ast a, Z3_ast b) { return Z3_mk_fpa_geq(V->z, a, b); }
static Z3_ast le(Verifier *V, Z3_ast a, Z3_ast b) { return Z3_mk_fpa_leq(V->z, a, b); }
static Z3_ast is_nan(Verifier *V, Z3_ast a) { return Z3_mk_fpa_is_nan(V->z, a); }
static Z3_ast implies(Verifier *V, Z3_ast a, Z3_ast b) { return Z3_mk_implies(V->z, a, b); }
static Z3_ast negation(Verifier *V, Z3_ast a) { return Z3_mk_not(V->z, a); }

/* A call's type, argument x and result r: what each fact is about. */
typedef struct CrCall {
    const Type *t;
    Z3_ast x, r;
} CrCall;

/* lo <= r <= hi and r is a number, where x is one. */
static Z3_ast within(Verifier *V, const CrCall *c, double lo, double hi) {
    const Type *t = c->t;
    Z3_ast x = c->x, r = c->r;
    Z3_ast in = verify_and(V, ge(V, r, fp(V, t, lo)), le(V, r, fp(V, t, hi)));
    return implies(V, negation(V, is_nan(V, x)), verify_and(V, negation(V, is_nan(V, r)), in));
}

/* x >= a -> r >= ra, and x <= a -> r <= ra (the function rises through (a, ra)). */
static Z3_ast rises_through(Verifier *V, const CrCall *c, double a, double ra) {
    const Type *t = c->t;
    Z3_ast x = c->x, r = c->r;
    return verify_and(V, implies(V, ge(V, x, fp(V, t, a)), ge(V, r, fp(V, t, ra))),
                      implies(V, le(V, x, fp(V, t, a)), le(V, r, fp(V, t, ra))));
}

/* The facts of the exp family, and of the log family: NaN below the domain, -inf at its
 * end, finite inside it, rising through (1, 0) or (0, 0) for log1p. */
static Z3_ast exp_facts(Verifier *V, Builtin b, const CrCall *c) {
    double inf = INFINITY;
    if (b == BI_CR_EXPM1) /* e^x - 1: in [-1, inf], through (0, 0) */
        return verify_and(V, within(V, c, -1.0, inf), rises_through(V, c, 0.0, 0.0));
    /* e^x, 2^x: in [0, inf], through (0, 1) */
    return verify_and(V, within(V, c, 0.0, inf), rises_through(V, c, 0.0, 1.0));
}

static Z3_ast log_facts(Verifier *V, Builtin b, const CrCall *c) {
    Z3_context z = V->z;
    const Type *t = c->t;
    Z3_ast x = c->x, r = c->r;
    double one = b == BI_CR_LOG1P ? 0.0 : 1.0, low = b == BI_CR_LOG1P ? -1.0 : 0.0;
    Z3_ast below = Z3_mk_fpa_lt(z, x, fp(V, t, low)); /* outside the domain: NaN */
    Z3_ast domain = verify_and(V, negation(V, is_nan(V, x)), negation(V, below));
    Z3_ast f = verify_and(V, implies(V, below, is_nan(V, r)),
                          implies(V, domain, negation(V, is_nan(V, r))));
    Z3_ast at_low = Z3_mk_fpa_eq(z, x, fp(V, t, low)); /* log 0, log1p(-1): -inf */
    f = verify_and(V, f, implies(V, at_low, Z3_mk_fpa_eq(z, r, fp(V, t, -INFINITY))));
    Z3_ast inside =
        verify_and(V, Z3_mk_fpa_gt(z, x, fp(V, t, low)), negation(V, Z3_mk_fpa_is_infinite(z, x)));
    f = verify_and(V, f, implies(V, inside, negation(V, Z3_mk_fpa_is_infinite(z, r))));
    return verify_and(V, f, implies(V, domain, rises_through(V, c, one, 0.0)));
}

/* The facts for b's result r at argument x, for any x. */
static Z3_ast cr_facts(Verifier *V, Builtin b, const CrCall *c) {
    Z3_context z = V->z;
    const Type *t = c->t;
    Z3_ast x = c->x, r = c->r;
    Z3_ast f = implies(V, is_nan(V, x), is_nan(V, r)); /* NaN in, NaN out */
    switch (b) {
    case BI_CR_EXP:
    case BI_CR_EXP2:
    case BI_CR_EXPM1: return verify_and(V, f, exp_facts(V, b, c));
    case BI_CR_LOG:
    case BI_CR_LOG2:
    case BI_CR_LOG1P: return verify_and(V, f, log_facts(V, b, c));
    case BI_CR_TANH: /* [-1, 1], odd, through (0, 0) */
        return verify_and(V, f,
                          verify_and(V, within(V, c, -1.0, 1.0), rises_through(V, c, 0.0, 0.0)));
    case BI_CR_SIGMOID: /* [0, 1], through (0, 1/2) */
        return verify_and(V, f,
                          verify_and(V, within(V, c, 0.0, 1.0), rises_through(V, c, 0.0, 0.5)));
    default: { /* sin, cos: [-1, 1] for finite x, NaN for infinities; sin 0 = 0, cos 0 = 1 */
        Z3_ast inf = Z3_mk_fpa_is_infinite(z, x);
        f = verify_and(V, f, implies(V, inf, is_nan(V, r)));
        f = verify_and(V, f, implies(V, negation(V, inf), within(V, c, -1.0, 1.0)));
        Z3_ast at0 = Z3_mk_fpa_is_zero(z, x);
        Z3_ast v0 = b == BI_CR_SIN ? Z3_mk_eq(z, r, x) : Z3_mk_fpa_eq(z, r, fp(V, t, 1.0));
        return verify_and(V, f, implies(V, at0, v0));
    }
    }
}

/* The bits of r: the runtime's one NaN pattern for every NaN result (cairn_cr.h), the
 * value's own bits otherwise. */
static Z3_ast cr_bits(Verifier *V, const Type *t, Z3_ast r) {
    Z3_context z = V->z;
    Z3_sort s = verify_cell_sort(V, t);
    Z3_ast nan = t->kind == TY_F32 ? Z3_mk_unsigned_int64(z, 0x7FFFFFFFu, s)
                                   : Z3_mk_unsigned_int64(z, 0x7FFFFFFFFFFFFFFFull, s);
    return Z3_mk_ite(z, Z3_mk_fpa_is_nan(z, r), nan, Z3_mk_fpa_to_ieee_bv(z, r));
}

VVal verify_cr(Verifier *V, Expr *e) {
    Z3_context z = V->z;
    Builtin b = e->u.call.builtin;
    const Type *t = e->type;
    VVal x = verify_expr(V, e->u.call.args[0]);
    Z3_sort s = verify_sort(V, t);
    const char *name = arena_printf(V->prog->arena, "%s.%s", ast_builtin_name(b),
                                    t->kind == TY_F32 ? "f32" : "f64");
    Z3_func_decl f = Z3_mk_func_decl(z, Z3_mk_string_symbol(z, name), 1, &s, s);
    Z3_ast r = Z3_mk_app(z, f, 1, &x.t);
    /* true of the real function at every argument: a fact of every query, like a fresh
     * NaN pattern's */
    V->side = verify_and(V, V->side, cr_facts(V, b, &(CrCall){t, x.t, r}));
    const char *why = arena_printf(
        V->prog->arena, "%s's value, of which the model knows only its range", ast_builtin_name(b));
    unsigned bit = verify_taint_bit(V, e->span, why);
    if (bit != 1u << VERIFY_MAX_REASONS) V->range_bits |= bit;
    return (VVal){r, x.taint | bit, cr_bits(V, t, r)};
}
