/* verify_loop.c: loops, parallel regions, reductions and scans in the Z3 model (see
 * verify.h for the two runs).
 *
 * Unrolled run: up to --unwind iterations in index order; a run that would take one
 * more is added to `beyond`. A `for` loop's iterations follow one another, so each
 * starts where the last left off (`alive` included: a trap ends the run). The lanes of
 * a parallel region or pooled reduction run concurrently: each starts from the region's
 * entry state (a trap in one lane does not stop another, so no lane assumes that the
 * lanes before it passed their guards), and the region ends alive when every lane did.
 * Lanes touch disjoint elements (E-LANE-RACE), so running them in index order gives the
 * state any order gives; an atomic's old value, and a compare-and-swap's outcome, are the
 * exceptions (verify_expr.c makes them fresh).
 *
 * Inductive run: one arbitrary iteration i with lo <= i < hi, after everything the body
 * may write (and a reduction's accumulator) has been given a fresh value with the loop
 * bit, and again after it; the state after the loop keeps `alive` as it was before (a
 * superset of the runs that get past it). Every real iteration at every extent is an
 * instance, so a guard proved here is proved for all of them. A sequential loop runs
 * iteration i - 1 first when i > lo, from that fresh state (2-induction): a real run
 * that reaches iteration i got through i - 1, so i may assume its guards passed (`x[b +
 * t]` checked at t - 1 keeps `b + t` from overflowing at t). Lanes assume nothing of
 * each other.
 *
 * Reductions and scans follow the lowering (compiler/lower/lower_c_region.c): integer folds
 * combine in written order with checked + and * (a pooled integer + is exact in 128 bits,
 * checked once at the end; a pooled integer * is the index-order fold, the rule the
 * runtime keeps); a scan stores each prefix at `out[i - lo]` after an index check at
 * the `into` place. Float folds and float scans' prefixes are not modelled. */
#include <stdlib.h>
#include <string.h>

#include "verify/verify_internal.h"

typedef struct Loop {
    const Binder *b;
    bool lanes;
    Block *block; /* what the body writes: a block, */
    Expr *expr;   /* or a reduction */
    void (*body)(Verifier *V, VVal i, void *ctx);
    void (*fresh_state)(Verifier *V, void *ctx); /* a reduction's accumulator, made fresh */
    void *ctx;
    const Stmt *launch; /* a device region: its lanes' limit is checked */
} Loop;

/* A loop that runs past --unwind reaches every guard of its body again, unmodelled. */
static void beyond_inside(Verifier *V, unsigned since, Z3_ast reach) {
    for (int i = 0; i < V->nprops; i++)
        if (V->props[i].stamp > since) V->props[i].beyond = verify_or(V, V->props[i].beyond, reach);
}

/* How many iterations the unrolled run takes: a loop whose bounds are numbers runs
 * exactly its trip count when that is at most VERIFY_FULL_UNROLL (nothing past it),
 * others --unwind. */
static unsigned unroll_count(Verifier *V, VVal lo, VVal hi, bool sign) {
    uint64_t l, h;
    int64_t sl, sh;
    if (!Z3_is_numeral_ast(V->z, lo.t) || !Z3_is_numeral_ast(V->z, hi.t)) return V->opt->unwind;
    bool ok = sign ? Z3_get_numeral_int64(V->z, lo.t, &sl) && Z3_get_numeral_int64(V->z, hi.t, &sh)
                   : Z3_get_numeral_uint64(V->z, lo.t, &l) && Z3_get_numeral_uint64(V->z, hi.t, &h);
    if (!ok) return V->opt->unwind;
    uint64_t trips = sign ? (sh > sl ? (uint64_t)(sh - sl) : 0) : (h > l ? h - l : 0);
    if (trips <= VERIFY_FULL_UNROLL && trips > V->opt->unwind) return (unsigned)trips;
    return V->opt->unwind;
}

