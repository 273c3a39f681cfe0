/* enclose_check_cuda.cu: the standalone checker of the bracket GEMM on a CUDA GPU.
 *
 * Reads a case file (tools/enclose_casefile.h), brackets every case with the CUDA
 * backend (cairn_enclose_cuda_bits: operands copied to the device, lo and hi back), and
 * writes each case's lo then hi as raw little-endian bits to OUT, as enclose_check does
 * with the host's integer core: `sha256sum OUT` is the case set's digest, which must be
 * tests/data/enclose/cases.sha256. With --check-host each case is also bracketed by the
 * CPU backend and the two compared bit for bit (a differing case is named; exit 1).
 *
 * Built by scripts/gpu.sh and tests/device/test_enclose_cuda.py with nvcc, with the
 * runtime's enclose sources. Exit status 0; 1 with a one-line error; 3 when there is no
 * CUDA device (the line says so). */
#include <cuda_runtime.h>

#include "cairn_enclose.h"
#include "enclose_casefile.h"

#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: enclose_check_cuda [--check-host] CASES OUT\n"
    "  Brackets every case of the case file CASES on the CUDA device (the residue\n"
    "  algorithm on int8 tensor cores) and writes each result's lo then hi, as raw\n"
    "  little-endian bits, to OUT. --check-host: compare each case with the CPU\n"
    "  backend's bits. Exit 0; 1 with a one-line error; 3 without a CUDA device.\n";

static int die(const char *what, const char *detail) {
    fprintf(stderr, "enclose_check_cuda: error: %s%s%s\n", what, detail ? ": " : "",
            detail ? detail : "");
    return 1;
}

/* The case on the device: lo and hi into the host buffers; a CAIRN_ENCLOSE code, or 1
 * after a message when a copy fails. */
static int device_case(const enclose_case *c, void *lo, void *hi) {
    size_t size = (size_t)c->width / 8, na = c->m * c->k * size, nb = c->k * c->n * size,
           no = c->m * c->n * size;
    void *da = NULL, *db = NULL, *dlo = NULL, *dhi = NULL;
    int rc = 1;
    cairn_enclose_info info;
    if (cudaMalloc(&da, na + 1) != cudaSuccess || cudaMalloc(&db, nb + 1) != cudaSuccess ||
        cudaMalloc(&dlo, no + 1) != cudaSuccess || cudaMalloc(&dhi, no + 1) != cudaSuccess ||
        cudaMemcpy(da, c->a, na, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(db, c->b, nb, cudaMemcpyHostToDevice) != cudaSuccess) {
        die("cannot stage the operands on the device", cudaGetErrorString(cudaGetLastError()));
    } else if ((rc =
                    cairn_enclose_cuda_bits(c->width, c->m, c->n, c->k, da, db, dlo, dhi, &info))) {
        fprintf(stderr, "enclose_check_cuda: %s: %s%s%s\n", c->name, cairn_enclose_strerror(rc),
                info.detail ? ": " : "", info.detail ? info.detail : "");
    } else if (cudaMemcpy(lo, dlo, no, cudaMemcpyDeviceToHost) != cudaSuccess ||
               cudaMemcpy(hi, dhi, no, cudaMemcpyDeviceToHost) != cudaSuccess) {
        rc = die("cannot copy the results back", cudaGetErrorString(cudaGetLastError()));
    }
    cudaFree(da), cudaFree(db), cudaFree(dlo), cudaFree(dhi);
    return rc;
}

/* Brackets one case and appends lo, hi to out; 0, or 1 (3: no device) after a message. */
static int check_case(const enclose_case *c, FILE *out, int check_host) {
    size_t count = c->m * c->n, size = (size_t)c->width / 8, bytes = count ? count * size : 1;
    unsigned char *lo = (unsigned char *)malloc(bytes), *hi = (unsigned char *)malloc(bytes);
    unsigned char *hlo = (unsigned char *)malloc(bytes), *hhi = (unsigned char *)malloc(bytes);
    int status = 0;
    if (!lo || !hi || !hlo || !hhi) {
        status = die("out of memory for case", c->name);
    } else if ((status = device_case(c, lo, hi))) {
        status = status == CAIRN_ENCLOSE_ENODEV ? 3 : 1;
    } else if (check_host &&
               (cairn_enclose_bits(c->width, c->m, c->n, c->k, c->a, c->b, hlo, hhi, NULL) ||
                memcmp(lo, hlo, count * size) || memcmp(hi, hhi, count * size))) {
        status = die("the device's bits differ from the host's in case", c->name);
    } else if (enclose_write_le(out, lo, count, c->width) ||
               enclose_write_le(out, hi, count, c->width)) {
        status = die("cannot write the output", NULL);
    }
    free(lo), free(hi), free(hlo), free(hhi);
    return status;
}

int main(int argc, char **argv) {
    int check_host = argc > 1 && strcmp(argv[1], "--check-host") == 0;
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(usage, stdout);
        return 0;
    }
    if (argc != 3 + check_host) {
        fputs(usage, stderr);
        return 1;
    }
    cairn_enclose_info info; /* an empty product: the device check alone */
    if (cairn_enclose_cuda_bits(64, 0, 0, 0, NULL, NULL, NULL, NULL, &info) ==
        CAIRN_ENCLOSE_ENODEV) {
        fprintf(stderr, "enclose_check_cuda: no CUDA device (%s)\n", info.detail);
        return 3;
    }
    FILE *in = fopen(argv[1 + check_host], "r");
    if (!in) return die("cannot open the case file", argv[1 + check_host]);
    FILE *out = fopen(argv[2 + check_host], "wb");
    if (!out) {
        fclose(in);
        return die("cannot create the output", argv[2 + check_host]);
    }
    enclose_case c;
    char err[160];
    int got = 0, status = 0, cases = 0;
    while (!status && (got = enclose_case_read(in, &c, err, sizeof err)) == 1) {
        status = check_case(&c, out, check_host);
        enclose_case_free(&c);
        cases++;
    }
    if (!status && got < 0) status = die(argv[1 + check_host], err);
    fclose(in);
    if (fclose(out) != 0 && !status) status = die("cannot write the output", argv[2 + check_host]);
    if (!status)
        fprintf(stderr, "enclose_check_cuda: %d cases%s\n", cases,
                check_host ? ", each equal to the host's bits" : "");
    return status;
}
