/* lower_emulate.c: device work on host threads (`--emulate`, and every device region of
 * a program built for the host): the device entries of lower_target_host (lower_host.c,
 * target_internal.h). docs/devices.md describes the model; in short:
 *
 * - A device `parallel` region is a host pool region (lower_c_region.c), one lane per
 *   index; an f32 atomic add in it flushes subnormals as the device does.
 * - `blocks g in G threads t in T { body }` becomes a lane function over the blocks, run
 *   by the pool one block per task. Inside a block the threads run phase by phase: the
 *   body is cut at each barrier and each warp operation (stmt_syncs, lower_device.c),
 *   and each phase is one loop over the block's threads (`cairn_t` from 0 to nt). The
 *   phase rule (checked by the checker) says no thread reads what another wrote in the
 *   same phase, so running a phase's threads one after another gives what running them
 *   at once would.
 * - A local declared at the level where phases are cut lives across phases, so it is
 *   kept per thread: an array pt_x_N[nt], and the name lowers to pt_x_N[cairn_t]
 *   (Lower.thread_syms, sym_c). Locals inside a statement that holds no boundary stay
 *   plain C locals of the thread loop.
 * - A `for` or an `if` holding a barrier or a warp operation runs around its phases,
 *   with each thread's own bounds and condition: a phase evaluates them per thread into
 *   per-thread arrays (the loop variable among them), and the phases inside run only the
 *   threads whose condition holds, or whose loop has not ended (a mask of active
 *   threads); the loop goes round while any thread's has not. The checker makes such
 *   conditions the same in every thread of a warp (a barrier's: of the block), so a warp
 *   is active or not as a whole, as the butterfly needs.
 * - A warp operation in a statement gets phases of its own, before the statement's: the
 *   threads store its operand (and a shuffle's lane argument) into per-thread arrays,
 *   the block then combines each active warp with the fixed butterfly (lower_device.c)
 *   or moves the shuffled values, and the statement reads its thread's result. The
 *   statement's other parts are evaluated after its warp operations' operands (a for's
 *   bounds and an if's condition too).
 * - Shared arrays and every per-thread array are allocated zeroed once per block, at the
 *   top of the block's code (whatever loop or branch uses them), and freed at its end.
 * Everything is deterministic: the pool only decides which worker runs which block, and
 * blocks touch disjoint data or use atomics (the checker's rules). */
#include <assert.h>
#include <string.h>

#include "lower/lower_c_internal.h"
#include "lower/target_internal.h"

#define FMT(...)      arena_printf(L->arena, __VA_ARGS__)
#define EMU_MAX_FREES 256

/* One emulated blocks region being lowered. */
typedef struct Emu {
    const Symbol *thread_var;
    const Type *thread_type;
    const char *mask; /* uint8_t per thread: which threads run (NULL: every thread) */
    StrBuf head;      /* the per-block arrays, declared at the top of the block's code */
    int head_indent;
    const char *frees[EMU_MAX_FREES]; /* per-block allocations, freed at its end */
    int nfrees;
} Emu;

/* T *name = zeroed(count): a per-block array, declared at the top of the block's code
 * (emu->head), freed at its end. */
static void block_array(Lower *L, Emu *emu, const char *type, const char *name, const char *count,
                        Span s) {
    StrBuf *out = L->out;
    int indent = L->indent;
    L->out = &emu->head;
    L->indent = emu->head_indent;
    lower_emit(L, "%s *%s = (%s *)cairn_zeroed(%s, sizeof(%s), %s);", type, name, type, count, type,
               lower_at(L, s));
    L->out = out;
    L->indent = indent;
    if (emu->nfrees < EMU_MAX_FREES) emu->frees[emu->nfrees++] = name;
    else lower_unsupported(L, s, "this many per-thread values in one region");
}

/* Makes sym a per-thread value (its name lowers to its array's slot) and declares it. */
static void thread_sym(Lower *L, Emu *emu, const Symbol *sym, Span s) {
    if (L->nthread_syms == LOWER_MAX_LIVE) {
        lower_unsupported(L, s, "this many locals in one cooperative region");
        return;
    }
    L->thread_syms[L->nthread_syms++] = sym;
    block_array(L, emu, lower_c_scalar(sym->type), lower_thread_array(L, sym), "cairn_nt", s);
}

