/* obs.c: observation values decoded, printed, measured and compared (see obs.h).
 *
 * Every float type widens to f64 exactly (storage floats from their fields, with the
 * formats of runtime/cairn_float.h; lib/ stands alone, so it does not include it). The
 * shortest decimal is found as Python's repr() finds it (Steele &
 * White's criterion, as in David Gay's dtoa mode 0): for p = 1, 2, ... significant
 * digits, the two p-digit decimals around the value (its exact digits, truncated, and
 * one unit more) are tried, nearer first, and the first that reads back as the same
 * value wins. Reading back: strtod for f64, strtof for f32 (glibc rounds both correctly
 * from the decimal); for a storage float, whether the decimal lies inside the value's
 * rounding interval, the midpoints to its neighbours (ties to the even pattern). Every
 * storage value and midpoint is exact in a double, so that test is exact too: strtod
 * decides unless the decimal reads as the midpoint itself, and then the decimal's digits
 * are compared with the midpoint's exact digits (glibc prints a double's exact decimal
 * expansion when asked for enough digits). */
#include "lib/obs.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { KIND_BOOL, KIND_SIGNED, KIND_UNSIGNED, KIND_FLOAT } Kind;

static const struct {
    const char *name;
    size_t size;
    Kind kind;
} types[OBS_TYPE_COUNT] = {
    [OBS_BOOL] = {"bool", 1, KIND_BOOL},      [OBS_I8] = {"i8", 1, KIND_SIGNED},
    [OBS_I16] = {"i16", 2, KIND_SIGNED},      [OBS_I32] = {"i32", 4, KIND_SIGNED},
    [OBS_I64] = {"i64", 8, KIND_SIGNED},      [OBS_U8] = {"u8", 1, KIND_UNSIGNED},
    [OBS_U16] = {"u16", 2, KIND_UNSIGNED},    [OBS_U32] = {"u32", 4, KIND_UNSIGNED},
    [OBS_U64] = {"u64", 8, KIND_UNSIGNED},    [OBS_USIZE] = {"usize", 8, KIND_UNSIGNED},
    [OBS_F8E4M3] = {"f8e4m3", 1, KIND_FLOAT}, [OBS_F8E5M2] = {"f8e5m2", 1, KIND_FLOAT},
    [OBS_F16] = {"f16", 2, KIND_FLOAT},       [OBS_BF16] = {"bf16", 2, KIND_FLOAT},
    [OBS_F32] = {"f32", 4, KIND_FLOAT},       [OBS_F64] = {"f64", 8, KIND_FLOAT},
};

int obs_type_parse(const char *name, ObsType *out) {
    for (int t = 0; t < OBS_TYPE_COUNT; t++)
        if (strcmp(types[t].name, name) == 0) {
            *out = (ObsType)t;
            return 0;
        }
    return -1;
}

const char *obs_type_name(ObsType t) { return types[t].name; }
size_t obs_type_size(ObsType t) { return types[t].size; }
int obs_type_is_float(ObsType t) { return types[t].kind == KIND_FLOAT; }

uint64_t obs_element(ObsType t, const unsigned char *bytes, size_t i) {
    size_t size = types[t].size;
    const unsigned char *p = bytes + i * size;
    uint64_t v = 0;
    for (size_t b = size; b-- > 0;) v = v << 8 | p[b];
    return v;
}

static uint64_t sign_bit(ObsType t) { return UINT64_C(1) << (8 * types[t].size - 1); }

/* A signed element's value: its bits sign-extended. */
static int64_t signed_value(ObsType t, uint64_t bits) {
    uint64_t s = sign_bit(t);
    return (int64_t)((bits ^ s) - s);
}

/* The value of a binary float with MAN fraction bits, EBITS exponent bits and BIAS.
 * ieee: the all-ones exponent holds infinities and NaNs; otherwise (OCP E4M3) it holds
 * numbers, except all-ones fraction: the NaN. Exact: every such value is a double. */
