/* float_conv.c: a harness that runs the storage-float routines of cairn_float.h on
 * inputs from stdin and prints the result bits, for the Python model to check
 * (tests/runtime/test_storage_*.py).
 *
 *   float_conv widen FMT          every bit pattern of FMT -> its f32 bits (no stdin)
 *   float_conv widen64 FMT        every bit pattern of FMT -> its f64 bits (no stdin)
 *   float_conv from32 FMT         lines "F32HEX"          -> result bits (hex)
 *   float_conv from64 FMT         lines "F64HEX"          -> result bits (hex)
 *   float_conv try32|try64 f8e4m3 like from32/64 through the _try form; "past" when past
 *   float_conv quant T            lines "XHEX SCALEHEX"   -> result (hex bits / decimal)
 *   float_conv stoch T            lines "XHEX SCALEHEX NOISE" -> result
 *   float_conv array16|array16i|array16b   lines "F32HEX": the bulk f32 -> f16 (as the
 *                                 CPU picks, or integer-only) and f32 -> bf16 functions
 *
 * FMT is f16, bf16, f8e4m3 or f8e5m2; T is a FMT or i8, u8, i16, u16. from32/from64
 * into f8e4m3 and quantize use the trapping forms, so a bad input ends the process
 * with "trap:" on stderr. */
#include "cairn_float.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const FORMATS[] = {"f16", "bf16", "f8e4m3", "f8e5m2", "i8", "u8", "i16", "u16"};
enum { N_FLOAT_FORMATS = 4, N_TARGETS = 8 };

static int target_index(const char *name) {
    for (int i = 0; i < N_TARGETS; i++)
        if (strcmp(name, FORMATS[i]) == 0) return i;
    fprintf(stderr, "float_conv: unknown format '%s'\n", name);
    exit(2);
}

/* The bit moves of cairn_float.h's internals, under short names. */
#define f32_of  cairn__f32_from_bits
#define f64_of  cairn__f64_from_bits
#define bits_of cairn__f32_bits

/* Every bit pattern of FMT widened, as f32 bits or (to64) as f64 bits. */
static void widen(int fmt, int to64) {
    uint32_t count = fmt < 2 ? 65536u : 256u;
    for (uint32_t h = 0; h < count; h++) {
        if (to64) {
            double w = fmt == 0   ? cairn_f16_to_f64((cairn_f16)h)
                       : fmt == 1 ? cairn_bf16_to_f64((cairn_bf16)h)
                       : fmt == 2 ? cairn_f8e4m3_to_f64((cairn_f8e4m3)h)
                                  : cairn_f8e5m2_to_f64((cairn_f8e5m2)h);
            printf("%016" PRIx64 "\n", cairn__f64_bits(w));
        } else {
            float w = fmt == 0   ? cairn_f16_to_f32((cairn_f16)h)
                      : fmt == 1 ? cairn_bf16_to_f32((cairn_bf16)h)
                      : fmt == 2 ? cairn_f8e4m3_to_f32((cairn_f8e4m3)h)
                                 : cairn_f8e5m2_to_f32((cairn_f8e5m2)h);
            printf("%08" PRIx32 "\n", bits_of(w));
        }
    }
}

static uint32_t from32(int fmt, float x) {
    switch (fmt) {
    case 0: return cairn_f32_to_f16(x);
    case 1: return cairn_f32_to_bf16(x);
    case 2: return cairn_f32_to_f8e4m3(x, CAIRN_NOLOC);
    default: return cairn_f32_to_f8e5m2(x);
    }
}

static uint32_t from64(int fmt, double x) {
    switch (fmt) {
    case 0: return cairn_f64_to_f16(x);
    case 1: return cairn_f64_to_bf16(x);
    case 2: return cairn_f64_to_f8e4m3(x, CAIRN_NOLOC);
    default: return cairn_f64_to_f8e5m2(x);
    }
}

