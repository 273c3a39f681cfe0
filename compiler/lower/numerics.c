/* numerics.c: the receipt's `numerics` entries, one per kind of rounding a function
 * performs (docs/tools.md), serialized from the typed entries the checker recorded on
 * its item (check/check.h, check/check_facts.c): identical entries within a function
 * are listed once, in the order the code performs them. A float literal that its type
 * cannot hold exactly is listed too (it is rounded once, at compile time). Exact
 * operations (widenings, f32(h), abs, floor, ceil, trunc, min, max, comparisons,
 * negation, integer arithmetic) round nothing and are not listed. */
#include <assert.h>
#include "lower/lower_c_internal.h"

static void numerics_add(cJSON *entries, cJSON *entry) {
    assert(entries && entry);
    cJSON *seen;
    cJSON_ArrayForEach(seen, entries) {
        if (cJSON_Compare(seen, entry, 1)) {
            cJSON_Delete(entry);
            return;
        }
    }
    cJSON_AddItemToArray(entries, entry);
}

static cJSON *entry_from_to(const char *op, const Type *from, const Type *to,
                            const char *rounding) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "op", op);
    cJSON_AddStringToObject(e, "from", lower_type_word(from));
    cJSON_AddStringToObject(e, "to", lower_type_word(to));
    cJSON_AddStringToObject(e, "rounding", rounding);
    return e;
}

static cJSON *entry_typed(const char *op, const Type *t, const char *rounding) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "op", op);
    cJSON_AddStringToObject(e, "type", lower_type_word(t));
    cJSON_AddStringToObject(e, "rounding", rounding);
    return e;
}

static void numerics_arith(cJSON *entries, const Type *t) {
    numerics_add(entries, entry_typed("arith", t, "nearest-even"));
}

static void numerics_fn(cJSON *entries, const char *op, const Type *t, const char *rounding) {
    numerics_add(entries, entry_typed(op, t, rounding));
}

/* Significand bits a float type carries (with the implicit bit). */
static int precision(const Type *t) { return t->kind == TY_F32 ? 24 : 53; }

static void numerics_convert(cJSON *entries, const Type *from, const Type *to) {
    if (type_is_int(from) && type_is_compute_float(to)) {
        int bits = type_bits(from) - type_is_signed(from);
        if (bits > precision(to))
            numerics_add(entries, entry_from_to("convert", from, to, "nearest-even"));
        return;
    }
    if (type_is_float(from) && type_is_int(to)) {
        cJSON *e = entry_from_to("convert", from, to, "toward-zero");
        cJSON_AddStringToObject(e, "overflow", "trap");
        numerics_add(entries, e);
        return;
    }
    bool narrows = (from->kind == TY_F64 && to->kind == TY_F32) ||
                   (type_is_compute_float(from) && type_is_storage_float(to));
    if (!narrows) return;
    cJSON *e = entry_from_to("convert", from, to, "nearest-even");
    cJSON_AddStringToObject(e, "overflow", to->kind == TY_F8E4M3 ? "trap" : "inf");
    numerics_add(entries, e);
}

static void numerics_quantize(cJSON *entries, const Type *to, bool stochastic) {
    cJSON *e = entry_from_to("quantize", type_scalar(TY_F32), to,
                             stochastic ? "stochastic" : "nearest-even");
    cJSON_AddBoolToObject(e, "saturate", 1);
    numerics_add(entries, e);
}

static void numerics_sum(cJSON *entries, const Type *t, const char *sum) {
    cJSON *e = entry_from_to("sum", t, t, "nearest-even");
    cJSON_AddStringToObject(e, "sum", sum);
    numerics_add(entries, e);
}

/* mm_enclose: every output rounded once, lo down and hi up, from the exact sum of
 * products (the entry runtime/cairn_enclose.h's documentation recommends). */
static void numerics_matmul(cJSON *entries, const Type *t) {
    cJSON *e = entry_from_to("matmul", t, t, "outward");
    cJSON_AddStringToObject(e, "sum", "exact");
    numerics_add(entries, e);
}

