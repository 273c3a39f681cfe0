/* check_expr.c: types of expressions, literals in context, operators, conversions and
 * calls (user functions and every builtin of ops.def).
 *
 * check_expr(e, expected) returns e's type and stores it in e->type. `expected` is only
 * a hint for literals (an exact constant takes the type its context gives, rounded once);
 * the caller compares the result with what it needs (check_expr_as). TY_ERROR is
 * returned after a reported error, and every check that meets it stays silent.
 */
#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check/check_internal.h"

#define ERR type_scalar(TY_ERROR)

const char *check_type_text(const Type *t) {
    static char bufs[4][96];
    static int next;
    char *b = bufs[next++ & 3];
    if (t && t->kind == TY_VOID) return "no value";
    return type_name(t, b, sizeof bufs[0]);
}

const Type *check_set_type(Expr *e, const Type *t) {
    assert(t); /* every checked expression gets a type, TY_ERROR after an error */
    e->type = t;
    return t;
}

bool check_untyped_literal(const Expr *e) {
    switch (e->kind) {
    case EXPR_INT:
    case EXPR_FLOAT: return true;
    case EXPR_UNARY: return e->u.unary.op == UN_NEG && check_untyped_literal(e->u.unary.operand);
    case EXPR_BINARY:
        return ast_binop_is_arith(e->u.binary.op) && check_untyped_literal(e->u.binary.lhs) &&
               check_untyped_literal(e->u.binary.rhs);
    default: return false;
    }
}

const Type *check_expr_as(Checker *c, Expr *e, const Type *want, const char *what) {
    const Type *t = check_expr(c, e, want);
    if (type_is_error(t) || type_is_error(want) || type_equal(t, want)) return t;
    char help[160];
    if (type_is_scalar(t) && type_is_scalar(want))
        snprintf(help, sizeof help, "convert explicitly: %s(...)", check_type_text(want));
    else snprintf(help, sizeof help, "%s needs %s", what, check_type_text(want));
    diag_error(c->d, e->span, E_TYPE_MISMATCH, help, "%s: expected %s, found %s", what,
               check_type_text(want), check_type_text(t));
    return ERR;
}

/* ---- literals ---- */

static bool int_fits(const Type *t, uint64_t mag, bool negative) {
    if (negative) {
        if (!type_is_signed(t)) return mag == 0;
        return mag <= ((uint64_t)1 << (type_bits(t) - 1));
    }
    if (type_is_signed(t)) return mag <= ((uint64_t)1 << (type_bits(t) - 1)) - 1;
    int bits = type_bits(t);
    return bits == 64 || mag <= ((uint64_t)1 << bits) - 1;
}

/* A storage float has no literals: its values are made by a named rounding. */
static bool refuse_storage_literal(Checker *c, Expr *e, const Type *expected, Span span) {
    if (!type_is_storage_float(expected)) return false;
    diag_error(c->d, span, E_TYPE_MISMATCH, "write the conversion: f16(1.0), bf16(0.5), ...",
               "a literal of the storage float %s", check_type_text(expected));
    check_set_type(e, ERR);
    return true;
}

static const Type *check_int_literal(Checker *c, Expr *e, const Type *expected, bool negative,
                                     Span span) {
    const Type *t = expected;
    if (refuse_storage_literal(c, e, expected, span)) return ERR;
    if (type_is_compute_float(expected)) {
        diag_error(c->d, span, E_TYPE_MISMATCH, "write a float literal with a point, e.g. 2.0",
                   "an integer literal where %s is required", check_type_text(expected));
        return check_set_type(e, ERR);
    }
    if (!type_is_int(expected)) t = type_scalar(TY_I32);
    if (e->u.int_lit.overflow || !int_fits(t, e->u.int_lit.value, negative)) {
        diag_error(c->d, span, E_LITERAL_RANGE, "use a wider type, or a value in range",
                   "%s%s does not fit in %s", negative ? "-" : "", e->u.int_lit.text,
                   check_type_text(t));
        return check_set_type(e, ERR);
    }
    return check_set_type(e, t);
}

