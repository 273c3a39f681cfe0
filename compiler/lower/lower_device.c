/* lower_device.c: what the two lowerings of device work share (lower_emulate.c runs it
 * on host threads, lower_cuda.c on a GPU), so both keep one definition of each rule.
 *
 * Phase boundaries. A cooperative region's threads meet at every `barrier` and at every
 * warp operation (`reduce OP warp`, `shuffle`, `shuffle_xor`: a lane needs the values of
 * the other lanes of its warp). stmt_syncs says whether a statement holds one; the
 * emulation cuts the region's body at them into phases (lower_emulate.c). The checker
 * allows them only at the top of the body or inside `for` loops and `if`s whose bounds
 * and conditions every thread of the block shares (docs/devices.md).
 *
 * The warp butterfly. Every warp operation that combines runs one fixed butterfly: for
 * o = 16, 8, 4, 2, 1 each lane l takes v[l & ~o] OP v[l | o] (the lower lane's value on
 * the left), so after five steps every lane holds the same bits, on the host and on the
 * device (where lane l reads its partner's value with __shfl_xor_sync(o)). The pieces
 * here are the kept type (warp_acc_type), one step (warp_step) and the total
 * (warp_total): a checked integer + adds in a type twice as wide, where 32 terms cannot
 * overflow, and checks the total once, so it traps exactly when the total does not fit,
 * as the spec demands of every device integer reduction. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "lower/lower_c_internal.h"
#include "lower/target_internal.h"

#define FMT(...) arena_printf(L->arena, __VA_ARGS__)

bool lower_is_warp_op(const Expr *e) {
    if (e->kind == EXPR_REDUCE) return e->u.reduce.mode == MODE_WARP;
    return e->kind == EXPR_CALL &&
           (e->u.call.builtin == BI_SHUFFLE || e->u.call.builtin == BI_SHUFFLE_XOR);
}

typedef struct WarpFind {
    const Expr **out;
    int max, len;
} WarpFind;

static void note_warp(Expr *e, void *ctx) {
    WarpFind *f = ctx;
    if (!lower_is_warp_op(e)) return;
    if (f->len < f->max) f->out[f->len] = e;
    f->len++;
}

static void find_in(const Expr *e, WarpFind *f) {
    if (e) ast_visit_expr((Expr *)e, note_warp, f);
}

int lower_warp_ops_of(const Stmt *s, const Expr **out, int max) {
    assert(max >= 0 && (out || max == 0));
    WarpFind f = {out, max, 0};
    switch (s->kind) {
    case STMT_LET: find_in(s->u.let.init, &f); break;
    case STMT_ASSIGN: /* the value is evaluated before the place (lower_assign) */
        find_in(s->u.assign.value, &f);
        find_in(s->u.assign.target, &f);
        break;
    case STMT_EXPR: find_in(s->u.expr, &f); break;
    case STMT_RETURN: find_in(s->u.ret.value, &f); break;
    case STMT_IF: find_in(s->u.if_.cond, &f); break;
    case STMT_FOR:
        find_in(s->u.for_.b.lo, &f);
        find_in(s->u.for_.b.count, &f);
        break;
    default: break;
    }
    return f.len;
}

static bool block_syncs(const Block *b) {
    for (int i = 0; i < b->nstmts; i++)
        if (lower_stmt_syncs(b->stmts[i])) return true;
    return false;
}

bool lower_stmt_syncs(const Stmt *s) {
    const Expr *none[1];
    if (s->kind == STMT_BARRIER || lower_warp_ops_of(s, none, 0) > 0) return true;
    switch (s->kind) {
    case STMT_IF:
        return block_syncs(s->u.if_.then) || (s->u.if_.els && lower_stmt_syncs(s->u.if_.els));
    case STMT_FOR: return block_syncs(s->u.for_.body);
    case STMT_BLOCK: return block_syncs(s->u.block);
    default: return false;
    }
}

/* The type a reduction or scan combines (a scan's own type is void). */
static const Type *combined_type(const Expr *e) {
    return e->u.reduce.scan ? e->u.reduce.body->type : e->type;
}