static double float_value(uint64_t bits, int man, int ebits, int bias, int ieee) {
    uint64_t emask = (UINT64_C(1) << ebits) - 1, fmask = (UINT64_C(1) << man) - 1;
    uint64_t e = bits >> man & emask, m = bits & fmask;
    double v;
    if (e == emask && (ieee || m == fmask)) v = ieee && m == 0 ? INFINITY : NAN;
    else if (e == 0) v = ldexp((double)m, 1 - bias - man);
    else v = ldexp((double)(m | (fmask + 1)), (int)e - bias - man);
    return bits >> (man + ebits) & 1 ? -v : v;
}

double obs_value(ObsType t, uint64_t bits) {
    switch (t) {
    case OBS_F8E4M3: return float_value(bits, 3, 4, 7, 0);
    case OBS_F8E5M2: return float_value(bits, 2, 5, 15, 1);
    case OBS_F16: return float_value(bits, 10, 5, 15, 1);
    case OBS_BF16: return float_value(bits, 7, 8, 127, 1);
    case OBS_F32: return float_value(bits, 23, 8, 127, 1);
    case OBS_F64: {
        double v;
        memcpy(&v, &bits, sizeof v);
        return v;
    }
    default: return types[t].kind == KIND_SIGNED ? (double)signed_value(t, bits) : (double)bits;
    }
}

int obs_is_nan(ObsType t, uint64_t bits) {
    return obs_type_is_float(t) && isnan(obs_value(t, bits));
}
int obs_is_inf(ObsType t, uint64_t bits) {
    return obs_type_is_float(t) && isinf(obs_value(t, bits));
}

void obs_format_bits(ObsType t, uint64_t bits, char out[OBS_TEXT_MAX]) {
    snprintf(out, OBS_TEXT_MAX, "0x%0*llx", (int)(2 * types[t].size), (unsigned long long)bits);
}

/* ---- the shortest decimal ---- */

/* A positive decimal d[0].d[1]...d[n-1] x 10^e, digits as characters. */
typedef struct Dec {
    char d[24];
    int n, e;
} Dec;

/* Exact digits of v > 0 ("%.800e" is exact for every double: at most 767 significant
 * digits) into DIGITS (NUL-terminated, no point) and its decimal exponent. */
static int exact_digits(double v, char digits[808]) {
    char text[820];
    snprintf(text, sizeof text, "%.800e", v);
    char *e = strchr(text, 'e');
    assert(e && text[1] == '.');
    digits[0] = text[0];
    memcpy(digits + 1, text + 2, (size_t)(e - text - 2));
    digits[e - text - 1] = '\0';
    return atoi(e + 1);
}

static void dec_text(const Dec *x, char *out, size_t size) {
    snprintf(out, size, "%c.%.*se%d", x->d[0], x->n - 1, x->d + 1, x->e);
}

/* x plus one unit in its last digit (9.99 -> 10.0 becomes 1.00 one decade up). */
static void dec_up(Dec *x) {
    int i = x->n - 1;
    while (i >= 0 && x->d[i] == '9') x->d[i--] = '0';
    if (i >= 0) {
        x->d[i]++;
        return;
    }
    x->d[0] = '1';
    x->e++;
}

/* -1, 0, 1 as the decimal X is below, at or above the double M > 0, exactly. */
static int dec_cmp_exact(const Dec *x, double m) {
    char digits[808];
    int me = exact_digits(m, digits);
    if (x->e != me) return x->e < me ? -1 : 1;
    size_t mlen = strlen(digits);
    for (size_t i = 0; i < mlen || i < (size_t)x->n; i++) {
        char a = i < (size_t)x->n ? x->d[i] : '0', b = i < mlen ? digits[i] : '0';
        if (a != b) return a < b ? -1 : 1;
    }
    return 0;
}

/* Whether X lies inside the rounding interval (LO, HI) of a storage value whose pattern
 * is EVEN or not (an end is inside when the value wins its tie). */
static int dec_inside(const Dec *x, double lo, double hi, int even) {
    char text[48];
    dec_text(x, text, sizeof text);
    double d = strtod(text, NULL);
    if (d < lo || d > hi) return 0;
    if (d > lo && d < hi) return 1;
    int c = dec_cmp_exact(x, d == lo ? lo : hi);
    return c == 0 ? even : (d == lo ? c > 0 : c < 0);
}