static void unroll(Verifier *V, const Loop *L, VVal lo, VVal hi, const Type *t) {
    bool sign = type_is_signed(t);
    unsigned since = V->stamp, unwind = unroll_count(V, lo, hi, sign);
    Z3_ast saved = V->pc, ran = Z3_mk_true(V->z), alive0 = V->alive, lanes_alive = V->alive;
    unsigned saved_taint = V->pc_taint;
    V->saw_loop = true;
    for (unsigned k = 0; k <= unwind; k++) {
        Z3_ast i = Z3_mk_bvadd(V->z, lo.t, verify_int_const(V, t, k));
        Z3_ast runs =
            verify_and(V, ran, sign ? Z3_mk_bvslt(V->z, i, hi.t) : Z3_mk_bvult(V->z, i, hi.t));
        if (L->lanes) V->alive = alive0;
        V->pc = saved;
        Z3_ast reach = verify_and(V, verify_active(V), runs); /* the run takes iteration k */
        if (k == unwind) {                                    /* one more iteration than modelled */
            V->beyond = verify_or(V, V->beyond, reach);
            beyond_inside(V, since, reach);
            break;
        }
        for (int s = 0; s < 3; s++)
            if (k == 1u << s) V->beyond_at[s] = verify_or(V, V->beyond_at[s], reach);
        V->pc = verify_and(V, saved, runs);
        V->pc_taint = saved_taint | lo.taint | hi.taint;
        L->body(V, (VVal){i, lo.taint, NULL}, L->ctx);
        if (L->lanes) lanes_alive = verify_and(V, lanes_alive, V->alive);
        ran = runs;
    }
    if (L->lanes) V->alive = lanes_alive;
    V->pc = saved;
    V->pc_taint = saved_taint;
}

static void induct(Verifier *V, const Loop *L, VVal lo, VVal hi, const Type *t) {
    Z3_context z = V->z;
    bool sign = type_is_signed(t);
    Z3_ast saved = V->pc, alive0 = V->alive, returned0 = V->returned, ret0 = V->ret;
    unsigned saved_taint = V->pc_taint, ret_taint0 = V->ret_taint;
    bool returns = verify_havoc_writes(V, L->block, L->expr, V->loop_bit);
    if (L->fresh_state) L->fresh_state(V, L->ctx);
    Z3_ast i = verify_fresh(V, "iteration", verify_sort(V, t));
    Z3_ast in_range = sign ? verify_and(V, Z3_mk_bvsle(z, lo.t, i), Z3_mk_bvslt(z, i, hi.t))
                           : verify_and(V, Z3_mk_bvule(z, lo.t, i), Z3_mk_bvult(z, i, hi.t));
    V->pc_taint = saved_taint | lo.taint | hi.taint;
    if (!L->lanes) { /* the iteration before, when there is one: it passed its guards */
        Z3_ast prev = Z3_mk_bvsub(z, i, verify_int_const(V, t, 1));
        Z3_ast later = sign ? Z3_mk_bvslt(z, lo.t, i) : Z3_mk_bvult(z, lo.t, i);
        V->pc = verify_and(V, saved, verify_and(V, in_range, later));
        bool collect = V->collect; /* its guards are the hypothesis: i's copy covers them */
        V->collect = false;
        L->body(V, (VVal){prev, lo.taint | hi.taint, NULL}, L->ctx);
        V->collect = collect;
    }
    V->pc = verify_and(V, saved, in_range);
    L->body(V, (VVal){i, lo.taint | hi.taint, NULL}, L->ctx);
    V->pc = saved;
    V->pc_taint = saved_taint;
    V->alive = alive0;
    V->returned = returned0;
    V->ret = ret0;
    V->ret_taint = ret_taint0;
    verify_havoc_writes(V, L->block, L->expr, V->loop_bit);
    if (L->fresh_state) L->fresh_state(V, L->ctx);
    if (returns) { /* some iteration may have returned, with some value */
        Z3_ast did =
            verify_and(V, verify_active(V), verify_fresh(V, "returned", Z3_mk_bool_sort(z)));
        if (V->ret)
            V->ret = Z3_mk_ite(z, did, verify_fresh(V, "result", Z3_get_sort(z, V->ret)), V->ret);
        V->returned = verify_or(V, V->returned, did);
        V->ret_taint |= V->loop_bit;
    }
}

