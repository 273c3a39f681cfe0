/* numerics.c: the receipt's `numerics` entries, one per kind of rounding a function
 * performs (docs/tools.md). Lowering calls these as it meets each rounding; identical
 * entries within a function are listed once, in the order first met. A float literal
 * that its type cannot hold exactly is listed too (it is rounded once, at compile
 * time). Exact operations (widenings, f32(h), abs, floor, ceil, trunc, min, max, comparisons, negation, integer
 * arithmetic) round nothing and are not listed. */
#include <assert.h>
#include "lower/lower_c_internal.h"

void numerics_add(Lower *L, cJSON *entry) {
    assert(L->entries && entry);
    cJSON *seen;
    cJSON_ArrayForEach(seen, L->entries) {
        if (cJSON_Compare(seen, entry, 1)) {
            cJSON_Delete(entry);
            return;
        }
    }
    cJSON_AddItemToArray(L->entries, entry);
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

void numerics_arith(Lower *L, const Type *t) {
    numerics_add(L, entry_typed("arith", t, "nearest-even"));
}

void numerics_fn(Lower *L, const char *op, const Type *t, const char *rounding) {
    numerics_add(L, entry_typed(op, t, rounding));
}

/* Significand bits a float type carries (with the implicit bit). */
static int precision(const Type *t) { return t->kind == TY_F32 ? 24 : 53; }

void numerics_convert(Lower *L, const Type *from, const Type *to) {
    if (type_is_int(from) && type_is_compute_float(to)) {
        int bits = type_bits(from) - type_is_signed(from);
        if (bits > precision(to))
            numerics_add(L, entry_from_to("convert", from, to, "nearest-even"));
        return;
    }
    if (type_is_float(from) && type_is_int(to)) {
        cJSON *e = entry_from_to("convert", from, to, "toward-zero");
        cJSON_AddStringToObject(e, "overflow", "trap");
        numerics_add(L, e);
        return;
    }
    bool narrows = (from->kind == TY_F64 && to->kind == TY_F32) ||
                   (type_is_compute_float(from) && type_is_storage_float(to));
    if (!narrows) return;
    cJSON *e = entry_from_to("convert", from, to, "nearest-even");
    cJSON_AddStringToObject(e, "overflow", to->kind == TY_F8E4M3 ? "trap" : "inf");
    numerics_add(L, e);
}

void numerics_quantize(Lower *L, const Type *to, bool stochastic) {
    cJSON *e = entry_from_to("quantize", type_scalar(TY_F32), to,
                             stochastic ? "stochastic" : "nearest-even");
    cJSON_AddBoolToObject(e, "saturate", 1);
    numerics_add(L, e);
}

void numerics_sum(Lower *L, const Type *t, const char *sum) {
    cJSON *e = entry_from_to("sum", t, t, "nearest-even");
    cJSON_AddStringToObject(e, "sum", sum);
    numerics_add(L, e);
}

/* mm_enclose: every output rounded once, lo down and hi up, from the exact sum of
 * products (the entry runtime/cairn_enclose.h's documentation recommends). */
void numerics_matmul(Lower *L, const Type *t) {
    cJSON *e = entry_from_to("matmul", t, t, "outward");
    cJSON_AddStringToObject(e, "sum", "exact");
    numerics_add(L, e);
}

/* A sum or product rounded to nearest, with the order its terms combine in. */
static void numerics_in_order(Lower *L, const char *op, const Type *t, const char *order) {
    cJSON *e = entry_from_to(op, t, t, "nearest-even");
    cJSON_AddStringToObject(e, "order", order);
    numerics_add(L, e);
}

void numerics_product(Lower *L, const Type *t) { numerics_in_order(L, "product", t, "ordered"); }

void numerics_unordered(Lower *L, const char *op, const Type *t) {
    cJSON *e = entry_typed(op, t, "nearest-even");
    cJSON_AddStringToObject(e, "order", "unordered");
    numerics_add(L, e);
}

void numerics_literal(Lower *L, const Type *t) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "op", "literal");
    cJSON_AddStringToObject(e, "to", lower_type_word(t));
    cJSON_AddStringToObject(e, "rounding", "nearest-even");
    numerics_add(L, e);
}

/* atomic_add_unordered: the contract of numerics.md, "Atomic float addition", per memory
 * space. A device f32 add on global memory (and its emulation) flushes subnormal operands
 * and results to zero (PTX atom.global.add.f32), which adds the k * 2^-125 term; on a
 * block's shared memory (atom.shared.add.f32) and on the host it keeps subnormals, so the
 * term is absent. */
void numerics_atomic_add(Lower *L, const Type *t, AtomicSpace space) {
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
    numerics_add(L, e);
}

/* reduce OP warp over floats: the fixed butterfly of lower_device.c, the same bits on
 * the host and the device. */
void numerics_warp(Lower *L, ReduceOp op, const Type *t) {
    if (!type_is_float(t) || (op != RED_ADD && op != RED_MUL)) return;
    numerics_in_order(L, op == RED_ADD ? "sum" : "product", t, "warp-butterfly");
}

/* A device float reduce +: the exact device sum (runtime/cairn_dsum.h), the exact sum of
 * the terms rounded once, whatever order the device combines them in ("exact"), or a
 * fold in an order the device picks ("unordered"). */
void numerics_device_sum(Lower *L, const Type *t, bool exact) {
    numerics_in_order(L, "sum", t, exact ? "exact" : "unordered");
}
