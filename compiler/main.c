/* main.c: the cairn command line: a dispatch table built from commands.h. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "version.h"

typedef struct Command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
    const char *help;
} Command;

static const Command commands[] = {
#define COMMAND_ROW(name, summary) {#name, summary, cmd_##name, cmd_##name##_help},
    COMMANDS(COMMAND_ROW)
#undef COMMAND_ROW
};
enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

static const Command *find_command(const char *name) {
    for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

static void usage(FILE *out) {
    fprintf(out,
            "cairn %s: the CAIRN compiler (every rounding named, every claim checked)\n\n"
            "usage: cairn COMMAND [ARGS]    (cairn help COMMAND for its options)\n\ncommands:\n",
            CAIRN_VERSION);
    for (int i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "  %-10s %s\n\noptions:\n  --help     this text\n  --version  print the version\n",
            "help", "show a command's help");
}

static int help_for(const char *name) {
    const Command *c = find_command(name);
    if (!c) {
        fprintf(stderr, "cairn: error: unknown command '%s' (cairn --help lists them)\n", name);
        return 2;
    }
    fputs(c->help, stdout);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("cairn %s\n", CAIRN_VERSION);
        return 0;
    }
    if (strcmp(cmd, "help") == 0) {
        if (argc < 3) {
            usage(stdout);
            return 0;
        }
        return help_for(argv[2]);
    }
    const Command *c = find_command(cmd);
    if (!c) {
        fprintf(stderr, "cairn: error: unknown command '%s' (cairn --help lists them)\n", cmd);
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) break;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(c->help, stdout);
            return 0;
        }
    }
    return c->run(argc - 1, argv + 1);
}