static const Type *check_float_literal(Checker *c, Expr *e, const Type *expected, Span span) {
    if (refuse_storage_literal(c, e, expected, span)) return ERR;
    if (type_is_int(expected)) {
        /* a whole number: its integer literal; else the conversion that exists */
        const char *text = e->u.float_lit.text;
        double v = strtod(text, NULL);
        const char *help =
            v == floor(v) && fabs(v) < 0x1p63
                ? arena_printf(c->arena, "write the integer literal %lld", (long long)v)
                : arena_printf(c->arena, "a float converts with %s(%s), truncating toward zero",
                               check_type_text(expected), text);
        diag_error(c->d, span, E_TYPE_MISMATCH, help, "a float literal where %s is required",
                   check_type_text(expected));
        return check_set_type(e, ERR);
    }
    const Type *t = type_is_compute_float(expected) ? expected : type_scalar(TY_F64);
    /* The exact decimal rounds once (strtof/strtod round correctly); it must stay finite. */
    double v = t->kind == TY_F32 ? (double)strtof(e->u.float_lit.text, NULL)
                                 : strtod(e->u.float_lit.text, NULL);
    if (isinf(v)) {
        diag_error(c->d, span, E_LITERAL_RANGE,
                   "the largest finite f32 is about 3.4e38, f64 1.8e308",
                   "%s rounds to infinity in %s", e->u.float_lit.text, check_type_text(t));
        return check_set_type(e, ERR);
    }
    return check_set_type(e, t);
}

/* ---- operators ---- */

static bool is_arith(BinaryOp op) { return ast_binop_is_arith(op); }
static bool is_compare(BinaryOp op) { return ast_binop_is_compare(op); }
static bool is_logic(BinaryOp op) { return op == BIN_AND || op == BIN_OR; }

const Type *check_operator_error(Checker *c, Expr *e, const Type *t, const char *op) {
    if (type_is_storage_float(t))
        diag_error(
            c->d, e->span, E_OPERATOR,
            "a storage float never computes: widen with f32(x), compute, and round back with "
            "f16(y), bf16(y) or quantize",
            "'%s' on the storage float %s", op, check_type_text(t));
    else
        diag_error(c->d, e->span, E_OPERATOR,
                   "see docs/language.md for the operators each type has",
                   "'%s' is not defined for %s", op, check_type_text(t));
    return check_set_type(e, ERR);
}

/* Checks both operands, giving an untyped literal side the other side's type. */
CheckTypes check_pair(Checker *c, Expr *l, Expr *r, const Type *hint) {
    CheckTypes t;
    if (check_untyped_literal(l) && !check_untyped_literal(r)) {
        t.r = check_expr(c, r, hint);
        t.l = check_expr(c, l, type_is_error(t.r) ? hint : t.r);
    } else {
        t.l = check_expr(c, l, hint);
        t.r = check_expr(c, r, type_is_error(t.l) ? hint : t.l);
    }
    return t;
}

static const Type *check_binary(Checker *c, Expr *e, const Type *expected) {
    BinaryOp op = e->u.binary.op;
    const char *text = ast_binary_op_text(op);
    const Type *lt, *rt;
    if (is_logic(op)) {
        lt = check_expr_as(c, e->u.binary.lhs, type_scalar(TY_BOOL), "an operand of && and ||");
        rt = check_expr_as(c, e->u.binary.rhs, type_scalar(TY_BOOL), "an operand of && and ||");
        return check_set_type(e,
                              type_is_error(lt) || type_is_error(rt) ? ERR : type_scalar(TY_BOOL));
    }
    CheckTypes both =
        check_pair(c, e->u.binary.lhs, e->u.binary.rhs, is_compare(op) ? NULL : expected);
    lt = both.l, rt = both.r;
    if (type_is_error(lt) || type_is_error(rt)) return check_set_type(e, ERR);
    if (type_is_storage_float(lt)) return check_operator_error(c, e, lt, text);
    if (type_is_storage_float(rt)) return check_operator_error(c, e, rt, text);
    bool numeric = type_is_int(lt) || type_is_compute_float(lt);
    if (is_compare(op)) {
        bool ok = (op == BIN_EQ || op == BIN_NE) ? (numeric || lt->kind == TY_BOOL) : numeric;
        if (!ok) return check_operator_error(c, e, lt, text);
    } else if (is_arith(op)) {
        if (!numeric || (op == BIN_REM && !type_is_int(lt)))
            return check_operator_error(c, e, lt, text);
    } else if (!type_is_int(lt)) { /* bitwise and shifts */
        return check_operator_error(c, e, lt, text);
    }
    if (!type_equal(lt, rt)) {
        char help[128];
        snprintf(help, sizeof help, "nothing converts implicitly: write %s(...) on one side",
                 check_type_text(lt));
        diag_error(c->d, e->span, E_TYPE_MISMATCH, help, "'%s' between %s and %s", text,
                   check_type_text(lt), check_type_text(rt));
        return check_set_type(e, ERR);
    }
    return check_set_type(e, is_compare(op) ? type_scalar(TY_BOOL) : lt);
}

