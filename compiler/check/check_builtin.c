/* check_builtin.c: the rules of every builtin call (ops.def's rule column): storage floats and
 * quantize, exact float functions, std.math, observe, atomics, the tensor-core multiply
 * and fragments, the exact bracket GEMM, layouts, wide access and shuffles. */
#include <string.h>

#include "check/check_internal.h"
#include "check/layout_check.h"

#define ERR type_scalar(TY_ERROR)

static Expr *arg(Expr *e, int i) { return e->u.call.args[i]; }

static bool check_arity(Checker *c, Expr *e, Builtin b) {
    const OpInfo *op = ast_op(b);
    int n = e->u.call.nargs;
    if (n < op->min_args || n > op->max_args || (b == BI_MMA_UNORDERED && n != 3 && n != 6)) {
        if (b == BI_MMA_UNORDERED)
            diag_error(c->d, e->span, E_ARG_COUNT,
                       "mma_unordered(m, n, k, c, a, b) or mma_unordered(acc, a, b)",
                       "mma_unordered takes 6 arguments (matrices) or 3 (fragments), %d given", n);
        else
            diag_error(c->d, e->span, E_ARG_COUNT, "see docs/language.md for the builtins",
                       "%s takes %d argument%s, %d given", ast_builtin_name(b), op->min_args,
                       op->min_args == 1 ? "" : "s", n);
        check_args_loosely(c, e);
        return false;
    }
    if (e->u.call.ngenerics != op->generics) {
        diag_error(c->d, e->span, E_ARG_COUNT, "e.g. quantize[f8e4m3](x, scale)",
                   "%s takes %d type argument%s, %d given", ast_builtin_name(b), op->generics,
                   op->generics == 1 ? "" : "s", e->u.call.ngenerics);
        check_args_loosely(c, e);
        return false;
    }
    return true;
}

static const Type *unsigned_of_width(int bits) {
    return type_scalar(bits == 8 ? TY_U8 : bits == 16 ? TY_U16 : bits == 32 ? TY_U32 : TY_U64);
}

static const Type *check_quantize(Checker *c, Expr *e, Builtin b) {
    const Type *t = e->u.call.generics[0];
    bool ok = type_is_storage_float(t) || t->kind == TY_I8 || t->kind == TY_U8 ||
              t->kind == TY_I16 || t->kind == TY_U16;
    const Type *f32 = type_scalar(TY_F32);
    const Type *x = check_expr_as(c, arg(e, 0), f32, "quantize's value");
    const Type *s = check_expr_as(c, arg(e, 1), f32, "quantize's scale");
    const Type *n = b == BI_QUANTIZE_STOCHASTIC ? check_expr_as(c, arg(e, 2), type_scalar(TY_U32),
                                                                "quantize_stochastic's noise")
                                                : f32;
    if (!ok) {
        diag_error(c->d, e->span, E_QUANTIZE,
                   "quantize to f16, bf16, f8e4m3, f8e5m2, i8, u8, i16 or u16",
                   "quantize cannot produce %s", check_type_text(t));
        return ERR;
    }
    return type_is_error(x) || type_is_error(s) || type_is_error(n) ? ERR : t;
}

static const Type *check_bits(Checker *c, Expr *e, Builtin b) {
    if (b == BI_TO_BITS) {
        const Type *t = check_expr(c, arg(e, 0), NULL);
        if (type_is_error(t)) return ERR;
        if (!type_is_float(t)) {
            diag_error(c->d, arg(e, 0)->span, E_TYPE_MISMATCH, "to_bits takes a float",
                       "to_bits of %s", check_type_text(t));
            return ERR;
        }
        return unsigned_of_width(type_bits(t));
    }
    const Type *t = e->u.call.generics[0];
    if (!type_is_float(t)) {
        diag_error(c->d, e->span, E_TYPE_MISMATCH, "from_bits makes a float: from_bits[f16](u)",
                   "from_bits cannot make %s", check_type_text(t));
        check_args_loosely(c, e);
        return ERR;
    }
    const Type *u =
        check_expr_as(c, arg(e, 0), unsigned_of_width(type_bits(t)), "from_bits's bits");
    return type_is_error(u) ? ERR : t;
}

