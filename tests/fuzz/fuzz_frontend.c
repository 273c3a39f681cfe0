/* fuzz_frontend.c: libFuzzer target for the front end (lexer, parser, checker, printer).
 *
 * Any input must come back as a program or as diagnostics: never a crash, a hang, a
 * sanitizer report or a leak. When an input parses, its printed form must parse again
 * and print the same text (the printer's round trip), and an accepted program must
 * print as an accepted program. Built and run by tests/fuzz/fuzz_frontend.sh.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"

static void round_trip(const Program *p) {
    char *first = cairn_print_program(p);
    Diags d;
    diags_init(&d, NULL);
    Program *again = cairn_parse("printed.cairn", first, strlen(first), &d);
    if (diags_has_errors(&d)) abort(); /* the printer wrote something unparsable */
    char *second = cairn_print_program(again);
    if (strcmp(first, second) != 0) abort(); /* printing is not a fixed point */
    free(second);
    ast_program_free(again);
    diags_free(&d);
    free(first);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 1 << 16) return 0;
    Diags d;
    diags_init(&d, NULL);
    Program *parsed = cairn_parse("fuzz.cairn", (const char *)data, size, &d);
    bool syntax_ok = !diags_has_errors(&d);
    if (syntax_ok) {
        round_trip(parsed);
        cairn_check(parsed, &d);
    }
    FILE *sink = fopen("/dev/null", "w");
    if (sink) {
        diags_print(&d, sink); /* printing every diagnostic must be safe too */
        fclose(sink);
    }
    ast_program_free(parsed);
    d.src = NULL;
    diags_free(&d);
    return 0;
}
