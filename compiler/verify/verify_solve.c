/* verify_solve.c: the queries behind each verdict.
 *
 * A query is the top function's prologue (`assume`: its requires, and its extents equal
 * to the views' lengths), the side facts about fresh terms, the property's violation and,
 * for the unrolled run, "no loop runs past --unwind", in a fresh solver under a share
 * of the property's resource budget (Z3's rlimit: it counts the solver's own work, so
 * the same query gets the same answer on any machine at any load) and the wall clock
 * left to the property's safety bound (--timeout), whose expiry the verdict reports. Formulas without floats go to Z3's QF_ABV solver, which decides 64-bit index
 * arithmetic several times faster than the default portfolio; with floats the default
 * picks the FP theory.
 *
 * The product abstraction. 64-bit products of two unknowns (`row * k`, the extent
 * `m * k`) make the bit-blasted formula huge: `a[row * k + t]` with row < m, t < k over
 * a view of m * k elements does not finish in 60 s. So an unsat answer is first sought
 * with every such product replaced by a fresh term p and its no-overflow test by a fresh
 * Boolean ok, related by facts true of unsigned multiplication: a zero factor gives 0, a
 * factor 1 gives the other; with no overflow p is at least each nonzero factor; and for
 * two products with a common factor c, a < b gives a*c + c <= b*c and b*c not
 * overflowing makes a*c not overflow either (and equal factors give equal products).
 * Every real run satisfies them, so unsat there is unsat for the real formula; sat
 * there proves nothing, and the real formula is asked.
 *
 * Shrinking. A counterexample is made small before it is written: the shortest views
 * first, then the smallest integers, then views holding one value and floats that are not
 * NaN, each asked of the solver in turn (kept when still a counterexample), within a
 * budget; so a replay allocates what the property needs and no more. */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "verify/verify_internal.h"
#include "lib/timing.h"

/* A set of AST ids (open addressing), for walking a formula's DAG once per node. */
typedef struct IdSet {
    unsigned *slot; /* id + 1, 0 when empty */
    size_t cap, n;
} IdSet;

static bool idset_add(IdSet *s, unsigned id) {
    if (2 * (s->n + 1) > s->cap) {
        IdSet bigger = {calloc(s->cap ? 2 * s->cap : 1024, sizeof(unsigned)),
                        s->cap ? 2 * s->cap : 1024, 0};
        if (!bigger.slot) abort();
        for (size_t i = 0; i < s->cap; i++)
            if (s->slot[i]) idset_add(&bigger, s->slot[i] - 1);
        free(s->slot);
        *s = bigger;
    }
    size_t i = (id * 2654435761u) & (s->cap - 1);
    while (s->slot[i]) {
        if (s->slot[i] == id + 1) return false;
        i = (i + 1) & (s->cap - 1);
    }
    s->slot[i] = id + 1;
    s->n++;
    return true;
}

/* Whether a term holds a floating-point subterm. */
static bool holds_float(Verifier *V, Z3_ast t, IdSet *seen) {
    Z3_context z = V->z;
    if (!idset_add(seen, Z3_get_ast_id(z, t))) return false;
    Z3_sort_kind k = Z3_get_sort_kind(z, Z3_get_sort(z, t));
    if (k == Z3_FLOATING_POINT_SORT || k == Z3_ROUNDING_MODE_SORT) return true;
    if (Z3_get_ast_kind(z, t) != Z3_APP_AST) return false;
    Z3_app app = Z3_to_app(z, t);
    for (unsigned i = 0; i < Z3_get_app_num_args(z, app); i++)
        if (holds_float(V, Z3_get_app_arg(z, app, i), seen)) return true;
    return false;
}

/* The wall clock left to the safety bound, in milliseconds for Z3 (at least 1). */
static unsigned ms_left(Verifier *V) {
    double ms = (V->deadline - timing_monotonic_seconds()) * 1000.0;
    return ms < 1 ? 1u : ms > 4e9 ? 4000000000u : (unsigned)ms;
}

/* Limits a solver to rlimit resource units (what decides: Z3 counts its own work, the
 * same on every machine) and to the wall clock left (the safety bound). */