/* Whether the decimal X reads back as the positive value V of type T, MAG its bits
 * without the sign. */
static int reads_back(ObsType t, const Dec *x, double v, uint64_t mag) {
    char text[48];
    dec_text(x, text, sizeof text);
    if (t == OBS_F64) return strtod(text, NULL) == v;
    if (t == OBS_F32) return strtof(text, NULL) == (float)v;
    double prev = obs_value(t, mag - 1), next; /* mag >= 1: v is not 0 */
    uint64_t up = mag + 1;
    if (up < sign_bit(t) && !isnan(obs_value(t, up)) && !isinf(obs_value(t, up)))
        next = obs_value(t, up);
    else next = 2 * v - prev; /* past the largest finite: the next step of the same size */
    return dec_inside(x, (prev + v) / 2, (v + next) / 2, (mag & 1) == 0);
}

/* The digits of X, trailing zeros dropped, written as repr() writes a float. */
static void dec_repr(const Dec *x, int negative, char out[OBS_TEXT_MAX]) {
    int n = x->n;
    while (n > 1 && x->d[n - 1] == '0') n--;
    char *o = out;
    if (negative) *o++ = '-';
    if (x->e < -4 || x->e >= 16) {
        *o++ = x->d[0];
        if (n > 1) o += sprintf(o, ".%.*s", n - 1, x->d + 1);
        sprintf(o, "e%c%02d", x->e < 0 ? '-' : '+', abs(x->e));
    } else if (x->e < 0) { /* 0.000ddd */
        o += sprintf(o, "0.");
        for (int i = 0; i < -x->e - 1; i++) *o++ = '0';
        sprintf(o, "%.*s", n, x->d);
    } else { /* ddd.ddd, at least one digit after the point */
        for (int i = 0; i <= x->e; i++) *o++ = i < n ? x->d[i] : '0';
        *o++ = '.';
        if (n > x->e + 1) sprintf(o, "%.*s", n - x->e - 1, x->d + x->e + 1);
        else sprintf(o, "0");
    }
}

/* The shortest decimal of the positive finite value V (bits MAG) of type T. */
static void shortest(ObsType t, double v, uint64_t mag, Dec *best) {
    char digits[808];
    int e = exact_digits(v, digits);
    size_t len = strlen(digits);
    for (int p = 1; p <= 17; p++) {
        Dec lo = {{0}, p, e}, hi;
        memcpy(lo.d, digits, (size_t)p);
        int rest_zero = 1, above_half;
        for (size_t i = (size_t)p; i < len; i++) rest_zero &= digits[i] == '0';
        if (rest_zero) { /* v has p digits: itself */
            *best = lo;
            return;
        }
        hi = lo;
        dec_up(&hi);
        int rest_half = digits[p] == '5';
        for (size_t i = (size_t)p + 1; i < len; i++) rest_half &= digits[i] == '0';
        above_half = digits[p] > '5' || (digits[p] == '5' && !rest_half) ||
                     (rest_half && (lo.d[p - 1] - '0') % 2 == 1);
        const Dec *first = above_half ? &hi : &lo, *second = above_half ? &lo : &hi;
        if (reads_back(t, first, v, mag)) {
            *best = *first;
            return;
        }
        if (reads_back(t, second, v, mag)) {
            *best = *second;
            return;
        }
    }
    assert(!"17 digits always read back");
}

static void format_float(ObsType t, uint64_t bits, char out[OBS_TEXT_MAX]) {
    double v = obs_value(t, bits);
    int negative = (bits & sign_bit(t)) != 0;
    if (isnan(v)) {
        snprintf(out, OBS_TEXT_MAX, "nan");
    } else if (isinf(v)) {
        snprintf(out, OBS_TEXT_MAX, "%sinf", negative ? "-" : "");
    } else if (v == 0) {
        snprintf(out, OBS_TEXT_MAX, "%s0.0", negative ? "-" : "");
    } else {
        Dec best;
        shortest(t, fabs(v), bits & (sign_bit(t) - 1), &best);
        dec_repr(&best, negative, out);
    }
}

