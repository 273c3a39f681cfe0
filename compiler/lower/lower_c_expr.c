/* lower_c_expr.c: expressions and builtins to C (see lower_c_internal.h for the
 * scheme: every value lands in a temporary, in CAIRN's evaluation order). */
#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lower/lower_c_internal.h"
#include "lower/lower_mma.h"
#include "lower/target_internal.h"

const char *lower_bind(Lower *L, const Type *t, const char *value) {
    const char *name = lower_new_tmp(L);
    lower_emit(L, "%s %s = %s;", lower_c_scalar(t), name, value);
    return name;
}

#define FMT(...) arena_printf(L->arena, __VA_ARGS__)

/* Why comparison operands and loop bounds go through temporaries: CAIRN accepts
 * comparisons whose result the operand types fix (`n >= 0` on a usize, `u <= 255` on a
 * u8, `i < 0` on a usize index), a value compared with itself (`x == x`) and loops with
 * a literal bound (`for i in 0..0`), but gcc and clang flag those very C expressions
 * (-Wtype-limits, -Wtautological-compare) and the build runs with -Werror. Those
 * warnings come from the compilers' front ends and look only at the expression's text:
 * a literal, a macro or the same name on both sides. So every operand that is not
 * already a temporary is first bound to one (of its own type), and the second of two
 * identical operands to another: the front end then sees two distinct variables, and
 * the optimizer folds them back, so the code is the same at -O1 and above. Folding the
 * comparison here instead would cover only the cases we think of; tests/fuzz's
 * random-program sweep holds the generated C to every warning of both compilers. */
static bool is_tmp(const char *v) {
    return v[0] == 't' && v[1] && strspn(v + 1, "0123456789") == strlen(v + 1);
}

const char *lower_opaque(Lower *L, const Type *t, const char *v) {
    return is_tmp(v) ? v : lower_bind(L, t, v);
}

/* ---- constants ---- */

static const char *int_constant(Lower *L, const Type *t, uint64_t value, bool negative) {
    if (type_is_compute_float(t)) { /* an integer literal in a float context: one rounding */
        return FMT("(%s(%s)UINT64_C(%" PRIu64 "))", negative ? "-" : "", lower_c_scalar(t), value);
    }
    if (!negative) return FMT("((%s)UINT64_C(%" PRIu64 "))", lower_c_scalar(t), value);
    if (value == (uint64_t)1 << 63) return "INT64_MIN";
    return FMT("((%s)-INT64_C(%" PRIu64 "))", lower_c_scalar(t), value);
}

/* The literal rounded once into its type (strtod/strtof round correctly to nearest),
 * written as a hex float so the C compiler does not round it again. A literal that
 * does not hold its value exactly is a rounding, listed in the receipt. */
static const char *float_constant(Lower *L, const Expr *e) {
    const char *text = e->u.float_lit.text;
    bool f32 = e->type->kind == TY_F32;
    double d = f32 ? (double)strtof(text, NULL) : strtod(text, NULL);
    if (f32) return isinf(d) ? "INFINITY" : FMT("%af", d);
    return isinf(d) ? "(double)INFINITY" : FMT("%a", d);
}

/* ---- names, places, indexing ---- */

static const char *lower_name(Lower *L, const Expr *e) {
    const Symbol *s = e->u.name.sym;
    assert(s && s->type && "the checker resolved and typed every name");
    if (s->kind == SYM_CONST) return lower_bind(L, s->type, lower_sym_c(L, s));
    if (lower_is_scalar_ref(s->type))
        return lower_bind(L, s->type->u.view.elem, FMT("(*%s)", lower_sym_c(L, s)));
    if (s->mut)
        return lower_bind(L, s->type, lower_sym_c(L, s)); /* read now, before later effects */
    return lower_sym_c(L, s);
}