/* sqrt, abs, floor, ceil, trunc, and std.math: one compute float (abs: or a signed int). */
static const Type *check_math1(Checker *c, Expr *e, Builtin b, const Type *expected, Expr *x) {
    const Type *t = check_expr(c, x, type_is_compute_float(expected) ? expected : NULL);
    if (type_is_error(t)) return ERR;
    if (type_is_compute_float(t) || (b == BI_ABS && type_is_signed(t))) return t;
    if (type_is_storage_float(t)) return check_operator_error(c, e, t, ast_builtin_name(b));
    diag_error(c->d, x->span, E_TYPE_MISMATCH, "widen to f64(x) or f32(x) first",
               "%s takes f32 or f64, found %s", ast_builtin_name(b), check_type_text(t));
    return ERR;
}

/* std.cr.NAME(x): f32 for all ten, f64 for exp and log (runtime/cairn_cr.h); allowed in
 * lanes and on the device, where it gives the host's bits. */
static const Type *check_cr(Checker *c, Expr *e, Builtin b, const Type *expected) {
    const Type *t = check_math1(c, e, b, expected, arg(e, 0));
    if (type_is_error(t) || t->kind == TY_F32 || b == BI_CR_EXP || b == BI_CR_LOG) return t;
    const char *name = ast_builtin_name(b) + strlen("std.cr.");
    diag_error(c->d, arg(e, 0)->span, E_TYPE_MISMATCH,
               arena_printf(c->arena,
                            "std.cr has f64 exp and log only: std.cr.%s(f32(x)), or std.math.%s "
                            "on the host",
                            name, name),
               "std.cr.%s takes f32, found %s", name, check_type_text(t));
    return ERR;
}

static const Type *check_math2(Checker *c, Expr *e, Builtin b, const Type *expected) {
    CheckTypes both = check_pair(c, arg(e, 0), arg(e, 1), expected);
    const Type *lt = both.l, *rt = both.r;
    if (type_is_error(lt) || type_is_error(rt)) return ERR;
    bool ints_ok = b == BI_MIN || b == BI_MAX;
    if (type_is_storage_float(lt) || type_is_storage_float(rt))
        return check_operator_error(c, e, type_is_storage_float(lt) ? lt : rt, ast_builtin_name(b));
    if (!(type_is_compute_float(lt) || (ints_ok && type_is_int(lt))) || !type_equal(lt, rt)) {
        diag_error(c->d, e->span, E_TYPE_MISMATCH, "both arguments have one type (f32 or f64)",
                   "%s of %s and %s", ast_builtin_name(b), check_type_text(lt),
                   check_type_text(rt));
        return ERR;
    }
    return lt;
}

static bool refuse_in_lane(Checker *c, Expr *e, const char *what) {
    if (!check_in_lane(c)) return false;
    diag_error(c->d, e->span, E_PARALLEL_CALL,
               strcmp(what, "observe") == 0
                   ? "observe a lane's values through an array: write each lane's value into "
                     "an rw view (v[i] = ...) and observe(\"v\", v) after the region"
                   : "compute it before the region, or use sqrt, abs, floor, ceil, trunc, min, max",
               "a lane cannot call %s", what);
    check_args_loosely(c, e);
    return true;
}

static const Type *check_observe(Checker *c, Expr *e) {
    if (refuse_in_lane(c, e, "observe")) return ERR;
    Expr *name = arg(e, 0);
    if (name->kind != EXPR_STRING) {
        diag_error(c->d, name->span, E_TYPE_MISMATCH, "observe(\"name\", x)",
                   "an observation's name is a string literal");
        check_expr(c, arg(e, 1), NULL);
        return ERR;
    }
    check_set_type(name, type_scalar(TY_STRING));
    const Type *t = check_expr(c, arg(e, 1), NULL);
    if (type_is_error(t)) return ERR;
    if (!type_is_scalar(t) && !(t->kind == TY_VIEW && t->u.view.extent)) {
        diag_error(c->d, arg(e, 1)->span, E_TYPE_MISMATCH, "observe a scalar or an array",
                   "cannot observe %s", check_type_text(t));
        return ERR;
    }
    return type_scalar(TY_VOID);
}