/* Registers the lets that live where phases are cut as per-thread, and declares them. */
static void thread_lets(Lower *L, Emu *emu, const Block *b);

static void thread_lets_stmt(Lower *L, Emu *emu, const Stmt *s) {
    if (s->kind == STMT_LET) {
        thread_sym(L, emu, s->u.let.sym, s->span);
        return;
    }
    if (!lower_stmt_syncs(s)) return;
    if (s->kind == STMT_FOR) thread_lets(L, emu, s->u.for_.body);
    if (s->kind == STMT_BLOCK) thread_lets(L, emu, s->u.block);
    if (s->kind == STMT_IF) {
        thread_lets(L, emu, s->u.if_.then);
        if (s->u.if_.els) thread_lets_stmt(L, emu, s->u.if_.els);
    }
}

static void thread_lets(Lower *L, Emu *emu, const Block *b) {
    for (int i = 0; i < b->nstmts; i++) thread_lets_stmt(L, emu, b->stmts[i]);
}

/* A phase: for every active thread of the block, what the caller emits next. */
static void phase_open(Lower *L, Emu *emu) {
    lower_emit(L, "for (cairn_t = 0; cairn_t < cairn_nt; cairn_t++) {");
    L->indent++;
    if (emu->mask) lower_emit(L, "if (!%s[cairn_t]) continue;", emu->mask);
    const char *t = emu->thread_var ? lower_sym_c(L, emu->thread_var) : lower_new_tmp(L);
    const char *tt = lower_c_scalar(emu->thread_type);
    lower_emit(L, "const %s %s = (%s)((uint64_t)c->cairn_tlo + cairn_t);", tt, t, tt);
    lower_emit(L, "(void)%s;", t);
}

static void phase_close(Lower *L) {
    L->indent--;
    lower_emit(L, "}");
    lower_emit(L, "cairn_t = 0;");
}

static void flush_phase(Lower *L, Emu *emu, const Stmt **pending, int *np) {
    if (*np == 0) return;
    phase_open(L, emu);
    for (int i = 0; i < *np; i++) lower_stmt(L, pending[i]);
    phase_close(L);
    *np = 0;
}

/* The block combines each active warp's operands with the fixed butterfly into `out`. */
static void butterfly(Lower *L, Emu *emu, const Expr *e, const char *in, const char *out) {
    const char *w = lower_warp_acc_type(e->u.reduce.op, e->type);
    lower_emit(L, "for (uint64_t cairn_w = 0; cairn_w < cairn_nt; cairn_w += 32) {");
    L->indent++;
    if (emu->mask) lower_emit(L, "if (!%s[cairn_w]) continue;  /* a warp runs whole */", emu->mask);
    lower_emit(L, "%s cairn_r[32], cairn_s[32];", w);
    lower_emit(L, "for (unsigned l = 0; l < 32; l++) cairn_r[l] = (%s)%s[cairn_w + l];", w, in);
    lower_emit(L, "for (unsigned o = 16; o; o >>= 1) {");
    L->indent++;
    lower_emit(L, "for (unsigned l = 0; l < 32; l++) cairn_s[l] = %s;",
               lower_warp_step(L, e, "cairn_r[l & ~o]", "cairn_r[l | o]"));
    lower_emit(L, "memcpy(cairn_r, cairn_s, sizeof cairn_r);");
    L->indent--;
    lower_emit(L, "}");
    lower_emit(L, "for (unsigned l = 0; l < 32; l++) {");
    L->indent++;
    const char *total = lower_warp_total(L, e, "cairn_r[l]");
    lower_emit(L, "%s[cairn_w + l] = %s;", out, total);
    L->indent--;
    lower_emit(L, "}");
    L->indent--;
    lower_emit(L, "}");
}

