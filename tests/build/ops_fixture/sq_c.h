/* sq_c.h: the C back end's emitter for the fixture's row sq (sq.def), included into
 * compiler/lower/lower_c_expr.c with -DCAIRN_OPS_EXTRA_C='"<this file>"'. The same C
 * serves host code, an emulated lane and a CUDA lane. */
const char *lower_emit_fixture_sq(Lower *L, Expr *e) {
    const char *a = lower_expr(L, e->u.call.args[0]);
    return lower_bind(L, e->type, FMT("%s * %s", a, a));
}
