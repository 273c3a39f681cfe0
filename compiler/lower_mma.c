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
 * runtime's one offset formula. */
#include <inttypes.h>
#include <string.h>

#include "layout.h"
#include "lower_mma.h"

#define FMT(...) arena_printf(L->arena, __VA_ARGS__)

/* The device instruction a format's multiply uses on every CUDA target CAIRN lowers to
 * (sm_80 and later): WMMA 16 x 16 x 16 with f32 accumulation. fp8 is widened to f16
 * first (exactly): Ada's and Hopper's fp8 tensor cores keep about 14 bits of the f32
 * accumulation, which breaks the contract's bound, and sm_80 has none. */
static void mma_instruction(cJSON *e, const Type *t) {
    bool bf = t->kind == TY_BF16;   /* PTX spells the f16 form with its f32 types only */
    const char *wmma = bf ? "wmma.mma.sync.aligned.row.row.m16n16k16.f32.bf16.bf16.f32"
                          : "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32";
    cJSON *by = cJSON_AddObjectToObject(e, "instruction");
    cJSON_AddStringToObject(by, "host", "reference loop, increasing k");
    static const char *const targets[] = {"sm_80", "sm_89", "sm_90", "sm_120"};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) cJSON_AddStringToObject(by, targets[i], wmma);
    if (t->kind == TY_F8E4M3 || t->kind == TY_F8E5M2)
        cJSON_AddStringToObject(e, "widen", "to f16 (exact) before the f16 instruction");
}

static void numerics_mma(Lower *L, const Type *t) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "op", "mma");
    cJSON_AddStringToObject(e, "from", type_word(t));
    cJSON_AddStringToObject(e, "to", "f32");
    cJSON_AddStringToObject(e, "rounding", "nearest-even");
    cJSON_AddStringToObject(e, "order", "unordered");
    cJSON_AddStringToObject(e, "products", "exact");
    cJSON_AddStringToObject(e, "emulated_order", "increasing k");
    cJSON_AddStringToObject(e, "bound", "(k + 1) * 2^-22 * (|c| + sum |a b|)");
    mma_instruction(e, t);
    numerics_add(L, e);
}

/* mma_unordered(m, n, k, c, a, b): all views on the host, or all @device (the checker
 * made sure). */
static const char *lower_matrix_mma(Lower *L, Expr *e) {
    strbuf args = {0};
    for (int i = 0; i < 6; i++) {
        Expr *a = e->u.call.args[i];
        sb_printf(&args, "%s, ", lower_arg(L, a, a->type));
    }
    const Type *view = e->u.call.args[3]->type;
    const Type *t = e->u.call.args[4]->type->u.view.elem;
    bool device = view->u.view.place == PLACE_DEVICE || e->u.call.args[4]->type->u.view.place == PLACE_DEVICE;
    const char *entry = !device ? "" : L->cuda ? "device_" : "tiled_";
    if (device && L->cuda && !strstr(L->dev.data ? L->dev.data : "", "cairn_mma_device_cuda.h"))
        sb_puts(&L->dev, "#include \"cairn_mma_device_cuda.h\"   /* mma_unordered's tiling */\n\n");
    numerics_mma(L, t);
    emit(L, "cairn_mma_%s%s(%s%s);", entry, type_word(t), args.data, at(L, e->span));
    sb_free(&args);
    return NULL;
}

/* ---- layouts ---- */

/* A guard that traps unless v < limit. */
static void guard_below(Lower *L, const char *v, uint64_t limit, const char *what, Span s) {
    emit(L, "if (%s >= UINT64_C(%" PRIu64 ")) cairn_trap_at(\"%s\", %s);", v, limit, what, at(L, s));
}

static const char *lower_layout_method(Lower *L, Expr *e) {
    Expr *receiver = e->u.call.callee->u.member.base;
    const Layout *l = receiver->layout;
    char lit[512];
    layout_c_literal(l, lit, sizeof lit);
    switch (e->u.call.builtin) {
    case BI_LAYOUT_COSIZE: return FMT("UINT64_C(%" PRIu64 ")", l->cosize);
    case BI_LAYOUT_SIZE: return FMT("UINT64_C(%" PRIu64 ")", l->rows * l->cols);
    default: break;
    }
    const char *x = lower_expr(L, e->u.call.args[0]);
    const char *y = lower_expr(L, e->u.call.args[1]);
    const char *v = new_tmp(L);
    if (e->u.call.builtin == BI_LAYOUT_AT) {
        guard_below(L, x, l->rows, "a layout row past the layout", e->span);
        guard_below(L, y, l->cols, "a layout column past the layout", e->span);
        emit(L, "uint64_t %s = cairn_layout_at(&%s, %s, %s);", v, lit, x, y);
        return v;
    }
    guard_below(L, x, cairn_layout_threads(l), "a thread past the spread", e->span);
    guard_below(L, y, cairn_layout_values(l), "a value past the spread", e->span);
    emit(L, "uint64_t %s = cairn_layout_share(&%s, %s, %s, %d);", v, lit, x, y,
         e->u.call.builtin == BI_LAYOUT_COL);
    return v;
}

const char *lower_mma_call(Lower *L, Expr *e) {
    switch (e->u.call.builtin) {
    case BI_MMA_UNORDERED:
        if (e->u.call.nargs == 6) return lower_matrix_mma(L, e);
        break;
    case BI_LAYOUT_COSIZE: case BI_LAYOUT_SIZE: case BI_LAYOUT_AT: case BI_LAYOUT_ROW: case BI_LAYOUT_COL:
        return lower_layout_method(L, e);
    default:
        break;
    }
    unsupported(L, e->span, "tensor-core fragments");
    return NULL;
}