/* A warp operation's phases: operands stored per thread, then combined or moved. */
static void emulate_warp_op(Lower *L, Emu *emu, const Expr *e) {
    if (L->nwarp == LOWER_MAX_WARP_OPS) {
        lower_unsupported(L, e->span, "this many warp operations in one region");
        return;
    }
    assert(L->nwarp >= 0 && L->nwarp < LOWER_MAX_WARP_OPS && lower_is_warp_op(e));
    int id = ++L->tmp;
    bool scan = e->kind == EXPR_REDUCE && e->u.reduce.scan; /* a scan's own type is void */
    const char *t = lower_c_scalar(scan ? e->u.reduce.body->type : e->type);
    const char *in = FMT("cairn_w%d_in", id), *out = FMT("cairn_w%d", id), *arg = NULL;
    bool shuffle = e->kind == EXPR_CALL;
    block_array(L, emu, t, in, "cairn_nt", e->span);
    if (!scan) block_array(L, emu, t, out, "cairn_nt", e->span);
    if (shuffle)
        block_array(L, emu, "uint64_t", arg = FMT("cairn_w%d_arg", id), "cairn_nt", e->span);
    phase_open(L, emu);
    Expr *operand = shuffle ? e->u.call.args[0] : e->u.reduce.body;
    const char *v = shuffle ? lower_expr_out(L, operand) : lower_expr(L, operand);
    lower_emit(L, "%s[cairn_t] = %s;", in, v);
    if (shuffle)
        lower_emit(L, "%s[cairn_t] = (uint64_t)%s;", arg, lower_expr(L, e->u.call.args[1]));
    phase_close(L);
    if (shuffle) {
        const char *src = lower_shuffle_source(L, e, "(cairn_t & 31u)", FMT("%s[cairn_t]", arg));
        lower_emit(L, "for (cairn_t = 0; cairn_t < cairn_nt; cairn_t++)%s", emu->mask ? " {" : "");
        if (emu->mask) lower_emit(L, "    if (!%s[cairn_t]) continue;", emu->mask);
        lower_emit(L, "    %s[cairn_t] = %s[(cairn_t & ~(uint64_t)31) + %s];", out, in, src);
        if (emu->mask) lower_emit(L, "}");
        lower_emit(L, "cairn_t = 0;");
    } else if (scan) { /* each thread reads its warp's operands itself */
        L->warp[L->nwarp++] = (WarpSlot){e, in};
        return;
    } else {
        butterfly(L, emu, e, in, out);
    }
    L->warp[L->nwarp++] = (WarpSlot){e, FMT("%s[cairn_t]", out)};
}

static void emit_phases(Lower *L, Emu *emu, const Block *b, bool top);

/* if COND { then } else { els } around phases: each active thread's condition into two
 * masks, then each branch's phases for the threads its mask holds. */
static void emulate_if(Lower *L, Emu *emu, const Stmt *s) {
    const char *outer = emu->mask, *els_mask = NULL;
    int id = ++L->tmp;
    const char *then_mask = FMT("cairn_m%d", id);
    block_array(L, emu, "uint8_t", then_mask, "cairn_nt", s->span);
    lower_emit(L, "memset(%s, 0, (size_t)cairn_nt);", then_mask);
    if (s->u.if_.els) {
        block_array(L, emu, "uint8_t", els_mask = FMT("cairn_m%d_else", id), "cairn_nt", s->span);
        lower_emit(L, "memset(%s, 0, (size_t)cairn_nt);", els_mask);
    }
    phase_open(L, emu);
    lower_emit(L, "%s[cairn_t] = (uint8_t)(%s);", then_mask, lower_expr(L, s->u.if_.cond));
    if (els_mask) lower_emit(L, "%s[cairn_t] = (uint8_t)!%s[cairn_t];", els_mask, then_mask);
    phase_close(L);
    emu->mask = then_mask;
    emit_phases(L, emu, s->u.if_.then, false);
    const Stmt *els = s->u.if_.els;
    if (els) {
        emu->mask = els_mask;
        if (els->kind == STMT_BLOCK) emit_phases(L, emu, els->u.block, false);
        else emit_phases(L, emu, &(Block){els->span, (Stmt **)&els, 1}, false);
    }
    emu->mask = outer;
}