void obs_format(ObsType t, uint64_t bits, char out[OBS_TEXT_MAX]) {
    switch (types[t].kind) {
    case KIND_BOOL:
        if (bits <= 1) snprintf(out, OBS_TEXT_MAX, "%s", bits ? "true" : "false");
        else snprintf(out, OBS_TEXT_MAX, "bool(0x%02llx)", (unsigned long long)bits);
        break;
    case KIND_SIGNED: snprintf(out, OBS_TEXT_MAX, "%lld", (long long)signed_value(t, bits)); break;
    case KIND_UNSIGNED: snprintf(out, OBS_TEXT_MAX, "%llu", (unsigned long long)bits); break;
    case KIND_FLOAT: format_float(t, bits, out); break;
    }
}

/* ---- distances, summaries, comparisons ---- */

/* |a - b| of two integers whose difference fits in 64 bits (two's complement wraps). */
static uint64_t gap(uint64_t a, uint64_t b, int a_less) { return a_less ? b - a : a - b; }

/* A float's place on the number line: its magnitude bits, negated for a negative sign,
 * so neighbours are 1 apart and -0 and +0 both sit at 0. */
static int64_t float_rank(ObsType t, uint64_t bits) {
    int64_t mag = (int64_t)(bits & (sign_bit(t) - 1));
    return bits & sign_bit(t) ? -mag : mag;
}

int obs_ulp_distance(ObsType t, uint64_t a, uint64_t b, uint64_t *d) {
    *d = 0;
    switch (types[t].kind) {
    case KIND_SIGNED: {
        int64_t x = signed_value(t, a), y = signed_value(t, b);
        *d = gap((uint64_t)x, (uint64_t)y, x < y);
        return 1;
    }
    case KIND_FLOAT: {
        int na = obs_is_nan(t, a), nb = obs_is_nan(t, b);
        if (na || nb) return na && nb;
        int64_t x = float_rank(t, a), y = float_rank(t, b);
        *d = gap((uint64_t)x, (uint64_t)y, x < y);
        return 1;
    }
    default: *d = gap(a, b, a < b); return 1;
    }
}

/* Whether A orders before B by value (-0 before +0); NaNs are not passed. */
static int less(ObsType t, uint64_t a, uint64_t b) {
    switch (types[t].kind) {
    case KIND_SIGNED: return signed_value(t, a) < signed_value(t, b);
    case KIND_FLOAT: {
        double x = obs_value(t, a), y = obs_value(t, b);
        return x < y || (x == y && x == 0 && (a & sign_bit(t)) && !(b & sign_bit(t)));
    }
    default: return a < b;
    }
}

void obs_summarize(ObsType t, const unsigned char *bytes, size_t count, ObsSummary *s) {
    memset(s, 0, sizeof *s);
    s->count = count;
    for (size_t i = 0; i < count; i++) {
        uint64_t v = obs_element(t, bytes, i);
        if (obs_is_nan(t, v)) {
            s->nan++;
            continue;
        }
        s->inf += obs_is_inf(t, v);
        if (!s->has_range) {
            s->has_range = 1;
            s->min = s->max = v;
        }
        if (less(t, v, s->min)) s->min = v;
        if (less(t, s->max, v)) s->max = v;
    }
}

void obs_compare(ObsType t, const unsigned char *a, const unsigned char *b, size_t count,
                 ObsComparison *c) {
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < count; i++) {
        uint64_t x = obs_element(t, a, i), y = obs_element(t, b, i), d;
        if (x == y) continue;
        int nan = !obs_ulp_distance(t, x, y, &d);
        if (c->differing++ == 0) {
            c->first = c->largest_at = i;
            c->first_a = x;
            c->first_b = y;
            c->first_ulp = c->largest_ulp = d;
            c->first_nan = c->largest_nan = nan;
        } else if (!c->largest_nan && (nan || d > c->largest_ulp)) {
            c->largest_ulp = d;
            c->largest_nan = nan;
            c->largest_at = i;
        }
    }
}
