/* cmd_expand.c: `cairn expand FILE` prints the checked program with every derived
 * function written out where its `derive` stood. The output is itself a program that
 * `cairn check` accepts and that builds to the same results (tests/grad/test_expand.py).
 * Comments are not kept: the printer writes the tree. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "check/check.h"

const char cmd_expand_help[] =
    "usage: cairn expand FILE\n"
    "\n"
    "Checks FILE and prints it as CAIRN source with every `derive grad ... for f;`\n"
    "replaced by the function it derives (f_grad), so the derived code can be read,\n"
    "reviewed, and checked or built on its own. Exit status: 0 printed, 1 refused\n"
    "(diagnostics on stderr), 2 usage or unreadable file.\n";

/* The function derive item d made, or NULL. */
static Item *derived_by(const Program *p, const Item *d) {
    const char *name = d->u.derive.target;
    size_t len = strlen(name);
    for (int i = 0; i < p->nitems; i++) {
        Item *it = p->items[i];
        if (it->kind == ITEM_FN && it->u.fn.derived_from && strncmp(it->name, name, len) == 0 &&
            strcmp(it->name + len, "_grad") == 0)
            return it;
    }
    return NULL;
}

int cmd_expand(int argc, char **argv) {
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(cmd_expand_help, stdout);
        return 0;
    }
    if (argc != 2 || argv[1][0] == '-') {
        fputs("cairn expand: expected one FILE (see cairn expand --help)\n", stderr);
        return 2;
    }
    Diags d;
    diags_init(&d, NULL);
    LoadStatus status = LOAD_OK;
    Program *p = cairn_load(argv[1], &d, &status, 0);
    if (status == LOAD_IO_ERROR) {
        fprintf(stderr, "cairn expand: error: cannot read %s: %s\n", argv[1], strerror(errno));
        diags_free(&d);
        return 2;
    }
    if (!p) {
        diags_print(&d, stderr);
        diags_free(&d);
        return 1;
    }
    Item **items = calloc((size_t)p->nitems + 1, sizeof *items);
    if (!items) abort();
    int n = 0;
    for (int i = 0; i < p->nitems; i++) {
        Item *it = p->items[i];
        if (it->kind == ITEM_DERIVE) {
            Item *f = derived_by(p, it);
            if (f) items[n++] = f;
        } else if (it->kind != ITEM_FN || !it->u.fn.derived_from) {
            items[n++] = it;
        }
    }
    Program expanded = *p;
    expanded.items = items;
    expanded.nitems = n;
    char *text = cairn_print_program(&expanded);
    fputs(text, stdout);
    free(text);
    free(items);
    ast_program_free(p);
    diags_free(&d);
    return 0;
}
