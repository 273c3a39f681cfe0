/* cmd_explain.c: `cairn explain E-CODE`: the rule, a refused program and its accepted
 * fix, from codes.def (the same table the checker reports from), or for the codes of
 * files the commands read, from file_codes.def (the examples are Python writing the
 * file). `--list` prints every code with its title. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "commands.h"
#include "syntax/syntax.h"

const char cmd_explain_help[] =
    "usage: cairn explain E-CODE    (the E- may be left out: cairn explain reduce-order)\n"
    "       cairn explain --list\n"
    "\n"
    "Prints the rule behind an error code, a program refused with it, and the same program\n"
    "fixed. --list prints every code with a one-line title.\n"
    "\n"
    "exit status: 0 explained, 2 unknown code or usage error\n";

static const CodeInfo file_codes[] = {
#define FILE_CODE(id, text, title, rule, refused, accepted) {text, title, rule, refused, accepted},
#include "file_codes.def"
#undef FILE_CODE
};
enum { FILE_CODE_COUNT = sizeof file_codes / sizeof *file_codes };

/* The row of TEXT ("E-CAST", "E-NPY-ORDER", case-insensitive) in either table, or NULL. */
static const CodeInfo *find_code(const char *text) {
    Code c = diag_code_from_text(text);
    if (c != CODE_COUNT) return diag_code_info(c);
    for (int k = 0; k < FILE_CODE_COUNT; k++)
        if (strcasecmp(file_codes[k].text, text) == 0) return &file_codes[k];
    return NULL;
}

static void print_indented(const char *text) {
    const char *line = text;
    while (*line) {
        const char *end = strchr(line, '\n');
        int n = end ? (int)(end - line) : (int)strlen(line);
        printf("    %.*s\n", n, line);
        line += n + (end ? 1 : 0);
    }
}

int cmd_explain(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr,
                "cairn explain: error: give one code, e.g. cairn explain E-CAST (or --list)\n");
        return 2;
    }
    if (strcmp(argv[1], "--list") == 0) {
        for (int c = 0; c < CODE_COUNT; c++)
            printf("%-18s %s\n", diag_code_info((Code)c)->text, diag_code_info((Code)c)->title);
        for (int k = 0; k < FILE_CODE_COUNT; k++)
            printf("%-18s %s\n", file_codes[k].text, file_codes[k].title);
        return 0;
    }
    const CodeInfo *info = find_code(argv[1]);
    if (!info && strncasecmp(argv[1], "E-", 2) != 0) { /* REDUCE-ORDER, reduce-order */
        char with_prefix[64];
        snprintf(with_prefix, sizeof with_prefix, "E-%s", argv[1]);
        info = find_code(with_prefix);
    }
    if (!info) {
        fprintf(stderr,
                "cairn explain: error: unknown code '%s' (cairn explain --list shows them)\n",
                argv[1]);
        return 2;
    }
    printf("%s: %s\n\n%s\n\nRefused:\n\n", info->text, info->title, info->rule);
    print_indented(info->refused);
    printf("\nAccepted:\n\n");
    print_indented(info->accepted);
    return 0;
}
