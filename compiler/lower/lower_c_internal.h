/* lower_c_internal.h: what the parts of the C lowering share (lower_c.c: program,
 * functions and statements; lower_c_expr.c: expressions and builtins;
 * lower_c_region.c: parallel regions and reductions; lower_mma.c: tensor cores and
 * layouts; numerics.c: the receipt's entries; lower_device.c: the rules of device work
 * every target keeps, warp butterflies and phase analysis). Where a target spells
 * something its own way they call its table (target_internal.h: lower_host.c with
 * lower_emulate.c, device work on host threads; lower_cuda.c, kernels for nvcc).
 *
 * How expressions lower. Each expression becomes a C expression that is pure and cheap
 * (a temporary, an immutable name or a constant); whatever it needs first (guards,
 * calls, loops) is emitted as statements before it, in CAIRN's left-to-right order, so
 * the order of evaluation (which trap fires first, for one) never depends on the C
 * compiler. */
#ifndef CAIRN_LOWER_C_INTERNAL_H
#define CAIRN_LOWER_C_INTERNAL_H

#include <cjson/cJSON.h>

#include "syntax/syntax.h"
#include "check/check.h"
#include "lower/lower.h"

#define LOWER_MAX_LIVE     256
#define LOWER_MAX_WARP_OPS 64

/* A warp operation (reduce OP warp, shuffle, shuffle_xor) whose value a statement reads:
 * the emulation computes it in a phase of its own and names the per-thread result. */
typedef struct WarpSlot {
    const Expr *op;
    const char *value; /* C expression of this thread's result */
} WarpSlot;

/* What a device target allows (lower_device_limits, lower_device.c): the guards of
 * device work keep these limits on both sides, emulated and on the GPU. */
typedef struct DeviceLimits {
    const char *name;      /* "sm_90" */
    uint64_t shared_bytes; /* the most shared memory one block may use (with the opt-in) */
} DeviceLimits;
DeviceLimits lower_device_limits(const char *target);

typedef struct Lower {
    Program *prog;
    Diags *diags;
    Arena *arena;
    StrBuf *out; /* where statements go now */
    StrBuf protos, lanes, defs;
    cJSON *numerics;  /* {"function": [entry, ...]} */
    const Item *fn;   /* the function being lowered */
    const Item *item; /* the function or constant being lowered (its sites') */
    LowerSite *sites; /* every place lower_at named (LowerOutput.sites) */
    int nsites, capsites;
    int tmp; /* numbers temporaries, lane functions and lane contexts */
    int indent;
    const Symbol *live[LOWER_MAX_LIVE]; /* buffers allocated so far, innermost last */
    int nlive;
    int live_base; /* live[] below this belong to an enclosing C function */
    /* device work */
    const struct LowerTarget *target; /* how this target spells its choices */
    DeviceLimits device;              /* the device target's limits, kept on both sides */
    bool in_device;                   /* lowering a device lane (device numerics, device atomics) */
    /* a target with a device file (CUDA: the .cu) */
    StrBuf dev;          /* its kernels, launchers and device copies of functions */
    StrBuf dev_protos;   /* prototypes of the device copies of functions */
    StrBuf shared_decls; /* what both the .c and the device file declare (contexts) */
    const Symbol *thread_syms[LOWER_MAX_LIVE]; /* emulated blocks: locals kept per thread */
    int nthread_syms;
    WarpSlot warp[LOWER_MAX_WARP_OPS]; /* warp results ready in this phase */
    const Symbol *coop_thread;         /* the thread binder of the blocks region */
    int nwarp;
    unsigned modules;              /* LOWER_MODULE_* bits (lower_use_runtime) */
    const LowerOptions *opt;       /* what to lower for: a library's prefix and header */
    bool has_device;               /* met device work (a device region, reduce or placement) */
    const struct Covered *covered; /* lowering a term whose block checks these indexes */
    /* guard elision (lower_guard.c) */
    const Expr **proved; /* nodes whose guards the enclosing loops' checks proved */
    int nproved, capproved;
    int fallback;  /* > 0: lowering a loop's checked copy (nothing new is elided) */
    bool unroll;   /* the next loop emitted is an innermost loop's unchecked copy */
    cJSON *guards; /* the receipt's {"function": {"proved": [...], "kept": [...]}} */
} Lower;

/* Records that the code being emitted calls into runtime module MODULE (a LOWER_MODULE_*
 * of lower.h): every place that emits such a call says so, and the driver links what
 * the records name, nothing found by reading the generated text. */