/* for i in lo..hi { body } around phases: each active thread's bounds and loop variable
 * in per-thread arrays; each round, the threads whose loop goes on run the body's
 * phases and step; the loop ends when no thread's goes on. */
static void emulate_for(Lower *L, Emu *emu, const Stmt *s) {
    const Binder *fb = &s->u.for_.b;
    const char *ft = lower_c_scalar(lower_binder_type(fb)), *outer = emu->mask;
    int id = ++L->tmp;
    const char *hi = FMT("cairn_hi%d", id), *act = FMT("cairn_m%d", id),
               *any = FMT("cairn_any%d", id);
    const char *iv;
    if (fb->sym) {
        thread_sym(L, emu, fb->sym, s->span);
        iv = lower_thread_array(L, fb->sym);
    } else {
        block_array(L, emu, ft, iv = FMT("cairn_i%d", id), "cairn_nt", s->span);
    }
    block_array(L, emu, ft, hi, "cairn_nt", s->span);
    block_array(L, emu, "uint8_t", act, "cairn_nt", s->span);
    phase_open(L, emu);
    const char *lo = fb->lo ? lower_expr(L, fb->lo) : "0";
    lower_emit(L, "%s[cairn_t] = %s;", iv, lo);
    lower_emit(L, "%s[cairn_t] = %s;", hi, lower_expr(L, fb->count));
    phase_close(L);
    lower_emit(L, "for (;;) {");
    L->indent++;
    lower_emit(L, "uint8_t %s = 0;", any);
    lower_emit(L, "for (cairn_t = 0; cairn_t < cairn_nt; cairn_t++) {");
    lower_emit(L, "    %s[cairn_t] = (uint8_t)(%s%s[cairn_t] < %s[cairn_t]);", act,
               outer ? FMT("%s[cairn_t] && ", outer) : "", iv, hi);
    lower_emit(L, "    %s |= %s[cairn_t];", any, act);
    lower_emit(L, "}");
    lower_emit(L, "cairn_t = 0;");
    lower_emit(L, "if (!%s) break;", any);
    emu->mask = act;
    emit_phases(L, emu, s->u.for_.body, false);
    emu->mask = outer;
    lower_emit(L, "for (cairn_t = 0; cairn_t < cairn_nt; cairn_t++)");
    lower_emit(L, "    if (%s[cairn_t]) %s[cairn_t]++;", act, iv);
    lower_emit(L, "cairn_t = 0;");
    L->indent--;
    lower_emit(L, "}");
}

/* A statement holding a boundary: its own warp operations first (a for's bounds and an
 * if's condition included); then a barrier ends the phase, a loop or a branch runs
 * around its phases, and any other statement joins the next phase (returns true). */
static bool boundary(Lower *L, Emu *emu, const Stmt *s) {
    const Expr *ops[LOWER_MAX_WARP_OPS];
    int nops = lower_warp_ops_of(s, ops, LOWER_MAX_WARP_OPS);
    for (int k = 0; k < nops && k < LOWER_MAX_WARP_OPS; k++) emulate_warp_op(L, emu, ops[k]);
    switch (s->kind) {
    case STMT_BARRIER: return false;
    case STMT_BLOCK: emit_phases(L, emu, s->u.block, false); return false;
    case STMT_FOR: emulate_for(L, emu, s); return false;
    case STMT_IF: emulate_if(L, emu, s); return false;
    default:
        if (nops > 0) return true;
        lower_unsupported(L, s->span, "this statement at a phase boundary");
        return false;
    }
}

/* A shared array: allocated where it is declared, at the region's top, with the length
 * lower_blocks computed and checked before the launch; freed at the block's end. */