/* A sum or product rounded to nearest, with the order its terms combine in. */
static void numerics_in_order(cJSON *entries, const char *op, const Type *t, const char *order) {
    cJSON *e = entry_from_to(op, t, t, "nearest-even");
    cJSON_AddStringToObject(e, "order", order);
    numerics_add(entries, e);
}

static void numerics_product(cJSON *entries, const Type *t) {
    numerics_in_order(entries, "product", t, "ordered");
}

static void numerics_literal(cJSON *entries, const Type *t) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "op", "literal");
    cJSON_AddStringToObject(e, "to", lower_type_word(t));
    cJSON_AddStringToObject(e, "rounding", "nearest-even");
    numerics_add(entries, e);
}

/* atomic_add_unordered: the contract of numerics.md, "Atomic float addition", per memory
 * space. A device f32 add on global memory (and its emulation) flushes subnormal operands
 * and results to zero (PTX atom.global.add.f32), which adds the k * 2^-125 term; on a
 * block's shared memory (atom.shared.add.f32) and on the host it keeps subnormals, so the
 * term is absent. */
static void numerics_atomic_add(cJSON *entries, const Type *t, AtomicSpace space) {
    static const char *names[] = {
        [ATOMIC_HOST] = "host", [ATOMIC_GLOBAL] = "global", [ATOMIC_SHARED] = "shared"};
    bool f32 = t->kind == TY_F32, flush = space == ATOMIC_GLOBAL;
    cJSON *e = entry_typed("atomic_add", t, "nearest-even");
    cJSON_AddStringToObject(e, "order", "unordered");
    cJSON_AddStringToObject(e, "space", names[space]);
    cJSON_AddBoolToObject(e, "flush_subnormals", f32 && flush);
    cJSON_AddStringToObject(e, "bound",
                            !f32    ? "k * 2^-52 * (|old| + sum |v|)"
                            : flush ? "k * 2^-23 * (|old| + sum |v|) + k * 2^-125"
                                    : "k * 2^-23 * (|old| + sum |v|)");
    numerics_add(entries, e);
}

/* reduce OP warp over floats: the fixed butterfly of lower_device.c, the same bits on
 * the host and the device. */
static void numerics_warp(cJSON *entries, ReduceOp op, const Type *t) {
    if (!type_is_float(t) || (op != RED_ADD && op != RED_MUL)) return;
    numerics_in_order(entries, op == RED_ADD ? "sum" : "product", t, "warp-butterfly");
}

/* A device float reduce +: the exact device sum (runtime/cairn_dsum.h), the exact sum of
 * the terms rounded once, whatever order the device combines them in ("exact"), or a
 * fold in an order the device picks ("unordered"). */
static void numerics_device_sum(cJSON *entries, const Type *t, bool exact) {
    numerics_in_order(entries, "sum", t, exact ? "exact" : "unordered");
}

/* The device instruction a format's multiply uses on every CUDA target CAIRN lowers to
 * (sm_80 and later): WMMA 16 x 16 x 16 with f32 accumulation. fp8 is widened to f16
 * first (exactly): Ada's and Hopper's fp8 tensor cores keep about 14 bits of the f32
 * accumulation, which breaks the contract's bound, and sm_80 has none. */