Z3_ast verify_lane_count(Verifier *V, VVal lo, VVal hi, const Type *t) {
    Z3_ast more = type_is_signed(t) ? Z3_mk_bvsgt(V->z, hi.t, lo.t) : Z3_mk_bvugt(V->z, hi.t, lo.t);
    Z3_ast n = Z3_mk_bvsub(V->z, verify_to_u64(V, hi.t, t), verify_to_u64(V, lo.t, t));
    return Z3_mk_ite(V->z, more, n, verify_u64(V, 0));
}

/* A device region is launched as one grid of 256-lane blocks: past 2^31 - 1 blocks the
 * lowering traps at the region (lower_lane_limit), on the host's emulation too. */
static void lane_limit(Verifier *V, const Stmt *s, VVal lo, VVal hi, const Type *t) {
    Z3_ast ok = Z3_mk_bvule(V->z, verify_lane_count(V, lo, hi, t),
                            verify_u64(V, (uint64_t)0x7fffffff * 256));
    verify_guard(V, (VSite){VK_LAUNCH, s, s->span, "too many lanes for one device launch"}, ok,
                 lo.taint | hi.taint);
}

static void run_loop(Verifier *V, const Loop *L) {
    const Binder *b = L->b;
    const Type *t = b->sym ? b->sym->type : b->count->type;
    VVal lo = b->lo ? verify_expr(V, b->lo) : (VVal){verify_int_const(V, t, 0), 0, NULL};
    VVal hi = verify_expr(V, b->count);
    if (L->launch) lane_limit(V, L->launch, lo, hi, t);
    if (V->pass == VP_INDUCT) induct(V, L, lo, hi, t);
    else unroll(V, L, lo, hi, t);
}

/* ---- for and parallel ---- */

typedef struct LoopBody {
    const Symbol *var;
    Block *body;
} LoopBody;

static void loop_body(Verifier *V, VVal i, void *ctx) {
    LoopBody *lb = ctx;
    int mark = V->nenv;
    if (lb->var)
        verify_bind(
            V, lb->var,
            verify_new_cell(V, (VCell){.elem = lb->var->type, .val = i.t, .taint = i.taint}));
    verify_block(V, lb->body);
    V->nenv = mark;
}

void verify_for(Verifier *V, Stmt *s) {
    LoopBody lb = {s->u.for_.b.sym, s->u.for_.body};
    Loop L = {.b = &s->u.for_.b, .block = s->u.for_.body, .body = loop_body, .ctx = &lb};
    run_loop(V, &L);
}

void verify_parallel(Verifier *V, Stmt *s) {
    LoopBody lb = {s->u.parallel.b.sym, s->u.parallel.body};
    Loop L = {.b = &s->u.parallel.b,
              .lanes = true,
              .launch = s->u.parallel.on_device ? s : NULL,
              .block = s->u.parallel.body,
              .body = loop_body,
              .ctx = &lb};
    V->in_parallel++;
    V->in_device += s->u.parallel.on_device;
    run_loop(V, &L);
    V->in_device -= s->u.parallel.on_device;
    V->in_parallel--;
}

/* ---- reductions and scans ---- */

typedef struct Fold {
    Expr *e;
    const Type *t; /* the type combined */
    VVal acc;
    bool wide;   /* integer + on the pool: exact in 128 bits, checked at the end */
    VCell *out;  /* a scan's view */
    Z3_ast lo64; /* a scan's first index, 64 bits */
} Fold;

static Z3_ast identity(Verifier *V, ReduceOp op, const Type *t, unsigned width) {
    unsigned bits = (unsigned)type_bits(t);
    uint64_t ones = bits == 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
    uint64_t v = 0;
    if (op == RED_MUL) v = 1;
    if (op == RED_BITAND) v = ones;
    if (op == RED_MIN) v = type_is_signed(t) ? ones >> 1 : ones;
    if (op == RED_MAX) v = type_is_signed(t) ? (uint64_t)1 << (bits - 1) : 0;
    Z3_ast c = verify_int_const(V, t, v);
    return width > bits ? Z3_mk_sign_ext(V->z, width - bits, c) : c;
}