static const Type *check_unary(Checker *c, Expr *e, const Type *expected) {
    Expr *x = e->u.unary.operand;
    if (e->u.unary.op == UN_NEG && x->kind == EXPR_INT) {
        const Type *t = check_int_literal(c, x, expected, true, e->span);
        return check_set_type(e, t);
    }
    if (e->u.unary.op == UN_NOT) {
        const Type *t = check_expr(c, x, type_scalar(TY_BOOL));
        if (type_is_error(t)) return check_set_type(e, ERR);
        if (t->kind != TY_BOOL) return check_operator_error(c, e, t, "!");
        return check_set_type(e, t);
    }
    const Type *t = check_expr(c, x, expected);
    if (type_is_error(t)) return check_set_type(e, ERR);
    if (!type_is_signed(t) && !type_is_compute_float(t)) return check_operator_error(c, e, t, "-");
    return check_set_type(e, t);
}

/* ---- conversions ---- */

static bool cast_allowed(const Type *from, const Type *to) {
    if (type_equal(from, to)) return true;
    if (from->kind == TY_BOOL || to->kind == TY_BOOL) return false;
    if (type_is_storage_float(to)) return type_is_compute_float(from);
    if (type_is_storage_float(from)) return type_is_compute_float(to);
    return (type_is_int(from) || type_is_compute_float(from)) &&
           (type_is_int(to) || type_is_compute_float(to));
}

static const Type *check_fill(Checker *c, Expr *e) {
    const Type *to = check_fragment_type(c, e->u.convert.to, e->span);
    const Type *v =
        check_expr_as(c, e->u.convert.arg, type_scalar(TY_F32), "a fragment's fill value");
    if (type_is_error(to) || type_is_error(v)) return check_set_type(e, ERR);
    if (!check_in_coop(c)) {
        diag_error(c->d, e->span, E_FRAGMENT, "fill fragments inside blocks ... threads ... { }",
                   "a fragment operation outside a cooperative region");
        return check_set_type(e, ERR);
    }
    if (c->region->nonuniform_depth > 0 || !check_warp_uniform(c, e->u.convert.arg)) {
        diag_error(c->d, e->span, E_COOP_WARP,
                   "keep fragment operations where the whole warp reaches them",
                   "a fragment fill that differs within a warp");
        return check_set_type(e, ERR);
    }
    return check_set_type(e, to);
}

static const Type *check_convert(Checker *c, Expr *e) {
    const Type *to = e->u.convert.to;
    if (to->kind == TY_FRAGMENT) return check_fill(c, e);
    Expr *arg = e->u.convert.arg;
    /* An exact constant converts by taking the target's type directly when it can. */
    const Type *hint = type_is_storage_float(to) ? NULL : to;
    if (check_untyped_literal(arg) && type_is_storage_float(to)) hint = type_scalar(TY_F64);
    const Type *from = check_expr(c, arg, hint);
    if (type_is_error(from)) return check_set_type(e, ERR);
    if (!type_is_scalar(from) || !cast_allowed(from, to)) {
        const char *help =
            type_is_storage_float(to) && (type_is_int(from) || type_is_storage_float(from))
                ? "convert through f32 first: T(f32(x))"
                : "conversions are between integers, f32/f64, and storage floats via f32/f64";
        diag_error(c->d, e->span, E_CAST, help, "cannot convert %s to %s", check_type_text(from),
                   check_type_text(to));
        return check_set_type(e, ERR);
    }
    return check_set_type(e, to);
}

/* ---- names, indexing, members ---- */

/* The edit distance of a and b (an insertion, deletion, substitution or swap of two
 * neighbours per step: `LIMTI` is one step from `LIMIT`), or cap + 1 once it is known
 * to exceed cap. Names are short: three rows of the table suffice. */
static int edit_distance(const char *a, const char *b, int cap) {
    enum { MAXLEN = 64 };
    size_t la = strlen(a), lb = strlen(b);
    if (la > MAXLEN || lb > MAXLEN || (la > lb ? la - lb : lb - la) > (size_t)cap) return cap + 1;
    int rows[3][MAXLEN + 1];
    for (size_t j = 0; j <= lb; j++) rows[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) { /* row i of the table lives in rows[i % 3] */
        int *older = rows[(i + 1) % 3], *prev = rows[(i + 2) % 3], *cur = rows[i % 3];
        int best = cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int v = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < v) v = prev[j] + 1;
            if (cur[j - 1] + 1 < v) v = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                older[j - 2] + 1 < v)
                v = older[j - 2] + 1;
            cur[j] = v;
            if (v < best) best = v;
        }
        if (best > cap) return cap + 1;
    }
    return rows[la % 3][lb];
}

/* The help for an unknown name: the nearest name in scope, within a third of its
 * letters (one at least), locals first (innermost wins a tie), then the top level;
 * functions when a call wants one, values otherwise. NULL when nothing is near. */
