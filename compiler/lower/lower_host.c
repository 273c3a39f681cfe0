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

static void host_items_end(Lower *L) { (void)L; }

static void host_assemble(Lower *L, LowerOutput *out) { (void)L, (void)out; }

/* Every placement is host memory. */
static void host_buffer_alloc(Lower *L, const Stmt *s, const char *ctype, const char *name,
                              const char *count) {
    lower_emit(L, "%s *%s = (%s *)cairn_zeroed(%s, sizeof(%s), %s);", ctype, name, ctype, count,
               ctype, lower_at(L, s->span));
}

static void host_buffer_free(Lower *L, const Symbol *sym) {
    lower_emit(L, "free(%s);", lower_sym_c(L, sym));
}

static const char *host_observe_fn(const Type *view) {
    (void)view;
    return "cairn_observe";
}

const LowerTarget lower_target_host = {
    .unsupported_where = "the host",
    .unsupported_hint = "build for a target that has it, or leave it out",
    .items_end = host_items_end,
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
};
