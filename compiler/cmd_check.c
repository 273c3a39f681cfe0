/* cmd_check.c: `cairn check FILE`: parse and check; exit 0 accepted, 1 refused, 2 usage
 * or I/O error. Diagnostics go to stderr; --codes also prints the codes, one a line, on
 * stdout (for scripts and the test suite); --dump prints the checked tree. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "check/check.h"
#include "lib/fs.h"

const char cmd_check_help[] =
    "usage: cairn check [--codes] [--print | --dump] FILE\n"
    "\n"
    "Parses and checks a CAIRN program: names, types, and every rule of the language.\n"
    "Each refusal prints as file:line:col: error[E-CODE]: message, the source line, a caret\n"
    "under the span and a help: line; cairn explain E-CODE says more.\n"
    "\n"
    "  --codes    also print the code of each error on stdout, one a line\n"
    "  --print    parse only, and print the program back as CAIRN source on stdout\n"
    "  --dump     print the checked tree on stdout: every node with its type, what each\n"
    "             name and call resolves to, and where each region and buffer runs\n"
    "\n"
    "exit status: 0 accepted, 1 refused, 2 usage or I/O error\n";

/* --print: the parse, printed back (for round-trip tests and a quick look). */
static int print_parsed(const char *path) {
    size_t len = 0;
    char *text = fs_read(path, &len, NULL);
    if (!text) {
        fprintf(stderr, "cairn check: error: cannot read %s: %s\n", path, strerror(errno));
        return 2;
    }
    Diags d;
    diags_init(&d, NULL);
    Program *p = cairn_parse(path, text, len, &d);
    free(text);
    int rc = 0;
    if (diags_has_errors(&d)) {
        diags_print(&d, stderr);
        rc = 1;
    } else {
        char *out = cairn_print_program(p);
        fputs(out, stdout);
        free(out);
    }
    ast_program_free(p);
    d.src = NULL;
    diags_free(&d);
    return rc;
}

int cmd_check(int argc, char **argv) {
    const char *path = NULL;
    bool codes = false, print = false, dump = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--codes") == 0) codes = true;
        else if (strcmp(argv[i], "--print") == 0) print = true;
        else if (strcmp(argv[i], "--dump") == 0) dump = true;
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "cairn check: error: unknown option '%s' (cairn check --help)\n",
                    argv[i]);
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
    if (print) return print_parsed(path);
    Diags d;
    diags_init(&d, NULL);
    LoadStatus status;
    Program *p = cairn_load(path, &d, &status, 0);
    if (status == LOAD_IO_ERROR) {
        fprintf(stderr, "cairn check: error: cannot read %s: %s\n", path, strerror(errno));
        diags_free(&d);
        return 2;
    }
    int rc = p ? 0 : 1;
    if (p && dump) {
        char *text = cairn_dump_program(p);
        fputs(text, stdout);
        free(text);
    }
    if (!p) {
        diags_print(&d, stderr);
        if (codes) {
            Code list[64];
            int n = diags_codes(&d, list, 64);
            for (int i = 0; i < n; i++) printf("%s\n", diag_code_info(list[i])->text);
        }
    }
    ast_program_free(p);
    diags_free(&d);
    return rc;
}