/* acc OP v for integers, as the lowering combines (checked + and *). */
static Z3_ast combine(Verifier *V, const Fold *f, VVal v) {
    Z3_context z = V->z;
    ReduceOp op = f->e->u.reduce.op;
    unsigned pad = 128 - (unsigned)type_bits(f->t);
    if (f->wide)
        return Z3_mk_bvadd(z, f->acc.t,
                           type_is_signed(f->t) ? Z3_mk_sign_ext(z, pad, v.t)
                                                : Z3_mk_zero_ext(z, pad, v.t));
    if (op == RED_ADD || op == RED_MUL)
        return verify_arith(V, (VArith){op == RED_ADD ? BIN_ADD : BIN_MUL, f->t, f->e, f->e->span},
                            f->acc, v)
            .t;
    if (op == RED_MIN || op == RED_MAX) {
        bool sign = type_is_signed(f->t);
        Z3_ast lt = sign ? Z3_mk_bvslt(z, v.t, f->acc.t) : Z3_mk_bvult(z, v.t, f->acc.t);
        return op == RED_MIN ? Z3_mk_ite(z, lt, v.t, f->acc.t) : Z3_mk_ite(z, lt, f->acc.t, v.t);
    }
    if (op == RED_BITAND) return Z3_mk_bvand(z, f->acc.t, v.t);
    if (op == RED_BITOR) return Z3_mk_bvor(z, f->acc.t, v.t);
    return Z3_mk_bvxor(z, f->acc.t, v.t);
}

static const char *FLOAT_SCAN = "a float scan's prefixes (rounded sums)";

/* A scan stores the prefix through i at out[i - lo], after its index check. */
static void scan_store(Verifier *V, Fold *f, VVal i, const Type *it) {
    Expr *into = f->e->u.reduce.into;
    Z3_ast k = Z3_mk_bvsub(V->z, verify_to_u64(V, i.t, it), f->lo64);
    verify_guard(V, (VSite){VK_INDEX, into, into->span, NULL}, Z3_mk_bvult(V->z, k, f->out->len),
                 i.taint);
    unsigned taint = f->acc.taint | V->pc_taint;
    Z3_ast stored = verify_stored(V, f->acc, f->t, &taint);
    f->out->val =
        Z3_mk_ite(V->z, verify_active(V), Z3_mk_store(V->z, f->out->val, k, stored), f->out->val);
    f->out->taint |= taint;
}

static void fold_step(Verifier *V, VVal i, void *ctx) {
    Fold *f = ctx;
    Expr *e = f->e;
    int mark = V->nenv;
    const Symbol *var = e->u.reduce.var_sym;
    const Type *it = var ? var->type : e->u.reduce.count->type;
    if (var)
        verify_bind(V, var,
                    verify_new_cell(V, (VCell){.elem = var->type, .val = i.t, .taint = i.taint}));
    VVal v = verify_expr(V, e->u.reduce.body);
    V->nenv = mark;
    if (!v.t) return;
    if (type_is_int(f->t)) {
        Z3_ast now = combine(V, f, v);
        f->acc.t = Z3_mk_ite(V->z, verify_active(V), now, f->acc.t);
        f->acc.taint |= v.taint | V->pc_taint;
    } else if (f->out) { /* a float prefix: a rounded sum, not modelled */
        f->acc = verify_havoc(V, f->t, e->span, FLOAT_SCAN);
        f->acc.taint |= v.taint;
    }
    if (f->out) scan_store(V, f, i, it);
}

static void fresh_acc(Verifier *V, void *ctx) {
    Fold *f = ctx;
    if (!type_is_int(f->t)) return;
    Z3_ast c = verify_fresh(V, "accumulator", Z3_get_sort(V->z, f->acc.t));
    f->acc = (VVal){c, f->acc.taint | V->loop_bit, NULL};
}

