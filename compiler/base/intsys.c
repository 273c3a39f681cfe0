/* intsys.c: feasibility of small integer linear systems (base.h says what it promises).
 *
 * The method: eliminate every equality with a unit coefficient exactly (substitution);
 * split an equality without one on a variable of small range (divisibility is not an
 * inequality's to say); relax the rest into two inequalities; then eliminate one
 * variable at a time by Fourier-Motzkin, preferring one whose lower or upper bounds all
 * have coefficient 1 (the Omega test's exact shadow loses no integer solution) and trying
 * a variable of a few values value by value when no exact elimination is left. Every
 * derived row is divided by the gcd of its coefficients, an inequality's constant rounded
 * down (integer tightening). Each step keeps every integer solution, so a contradiction
 * proves none exists; a step that would leave int64, or a system past MAXROWS rows or the
 * split budget, stops with "maybe".
 *
 * No value of a row is ever INT64_MIN (the entry refuses it and combine() never makes it),
 * so negating a coefficient or a constant cannot overflow. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

enum {
    MAXROWS = 3000,      /* rows a system may grow to before the answer is "maybe" */
    SPLIT_BUDGET = 2048, /* values tried by splits, all nested splits together */
    SPLIT_EQ_RANGE = 64, /* an equality is split on a variable of at most 65 values */
    SPLIT_FM_RANGE = 16  /* an inexact elimination gives way to a split up to 17 values */
};
static const long INEXACT = 1000000L; /* cost added to an elimination that may lose solutions */

IntRow *intsys_row(IntSys *s, bool eq) {
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->rows = realloc(s->rows, sizeof(IntRow) * (size_t)s->cap);
        if (!s->rows) abort();
    }
    IntRow *r = &s->rows[s->n++];
    memset(r, 0, sizeof *r);
    r->eq = eq;
    return r;
}

void intsys_free(IntSys *s) {
    free(s->rows);
    s->rows = NULL;
    s->n = s->cap = 0;
}

