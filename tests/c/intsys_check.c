/* intsys_check.c: drives the compiler's integer solver (compiler/base/intsys.c) for
 * tests/frontend/test_intsys.py, which knows each system's feasibility independently.
 *
 * Reads systems from stdin, one after another, each as
 *     NV NROWS
 *     EQ C A0 A1 ... A(NV-1)        (NROWS lines: sum(Ai xi) + C >= 0, or == 0 when EQ is 1)
 * and prints one line per system: "infeasible" or "maybe", followed by " overflow" when
 * the solver's arithmetic left int64. Exit status 0, or 2 on malformed input. */
#include <inttypes.h>
#include <stdio.h>

#include "base/base.h"

/* Reads one row of nv coefficients into s. */
static bool intsys_check_row(IntSys *s) {
    int eq;
    int64_t c;
    if (scanf("%d %" SCNd64, &eq, &c) != 2 || (eq != 0 && eq != 1)) return false;
    IntRow *r = intsys_row(s, eq == 1);
    r->c = c;
    for (int j = 0; j < s->nv; j++)
        if (scanf("%" SCNd64, &r->a[j]) != 1) return false;
    return true;
}

int main(void) {
    int nv, nrows;
    while (scanf("%d %d", &nv, &nrows) == 2) {
        if (nv < 0 || nv > INTSYS_MAXV || nrows < 0) {
            fprintf(stderr, "intsys_check: bad header %d %d\n", nv, nrows);
            return 2;
        }
        IntSys s = {.nv = nv};
        for (int i = 0; i < nrows; i++)
            if (!intsys_check_row(&s)) {
                fprintf(stderr, "intsys_check: bad row %d\n", i);
                return 2;
            }
        IntSysAnswer a = intsys_feasible(&s);
        printf("%s%s\n", a == INTSYS_INFEASIBLE ? "infeasible" : "maybe",
               s.overflow ? " overflow" : "");
        intsys_free(&s);
    }
    if (!feof(stdin)) {
        fprintf(stderr, "intsys_check: bad header\n");
        return 2;
    }
    return 0;
}
