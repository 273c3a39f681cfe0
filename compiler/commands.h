/* commands.h: the cairn subcommands. Each lives in its own cmd_NAME.c and is listed
 * once in COMMANDS below; main.c builds its dispatch table and help from this list
 * (lib/command.h dispatches them, as it does the verbs of cairn-farm and cairn-agent).
 * To add one: write cmd_NAME.c with `int cmd_NAME(int argc, char **argv)` (argv[0] is
 * the command name; exit 0 ok, 1 refused/failed, 2 usage or I/O error) and
 * `const char cmd_NAME_help[]` (its --help text), and add one COMMAND row. */
#ifndef CAIRN_COMMANDS_H
#define CAIRN_COMMANDS_H

/* COMMAND(name, one-line summary), in the order `cairn --help` lists them. */
#define COMMANDS(COMMAND)                                                                          \
    COMMAND(check, "parse and check a program; exit 0 accepted, 1 refused")                        \
    COMMAND(explain, "explain an error code: the rule, a refused and an accepted example")         \
    COMMAND(build, "build for the host or a CUDA target (--target sm_NN), with OUT.receipt.json")  \
    COMMAND(run, "build into the cache and run; --show prints what it observed")                   \
    COMMAND(show, "print the observations of a raw folder or an observation file, decoded")        \
    COMMAND(diff, "compare two observation sets: which differ, where, by how many ULPs")           \
    COMMAND(expand, "print the program with every derived function written out")                   \
    COMMAND(verify,                                                                                \
            "prove with Z3 that no input makes a function trap or differ from its reference")      \
    COMMAND(predict,                                                                               \
            "roofline: bytes, operations and the time each function should take on a device")      \
    COMMAND(bench, "measure one call of a function on this machine: wall and CPU time")

#define DECLARE_COMMAND(name, summary)                                                             \
    int cmd_##name(int argc, char **argv);                                                         \
    extern const char cmd_##name##_help[];
COMMANDS(DECLARE_COMMAND)
#undef DECLARE_COMMAND

#include <stdio.h>

#include "lib/obs_set.h"
#include "syntax/syntax.h"

/* cmd_verify.c: reads, parses and checks path for `cairn CMD` (cairn_load with
 * LOAD_PENDING_OK: a program refused only with E-UNSUPPORTED is returned too, with a note,
 * since a model does not need the back end). NULL with *rc = 1 (refused, printed) or 2
 * (unreadable). verify, predict and bench share it. */
Program *cmd_load_program(const char *cmd, const char *path, int *rc);

/* cmd_show.c: SET's observations decoded, as `cairn show` prints them (ALL: every element
 * too); `cairn run --show` prints with it. */
void cmd_show_print(FILE *out, const ObsSet *set, int all);

#endif
