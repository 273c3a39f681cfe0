/* prod_harness.c: a pooled integer product run as generated code runs `reduce *
 * parallel` (runtime/cairn_reduce.h: cairn_prod_start, the pool's blocks taking their
 * factors into cairn_prod_part, cairn_prod_finish), for tests/runtime/
 * test_reduce_product.py. stdin: one case a line, "TYPE N v0 ... vN-1" (TYPE one of
 * i8 u8 i16 u16 i32 u32 i64 u64); stdout: one line a case, "trap" where the fold in index
 * order would trap, else the product. The pool's width is CAIRN_THREADS. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cairn_pool.h"
#include "cairn_reduce.h"

typedef struct prod_case {
    int is_signed;
    int64_t *si;
    uint64_t *ui;
    cairn_prod_job *job;
} prod_case;

static void prod_lane(void *ctx, size_t begin, size_t end, unsigned worker) {
    prod_case *c = ctx;
    (void)worker;
    for (size_t k = begin; k < end; k++) {
        if (c->is_signed) cairn_prod_take_i(cairn_prod_part(c->job, begin), c->si[k]);
        else cairn_prod_take_u(cairn_prod_part(c->job, begin), c->ui[k]);
    }
}

static int prod_one(const char *type, size_t n) {
    int is_signed = type[0] == 'i', bits = atoi(type + 1);
    int64_t *si = calloc(n + 1, sizeof *si);
    uint64_t *ui = calloc(n + 1, sizeof *ui);
    if (!si || !ui) return 1;
    for (size_t k = 0; k < n; k++) {
        int ok = is_signed ? scanf("%" SCNd64, &si[k]) : scanf("%" SCNu64, &ui[k]);
        if (ok != 1) return 1;
    }
    cairn_prod_job job;
    cairn_prod_start(&job, n);
    prod_case c = {is_signed, si, ui, &job};
    if (n) cairn_pool_run(n, job.grain, prod_lane, &c);
    cairn_prod all = cairn_prod_finish(&job);
    if (cairn_prod_traps(&all, bits, is_signed)) printf("trap\n");
    else if (is_signed) printf("%" PRId64 "\n", cairn_prod_value_i(&all, bits, CAIRN_NOLOC));
    else printf("%" PRIu64 "\n", cairn_prod_value_u(&all, bits, CAIRN_NOLOC));
    free(si);
    free(ui);
    return 0;
}

int main(void) {
    char type[8];
    size_t n;
    while (scanf("%7s %zu", type, &n) == 2)
        if (prod_one(type, n)) return 2;
    return 0;
}
