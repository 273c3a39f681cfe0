/* target_internal.h: the lowering's back ends as one table of functions per target.
 *
 * lower_c.c, lower_c_expr.c, lower_c_region.c, lower_device.c and lower_mma.c write
 * what every target shares: the host C of functions, statements and expressions, the
 * guards, the receipt's entries, the rules of device work (phases, the warp butterfly,
 * the bounds of a blocks region). Wherever a target spells something its own way they
 * call through Lower.target, a LowerTarget, and never ask which target it is:
 *
 *   lower_host.c    lower_target_host: the host C build (`--target host`, and
 *                   `--emulate`), device work emulated on host threads (lower_emulate.c)
 *   lower_cuda.c    lower_target_cuda: `--target sm_NN`, device work as CUDA kernels
 *                   and their launchers in a .cu file that nvcc compiles
 *
 * lower_program (lower_c.c) picks the table; nothing else chooses. Adding a target (HIP,
 * say) is a new file holding one more LowerTarget and its functions, and one more case
 * there (docs/design.md, "Adding a target"). Every entry is required (none is NULL:
 * lower_program asserts it); an entry whose work a target does not need is a function
 * that does nothing, and one a target cannot do reports it with lower_unsupported.
 *
 * The entries emit with lower_emit into L->out, at L->indent, and must keep CAIRN's
 * order of evaluation: a caller has evaluated what it passes (C expressions that are
 * temporaries, names or constants) and expects the entry to evaluate nothing more of
 * the program than its documentation says. */
#ifndef CAIRN_LOWER_TARGET_INTERNAL_H
#define CAIRN_LOWER_TARGET_INTERNAL_H

#include "lower/lower_c_internal.h"

/* A tensor-core tile operand of mma_load / mma_store (lower_mma.c evaluates it): the
 * view's C arguments (pointer, count), its layout's C literal, and the coordinates of
 * the fragment's first element. */
typedef struct FragTile {
    const char *tile;
    const char *layout; /* a compound literal of type cairn_layout */
    const char *i, *j;
} FragTile;

typedef struct LowerTarget {
    /* ---- refusals: "WHAT: not lowered for <unsupported_where> yet", with the hint ---- */
    const char *unsupported_where;
    const char *unsupported_hint;

    /* ---- the program's files ---- */
    /* After the host C of every item: whatever else device code needs of them (the
     * copies of constants and functions device lanes call, lowered with the device's
     * numerics; CUDA: __device__ ones in the .cu). */
    void (*items_end)(Lower *L);
    /* The prefix of a device copy's C name, before "fn_f" or "const_K" ("cairn_" where
     * the copies live in a file of their own, "cairn_dev_" beside the host's). */
    const char *device_prefix;
    /* Between out->c's prelude and its prototypes: what the host C needs of the target;
     * and every other file the target writes (CUDA: out->cu). */
    void (*assemble)(Lower *L, LowerOutput *out);

    /* ---- memory ---- */
    /* `buffer x: [T; n] @place`: declares the C pointer `name` to `count` zeroed
     * elements of C type `ctype`, where the target keeps that placement. */
    void (*buffer_alloc)(Lower *L, const Stmt *s, const char *ctype, const char *name,
                         const char *count);
    /* Frees buffer `sym` (at the end of its block, and at a return). */
    void (*buffer_free)(Lower *L, const Symbol *sym);
    /* The runtime's observe function for a view, reference or scalar of type `t` (CUDA:
     * the device's earlier work waited for, and a view held off the host copied back). */
    const char *(*observe_fn)(const Type *t);
    /* The LOWER_MODULE_* bits that copy(dst, src) calls besides the host's (0: none). */
    unsigned copy_modules;

    /* ---- device work ---- */
    /* parallel over device views (L->has_device is set). */
    void (*device_parallel)(Lower *L, const Stmt *s);
    /* blocks g in G threads t in T, its bounds evaluated (lower_device.c). */
    void (*blocks)(Lower *L, const Stmt *s, const BlocksBounds *b);
    /* `shared` or `barrier` met by lower_stmt (CUDA: inside a kernel; the emulation cuts
     * them out where it can, so the host meets only those it cannot place). */
    void (*coop_stmt)(Lower *L, const Stmt *s);
    /* A warp operation (reduce OP warp, scan OP warp, shuffle, shuffle_xor): its value
     * in this lane (NULL for a scan, which stores into its view). */
    const char *(*warp_op)(Lower *L, Expr *e);
    /* reduce OP parallel over device views, bounds evaluated, n the number of terms. */
    const char *(*device_reduce)(Lower *L, Expr *e, const Type *it, const char *lo, const char *hi,
                                 const char *n);
    /* scan OP parallel over device views, bounds evaluated. */
    void (*device_scan)(Lower *L, Expr *e, const Type *it, const char *lo, const char *hi);
    /* An atomic in a device lane on the element at `p` (operands evaluated: v, and w for
     * cas); returns the old value, or NULL for atomic_add_unordered. */
    const char *(*device_atomic)(Lower *L, Expr *e, Builtin b, const char *p, const char *v,
                                 const char *w);
    /* In a device lane, dst[i + k] = src[i + k] for the k elements of one 16-byte wide
     * access (C names of the arrays; its guards have run). */
    void (*device_wide)(Lower *L, const char *dst, const char *src, const char *i, int k);

    /* ---- tensor cores (lower_mma.c evaluates the operands; the target spells) ---- */
    /* mma_unordered over @device views: records what it needs, returns the runtime
     * entry's infix (cairn_mma_<infix><type>). */
    const char *(*matrix_mma_device)(Lower *L);
    /* mm_enclose over @device views (the bracket GEMM's residue algorithm): records what
     * it needs, returns the runtime entry's infix (cairn_mm_enclose_<infix><type>). */
    const char *(*enclose_device)(Lower *L);
    /* Can fragment type f be lowered here? Reports at s when not. */
    bool (*frag_ready)(Lower *L, const Type *f, Span s);
    /* Fills the declared fragment x with the f32 value v. */
    void (*frag_fill)(Lower *L, const Type *f, const char *x, const char *v);
    /* mma_load: the declared fragment x (of type e->type) from the tile. */
    void (*frag_load)(Lower *L, Expr *e, const char *x, const FragTile *t);
    /* mma_store: the accumulator acc into the tile. */
    void (*frag_store)(Lower *L, Expr *e, const char *acc, const FragTile *t);
    /* mma_unordered(c, a, b): r (declared, holding c) += a * b. */
    void (*frag_mma)(Lower *L, Expr *e, const char *r, const char *a, const char *b);
    /* mma_get / mma_set: the index of this lane's value v in an accumulator (checked,
     * trapping at s); the value at it; storing x at it in fragment r. */
    const char *(*frag_index)(Lower *L, const char *v, Span s);
    const char *(*frag_get)(Lower *L, const char *acc, const char *index);
    void (*frag_set)(Lower *L, const char *r, const char *index, const char *x);
} LowerTarget;

