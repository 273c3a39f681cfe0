/* command.h: one way to dispatch subcommands, for cairn, cairn-farm and cairn-agent
 * (naming: see err.h). Each binary lists its commands once, in an X-macro table
 * (compiler/commands.h, FARM_VERBS in farm/main.c, AGENT_VERBS in agent/main.c), builds
 * a Command array from it and hands it to command_main, which prints the --help list
 * from that same table, answers `PROGRAM help NAME` and `PROGRAM NAME ... --help`, and
 * runs the command. */
#ifndef CAIRN_LIB_COMMAND_H
#define CAIRN_LIB_COMMAND_H

#include <stddef.h>

typedef struct {
    const char *name;
    const char *summary; /* its line in the --help list */
    /* Runs it: argv[0] is the command's name, its options follow. Returns the exit
     * status (0 ok, 1 refused or failed, 2 usage or environment). */
    int (*run)(int argc, char **argv);
    const char *help; /* its --help text; NULL: the command answers --help itself */
} Command;

/* One Command from a row of a binary's X-macro table: X(name, function, help, summary). */
#define COMMAND_ENTRY(name, run, help, summary) {#name, summary, run, help},

typedef struct {
    const char *program; /* "cairn-farm" */
    const char *noun;    /* what the commands are called: "command", "verb" */
    const char *version; /* `PROGRAM --version` prints "PROGRAM VERSION"; NULL: none */
    const char *intro;   /* what it is, for the --help text's first line */
    const char *outro;   /* what --help says after the list, or NULL */
    const Command *commands;
    size_t count;
} CommandSet;

/* The whole of main(): dispatches ARGV (argv[1] names the command) and returns the exit
 * status. No command: the help on stderr, 2; an unknown one: one line, 2. */
int command_main(const CommandSet *set, int argc, char **argv);

#endif
