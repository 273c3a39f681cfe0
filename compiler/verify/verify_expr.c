/* verify_expr.c: CAIRN expressions as Z3 terms (see verify.h for the scheme).
 *
 * Each guard mirrors the one the lowering emits, with the same condition and in the same
 * order: cairn_checked.h's integer guards (an exact result that does not fit, a zero
 * divisor, MIN / -1, a shift count outside [0, bits), an index outside the view, a
 * conversion whose value does not fit, trunc(x) outside [LO, HI + 1) for a float), and
 * cairn_float.h's (f8e4m3 past 464 or infinite, a quantize scale whose bits are zero,
 * negative, infinite or NaN, quantize of a NaN). Floats round to nearest-even in Z3's
 * floating-point theory; no fused multiply-add is ever built (Z3 4.8.12 rounds fp.fma
 * wrongly for some inputs, and the language has none); spellings of one rounded value
 * (x * 2.0 and x + x, a * b and b * a) are built as one term (canonical()). A float in
 * a cell is its IEEE bits: reading one gives the value and the bits, writing a computed
 * float stores its bits, or, for a NaN, a fresh NaN pattern carrying the NaN bit (the
 * hardware picks a NaN's payload; verify.h). Each guard is keyed by its tree node, so two guards at one
 * line and column are two properties, and integer overflow names its operator. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify/verify_internal.h"

/* ---- sorts, constants, state ---- */

Z3_sort verify_sort(Verifier *V, const Type *t) {
    switch (t->kind) {
    case TY_BOOL: return Z3_mk_bool_sort(V->z);
    case TY_F32: V->has_float = true; return Z3_mk_fpa_sort_32(V->z);
    case TY_F64: V->has_float = true; return Z3_mk_fpa_sort_64(V->z);
    default:
        return Z3_mk_bv_sort(
            V->z, (unsigned)(type_is_scalar(t) || type_is_storage_float(t) ? type_bits(t) : 64));
    }
}

Z3_sort verify_cell_sort(Verifier *V, const Type *t) {
    if (type_is_compute_float(t)) return Z3_mk_bv_sort(V->z, (unsigned)type_bits(t));
    return verify_sort(V, t);
}

Z3_ast verify_int_const(Verifier *V, const Type *t, uint64_t v) {
    return Z3_mk_unsigned_int64(V->z, v, verify_sort(V, t));
}

Z3_ast verify_u64(Verifier *V, uint64_t v) { return verify_int_const(V, type_scalar(TY_U64), v); }

Z3_ast verify_and(Verifier *V, Z3_ast a, Z3_ast b) {
    Z3_ast args[2] = {a, b};
    return Z3_mk_and(V->z, 2, args);
}
Z3_ast verify_or(Verifier *V, Z3_ast a, Z3_ast b) {
    Z3_ast args[2] = {a, b};
    return Z3_mk_or(V->z, 2, args);
}

Z3_ast verify_active(Verifier *V) {
    Z3_ast args[3] = {V->pc, V->alive, Z3_mk_not(V->z, V->returned)};
    return Z3_mk_and(V->z, 3, args);
}

Z3_ast verify_fresh(Verifier *V, const char *stem, Z3_sort sort) {
    char buf[64];
    snprintf(buf, sizeof buf, "%s!%d", stem, V->fresh++);
    return Z3_mk_const(V->z, Z3_mk_string_symbol(V->z, buf), sort);
}

/* Extends an integer of type t by `extra` bits, as its signedness says. */
static Z3_ast ext(Verifier *V, Z3_ast v, const Type *t, unsigned extra) {
    if (!extra) return v;
    return type_is_signed(t) ? Z3_mk_sign_ext(V->z, extra, v) : Z3_mk_zero_ext(V->z, extra, v);
}

Z3_ast verify_to_u64(Verifier *V, Z3_ast v, const Type *t) {
    return ext(V, v, t, 64u - (unsigned)type_bits(t));
}

/* A float of type t from its IEEE bits (exact). */
static Z3_ast fp_of_bits(Verifier *V, const Type *t, Z3_ast bits) {
    return Z3_mk_fpa_to_fp_bv(V->z, bits, verify_sort(V, t));
}
static Z3_ast bits_const(Verifier *V, const Type *t, uint64_t bits) {
    return Z3_mk_unsigned_int64(V->z, bits, verify_cell_sort(V, t));
}
static VVal fp_const(Verifier *V, const Type *t, double d) {
    uint64_t u;
    if (t->kind == TY_F32) {
        float f = (float)d;
        uint32_t w;
        memcpy(&w, &f, 4);
        u = w;
    } else {
        memcpy(&u, &d, 8);
    }
    Z3_ast b = bits_const(V, t, u);
    return (VVal){fp_of_bits(V, t, b), 0, b};
}
static Z3_ast fp_of_double(Verifier *V, const Type *t, double d) { return fp_const(V, t, d).t; }
static Z3_ast rne(Verifier *V) { return Z3_mk_fpa_rne(V->z); }

/* ---- stored values: a float's bits ---- */

VVal verify_load(Verifier *V, Z3_ast stored, const Type *t, unsigned taint) {
    if (!type_is_compute_float(t)) return (VVal){stored, taint, NULL};
    return (VVal){fp_of_bits(V, t, stored), taint, stored};
}

/* The bits of a computed float: exact unless it is a NaN, whose pattern is the hardware's
 * (a fresh NaN pattern, with the NaN bit). */
static Z3_ast hardware_bits(Verifier *V, Z3_ast t, const Type *ty, unsigned *taint) {
    Z3_context z = V->z;
    Z3_ast nan = verify_fresh(V, "nan", verify_cell_sort(V, ty));
    V->side = verify_and(V, V->side, Z3_mk_fpa_is_nan(z, fp_of_bits(V, ty, nan)));
    if (!V->nan_bit) {
        Span none = {0};
        V->nan_bit = verify_taint_bit(V, none, "the bits of a NaN an operation made");
    }
    *taint |= V->nan_bit;
    return Z3_mk_ite(z, Z3_mk_fpa_is_nan(z, t), nan, Z3_mk_fpa_to_ieee_bv(z, t));
}

Z3_ast verify_stored(Verifier *V, VVal v, const Type *t, unsigned *taint) {
    if (!type_is_compute_float(t)) return v.t;
    if (v.bits) return v.bits;
    return hardware_bits(V, v.t, t, taint);
}

/* ---- taint, guards, havoc ---- */

