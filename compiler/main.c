/* main.c: the cairn command line: the commands of commands.h, dispatched by lib/'s
 * command_main (the same for cairn-farm and cairn-agent). */
#include "commands.h"
#include "lib/command.h"
#include "base/base.h"

/* A row of commands.h: cmd_NAME runs it, cmd_NAME_help is its --help. */
#define CAIRN_COMMAND(name, summary) COMMAND_ENTRY(name, cmd_##name, cmd_##name##_help, summary)
static const Command commands[] = {COMMANDS(CAIRN_COMMAND)};

int main(int argc, char **argv) {
    static const CommandSet set = {"cairn",
                                   "command",
                                   CAIRN_VERSION,
                                   "the CAIRN compiler (every rounding named, every claim checked)",
                                   NULL,
                                   commands,
                                   sizeof commands / sizeof commands[0]};
    return command_main(&set, argc, argv);
}
