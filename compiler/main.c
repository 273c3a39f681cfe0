/* main.c: the cairn command line: the commands of commands.h, dispatched by lib/'s
 * command_main (the same for cairn-farm and cairn-agent). */
#include "commands.h"
#include "lib/command.h"
#include "version.h"

static const Command commands[] = {
#define COMMAND_ROW(name, summary) {#name, summary, cmd_##name, cmd_##name##_help},
    COMMANDS(COMMAND_ROW)
#undef COMMAND_ROW
};

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