/* copy(dst, src): every element of src into dst, bits unchanged, whatever either's
 * placement; one element type, equal extents (constant ones compared here, the rest at
 * the call), dst written. Host code only: a lane has no way to reach the other side. */
static const Type *check_copy(Checker *c, Expr *e) {
    if (check_in_lane(c)) {
        diag_error(c->d, e->span, E_PARALLEL_CALL, "copy arrays before or after the region",
                   "a lane cannot call copy");
        check_args_loosely(c, e);
        return ERR;
    }
    Expr *dst = arg(e, 0), *src = arg(e, 1);
    const Type *dt = check_expr(c, dst, NULL), *st = check_expr(c, src, NULL);
    if (type_is_error(dt) || type_is_error(st)) return ERR;
    if (dt->kind != TY_VIEW || !dt->u.view.extent || st->kind != TY_VIEW || !st->u.view.extent) {
        diag_error(c->d, e->span, E_TYPE_MISMATCH,
                   "copy(dst, src) moves a whole array: pass two arrays", "copy of %s into %s",
                   check_type_text(st), check_type_text(dt));
        return ERR;
    }
    if (!type_equal(dt->u.view.elem, st->u.view.elem)) {
        diag_error(c->d, e->span, E_TYPE_MISMATCH,
                   "copy moves bits: convert element by element in a loop",
                   "copy of %s elements into %s elements", check_type_text(st->u.view.elem),
                   check_type_text(dt->u.view.elem));
        return ERR;
    }
    if (dt->u.view.access == ACCESS_RO) {
        diag_error(c->d, dst->span, E_RO_WRITE, "copy into an rw view or a buffer",
                   "copy into a read-only view");
        return ERR;
    }
    int64_t dn, sn;
    if (check_const_int(c, dt->u.view.extent, &dn, 0) &&
        check_const_int(c, st->u.view.extent, &sn, 0) && dn != sn) {
        diag_error(c->d, e->span, E_EXTENT, "copy between arrays of one extent",
                   "copy of %lld elements into %lld", (long long)sn, (long long)dn);
        return ERR;
    }
    return type_scalar(TY_VOID);
}

static const Type *check_atomic(Checker *c, Expr *e, Builtin b) {
    Expr *target = arg(e, 0);
    if (target->kind != EXPR_INDEX) {
        diag_error(c->d, target->span, E_TYPE_MISMATCH,
                   "atomics update an element: atomic_add_wrap(x[i], v)",
                   "%s needs an array element", ast_builtin_name(b));
        check_args_loosely(c, e);
        return ERR;
    }
    bool saved = c->no_record;
    c->no_record = true;
    const Type *t = check_expr(c, target, NULL);
    c->no_record = saved;
    if (!type_is_error(t)) check_region_record_atomic(c, target);
    const Type *vt = check_expr_as(c, arg(e, 1), t, "the atomic's operand");
    const Type *wt =
        b == BI_ATOMIC_CAS ? check_expr_as(c, arg(e, 2), t, "atomic_cas's new value") : vt;
    if (type_is_error(t) || type_is_error(vt) || type_is_error(wt)) return ERR;
    const Type *view = target->u.index.base->type;
    if (view && view->kind == TY_VIEW && view->u.view.access == ACCESS_RO) {
        diag_error(c->d, target->span, E_RO_WRITE, "take the array as rw",
                   "an atomic on a read-only view");
        return ERR;
    }
    bool float_op = b == BI_ATOMIC_ADD_UNORDERED;
    if (float_op ? !type_is_compute_float(t) : !type_is_int(t)) {
        diag_error(c->d, target->span, E_TYPE_MISMATCH,
                   float_op
                       ? "atomic_add_unordered adds f32 or f64; integers use atomic_add_wrap"
                       : "integer atomics take integer elements; floats use atomic_add_unordered",
                   "%s on %s", ast_builtin_name(b), check_type_text(t));
        return ERR;
    }
    return float_op ? type_scalar(TY_VOID) : t;
}

/* ---- tensor cores ---- */

static bool shape_ok(FragFamily fam, int m, int n, int k) {
    if (fam == FRAG_MMA) return m == 16 && n == 8 && k == 16;
    return (m == 16 && n == 16 && k == 16) || (m == 32 && n == 8 && k == 16) ||
           (m == 8 && n == 32 && k == 16);
}

