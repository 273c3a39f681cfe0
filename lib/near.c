/* near.c: the edit distance behind "did you mean" (see near.h). */
#include "lib/near.h"

#include <string.h>

/* Names are short: three rows of the table suffice. */
int near_distance(const char *a, const char *b, int cap) {
    enum { MAXLEN = 64 };
    size_t la = strlen(a), lb = strlen(b);
    if (la > MAXLEN || lb > MAXLEN || (la > lb ? la - lb : lb - la) > (size_t)cap) return cap + 1;
    int rows[3][MAXLEN + 1];
    for (size_t j = 0; j <= lb; j++) rows[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) { /* row i of the table lives in rows[i % 3] */
        int *older = rows[(i + 1) % 3], *prev = rows[(i + 2) % 3], *cur = rows[i % 3];
        int best = cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int v = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < v) v = prev[j] + 1;
            if (cur[j - 1] + 1 < v) v = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                older[j - 2] + 1 < v)
                v = older[j - 2] + 1;
            cur[j] = v;
            if (v < best) best = v;
        }
        if (best > cap) return cap + 1;
    }
    return rows[la % 3][lb];
}

int near_cap(const char *name) {
    int cap = (int)strlen(name) / 3;
    return cap < 1 ? 1 : cap;
}