extern const LowerTarget lower_target_host; /* lower_host.c */
extern const LowerTarget lower_target_cuda; /* lower_cuda.c */

/* ---- what the targets share (the host's own choices, which others may reuse) ---- */
/* A parallel region on the host pool (device ones too, where device work is emulated). */
void lower_parallel_pool(Lower *L, const Stmt *s);
/* scan OP MODE in written order on the host (lower_c_region.c). */
void lower_scan(Lower *L, Expr *e, const Type *it, const char *lo, const char *hi);
/* A pooled reduction other than a float +: one partial per worker (lower_c_region.c). */
const char *lower_reduce_partials(Lower *L, Expr *e, const Type *it, const char *lo, const char *n);
/* Host atomics (GCC/Clang __atomic builtins; lower_c_expr.c). */
const char *lower_atomic_host(Lower *L, Expr *e, Builtin b, const char *p, const char *v,
                              const char *w);
/* dst[i + k] = src[i + k] for k elements, one by one (lower_device.c). */
void lower_wide_elements(Lower *L, const char *dst, const char *src, const char *i, int k);
/* Declares a temporary of type t holding value; returns its name (lower_c_expr.c). */
const char *lower_bind(Lower *L, const Type *t, const char *value);
/* The copies of constants and of functions device lanes may call, with qualifier q
 * ("static __device__"), into L->dev and L->dev_protos (lower_c.c). */
void lower_device_copies(Lower *L, const char *q);
/* A C string literal of text (escaped), appended to sb (lower_c.c). */
void lower_c_string(StrBuf *sb, const char *text);
/* The rows and columns of the matrix a fragment holds (lower_mma.c). */
int lower_frag_rows(const Type *f);
int lower_frag_cols(const Type *f);

/* The emulation of device work on host threads (lower_emulate.c), lower_target_host's. */
void lower_emulate_blocks(Lower *L, const Stmt *s, const BlocksBounds *b);
void lower_emulate_coop_stmt(Lower *L, const Stmt *s);
const char *lower_emulate_warp_op(Lower *L, Expr *e);
const char *lower_emulate_reduce(Lower *L, Expr *e, const Type *it, const char *lo, const char *hi,
                                 const char *n);

#endif
