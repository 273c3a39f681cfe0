/* enclose_check.c: the standalone checker of the exact bracket GEMM.
 *
 * Reads a case file (format in enclose_casefile.h), brackets every case with the
 * runtime's own integer core (runtime/cairn_enclose.c, compiled into this program
 * serially and with no vector or floating-point registers), and writes each case's lo
 * then hi as raw little-endian bits to OUT. No floating-point type appears, so it
 * builds and runs where there is no FPU; `sha256sum OUT` is the case set's digest,
 * the same the runtime's cairn_enclose_digest_* give. */
#include "enclose_casefile.h"

#include "cairn_enclose.h"

#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: enclose_check CASES OUT\n"
    "  Brackets every case of the case file CASES (see tools/enclose_casefile.h) in\n"
    "  integer arithmetic only and writes each result's lo then hi, as raw little-endian\n"
    "  bits, to OUT. Exit status 0, or 1 with a one-line error.\n";

static int die(const char *what, const char *detail) {
    fprintf(stderr, "enclose_check: error: %s%s%s\n", what, detail ? ": " : "",
            detail ? detail : "");
    return 1;
}

/* Brackets one case and appends lo, hi to out; returns 0 or 1 after a message. */
static int check_case(const enclose_case *c, FILE *out) {
    size_t count = c->m * c->n, size = (size_t)c->width / 8;
    void *lo = malloc(count ? count * size : 1), *hi = malloc(count ? count * size : 1);
    int status = 0;
    if (!lo || !hi) {
        status = die("out of memory for case", c->name);
    } else {
        cairn_enclose_info info;
        int rc = cairn_enclose_bits(c->width, c->m, c->n, c->k, c->a, c->b, lo, hi, &info);
        if (rc) {
            fprintf(stderr, "enclose_check: error: case %s: %s\n", c->name,
                    cairn_enclose_strerror(rc));
            status = 1;
        } else if (enclose_write_le(out, lo, count, c->width) ||
                   enclose_write_le(out, hi, count, c->width)) {
            status = die("cannot write the output", NULL);
        }
    }
    free(lo);
    free(hi);
    return status;
}

int main(int argc, char **argv) {
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(usage, stdout);
        return 0;
    }
    if (argc != 3) {
        fputs(usage, stderr);
        return 1;
    }
    FILE *in = fopen(argv[1], "r");
    if (!in) return die("cannot open the case file", argv[1]);
    FILE *out = fopen(argv[2], "wb");
    if (!out) {
        fclose(in);
        return die("cannot create the output", argv[2]);
    }
    enclose_case c;
    char err[160];
    int got, status = 0, cases = 0;
    while (!status && (got = enclose_case_read(in, &c, err, sizeof err)) == 1) {
        status = check_case(&c, out);
        enclose_case_free(&c);
        cases++;
    }
    if (!status && got < 0) status = die(argv[1], err);
    fclose(in);
    if (fclose(out) != 0 && !status) status = die("cannot write the output", argv[2]);
    if (!status) fprintf(stderr, "enclose_check: %d cases\n", cases);
    return status;
}