static void set_limits(Verifier *V, Z3_solver s, unsigned rlimit) {
    Z3_params p = Z3_mk_params(V->z);
    Z3_params_inc_ref(V->z, p);
    Z3_params_set_uint(V->z, p, Z3_mk_string_symbol(V->z, "rlimit"), rlimit ? rlimit : 1);
    Z3_params_set_uint(V->z, p, Z3_mk_string_symbol(V->z, "timeout"), ms_left(V));
    Z3_solver_set_params(V->z, s, p);
    Z3_params_dec_ref(V->z, p);
}

/* After an unknown answer: whether the wall clock, not the resource count, stopped it.
 * Z3 says "canceled" for both in some paths (an incremental solver's rlimit), so the
 * clock decides: an answer within 50 ms of the bound counts as the bound's. */
static void note_expiry(Verifier *V, Z3_solver s) {
    const char *why = Z3_solver_get_reason_unknown(V->z, s);
    if ((why && strstr(why, "timeout")) || timing_monotonic_seconds() >= V->deadline - 0.05)
        V->expired = true;
}

/* The resource units the context has spent so far (its solvers' count is the context's),
 * modulo 2^32 as Z3 reports it: differences of two readings are exact below that. */
static unsigned spent(Verifier *V, Z3_solver s) {
    Z3_stats st = Z3_solver_get_statistics(V->z, s);
    Z3_stats_inc_ref(V->z, st);
    unsigned n = 0;
    for (unsigned i = 0; i < Z3_stats_size(V->z, st); i++)
        if (strcmp(Z3_stats_get_key(V->z, st, i), "rlimit count") == 0 &&
            Z3_stats_is_uint(V->z, st, i))
            n = Z3_stats_get_uint_value(V->z, st, i);
    Z3_stats_dec_ref(V->z, st);
    return n;
}

/* QF_ABV for a formula without floats (several times faster on index arithmetic than
 * the default portfolio), the default (which picks the FP theory) otherwise. */
static Z3_solver new_solver(Verifier *V, Z3_ast q, unsigned rlimit) {
    bool fp = V->has_float;
    if (fp) {
        IdSet seen = {0};
        fp = holds_float(V, q, &seen);
        free(seen.slot);
    }
    Z3_solver s =
        fp ? Z3_mk_solver(V->z) : Z3_mk_solver_for_logic(V->z, Z3_mk_string_symbol(V->z, "QF_ABV"));
    Z3_solver_inc_ref(V->z, s);
    set_limits(V, s, rlimit);
    return s;
}

/* Every integer input and view length within 256 (signed: -256 .. 256). */
static Z3_ast small_inputs(Verifier *V) {
    Z3_context z = V->z;
    Z3_ast all = Z3_mk_true(z);
    for (int i = 0; i < V->ninputs; i++) {
        const VCell *c = &V->inputs[i];
        Z3_ast v = c->array ? c->len : c->val;
        const Type *t = c->array ? type_scalar(TY_U64) : c->elem;
        if (!c->array && !type_is_int(t)) continue;
        Z3_ast lim = verify_int_const(V, t, 256);
        Z3_ast ok =
            type_is_signed(t) && type_bits(t) > 9
                ? verify_and(V, Z3_mk_bvsle(z, v, lim), Z3_mk_bvsge(z, v, Z3_mk_bvneg(z, lim)))
            : type_is_signed(t) || type_bits(t) <= 8 ? Z3_mk_true(z)
                                                     : Z3_mk_bvule(z, v, lim);
        all = verify_and(V, all, ok);
    }
    return all;
}

static Z3_ast query(Verifier *V, Z3_ast f, int within) {
    Z3_ast parts[5] = {V->assume, V->side, f, Z3_mk_true(V->z), Z3_mk_true(V->z)};
    int w = within & 7;
    if (w >= VERIFY_WITHIN_SMALL) parts[3] = Z3_mk_not(V->z, V->beyond_at[w - VERIFY_WITHIN_SMALL]);
    if (within & VERIFY_SMALL_INPUTS) parts[4] = small_inputs(V);
    return Z3_mk_and(V->z, 5, parts);
}