static Binder reduce_binder(Expr *e) {
    return (Binder){.var = e->u.reduce.var,
                    .var_span = e->u.reduce.var_span,
                    .sym = e->u.reduce.var_sym,
                    .lo = e->u.reduce.lo,
                    .count = e->u.reduce.count};
}

/* A pooled integer + is exact in 128 bits and checked once, after every term. */
static VVal wide_result(Verifier *V, Fold *f) {
    unsigned bits = (unsigned)type_bits(f->t);
    Z3_ast r = Z3_mk_extract(V->z, bits - 1, 0, f->acc.t);
    Z3_ast back = type_is_signed(f->t) ? Z3_mk_sign_ext(V->z, 128 - bits, r)
                                       : Z3_mk_zero_ext(V->z, 128 - bits, r);
    verify_guard(V, (VSite){VK_OVERFLOW, f->e, f->e->span, "reduce +"},
                 Z3_mk_eq(V->z, back, f->acc.t), f->acc.taint);
    return (VVal){r, f->acc.taint, NULL};
}

/* scan OP MODE i in lo..hi yield e into out (a statement: t NULL). */
static VVal scan(Verifier *V, Expr *e, Fold *f, Loop *L) {
    Expr *into = e->u.reduce.into;
    const Symbol *s = into && into->kind == EXPR_NAME ? into->u.name.sym : NULL;
    f->out = s ? verify_lookup(V, s) : NULL;
    if (!f->out || !f->out->array) {
        verify_unmodelled(V, e, e->span, "a scan into this expression");
        verify_havoc_writes(V, NULL, e,
                            verify_taint_bit(V, e->span, "a scan into this expression"));
        return (VVal){NULL, 0, NULL};
    }
    if (!type_is_int(f->t)) verify_unmodelled(V, e, e->span, FLOAT_SCAN);
    else f->acc = (VVal){identity(V, e->u.reduce.op, f->t, (unsigned)type_bits(f->t)), 0, NULL};
    const Type *it = e->u.reduce.var_sym ? e->u.reduce.var_sym->type : e->u.reduce.count->type;
    f->lo64 =
        e->u.reduce.lo ? verify_to_u64(V, verify_expr(V, e->u.reduce.lo).t, it) : verify_u64(V, 0);
    run_loop(V, L);
    return (VVal){NULL, 0, NULL};
}

VVal verify_reduce(Verifier *V, Expr *e) {
    if (e->u.reduce.mode == MODE_WARP) {
        verify_unmodelled(V, e, e->span, "a warp reduction");
        if (e->u.reduce.scan) return (VVal){NULL, 0, NULL};
        return verify_havoc(V, e->type, e->span, "a warp reduction");
    }
    const Type *t = e->u.reduce.scan ? e->u.reduce.body->type : e->type;
    bool pooled = e->u.reduce.mode == MODE_PARALLEL;
    Fold f = {.e = e,
              .t = t,
              .wide = !e->u.reduce.scan && type_is_int(t) && pooled && e->u.reduce.op == RED_ADD};
    Binder b = reduce_binder(e);
    Loop L = {.b = &b,
              .lanes = pooled && !e->u.reduce.scan,
              .expr = e,
              .body = fold_step,
              .fresh_state = fresh_acc,
              .ctx = &f};
    if (e->u.reduce.scan) return scan(V, e, &f, &L);
    if (type_is_int(t))
        f.acc =
            (VVal){identity(V, e->u.reduce.op, t, f.wide ? 128 : (unsigned)type_bits(t)), 0, NULL};
    V->in_parallel += L.lanes; /* a pooled reduction's terms are lanes: atomics see any order */
    run_loop(V, &L);
    V->in_parallel -= L.lanes;
    if (type_is_float(t)) {
        const char *what =
            pooled ? "a float reduction (reduce parallel)" : "a float reduction (reduce for)";
        verify_unmodelled(V, e, e->span, what);
        return verify_havoc(V, t, e->span, what);
    }
    return f.wide ? wide_result(V, &f) : f.acc;
}
