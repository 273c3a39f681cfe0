/* lower_host.c: the host target (`--target host`, and `--emulate` for a GPU target):
 * lower_target_host, the table of its choices (target_internal.h).
 *
 * Everything runs on the host CPU and every placement is host memory: buffers are
 * calloc'ed whatever their placement, observe reads them where they are, and copy is a
 * memcpy. Device work is emulated on host threads (lower_emulate.c): a device parallel
 * region runs on the host pool like any other, blocks run phase by phase, warp
 * operations combine per-thread arrays, and a device float reduce + adds in index order.
 * Tensor-core fragments are structs holding their whole matrix
 * (runtime/cairn_fragment.h, the reference every device spelling is held to). */
#include "lower/target_internal.h"

#define FMT(...) arena_printf(L->arena, __VA_ARGS__)

/* A program with device work gets copies of the functions and constants its lanes may
 * call, lowered as device code (a device lane's NaNs and atomics), beside the host's:
 * cairn_dev_fn_f, cairn_dev_const_K. */
static void host_items_end(Lower *L) {
    if (L->has_device) lower_device_copies(L, "static");
}

static void host_assemble(Lower *L, LowerOutput *out) {
    sb_append(&out->c, L->dev_protos.data ? L->dev_protos.data : "", L->dev_protos.len);
    sb_append(&out->c, L->dev.data ? L->dev.data : "", L->dev.len);
}

/* Every placement is host memory. */
static void host_buffer_alloc(Lower *L, const Stmt *s, const char *ctype, const char *name,
                              const char *count) {
    lower_emit(L, "%s *%s = (%s *)cairn_zeroed(%s, sizeof(%s), %s);", ctype, name, ctype, count,
               ctype, lower_at(L, s->span));
}

static void host_buffer_free(Lower *L, const Symbol *sym) {
    lower_emit(L, "cairn_release(%s);", lower_sym_c(L, sym));
}

static const char *host_observe_fn(const Type *view) {
    (void)view;
    return "cairn_observe";
}

/* ---- tensor cores ---- */

/* mma_unordered on @device views: the device's tiling, warp by warp on the host. */
/* mm_enclose on @device views, emulated: the GPU's residue algorithm on the host
 * (cairn_enclose_residue.c, linked with the bracket GEMM). */
static const char *host_enclose_device(Lower *L) {
    (void)L;
    return "emulated_";
}

static const char *host_matrix_mma_device(Lower *L) {
    lower_use_runtime(L, LOWER_MODULE_MMA_TILED);
    return "tiled_";
}

/* This thread's lane in its warp: the emulation's thread loop runs cairn_t. */
#define HOST_LANE "(unsigned)(cairn_t & 31u)"

static bool host_frag_ready(Lower *L, const Type *f, Span s) {
    (void)L, (void)f, (void)s;
    return true;
}

/* An operand's value is rounded to its f16 or bf16 and held widened. */
static void host_frag_fill(Lower *L, const Type *f, const char *x, const char *v) {
    const Type *el = f->u.frag.elem;
    if (el->kind != TY_F32)
        v = FMT("cairn_%s_to_f32(cairn_f32_to_%s(%s))", lower_type_word(el), lower_type_word(el),
                v);
    lower_emit(L, "cairn_frag_fill(%s.v, %d, %s);", x, lower_frag_rows(f) * lower_frag_cols(f), v);
}

/* A WMMA tile's first element 32-byte aligned, checked as the device does. */
static void host_wmma_aligned(Lower *L, const Type *f, const FragTile *t, const char *elem,
                              Span s) {
    if (f->u.frag.family != FRAG_WMMA) return;
    lower_emit(L, "cairn_frag_wmma_check(%s, &%s, %s, %s, %d, %d, sizeof(%s), %s);", t->tile,
               t->layout, t->i, t->j, lower_frag_rows(f), lower_frag_cols(f), elem, lower_at(L, s));
}

static void host_frag_load(Lower *L, Expr *e, const char *x, const FragTile *t) {
    const Type *f = e->type;
    host_wmma_aligned(L, f, t, f->u.frag.role == FRAG_ACC ? "float" : "uint16_t", e->span);
    lower_emit(L, "cairn_frag_load_%s(%s.v, %d, %d, %s, &%s, %s, %s, %s);",
               lower_type_word(f->u.frag.elem), x, lower_frag_rows(f), lower_frag_cols(f), t->tile,
               t->layout, t->i, t->j, lower_at(L, e->span));
}

/* An mma.sync accumulator stores only this lane's share, as each lane does on a GPU. */
static void host_frag_store(Lower *L, Expr *e, const char *acc, const FragTile *t) {
    const Type *f = e->u.call.args[4]->type;
    host_wmma_aligned(L, f, t, "float", e->span);
    lower_emit(L, "cairn_frag_store(%s, &%s, %s, %s, %s.v, %d, %d, %d, %s, %s);", t->tile,
               t->layout, t->i, t->j, acc, lower_frag_rows(f), lower_frag_cols(f),
               f->u.frag.family == FRAG_MMA, HOST_LANE, lower_at(L, e->span));
}

static void host_frag_mma(Lower *L, Expr *e, const char *r, const char *a, const char *b) {
    const Type *acc = e->u.call.args[0]->type;
    lower_emit(L, "cairn_frag_mma(%s.v, %s.v, %s.v, %d, %d, %d);", r, a, b, acc->u.frag.m,
               acc->u.frag.n, acc->u.frag.k);
}

static const char *host_frag_index(Lower *L, const char *v, Span s) {
    return FMT("cairn_frag_share_index(%s, %s, %s)", HOST_LANE, v, lower_at(L, s));
}

static const char *host_frag_get(Lower *L, const char *acc, const char *index) {
    return FMT("%s.v[%s]", acc, index);
}

static void host_frag_set(Lower *L, const char *r, const char *index, const char *x) {
    lower_emit(L, "%s.v[%s] = %s;", r, index, x);
}

const LowerTarget lower_target_host = {
    .unsupported_where = "the host",
    .unsupported_hint = "build for a target that has it, or leave it out",
    .items_end = host_items_end,
    .device_prefix = "cairn_dev_",
    .assemble = host_assemble,
    .buffer_alloc = host_buffer_alloc,
    .buffer_free = host_buffer_free,
    .observe_fn = host_observe_fn,
    .copy_modules = 0,
    .device_parallel = lower_parallel_pool,
    .blocks = lower_emulate_blocks,
    .coop_stmt = lower_emulate_coop_stmt,
    .warp_op = lower_emulate_warp_op,
    .device_reduce = lower_emulate_reduce,
    .device_scan = lower_scan,
    .device_atomic = lower_atomic_host,
    .device_wide = lower_wide_elements,
    .matrix_mma_device = host_matrix_mma_device,
    .enclose_device = host_enclose_device,
    .frag_ready = host_frag_ready,
    .frag_fill = host_frag_fill,
    .frag_load = host_frag_load,
    .frag_store = host_frag_store,
    .frag_mma = host_frag_mma,
    .frag_index = host_frag_index,
    .frag_get = host_frag_get,
    .frag_set = host_frag_set,
};
