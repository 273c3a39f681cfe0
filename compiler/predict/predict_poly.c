/* predict_poly.c: the polynomials `cairn predict` counts with, and their atoms.
 *
 * A polynomial is a sum of coef * prod(atom_k ^ pow_k). An atom is a parameter (bound
 * by --size), a loop variable (summed out when its loop closes: never in a result), or
 * derived from other polynomials: a quotient or remainder (`n / T`, `n >> 2`, `n % 8`),
 * a min or max, or the indicator [x > 0] that gates a range which may be empty. A
 * derived atom gets its value from its operands once the parameters are bound, so
 * `(n / 16)` is a number under --size n=4096. Anything else is an opaque atom spelled as
 * the source, never bound. Sums over a loop variable use Faulhaber's formulas: the sum
 * of i^e for i in lo..hi is F_e(hi) - F_e(lo), with F_e(m) = sum of i^e for i in 0..m. */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "predict/predict.h"

void predict_poly_free(Poly *p) {
    free(p->t);
    p->t = NULL;
    p->n = 0;
}

bool predict_poly_is_zero(const Poly *p) {
    for (int i = 0; i < p->n; i++)
        if (p->t[i].coef != 0) return false;
    return true;
}

static void add_term(Poly *p, const PTerm *t) {
    if (t->coef == 0) return;
    for (int i = 0; i < p->n; i++)
        if (memcmp(p->t[i].pow, t->pow, sizeof t->pow) == 0) {
            p->t[i].coef += t->coef;
            return;
        }
    p->t = realloc(p->t, sizeof *p->t * (size_t)(p->n + 1));
    if (!p->t) abort();
    p->t[p->n++] = *t;
}

Poly predict_poly_const(double c) {
    Poly p = {0};
    PTerm t = {.coef = c};
    add_term(&p, &t);
    return p;
}

Poly predict_poly_copy(const Poly *a) {
    Poly p = {0};
    for (int i = 0; i < a->n; i++) add_term(&p, &a->t[i]);
    return p;
}

void predict_poly_add(Poly *acc, const Poly *a, double scale) {
    for (int i = 0; i < a->n; i++) {
        PTerm t = a->t[i];
        t.coef *= scale;
        add_term(acc, &t);
    }
}

Poly predict_poly_mul(const Poly *a, const Poly *b) {
    Poly p = {0};
    for (int i = 0; i < a->n; i++)
        for (int j = 0; j < b->n; j++) {
            PTerm t = {.coef = a->t[i].coef * b->t[j].coef};
            for (int k = 0; k < PRED_MAX_ATOMS; k++) {
                assert(a->t[i].pow[k] + b->t[j].pow[k] <= UCHAR_MAX); /* powers never wrap */
                t.pow[k] = (unsigned char)(a->t[i].pow[k] + b->t[j].pow[k]);
            }
            add_term(&p, &t);
        }
    return p;
}

bool predict_poly_const_value(const Poly *p, double *out) {
    double v = 0;
    for (int i = 0; i < p->n; i++) {
        for (int k = 0; k < PRED_MAX_ATOMS; k++)
            if (p->t[i].pow[k]) return false;
        v += p->t[i].coef;
    }
    *out = v;
    return true;
}

bool predict_poly_uses(const Poly *p, int atom) {
    assert(atom >= 0 && atom < PRED_MAX_ATOMS);
    for (int i = 0; i < p->n; i++)
        if (p->t[i].coef != 0 && p->t[i].pow[atom]) return true;
    return false;
}

bool predict_poly_eval(const Poly *p, const double *values, double *out) {
    double sum = 0;
    for (int i = 0; i < p->n; i++) {
        double term = p->t[i].coef;
        for (int k = 0; k < PRED_MAX_ATOMS; k++) {
            if (!p->t[i].pow[k]) continue;
            if (isnan(values[k])) return false;
            term *= pow(values[k], p->t[i].pow[k]);
        }
        sum += term;
    }
    *out = sum;
    return true;
}

/* p with atom a replaced by the polynomial v. */
Poly predict_poly_subst(const Poly *p, int a, const Poly *v) {
    assert(a >= 0 && a < PRED_MAX_ATOMS);
    Poly out = {0};
    for (int i = 0; i < p->n; i++) {
        PTerm rest = p->t[i];
        int e = rest.pow[a];
        rest.pow[a] = 0;
        Poly acc = {0};
        add_term(&acc, &rest);
        for (int k = 0; k < e; k++) {
            Poly next = predict_poly_mul(&acc, v);
            predict_poly_free(&acc);
            acc = next;
        }
        predict_poly_add(&out, &acc, 1);
        predict_poly_free(&acc);
    }
    return out;
}

/* F_e(m) = sum of i^e for i in 0..m, as coefficients of m^0 .. m^(e+1). */
static const double FAULHABER[5][6] = {
    {0, 1},
    {0, -1.0 / 2, 1.0 / 2},
    {0, 1.0 / 6, -1.0 / 2, 1.0 / 3},
    {0, 0, 1.0 / 4, -1.0 / 2, 1.0 / 4},
    {0, -1.0 / 30, 0, 1.0 / 3, -1.0 / 2, 1.0 / 5},
};

static Poly faulhaber(int e, const Poly *m) {
    assert(e >= 0 && e < (int)(sizeof FAULHABER / sizeof FAULHABER[0])); /* the table's rows */
    Poly out = {0}, power = predict_poly_const(1);
    for (int j = 0; j <= e + 1; j++) {
        predict_poly_add(&out, &power, FAULHABER[e][j]);
        Poly next = predict_poly_mul(&power, m);
        predict_poly_free(&power);
        power = next;
    }
    predict_poly_free(&power);
    return out;
}