unsigned verify_taint_bit(Verifier *V, Span span, const char *reason) {
    char *text = span.line ? arena_printf(V->prog->arena, "%s (line %d)", reason, span.line)
                           : arena_strdup(V->prog->arena, reason);
    for (int i = 0; i < V->nreasons; i++)
        if (strcmp(V->reasons[i], text) == 0) return 1u << i;
    if (V->nreasons == VERIFY_MAX_REASONS) return 1u << VERIFY_MAX_REASONS;
    V->reasons[V->nreasons] = text;
    return 1u << V->nreasons++;
}

static VProp *find_prop(Verifier *V, VSite at) {
    for (int i = 0; i < V->nprops; i++) {
        VProp *p = &V->props[i];
        if (p->kind == at.kind && p->node == at.node && p->span.off == at.span.off &&
            p->span.len == at.span.len &&
            strcmp(p->detail ? p->detail : "", at.detail ? at.detail : "") == 0)
            return p;
    }
    if (V->nprops == V->capprops) {
        V->capprops = V->capprops ? 2 * V->capprops : 16;
        V->props = realloc(V->props, (size_t)V->capprops * sizeof *V->props);
        if (!V->props) abort();
    }
    VProp *p = &V->props[V->nprops++];
    *p = (VProp){.kind = at.kind,
                 .span = at.span,
                 .node = at.node,
                 .detail = at.detail,
                 .violation = Z3_mk_false(V->z),
                 .beyond = Z3_mk_false(V->z)};
    return p;
}

/* Adds one reached copy of a site to its property, in the current run's slot: the
 * unrolled run's copy counts where no loop before it ran past --unwind. */
static void record(Verifier *V, VProp *p, Z3_ast violation, unsigned taint) {
    unsigned path = V->pc_taint | V->alive_taint;
    if (V->pass == VP_INDUCT) {
        p->ind_violation = p->ind_violation ? verify_or(V, p->ind_violation, violation) : violation;
        p->ind_taint |= taint;
        p->ind_path_taint |= path;
        return;
    }
    Z3_ast within = Z3_mk_not(V->z, V->beyond);
    p->violation = verify_or(V, p->violation, verify_and(V, violation, within));
    p->beyond = verify_or(V, p->beyond, verify_and(V, verify_active(V), V->beyond));
    p->taint |= taint;
    p->path_taint |= path;
    p->stamp = ++V->stamp;
}

void verify_guard(Verifier *V, VSite at, Z3_ast ok, unsigned taint) {
    Z3_ast active = verify_active(V);
    if (V->collect) record(V, find_prop(V, at), verify_and(V, active, Z3_mk_not(V->z, ok)), taint);
    V->alive = verify_and(V, V->alive, verify_or(V, Z3_mk_not(V->z, active), ok));
    V->alive_taint |= taint;
}

VVal verify_havoc(Verifier *V, const Type *t, Span span, const char *reason) {
    Z3_ast c = verify_fresh(V, "havoc", verify_cell_sort(V, t));
    VVal v = verify_load(V, c, t, verify_taint_bit(V, span, reason));
    return v;
}

void verify_havoc_cell(Verifier *V, VCell *c, unsigned bit) {
    Z3_sort s = verify_cell_sort(V, c->elem);
    if (c->array) s = Z3_mk_array_sort(V->z, Z3_mk_bv_sort(V->z, 64), s);
    c->val = Z3_mk_ite(V->z, verify_active(V), verify_fresh(V, "havoc", s), c->val);
    c->taint |= bit;
}

void verify_unmodelled(Verifier *V, const void *node, Span span, const char *what) {
    unsigned bit =
        verify_taint_bit(V, span, arena_printf(V->prog->arena, "%s is not modelled", what));
    if (V->collect)
        record(V, find_prop(V, (VSite){VK_UNMODELLED, node, span, what}), verify_active(V), bit);
}

/* ---- environment ---- */

VCell *verify_new_cell(Verifier *V, VCell init) {
    VCell *c = arena_alloc(V->prog->arena, sizeof *c);
    *c = init;
    return c;
}

void verify_bind(Verifier *V, const Symbol *s, VCell *c) {
    if (V->nenv == V->capenv) {
        V->capenv = V->capenv ? 2 * V->capenv : 64;
        V->env = realloc(V->env, (size_t)V->capenv * sizeof *V->env);
        if (!V->env) abort();
    }
    V->env[V->nenv++] = (VBind){s, c};
}

VCell *verify_lookup(Verifier *V, const Symbol *s) {
    for (int i = V->nenv - 1; i >= 0; i--)
        if (V->env[i].sym == s) return V->env[i].cell;
    return NULL;
}

/* ---- arithmetic ---- */

/* Whether a * b fits the signed type t: its magnitude |a| * |b| (unsigned, exact when
 * bvumul_noovfl holds) is at most 2^(w-1) - 1, or 2^(w-1) when the signs differ. Z3
 * 4.8.12 folds its own bvsmul_noovfl of constants as if they were unsigned (-1 * 7
 * "overflows"), and a product in twice the width is slow to decide. */
static Z3_ast signed_product_fits(Verifier *V, Z3_ast a, Z3_ast b, const Type *t) {
    Z3_context z = V->z;
    unsigned w = (unsigned)type_bits(t);
    Z3_ast zero = verify_int_const(V, t, 0);
    Z3_ast na = Z3_mk_bvslt(z, a, zero), nb = Z3_mk_bvslt(z, b, zero);
    Z3_ast ma = Z3_mk_ite(z, na, Z3_mk_bvneg(z, a), a), mb = Z3_mk_ite(z, nb, Z3_mk_bvneg(z, b), b);
    Z3_ast top = verify_int_const(V, t, (uint64_t)1 << (w - 1)); /* 2^(w-1), unsigned */
    Z3_ast limit =
        Z3_mk_ite(z, Z3_mk_xor(z, na, nb), top, Z3_mk_bvsub(z, top, verify_int_const(V, t, 1)));
    return verify_and(V, Z3_mk_bvmul_no_overflow(z, ma, mb, false),
                      Z3_mk_bvule(z, Z3_mk_bvmul(z, ma, mb), limit));
}

/* r = a OP b, with ok: its exact value fits t (Z3's overflow predicates for + and -
 * and unsigned *; a signed product is compared in twice the width). An unsigned
 * product of two non-constant terms is noted for the abstraction (verify_solve.c). */
