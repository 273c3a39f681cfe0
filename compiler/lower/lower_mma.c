/* lower_mma.c: the tensor-core multiply and layouts, lowered to C (lower_c_expr.c hands
 * them over with one dispatch line, lower_mma_call).
 *
 * mma_unordered(m, n, k, c, a, b) becomes one runtime call (runtime/cairn_mma.h) that
 * checks the extents once and runs: on host views the reference loop (increasing k), on
 * @device views emulated on the host the device tiling warp by warp, and on @device
 * views for a CUDA target the same tiling on the tensor cores (the .cu file includes
 * runtime/cairn_mma_device_cuda.h once). The receipt gets
 * one entry per operand format saying what rounds, the order, the bound, and which
 * instruction a device target uses.
 *
 * A layout method becomes arithmetic on the layout the checker folded (Expr.layout),
 * written as a C constant of cairn_layout: .cosize() and .size() are constants, .at,
 * .row and .col guard their coordinates (a coordinate outside traps) and call the
 * runtime's one offset formula.
 *
 * Fragments: this file evaluates each operation's operands in CAIRN's order and
 * declares its result; the target spells the operation (target_internal.h): where
 * device work is emulated, structs of whole matrices (lower_host.c,
 * runtime/cairn_fragment.h, the reference); on a CUDA target, the lane's registers
 * (lower_cuda.c, runtime/cairn_fragment_cuda.h). */
#include <assert.h>
#include <inttypes.h>

#include "syntax/syntax.h"
#include "lower/lower_mma.h"
#include "lower/target_internal.h"

#define FMT(...) arena_printf(L->arena, __VA_ARGS__)

/* mma_unordered(m, n, k, c, a, b): all views on the host, or all @device (the checker
 * made sure). */
static const char *lower_matrix_mma(Lower *L, Expr *e) {
    StrBuf args = {0};
    for (int i = 0; i < 6; i++) {
        Expr *a = e->u.call.args[i];
        sb_printf(&args, "%s, ", lower_arg(L, a, a->type));
    }
    const Type *view = e->u.call.args[3]->type;
    const Type *t = e->u.call.args[4]->type->u.view.elem;
    bool device =
        view->u.view.place == PLACE_DEVICE || e->u.call.args[4]->type->u.view.place == PLACE_DEVICE;
    for (int i = 3; i < 6; i++) /* E-PLACEMENT: all @device, or all on the host */
        assert(!device || e->u.call.args[i]->type->u.view.place != PLACE_HOST);
    const char *entry = "";
    if (device) entry = L->target->matrix_mma_device(L);
    else lower_use_runtime(L, LOWER_MODULE_MMA);
    lower_emit(L, "cairn_mma_%s%s(%s%s);", entry, lower_type_word(t), args.data,
               lower_at(L, e->span));
    sb_free(&args);
    return NULL;
}

/* ---- layouts ---- */

/* A guard that traps unless v < limit. */
static void guard_below(Lower *L, const char *v, uint64_t limit, const char *what, Span s) {
    lower_emit(L, "if (%s >= UINT64_C(%" PRIu64 ")) cairn_trap_at(\"%s\", %s);", v, limit, what,
               lower_at(L, s));
}

static const char *lower_layout_method(Lower *L, Expr *e) {
    Expr *receiver = e->u.call.callee->u.member.base;
    const Layout *l = receiver->layout;
    assert(l && "the checker folded every layout");
    char lit[512];
    layout_c_literal(l, lit, sizeof lit);
    switch (e->u.call.builtin) {
    case BI_LAYOUT_COSIZE: return FMT("UINT64_C(%" PRIu64 ")", l->cosize);
    case BI_LAYOUT_SIZE: return FMT("UINT64_C(%" PRIu64 ")", l->rows * l->cols);
    default: break;
    }
    const char *x = lower_expr(L, e->u.call.args[0]);
    const char *y = lower_expr(L, e->u.call.args[1]);
    const char *v = lower_new_tmp(L);
    if (e->u.call.builtin == BI_LAYOUT_AT) {
        guard_below(L, x, l->rows, "a layout row past the layout", e->span);
        guard_below(L, y, l->cols, "a layout column past the layout", e->span);
        lower_emit(L, "uint64_t %s = cairn_layout_at(&%s, %s, %s);", v, lit, x, y);
        return v;
    }
    guard_below(L, x, cairn_layout_threads(l), "a thread past the spread", e->span);
    guard_below(L, y, cairn_layout_values(l), "a value past the spread", e->span);
    lower_emit(L, "uint64_t %s = cairn_layout_share(&%s, %s, %s, %d);", v, lit, x, y,
               e->u.call.builtin == BI_LAYOUT_COL);
    return v;
}

/* ---- fragments (the target spells them: lower_host.c, lower_cuda.c) ---- */