/* quantize and quantize_stochastic for target t; integer results as signed values. */
static int64_t quant(int t, float x, float s, int stochastic, uint32_t noise) {
    cairn_loc loc = {"quant.cairn", 7, 3};
    if (stochastic) {
        switch (t) {
        case 0: return cairn_quantize_stochastic_f16(x, s, noise, loc);
        case 1: return cairn_quantize_stochastic_bf16(x, s, noise, loc);
        case 2: return cairn_quantize_stochastic_f8e4m3(x, s, noise, loc);
        case 3: return cairn_quantize_stochastic_f8e5m2(x, s, noise, loc);
        case 4: return cairn_quantize_stochastic_i8(x, s, noise, loc);
        case 5: return cairn_quantize_stochastic_u8(x, s, noise, loc);
        case 6: return cairn_quantize_stochastic_i16(x, s, noise, loc);
        default: return cairn_quantize_stochastic_u16(x, s, noise, loc);
        }
    }
    switch (t) {
    case 0: return cairn_quantize_f16(x, s, loc);
    case 1: return cairn_quantize_bf16(x, s, loc);
    case 2: return cairn_quantize_f8e4m3(x, s, loc);
    case 3: return cairn_quantize_f8e5m2(x, s, loc);
    case 4: return cairn_quantize_i8(x, s, loc);
    case 5: return cairn_quantize_u8(x, s, loc);
    case 6: return cairn_quantize_i16(x, s, loc);
    default: return cairn_quantize_u16(x, s, loc);
    }
}

/* Reads all of stdin's hex f32 words and converts them with the bulk function. */
static void bulk(char kind) {
    size_t n = 0, cap = 1024;
    float *in = malloc(cap * sizeof *in);
    uint32_t u;
    while (in && scanf("%" SCNx32, &u) == 1) {
        if (n == cap) in = realloc(in, (cap *= 2) * sizeof *in);
        if (in) in[n++] = f32_of(u);
    }
    uint16_t *out = malloc((n + 1) * sizeof *out);
    if (!in || !out) {
        fprintf(stderr, "float_conv: out of memory\n");
        exit(2);
    }
    if (kind == 'b') cairn_f32_to_bf16_array(in, out, n);
    else if (kind == 'i') cairn__f32_to_f16_array_int(in, out, n);
    else cairn_f32_to_f16_array(in, out, n);
    for (size_t i = 0; i < n; i++) printf("%x\n", out[i]);
    free(in);
    free(out);
}

static void stream(const char *mode, int t) {
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        uint64_t a = 0, b = 0, c = 0;
        if (sscanf(line, "%" SCNx64 " %" SCNx64 " %" SCNu64, &a, &b, &c) < 1) continue;
        if (strcmp(mode, "from32") == 0) {
            printf("%" PRIx32 "\n", from32(t, f32_of((uint32_t)a)));
        } else if (strcmp(mode, "from64") == 0) {
            printf("%" PRIx32 "\n", from64(t, f64_of(a)));
        } else if (strcmp(mode, "try32") == 0 || strcmp(mode, "try64") == 0) {
            cairn_f8e4m3 r;
            int ok = mode[3] == '3' ? cairn_f32_to_f8e4m3_try(f32_of((uint32_t)a), &r)
                                    : cairn_f64_to_f8e4m3_try(f64_of(a), &r);
            if (ok) printf("%x\n", r);
            else printf("past\n");
        } else {
            int64_t q = quant(t, f32_of((uint32_t)a), f32_of((uint32_t)b),
                              strcmp(mode, "stoch") == 0, (uint32_t)c);
            if (t < N_FLOAT_FORMATS) printf("%" PRIx64 "\n", (uint64_t)q);
            else printf("%" PRId64 "\n", q);
        }
    }
}

int main(int argc, char **argv) {
    if (argc == 2 && strncmp(argv[1], "array16", 7) == 0) {
        bulk(argv[1][7]);
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr,
                "usage: float_conv widen|widen64|from32|from64|try32|try64|quant|stoch FORMAT\n"
                "       float_conv array16|array16i|array16b   (see the header comment)\n");
        return 2;
    }
    int t = target_index(argv[2]);
    const char *mode = argv[1];
    int converts = strncmp(mode, "widen", 5) == 0 || strncmp(mode, "from", 4) == 0 ||
                   strncmp(mode, "try", 3) == 0;
    if (converts && t >= N_FLOAT_FORMATS) {
        fprintf(stderr, "float_conv: %s needs a storage float format\n", mode);
        return 2;
    }
    if (strcmp(mode, "widen") == 0 || strcmp(mode, "widen64") == 0) widen(t, mode[5] == '6');
    else if (strstr(" from32 from64 try32 try64 quant stoch ", mode) && strlen(mode) >= 5)
        stream(mode, t);
    else {
        fprintf(stderr, "float_conv: unknown mode '%s'\n", mode);
        return 2;
    }
    return 0;
}