const Type *check_fragment_type(Checker *c, const Type *t, Span span) {
    if (t->kind != TY_FRAGMENT) return t;
    if (t->u.frag.family == FRAG_TMEM) {
        diag_error(c->d, span, E_TARGET_FEATURE, "use WmmaAcc or MmaAcc",
                   "TmemAcc needs tcgen05 tensor memory, which no supported target provides");
        return ERR;
    }
    const Type *el = t->u.frag.elem;
    bool acc = t->u.frag.role == FRAG_ACC;
    if (acc ? el->kind != TY_F32 : (el->kind != TY_F16 && el->kind != TY_BF16)) {
        diag_error(c->d, span, E_FRAGMENT,
                   acc ? "accumulators hold f32" : "operands hold f16 or bf16", "%s cannot hold %s",
                   type_frag_family_name(t->u.frag.family, t->u.frag.role), check_type_text(el));
        return ERR;
    }
    if (!shape_ok(t->u.frag.family, t->u.frag.m, t->u.frag.n, t->u.frag.k)) {
        diag_error(
            c->d, span, E_FRAGMENT,
            t->u.frag.family == FRAG_MMA ? "mma.sync fragments are 16, 8, 16"
                                         : "WMMA fragments are 16, 16, 16; 32, 8, 16; 8, 32, 16",
            "no %s of shape %d x %d x %d", type_frag_family_name(t->u.frag.family, t->u.frag.role),
            t->u.frag.m, t->u.frag.n, t->u.frag.k);
        return ERR;
    }
    return t;
}

/* A fragment operation needs a cooperative region the whole warp reaches. */
static bool warp_op_ok(Checker *c, Expr *e, Expr *const *coords, int ncoords) {
    if (!check_in_coop(c)) {
        diag_error(c->d, e->span, E_FRAGMENT,
                   "fragment operations run inside blocks ... threads ... { }",
                   "a fragment operation outside a cooperative region");
        return false;
    }
    bool uniform = c->region->nonuniform_depth == 0;
    for (int i = 0; i < ncoords; i++) uniform = uniform && check_warp_uniform(c, coords[i]);
    if (!uniform) {
        diag_error(
            c->d, e->span, E_COOP_WARP,
            "keep it where every thread of the warp reaches it with the same coordinates (t / 32 and "
            "t < 32 are warp-uniform, t % 2 and t < 20 are not)",
            "a fragment operation that differs within a warp");
        return false;
    }
    return true;
}

static const Type *check_matrix_mma(Checker *c, Expr *e) {
    const Type *usz = type_scalar(TY_USIZE);
    const char *dims[] = {"m", "n", "k"};
    bool bad = false;
    for (int i = 0; i < 3; i++) bad |= type_is_error(check_expr_as(c, arg(e, i), usz, dims[i]));
    const Type *ct = check_expr(c, arg(e, 3), NULL);
    const Type *at = check_expr(c, arg(e, 4), NULL);
    const Type *bt = check_expr(c, arg(e, 5), NULL);
    if (bad || type_is_error(ct) || type_is_error(at) || type_is_error(bt)) return ERR;
    bool c_ok = ct->kind == TY_VIEW && ct->u.view.extent && ct->u.view.access == ACCESS_RW &&
                ct->u.view.elem->kind == TY_F32;
    if (!c_ok) {
        diag_error(c->d, arg(e, 3)->span, E_MMA, "c is an rw view of f32: c:rw<f32>[cn]",
                   "mma_unordered's c must be an rw view of f32, found %s", check_type_text(ct));
        return ERR;
    }
    bool ab_views =
        at->kind == TY_VIEW && at->u.view.extent && bt->kind == TY_VIEW && bt->u.view.extent;
    if (!ab_views || !type_is_storage_float(at->u.view.elem) ||
        !type_equal(at->u.view.elem, bt->u.view.elem)) {
        diag_error(c->d, e->span, E_MMA,
                   "a and b are views of one storage float (f16, bf16, f8e4m3, f8e5m2)",
                   "mma_unordered's a and b must be views of one storage float, found %s and %s",
                   check_type_text(at), check_type_text(bt));
        return ERR;
    }
    Placement pc = ct->u.view.place, pa = at->u.view.place, pb = bt->u.view.place;
    bool dev = pc == PLACE_DEVICE || pa == PLACE_DEVICE || pb == PLACE_DEVICE;
    bool host = pc == PLACE_HOST || pa == PLACE_HOST || pb == PLACE_HOST;
    if (dev && host) {
        diag_error(c->d, e->span, E_PLACEMENT, "place c, a and b all @device (or all on the host)",
                   "mma_unordered's views live in different memories");
        return ERR;
    }
    if (arg(e, 3)->kind == EXPR_NAME && arg(e, 3)->u.name.sym)
        check_region_record(c, arg(e, 3)->u.name.sym, REC_WRITE | REC_WHOLE, NULL, arg(e, 3)->span);
    return type_scalar(TY_VOID);
}