static int64_t gcd64(int64_t a, int64_t b) { /* neither is INT64_MIN */
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int64_t floor_div(int64_t a, int64_t b) {
    assert(b > 0);
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* hi - lo, saturated: INT64_MAX when it leaves int64 above, -1 for an empty range. */
static int64_t width(int64_t lo, int64_t hi) {
    int64_t w;
    if (hi < lo) return -1;
    return __builtin_sub_overflow(hi, lo, &w) ? INT64_MAX : w;
}

/* Divides a row by the gcd of its coefficients (an inequality's constant rounds down:
 * the integer tightening). Returns -1 for a contradiction, 0 for a row to drop (all
 * coefficients zero and true), 1 to keep. */
static int normalize(IntRow *r, int nv) {
    int64_t g = 0;
    for (int i = 0; i < nv; i++) g = gcd64(g, r->a[i]);
    if (g == 0) return r->eq ? (r->c == 0 ? 0 : -1) : (r->c >= 0 ? 0 : -1);
    if (r->eq && r->c % g != 0) return -1;
    for (int i = 0; i < nv; i++) r->a[i] /= g;
    r->c = r->eq ? r->c / g : floor_div(r->c, g);
    return 1;
}

/* dst = x + y * z, false when it leaves int64 or is INT64_MIN (which nothing may hold). */
static bool mul_add(int64_t *dst, int64_t x, int64_t y, int64_t z) {
    int64_t m;
    return !__builtin_mul_overflow(y, z, &m) && !__builtin_add_overflow(x, m, dst) &&
           *dst != INT64_MIN;
}

/* A row times a factor, one side of combine(). */
typedef struct Scaled {
    const IntRow *row;
    int64_t by;
} Scaled;

/* out = p * x + q * y for xs = (x, p), ys = (y, q), checked (out may be x or y). */

static bool combine(IntRow *out, Scaled xs, Scaled ys, int nv) {
    const IntRow *x = xs.row, *y = ys.row;
    int64_t p = xs.by, q = ys.by, u;
    for (int i = 0; i < nv; i++) {
        if (__builtin_mul_overflow(x->a[i], p, &u) || !mul_add(&out->a[i], u, y->a[i], q))
            return false;
    }
    return !__builtin_mul_overflow(x->c, p, &u) && mul_add(&out->c, u, y->c, q);
}

/* Substitutes equality ei (coefficient +-1 on v) into every other row and drops it. */
static bool substitute(IntSys *s, int ei, int v) {
    IntRow e = s->rows[ei];
    assert(e.eq && (e.a[v] == 1 || e.a[v] == -1));
    for (int i = 0; i < s->n; i++) {
        if (i == ei || s->rows[i].a[v] == 0) continue;
        IntRow out = s->rows[i];
        /* row - (b / a) * e, with a = +-1: row * 1 + e * (-b * a) */
        if (!combine(&out, (Scaled){&s->rows[i], 1}, (Scaled){&e, -s->rows[i].a[v] * e.a[v]},
                     s->nv))
            return false;
        assert(out.a[v] == 0);
        out.eq = s->rows[i].eq;
        s->rows[i] = out;
    }
    s->rows[ei] = s->rows[--s->n];
    return true;
}

/* Cleans rows: normalizes, drops trivial ones. Returns false on a contradiction. */
static bool sys_clean(IntSys *s) {
    for (int i = 0; i < s->n;) {
        int k = normalize(&s->rows[i], s->nv);
        if (k < 0) return false;
        if (k == 0) s->rows[i] = s->rows[--s->n];
        else i++;
    }
    return true;
}

/* Two inequalities a.x + c >= 0 and -a.x - c >= 0 say a.x + c = 0: an equality the
 * exact elimination below can use (a thread's r1 <= r2 and r2 <= r1 become r1 = r2). */
static void find_implied_equalities(IntSys *s) {
    for (int i = 0; i < s->n; i++) {
        if (s->rows[i].eq) continue;
        for (int j = i + 1; j < s->n; j++) {
            if (s->rows[j].eq || s->rows[i].c != -s->rows[j].c) continue;
            bool opposite = true;
            for (int v = 0; v < s->nv && opposite; v++)
                opposite = s->rows[i].a[v] == -s->rows[j].a[v];
            if (!opposite) continue;
            s->rows[i].eq = true;
            s->rows[j] = s->rows[--s->n];
            break;
        }
    }
}

/* Substitutes equalities with a unit coefficient until none is left. False: proven
 * infeasible; an overflow sets s->overflow and returns true. */
static bool eliminate_equalities(IntSys *s) {
    for (;;) {
        if (!sys_clean(s)) return false;
        find_implied_equalities(s);
        int ei = -1, v = -1;
        for (int i = 0; i < s->n && ei < 0; i++) {
            if (!s->rows[i].eq) continue;
            for (int j = 0; j < s->nv; j++)
                if (s->rows[i].a[j] == 1 || s->rows[i].a[j] == -1) {
                    ei = i;
                    v = j;
                    break;
                }
        }
        if (ei < 0) break;
        if (!substitute(s, ei, v)) {
            s->overflow = true;
            return true;
        }
    }
    return true;
}

/* Equalities without a unit coefficient: as two inequalities (the same integer set). */
static bool relax_equalities(IntSys *s) {
    int n = s->n;
    for (int i = 0; i < n; i++) {
        if (!s->rows[i].eq) continue;
        s->rows[i].eq = false;
        IntRow *neg = intsys_row(s, false);
        for (int j = 0; j < s->nv; j++) neg->a[j] = -s->rows[i].a[j];
        neg->c = -s->rows[i].c;
    }
    return sys_clean(s);
}

/* The constant bounds rows of one variable give it (lo <= v <= hi); false if unbounded. */
static bool var_range(const IntSys *s, int v, int64_t *lo, int64_t *hi) {
    bool has_lo = false, has_hi = false;
    for (int i = 0; i < s->n; i++) {
        const IntRow *r = &s->rows[i];
        bool single = r->a[v] != 0;
        for (int j = 0; j < s->nv && single; j++) single = j == v || r->a[j] == 0;
        if (!single || r->eq) continue;
        if (r->a[v] > 0) { /* a v + c >= 0: v >= ceil(-c / a) */
            int64_t b = -floor_div(r->c, r->a[v]);
            if (!has_lo || b > *lo) *lo = b;
            has_lo = true;
        } else { /* -a v + c >= 0: v <= floor(c / a) */
            int64_t b = floor_div(r->c, -r->a[v]);
            if (!has_hi || b < *hi) *hi = b;
            has_hi = true;
        }
    }
    return has_lo && has_hi;
}

static bool feasible_within(IntSys *s, int *budget);

/* Tries each value lo..hi of variable v: feasible when one value is. Returns 1 (maybe),
 * 0 (none), or -1 when the budget does not cover the values. */
static int split_on(IntSys *s, int v, int64_t lo, int64_t hi, int *budget) {
    int64_t w = width(lo, hi);
    assert(w <= SPLIT_EQ_RANGE);
    if (w < 0) return 0; /* an empty range: no value */
    if (*budget < w + 1) return -1;
    *budget -= (int)(w + 1);
    for (int64_t k = 0; k <= w; k++) {
        IntSys t = {.nv = s->nv};
        for (int i = 0; i < s->n; i++) *intsys_row(&t, s->rows[i].eq) = s->rows[i];
        IntRow *fix = intsys_row(&t, true);
        fix->a[v] = 1;
        fix->c = -(lo + k); /* lo + k lies in lo..hi, neither of which is INT64_MIN */
        bool ok = feasible_within(&t, budget);
        s->overflow |= t.overflow;
        intsys_free(&t);
        if (ok) return 1;
    }
    return 0;
}

/* An equality with no unit coefficient (16 t1 - 16 t2 - 31 b + 2 = 0) needs divisibility,
 * which inequalities cannot say: when one of its variables has a small range, try each
 * value. Returns -1 when no such variable (or no budget) is left, else split_on's answer. */
static int split_equality(IntSys *s, int *budget) {
    int best = -1;
    int64_t blo = 0, bhi = 0;
    for (int i = 0; i < s->n; i++) {
        if (!s->rows[i].eq) continue;
        for (int v = 0; v < s->nv; v++) {
            int64_t lo = 0, hi = 0;
            if (!s->rows[i].a[v] || !var_range(s, v, &lo, &hi)) continue;
            if (best < 0 || width(lo, hi) < width(blo, bhi)) {
                best = v;
                blo = lo;
                bhi = hi;
            }
        }
    }
    if (best < 0 || width(blo, bhi) > SPLIT_EQ_RANGE) return -1;
    return split_on(s, best, blo, bhi, budget);
}

/* No exact elimination is left: a variable of a few values is tried value by value
 * instead, which keeps the answer exact (t / 64 in {0, 1}). -1: none, or no budget. */
static int split_small(IntSys *s, int *budget) {
    int pick = -1;
    int64_t plo = 0, phi = 0;
    for (int v = 0; v < s->nv; v++) {
        int64_t lo = 0, hi = 0;
        if (var_range(s, v, &lo, &hi) && lo < hi && width(lo, hi) <= SPLIT_FM_RANGE &&
            (pick < 0 || width(lo, hi) < width(plo, phi)))
            pick = v, plo = lo, phi = hi;
    }
    return pick >= 0 ? split_on(s, pick, plo, phi, budget) : -1;
}

/* The variable to eliminate next: fewest new rows, an exact one (every lower or every
 * upper bound with coefficient 1) before any other, whose cost gets INEXACT added.
 * -1 when no row mentions a variable. */
static int pick_variable(const IntSys *s, long *cost_out) {
    int best = -1;
    long best_cost = 0;
    for (int v = 0; v < s->nv; v++) {
        long pos = 0, neg = 0;
        bool unit_pos = true, unit_neg = true;
        for (int i = 0; i < s->n; i++) {
            int64_t a = s->rows[i].a[v];
            pos += a > 0, neg += a < 0;
            unit_pos &= a <= 1;
            unit_neg &= a >= -1;
        }
        if (pos + neg == 0) continue;
        long cost = pos * neg - pos - neg + (unit_pos || unit_neg ? 0 : INEXACT);
        if (best < 0 || cost < best_cost) {
            best = v;
            best_cost = cost;
        }
    }
    *cost_out = best_cost;
    return best;
}

/* Fourier-Motzkin on v: every pair of a lower and an upper bound makes a row without v,
 * then the rows with v go. Returns -1 (a contradiction), 0 (gave up: too many rows or an
 * overflow) or 1 (go on). */
static int eliminate_variable(IntSys *s, int v) {
    int n = s->n;
    for (int i = 0; i < n; i++) {
        if (s->rows[i].a[v] <= 0) continue;
        for (int j = 0; j < n; j++) {
            if (s->rows[j].a[v] >= 0) continue;
            if (s->n >= MAXROWS) return 0;
            IntRow *r = intsys_row(s, false);
            if (!combine(r, (Scaled){&s->rows[i], -s->rows[j].a[v]},
                         (Scaled){&s->rows[j], s->rows[i].a[v]}, s->nv)) {
                s->overflow = true;
                return 0;
            }
            assert(r->a[v] == 0);
            int k = normalize(r, s->nv);
            if (k < 0) return -1;
            if (k == 0) s->n--;
        }
    }
    for (int i = 0; i < s->n;) {
        if (s->rows[i].a[v] != 0) s->rows[i] = s->rows[--s->n];
        else i++;
    }
    return 1;
}

/* Whether the system may have an integer solution (false: proven none), spending at
 * most *budget values on splits. */
static bool feasible_within(IntSys *s, int *budget) {
    for (;;) {
        if (!eliminate_equalities(s)) return false; /* also those each step implies */
        if (s->overflow) return true;
        int split = split_equality(s, budget);
        if (split >= 0) return split;
        if (!relax_equalities(s)) return false;
        long cost;
        int v = pick_variable(s, &cost);
        if (v < 0) return true; /* only constants left, all true */
        if (cost >= INEXACT && (split = split_small(s, budget)) >= 0) return split;
        int k = eliminate_variable(s, v);
        if (k <= 0) return k == 0;
    }
}

/* Whether the rows are in the solver's domain: unknowns from nv on unused, and no
 * INT64_MIN (whose negation leaves int64). */
static bool in_domain(const IntSys *s) {
    for (int i = 0; i < s->n; i++) {
        const IntRow *r = &s->rows[i];
        for (int j = s->nv; j < INTSYS_MAXV; j++) assert(r->a[j] == 0);
        if (r->c == INT64_MIN) return false;
        for (int j = 0; j < s->nv; j++)
            if (r->a[j] == INT64_MIN) return false;
    }
    return true;
}

IntSysAnswer intsys_feasible(IntSys *s) {
    assert(s->nv >= 0 && s->nv <= INTSYS_MAXV);
    assert(s->n >= 0 && s->n <= s->cap);
    if (!in_domain(s)) {
        s->overflow = true;
        return INTSYS_MAYBE;
    }
    int budget = SPLIT_BUDGET;
    return feasible_within(s, &budget) ? INTSYS_MAYBE : INTSYS_INFEASIBLE;
}