static void mma_instruction(cJSON *e, const Type *t, bool mma_sync) {
    bool bf = t->kind == TY_BF16; /* PTX spells the f16 WMMA form with its f32 types only */
    const char *wmma = mma_sync ? (bf ? "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
                                      : "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
                       : bf     ? "wmma.mma.sync.aligned.row.row.m16n16k16.f32.bf16.bf16.f32"
                                : "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32";
    cJSON *by = cJSON_AddObjectToObject(e, "instruction");
    cJSON_AddStringToObject(by, "host", "reference loop, increasing k");
    static const char *const targets[] = {"sm_80", "sm_89", "sm_90", "sm_120"};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        cJSON_AddStringToObject(by, targets[i], wmma);
    if (t->kind == TY_F8E4M3 || t->kind == TY_F8E5M2)
        cJSON_AddStringToObject(e, "widen", "to f16 (exact) before the f16 instruction");
}

static void numerics_mma(cJSON *entries, const Type *t, bool mma_sync) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "op", "mma");
    cJSON_AddStringToObject(e, "from", lower_type_word(t));
    cJSON_AddStringToObject(e, "to", "f32");
    cJSON_AddStringToObject(e, "rounding", "nearest-even");
    cJSON_AddStringToObject(e, "order", "unordered");
    cJSON_AddStringToObject(e, "products", "exact");
    cJSON_AddStringToObject(e, "emulated_order", "increasing k");
    cJSON_AddStringToObject(e, "bound", "(k + 1) * 2^-22 * (|c| + sum |a b|)");
    mma_instruction(e, t, mma_sync);
    numerics_add(entries, e);
}

/* ---- the checker's entries (check/check.h) as the receipt's ---- */

static void serialize_convert(cJSON *entries, const CheckRounding *r) {
    const Type *from = r->from, *to = r->type;
    if (to->kind == TY_FRAGMENT) { /* a fill: each element rounded once from f32 */
        if (to->u.frag.elem->kind != TY_F32)
            numerics_convert(entries, type_scalar(TY_F32), to->u.frag.elem);
        return;
    }
    if (type_is_storage_float(from)) { /* widened exactly, then converted from f32 */
        if (to->kind != TY_F64 && to->kind != TY_F32)
            numerics_convert(entries, type_scalar(TY_F32), to);
        return;
    }
    if (from->kind != to->kind) numerics_convert(entries, from, to);
}

static void serialize_builtin(cJSON *entries, const CheckRounding *r) {
    const OpInfo *op = ast_op(r->builtin);
    if (op->family == FAM_STORAGE)
        numerics_quantize(entries, r->type, op->rounding == RND_STOCHASTIC);
    else if (op->family == FAM_ENCLOSE) numerics_matmul(entries, r->type);
    else if (r->builtin == BI_ATOMIC_ADD_UNORDERED)
        numerics_atomic_add(entries, r->from,
                            !r->in_device ? ATOMIC_HOST
                            : r->shared   ? ATOMIC_SHARED
                                          : ATOMIC_GLOBAL);
    else if (r->builtin == BI_MMA_UNORDERED) numerics_mma(entries, r->from, r->mma_sync);
    else if (type_is_compute_float(r->type) &&
             (op->rule == RULE_FLOAT1 || op->rule == RULE_FLOAT2 || op->rule == RULE_CR)) {
        const char *rounding = ast_rounding_receipt(op->rounding); /* its ROUNDING row */
        if (rounding) numerics_fn(entries, op->spelling, r->type, rounding);
    }
}

static void serialize_reduce(cJSON *entries, const CheckRounding *r) {
    if (r->mode == MODE_WARP) {
        if (!r->scan) numerics_warp(entries, r->op, r->type);
    } else if (r->scan && r->on_device) {
        return; /* a device scan is an integer's */
    } else if (r->mode == MODE_FOR || r->scan) {
        if (r->op == RED_ADD) numerics_sum(entries, r->type, "ordered");
        else numerics_product(entries, r->type);
    } else if (r->op == RED_ADD) {
        if (r->on_device) numerics_device_sum(entries, r->type, true);
        else numerics_sum(entries, r->type, "exact");
    }
}

void numerics_serialize(cJSON *entries, const CheckFacts *f) {
    for (int i = 0; i < f->nroundings; i++) {
        const CheckRounding *r = &f->roundings[i];
        switch (r->kind) {
        case ROUND_LITERAL: numerics_literal(entries, r->type); break;
        case ROUND_ARITH: numerics_arith(entries, r->type); break;
        case ROUND_CONVERT: serialize_convert(entries, r); break;
        case ROUND_BUILTIN: serialize_builtin(entries, r); break;
        case ROUND_REDUCE: serialize_reduce(entries, r); break;
        }
    }
}