static bool is_frag(const Type *t, FragRole role) {
    return t && t->kind == TY_FRAGMENT && t->u.frag.role == role;
}

static const Type *check_fragment_mma(Checker *c, Expr *e) {
    const Type *acc = check_expr(c, arg(e, 0), NULL);
    const Type *a = check_expr(c, arg(e, 1), NULL);
    const Type *b = check_expr(c, arg(e, 2), NULL);
    if (type_is_error(acc) || type_is_error(a) || type_is_error(b)) return ERR;
    if (!is_frag(acc, FRAG_ACC) || !is_frag(a, FRAG_A) || !is_frag(b, FRAG_B) ||
        acc->u.frag.family != a->u.frag.family || a->u.frag.family != b->u.frag.family ||
        !type_equal(a->u.frag.elem, b->u.frag.elem) || acc->u.frag.m != a->u.frag.m ||
        acc->u.frag.n != a->u.frag.n || acc->u.frag.k != a->u.frag.k ||
        a->u.frag.m != b->u.frag.m || a->u.frag.n != b->u.frag.n || a->u.frag.k != b->u.frag.k) {
        diag_error(c->d, e->span, E_MMA,
                   "acc = mma_unordered(acc, a, b) with Acc, A and B of one family and shape",
                   "mma_unordered of %s, %s and %s", check_type_text(acc), check_type_text(a),
                   check_type_text(b));
        return ERR;
    }
    if (!warp_op_ok(c, e, NULL, 0)) return ERR;
    return acc;
}

static bool check_tile_args(Checker *c, Expr *e, int first, const Type *frag, bool store) {
    Expr *tile = arg(e, first), *layout = arg(e, first + 1);
    const Type *tt = check_expr(c, tile, NULL);
    const Type *lt = check_expr_as(c, layout, type_scalar(TY_LAYOUT), "a fragment's layout");
    const Type *it = check_expr_as(c, arg(e, first + 2), type_scalar(TY_USIZE), "a fragment row");
    const Type *jt =
        check_expr_as(c, arg(e, first + 3), type_scalar(TY_USIZE), "a fragment column");
    if (type_is_error(tt) || type_is_error(lt) || type_is_error(it) || type_is_error(jt) ||
        type_is_error(frag))
        return false;
    if (tt->kind != TY_VIEW || !tt->u.view.extent ||
        !type_equal(tt->u.view.elem, frag->u.frag.elem)) {
        diag_error(c->d, tile->span, E_FRAGMENT, "the tile holds the fragment's element type",
                   "%s cannot %s %s", check_type_text(frag),
                   store ? "be stored into" : "be loaded from", check_type_text(tt));
        return false;
    }
    if (store && tt->u.view.access == ACCESS_RO) {
        diag_error(c->d, tile->span, E_RO_WRITE, "store into a shared array or an rw view",
                   "mma_store into a read-only view");
        return false;
    }
    if (!layout_check_consumer(c, tile, layout, frag)) return false;
    return warp_op_ok(c, e, &e->u.call.args[first + 2], 2);
}

