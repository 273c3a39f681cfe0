/* two_libs.c: two CAIRN libraries in one program, built from programs that define the
 * same function names and carry the same runtime: a_f is a's sum, b_f is b's maximum,
 * and each library's traps show in its own last error. */
#include <stdio.h>

#include "liba.h"
#include "libb.h"

int main(void) {
    double x[4] = {1e16, 3.0, -1e16, 2.0}, fa = 0, fb = 0;
    int sa = a_f(4, x, 4, &fa), sb = b_f(4, x, 4, &fb);
    printf("a_f=%d %.17g\nb_f=%d %.17g\n", sa, fa, sb, fb);
    sa = a_bad(4, x, 4, &fa);
    printf("a_bad=%d [%s] line %d\n", sa, a_last_error()->message, a_last_error()->line);
    printf("b_last=[%s]\n", b_last_error()->message);
    sb = b_bad(4, x, 4, &fb);
    printf("b_bad=%d [%s] line %d\n", sb, b_last_error()->message, b_last_error()->line);
    return 0;
}