static VVal checked(Verifier *V, VArith o, VVal a, VVal b, const char *detail) {
    Z3_context z = V->z;
    BinaryOp op = o.op;
    const Type *t = o.t;
    bool sign = type_is_signed(t);
    unsigned taint = a.taint | b.taint;
    Z3_ast r, ok[2];
    if (op == BIN_ADD) {
        r = Z3_mk_bvadd(z, a.t, b.t);
        ok[0] = Z3_mk_bvadd_no_overflow(z, a.t, b.t, sign);
        ok[1] = sign ? Z3_mk_bvadd_no_underflow(z, a.t, b.t) : Z3_mk_true(z);
    } else if (op == BIN_SUB) {
        r = Z3_mk_bvsub(z, a.t, b.t);
        ok[0] = sign ? Z3_mk_bvsub_no_overflow(z, a.t, b.t) : Z3_mk_true(z);
        ok[1] = Z3_mk_bvsub_no_underflow(z, a.t, b.t, sign);
    } else {
        r = Z3_mk_bvmul(z, a.t, b.t);
        ok[0] = sign ? signed_product_fits(V, a.t, b.t, t)
                     : Z3_mk_bvmul_no_overflow(z, a.t, b.t, false);
        ok[1] = Z3_mk_true(z);
        if (!sign && !Z3_is_numeral_ast(z, a.t) && !Z3_is_numeral_ast(z, b.t))
            verify_note_mul(V, a.t, b.t, r, ok[0]);
    }
    verify_guard(V, (VSite){VK_OVERFLOW, o.node, o.span, detail ? detail : ast_binary_op_text(op)},
                 Z3_mk_and(z, 2, ok), taint);
    return (VVal){r, taint, NULL};
}

static VVal int_arith(Verifier *V, VArith o, VVal a, VVal b) {
    Z3_context z = V->z;
    BinaryOp op = o.op;
    const Type *t = o.t;
    unsigned bits = (unsigned)type_bits(t), taint = a.taint | b.taint;
    bool sign = type_is_signed(t);
    switch (op) {
    case BIN_ADD:
    case BIN_SUB:
    case BIN_MUL: return checked(V, o, a, b, NULL);
    case BIN_DIV:
    case BIN_REM: {
        Z3_ast zero = verify_int_const(V, t, 0), minus1 = verify_int_const(V, t, ~(uint64_t)0);
        verify_guard(V, (VSite){VK_DIVZERO, o.node, o.span, ast_binary_op_text(op)},
                     Z3_mk_not(z, Z3_mk_eq(z, b.t, zero)), taint);
        if (op == BIN_REM) {
            if (!sign) return (VVal){Z3_mk_bvurem(z, a.t, b.t), taint, NULL};
            return (VVal){Z3_mk_ite(z, Z3_mk_eq(z, b.t, minus1), zero, Z3_mk_bvsrem(z, a.t, b.t)),
                          taint, NULL};
        }
        if (!sign) return (VVal){Z3_mk_bvudiv(z, a.t, b.t), taint, NULL};
        Z3_ast min = verify_int_const(V, t, (uint64_t)1 << (bits - 1));
        Z3_ast bad = verify_and(V, Z3_mk_eq(z, a.t, min), Z3_mk_eq(z, b.t, minus1));
        verify_guard(V, (VSite){VK_OVERFLOW, o.node, o.span, "/"}, Z3_mk_not(z, bad), taint);
        return (VVal){Z3_mk_bvsdiv(z, a.t, b.t), taint, NULL};
    }
    default: return (VVal){a.t, taint, NULL};
    }
}

