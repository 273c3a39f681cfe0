/* obs.h: the values of observations, decoded (naming: see err.h). An observation is a
 * CAIRN element type, a count and the elements' raw little-endian bits
 * (runtime/cairn_observe.h); this module turns those bits into what people read and
 * compare, for `cairn run --show`, `cairn show`, `cairn diff` and the farm's dashboard:
 *
 * - each element as a number: integers in decimal, bool as true/false, and every float
 *   type (f64, f32 and the storage floats f16, bf16, f8e4m3, f8e5m2) as the shortest
 *   decimal that reads back as the same value in that type (ties to even), the one
 *   nearest the value when several are as short, written as Python's repr() writes a
 *   float: positional for decimal exponents -4..15 ("0.1", "65500.0", "-0.0"), else
 *   scientific ("1e+16", "6e-08"), and "nan", "inf", "-inf";
 * - the bits in hex, at the type's width ("0x3c00" for f16 1.0);
 * - the distance of two elements in units in the last place (obs_ulp_distance);
 * - an array's summary (min, max, NaN and infinity counts) and the comparison of two
 *   arrays (how many elements differ, the first, the largest distance).
 *
 * docs/tools.md ("Reading observations") states the same rules for users. */
#ifndef CAIRN_LIB_OBS_H
#define CAIRN_LIB_OBS_H

#include <stddef.h>
#include <stdint.h>

typedef enum ObsType {
    OBS_BOOL,
    OBS_I8,
    OBS_I16,
    OBS_I32,
    OBS_I64,
    OBS_U8,
    OBS_U16,
    OBS_U32,
    OBS_U64,
    OBS_USIZE,
    OBS_F8E4M3,
    OBS_F8E5M2,
    OBS_F16,
    OBS_BF16,
    OBS_F32,
    OBS_F64,
    OBS_TYPE_COUNT
} ObsType;

/* The type named NAME ("f64", "f8e4m3", "usize", ...): 0 and *out, or -1. */
int obs_type_parse(const char *name, ObsType *out);
const char *obs_type_name(ObsType t);
/* Bytes per element (bool: 1, usize: 8). */
size_t obs_type_size(ObsType t);
int obs_type_is_float(ObsType t);

/* Element I of the little-endian array BYTES, as an unsigned integer of its bits. */
uint64_t obs_element(ObsType t, const unsigned char *bytes, size_t i);
/* The exact value of a float element (every CAIRN float type widens exactly to f64),
 * of an integer element (exact up to 2^53), or of a bool (0 or 1). */
double obs_value(ObsType t, uint64_t bits);
int obs_is_nan(ObsType t, uint64_t bits);
int obs_is_inf(ObsType t, uint64_t bits);

/* Longest text obs_format and obs_format_bits write, NUL included. */
#define OBS_TEXT_MAX 40

/* The element as a number (the rules above). */
void obs_format(ObsType t, uint64_t bits, char out[OBS_TEXT_MAX]);
/* "0x" and the bits in lowercase hex, 2 digits per byte. */
void obs_format_bits(ObsType t, uint64_t bits, char out[OBS_TEXT_MAX]);

/* The distance of A and B in units in the last place, into *D. Integers and bool:
 * |a - b| (up to 2^64 - 1). Floats: how many values of the type lie between them,
 * counting one end: 0 for equal values, 1 for neighbours, with +0 and -0 one value (0
 * apart) and an infinity one step past the largest finite value; two NaNs are 0 apart
 * whatever their payloads. Returns 1, or 0 when there is no distance: a NaN and a
 * number (*D is then 0). */
int obs_ulp_distance(ObsType t, uint64_t a, uint64_t b, uint64_t *d);

/* An array at a glance: NaN and infinity counts, and the least and greatest value
 * (NaNs left out; -0 counts as less than +0; has_range 0 when every element is NaN or
 * there is none), as element bits. */
typedef struct ObsSummary {
    size_t count, nan, inf;
    int has_range;
    uint64_t min, max;
} ObsSummary;
void obs_summarize(ObsType t, const unsigned char *bytes, size_t count, ObsSummary *s);

/* Two arrays of one type and count, element by element. Elements differ when their bits
 * do (so -0 and +0 differ, at distance 0, and so do two NaNs of different payloads).
 * first: the index of the first difference (valid when differing > 0), its bits on both
 * sides and its distance (first_nan: a NaN against a number, no distance); largest: the
 * largest distance and its first index, a NaN against a number counting as larger than
 * any distance (largest_nan). */
typedef struct ObsComparison {
    size_t differing;
    size_t first;
    uint64_t first_a, first_b, first_ulp;
    int first_nan;
    size_t largest_at;
    uint64_t largest_ulp;
    int largest_nan;
} ObsComparison;
void obs_compare(ObsType t, const unsigned char *a, const unsigned char *b, size_t count,
                 ObsComparison *c);

#endif