/* "v_x_3[t7]", the index checked against the view's extent. */
static const char *lower_element(Lower *L, const Expr *e) {
    const Symbol *view = lower_expr_sym(e->u.index.base);
    if (!view || !lower_is_view(view->type)) {
        lower_unsupported(L, e->span, "indexing anything but a view by name");
        return NULL;
    }
    const char *i = lower_expr(L, e->u.index.index);
    bool sign = type_is_signed(e->u.index.index->type);
    const char *idx = lower_new_tmp(L);
    if (lower_guard_proved(L, e)) { /* in [0, extent) for the whole loop (lower_guard.c) */
        lower_emit(L, "const uint64_t %s = (uint64_t)%s;", idx, i);
        return FMT("%s[%s]", lower_sym_c(L, view), idx);
    }
    const char *check =
        FMT("cairn_index_%s((%s)%s, %s, %s)", sign ? "s" : "u", sign ? "int64_t" : "uint64_t", i,
            lower_sym_len(L, view), lower_at(L, e->span));
    lower_emit(L, "const uint64_t %s = %s;", idx,
               lower_covered_index(L, view, e->u.index.index, i, check));
    return FMT("%s[%s]", lower_sym_c(L, view), idx);
}

const char *lower_place(Lower *L, Expr *target) {
    if (target->kind == EXPR_INDEX) return lower_element(L, target);
    const Symbol *s = lower_expr_sym(target);
    if (!s) {
        lower_unsupported(L, target->span, "assigning to this expression");
        return NULL;
    }
    return lower_is_scalar_ref(s->type) ? FMT("(*%s)", lower_sym_c(L, s)) : lower_sym_c(L, s);
}

const char *lower_arg(Lower *L, Expr *arg, const Type *param) {
    const Symbol *s = lower_expr_sym(arg);
    if (lower_is_view(param) && s && lower_is_view(s->type))
        return FMT("%s, %s", lower_sym_c(L, s), lower_sym_len(L, s));
    if (lower_is_scalar_ref(param) && s)
        return lower_is_scalar_ref(s->type) ? lower_sym_c(L, s) : FMT("&%s", lower_sym_c(L, s));
    if (lower_is_view(param) || lower_is_scalar_ref(param)) {
        lower_unsupported(L, arg->span, "passing this expression as a view");
        return "0";
    }
    return lower_expr_out(L, arg);
}

/* ---- arithmetic ---- */

static const char *const c_ops[] = {
    [BIN_ADD] = "+",    [BIN_SUB] = "-",  [BIN_MUL] = "*", [BIN_DIV] = "/",    [BIN_REM] = "%",
    [BIN_EQ] = "==",    [BIN_NE] = "!=",  [BIN_LT] = "<",  [BIN_LE] = "<=",    [BIN_GT] = ">",
    [BIN_GE] = ">=",    [BIN_AND] = "&&", [BIN_OR] = "||", [BIN_BITAND] = "&", [BIN_BITOR] = "|",
    [BIN_BITXOR] = "^", [BIN_SHL] = "<<", [BIN_SHR] = ">>"};
static const char *const checked_names[] = {
    [BIN_ADD] = "add", [BIN_SUB] = "sub", [BIN_MUL] = "mul", [BIN_DIV] = "div",
    [BIN_REM] = "rem", [BIN_SHL] = "shl", [BIN_SHR] = "shr"};

/* A device lane's NaNs (docs/devices.md, "NaN bits"): every float operation of a device
 * lane that gives a NaN gives the device's one NaN of its type (cairn_dnan_*,
 * runtime/cairn_checked.h), emulated and on a GPU alike; a move (a load, a store, a
 * shuffle of a value) keeps its bits. Since a NaN operand makes every float operation's
 * result a NaN, and nothing but its bits tells NaNs apart, it is enough to make a value
 * the device's NaN where its bits leave the expression that made it: a let, an
 * assignment, a return, a call's argument, to_bits, a storage-float conversion, a
 * shuffle's operand, an atomic's operand, observe, quantize, a fragment's fill and
 * mma_set's value (lower_expr_out). Host code keeps the host's NaNs. */
const char *lower_dnan(Lower *L, const Type *t, const char *v) {
    if (!L->in_device || !type_is_compute_float(t)) return v;
    return FMT("cairn_dnan_%s(%s)", lower_type_word(t), v);
}

/* Whether e's value is the result of a float operation (which may have made a NaN of
 * the host's, emulated): arithmetic, negation, sqrt, abs, floor, ceil, trunc, min, max,
 * std.math, an f32 <-> f64 conversion, a reduction in a lane. Names, elements, literals,
 * calls (whose returns are lowered with lower_expr_out), from_bits and shuffles are
 * moves; so are std.cr's functions, whose every NaN is already one pattern on both sides
 * (0x7fffffff, runtime/cairn_cr.h), the same in host code and in a lane. */