static const char *near_name_help(Checker *c, const char *name, bool want_fn) {
    int cap = (int)strlen(name) / 3, best = INT_MAX;
    if (cap < 1) cap = 1;
    const char *found = NULL;
    for (int pass = 0; pass < 2; pass++) {
        Symbol **syms = pass == 0 ? c->locals : c->globals;
        for (int i = (pass == 0 ? c->nlocals : c->nglobals) - 1; i >= 0; i--) {
            const Symbol *s = syms[i];
            if (s->kind == SYM_POISON || (s->kind == SYM_FN) != want_fn) continue;
            int dist = edit_distance(name, s->name, cap);
            if (dist <= cap && dist < best) best = dist, found = s->name;
        }
    }
    return found ? arena_printf(c->arena, "a name that exists: %s", found) : NULL;
}

static const Type *check_name(Checker *c, Expr *e) {
    Symbol *s = check_lookup(c, e->u.name.name);
    e->u.name.sym = s;
    if (!s) {
        const char *near = near_name_help(c, e->u.name.name, false);
        const char *help = strcmp(e->u.name.name, "std") == 0
                               ? "std.math and std.cr functions are called: std.cr.exp(x)"
                           : near ? near
                                  : "declare it before use";
        diag_error(c->d, e->span, E_UNKNOWN_NAME, help, "unknown name '%s'", e->u.name.name);
        return check_set_type(e, ERR);
    }
    switch (s->kind) {
    case SYM_POISON: return check_set_type(e, ERR);
    case SYM_FN:
        diag_error(c->d, e->span, E_TYPE_MISMATCH, "call it: f(...)",
                   "the function '%s' is not a value", s->name);
        return check_set_type(e, ERR);
    case SYM_LOCAL:
    case SYM_LOOP:
    case SYM_PARAM:
    case SYM_BUFFER:
    case SYM_CONST: break;
    case SYM_LAYOUT: break;
    }
    if (c->in_const && s->kind != SYM_CONST && s->kind != SYM_LAYOUT) {
        diag_error(c->d, e->span, E_CONST, "a const is made of literals and other consts",
                   "'%s' is not a constant", s->name);
        return check_set_type(e, ERR);
    }
    const Type *t = s->type;
    if (t && t->kind == TY_VIEW && !t->u.view.extent)
        return check_set_type(e, t->u.view.elem); /* rw<T> */
    return check_set_type(e, t ? t : ERR);
}

static const Type *check_index(Checker *c, Expr *e) {
    Expr *base = e->u.index.base;
    const Type *bt = check_expr(c, base, NULL);
    const Type *it = check_expr_as(c, e->u.index.index, type_scalar(TY_USIZE), "an index");
    if (type_is_error(bt)) return check_set_type(e, ERR);
    if (bt->kind != TY_VIEW || !bt->u.view.extent) {
        diag_error(c->d, base->span, E_TYPE_MISMATCH, "only arrays and views are indexed",
                   "cannot index %s", check_type_text(bt));
        return check_set_type(e, ERR);
    }
    check_note_placement(c, bt, e->span);
    if (base->kind == EXPR_NAME && base->u.name.sym)
        check_region_record(c, base->u.name.sym, 0, e->u.index.index, e->span);
    (void)it;
    return check_set_type(e, bt->u.view.elem);
}

/* ---- calls ---- */

static bool is_path(const Expr *e, const char *a, const char *b) {
    return e->kind == EXPR_MEMBER && e->u.member.base->kind == EXPR_NAME &&
           strcmp(e->u.member.base->u.name.name, a) == 0 && strcmp(e->u.member.field, b) == 0;
}

/* Which builtin a callee names: plain names, std.math.X, std.cr.X, layout methods (.X). */
static Builtin resolve_builtin(Checker *c, const Expr *callee, Expr **receiver) {
    char spelling[64];
    *receiver = NULL;
    if (callee->kind == EXPR_NAME) {
        if (check_lookup(c, callee->u.name.name)) return BI_NONE; /* user names come first */
        snprintf(spelling, sizeof spelling, "%s", callee->u.name.name);
    } else if (callee->kind == EXPR_MEMBER && is_path(callee->u.member.base, "std", "math")) {
        snprintf(spelling, sizeof spelling, "std.math.%s", callee->u.member.field);
    } else if (callee->kind == EXPR_MEMBER && is_path(callee->u.member.base, "std", "cr")) {
        snprintf(spelling, sizeof spelling, "std.cr.%s", callee->u.member.field);
    } else if (callee->kind == EXPR_MEMBER) {
        snprintf(spelling, sizeof spelling, ".%s", callee->u.member.field);
        *receiver = callee->u.member.base;
    } else {
        return BI_NONE;
    }
    return ast_builtin_lookup(spelling);
}

const Type *check_args_loosely(Checker *c, Expr *e) {
    for (int i = 0; i < e->u.call.nargs; i++)
        if (e->u.call.args[i]->kind != EXPR_STRING) check_expr(c, e->u.call.args[i], NULL);
    return ERR;
}

