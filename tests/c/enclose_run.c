/* enclose_run.c: test harness of the exact bracket GEMM through the runtime library.
 *
 *   enclose_run CASES            per case: a line of info, then "lo HEX..." and "hi HEX..."
 *                                (an error prints the code, the message and the bad element)
 *   enclose_run --digest CASES   one line, "sha256 HEX", over every case's lo then hi
 *   enclose_run --residue ...    the same through the GPU's algorithm on the host
 *                                (cairn_enclose_residue_bits) instead of the CPU kernels
 *
 * CASES is a case file (tools/enclose_casefile.h). The pool width is CAIRN_THREADS. */
#include "../../tools/enclose_casefile.h"

#include "cairn_enclose.h"

#include <stdlib.h>
#include <string.h>

static void print_bits(const char *tag, const void *bits, size_t count, int width) {
    printf("%s", tag);
    for (size_t i = 0; i < count; i++) {
        if (width == 64) {
            uint64_t v;
            memcpy(&v, (const unsigned char *)bits + i * 8, 8);
            printf(" %016llx", (unsigned long long)v);
        } else {
            uint32_t v;
            memcpy(&v, (const unsigned char *)bits + i * 4, 4);
            printf(" %08lx", (unsigned long)v);
        }
    }
    printf("\n");
}

static void print_info(const enclose_case *c, const cairn_enclose_info *in) {
    printf("case %s rc 0 tight %d tight_outputs %zu lossy_rows %zu lossy_cols %zu "
           "bits_a %d bits_b %d need_a %d need_b %d lg %d scale_a %d %d scale_b %d %d "
           "kernel %s\n",
           c->name, in->tight, in->tight_outputs, in->lossy_rows, in->lossy_cols, in->bits_a,
           in->bits_b, in->need_bits_a, in->need_bits_b, in->ceil_log2_k, in->scale_a_min,
           in->scale_a_max, in->scale_b_min, in->scale_b_max, in->kernel);
}

/* Runs one case; returns 0, or 1 when it was refused (reported on stdout). */
static int use_residue; /* --residue */

static int run_case(const enclose_case *c, cairn_enclose_hasher *digest) {
    size_t count = c->m * c->n, size = (size_t)c->width / 8;
    void *lo = calloc(count ? count : 1, size), *hi = calloc(count ? count : 1, size);
    if (!lo || !hi) {
        fprintf(stderr, "enclose_run: out of memory\n");
        exit(2);
    }
    cairn_enclose_info info;
    int rc = (use_residue ? cairn_enclose_residue_bits : cairn_enclose_bits)(
        c->width, c->m, c->n, c->k, c->a, c->b, lo, hi, &info);
    if (rc) {
        printf("case %s rc %d bad %c %zu %zu error %s\n", c->name, rc,
               info.bad_operand ? info.bad_operand : '-', info.bad_row, info.bad_col,
               cairn_enclose_strerror(rc));
    } else if (digest) {
        if (cairn_enclose_digest_add(digest, lo, hi, count, size)) {
            fprintf(stderr, "enclose_run: digest failed\n");
            exit(2);
        }
    } else {
        print_info(c, &info);
        print_bits("lo", lo, count, c->width);
        print_bits("hi", hi, count, c->width);
    }
    free(lo);
    free(hi);
    return rc != 0;
}

int main(int argc, char **argv) {
    int want_digest = 0, arg = 1;
    for (; arg < argc - 1; arg++) {
        if (strcmp(argv[arg], "--digest") == 0) want_digest = 1;
        else if (strcmp(argv[arg], "--residue") == 0) use_residue = 1;
        else break;
    }
    if (arg != argc - 1 || strcmp(argv[arg], "--help") == 0) {
        fprintf(arg == argc - 1 ? stdout : stderr,
                "usage: enclose_run [--digest] [--residue] CASES\n");
        return arg == argc - 1 ? 0 : 2;
    }
    FILE *in = fopen(argv[arg], "r");
    if (!in) {
        fprintf(stderr, "enclose_run: cannot open %s\n", argv[arg]);
        return 2;
    }
    cairn_enclose_hasher *digest = want_digest ? cairn_enclose_digest_begin() : NULL;
    enclose_case c;
    char err[160];
    int got, refused = 0;
    while ((got = enclose_case_read(in, &c, err, sizeof err)) == 1) {
        refused |= run_case(&c, digest);
        enclose_case_free(&c);
    }
    fclose(in);
    if (got < 0) {
        fprintf(stderr, "enclose_run: %s\n", err);
        return 2;
    }
    if (digest) {
        unsigned char out[32];
        if (cairn_enclose_digest_end(digest, out) || refused) return 1;
        printf("sha256 ");
        for (int i = 0; i < 32; i++) printf("%02x", out[i]);
        printf("\n");
    }
    return refused;
}