bool predict_poly_sum(const Poly *p, int a, const Poly *lo, const Poly *hi, Poly *out) {
    assert(a >= 0 && a < PRED_MAX_ATOMS && !predict_poly_uses(lo, a) && !predict_poly_uses(hi, a));
    *out = (Poly){0};
    for (int i = 0; i < p->n; i++) {
        PTerm rest = p->t[i];
        int e = rest.pow[a];
        if (e > 4) {
            predict_poly_free(out);
            return false;
        }
        rest.pow[a] = 0;
        Poly r = {0}, fh = faulhaber(e, hi), fl = faulhaber(e, lo);
        add_term(&r, &rest);
        predict_poly_add(&fh, &fl, -1);
        Poly s = predict_poly_mul(&r, &fh);
        predict_poly_add(out, &s, 1);
        predict_poly_free(&r), predict_poly_free(&fh), predict_poly_free(&fl),
            predict_poly_free(&s);
    }
    return true;
}

bool predict_poly_surely_nonneg(const Poly *p, const PAtoms *atoms) {
    for (int i = 0; i < p->n; i++) {
        if (p->t[i].coef >= 0) continue;
        return false;
    }
    (void)atoms;
    return true;
}

/* ---- text ---- */

char *predict_poly_text(const Poly *p, const PAtoms *atoms) {
    int order[PRED_MAX_ATOMS]; /* atoms alphabetically, so formulas read the same everywhere */
    for (int k = 0; k < atoms->n; k++) {
        int j = k;
        while (j > 0 && strcmp(atoms->name[order[j - 1]], atoms->name[k]) > 0)
            order[j] = order[j - 1], j--;
        order[j] = k;
    }
    StrBuf sb = {0};
    for (int i = 0; i < p->n; i++) {
        const PTerm *t = &p->t[i];
        if (t->coef == 0) continue;
        double c = fabs(t->coef);
        bool any = false;
        sb_puts(&sb, sb.len ? (t->coef < 0 ? " - " : " + ") : (t->coef < 0 ? "-" : ""));
        for (int k = 0; k < PRED_MAX_ATOMS; k++) any |= t->pow[k] != 0;
        if (c != 1 || !any) sb_printf(&sb, "%.15g", c);
        bool first = c == 1;
        for (int o = 0; o < atoms->n; o++)
            for (int e = 0; e < t->pow[order[o]]; e++) {
                sb_printf(&sb, "%s%s", first ? "" : "*", atoms->name[order[o]]);
                first = false;
            }
    }
    return sb.data ? sb.data : strdup("0");
}

/* ---- atoms ---- */

int predict_atom(PAtoms *atoms, const char *name, PAtomKind kind, const Poly *a, const Poly *b) {
    for (int k = 0; k < atoms->n; k++)
        if (strcmp(atoms->name[k], name) == 0) return k;
    if (atoms->n == PRED_MAX_ATOMS) {
        atoms->overflow = true;
        return -1;
    }
    int k = atoms->n++;
    atoms->name[k] = strdup(name);
    atoms->kind[k] = kind;
    atoms->def[k][0] = a ? predict_poly_copy(a) : (Poly){0};
    atoms->def[k][1] = b ? predict_poly_copy(b) : (Poly){0};
    return k;
}

Poly predict_atom_poly(int k) {
    if (k < 0) return predict_poly_const(1);
    assert(k < PRED_MAX_ATOMS);
    PTerm t = {.coef = 1};
    t.pow[k] = 1;
    Poly p = {0};
    add_term(&p, &t);
    return p;
}

void predict_atoms_eval(const PAtoms *atoms, double *values) {
    assert(atoms->n >= 0 && atoms->n <= PRED_MAX_ATOMS);
    for (int k = 0; k < atoms->n; k++) {
        PAtomKind kind = atoms->kind[k];
        if (kind == PA_NAME) continue;
        double a = NAN, b = NAN;
        values[k] = NAN;
        if (kind == PA_LOOP || kind == PA_OPAQUE) continue;
        if (!predict_poly_eval(&atoms->def[k][0], values, &a)) continue;
        if (kind != PA_POS && !predict_poly_eval(&atoms->def[k][1], values, &b)) continue;
        switch (kind) {
        case PA_DIV: values[k] = b != 0 ? trunc(a / b) : NAN; break;
        case PA_REM: values[k] = b != 0 ? fmod(a, b) : NAN; break;
        case PA_MIN: values[k] = a < b ? a : b; break;
        case PA_MAX: values[k] = a < b ? b : a; break;
        default: values[k] = a > 0 ? 1 : 0; break;
        }
    }
}

void predict_atoms_free(PAtoms *atoms) {
    for (int k = 0; k < atoms->n; k++) {
        free(atoms->name[k]);
        predict_poly_free(&atoms->def[k][0]);
        predict_poly_free(&atoms->def[k][1]);
    }
    atoms->n = 0;
}

/* ---- --size ---- */

bool predict_parse_sizes(char *arg, PSizes *out, bool nonneg, char *err, size_t errlen) {
    for (char *save = NULL, *item = strtok_r(arg, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '='), *end;
        if (!eq || eq == item || out->n == PRED_MAX_SIZES) {
            snprintf(err, errlen, "--size takes NAME=VALUE, not '%s'", item);
            return false;
        }
        *eq = '\0';
        errno = 0;
        double v = strtod(eq + 1, &end);
        if (errno || *end || end == eq + 1 || (nonneg && !(v >= 0))) {
            snprintf(err, errlen, "--size needs a number: '%s'", eq + 1);
            return false;
        }
        out->name[out->n] = item;
        out->value[out->n++] = v;
    }
    return true;
}