static bool float_operation(const Expr *e) {
    if (!e->type || !type_is_compute_float(e->type)) return false;
    switch (e->kind) {
    case EXPR_BINARY: return true; /* a float-valued binary is arithmetic */
    case EXPR_UNARY: return true;  /* negation */
    case EXPR_CONVERT: return type_is_compute_float(e->u.convert.arg->type);
    case EXPR_REDUCE: return e->u.reduce.mode != MODE_PARALLEL; /* the exact sum's NaN is fixed */
    case EXPR_CALL: return ast_builtin_makes_float(e->u.call.builtin);
    default: return false;
    }
}

const char *lower_expr_out(Lower *L, Expr *e) {
    const char *v = lower_expr(L, e);
    if (!v || !L->in_device || !float_operation(e)) return v;
    return lower_bind(L, e->type, lower_dnan(L, e->type, v));
}

const char *lower_arith(Lower *L, BinaryOp op, const char *a, const char *b, const Type *t,
                        Span s) {
    if (type_is_int(t)) {
        assert(op < sizeof checked_names / sizeof *checked_names && checked_names[op]);
        const char *cast = op == BIN_SHL || op == BIN_SHR ? "(int64_t)" : "";
        return lower_bind(L, t,
                          FMT("cairn_%s_%s(%s, %s%s, %s)", checked_names[op],
                              lower_helper_suffix(t), a, cast, b, lower_at(L, s)));
    }
    if (op == BIN_REM) /* fmod is exact */
        return lower_bind(L, t, FMT("%s(%s, %s)", t->kind == TY_F32 ? "fmodf" : "fmod", a, b));
    assert(type_is_compute_float(t) && ast_binop(op)->rounding == RND_ONCE); /* the checker's */
    return lower_bind(L, t, FMT("%s %s %s", a, c_ops[op], b));
}

/* a && b, a || b: b runs only when it decides the answer. */
static const char *lower_logic(Lower *L, const Expr *e) {
    bool is_and = e->u.binary.op == BIN_AND;
    const char *a = lower_expr(L, e->u.binary.lhs);
    const char *r = lower_new_tmp(L);
    lower_emit(L, "bool %s = %s;", r, a);
    lower_emit(L, "if (%s%s) {", is_and ? "" : "!", r);
    L->indent++;
    const char *b = lower_expr(L, e->u.binary.rhs);
    lower_emit(L, "%s = %s;", r, b);
    L->indent--;
    lower_emit(L, "}");
    return r;
}

static const char *lower_binary(Lower *L, const Expr *e) {
    BinaryOp op = e->u.binary.op;
    if (op == BIN_AND || op == BIN_OR) return lower_logic(L, e);
    const char *a = lower_expr(L, e->u.binary.lhs);
    const char *b = lower_expr(L, e->u.binary.rhs);
    const Type *t = e->u.binary.lhs->type;
    if (ast_binop_is_compare(op)) { /* see lower_opaque */
        a = lower_opaque(L, t, a);
        b = strcmp(a, b) == 0 ? lower_bind(L, e->u.binary.rhs->type, b)
                              : lower_opaque(L, e->u.binary.rhs->type, b);
        return lower_bind(L, e->type, FMT("%s %s %s", a, c_ops[op], b));
    }
    if (op == BIN_BITAND || op == BIN_BITOR || op == BIN_BITXOR)
        return lower_bind(L, e->type,
                          FMT("(%s)(%s %s %s)", lower_c_scalar(e->type), a, c_ops[op], b));
    if (type_is_int(t) && lower_guard_proved(L, e)) /* no overflow in the loop (lower_guard.c) */
        return lower_bind(L, t, FMT("(%s)(%s %s %s)", lower_c_scalar(t), a, c_ops[op], b));
    return lower_arith(L, op, a, b, t, e->span);
}