void verify_note_mul(Verifier *V, Z3_ast x, Z3_ast y, Z3_ast p, Z3_ast ok) {
    for (int i = 0; i < V->nmuls; i++)
        if (V->muls[i].p == p) return;
    if (V->nmuls < VERIFY_MAX_MULS) V->muls[V->nmuls++] = (VMul){x, y, p, ok};
}

/* ---- the product abstraction ---- */

typedef struct Abs {
    Z3_ast P[VERIFY_MAX_MULS], N[VERIFY_MAX_MULS];
    Z3_ast *lemmas;
    int nlemmas, cap;
} Abs;

static void lemma(Verifier *V, Abs *A, Z3_ast when, Z3_ast then) {
    if (A->nlemmas == A->cap) {
        A->cap = A->cap ? 2 * A->cap : 64;
        A->lemmas = realloc(A->lemmas, sizeof *A->lemmas * (size_t)A->cap);
        if (!A->lemmas) abort();
    }
    A->lemmas[A->nlemmas++] = Z3_mk_implies(V->z, when, then);
}

/* The facts of one product p = x * y with no-overflow test ok. */
static void single_lemmas(Verifier *V, Abs *A, int i) {
    Z3_context z = V->z;
    const VMul *m = &V->muls[i];
    Z3_ast P = A->P[i], N = A->N[i];
    Z3_sort s = Z3_get_sort(z, m->p);
    Z3_ast zero = Z3_mk_int(z, 0, s), one = Z3_mk_int(z, 1, s);
    lemma(V, A, verify_or(V, Z3_mk_eq(z, m->x, zero), Z3_mk_eq(z, m->y, zero)),
          verify_and(V, Z3_mk_eq(z, P, zero), N));
    lemma(V, A, Z3_mk_eq(z, m->x, one), verify_and(V, Z3_mk_eq(z, P, m->y), N));
    lemma(V, A, Z3_mk_eq(z, m->y, one), verify_and(V, Z3_mk_eq(z, P, m->x), N));
    lemma(V, A, verify_and(V, N, Z3_mk_not(z, Z3_mk_eq(z, m->x, zero))), Z3_mk_bvuge(z, P, m->y));
    lemma(V, A, verify_and(V, N, Z3_mk_not(z, Z3_mk_eq(z, m->y, zero))), Z3_mk_bvuge(z, P, m->x));
}

/* Products i = a * c and j = b * c (c a common factor, in either place). */
static void pair_lemmas(Verifier *V, Abs *A, int i, int j) {
    Z3_context z = V->z;
    const VMul *mi = &V->muls[i], *mj = &V->muls[j];
    if (Z3_get_sort(z, mi->p) != Z3_get_sort(z, mj->p)) return;
    Z3_ast fi[2] = {mi->x, mi->y}, fj[2] = {mj->x, mj->y};
    Z3_ast same = verify_and(V, Z3_mk_eq(z, A->P[i], A->P[j]), Z3_mk_eq(z, A->N[i], A->N[j]));
    lemma(V, A,
          verify_or(V, verify_and(V, Z3_mk_eq(z, mi->x, mj->x), Z3_mk_eq(z, mi->y, mj->y)),
                    verify_and(V, Z3_mk_eq(z, mi->x, mj->y), Z3_mk_eq(z, mi->y, mj->x))),
          same);
    for (int u = 0; u < 2; u++)
        for (int v = 0; v < 2; v++) {
            if (fi[u] != fj[v]) continue;
            Z3_ast c = fi[u], a = fi[1 - u], b = fj[1 - v];
            Z3_ast Pi = A->P[i], Pj = A->P[j], both = verify_and(V, A->N[i], A->N[j]);
            Z3_ast up = Z3_mk_bvadd(z, Pi, c);
            lemma(V, A, verify_and(V, both, Z3_mk_bvult(z, a, b)),
                  verify_and(V, Z3_mk_bvule(z, up, Pj), Z3_mk_bvule(z, Pi, up)));
            lemma(V, A, verify_and(V, A->N[j], Z3_mk_bvule(z, a, b)), A->N[i]);
        }
}