static bool wide_add(const Expr *e) {
    return e->kind == EXPR_REDUCE && e->u.reduce.op == RED_ADD && type_is_int(combined_type(e));
}

const char *lower_warp_acc_type(ReduceOp op, const Type *t) {
    if (op != RED_ADD || !type_is_int(t)) return lower_c_scalar(t);
    if (type_bits(t) <= 32) return type_is_signed(t) ? "int64_t" : "uint64_t";
    return type_is_signed(t) ? "__int128" : "unsigned __int128";
}

const char *lower_warp_step(Lower *L, const Expr *e, const char *lo, const char *hi) {
    if (wide_add(e)) return FMT("%s + %s", lo, hi);
    return lower_combine(L, e->u.reduce.op, combined_type(e), lo, hi, e->span);
}

const char *lower_warp_total(Lower *L, const Expr *e, const char *acc) {
    if (!wide_add(e)) return acc;
    const char *t = lower_c_scalar(combined_type(e)),
               *w = lower_warp_acc_type(RED_ADD, combined_type(e));
    lower_emit(L, "if ((%s)(%s)%s != %s) cairn__trap_sum_%c(%s, \"%s\", %s);", w, t, acc, acc,
               type_is_signed(combined_type(e)) ? 's' : 'u', acc, lower_type_word(combined_type(e)),
               lower_at(L, e->span));
    return FMT("(%s)%s", t, acc);
}

/* The lane a shuffle reads, from this lane's `lane` and its argument (both sides). */
const char *lower_shuffle_source(Lower *L, const Expr *e, const char *lane, const char *arg) {
    assert(e->kind == EXPR_CALL &&
           (e->u.call.builtin == BI_SHUFFLE || e->u.call.builtin == BI_SHUFFLE_XOR));
    if (e->u.call.builtin == BI_SHUFFLE) return FMT("(unsigned)((uint64_t)%s & 31u)", arg);
    return FMT("(unsigned)((%s ^ (uint64_t)%s) & 31u)", lane, arg);
}

const Type *lower_binder_type(const Binder *b) { return b->sym ? b->sym->type : b->count->type; }

static void has_warp(Expr *e, void *ctx) {
    if (lower_is_warp_op(e)) *(bool *)ctx = true;
}

static bool block_has_warp_ops(const Block *b) {
    bool found = false;
    ast_visit_exprs((Block *)b, has_warp, &found);
    return found;
}

/* The most shared memory one block may use, per architecture, with the opt-in above
 * 48 KiB (CUDA C++ Programming Guide, "Compute Capabilities": 64 KB on 7.5, 163 KB on 8.0
 * and 8.7, 99 KB on 8.6, 8.9 and 12.x, 227 KB on 9.0 and 10.x). An architecture not
 * listed: 48 KiB, which every device allows. A host build emulates sm_90. */
DeviceLimits lower_device_limits(const char *target) {
    static const struct {
        int arch;
        uint64_t kib;
    } table[] = {{75, 64},   {80, 163},  {86, 99},   {87, 163}, {89, 99}, {90, 227},
                 {100, 227}, {101, 227}, {103, 227}, {120, 99}, {121, 99}};
    if (!target || strcmp(target, "host") == 0) target = "sm_90";
    int arch = strncmp(target, "sm_", 3) == 0 ? atoi(target + 3) : 0;
    DeviceLimits d = {target, 48 * 1024};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].arch == arch) d.shared_bytes = table[i].kib * 1024;
    return d;
}

void lower_lane_limit(Lower *L, const char *n, Span s) {
    lower_emit(L,
               "if (%s > (uint64_t)0x7fffffff * 256) cairn_trap_at(\"too many lanes for one "
               "device launch\", %s);",
               n, lower_at(L, s));
}

/* The shared arrays' lengths, each checked, and their total bytes against the target's
 * limit, before the launch (the same trap on both sides). */