static const char *lower_unary(Lower *L, const Expr *e) {
    const Expr *x = e->u.unary.operand;
    if (e->u.unary.op == UN_NOT)
        return lower_bind(L, e->type, FMT("!%s", lower_expr(L, (Expr *)x)));
    if (x->kind == EXPR_INT) return int_constant(L, e->type, x->u.int_lit.value, true);
    const char *v = lower_expr(L, (Expr *)x);
    if (type_is_int(e->type))
        return lower_bind(
            L, e->type,
            FMT("cairn_neg_%s(%s, %s)", lower_helper_suffix(e->type), v, lower_at(L, e->span)));
    return lower_bind(L, e->type, FMT("-%s", v)); /* exact */
}

/* ---- conversions ---- */

const char *lower_convert(Lower *L, const char *v, const Type *from, const Type *to, Span s) {
    if (from->kind == to->kind) return v;
    if (type_is_storage_float(from)) { /* widen exactly, then convert from f32 */
        if (to->kind == TY_F64)
            return lower_bind(L, to, FMT("cairn_%s_to_f64(%s)", lower_type_word(from), v));
        const char *wide = lower_bind(L, type_scalar(TY_F32),
                                      FMT("cairn_%s_to_f32(%s)", lower_type_word(from), v));
        return lower_convert(L, wide, type_scalar(TY_F32), to, s);
    }
    if (type_is_storage_float(to)) {
        const char *src =
            type_is_int(from) ? lower_bind(L, type_scalar(TY_F32), FMT("(float)%s", v)) : v;
        const char *src_word = type_is_int(from) ? "f32" : lower_type_word(from);
        if (to->kind == TY_F8E4M3)
            return lower_bind(L, to,
                              FMT("cairn_%s_to_f8e4m3(%s, %s)", src_word, src, lower_at(L, s)));
        return lower_bind(L, to, FMT("cairn_%s_to_%s(%s)", src_word, lower_type_word(to), src));
    }
    if (type_is_int(to) && type_is_float(from))
        return lower_bind(L, to,
                          FMT("cairn_to_%s_from_float((double)%s, %s)", lower_helper_suffix(to), v,
                              lower_at(L, s)));
    if (type_is_int(to) && type_is_int(from))
        return lower_bind(L, to,
                          FMT("cairn_to_%s_from_%s((%s)%s, %s)", lower_helper_suffix(to),
                              type_is_signed(from) ? "signed" : "unsigned",
                              type_is_signed(from) ? "int64_t" : "uint64_t", v, lower_at(L, s)));
    return lower_bind(L, to,
                      FMT("(%s)%s", lower_c_scalar(to), v)); /* int -> float, f64 <-> f32, bool */
}

/* ---- builtins ---- */

const char *lower_emit_observe(Lower *L, Expr *e) {
    Expr *name = e->u.call.args[0], *x = e->u.call.args[1];
    StrBuf sb = {0};
    sb_puts(&sb, "\"");
    for (int i = 0; i < name->u.str.len; i++) {
        unsigned char c = (unsigned char)name->u.str.text[i];
        if (c == '"' || c == '\\' || c < 32 || c > 126) sb_printf(&sb, "\\%03o", c);
        else sb_append(&sb, (const char *)&c, 1);
    }
    sb_puts(&sb, "\"");
    const char *cname = arena_strdup(L->arena, sb.data);
    sb_free(&sb);
    const Symbol *s = lower_expr_sym(x);
    if (s && (lower_is_view(s->type) || lower_is_scalar_ref(s->type))) {
        const Type *elem = s->type->u.view.elem;
        lower_emit(L, "%s(%s, \"%s\", %s, %s, sizeof(%s));", L->target->observe_fn(s->type), cname,
                   lower_type_word(elem), lower_sym_c(L, s),
                   lower_is_view(s->type) ? lower_sym_len(L, s) : "1", lower_c_scalar(elem));
        return NULL;
    }
    const char *v = lower_bind(L, x->type, lower_expr_out(L, x));
    lower_emit(L, "%s(%s, \"%s\", &%s, 1, sizeof %s);", L->target->observe_fn(x->type), cname,
               lower_type_word(x->type), v, v);
    return NULL;
}

/* std.math.NAME (host libm): the f32 forms take C's f suffix. */
const char *lower_emit_math(Lower *L, Expr *e) {
    const char *name = ast_builtin_name(e->u.call.builtin) + strlen("std.math.");
    const Type *t = e->type;
    const char *a = lower_expr(L, e->u.call.args[0]);
    const char *b = e->u.call.nargs > 1 ? lower_expr(L, e->u.call.args[1]) : NULL;
    const char *suffix = t->kind == TY_F32 ? "f" : "";
    if (b) return lower_bind(L, t, FMT("%s%s(%s, %s)", name, suffix, a, b));
    return lower_bind(L, t, FMT("%s%s(%s)", name, suffix, a));
}