/* Every node of a term, once. */
static void collect_ids(Verifier *V, Z3_ast t, IdSet *seen) {
    Z3_context z = V->z;
    if (!idset_add(seen, Z3_get_ast_id(z, t)) || Z3_get_ast_kind(z, t) != Z3_APP_AST) return;
    Z3_app app = Z3_to_app(z, t);
    for (unsigned i = 0; i < Z3_get_app_num_args(z, app); i++)
        collect_ids(V, Z3_get_app_arg(z, app, i), seen);
}

/* f with every noted product it holds and their overflow tests replaced, and the facts
 * added; NULL when it holds none. */
static Z3_ast abstracted(Verifier *V, Z3_ast f) {
    Z3_context z = V->z;
    Abs A = {0};
    Z3_ast from[2 * VERIFY_MAX_MULS], to[2 * VERIFY_MAX_MULS];
    IdSet in_f = {0};
    collect_ids(V, f, &in_f);
    VMul every[VERIFY_MAX_MULS];
    int n = 0, total = V->nmuls;
    memcpy(every, V->muls, sizeof every);
    for (int i = 0; i < total; i++) /* those f holds (adding an id again fails) */
        if (!idset_add(&in_f, Z3_get_ast_id(z, every[i].p)) ||
            !idset_add(&in_f, Z3_get_ast_id(z, every[i].ok)))
            V->muls[n++] = every[i];
    free(in_f.slot);
    V->nmuls = n;
    for (int i = 0; i < n; i++) {
        A.P[i] = verify_fresh(V, "product", Z3_get_sort(z, V->muls[i].p));
        A.N[i] = verify_fresh(V, "fits", Z3_mk_bool_sort(z));
        from[i] = V->muls[i].p, to[i] = A.P[i];
        from[n + i] = V->muls[i].ok, to[n + i] = A.N[i];
    }
    for (int i = 0; i < n; i++) single_lemmas(V, &A, i);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j) pair_lemmas(V, &A, i, j);
    memcpy(V->muls, every, sizeof every);
    V->nmuls = total;
    if (n == 0) {
        free(A.lemmas);
        return NULL;
    }
    lemma(V, &A, Z3_mk_true(z), f);
    Z3_ast all = Z3_mk_and(z, (unsigned)A.nlemmas, A.lemmas);
    free(A.lemmas);
    return Z3_substitute(z, all, 2u * (unsigned)n, from, to);
}

/* ---- queries ---- */

static Z3_lbool solve(Verifier *V, Z3_ast q, unsigned rlimit, Z3_model *model,
                      const char **reason) {
    double t0 = timing_monotonic_seconds();
    if (t0 >= V->deadline) { /* the safety bound is spent: no query is asked */
        V->expired = true;
        return Z3_L_UNDEF;
    }
    Z3_solver s = new_solver(V, q, rlimit);
    unsigned before = getenv("CAIRN_VERIFY_DEBUG") ? spent(V, s) : 0;
    Z3_solver_assert(V->z, s, q);
    if (getenv("CAIRN_VERIFY_SMT2")) {
        static int nq;
        char path[256];
        snprintf(path, sizeof path, "%s/q%03d.smt2", getenv("CAIRN_VERIFY_SMT2"), nq++);
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "%s\n(check-sat)\n", Z3_solver_to_string(V->z, s));
            fclose(f);
        }
    }
    Z3_lbool r = Z3_solver_check(V->z, s);
    if (r == Z3_L_TRUE && model) {
        *model = Z3_solver_get_model(V->z, s);
        Z3_model_inc_ref(V->z, *model);
    }
    if (r == Z3_L_UNDEF) note_expiry(V, s);
    if (r == Z3_L_UNDEF && reason)
        *reason = arena_strdup(V->prog->arena, Z3_solver_get_reason_unknown(V->z, s));
    if (getenv("CAIRN_VERIFY_DEBUG"))
        fprintf(stderr, "  [query %.2f s, %llu of %u units: %s]\n", timing_monotonic_seconds() - t0,
                (unsigned long long)(spent(V, s) - before), rlimit,
                r == Z3_L_TRUE    ? "sat"
                : r == Z3_L_FALSE ? "unsat"
                                  : "unknown");
    Z3_solver_dec_ref(V->z, s);
    return r;
}