static void shared_layout(Lower *L, const Block *body, BlocksBounds *b) {
    const char *total = lower_new_tmp(L);
    lower_emit(L, "uint64_t %s = 0;", total);
    lower_emit(L, "(void)%s;", total);
    const char *why = FMT("shared arrays past a block's shared memory (%llu KiB on %s)",
                          (unsigned long long)(L->device.shared_bytes / 1024), L->device.name);
    for (int i = 0; i < body->nstmts; i++) {
        const Stmt *s = body->stmts[i];
        if (s->kind != STMT_SHARED) continue;
        if (b->nshared == LOWER_MAX_SHARED) {
            lower_unsupported(L, s->span, "this many shared arrays in one region");
            return;
        }
        const char *n = lower_new_tmp(L), *t = lower_c_scalar(s->u.alloc.elem);
        lower_emit(L, "const uint64_t %s = %s;", n, lower_expr(L, s->u.alloc.count));
        lower_emit(L, "if (%s > (UINT64_C(%llu) - %s) / sizeof(%s)) cairn_trap_at(\"%s\", %s);", n,
                   (unsigned long long)L->device.shared_bytes, total, t, why, lower_at(L, s->span));
        lower_emit(L, "%s += (%s * sizeof(%s) + 31) & ~(uint64_t)31;", total, n, t);
        b->shared[b->nshared] = s;
        b->shared_n[b->nshared++] = n;
    }
    b->smem = total;
}

/* Whole warps: a region with a warp operation needs a thread count that is a multiple
 * of 32, checked where the region starts on either side (docs/devices.md), as are the
 * launch's limits: at most 1024 threads a block, 2^31 - 1 blocks, and the target's
 * shared memory. */
void lower_blocks(Lower *L, const Stmt *s) {
    assert(s->kind == STMT_BLOCKS);
    L->has_device = true;
    const Binder *g = &s->u.blocks.grid, *th = &s->u.blocks.threads;
    BlocksBounds b = {.grid_type = lower_binder_type(g),
                      .thread_type = lower_binder_type(th),
                      .grid_lo = g->lo ? lower_expr(L, g->lo) : "0",
                      .thread_lo = th->lo ? lower_expr(L, th->lo) : "0"};
    b.nblocks = lower_index_count(L, b.grid_lo, lower_expr(L, g->count));
    b.nthreads = lower_index_count(L, b.thread_lo, lower_expr(L, th->count));
    lower_emit(L, "if (%s > 1024) cairn_trap_at(\"a block of more than 1024 threads\", %s);",
               b.nthreads, lower_at(L, th->count->span));
    lower_emit(
        L, "if (%s > 0x7fffffff) cairn_trap_at(\"more blocks than one device launch holds\", %s);",
        b.nblocks, lower_at(L, g->count->span));
    if (block_has_warp_ops(s->u.blocks.body))
        lower_emit(
            L,
            "if (%s %% 32 != 0) cairn_trap_at(\"a warp operation needs whole warps: give the "
            "block a multiple of 32 threads\", %s);",
            b.nthreads, lower_at(L, th->count->span));
    shared_layout(L, s->u.blocks.body, &b);
    L->target->blocks(L, s, &b);
}

/* copy(dst, src): the extents checked, then every element's bits (cairn_device.h does
 * both: memcpy on the host, cudaMemcpy in a CUDA build). */
void lower_copy(Lower *L, Expr *e) {
    const Symbol *dst = lower_expr_sym(e->u.call.args[0]), *src = lower_expr_sym(e->u.call.args[1]);
    if (!dst || !src || !lower_is_view(dst->type) || !lower_is_view(src->type)) {
        lower_unsupported(L, e->span, "copy of anything but views by name");
        return;
    }
    lower_use_runtime(L, L->target->copy_modules);
    const char *elem = lower_c_scalar(dst->type->u.view.elem);
    lower_emit(L, "cairn_copy(%s, %s, %s, %s, sizeof(%s), %s);", lower_sym_c(L, dst),
               lower_sym_len(L, dst), lower_sym_c(L, src), lower_sym_len(L, src), elem,
               lower_at(L, e->span));
}

