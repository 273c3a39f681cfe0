/* enclose_residue_check.c: the residue algorithm's arithmetic (cairn_enclose_residue.h)
 * laid open for tests/runtime/test_enclose_residue.py, which checks what it prints
 * against Python integers.
 *
 *   enclose_residue_check crt NEED     L, limbs, M, then per modulus: m inv W (hex)
 *   enclose_residue_check mod          cairn_enc_mod against % for every x < 2^26 and
 *                                      every modulus; "ok" or the first difference
 *   enclose_residue_check reduce       cairn_enc_reduce_sum against % on the extremes
 *                                      and a sweep of sums; "ok" or the first difference
 *   enclose_residue_check roundtrip    stdin lines "NEED S" (S signed hex, |S| 2^2 <
 *                                      2^NEED): each S's residues, taken by plain long
 *                                      division, through cairn_enc_crt_value; prints S */
#include "cairn_enclose_residue.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_limbs(const uint32_t *x) {
    int top = CAIRN_ENC_LIMBS - 1;
    while (top > 0 && !x[top]) top--;
    printf("%" PRIx32, x[top]);
    for (int w = top - 1; w >= 0; w--) printf("%08" PRIx32, x[w]);
}

static int cmd_crt(int need) {
    static cairn_enc_crt c;
    if (cairn_enclose_crt_make(need, &c)) {
        printf("none\n");
        return 0;
    }
    printf("L %d limbs %d M ", c.L, c.limbs);
    print_limbs(c.M);
    printf("\n");
    for (int l = 0; l < c.L; l++) {
        printf("%" PRIu32 " %" PRIu32 " ", c.m[l], c.inv[l]);
        print_limbs(c.W[l]);
        printf("\n");
    }
    return 0;
}

static int cmd_mod(void) {
    static cairn_enc_crt c;
    cairn_enclose_crt_make(334, &c);
    for (int l = 0; l < c.L; l++)
        for (uint32_t x = 0; x < (UINT32_C(1) << 26); x++)
            if (cairn_enc_mod(x, c.m[l], c.recip[l]) != x % c.m[l]) {
                printf("mod %" PRIu32 " of %" PRIu32 ": %" PRIu32 "\n", x, c.m[l],
                       cairn_enc_mod(x, c.m[l], c.recip[l]));
                return 1;
            }
    printf("ok\n");
    return 0;
}

static int cmd_reduce(void) {
    static cairn_enc_crt c;
    cairn_enclose_crt_make(334, &c);
    const int64_t extreme = (int64_t)127 * 127 << 17;
    for (int l = 0; l < c.L; l++)
        for (int64_t s = -extreme; s <= extreme;
             s += s < -extreme + 70000 || s > extreme - 70000 ? 1 : 9973) {
            int64_t want = ((s % c.m[l]) + c.m[l]) % c.m[l];
            if (cairn_enc_reduce_sum((int32_t)s, &c, l) != (uint32_t)want) {
                printf("reduce %" PRId64 " mod %" PRIu32 "\n", s, c.m[l]);
                return 1;
            }
        }
    printf("ok\n");
    return 0;
}

/* S mod m for S in 6 two's-complement words, by long division of |S|. */
static uint32_t residue_of(const cairn_enc_wide *s, uint32_t m) {
    cairn_enc_wide mag = *s;
    int neg = cairn_enc_wide_is_negative(&mag);
    if (neg) cairn_enc_wide_neg(&mag);
    unsigned __int128 rem = 0;
    for (int w = CAIRN_ENC_WORDS - 1; w >= 0; w--) rem = ((rem << 64) | mag.w[w]) % m;
    return neg && rem ? m - (uint32_t)rem : (uint32_t)rem;
}

static int parse_signed_hex(const char *text, cairn_enc_wide *s) {
    int neg = *text == '-';
    const char *digits = text + neg;
    size_t len = strlen(digits);
    cairn_enc_wide_zero(s);
    if (len == 0 || len > 96) return -1;
    for (size_t i = 0; i < len; i++) {
        char ch = digits[len - 1 - i];
        int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
        if (d < 0) return -1;
        s->w[i / 16] |= (uint64_t)d << (4 * (i % 16));
    }
    if (neg) cairn_enc_wide_neg(s);
    return 0;
}

static int cmd_roundtrip(void) {
    static cairn_enc_crt c;
    char text[128];
    int need;
    while (scanf("%d %127s", &need, text) == 2) {
        cairn_enc_wide s, back;
        if (cairn_enclose_crt_make(need, &c) || parse_signed_hex(text, &s)) return 2;
        uint8_t r[CAIRN_ENC_MODULI];
        for (int l = 0; l < c.L; l++) r[l] = (uint8_t)residue_of(&s, c.m[l]);
        cairn_enc_crt_value(r, 1, &c, &back);
        for (int w = CAIRN_ENC_WORDS - 1; w >= 0; w--) printf("%016" PRIx64, back.w[w]);
        printf("\n");
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "crt") == 0) return cmd_crt(atoi(argv[2]));
    if (argc == 2 && strcmp(argv[1], "mod") == 0) return cmd_mod();
    if (argc == 2 && strcmp(argv[1], "reduce") == 0) return cmd_reduce();
    if (argc == 2 && strcmp(argv[1], "roundtrip") == 0) return cmd_roundtrip();
    fprintf(stderr, "usage: enclose_residue_check crt NEED | mod | reduce | roundtrip\n");
    return 2;
}