static const Type *check_mma_access(Checker *c, Expr *e, Builtin b) {
    if (b == BI_MMA_LOAD) {
        const Type *f = check_fragment_type(c, e->u.call.generics[0], e->span);
        if (!check_tile_args(c, e, 0, f, false)) return ERR;
        return f;
    }
    if (b == BI_MMA_STORE) {
        const Type *acc = check_expr(c, arg(e, 4), NULL);
        if (type_is_error(acc)) {
            check_args_loosely(c, e);
            return ERR;
        }
        if (!is_frag(acc, FRAG_ACC)) {
            diag_error(c->d, arg(e, 4)->span, E_FRAGMENT, "mma_store writes an accumulator",
                       "mma_store of %s", check_type_text(acc));
            return ERR;
        }
        if (!check_tile_args(c, e, 0, acc, true)) return ERR;
        return type_scalar(TY_VOID);
    }
    /* mma_get(acc, v) / mma_set(acc, v, x) */
    const Type *acc = check_expr(c, arg(e, 0), NULL);
    const Type *v = check_expr_as(c, arg(e, 1), type_scalar(TY_USIZE), "an accumulator element");
    const Type *x =
        b == BI_MMA_SET ? check_expr_as(c, arg(e, 2), type_scalar(TY_F32), "the new value") : v;
    if (type_is_error(acc) || type_is_error(v) || type_is_error(x)) return ERR;
    if (!is_frag(acc, FRAG_ACC) || acc->u.frag.family != FRAG_MMA) {
        diag_error(c->d, arg(e, 0)->span, E_FRAGMENT,
                   "only an mma.sync accumulator (MmaAcc) says which lane holds which element",
                   "%s of %s", ast_builtin_name(b), check_type_text(acc));
        return ERR;
    }
    if (!warp_op_ok(c, e, NULL, 0)) return ERR;
    return b == BI_MMA_GET ? type_scalar(TY_F32) : acc;
}

/* ---- warp operations: shuffles and wide access ---- */

/* A warp operation sits in a cooperative region where its whole warp reaches it. */
static bool whole_warp(Checker *c, Expr *e) {
    if (!check_in_coop(c)) {
        diag_error(c->d, e->span, E_COOP_REGION,
                   "warp operations run inside blocks ... threads ... { }",
                   "%s outside a cooperative region", ast_builtin_name(e->u.call.builtin));
        return false;
    }
    if (c->region->nonuniform_depth > 0) {
        diag_error(
            c->d, e->span, E_COOP_WARP,
            "reach warp operations with the whole warp (t / 32 and t < 32 are warp-uniform, t % 2 and t < 20 are not)",
            "%s under a condition that differs within a warp", ast_builtin_name(e->u.call.builtin));
        return false;
    }
    return true;
}

/* shuffle(x, lane): x as lane `lane` of this warp holds it; shuffle_xor(x, mask): x
 * as lane (this lane ^ mask) holds it. x is any scalar; the lane a usize below 32
 * (the lowering traps on another). */
static const Type *check_shuffle(Checker *c, Expr *e, Builtin b) {
    const Type *t = check_expr(c, arg(e, 0), NULL);
    const Type *l =
        check_expr_as(c, arg(e, 1), type_scalar(TY_USIZE),
                      b == BI_SHUFFLE ? "shuffle's source lane" : "shuffle_xor's lane mask");
    if (type_is_error(t) || type_is_error(l)) return ERR;
    if (!type_is_scalar(t)) {
        diag_error(c->d, arg(e, 0)->span, E_TYPE_MISMATCH,
                   "a shuffle moves one scalar between lanes", "%s of %s", ast_builtin_name(b),
                   check_type_text(t));
        return ERR;
    }
    return whole_warp(c, e) ? t : ERR;
}

/* load_wide(dst, src, i) / store_wide(dst, src, i): dst[i + k] = src[i + k] for k in
 * 0..K, K = 16 bytes / the element's size, as one 16-byte access on the device: load_wide
 * reads a @device/@unified view (src), store_wide writes one (dst); the other side is any
 * array of the block, usually shared. i is a usize, a multiple of K (the lowering traps
 * otherwise, and on an access past either array). */
