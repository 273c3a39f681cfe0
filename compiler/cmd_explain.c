/* cmd_explain.c: `cairn explain E-CODE`: the rule, a refused program and its accepted
 * fix, from codes.def (the same table the checker reports from). `--list` prints every
 * code with its title. */
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
        return 0;
    }
    Code c = diag_code_from_text(argv[1]);
    if (c == CODE_COUNT && strncasecmp(argv[1], "E-", 2) != 0) { /* REDUCE-ORDER, reduce-order */
        char with_prefix[64];
        snprintf(with_prefix, sizeof with_prefix, "E-%s", argv[1]);
        c = diag_code_from_text(with_prefix);
    }
    if (c == CODE_COUNT) {
        fprintf(stderr,
                "cairn explain: error: unknown code '%s' (cairn explain --list shows them)\n",
                argv[1]);
        return 2;
    }
    const CodeInfo *info = diag_code_info(c);
    printf("%s: %s\n\n%s\n\nRefused:\n\n", info->text, info->title, info->rule);
    print_indented(info->refused);
    printf("\nAccepted:\n\n");
    print_indented(info->accepted);
    return 0;
}
