/* fuzz_npy.c: libFuzzer target for the .npy reader (runtime/cairn_npy.c), which reads
 * files a user hands a program's main (`prog x=data.npy`).
 *
 * Each input is parsed as a whole file by cairn_npy_parse, and read from disk by
 * cairn_npy_read with the item size its dtype has (or 4 when CAIRN reads no such dtype).
 * Whatever the bytes, neither may read past them, crash or leak; and every file they
 * accept must agree: the same header from both, exactly count * item bytes of data, and
 * the file written back by cairn_npy_write reads back to the same header and bytes.
 * With -DFUZZ_NPY_REPLAY a main replays files and folders instead of fuzzing
 * (tests/fuzz/test_fuzz_npy.py, over tests/fuzz/corpus_npy, in `make test`). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cairn_npy.h"

static void check(int ok, const char *what) {
    if (ok) return;
    fprintf(stderr, "fuzz_npy: %s\n", what);
    abort();
}

static size_t item_of(const char *descr) {
    static const struct {
        const char *descr;
        size_t size;
    } known[] = {{"|i1", 1}, {"|u1", 1}, {"|b1", 1}, {"<i2", 2}, {"<u2", 2}, {"<f2", 2},
                 {"<i4", 4}, {"<u4", 4}, {"<f4", 4}, {"<i8", 8}, {"<u8", 8}, {"<f8", 8}};
    for (size_t k = 0; k < sizeof known / sizeof *known; k++)
        if (strcmp(known[k].descr, descr) == 0) return known[k].size;
    return 4;
}

static char scratch[64];

/* Writes the bytes to a scratch file; its path. */
static const char *to_file(const uint8_t *data, size_t size) {
    if (!scratch[0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(scratch, sizeof scratch, "%s/fuzz_npy.%ld", dir && strlen(dir) < 30 ? dir : "/tmp",
                 (long)getpid());
    }
    FILE *f = fopen(scratch, "wb");
    check(f != NULL, "cannot write the scratch file");
    check(fwrite(data, 1, size, f) == size, "cannot write the scratch file");
    fclose(f);
    return scratch;
}

/* A file both readers accepted: written back, it reads back the same. */
static void round_trip(const cairn_npy *info, const void *bytes, size_t item) {
    char path[80], err[256];
    snprintf(path, sizeof path, "%s.out", scratch);
    int rc =
        cairn_npy_write(path, info->descr, info->ndim, info->shape, bytes, item, err, sizeof err);
    check(rc == 0, err);
    cairn_npy again;
    void *data = NULL;
    check(cairn_npy_read(path, item, &again, &data, err, sizeof err) == 0, err);
    check(strcmp(again.descr, info->descr) == 0 && again.ndim == info->ndim &&
              again.count == info->count && again.major == 1 && again.data_offset % 64 == 0,
          "the written header reads back differently");
    check(memcmp(again.shape, info->shape, sizeof again.shape) == 0, "the shape changed");
    check(info->count * item == 0 || memcmp(data, bytes, info->count * item) == 0,
          "the data changed");
    free(data);
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char err[256];
    cairn_npy parsed, read;
    int p = cairn_npy_parse(data, size, &parsed, err, sizeof err);
    check(p == 0 || (p == -1 && err[0]), "a refusal without a message");
    size_t item = p == 0 ? item_of(parsed.descr) : 4;
    void *bytes = NULL;
    int r = cairn_npy_read(to_file(data, size), item, &read, &bytes, err, sizeof err);
    check(r == 0 || ((r == -1 || r == -2) && err[0] && !bytes), "a failed read without a message");
    check(r != 0 || p == 0, "read accepted what parse refused");
    if (r == 0) {
        check(parsed.count == read.count && parsed.data_offset == read.data_offset &&
                  strcmp(parsed.descr, read.descr) == 0 && parsed.ndim == read.ndim,
              "parse and read disagree on the header");
        check(size - read.data_offset == read.count * item, "read accepted a wrong length");
        check(memcmp(bytes, data + read.data_offset, read.count * item) == 0, "read other bytes");
        uint64_t product = 1;
        for (int k = 0; k < read.ndim; k++) product *= read.shape[k];
        check(product == read.count, "count is not the shape's product");
        round_trip(&read, bytes, item);
    }
    if (getenv("FUZZ_NPY_VERBOSE")) { /* what the replay's test checks, input by input */
        char shape[CAIRN_NPY_MAX_DIMS * 22 + 4] = "";
        if (r == 0) cairn_npy_shape_text(read.ndim, read.shape, shape, sizeof shape);
        if (r == 0)
            printf("read %s v%d %s %s\n", read.descr, read.major, shape,
                   read.fortran_order ? "F" : "C");
        else printf("refused%s: %s\n", r == -2 ? " (length)" : "", err);
    }
    free(bytes);
    unlink(scratch);
    return 0;
}

#ifdef FUZZ_NPY_REPLAY
#include "fuzz_replay.h"
int main(int argc, char **argv) {
    return fuzz_replay_main("fuzz_npy", argc, argv, getenv("FUZZ_NPY_VERBOSE") != NULL);
}
#endif