/* A view argument for a view parameter: element, access, placement, constant extent. */
static void check_view_arg(Checker *c, Expr *arg, const Type *at, Item *fn, Param *prm) {
    const Type *pt = prm->type;
    if (at->kind != TY_VIEW || !at->u.view.extent) {
        diag_error(c->d, arg->span, E_TYPE_MISMATCH,
                   "pass an array (a view, buffer or shared array)",
                   "parameter '%s' of %s needs %s, found %s", prm->name, fn->name,
                   check_type_text(pt), check_type_text(at));
        return;
    }
    if (!type_equal(at->u.view.elem, pt->u.view.elem)) {
        diag_error(c->d, arg->span, E_TYPE_MISMATCH, "views never convert their elements",
                   "parameter '%s' of %s needs elements of %s, found %s", prm->name, fn->name,
                   check_type_text(pt->u.view.elem), check_type_text(at->u.view.elem));
        return;
    }
    if (pt->u.view.access == ACCESS_RW && at->u.view.access == ACCESS_RO) {
        diag_error(c->d, arg->span, E_RO_WRITE, "take the caller's parameter as rw<T>[n]",
                   "'%s' is read only, and %s takes '%s' as rw",
                   arg->kind == EXPR_NAME ? arg->u.name.name : "this view", fn->name, prm->name);
        return;
    }
    Placement ap = at->u.view.place, pp = pt->u.view.place;
    if (ap != pp && ap != PLACE_UNIFIED && pp != PLACE_UNIFIED) {
        diag_error(c->d, arg->span, E_PLACEMENT,
                   "allocate the array where the parameter says, or use @unified",
                   "parameter '%s' of %s lives on the %s, and this array on the %s", prm->name,
                   fn->name, pp == PLACE_DEVICE ? "device" : "host",
                   ap == PLACE_DEVICE ? "device" : "host");
        return;
    }
    int64_t want, have;
    if (check_const_int(c, pt->u.view.extent, &want, 0) &&
        check_const_int(c, at->u.view.extent, &have, 0) && want != have)
        diag_error(c->d, arg->span, E_EXTENT, "pass an array of the parameter's extent",
                   "parameter '%s' of %s has %lld elements, this array %lld", prm->name, fn->name,
                   (long long)want, (long long)have);
    if (c->region) check_note_placement(c, at, arg->span); /* a lane's callee reaches it there */
    if (pt->u.view.access == ACCESS_RW && arg->kind == EXPR_NAME && arg->u.name.sym)
        check_region_record(c, arg->u.name.sym, REC_WRITE | REC_WHOLE, NULL, arg->span);
}

/* A scalar rw<T> parameter takes a mutable variable by reference. */
static void check_ref_arg(Checker *c, Expr *arg, const Type *at, Item *fn, Param *prm) {
    const Type *pt = prm->type;
    Symbol *s = arg->kind == EXPR_NAME ? arg->u.name.sym : NULL;
    if (!s) {
        diag_error(c->d, arg->span, E_TYPE_MISMATCH, "pass a `let mut` variable",
                   "parameter '%s' of %s is rw<%s>: it takes a variable", prm->name, fn->name,
                   check_type_text(pt->u.view.elem));
        return;
    }
    if (!type_equal(at, pt->u.view.elem)) {
        diag_error(c->d, arg->span, E_TYPE_MISMATCH, "views never convert their elements",
                   "parameter '%s' of %s needs a variable of %s, found %s", prm->name, fn->name,
                   check_type_text(pt->u.view.elem), check_type_text(at));
        return;
    }
    if (!s->mut) {
        diag_error(c->d, arg->span, E_IMMUTABLE, "declare it with `let mut`",
                   "'%s' cannot change, and %s takes it as rw", s->name, fn->name);
        return;
    }
    check_region_record(c, s, REC_WRITE | REC_WHOLE, NULL, arg->span);
}

/* E-ALIAS: an argument bound to an rw parameter is not also another argument. */
static void check_aliases(Checker *c, Expr *e, Item *fn) {
    for (int i = 0; i < e->u.call.nargs; i++) {
        const Type *pt = fn->u.fn.params[i]->type;
        Expr *a = e->u.call.args[i];
        if (pt->kind != TY_VIEW || pt->u.view.access != ACCESS_RW || a->kind != EXPR_NAME ||
            !a->u.name.sym)
            continue;
        for (int j = 0; j < e->u.call.nargs; j++) {
            Expr *b = e->u.call.args[j];
            if (j != i && b->kind == EXPR_NAME && b->u.name.sym == a->u.name.sym &&
                fn->u.fn.params[j]->type->kind == TY_VIEW) {
                diag_error(
                    c->d, b->span, E_ALIAS, "copy it into a buffer first, or pass another array",
                    "'%s' is passed to %s's rw parameter '%s' and again as '%s'", a->u.name.name,
                    fn->name, fn->u.fn.params[i]->name, fn->u.fn.params[j]->name);
                return;
            }
        }
    }
}

