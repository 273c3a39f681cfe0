/* lower_c.h: checked CAIRN programs to C11 (host target).
 *
 * The generated C includes "cairn.h" and compiles without warnings under gcc and clang
 * with -std=c11 -Wall -Wextra -Werror -ffp-contract=off -fno-fast-math. Every guard the
 * language demands is explicit in it (overflow, division by zero, bounds, extents), each
 * trapping with the .cairn location. Alongside, it collects the program's roundings for
 * the receipt (numerics.h). */
#ifndef CAIRN_LOWER_C_H
#define CAIRN_LOWER_C_H

#include <cjson/cJSON.h>

#include "driver_fs.h"

/* Checks the program at `path` with the front end and lowers it into *c_out; the
 * numerics go into the object `numerics` as {"function": [entries...]}. Returns 0, or
 * 1 when the program is refused (the diagnostics are printed to stderr). */
int lower_file(const char *path, strbuf *c_out, cJSON *numerics);

#endif