/* std.cr.NAME: the correctly rounded runtime (runtime/cairn_cr.h, CAIRN_HD), the same
 * text in host C, an emulated lane and a CUDA lane: cairn_cr_NAMEf (f32), cairn_cr_NAME
 * (f64). Both files include the header when the program uses it (LOWER_MODULE_CR, its
 * module column). */
const char *lower_emit_cr(Lower *L, Expr *e) {
    const char *name = ast_builtin_name(e->u.call.builtin) + strlen("std.cr.");
    const Type *t = e->type;
    const char *a = lower_expr(L, e->u.call.args[0]);
    return lower_bind(L, t, FMT("cairn_cr_%s%s(%s)", name, t->kind == TY_F32 ? "f" : "", a));
}

/* sqrt, abs, floor, ceil, trunc, min, max: exact but for sqrt (rounded once). */
const char *lower_emit_exact(Lower *L, Expr *e) {
    const char *name = ast_builtin_name(e->u.call.builtin);
    const Type *t = e->type;
    const char *a = lower_expr(L, e->u.call.args[0]);
    if (e->u.call.nargs == 2) {
        const char *b = lower_expr(L, e->u.call.args[1]);
        return lower_bind(L, t, FMT("cairn_%s_%s(%s, %s)", name, lower_helper_suffix(t), a, b));
    }
    if (type_is_int(t)) {
        if (strcmp(name, "abs") == 0 && type_is_signed(t))
            return lower_bind(
                L, t, FMT("cairn_abs_%s(%s, %s)", lower_helper_suffix(t), a, lower_at(L, e->span)));
        return a; /* floor, ceil, trunc and abs of an unsigned integer change nothing */
    }
    if (strcmp(name, "abs") == 0) name = "fabs";
    return lower_bind(L, t, FMT("%s%s(%s)", name, t->kind == TY_F32 ? "f" : "", a));
}

/* quantize[T](x, s), quantize_stochastic[T](x, s, noise) */
const char *lower_emit_quantize(Lower *L, Expr *e) {
    bool stochastic = ast_op(e->u.call.builtin)->rounding == RND_STOCHASTIC;
    const Type *to = e->u.call.generics[0];
    const char *x = lower_expr_out(L, e->u.call.args[0]);
    const char *scale = lower_expr(L, e->u.call.args[1]);
    const char *noise = stochastic ? FMT("%s, ", lower_expr(L, e->u.call.args[2])) : "";
    return lower_bind(L, to,
                      FMT("cairn_quantize_%s%s(%s, %s, %s%s)", stochastic ? "stochastic_" : "",
                          lower_type_word(to), x, scale, noise, lower_at(L, e->span)));
}

/* tight = mm_enclose(m, n, k, lo, hi, a, b): the runtime (cairn_mm_enclose.c) checks
 * the extents, runs the bracket GEMM and traps on its errors: on the pool for host
 * views; for @device views the residue algorithm, through the target's entry (on the GPU
 * in a CUDA build, on the host where device work is emulated). */
const char *lower_emit_mm_enclose(Lower *L, Expr *e) {
    StrBuf args = {0};
    bool device = false;
    for (int i = 0; i < 7; i++) {
        Expr *a = e->u.call.args[i];
        sb_printf(&args, "%s, ", lower_arg(L, a, a->type));
        device |= i >= 3 && a->type->u.view.place == PLACE_DEVICE;
    }
    const Type *t = e->u.call.args[5]->type->u.view.elem;
    const char *entry = device ? L->target->enclose_device(L) : "";
    const char *call = FMT("cairn_mm_enclose_%s%s(%s%s)", entry, lower_type_word(t), args.data,
                           lower_at(L, e->span));
    sb_free(&args);
    return lower_bind(L, e->type, call);
}

