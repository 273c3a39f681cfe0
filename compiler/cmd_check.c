/* cmd_check.c: `cairn check FILE`: parse and check; exit 0 accepted, 1 refused, 2 usage
 * or I/O error. Diagnostics go to stderr; --codes also prints the codes, one a line, on
 * stdout (for scripts and the test suite). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "frontend.h"

const char cmd_check_help[] =
    "usage: cairn check [--codes] FILE\n"
    "\n"
    "Parses and checks a CAIRN program: names, types, and every rule of the language.\n"
    "Each refusal prints as file:line:col: error[E-CODE]: message, the source line, a caret\n"
    "under the span and a help: line; cairn explain E-CODE says more.\n"
    "\n"
    "  --codes    also print the code of each error on stdout, one a line\n"
    "\n"
    "exit status: 0 accepted, 1 refused, 2 usage or I/O error\n";

int cmd_check(int argc, char **argv) {
    const char *path = NULL;
    bool codes = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--codes") == 0) codes = true;
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "cairn check: error: unknown option '%s' (cairn check --help)\n", argv[i]);
            return 2;
        } else if (path) {
            fprintf(stderr, "cairn check: error: one file at a time (cairn check --help)\n");
            return 2;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        fprintf(stderr, "cairn check: error: no file given (usage: cairn check FILE)\n");
        return 2;
    }
    Diags d;
    diags_init(&d, NULL);
    LoadStatus status;
    Program *p = cairn_load(path, &d, &status);
    if (status == LOAD_IO_ERROR) {
        fprintf(stderr, "cairn check: error: cannot read %s: %s\n", path, strerror(errno));
        diags_free(&d);
        return 2;
    }
    int rc = p ? 0 : 1;
    if (!p) {
        diags_print(&d, stderr);
        if (codes) {
            Code list[64];
            int n = diags_codes(&d, list, 64);
            for (int i = 0; i < n; i++) printf("%s\n", code_info(list[i])->text);
        }
    }
    program_free(p);
    diags_free(&d);
    return rc;
}