static const Type *check_wide(Checker *c, Expr *e, Builtin b) {
    Expr *dst = arg(e, 0), *src = arg(e, 1);
    const Type *dt = check_expr(c, dst, NULL), *st = check_expr(c, src, NULL);
    const Type *it = check_expr_as(c, arg(e, 2), type_scalar(TY_USIZE), "a wide access's offset");
    if (type_is_error(dt) || type_is_error(st) || type_is_error(it)) return ERR;
    if (dt->kind != TY_VIEW || !dt->u.view.extent || st->kind != TY_VIEW || !st->u.view.extent ||
        !type_equal(dt->u.view.elem, st->u.view.elem) || dt->u.view.elem->kind == TY_BOOL) {
        diag_error(c->d, e->span, E_TYPE_MISMATCH,
                   "%s(dst, src, i) moves numbers between two arrays of one element type",
                   "%s from %s into %s", ast_builtin_name(b), check_type_text(st),
                   check_type_text(dt));
        return ERR;
    }
    if (dt->u.view.access == ACCESS_RO) {
        diag_error(c->d, dst->span, E_RO_WRITE, "write into a shared array or an rw view",
                   "%s into a read-only view", ast_builtin_name(b));
        return ERR;
    }
    const Type *global = b == BI_LOAD_WIDE ? st : dt;
    if (global->u.view.origin == VIEW_SHARED) {
        diag_error(c->d, (b == BI_LOAD_WIDE ? src : dst)->span, E_PLACEMENT,
                   b == BI_LOAD_WIDE
                       ? "load_wide reads device memory into the block: load_wide(s, x, i)"
                       : "store_wide writes device memory from the block: store_wide(x, s, i)",
                   "%s on the device side is a shared array", ast_builtin_name(b));
        return ERR;
    }
    if (!whole_warp(c, e)) return ERR;
    check_note_placement(c, dt, dst->span);
    check_note_placement(c, st, src->span);
    return type_scalar(TY_VOID);
}

/* ---- the exact bracket GEMM ---- */

static bool is_enclose_view(const Type *t, const Type *elem) {
    return t->kind == TY_VIEW && t->u.view.extent &&
           (t->u.view.elem->kind == TY_F64 || t->u.view.elem->kind == TY_F32) &&
           type_equal(t->u.view.elem, elem);
}

/* tight = mm_enclose(m, n, k, lo, hi, a, b): four views of one compute float in one
 * memory (all host, or all @device: the GPU's residue algorithm), lo and hi written (so
 * rw, and not one array twice); the runtime pool or the GPU does the work, so a lane
 * cannot call it. Extents are checked at run time (docs/numerics.md). */
static const Type *check_mm_enclose(Checker *c, Expr *e) {
    if (check_in_lane(c)) {
        diag_error(c->d, e->span, E_PARALLEL_NEST, "call mm_enclose before or after the region",
                   "the bracket GEMM inside a lane (it runs on the whole pool)");
        check_args_loosely(c, e);
        return ERR;
    }
    static const char *const what[] = {"mm_enclose's m", "mm_enclose's n", "mm_enclose's k"};
    bool bad = false;
    for (int i = 0; i < 3; i++)
        bad |= type_is_error(check_expr_as(c, arg(e, i), type_scalar(TY_USIZE), what[i]));
    const Type *v[4];
    for (int i = 0; i < 4; i++) bad |= type_is_error(v[i] = check_expr(c, arg(e, 3 + i), NULL));
    if (bad) return ERR;
    const Type *elem = v[2]->kind == TY_VIEW ? v[2]->u.view.elem : v[2];
    if (!is_enclose_view(v[0], elem) || !is_enclose_view(v[1], elem) ||
        !is_enclose_view(v[2], elem) || !is_enclose_view(v[3], elem)) {
        diag_error(
            c->d, e->span, E_TYPE_MISMATCH,
            "lo, hi, a and b are views of f64 (or all of f32): lo:rw<f64>[p], a:ro<f64>[q], ...",
            "mm_enclose of %s, %s, %s and %s", check_type_text(v[0]), check_type_text(v[1]),
            check_type_text(v[2]), check_type_text(v[3]));
        return ERR;
    }
    for (int i = 0; i < 2; i++)
        if (v[i]->u.view.access == ACCESS_RO) {
            diag_error(c->d, arg(e, 3 + i)->span, E_RO_WRITE, "pass an rw view or a buffer",
                       "mm_enclose writes its %s, and this view is read only", i ? "hi" : "lo");
            return ERR;
        }
    Expr *lo = arg(e, 3), *hi = arg(e, 4);
    if (lo->kind == EXPR_NAME && hi->kind == EXPR_NAME && lo->u.name.sym &&
        lo->u.name.sym == hi->u.name.sym) {
        diag_error(c->d, hi->span, E_ALIAS, "pass two arrays: lo gets the floor, hi the ceiling",
                   "'%s' is passed to mm_enclose as both lo and hi", hi->u.name.name);
        return ERR;
    }
    bool dev = false, host = false;
    for (int i = 0; i < 4; i++) {
        dev |= v[i]->u.view.place == PLACE_DEVICE;
        host |= v[i]->u.view.place == PLACE_HOST;
    }
    if (dev && host) {
        diag_error(c->d, e->span, E_PLACEMENT,
                   "place lo, hi, a and b all @device (the GPU runs it) or all on the host",
                   "mm_enclose's views live in different memories");
        return ERR;
    }
    return type_scalar(TY_BOOL);
}