/* to_bits(x), from_bits[T](u) */
const char *lower_emit_bits(Lower *L, Expr *e) {
    bool to_bits = ast_op(e->u.call.builtin)->generics == 0;
    const Type *t = to_bits ? e->u.call.args[0]->type : e->u.call.generics[0];
    const char *v = lower_expr_out(L, e->u.call.args[0]);
    if (type_is_storage_float(t))
        return lower_bind(
            L, e->type,
            FMT("cairn_%s_%s_bits(%s)", lower_type_word(t), to_bits ? "to" : "from", v));
    return lower_bind(L, e->type,
                      FMT("cairn_%sbits_%s(%s)", to_bits ? "" : "from_", lower_type_word(t), v));
}

/* Where an atomic's element lives: host memory (a host lane), a device lane's global
 * memory (a @device or @unified view), or a block's shared array. */
AtomicSpace lower_atomic_space(const Lower *L, const Expr *e) {
    if (!L->in_device) return ATOMIC_HOST;
    const Expr *x = e->u.call.args[0];
    const Symbol *base = x->kind == EXPR_INDEX ? lower_expr_sym(x->u.index.base) : NULL;
    return base && lower_is_view(base->type) && base->type->u.view.origin == VIEW_SHARED
               ? ATOMIC_SHARED
               : ATOMIC_GLOBAL;
}

/* Atomics on an element x[i] (host: GCC/Clang __atomic builtins, sequentially
 * consistent; a CUDA lane: the device's atomics). The integer forms give back the
 * element's old value. An f32 add in a device lane on global memory flushes subnormals,
 * as PTX's atom.global.add.f32 does, in its emulation too (cairn_device.h); on a shared
 * array it keeps them, as atom.shared.add.f32 does. */
const char *lower_emit_atomic(Lower *L, Expr *e) {
    Builtin b = e->u.call.builtin;
    const char *v = lower_expr_out(L, e->u.call.args[1]); /* its bits may be stored */
    const char *w = b == BI_ATOMIC_CAS ? lower_expr_out(L, e->u.call.args[2]) : NULL;
    const char *place = lower_place(L, e->u.call.args[0]);
    if (!place) return "0";
    const char *p = FMT("&%s", place);
    if (L->in_device) return L->target->device_atomic(L, e, b, p, v, w);
    return lower_atomic_host(L, e, b, p, v, w);
}

/* The host's atomics on the element at p, operands v (and w for cas) evaluated. */
const char *lower_atomic_host(Lower *L, Expr *e, Builtin b, const char *p, const char *v,
                              const char *w) {
    const Type *t = e->u.call.args[0]->type;
    const char *seq = "__ATOMIC_SEQ_CST";
    switch (b) {
    case BI_ATOMIC_ADD_UNORDERED:
        lower_emit(L, "cairn_atomic_add_%s%s(%s, %s);", lower_type_word(t),
                   t->kind != TY_F32                           ? ""
                   : lower_atomic_space(L, e) == ATOMIC_GLOBAL ? "_ftz"
                   : lower_atomic_space(L, e) == ATOMIC_SHARED ? "_shared"
                                                               : "",
                   p, v);
        return NULL;
    case BI_ATOMIC_ADD_WRAP:
        return lower_bind(L, t, FMT("__atomic_fetch_add(%s, %s, %s)", p, v, seq));
    case BI_ATOMIC_AND: return lower_bind(L, t, FMT("__atomic_fetch_and(%s, %s, %s)", p, v, seq));
    case BI_ATOMIC_OR: return lower_bind(L, t, FMT("__atomic_fetch_or(%s, %s, %s)", p, v, seq));
    case BI_ATOMIC_XOR: return lower_bind(L, t, FMT("__atomic_fetch_xor(%s, %s, %s)", p, v, seq));
    default: break;
    }
    /* min, max and cas: a compare-and-swap loop that leaves the old value in `old` */
    const char *old =
        lower_bind(L, t, b == BI_ATOMIC_CAS ? v : FMT("__atomic_load_n(%s, __ATOMIC_RELAXED)", p));
    if (b == BI_ATOMIC_CAS)
        lower_emit(L, "__atomic_compare_exchange_n(%s, &%s, %s, false, %s, %s);", p, old, w, seq,
                   seq);
    else
        lower_emit(
            L,
            "while (%s %s %s && !__atomic_compare_exchange_n(%s, &%s, %s, false, %s, __ATOMIC_RELAXED)) {}",
            v, b == BI_ATOMIC_MIN ? "<" : ">", old, p, old, v, seq);
    return old;
}