/* load_wide(dst, src, i) / store_wide(dst, src, i): dst[i + k] = src[i + k] for the K
 * elements of 16 bytes, i a multiple of K and both ranges inside their arrays (traps
 * otherwise, on both sides alike). A CUDA lane moves them as one 16-byte access (both
 * arrays are 16-byte aligned: cudaMalloc'd, or a shared array at a 16-byte offset); the
 * host makes K plain accesses, which move the same bytes. */
void lower_wide(Lower *L, Expr *e) {
    const Symbol *dst = lower_expr_sym(e->u.call.args[0]), *src = lower_expr_sym(e->u.call.args[1]);
    if (!dst || !src || !lower_is_view(dst->type) || !lower_is_view(src->type)) {
        lower_unsupported(L, e->span, "a wide access to anything but arrays by name");
        return;
    }
    const char *i = lower_expr(L, e->u.call.args[2]);
    /* the checker: one numeric element type on both sides (8 to 64 bits) */
    assert(type_equal(dst->type->u.view.elem, src->type->u.view.elem));
    assert(type_bits(dst->type->u.view.elem) >= 8 && 128 % type_bits(dst->type->u.view.elem) == 0);
    int k = 16 / (type_bits(dst->type->u.view.elem) / 8);
    const char *where = lower_at(L, e->span), *d = lower_sym_c(L, dst), *s = lower_sym_c(L, src);
    lower_emit(
        L,
        "if (%s %% %d != 0) cairn_trap_at(\"a wide access at an offset that is not a multiple "
        "of %d\", %s);",
        i, k, k, where);
    lower_emit(
        L,
        "if (%s > %s || %s - %s < %d || %s > %s || %s - %s < %d) cairn_trap_at(\"index out of "
        "bounds\", %s);",
        i, lower_sym_len(L, dst), lower_sym_len(L, dst), i, k, i, lower_sym_len(L, src),
        lower_sym_len(L, src), i, k, where);
    if (L->in_device) L->target->device_wide(L, d, s, i, k);
    else lower_wide_elements(L, d, s, i, k);
}

void lower_wide_elements(Lower *L, const char *dst, const char *src, const char *i, int k) {
    lower_emit(L, "for (unsigned k = 0; k < %d; k++) %s[%s + k] = %s[%s + k];", k, dst, i, src, i);
}

/* scan OP warp: lane l's prefix combines lanes 0..l in that order on both sides (every
 * operator allowed is an integer one: E-SCAN-ORDER refuses floats), a checked + in the
 * wide type with each prefix checked, so both sides trap alike. */
void lower_warp_scan_store(Lower *L, const Expr *e, const char *lane, const char *lane_j) {
    const Type *t = combined_type(e);
    assert(e->kind == EXPR_REDUCE && e->u.reduce.scan && type_is_int(t)); /* E-SCAN-ORDER */
    const char *w = lower_warp_acc_type(e->u.reduce.op, t), *acc = lower_new_tmp(L);
    lower_emit(L, "%s %s = %s;", w, acc, lower_identity(L, e->u.reduce.op, t));
    lower_emit(L, "for (unsigned j = 0; j < 32; j++) {");
    L->indent++;
    const char *v = lower_new_tmp(L);
    lower_emit(L, "const %s %s = (%s)%s;", w, v, w, lane_j);
    lower_emit(L, "if (j <= %s) %s = %s;", lane, acc, lower_warp_step(L, e, acc, v));
    L->indent--;
    lower_emit(L, "}");
    const char *total = lower_warp_total(L, e, acc);
    const Symbol *out = lower_expr_sym(e->u.reduce.into);
    const Symbol *thread = L->coop_thread;
    if (!out || !lower_is_view(out->type) || !thread) {
        lower_unsupported(L, e->span, "a warp scan into anything but a view by name");
        return;
    }
    lower_emit(L, "%s[cairn_index_u((uint64_t)%s, %s, %s)] = %s;", lower_sym_c(L, out),
               lower_sym_c(L, thread), lower_sym_len(L, out), lower_at(L, e->u.reduce.into->span),
               total);
}