Z3_lbool verify_check(Verifier *V, VQuery q, Z3_model *model, const char **reason) {
    Z3_ast f = query(V, q.f, q.within);
    Z3_ast abs = V->nmuls > 0 ? abstracted(V, f) : NULL;
    if (abs && solve(V, abs, q.rlimit / 5 * 2, NULL, NULL) == Z3_L_FALSE) return Z3_L_FALSE;
    return solve(V, f, q.rlimit, model, reason);
}

/* ---- shrinking a counterexample ---- */

/* Shrinking spends at most `share` of the budget's units from the context's count at
 * `start`, each try at most a sixth of that; the wall-clock bound also stops it. */
typedef struct Shrink {
    Z3_solver s;
    Z3_model *model;
    unsigned start, share;
} Shrink;

static unsigned shrink_left(Verifier *V, const Shrink *S) {
    unsigned used = spent(V, S->s) - S->start;
    if (timing_monotonic_seconds() >= V->deadline) return 0;
    return used >= S->share ? 0 : S->share - used;
}

static bool shrink_spent(Verifier *V, const Shrink *S) { return shrink_left(V, S) == 0; }

/* Keeps c when the violation still holds with it (the model follows). */
static bool try_keep(Verifier *V, Shrink *S, Z3_ast c) {
    unsigned left = shrink_left(V, S), per_try = S->share / 6 ? S->share / 6 : 1;
    if (left == 0) return false;
    set_limits(V, S->s, left < per_try ? left : per_try);
    Z3_solver_push(V->z, S->s);
    Z3_solver_assert(V->z, S->s, c);
    Z3_lbool r = Z3_solver_check(V->z, S->s);
    if (r == Z3_L_UNDEF) note_expiry(V, S->s);
    if (r != Z3_L_TRUE) {
        Z3_solver_pop(V->z, S->s, 1);
        return false;
    }
    Z3_model m = Z3_solver_get_model(V->z, S->s);
    Z3_model_inc_ref(V->z, m);
    Z3_model_dec_ref(V->z, *S->model);
    *S->model = m;
    return true;
}

/* The least value of t (unsigned, or by magnitude when sign) that keeps the violation:
 * doubling bounds, then halving the last step. */
static void smallest(Verifier *V, Shrink *S, Z3_ast t, bool sign) {
    Z3_context z = V->z;
    Z3_sort s = Z3_get_sort(z, t);
    unsigned w = Z3_get_bv_sort_size(z, s);
    uint64_t limit = w == 64 ? ~(uint64_t)0 : ((uint64_t)1 << w) - 1;
    uint64_t lo = 0, hi = 0;
    for (;;) { /* within(hi) holds for some hi: find the least power of two */
        Z3_ast bound = Z3_mk_unsigned_int64(z, hi, s);
        Z3_ast within =
            sign ? verify_and(V, Z3_mk_bvsle(z, t, bound), Z3_mk_bvsge(z, t, Z3_mk_bvneg(z, bound)))
                 : Z3_mk_bvule(z, t, bound);
        if (try_keep(V, S, within)) break;
        uint64_t top = sign ? limit >> 1 : limit;
        if (hi >= top || shrink_spent(V, S)) return;
        lo = hi + 1;
        hi = hi > (top - 1) / 2 ? top : 2 * hi + 1;
    }
    while (lo < hi && !shrink_spent(V, S)) {
        uint64_t mid = lo + (hi - lo) / 2;
        Z3_ast bound = Z3_mk_unsigned_int64(z, mid, s);
        Z3_ast within =
            sign ? verify_and(V, Z3_mk_bvsle(z, t, bound), Z3_mk_bvsge(z, t, Z3_mk_bvneg(z, bound)))
                 : Z3_mk_bvule(z, t, bound);
        if (try_keep(V, S, within)) hi = mid;
        else lo = mid + 1;
    }
}