/* Whether the argument's name is the one f_grad gives a gradient parameter: `d_out`,
 * or `dout` without the underscore (what a caller naturally calls that array). */
static bool named_for(const Expr *arg, const char *param) {
    if (arg->kind != EXPR_NAME || strncmp(param, "d_", 2) != 0) return false;
    const char *a = arg->u.name.name;
    return strcmp(a, param) == 0 || (a[0] == 'd' && strcmp(a + 1, param + 2) == 0);
}

/* A call of a derived f_grad passes its gradient views in their roles (docs/gradients.md:
 * f's parameters, the seed, the adjoints d_x in parameter order, then a d_out view per
 * view f writes). Swapped, the types still match and the gradients come out zero, so:
 * an array named for another gradient parameter than the one it is passed to is
 * E-GRAD-ARGS, and a d_out view that is also one of f's data views is E-ALIAS (an rw
 * adjoint passed as data already is). */
static void check_grad_roles(Checker *c, Expr *e, Item *grad) {
    const Item *f = grad->u.fn.derived_from;
    int first = f->u.fn.nparams + (type_is_compute_float(f->u.fn.ret) ? 1 : 0);
    for (int i = first; i < e->u.call.nargs; i++) {
        Expr *arg = e->u.call.args[i];
        const char *mine = grad->u.fn.params[i]->name;
        for (int j = first; j < e->u.call.nargs && !named_for(arg, mine); j++) {
            const char *other = grad->u.fn.params[j]->name;
            if (j == i || !named_for(arg, other)) continue;
            diag_error(c->d, arg->span, E_GRAD_ARGS,
                       "f_grad takes f's parameters, the seed, the adjoints d_x in parameter "
                       "order, then d_out for each view f writes (cairn expand shows it)",
                       "'%s' is passed as %s's '%s' but is named for its '%s'", arg->u.name.name,
                       grad->name, mine, other);
            return;
        }
        const Type *pt = grad->u.fn.params[i]->type;
        if (pt->kind != TY_VIEW || pt->u.view.access != ACCESS_RO || arg->kind != EXPR_NAME)
            continue;
        for (int j = 0; j < f->u.fn.nparams; j++) {
            Expr *data = e->u.call.args[j];
            if (data->kind == EXPR_NAME && data->u.name.sym &&
                data->u.name.sym == arg->u.name.sym) {
                diag_error(c->d, arg->span, E_ALIAS,
                           "pass the gradient of what f writes in its own array",
                           "'%s' is passed to %s as the data '%s' and as the gradient view '%s'",
                           arg->u.name.name, grad->name, grad->u.fn.params[j]->name, mine);
                return;
            }
        }
    }
}

void check_call_args_against(Checker *c, Expr *e, Item *fn) {
    int n = e->u.call.nargs;
    if (n != fn->u.fn.nparams) {
        diag_error(c->d, e->span, E_ARG_COUNT, "pass one argument per parameter",
                   "%s takes %d argument%s, %d given", fn->name, fn->u.fn.nparams,
                   fn->u.fn.nparams == 1 ? "" : "s", n);
        check_args_loosely(c, e);
        return;
    }
    for (int i = 0; i < n; i++) {
        Param *prm = fn->u.fn.params[i];
        const Type *pt = prm->type;
        Expr *arg = e->u.call.args[i];
        if (pt->kind == TY_VIEW) {
            const Type *at = check_expr(c, arg, NULL);
            if (type_is_error(at)) continue;
            if (pt->u.view.extent) check_view_arg(c, arg, at, fn, prm);
            else check_ref_arg(c, arg, at, fn, prm);
        } else {
            char what[128];
            snprintf(what, sizeof what, "argument '%s' of %s", prm->name, fn->name);
            check_expr_as(c, arg, pt, what);
        }
    }
    check_aliases(c, e, fn);
    if (fn->u.fn.derived_from) check_grad_roles(c, e, fn);
}

