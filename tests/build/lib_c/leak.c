/* leak.c: a trapped call frees what it allocated. kern_pick allocates a buffer of n
 * elements before it traps; 4000 trapped calls with n = 2^18 (1 MiB each) would hold
 * 4 GiB if the buffers leaked. Prints the growth of the resident set in KiB. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libkern.h"

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) kib = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    return kib;
}

int main(void) {
    enum { N = 1 << 18 };
    int32_t *v = calloc(N, sizeof *v), got;
    long before = 0;
    for (int round = 0; round < 4000; round++) {
        if (round == 10) before = rss_kib();
        if (kern_pick(N, v, N, N, &got) != 1) return 1;
    }
    printf("rss_growth_kib=%ld\n", rss_kib() - before);
    free(v);
    return 0;
}