/* Rows and columns of the matrix a fragment holds: A is M x K, B is K x N, Acc M x N. */
int lower_frag_rows(const Type *f) { return f->u.frag.role == FRAG_B ? f->u.frag.k : f->u.frag.m; }
int lower_frag_cols(const Type *f) { return f->u.frag.role == FRAG_A ? f->u.frag.k : f->u.frag.n; }

const char *lower_fragment_ctype(const Type *t) {
    int count = lower_frag_rows(t) * lower_frag_cols(t);
    assert(t->kind == TY_FRAGMENT && count > 0 && count <= 512);
    return count <= 128 ? "cairn_frag128" : count <= 256 ? "cairn_frag256" : "cairn_frag512";
}

/* F(x): every element x, an operand's rounded once to its f16 or bf16. */
const char *lower_fragment_fill(Lower *L, Expr *e) {
    const Type *f = e->type;
    if (!L->target->frag_ready(L, f, e->span)) return "0";
    const char *v = lower_expr_out(L, e->u.convert.arg);
    const char *x = lower_new_tmp(L);
    lower_emit(L, "%s %s;", lower_fragment_ctype(f), x);
    L->target->frag_fill(L, f, x, v);
    return x;
}

/* The tile's C arguments, its layout literal, and fragment coordinates i and j. */
static FragTile tile_args(Lower *L, Expr *e) {
    char lit[512];
    FragTile t;
    t.tile = lower_arg(L, e->u.call.args[0], e->u.call.args[0]->type);
    assert(e->u.call.args[1]->layout && "the checker folded every layout");
    layout_c_literal(e->u.call.args[1]->layout, lit, sizeof lit);
    t.layout = arena_strdup(L->arena, lit);
    t.i = lower_expr(L, e->u.call.args[2]);
    t.j = lower_expr(L, e->u.call.args[3]);
    return t;
}

/* The fragment a fragment call works on: its result, or its accumulator argument. */
static const Type *call_fragment(Expr *e) {
    if (e->type && e->type->kind == TY_FRAGMENT) return e->type;
    return e->u.call.args[e->u.call.builtin == BI_MMA_STORE ? 4 : 0]->type;
}

static const char *lower_fragment_load(Lower *L, Expr *e) {
    FragTile t = tile_args(L, e);
    const char *x = lower_new_tmp(L);
    lower_emit(L, "%s %s;", lower_fragment_ctype(e->type), x);
    L->target->frag_load(L, e, x, &t);
    return x;
}

static const char *lower_fragment_store(Lower *L, Expr *e) {
    FragTile t = tile_args(L, e);
    const char *acc = lower_expr(L, e->u.call.args[4]);
    L->target->frag_store(L, e, acc, &t);
    return NULL;
}

static const char *lower_fragment_mma(Lower *L, Expr *e) {
    const Type *acc = e->u.call.args[0]->type;
    const char *c = lower_expr(L, e->u.call.args[0]);
    const char *x = lower_expr(L, e->u.call.args[1]);
    const char *y = lower_expr(L, e->u.call.args[2]);
    const char *r = lower_new_tmp(L);
    lower_emit(L, "%s %s = %s;", lower_fragment_ctype(acc), r, c);
    L->target->frag_mma(L, e, r, x, y);
    return r;
}

/* mma_get(acc, v) / mma_set(acc, v, x): this lane's value v of an mma.sync accumulator. */
static const char *lower_fragment_element(Lower *L, Expr *e) {
    const char *acc = lower_expr(L, e->u.call.args[0]);
    const char *v = lower_expr(L, e->u.call.args[1]);
    const char *index = L->target->frag_index(L, v, e->span);
    const char *r = lower_new_tmp(L);
    if (e->u.call.builtin == BI_MMA_GET) {
        lower_emit(L, "float %s = %s;", r, L->target->frag_get(L, acc, index));
        return r;
    }
    const char *x = lower_expr_out(L, e->u.call.args[2]);
    lower_emit(L, "%s %s = %s;", lower_fragment_ctype(e->type), r, acc);
    L->target->frag_set(L, r, index, x);
    return r;
}

const char *lower_mma_call(Lower *L, Expr *e) {
    Builtin b = e->u.call.builtin;
    if (b == BI_MMA_UNORDERED && e->u.call.nargs == 6) return lower_matrix_mma(L, e);
    if (ast_builtin_is_method(b)) return lower_layout_method(L, e);
    if (ast_op(b)->family == FAM_LAYOUT) return "0"; /* a layout's value is folded */
    if (!L->target->frag_ready(L, call_fragment(e), e->span)) return b == BI_MMA_STORE ? NULL : "0";
    switch (b) {
    case BI_MMA_UNORDERED: return lower_fragment_mma(L, e);
    case BI_MMA_LOAD: return lower_fragment_load(L, e);
    case BI_MMA_STORE: return lower_fragment_store(L, e);
    default: return lower_fragment_element(L, e);
    }
}