/* ---- layouts ---- */

static const Type *check_layout_call(Checker *c, Expr *e, Builtin b, Expr *receiver) {
    const Type *layout = type_scalar(TY_LAYOUT);
    bool bad = false;
    if (receiver) {
        const Type *rt = check_expr(c, receiver, NULL);
        if (!type_is_error(rt) && rt->kind != TY_LAYOUT) {
            diag_error(c->d, receiver->span, E_TYPE_MISMATCH,
                       "methods like .cosize() belong to layouts", "%s has no method %s",
                       check_type_text(rt), ast_builtin_name(b) + 1);
            bad = true;
        }
        bad |= type_is_error(rt);
    }
    int first_int = (b == BI_LAYOUT_PAD || b == BI_LAYOUT_SWIZZLE || b == BI_LAYOUT_SPREAD) ? 1 : 0;
    if (first_int) bad |= type_is_error(check_expr_as(c, arg(e, 0), layout, "the layout argument"));
    for (int i = first_int; i < e->u.call.nargs; i++)
        bad |=
            type_is_error(check_expr_as(c, arg(e, i), type_scalar(TY_USIZE), "a layout argument"));
    if (bad || !layout_check_rules(c, e, b, receiver)) return ERR;
    return receiver ? type_scalar(TY_USIZE) : layout;
}

/* The rule of ops.def's rule column; a float function that may not run in a lane (its
 * where column) is refused there first. */
const Type *check_builtin(Checker *c, Expr *e, Builtin b, Expr *receiver, const Type *expected) {
    if (!check_arity(c, e, b)) return ERR;
    const OpInfo *op = ast_op(b);
    switch (op->rule) {
    case RULE_ATOMIC: return check_atomic(c, e, b);
    case RULE_QUANTIZE: return check_quantize(c, e, b);
    case RULE_BITS: return check_bits(c, e, b);
    case RULE_FLOAT1:
    case RULE_FLOAT2:
        if (!(op->where & W_LANE) && refuse_in_lane(c, e, ast_builtin_name(b))) return ERR;
        if (op->rule == RULE_FLOAT2) return check_math2(c, e, b, expected);
        return check_math1(c, e, b, expected, arg(e, 0));
    case RULE_CR: return check_cr(c, e, b, expected);
    case RULE_OBSERVE: return check_observe(c, e);
    case RULE_COPY: return check_copy(c, e);
    case RULE_MMA:
        if (check_in_lane(c) && !check_in_coop(c)) {
            diag_error(c->d, e->span, E_PARALLEL_NEST, "call mma_unordered outside the region",
                       "a tensor-core multiply inside a lane");
            check_args_loosely(c, e);
            return ERR;
        }
        return e->u.call.nargs == 6 ? check_matrix_mma(c, e) : check_fragment_mma(c, e);
    case RULE_MMA_ACCESS: return check_mma_access(c, e, b);
    case RULE_ENCLOSE: return check_mm_enclose(c, e);
    case RULE_SHUFFLE: return check_shuffle(c, e, b);
    case RULE_WIDE: return check_wide(c, e, b);
    case RULE_LAYOUT: return check_layout_call(c, e, b, receiver);
    }
    diag_error(c->d, e->span, E_UNSUPPORTED, NULL, "the builtin %s has no rule (internal error)",
               ast_builtin_name(b));
    check_args_loosely(c, e);
    return ERR;
}