static const char *lower_user_call(Lower *L, Expr *e) {
    const Item *fn = e->u.call.fn;
    assert(fn && fn->kind == ITEM_FN && e->u.call.nargs == fn->u.fn.nparams);
    StrBuf args = {0};
    bool checks = fn->u.fn.requires != NULL; /* the callee traps at this call */
    for (int i = 0; i < e->u.call.nargs; i++) {
        const Type *pt = fn->u.fn.params[i]->type;
        checks |= lower_is_view(pt);
        sb_printf(&args, "%s%s", i ? ", " : "", lower_arg(L, e->u.call.args[i], pt));
    }
    if (checks) sb_printf(&args, "%s%s", e->u.call.nargs ? ", " : "", lower_at(L, e->span));
    const char *call =
        FMT("%s(%s)", lower_item_name(L, "fn", fn->name), args.data ? args.data : "");
    sb_free(&args);
    if (!e->type || e->type->kind == TY_VOID) {
        lower_emit(L, "%s;", call);
        return NULL;
    }
    return lower_bind(L, e->type, call);
}

const char *lower_emit_copy(Lower *L, Expr *e) {
    lower_copy(L, e);
    return NULL;
}

const char *lower_emit_wide(Lower *L, Expr *e) {
    lower_wide(L, e);
    return NULL;
}

const char *lower_emit_shuffle(Lower *L, Expr *e) { return L->target->warp_op(L, e); }

/* A build's extra emitters, for the extra rows of CAIRN_OPS_EXTRA (syntax/ops.def): the
 * tests' fixture, tests/build/ops_fixture/. */
#ifdef CAIRN_OPS_EXTRA_C
#include CAIRN_OPS_EXTRA_C
#endif

/* ops.def's columns for the C back end: each builtin's emitter and runtime module. */
static LowerEmitter *const c_emitters[BI_COUNT] = {
#define OP(id, spelling, amin, amax, generics, family, rule, rounding, where, guards, grad, cost,  \
           module)                                                                                 \
    [id] =
#define EMIT_C(emitter) emitter,
#include "syntax/ops.def"
};

static const unsigned c_modules[BI_COUNT] = {
#define OP(id, spelling, amin, amax, generics, family, rule, rounding, where, guards, grad, cost,  \
           module)                                                                                 \
    [id] = LOWER_MODULE_##module,
#include "syntax/ops.def"
};

static const char *lower_call(Lower *L, Expr *e) {
    Builtin b = e->u.call.builtin;
    if (b == BI_NONE) return lower_user_call(L, e);
    if (!c_emitters[b]) {
        lower_unsupported(L, e->span, arena_printf(L->arena, "`%s`", ast_builtin_name(b)));
        return "0";
    }
    lower_use_runtime(L, c_modules[b]);
    return c_emitters[b](L, e);
}

const char *lower_expr(Lower *L, Expr *e) {
    switch (e->kind) {
    case EXPR_INT: return int_constant(L, e->type, e->u.int_lit.value, false);
    case EXPR_FLOAT: return float_constant(L, e);
    case EXPR_BOOL: return e->u.bool_lit ? "true" : "false";
    case EXPR_NAME: return lower_name(L, e);
    case EXPR_UNARY: return lower_unary(L, e);
    case EXPR_BINARY: return lower_binary(L, e);
    case EXPR_CALL: return lower_call(L, e);
    case EXPR_INDEX: {
        const char *place = lower_element(L, e);
        return place ? lower_bind(L, e->type, place) : "0";
    }
    case EXPR_CONVERT:
        if (e->type->kind == TY_FRAGMENT) return lower_fragment_fill(L, e); /* lower_mma.c */
        return lower_convert(L,
                             type_is_storage_float(e->u.convert.to)
                                 ? lower_expr_out(L, e->u.convert.arg) /* its bits leave */
                                 : lower_expr(L, e->u.convert.arg),
                             e->u.convert.arg->type, e->u.convert.to, e->span);
    case EXPR_REDUCE: return lower_reduce(L, e);
    default: lower_unsupported(L, e->span, "this expression"); return "0";
    }
}
