/* command.c: subcommand dispatch (see command.h). */
#include "lib/command.h"

#include "lib/near.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const Command *find(const CommandSet *set, const char *name) {
    for (size_t i = 0; i < set->count; i++)
        if (strcmp(set->commands[i].name, name) == 0) return &set->commands[i];
    return NULL;
}

/* The noun in capitals, as usage lines write a placeholder: "COMMAND". */
static void upper_noun(const CommandSet *set, char noun[32]) {
    size_t n = 0;
    for (; set->noun[n] && n + 1 < 32; n++) noun[n] = (char)toupper(set->noun[n]);
    noun[n] = '\0';
}

static void usage(const CommandSet *set, FILE *out) {
    char noun[32];
    upper_noun(set, noun);
    fprintf(out, "%s%s%s: %s\n\n", set->program, set->version ? " " : "",
            set->version ? set->version : "", set->intro);
    fprintf(out, "usage: %s %s [OPTIONS]    (%s help %s: its options)\n\n", set->program, noun,
            set->program, noun);
    fprintf(out, "%ss:\n", set->noun);
    for (size_t i = 0; i < set->count; i++)
        fprintf(out, "  %-10s %s\n", set->commands[i].name, set->commands[i].summary);
    fprintf(out, "  %-10s show a %s's help\n\noptions:\n  --help     this text\n", "help",
            set->noun);
    if (set->version) fprintf(out, "  --version  print the version\n");
    if (set->outro) fprintf(out, "\n%s", set->outro);
}

static int unknown(const CommandSet *set, const char *name) {
    const char *near = NULL;
    int best = near_cap(name) + 1;
    for (size_t i = 0; i < set->count; i++) {
        int d = near_distance(name, set->commands[i].name, best - 1);
        if (d < best) best = d, near = set->commands[i].name;
    }
    if (near)
        fprintf(stderr, "%s: error: unknown %s '%s': did you mean '%s'? (%s --help lists them)\n",
                set->program, set->noun, name, near, set->program);
    else
        fprintf(stderr, "%s: error: unknown %s '%s' (%s --help lists them)\n", set->program,
                set->noun, name, set->program);
    return 2;
}

/* Its help: the table's text, or the command's own answer to --help. */
static int help_of(const Command *c) {
    if (c->help) return fputs(c->help, stdout) < 0;
    char *argv[] = {(char *)c->name, "--help", NULL};
    return c->run(2, argv);
}

static int wants_help(int argc, char **argv) {
    for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
    return 0;
}

int command_main(const CommandSet *set, int argc, char **argv) {
    const char *name = argc > 1 ? argv[1] : NULL;
    if (!name) {
        usage(set, stderr);
        return 2;
    }
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 ||
        (strcmp(name, "help") == 0 && argc < 3)) {
        usage(set, stdout);
        return 0;
    }
    if (set->version && strcmp(name, "--version") == 0) {
        printf("%s %s\n", set->program, set->version);
        return 0;
    }
    if (strcmp(name, "help") == 0) {
        if (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0) {
            char noun[32];
            upper_noun(set, noun);
            printf("usage: %s help [%s]\n\nWithout a %s, lists every %s (as %s --help does);\n"
                   "with one, prints its usage and options (as %s %s --help does).\n",
                   set->program, noun, set->noun, set->noun, set->program, set->program, noun);
            return 0;
        }
        const Command *c = find(set, argv[2]);
        return c ? help_of(c) : unknown(set, argv[2]);
    }
    const Command *c = find(set, name);
    if (!c) return unknown(set, name);
    if (c->help && wants_help(argc, argv)) return help_of(c);
    return c->run(argc - 1, argv + 1);
}