static Z3_ast zero_stored(Verifier *V, const Type *t) {
    if (t->kind == TY_BOOL) return Z3_mk_false(V->z);
    return Z3_mk_int(V->z, 0, verify_cell_sort(V, t));
}

static Z3_ast not_nan(Verifier *V, const Type *t, Z3_ast stored) {
    return Z3_mk_not(V->z,
                     Z3_mk_fpa_is_nan(V->z, Z3_mk_fpa_to_fp_bv(V->z, stored, verify_sort(V, t))));
}

void verify_shrink(Verifier *V, Z3_ast f, int within, Z3_ast others, Z3_model *model) {
    unsigned share = V->opt->budget / 10 * 3;
    Z3_ast q = query(V, f, within);
    Shrink S = {new_solver(V, q, share), model, 0, share};
    S.start = spent(V, S.s);
    Z3_solver_assert(V->z, S.s, q);
    try_keep(V, &S, Z3_mk_not(V->z, others)); /* the replay traps here, not elsewhere first */
    for (int i = 0; i < V->ninputs; i++)      /* the shortest views */
        if (V->inputs[i].array) smallest(V, &S, V->inputs[i].len, false);
    for (int i = 0; i < V->ninputs; i++) { /* the smallest integers */
        const VCell *c = &V->inputs[i];
        if (!c->array && type_is_int(c->elem)) smallest(V, &S, c->val, type_is_signed(c->elem));
    }
    for (int i = 0; i < V->ninputs; i++) { /* views of one value, floats that are not NaN */
        const VCell *c = &V->inputs[i];
        Z3_ast zero = zero_stored(V, c->elem);
        if (c->array) {
            Z3_ast all = Z3_mk_const_array(V->z, Z3_mk_bv_sort(V->z, 64), zero);
            if (try_keep(V, &S, Z3_mk_eq(V->z, c->val, all))) continue;
            for (uint64_t k = 0; k < 16; k++) { /* else zeros where the violation allows */
                Z3_ast at = verify_u64(V, k);
                Z3_ast zeroed = Z3_mk_eq(V->z, Z3_mk_select(V->z, c->val, at), zero);
                try_keep(V, &S, verify_and(V, Z3_mk_bvult(V->z, at, c->len), zeroed));
            }
        } else if (type_is_compute_float(c->elem) && !try_keep(V, &S, Z3_mk_eq(V->z, c->val, zero)))
            try_keep(V, &S, not_nan(V, c->elem, c->val));
    }
    if (getenv("CAIRN_VERIFY_DEBUG"))
        fprintf(stderr, "  [shrink: %u units left]\n", shrink_left(V, &S));
    Z3_solver_dec_ref(V->z, S.s);
}

/* ---- what a replay can allocate ---- */

static uint64_t elem_bytes(const Type *t) {
    return t->kind == TY_BOOL ? 1 : (uint64_t)type_bits(t) / 8;
}

bool verify_replayable(Verifier *V, Z3_model m) {
    double bytes = 0;
    for (int i = 0; i < V->ninputs; i++) {
        const VCell *c = &V->inputs[i];
        Z3_ast v = NULL;
        uint64_t len = 0;
        if (!c->array) continue;
        if (Z3_model_eval(V->z, m, c->len, true, &v) && v) Z3_get_numeral_uint64(V->z, v, &len);
        bytes += (double)len * (double)elem_bytes(c->elem);
    }
    return bytes <= (double)VERIFY_REPLAY_BYTES;
}

Z3_ast verify_replay_fits(Verifier *V) {
    int views = 0;
    for (int i = 0; i < V->ninputs; i++) views += V->inputs[i].array;
    Z3_ast all = Z3_mk_true(V->z);
    for (int i = 0; i < V->ninputs; i++) {
        const VCell *c = &V->inputs[i];
        if (!c->array) continue;
        uint64_t share = VERIFY_REPLAY_BYTES / (uint64_t)views / elem_bytes(c->elem);
        all = verify_and(V, all, Z3_mk_bvule(V->z, c->len, verify_u64(V, share)));
    }
    return all;
}