static void shared_array(Lower *L, Emu *emu, const Stmt *s, bool top) {
    assert(top && "E-COOP-SHARED: shared arrays are declared at the top of the region");
    (void)top;
    const Symbol *sym = s->u.alloc.sym;
    const char *n = FMT("c->cairn_shn_%d", sym->id), *t = lower_c_scalar(s->u.alloc.elem);
    const char *name = lower_sym_c(L, sym);
    lower_emit(L, "const uint64_t %s = %s;", lower_sym_len(L, sym), n);
    lower_emit(L, "(void)%s;", lower_sym_len(L, sym));
    lower_emit(L, "%s *%s = (%s *)cairn_zeroed(%s, sizeof(%s), %s);", t, name, t,
               lower_sym_len(L, sym), t, lower_at(L, s->span));
    if (emu->nfrees < EMU_MAX_FREES) emu->frees[emu->nfrees++] = name;
    else lower_unsupported(L, s->span, "this many shared arrays in one region");
}

static void emit_phases(Lower *L, Emu *emu, const Block *b, bool top) {
    const Stmt **pending = arena_alloc(L->arena, sizeof *pending * (size_t)(b->nstmts + 1));
    int np = 0;
    for (int i = 0; i < b->nstmts; i++) {
        const Stmt *s = b->stmts[i];
        if (s->kind == STMT_SHARED) {
            flush_phase(L, emu, pending, &np);
            shared_array(L, emu, s, top);
        } else if (!lower_stmt_syncs(s)) {
            pending[np++] = s;
        } else {
            flush_phase(L, emu, pending, &np);
            if (boundary(L, emu, s)) pending[np++] = s;
        }
    }
    flush_phase(L, emu, pending, &np);
}

/* Puts text at offset `at` of sb (the per-block arrays before the block's code). */
static void splice(StrBuf *sb, size_t at, const StrBuf *text) {
    if (!text->len) return;
    StrBuf joined = {0};
    sb_append(&joined, sb->data, at);
    sb_append(&joined, text->data, text->len);
    sb_append(&joined, sb->data + at, sb->len - at);
    sb_free(sb);
    *sb = joined;
}

void lower_emulate_blocks(Lower *L, const Stmt *s, const BlocksBounds *b) {
    const Binder *g = &s->u.blocks.grid, *th = &s->u.blocks.threads;
    const Type *gt = b->grid_type, *tt = b->thread_type;
    Lane ln;
    Stmt *self = (Stmt *)s;
    StrBuf fields = {0}, init = {0};
    sb_printf(&fields, "    uint64_t cairn_nt;\n    %s cairn_tlo;\n", lower_c_scalar(tt));
    sb_printf(&init, ", .cairn_nt = %s, .cairn_tlo = %s", b->nthreads, b->thread_lo);
    for (int i = 0; i < b->nshared; i++) { /* the shared arrays' lengths */
        int id = b->shared[i]->u.alloc.sym->id;
        sb_printf(&fields, "    uint64_t cairn_shn_%d;\n", id);
        sb_printf(&init, ", .cairn_shn_%d = %s", id, b->shared_n[i]);
    }
    const char *extra_init = arena_strdup(L->arena, init.data);
    lower_lane_open(L, &ln, &(Block){s->span, &self, 1}, NULL, g->sym, gt,
                    arena_strdup(L->arena, fields.data), "unsigned cairn_worker");
    sb_free(&fields);
    sb_free(&init);
    lower_emit(L, "(void)cairn_worker;");
    lower_emit(L, "const uint64_t cairn_nt = c->cairn_nt;");
    lower_emit(L, "uint64_t cairn_t = 0;  /* outside a phase: thread 0's slot */");
    Emu emu = {.thread_var = th->sym, .thread_type = tt, .head_indent = L->indent};
    size_t top = L->out->len;
    const Symbol *saved_thread = L->coop_thread;
    L->coop_thread = th->sym;
    int saved_threads = L->nthread_syms, saved_warp = L->nwarp;
    bool was_device = L->in_device;
    L->in_device = true;
    thread_lets(L, &emu, s->u.blocks.body);
    emit_phases(L, &emu, s->u.blocks.body, true);
    assert(L->nthread_syms >= saved_threads && L->nwarp >= saved_warp && !emu.mask);
    assert(emu.nfrees <= EMU_MAX_FREES);
    for (int k = emu.nfrees - 1; k >= 0; k--) lower_emit(L, "cairn_release(%s);", emu.frees[k]);
    splice(L->out, top, &emu.head);
    sb_free(&emu.head);
    L->in_device = was_device;
    L->nthread_syms = saved_threads;
    L->nwarp = saved_warp;
    L->coop_thread = saved_thread;
    lower_lane_close(L, &ln, NULL);
    const char *ctx = lower_lane_context(L, &ln, b->grid_lo, extra_init);
    lower_use_runtime(L, LOWER_MODULE_POOL);
    lower_emit(L, "if (%s != 0 && %s != 0) cairn_pool_run((size_t)%s, 1, lane%d, &%s);", b->nblocks,
               b->nthreads, b->nblocks, ln.id, ctx);
}