static const Type *check_call(Checker *c, Expr *e, const Type *expected) {
    Expr *callee = e->u.call.callee, *receiver;
    Builtin b = resolve_builtin(c, callee, &receiver);
    e->u.call.builtin = b;
    if (b != BI_NONE) {
        if (c->in_const && ast_op(b)->rule != RULE_LAYOUT) {
            diag_error(c->d, e->span, E_CONST, "a const is made of literals and other consts",
                       "a const cannot call %s", ast_builtin_name(b));
            return check_set_type(e, ERR);
        }
        return check_set_type(e, check_builtin(c, e, b, receiver, expected));
    }
    if (callee->kind != EXPR_NAME) {
        if (callee->kind == EXPR_MEMBER && is_path(callee->u.member.base, "std", "math"))
            diag_error(c->d, callee->span, E_UNKNOWN_NAME, "see docs/language.md for std.math",
                       "std.math has no function '%s'", callee->u.member.field);
        else if (callee->kind == EXPR_MEMBER && is_path(callee->u.member.base, "std", "cr"))
            diag_error(c->d, callee->span, E_UNKNOWN_NAME,
                       "std.cr has exp, exp2, expm1, log, log2, log1p, tanh, sigmoid, sin and "
                       "cos (docs/language.md); std.math has the rest, on the host",
                       "std.cr has no function '%s'", callee->u.member.field);
        else
            diag_error(c->d, callee->span, E_UNKNOWN_NAME, "call a function by its name",
                       "this is not a function");
        check_args_loosely(c, e);
        return check_set_type(e, ERR);
    }
    Symbol *s = check_lookup(c, callee->u.name.name);
    callee->u.name.sym = s;
    if (!s) {
        const char *near = near_name_help(c, callee->u.name.name, true);
        diag_error(c->d, callee->span, E_UNKNOWN_NAME,
                   near ? near : "declare the function, or check the spelling",
                   "unknown function '%s'", callee->u.name.name);
        check_args_loosely(c, e);
        return check_set_type(e, ERR);
    }
    if (s->kind == SYM_POISON) {
        check_args_loosely(c, e);
        return check_set_type(e, ERR);
    }
    if (s->kind != SYM_FN) {
        diag_error(c->d, callee->span, E_TYPE_MISMATCH, "only functions are called",
                   "'%s' is not a function", s->name);
        check_args_loosely(c, e);
        return check_set_type(e, ERR);
    }
    if (c->in_const) {
        diag_error(c->d, e->span, E_CONST, "a const is made of literals and other consts",
                   "a const cannot call %s", s->name);
        return check_set_type(e, ERR);
    }
    Item *fn = s->decl.item;
    e->u.call.fn = fn;
    callee->type = type_scalar(TY_VOID);
    if (e->u.call.ngenerics)
        diag_error(c->d, e->span, E_ARG_COUNT, "user functions take no type arguments",
                   "%s takes no type arguments", fn->name);
    check_call_args_against(c, e, fn);
    if (check_in_lane(c) && (fn->u.fn.lane_effects & LANE_EFFECT_PARALLEL)) {
        diag_error(c->d, e->span, E_PARALLEL_NEST,
                   "call it outside the region, or give the lane a sequential version",
                   "a lane calls %s, which runs parallel work", fn->name);
        return check_set_type(e, ERR);
    }
    if (check_in_lane(c) && (fn->u.fn.lane_effects & LANE_EFFECT_HOST_ONLY)) {
        diag_error(c->d, e->span, E_PARALLEL_CALL, "call it outside the region",
                   "a lane calls %s, which uses std.math, observe or a buffer", fn->name);
        return check_set_type(e, ERR);
    }
    return check_set_type(e, fn->u.fn.ret);
}

/* ---- reductions and scans ---- */

static bool reduce_op_allowed(ReduceOp op, const Type *t) {
    if (op == RED_BITAND || op == RED_BITOR || op == RED_BITXOR) return type_is_int(t);
    return type_is_int(t) || type_is_compute_float(t);
}