double verify_bits_value(const Type *t, uint64_t bits) {
    if (t->kind == TY_F32) {
        uint32_t w = (uint32_t)bits;
        float f;
        memcpy(&f, &w, 4);
        return f;
    }
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

/* The k of a float constant c = (-1)^neg * 2^k (finite, not zero); false for any other
 * value, or a value the model does not know as a constant. */
static bool power_of_two(Verifier *V, VVal c, const Type *t, int *k, bool *neg) {
    uint64_t u;
    if (!c.bits || !Z3_is_numeral_ast(V->z, c.bits) || !Z3_get_numeral_uint64(V->z, c.bits, &u))
        return false;
    double d = verify_bits_value(t, u);
    int e;
    if (!isfinite(d) || d == 0.0 || fabs(frexp(d, &e)) != 0.5) return false;
    *k = e - 1;
    *neg = d < 0;
    return true;
}

/* x scaled by (-1)^neg * 2^k with one rounding, as one term for every way of writing it
 * (issue 35): x * 2.0, 2.0 * x, x / 0.5 and x + x are all fp.add(x, x); x * 2^k and
 * x / 2^-k are fp.mul(x, 2^k); a negative factor is fp.neg of the positive one's. Each is
 * the exact value x * 2^k rounded once (round-to-nearest-even is symmetric, so the sign
 * moves out), NaN for NaN, so the terms are equal, and Z3 then sees one term where it
 * would otherwise have to prove a multiplier circuit equal to an adder. */
static Z3_ast scaled(Verifier *V, Z3_ast x, int k, bool neg, const Type *t) {
    Z3_context z = V->z;
    Z3_ast r = k == 1 ? Z3_mk_fpa_add(z, rne(V), x, x)
                      : Z3_mk_fpa_mul(z, rne(V), x, fp_of_double(V, t, ldexp(1.0, k)));
    return neg ? Z3_mk_fpa_neg(z, r) : r;
}

/* Whether 2^k is a finite, nonzero value of t (subnormal powers included). */
static bool holds_power(const Type *t, int k) {
    double d = ldexp(1.0, k);
    if (t->kind == TY_F32) return isfinite((float)d) && (double)(float)d == d;
    return isfinite(d) && d != 0.0;
}

/* a OP b in one canonical term where an exact identity relates its spellings: a product
 * or quotient by a power of two is scaled(), and the operands of + and * are ordered by
 * term (a + b and b + a are one value: only a NaN's bits could differ, and those are
 * the hardware's either way). NULL where no rewrite applies. */
static Z3_ast canonical(Verifier *V, BinaryOp op, VVal a, VVal b, const Type *t) {
    int k;
    bool neg;
    if (op == BIN_MUL && power_of_two(V, b, t, &k, &neg)) return scaled(V, a.t, k, neg, t);
    if (op == BIN_MUL && power_of_two(V, a, t, &k, &neg)) return scaled(V, b.t, k, neg, t);
    if (op == BIN_DIV && power_of_two(V, b, t, &k, &neg) && holds_power(t, -k))
        return scaled(V, a.t, -k, neg, t);
    if ((op == BIN_ADD || op == BIN_MUL) && Z3_get_ast_id(V->z, a.t) > Z3_get_ast_id(V->z, b.t)) {
        Z3_ast lo = b.t, hi = a.t;
        return op == BIN_ADD ? Z3_mk_fpa_add(V->z, rne(V), lo, hi)
                             : Z3_mk_fpa_mul(V->z, rne(V), lo, hi);
    }
    return NULL;
}

static VVal float_arith(Verifier *V, VArith o, VVal a, VVal b) {
    Z3_context z = V->z;
    BinaryOp op = o.op;
    const Type *t = o.t;
    unsigned taint = a.taint | b.taint;
    Z3_ast c = op == BIN_REM ? NULL : canonical(V, op, a, b, t);
    if (c) return (VVal){c, taint, NULL};
    switch (op) {
    case BIN_ADD: return (VVal){Z3_mk_fpa_add(z, rne(V), a.t, b.t), taint, NULL};
    case BIN_SUB: return (VVal){Z3_mk_fpa_sub(z, rne(V), a.t, b.t), taint, NULL};
    case BIN_MUL: return (VVal){Z3_mk_fpa_mul(z, rne(V), a.t, b.t), taint, NULL};
    case BIN_DIV: return (VVal){Z3_mk_fpa_div(z, rne(V), a.t, b.t), taint, NULL};
    default: { /* fmod: exact, but not IEEE's remainder (fp.rem), so not modelled */
        verify_unmodelled(V, o.node, o.span, "float % (C's fmod)");
        VVal h = verify_havoc(V, t, o.span, "float % (C's fmod)");
        h.taint |= taint;
        return h;
    }
    }
}

VVal verify_arith(Verifier *V, VArith o, VVal a, VVal b) {
    if (type_is_int(o.t)) return int_arith(V, o, a, b);
    return float_arith(V, o, a, b);
}

/* a << b, a >> b: cairn_shl/shr take the count as an int64 in [0, bits). */
static VVal shift(Verifier *V, const Expr *e, VVal a, VVal b) {
    Z3_context z = V->z;
    BinaryOp op = e->u.binary.op;
    const Type *t = e->type, *tb = e->u.binary.rhs->type;
    unsigned bits = (unsigned)type_bits(t), taint = a.taint | b.taint;
    Z3_ast b64 = verify_to_u64(V, b.t, tb);
    Z3_ast in_range = verify_and(V, Z3_mk_bvsge(z, b64, verify_u64(V, 0)),
                                 Z3_mk_bvslt(z, b64, verify_u64(V, bits)));
    verify_guard(V, (VSite){VK_SHIFT, e, e->span, ast_binary_op_text(op)}, in_range, taint);
    Z3_ast amount = bits == 64 ? b64 : Z3_mk_extract(z, bits - 1, 0, b64);
    bool sign = type_is_signed(t);
    if (op == BIN_SHR)
        return (VVal){sign ? Z3_mk_bvashr(z, a.t, amount) : Z3_mk_bvlshr(z, a.t, amount), taint,
                      NULL};
    Z3_ast r = Z3_mk_bvshl(z, a.t, amount);
    Z3_ast back = sign ? Z3_mk_bvashr(z, r, amount) : Z3_mk_bvlshr(z, r, amount);
    verify_guard(V, (VSite){VK_OVERFLOW, e, e->span, "<<"}, Z3_mk_eq(z, back, a.t), taint);
    return (VVal){r, taint, NULL};
}

static Z3_ast compare(Verifier *V, BinaryOp op, Z3_ast a, Z3_ast b, const Type *t) {
    Z3_context z = V->z;
    if (type_is_compute_float(t)) {
        switch (op) {
        case BIN_EQ: return Z3_mk_fpa_eq(z, a, b);
        case BIN_NE: return Z3_mk_not(z, Z3_mk_fpa_eq(z, a, b));
        case BIN_LT: return Z3_mk_fpa_lt(z, a, b);
        case BIN_LE: return Z3_mk_fpa_leq(z, a, b);
        case BIN_GT: return Z3_mk_fpa_gt(z, a, b);
        default: return Z3_mk_fpa_geq(z, a, b);
        }
    }
    if (op == BIN_EQ) return Z3_mk_eq(z, a, b);
    if (op == BIN_NE) return Z3_mk_not(z, Z3_mk_eq(z, a, b));
    bool sign = type_is_signed(t);
    switch (op) {
    case BIN_LT: return sign ? Z3_mk_bvslt(z, a, b) : Z3_mk_bvult(z, a, b);
    case BIN_LE: return sign ? Z3_mk_bvsle(z, a, b) : Z3_mk_bvule(z, a, b);
    case BIN_GT: return sign ? Z3_mk_bvsgt(z, a, b) : Z3_mk_bvugt(z, a, b);
    default: return sign ? Z3_mk_bvsge(z, a, b) : Z3_mk_bvuge(z, a, b);
    }
}

/* a && b, a || b: b's guards count only where b runs. */
static VVal logic(Verifier *V, const Expr *e) {
    bool is_and = e->u.binary.op == BIN_AND;
    VVal a = verify_expr(V, e->u.binary.lhs);
    Z3_ast saved = V->pc;
    unsigned saved_taint = V->pc_taint;
    V->pc = verify_and(V, V->pc, is_and ? a.t : Z3_mk_not(V->z, a.t));
    V->pc_taint |= a.taint;
    VVal b = verify_expr(V, e->u.binary.rhs);
    V->pc = saved;
    V->pc_taint = saved_taint;
    return (VVal){is_and ? verify_and(V, a.t, b.t) : verify_or(V, a.t, b.t), a.taint | b.taint,
                  NULL};
}

static VVal bitwise(Verifier *V, BinaryOp op, VVal a, VVal b, const Type *t) {
    Z3_context z = V->z;
    unsigned taint = a.taint | b.taint;
    if (t->kind == TY_BOOL) {
        if (op == BIN_BITAND) return (VVal){verify_and(V, a.t, b.t), taint, NULL};
        if (op == BIN_BITOR) return (VVal){verify_or(V, a.t, b.t), taint, NULL};
        return (VVal){Z3_mk_xor(z, a.t, b.t), taint, NULL};
    }
    if (op == BIN_BITAND) return (VVal){Z3_mk_bvand(z, a.t, b.t), taint, NULL};
    if (op == BIN_BITOR) return (VVal){Z3_mk_bvor(z, a.t, b.t), taint, NULL};
    return (VVal){Z3_mk_bvxor(z, a.t, b.t), taint, NULL};
}

static VVal binary(Verifier *V, const Expr *e) {
    BinaryOp op = e->u.binary.op;
    if (op == BIN_AND || op == BIN_OR) return logic(V, e);
    VVal a = verify_expr(V, e->u.binary.lhs);
    VVal b = verify_expr(V, e->u.binary.rhs);
    const Type *t = e->u.binary.lhs->type;
    if (op >= BIN_EQ && op <= BIN_GE)
        return (VVal){compare(V, op, a.t, b.t, t), a.taint | b.taint, NULL};
    if (op == BIN_BITAND || op == BIN_BITOR || op == BIN_BITXOR)
        return bitwise(V, op, a, b, e->type);
    if (op == BIN_SHL || op == BIN_SHR) return shift(V, e, a, b);
    return verify_arith(V, (VArith){op, t, e, e->span}, a, b);
}

/* A float's sign flipped or cleared: exact on the bits too (xor / and of the sign bit);
 * a constant's bits stay a constant (-2.0 is a power of two for canonical()). */
static Z3_ast sign_bits(Verifier *V, Z3_ast bits, const Type *t, bool clear) {
    if (!bits) return NULL;
    unsigned w = (unsigned)type_bits(t);
    uint64_t u, s = (uint64_t)1 << (w - 1);
    if (Z3_is_numeral_ast(V->z, bits) && Z3_get_numeral_uint64(V->z, bits, &u))
        return bits_const(V, t, clear ? u & ~s : u ^ s);
    Z3_ast sign = bits_const(V, t, s);
    return clear ? Z3_mk_bvand(V->z, bits, Z3_mk_bvnot(V->z, sign)) : Z3_mk_bvxor(V->z, bits, sign);
}

static VVal unary(Verifier *V, const Expr *e) {
    const Expr *x = e->u.unary.operand;
    if (e->u.unary.op == UN_NOT) {
        VVal v = verify_expr(V, (Expr *)x);
        return (VVal){Z3_mk_not(V->z, v.t), v.taint, NULL};
    }
    if (x->kind == EXPR_INT && type_is_int(e->type)) /* -128 as i8: a constant, as lowered */
        return (VVal){verify_int_const(V, e->type, (uint64_t)0 - x->u.int_lit.value), 0, NULL};
    VVal v = verify_expr(V, (Expr *)x);
    if (type_is_compute_float(e->type))
        return (VVal){Z3_mk_fpa_neg(V->z, v.t), v.taint, sign_bits(V, v.bits, e->type, false)};
    return checked(V, (VArith){BIN_SUB, e->type, e, e->span},
                   (VVal){verify_int_const(V, e->type, 0), 0, NULL}, v, "negation");
}

/* ---- constants and names ---- */

static VVal int_literal(Verifier *V, const Expr *e) {
    uint64_t v = e->u.int_lit.value;
    if (type_is_compute_float(e->type))
        return fp_const(V, e->type, e->type->kind == TY_F32 ? (double)(float)v : (double)v);
    return (VVal){verify_int_const(V, e->type, v), 0, NULL};
}

static VVal float_literal(Verifier *V, const Expr *e) {
    const char *text = e->u.float_lit.text;
    if (e->type->kind == TY_F32) return fp_const(V, e->type, (double)strtof(text, NULL));
    return fp_const(V, e->type, strtod(text, NULL));
}

static VVal name_value(Verifier *V, const Expr *e) {
    const Symbol *s = e->u.name.sym;
    if (s->kind == SYM_CONST) return verify_expr(V, s->decl.item->u.const_.value);
    VCell *c = verify_lookup(V, s);
    if (!c || c->array) return verify_havoc(V, e->type, e->span, "this name's value");
    return verify_load(V, c->val, e->type, c->taint);
}

/* v[i]: the element, after the index guard. Returns the cell and the 64-bit index. */
VCell *verify_element(Verifier *V, Expr *e, Z3_ast *index, unsigned *taint) {
    const Symbol *s = e->u.index.base->kind == EXPR_NAME ? e->u.index.base->u.name.sym : NULL;
    VCell *c = s ? verify_lookup(V, s) : NULL;
    VVal i = verify_expr(V, e->u.index.index);
    if (!c || !c->array) {
        verify_unmodelled(V, e, e->span, "indexing this expression");
        return NULL;
    }
    const Type *ti = e->u.index.index->type;
    Z3_ast i64 = verify_to_u64(V, i.t, ti);
    Z3_ast ok = Z3_mk_bvult(V->z, i64, c->len);
    if (type_is_signed(ti)) ok = verify_and(V, Z3_mk_bvsge(V->z, i64, verify_u64(V, 0)), ok);
    verify_guard(V, (VSite){VK_INDEX, e, e->span, NULL}, ok, i.taint);
    *index = i64;
    *taint = i.taint | c->taint;
    return c;
}

static VVal element(Verifier *V, Expr *e) {
    Z3_ast i;
    unsigned taint;
    VCell *c = verify_element(V, e, &i, &taint);
    if (!c) return verify_havoc(V, e->type, e->span, "indexing this expression");
    return verify_load(V, Z3_mk_select(V->z, c->val, i), e->type, taint);
}

/* ---- conversions ---- */

static Z3_ast int_limit(Verifier *V, const Type *t, bool hi, unsigned width) {
    unsigned bits = (unsigned)type_bits(t);
    Z3_sort s = Z3_mk_bv_sort(V->z, width);
    if (!type_is_signed(t))
        return hi ? Z3_mk_zero_ext(V->z, width - bits, verify_int_const(V, t, ~(uint64_t)0))
                  : Z3_mk_unsigned_int64(V->z, 0, s);
    Z3_ast edge =
        verify_int_const(V, t, hi ? ((uint64_t)1 << (bits - 1)) - 1 : (uint64_t)1 << (bits - 1));
    return Z3_mk_sign_ext(V->z, width - bits, edge);
}

static VVal int_to_int(Verifier *V, VVal v, const Type *from, const Type *to, const Expr *e) {
    Z3_ast w = ext(V, v.t, from, 128u - (unsigned)type_bits(from));
    Z3_ast ok = verify_and(V, Z3_mk_bvsge(V->z, w, int_limit(V, to, false, 128)),
                           Z3_mk_bvsle(V->z, w, int_limit(V, to, true, 128)));
    verify_guard(V, (VSite){VK_CONVERT, e, e->span, NULL}, ok, v.taint);
    return (VVal){Z3_mk_extract(V->z, (unsigned)type_bits(to) - 1, 0, w), v.taint, NULL};
}

/* cairn_to_T_from_float: t = trunc(x); LO <= t < HI + 1, else a trap. */
static VVal float_to_int(Verifier *V, VVal v, const Type *from, const Type *to, const Expr *e) {
    Z3_context z = V->z;
    unsigned bits = (unsigned)type_bits(to);
    bool sign = type_is_signed(to);
    Z3_ast t = Z3_mk_fpa_round_to_integral(z, Z3_mk_fpa_rtz(z), v.t);
    double lo = sign ? -ldexp(1.0, (int)bits - 1) : 0.0,
           hi = ldexp(1.0, sign ? (int)bits - 1 : (int)bits);
    Z3_ast ok = verify_and(V, Z3_mk_fpa_geq(z, t, fp_of_double(V, from, lo)),
                           Z3_mk_fpa_lt(z, t, fp_of_double(V, from, hi)));
    verify_guard(V, (VSite){VK_FLOAT_CONVERT, e, e->span, NULL}, ok, v.taint);
    Z3_ast r = sign ? Z3_mk_fpa_to_sbv(z, Z3_mk_fpa_rtz(z), v.t, bits)
                    : Z3_mk_fpa_to_ubv(z, Z3_mk_fpa_rtz(z), v.t, bits);
    return (VVal){r, v.taint, NULL};
}

/* Into a storage float: f8e4m3 traps past 464 (cairn_float.h); the bits are not modelled. */
static VVal to_storage(Verifier *V, VVal v, const Type *from, const Type *to, const Expr *e) {
    if (type_is_int(from)) { /* through f32, as the lowering converts */
        Z3_sort f32 = verify_sort(V, type_scalar(TY_F32));
        v.t = type_is_signed(from) ? Z3_mk_fpa_to_fp_signed(V->z, rne(V), v.t, f32)
                                   : Z3_mk_fpa_to_fp_unsigned(V->z, rne(V), v.t, f32);
        from = type_scalar(TY_F32);
    }
    if (to->kind == TY_F8E4M3) {
        Z3_ast past = Z3_mk_fpa_gt(V->z, Z3_mk_fpa_abs(V->z, v.t), fp_of_double(V, from, 464.0));
        verify_guard(V, (VSite){VK_E4M3, e, e->span, NULL}, Z3_mk_not(V->z, past), v.taint);
    }
    verify_unmodelled(V, e, e->span, "a storage float conversion");
    VVal h = verify_havoc(V, to, e->span, "a storage float conversion");
    h.taint |= v.taint;
    return h;
}

static VVal convert_value(Verifier *V, VVal v, const Type *from, const Type *to, const Expr *e) {
    Z3_context z = V->z;
    if (from->kind == to->kind) return v;
    if (type_is_storage_float(from) || type_is_storage_float(to)) {
        if (type_is_storage_float(to) && !type_is_storage_float(from))
            return to_storage(V, v, from, to, e);
        verify_unmodelled(V, e, e->span, "a storage float conversion");
        VVal h = verify_havoc(V, type_is_storage_float(to) ? to : type_scalar(TY_F32), e->span,
                              "a storage float conversion");
        h.taint |= v.taint;
        if (type_is_storage_float(to)) return h;
        return convert_value(V, h, type_scalar(TY_F32), to, e);
    }
    if (from->kind == TY_BOOL)
        return (VVal){Z3_mk_ite(z, v.t, verify_int_const(V, to, 1), verify_int_const(V, to, 0)),
                      v.taint, NULL};
    if (type_is_int(to) && type_is_int(from)) return int_to_int(V, v, from, to, e);
    if (type_is_int(to)) return float_to_int(V, v, from, to, e);
    if (type_is_int(from)) {
        Z3_ast r = type_is_signed(from)
                       ? Z3_mk_fpa_to_fp_signed(z, rne(V), v.t, verify_sort(V, to))
                       : Z3_mk_fpa_to_fp_unsigned(z, rne(V), v.t, verify_sort(V, to));
        return (VVal){r, v.taint, NULL};
    }
    return (VVal){Z3_mk_fpa_to_fp_float(z, rne(V), v.t, verify_sort(V, to)), v.taint, NULL};
}

/* ---- builtins ---- */

/* Why the model does not know a builtin's value: its name and how its ROUNDING row says
 * the value was rounded ("std.math.exp (the C library's rounding)"); ops.def decides. */
static const char *rounding_reason(Verifier *V, Builtin b) {
    return arena_printf(V->prog->arena, "%s (%s)", ast_builtin_name(b),
                        ast_rounding_text(ast_op(b)->rounding));
}

/* cairn_min/max_f*: a NaN gives C's NAN (the quiet NaN 0x7fc00000 / 0x7ff8...), of two
 * zeros min takes -0 and max +0; otherwise one of its arguments, bits and all. */
static VVal float_minmax(Verifier *V, VVal a, VVal b, const Type *t, bool is_min) {
    Z3_context z = V->z;
    Z3_ast nan = verify_or(V, Z3_mk_fpa_is_nan(z, a.t), Z3_mk_fpa_is_nan(z, b.t));
    Z3_ast neg_a = Z3_mk_fpa_is_negative(z, a.t);
    Z3_ast lt = Z3_mk_fpa_lt(z, a.t, b.t), tie = Z3_mk_fpa_eq(z, a.t, b.t);
    /* take_a: the argument returned is a */
    Z3_ast take_a =
        Z3_mk_ite(z, tie, is_min ? neg_a : Z3_mk_not(z, neg_a), is_min ? lt : Z3_mk_not(z, lt));
    Z3_ast quiet = bits_const(V, t, t->kind == TY_F32 ? 0x7fc00000u : 0x7ff8000000000000u);
    Z3_ast value = Z3_mk_ite(z, nan, fp_of_bits(V, t, quiet), Z3_mk_ite(z, take_a, a.t, b.t));
    Z3_ast bits =
        a.bits && b.bits ? Z3_mk_ite(z, nan, quiet, Z3_mk_ite(z, take_a, a.bits, b.bits)) : NULL;
    return (VVal){value, a.taint | b.taint, bits};
}

static VVal exact_fn(Verifier *V, Expr *e, Builtin b) {
    Z3_context z = V->z;
    const Type *t = e->type;
    VVal a = verify_expr(V, e->u.call.args[0]);
    if (b == BI_MIN || b == BI_MAX) {
        VVal c = verify_expr(V, e->u.call.args[1]);
        if (type_is_compute_float(t)) return float_minmax(V, a, c, t, b == BI_MIN);
        Z3_ast lt = compare(V, BIN_LT, a.t, c.t, t);
        return (VVal){b == BI_MIN ? Z3_mk_ite(z, lt, a.t, c.t) : Z3_mk_ite(z, lt, c.t, a.t),
                      a.taint | c.taint, NULL};
    }
    if (type_is_int(t)) {
        if (b != BI_ABS || !type_is_signed(t)) return a;
        Z3_ast neg = Z3_mk_bvslt(z, a.t, verify_int_const(V, t, 0));
        Z3_ast saved = V->pc;
        V->pc = verify_and(V, V->pc, neg); /* cairn_abs negates only a negative value */
        VVal n = checked(V, (VArith){BIN_SUB, t, e, e->span},
                         (VVal){verify_int_const(V, t, 0), 0, NULL}, a, "abs");
        V->pc = saved;
        return (VVal){Z3_mk_ite(z, neg, n.t, a.t), a.taint, NULL};
    }
    switch (b) {
    case BI_SQRT: return (VVal){Z3_mk_fpa_sqrt(z, rne(V), a.t), a.taint, NULL};
    case BI_ABS: return (VVal){Z3_mk_fpa_abs(z, a.t), a.taint, sign_bits(V, a.bits, t, true)};
    case BI_FLOOR:
        return (VVal){Z3_mk_fpa_round_to_integral(z, Z3_mk_fpa_rtn(z), a.t), a.taint, NULL};
    case BI_CEIL:
        return (VVal){Z3_mk_fpa_round_to_integral(z, Z3_mk_fpa_rtp(z), a.t), a.taint, NULL};
    default: return (VVal){Z3_mk_fpa_round_to_integral(z, Z3_mk_fpa_rtz(z), a.t), a.taint, NULL};
    }
}

static VVal quantize(Verifier *V, Expr *e, bool stochastic) {
    Z3_context z = V->z;
    const char *why = rounding_reason(V, e->u.call.builtin);
    VVal x = verify_expr(V, e->u.call.args[0]);
    VVal scale = verify_expr(V, e->u.call.args[1]);
    unsigned taint = x.taint | scale.taint;
    if (stochastic) taint |= verify_expr(V, e->u.call.args[2]).taint;
    Z3_ast zero = fp_of_double(V, type_scalar(TY_F32), 0.0);
    Z3_ast scale_ok = verify_and(V, Z3_mk_fpa_gt(z, scale.t, zero),
                                 Z3_mk_not(z, Z3_mk_fpa_is_infinite(z, scale.t)));
    verify_guard(V, (VSite){VK_QUANT_SCALE, e, e->span, NULL}, scale_ok, scale.taint);
    verify_guard(V, (VSite){VK_QUANT_NAN, e, e->span, NULL}, Z3_mk_not(z, Z3_mk_fpa_is_nan(z, x.t)),
                 x.taint);
    verify_unmodelled(V, e, e->span, why);
    VVal h = verify_havoc(V, e->u.call.generics[0], e->span, why);
    h.taint |= taint;
    return h;
}

/* to_bits(x): x's bits where the model knows them (an input, a copy, a literal); a NaN an
 * operation made has the hardware's pattern, a fresh NaN (the NaN bit), and the site is
 * noted so a counterexample can be sought without it (verify.h). from_bits is exact. */
static VVal bits(Verifier *V, Expr *e, bool to_bits) {
    VVal v = verify_expr(V, e->u.call.args[0]);
    const Type *t = to_bits ? e->u.call.args[0]->type : e->u.call.generics[0];
    if (type_is_storage_float(t)) return v; /* already its bits */
    if (!to_bits) return verify_load(V, v.t, t, v.taint);
    unsigned taint = v.taint;
    Z3_ast b = verify_stored(V, v, t, &taint);
    if (V->nan_bit && (taint & V->nan_bit))
        V->nan_sites = verify_or(V, V->nan_sites, Z3_mk_fpa_is_nan(V->z, v.t));
    return (VVal){b, taint, NULL};
}

static void eval_args(Verifier *V, Expr *e, unsigned *taint) {
    for (int i = 0; i < e->u.call.nargs; i++) {
        Expr *a = e->u.call.args[i];
        if (a->type && (type_is_scalar(a->type) || type_is_storage_float(a->type)) &&
            a->kind != EXPR_NAME)
            *taint |= verify_expr(V, a).taint;
    }
}

/* Writes `reason`-tainted fresh contents into the array a view argument names. */
static void havoc_array(Verifier *V, Expr *arg, Span s, const char *reason) {
    const Symbol *sym = arg->kind == EXPR_NAME ? arg->u.name.sym : NULL;
    VCell *c = sym ? verify_lookup(V, sym) : NULL;
    if (c && c->array) verify_havoc_cell(V, c, verify_taint_bit(V, s, reason));
}

/* The value an integer atomic e stores over old, with its operands (v, and w for a
 * compare-and-swap); in a region, a compare-and-swap's outcome depends on the order lanes
 * arrive in, so it is a fresh value there. */
static Z3_ast atomic_result(Verifier *V, Expr *e, Z3_ast old, const VVal operand[2],
                            unsigned *taint) {
    Z3_context z = V->z;
    Builtin b = e->u.call.builtin;
    const Type *t = e->u.call.args[0]->type;
    VVal v = operand[0], w = operand[1];
    if (b == BI_ATOMIC_ADD_UNORDERED) {
        const char *why = rounding_reason(V, b);
        verify_unmodelled(V, e, e->span, why);
        VVal h = verify_havoc(V, t, e->span, why);
        *taint |= h.taint;
        return verify_stored(V, h, t, taint);
    }
    if (b == BI_ATOMIC_CAS && V->in_parallel) {
        const char *why = "atomic_cas in a region (its outcome depends on the lanes' order)";
        verify_unmodelled(V, e, e->span, why);
        VVal h = verify_havoc(V, t, e->span, why);
        *taint |= h.taint;
        return h.t;
    }
    if (b == BI_ATOMIC_ADD_WRAP) return Z3_mk_bvadd(z, old, v.t);
    if (b == BI_ATOMIC_AND) return Z3_mk_bvand(z, old, v.t);
    if (b == BI_ATOMIC_OR) return Z3_mk_bvor(z, old, v.t);
    if (b == BI_ATOMIC_XOR) return Z3_mk_bvxor(z, old, v.t);
    if (b == BI_ATOMIC_CAS) return Z3_mk_ite(z, Z3_mk_eq(z, old, v.t), w.t, old);
    Z3_ast lt = compare(V, BIN_LT, v.t, old, t);
    return b == BI_ATOMIC_MIN ? Z3_mk_ite(z, lt, v.t, old) : Z3_mk_ite(z, lt, old, v.t);
}

static VVal atomic(Verifier *V, Expr *e, Builtin b) {
    const Type *t = e->u.call.args[0]->type;
    VVal v = verify_expr(V, e->u.call.args[1]);
    VVal w = b == BI_ATOMIC_CAS ? verify_expr(V, e->u.call.args[2]) : (VVal){NULL, 0, NULL};
    Z3_ast i;
    unsigned taint;
    VCell *c = e->u.call.args[0]->kind == EXPR_INDEX
                   ? verify_element(V, e->u.call.args[0], &i, &taint)
                   : NULL;
    if (!c) return verify_havoc(V, t, e->span, "an atomic on this place");
    Z3_ast old = Z3_mk_select(V->z, c->val, i);
    Z3_ast now = atomic_result(V, e, old, (VVal[2]){v, w}, &taint);
    c->val = Z3_mk_ite(V->z, verify_active(V), Z3_mk_store(V->z, c->val, i, now), c->val);
    c->taint |= taint | v.taint | w.taint | V->pc_taint;
    if (V->in_parallel) /* the old value a lane sees depends on the order lanes arrive in */
        return verify_havoc(V, t, e->span, "the old value an atomic returns in a region");
    return verify_load(V, old, t, c->taint);
}

/* A function of numbers the model has no case for (std.math; a row added since): its
 * value is fresh, for the reason its rounding column gives; it writes nothing. */
static VVal rounded_fn(Verifier *V, Expr *e, Builtin b, unsigned taint) {
    const char *why = rounding_reason(V, b);
    verify_unmodelled(V, e, e->span, why);
    VVal h = verify_havoc(V, e->type, e->span, why);
    h.taint |= taint;
    return h;
}

/* A builtin this model does not know (added since), or copy: it may write any view it is
 * given, and whatever follows depends on it. */
static void unknown_builtin(Verifier *V, Expr *e, Builtin b) {
    verify_unmodelled(V, e, e->span, ast_builtin_name(b));
    for (int i = 0; i < e->u.call.nargs; i++)
        havoc_array(V, e->u.call.args[i], e->span, ast_builtin_name(b));
    V->alive_taint |= verify_taint_bit(
        V, e->span, arena_printf(V->prog->arena, "%s is not modelled", ast_builtin_name(b)));
}

static VVal call(Verifier *V, Expr *e) {
    Builtin b = e->u.call.builtin;
    if (b == BI_NONE) return verify_call(V, e);
    if (ast_builtin_is_atomic(b)) return atomic(V, e, b);
    if (ast_builtin_is_cr(b)) return verify_cr(V, e);
    if (ast_builtin_is_exact(b)) return exact_fn(V, e, b);
    unsigned taint = 0;
    switch (b) {
    case BI_QUANTIZE: return quantize(V, e, false);
    case BI_QUANTIZE_STOCHASTIC: return quantize(V, e, true);
    case BI_TO_BITS: return bits(V, e, true);
    case BI_FROM_BITS: return bits(V, e, false);
    case BI_OBSERVE: eval_args(V, e, &taint); return (VVal){NULL, 0, NULL};
    case BI_MMA_UNORDERED:
        eval_args(V, e, &taint);
        verify_unmodelled(V, e, e->span, rounding_reason(V, b));
        if (e->u.call.nargs == 6) havoc_array(V, e->u.call.args[3], e->span, rounding_reason(V, b));
        break;
    case BI_MM_ENCLOSE:
        eval_args(V, e, &taint);
        verify_unmodelled(V, e, e->span, rounding_reason(V, b));
        havoc_array(V, e->u.call.args[3], e->span, rounding_reason(V, b));
        havoc_array(V, e->u.call.args[4], e->span, rounding_reason(V, b));
        break;
    default:
        eval_args(V, e, &taint);
        if (ast_builtin_makes_float(b)) return rounded_fn(V, e, b, taint);
        unknown_builtin(V, e, b);
        break;
    }
    if (!e->type || e->type->kind == TY_VOID ||
        !(type_is_scalar(e->type) || type_is_storage_float(e->type)))
        return (VVal){NULL, 0, NULL};
    VVal h = verify_havoc(V, e->type, e->span, ast_builtin_name(b));
    h.taint |= taint;
    return h;
}

/* Whether e's value is made by a float operation, which a device lane's lowering turns
 * into the device's one NaN where it is a NaN (lower_c_expr.c's float_operation, "NaN
 * bits" in docs/devices.md): arithmetic, negation, abs, min, max, sqrt and friends,
 * std.math, f32 <-> f64, a reduction in a lane. Moves (names, elements, literals, calls,
 * from_bits, std.cr) keep their bits. */
static bool makes_float(const Expr *e) {
    if (!e->type || !type_is_compute_float(e->type)) return false;
    switch (e->kind) {
    case EXPR_BINARY:
    case EXPR_UNARY: return true;
    case EXPR_CONVERT: return type_is_compute_float(e->u.convert.arg->type);
    case EXPR_REDUCE: return e->u.reduce.mode != MODE_PARALLEL;
    case EXPR_CALL: return ast_builtin_makes_float(e->u.call.builtin);
    default: return false;
    }
}

/* In a device lane, a NaN a float operation makes has the device's bits (cairn_dnan_*,
 * runtime/cairn_checked.h: 0x7fffffff for f32, 0xfff8000000000000 for f64), which
 * to_bits sees; a number keeps its own. */
static VVal device_nan(Verifier *V, const Expr *e, VVal v) {
    if (!V->in_device || !v.t || !makes_float(e)) return v;
    Z3_ast dnan =
        bits_const(V, e->type, e->type->kind == TY_F32 ? 0x7fffffffu : 0xfff8000000000000u);
    Z3_ast own = v.bits ? v.bits : Z3_mk_fpa_to_ieee_bv(V->z, v.t);
    v.bits = Z3_mk_ite(V->z, Z3_mk_fpa_is_nan(V->z, v.t), dnan, own);
    return v;
}

static VVal expr_value(Verifier *V, Expr *e);

VVal verify_expr(Verifier *V, Expr *e) { return device_nan(V, e, expr_value(V, e)); }

static VVal expr_value(Verifier *V, Expr *e) {
    if (!e->type || type_is_error(e->type)) { /* a construct the checker left for later */
        verify_unmodelled(V, e, e->span, "this expression");
        V->alive_taint |= verify_taint_bit(V, e->span, "an expression the checker left untyped");
        return (VVal){Z3_mk_false(V->z), V->alive_taint, NULL};
    }
    switch (e->kind) {
    case EXPR_INT: return int_literal(V, e);
    case EXPR_FLOAT: return float_literal(V, e);
    case EXPR_BOOL: return (VVal){e->u.bool_lit ? Z3_mk_true(V->z) : Z3_mk_false(V->z), 0, NULL};
    case EXPR_NAME: return name_value(V, e);
    case EXPR_UNARY: return unary(V, e);
    case EXPR_BINARY: return binary(V, e);
    case EXPR_CALL: return call(V, e);
    case EXPR_INDEX: return element(V, e);
    case EXPR_CONVERT:
        if (!type_is_scalar(e->u.convert.to) && !type_is_storage_float(e->u.convert.to)) break;
        return convert_value(V, verify_expr(V, e->u.convert.arg), e->u.convert.arg->type,
                             e->u.convert.to, e);
    case EXPR_REDUCE: return verify_reduce(V, e);
    default: break;
    }
    verify_unmodelled(V, e, e->span, "this expression");
    V->alive_taint |= verify_taint_bit(V, e->span, "an expression not modelled");
    if (e->type && (type_is_scalar(e->type) || type_is_storage_float(e->type)))
        return verify_havoc(V, e->type, e->span, "this expression");
    return (VVal){NULL, 0, NULL};
}