/* The emulation's value of a warp operation: the slot its phase filled (a scan stores
 * this thread's prefix from its warp's operands). */
const char *lower_emulate_warp_op(Lower *L, Expr *e) {
    assert(lower_is_warp_op(e) && L->in_device);
    for (int i = L->nwarp - 1; i >= 0; i--) {
        if (L->warp[i].op != e) continue;
        if (e->kind != EXPR_REDUCE || !e->u.reduce.scan) return L->warp[i].value;
        lower_warp_scan_store(L, e, "(cairn_t & 31u)",
                              FMT("%s[(cairn_t & ~(uint64_t)31) + j]", L->warp[i].value));
        return NULL;
    }
    lower_unsupported(L, e->span, "a warp operation inside another one's operand");
    return "0";
}

/* A device reduce + over floats, emulated: the exact device sum of runtime/cairn_dsum.h,
 * the GPU's algorithm (blocks of 256 threads, grid-stride) run on the host pool, one block
 * per task: the host's exact sum's bits (receipt "order": "exact"). The terms are
 * lower_sum_terms's (index checks hoisted when the whole range is covered). Any other
 * device reduction gives the host's value and lowers as a host one. */
const char *lower_emulate_reduce(Lower *L, Expr *e, const Type *it, const char *lo, const char *hi,
                                 const char *n) {
    assert(e->u.reduce.on_device && !e->u.reduce.scan);
    (void)hi;
    if (!type_is_float(e->type) || e->u.reduce.op != RED_ADD)
        return lower_reduce_partials(L, e, it, lo, n);
    L->has_device = true;
    const char *w = e->type->kind == TY_F32 ? "32" : "64";
    Lane ln;
    lower_sum_terms(L, e, it, true, &ln);
    for (int covered = 0; covered < 2; covered++) {
        const char *name = FMT("lane%d_%s", ln.id, covered ? "covered" : "checked");
        sb_printf(&L->lanes,
                  "static inline __attribute__((always_inline)) %s %s_term(void *c, size_t k) {\n"
                  "    return lane%d_term(c, k, %d);\n}\n"
                  "CAIRN_DSUM%s_BLOCK(%s, %s_term)\n\n",
                  lower_c_scalar(e->type), name, ln.id, covered, w, name, name);
    }
    const char *ctx = lower_lane_context(L, &ln, lo, ""), *r = lower_new_tmp(L);
    lower_use_runtime(L, LOWER_MODULE_DSUM);
    lower_emit(L, "%s %s = 0.0%s;  /* no terms: +0.0 */", lower_c_scalar(e->type), r,
               e->type->kind == TY_F32 ? "f" : "");
    lower_emit(L,
               "if (%s) %s = cairn_dsum%s_emulate(%s, cairn_dsum_blocks(%s, 256, 0), 256, "
               "lane%d_covers(&%s, 0, %s) ? lane%d_covered : lane%d_checked, &%s);",
               n, r, w, n, n, ln.id, ctx, n, ln.id, ln.id, ctx);
    return r;
}

/* `shared` and `barrier` that lower_stmt meets: the emulation takes both where a region's
 * phases are cut (emit_phases), so what is left sits where it cannot place them. */
void lower_emulate_coop_stmt(Lower *L, const Stmt *s) {
    assert(s->kind == STMT_SHARED || s->kind == STMT_BARRIER);
    lower_unsupported(
        L, s->span,
        s->kind == STMT_SHARED
            ? "a `shared` array inside an if or loop (declare it at the region's top level)"
            : "a `barrier` here");
}