static const Type *check_reduce(Checker *c, Expr *e, const Type *expected) {
    ReduceMode mode = e->u.reduce.mode;
    bool scan = e->u.reduce.scan;
    const char *what = scan ? "scan" : "reduce";
    if (mode == MODE_PARALLEL && check_in_lane(c)) {
        diag_error(c->d, e->span, E_PARALLEL_NEST,
                   "inside a lane, fold in written order: reduce OP for",
                   "a pooled %s inside a lane", what);
        return check_set_type(e, ERR);
    }
    Binder b = {e->u.reduce.var ? e->u.reduce.var : "_", e->u.reduce.var_span, NULL, e->u.reduce.lo,
                e->u.reduce.count};
    int mark = c->nlocals;
    Region r;
    if (e->u.reduce.var) check_binder(c, &b);
    e->u.reduce.var_sym = b.sym;
    if (mode == MODE_PARALLEL) check_push_region(c, &r, true, false, b.sym);
    const Type *t = check_expr(c, e->u.reduce.body, scan ? NULL : expected);
    /* A pooled scan's target lives where its lanes run: its placement counts there. */
    const Type *it = scan ? check_expr(c, e->u.reduce.into, NULL) : NULL;
    if (mode == MODE_PARALLEL && it && it->kind == TY_VIEW && it->u.view.extent)
        check_note_placement(c, it, e->u.reduce.into->span);
    if (mode == MODE_PARALLEL) {
        e->u.reduce.on_device = check_region_on_device(&r);
        check_pop_region(c, &r);
    }
    c->nlocals = mark;
    if (type_is_error(t)) return check_set_type(e, ERR);
    if (!reduce_op_allowed(e->u.reduce.op, t)) {
        char op[16];
        snprintf(op, sizeof op, "%s %s", what, ast_reduce_op_text(e->u.reduce.op));
        return check_operator_error(c, e, t, op);
    }
    if (type_is_compute_float(t) && mode != MODE_FOR) {
        if (scan) {
            diag_error(c->d, e->span, E_SCAN_ORDER,
                       "a float scan runs in written order: scan OP for",
                       "a float scan out of written order");
            return check_set_type(e, ERR);
        }
        if (e->u.reduce.op == RED_MUL && mode == MODE_PARALLEL) {
            diag_error(c->d, e->span, E_REDUCE_ORDER,
                       "multiply in written order: reduce * for (no exact product is offered)",
                       "a float product on the pool");
            return check_set_type(e, ERR);
        }
    }
    if (mode == MODE_WARP) {
        if (!check_in_coop(c)) {
            diag_error(c->d, e->span, E_COOP_REGION,
                       "warp reductions run inside blocks ... threads ...",
                       "a warp %s outside a cooperative region", what);
            return check_set_type(e, ERR);
        }
        if (c->region->nonuniform_depth > 0) {
            diag_error(c->d, e->span, E_COOP_WARP, "reach warp operations with the whole warp",
                       "a warp %s under a condition that differs within a warp", what);
            return check_set_type(e, ERR);
        }
    }
    if (!scan) return check_set_type(e, t);
    Expr *into = e->u.reduce.into;
    if (type_is_error(it)) return check_set_type(e, ERR);
    if (it->kind != TY_VIEW || !it->u.view.extent || !type_equal(it->u.view.elem, t)) {
        diag_error(c->d, into->span, E_TYPE_MISMATCH, "scan into an rw view of the yield's type",
                   "a scan of %s into %s", check_type_text(t), check_type_text(it));
        return check_set_type(e, ERR);
    }
    if (it->u.view.access == ACCESS_RO) {
        diag_error(c->d, into->span, E_RO_WRITE, "scan into an rw view",
                   "a scan into a read-only view");
        return check_set_type(e, ERR);
    }
    if (mode != MODE_PARALLEL) check_note_placement(c, it, into->span);
    if (into->kind == EXPR_NAME && into->u.name.sym)
        check_region_record(c, into->u.name.sym, REC_WRITE | REC_WHOLE, NULL, into->span);
    return check_set_type(e, type_scalar(TY_VOID));
}

const Type *check_expr(Checker *c, Expr *e, const Type *expected) {
    if (++c->expr_depth > 1000) { /* the parser bounds nesting; this is a second fence */
        c->expr_depth--;
        diag_error(c->d, e->span, E_SYNTAX, "split the expression into smaller ones",
                   "an expression nested too deeply to check");
        return check_set_type(e, ERR);
    }
    const Type *t;
    switch (e->kind) {
    case EXPR_INT: t = check_int_literal(c, e, expected, false, e->span); break;
    case EXPR_FLOAT: t = check_float_literal(c, e, expected, e->span); break;
    case EXPR_BOOL: t = check_set_type(e, type_scalar(TY_BOOL)); break;
    case EXPR_STRING:
        diag_error(c->d, e->span, E_TYPE_MISMATCH,
                   "strings only name observations: observe(\"name\", x)",
                   "a string is not a value");
        t = check_set_type(e, ERR);
        break;
    case EXPR_ZEROED:
        diag_error(c->d, e->span, E_TYPE_MISMATCH,
                   "zeroed initialises buffer and shared arrays only", "zeroed is not a value");
        t = check_set_type(e, ERR);
        break;
    case EXPR_NAME: t = check_name(c, e); break;
    case EXPR_UNARY: t = check_unary(c, e, expected); break;
    case EXPR_BINARY: t = check_binary(c, e, expected); break;
    case EXPR_CALL: t = check_call(c, e, expected); break;
    case EXPR_INDEX: t = check_index(c, e); break;
    case EXPR_MEMBER:
        diag_error(c->d, e->span, E_UNKNOWN_NAME, "fields are reached through calls: L.row(t, v)",
                   "no field '%s' here", e->u.member.field);
        t = check_set_type(e, ERR);
        break;
    case EXPR_CONVERT: t = check_convert(c, e); break;
    case EXPR_REDUCE: t = check_reduce(c, e, expected); break;
    default: t = check_set_type(e, ERR); break;
    }
    c->expr_depth--;
    /* The file's promise: e's type is returned and stored, TY_ERROR only after an error. */
    assert(t && e->type == t);
    assert(!type_is_error(t) || diags_has_errors(c->d));
    return t;
}