void lower_use_runtime(Lower *L, unsigned module);

/* ---- emitting ---- */
void lower_emit(Lower *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *lower_new_tmp(Lower *L);
const char *lower_at(Lower *L, Span s);
/* The same for a trap that is no guard (the machine's, or one the checker rules out): no
 * trap site. */
const char *lower_at_unguarded(Lower *L, Span s); /* CAIRN_AT(line, col) */
/* Reports something the checker accepts but the host lowering cannot do. */
void lower_unsupported(Lower *L, Span s, const char *what);

/* ---- names and types ---- */
const char *lower_c_scalar(const Type *t);          /* "double", "int32_t", "cairn_f16" */
const char *lower_type_word(const Type *t);         /* "f64", "usize" (int helpers: "u64") */
const char *lower_helper_suffix(const Type *t);     /* "i32", "u64" for usize, "f64" */
const char *lower_sym_c(Lower *L, const Symbol *s); /* the C name of a local, param, ... */
/* The C name of a function or constant ("fn" or "const"; a device lane's device copy). */
const char *lower_item_name(Lower *L, const char *kind, const char *name);
const char *lower_sym_len(Lower *L, const Symbol *s); /* its element count, for a view */
bool lower_is_view(const Type *t);                    /* a view with an extent (or a buffer) */
bool lower_is_scalar_ref(const Type *t);              /* rw<T> without an extent */
const Symbol *lower_expr_sym(const Expr *e);          /* the Symbol of a NAME, else NULL */

/* ---- expressions (lower_c_expr.c) ---- */
const char *lower_expr(Lower *L, Expr *e); /* NULL for a void call */
/* The address of an element or of a scalar reference target, for stores and atomics. */
const char *lower_place(Lower *L, Expr *target);
/* The C arguments that pass view/ref/scalar `arg` to a parameter of type `param`. */
const char *lower_arg(Lower *L, Expr *arg, const Type *param);
/* Converts the C value `v` of type `from` to `to`, with guards and entries. */
const char *lower_convert(Lower *L, const char *v, const Type *from, const Type *to, Span s);
/* v as a temporary of type t, unless it is one: comparison operands and loop bounds,
 * which gcc and clang must not see as literals (lower_c_expr.c says why). */
const char *lower_opaque(Lower *L, const Type *t, const char *v);
/* v (a C expression of type t) as a device lane's NaN when it is one (cairn_dnan_*). */
const char *lower_dnan(Lower *L, const Type *t, const char *v);
/* e's value where its bits leave the expression (a let, an assignment, a return, an
 * argument, ...): in a device lane, the result of a float operation as the device's
 * NaN when it is a NaN (lower_c_expr.c says why that is enough). */
const char *lower_expr_out(Lower *L, Expr *e);
/* a OP b in type t, checked for integers. */
const char *lower_arith(Lower *L, BinaryOp op, const char *a, const char *b, const Type *t, Span s);

/* ---- statements (lower_c.c) ---- */
void lower_block(Lower *L, const Block *b);
/* A function whose C signature ends in `cairn_loc cairn_call` (its views' extents and
 * its requires are checked on entry, naming the call). */
bool lower_fn_takes_loc(const Item *fn);

/* ---- entry points (lower_entry.c) ---- */
/* The C main of an executable, calling CAIRN's main (reading its parameters from the
 * command line, runtime/cairn_args.h), into L->defs. */
void lower_main_entry(Lower *L, const Item *main);
/* A library's exported entries (one per pub fn, and PREFIX_last_error) into L->defs,
 * its header into out->h and the entries' description into out->library; reports
 * E-PUB when the program has no pub fn. */
void lower_library_entries(Lower *L, LowerOutput *out);

/* ---- statements (lower_c.c), for the device back ends ---- */
void lower_stmt(Lower *L, const Stmt *s);
/* The C name of the per-thread array behind a thread-kept local ("pt_x_3"). */
const char *lower_thread_array(Lower *L, const Symbol *s);
bool lower_is_thread_sym(const Lower *L, const Symbol *s);

/* ---- guards proved for a loop (lower_guard.c) ---- */
/* A host loop over [lo, hi) (C values of `type`, evaluated before it) with the binder
 * `var` (NULL for `_`), whose body is `body` or the yield `yield` (and, for a scan,
 * `scan`, whose out[i - lo] is checked). */
typedef struct GuardLoop {
    const Symbol *var;
    const Type *type;
    const char *lo, *hi;
    const Block *body;
    const Expr *yield, *scan;
    Span span;
} GuardLoop;
typedef void LowerLoopEmit(Lower *L, void *ctx);
/* Emits the loop (emit(L, ctx) writes it) once, or, when a check before it proves some
 * of its guards, twice: `if (check) { emit, those guards left out } else { emit }`. */
void lower_guarded_loop(Lower *L, const GuardLoop *g, LowerLoopEmit *emit, void *ctx);
/* The `for` line of a loop being emitted (emit_for, emit_fold): `#pragma GCC unroll 4`
 * before it when it is an innermost loop's unchecked copy (lower_guard.c says why). */
void lower_loop_head(Lower *L, const char *type, const char *i, const char *lo, const char *hi);
/* Whether e's own guard (an element's index check, an integer operation's overflow
 * check, a scan's out index) is proved where it is being lowered now. */
bool lower_guard_proved(const Lower *L, const Expr *e);
/* Records a guard kept at s for the receipt (lower_at calls it). */
void lower_guard_kept(Lower *L, Span s);

/* ---- regions and reductions (lower_c_region.c) ---- */
void lower_parallel(Lower *L, const Stmt *s);
const char *lower_reduce(Lower *L, Expr *e);
/* The value a reduction starts from (and gives for no terms). */
const char *lower_identity(Lower *L, ReduceOp op, const Type *t);
/* acc OP v for a reduction (checked for integers), as a C expression. */
const char *lower_combine(Lower *L, ReduceOp op, const Type *t, const char *acc, const char *v,
                          Span s);

/* What a lane function captures (lower_c_region.c); device back ends reuse them. */
typedef struct SymSet {
    const Symbol *items[512];
    int len;
} SymSet;
/* Views a `reduce + parallel` yield indexes by its loop variable `var`: the block
 * function checks their extents once per block, and the term function skips those index
 * checks when its cairn_covered argument says so (lower_c_region.c). */
typedef struct Covered {
    const Symbol *var;
    SymSet views;
} Covered;
/* The C index of view[index] (`i` its value, `check` the checked index): `check`, or,
 * when L->covered holds it, the index unchecked when cairn_covered is set. */
const char *lower_covered_index(Lower *L, const Symbol *view, const Expr *index, const char *i,
                                const char *check);
/* The symbols `body` (and `yield`) use from outside, `var` and their own lets aside. */
void lower_region_captures(const Block *body, const Expr *yield, const Symbol *var, SymSet *out);
/* The C declaration of a captured symbol's field(s), or of its local copy when
 * init_prefix ("c->", "c.") is given. */
void lower_capture_decl(Lower *L, StrBuf *sb, const Symbol *s, const char *init_prefix);
/* A lane function being written: struct laneN { captures; cairn_lo; extra } and
 * static void laneN(void *, size_t begin, size_t end, PARAM4) looping over its indices
 * with the binder `var` (lane_open), its body lowered between, lane_close ending it
 * (after `tail`), and lane_context filling the context in the caller. */
typedef struct Lane {
    int id;
    SymSet captures;
    const Symbol *var; /* the index binder (may be NULL for `_`) */
    const Type *index_type;
    StrBuf text; /* the struct and the function, appended to L->lanes at close */
    StrBuf *saved_out;
    int saved_indent, saved_nlive, saved_base;
} Lane;
void lower_lane_open(Lower *L, Lane *ln, const Block *body, const Expr *yield, const Symbol *var,
                     const Type *index_type, const char *extra_field, const char *fourth_param);
void lower_lane_close(Lower *L, Lane *ln, const char *tail);
/* lower_lane_open with the indices in blocks of `block` (cairn_b, cairn_m, cairn_v,
 * cairn_w, cairn_at; lower_c_region.c), for lower_array_lane (lower_c_array.c): a
 * host region `v[i] = F(e)`, F std.cr or an f32 <-> f16/bf16 conversion, through the
 * runtime's array form; false: not that shape. */
void lower_lane_open_blocks(Lower *L, Lane *ln, const Block *body, const Symbol *var,
                            const Type *index_type, int block, const char *in_t, const char *out_t);
bool lower_array_lane(Lower *L, const Stmt *s, Lane *ln, const Type *index_type);
/* The pieces lane functions and CUDA kernels share: each capture's local copy from the
 * context (`prefix` "c->" or "c."), and moving output into the function (lane_enter)
 * and back to the caller (lane_leave). */
void lower_capture_copies(Lower *L, StrBuf *sb, const SymSet *captures, const char *prefix);
void lower_lane_enter(Lower *L, Lane *ln);
void lower_lane_leave(Lower *L, Lane *ln);
const char *lower_lane_context(Lower *L, const Lane *ln, const char *lo, const char *extra_init);
/* An exact float sum's terms as functions of the index, laneN_term(ctx, k, covered) and
 * laneN_covers(ctx, b, e) (lower_c_region.c); `device`: the yield is a device lane's. */
void lower_sum_terms(Lower *L, Expr *e, const Type *it, bool device, Lane *ln);
/* The number of indices in [lo, hi), as a uint64_t temporary. */
const char *lower_index_count(Lower *L, const char *lo, const char *hi);

/* ---- device work (lower_device.c, lower_emulate.c, lower_cuda.c) ---- */
/* Does the statement hold a barrier or a warp operation (a phase boundary)? */
bool lower_stmt_syncs(const Stmt *s);
bool lower_is_warp_op(const Expr *e);
/* The warp operations of a statement's own expressions, in evaluation order. */
int lower_warp_ops_of(const Stmt *s, const Expr **out, int max);
/* The fixed butterfly's pieces (docs/devices.md): the type partial results are kept in
 * (a checked integer + adds in a wider type and checks the total once), one combining
 * step `lo OP hi`, and the total from the kept partial. */
const char *lower_warp_acc_type(ReduceOp op, const Type *t);
const char *lower_warp_step(Lower *L, const Expr *e, const char *lo, const char *hi);
const char *lower_warp_total(Lower *L, const Expr *e, const char *acc);
/* scan OP warp yield e into out: this lane's inclusive prefix, its lanes combined in
 * order 0, 1, ..., lane (`lane_j` is lane j's operand, a C expression of the loop's `j`),
 * stored into out[t]. */
void lower_warp_scan_store(Lower *L, const Expr *e, const char *lane, const char *lane_j);
/* The lane a shuffle reads: `lane` is this thread's lane, `arg` the shuffle's second
 * argument (source lane, or xor mask), both taken modulo 32. */
const char *lower_shuffle_source(Lower *L, const Expr *e, const char *lane, const char *arg);
/* blocks g in G threads t in T { ... }: its bounds, evaluated where the region starts
 * (the numbers of blocks and threads, with the whole-warp check), then each back end. */
#define LOWER_MAX_SHARED 64
typedef struct BlocksBounds {
    const Type *grid_type, *thread_type;
    const char *grid_lo, *thread_lo; /* first g and first t */
    const char *nblocks, *nthreads;  /* uint64_t temporaries */
    /* The shared arrays (at the top of the body, E-COOP-SHARED) and their lengths, computed
     * once before the launch; smem their bytes, each array 32-byte aligned (WMMA). */
    int nshared;
    const Stmt *shared[LOWER_MAX_SHARED];
    const char *shared_n[LOWER_MAX_SHARED]; /* uint64_t temporaries */
    const char *smem;
} BlocksBounds;
/* A device parallel region of n lanes (a uint64_t): more than one launch holds traps, on
 * both sides (lanes run 256 to a block, at most 2^31 - 1 blocks). */
void lower_lane_limit(Lower *L, const char *n, Span s);
void lower_blocks(Lower *L, const Stmt *s);
/* The type of a loop binder's variable (the bound's type for `_`). */
const Type *lower_binder_type(const Binder *b);
/* The C back end's emitter of a builtin call (ops.def's EMIT_C column: one per row,
 * lower_c_expr.c's table): the call's C value, or NULL for a statement call, after
 * emitting what it needs. Host C, emulation and CUDA share them (through L->target). */
typedef const char *LowerEmitter(Lower *L, Expr *e);
#define EMIT_C(emitter) LowerEmitter emitter;
#include "syntax/ops.def"
/* copy(dst, src), load_wide(dst, src, i) and store_wide(dst, src, i). */
void lower_copy(Lower *L, Expr *e);
void lower_wide(Lower *L, Expr *e);

/* ---- numerics (numerics.c) ---- */
/* Where an atomic's element lives (the code of an f32 add differs by it): host memory,
 * a device lane's global memory, or a block's shared array. */
typedef enum AtomicSpace { ATOMIC_HOST, ATOMIC_GLOBAL, ATOMIC_SHARED } AtomicSpace;
AtomicSpace lower_atomic_space(const Lower *L, const Expr *e);
/* The receipt's entries of an item's roundings (check.h) into the array ENTRIES. */
void numerics_serialize(cJSON *entries, const CheckFacts *f);

#endif
