/* main.c: the cairn command line: the commands of commands.h, dispatched by lib/'s
 * command_main (the same for cairn-farm and cairn-agent). `--color=auto|always|never`
 * is taken here, for every command, before the command sees its options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "lib/command.h"
#include "base/base.h"
#include "syntax/syntax.h"

/* A row of commands.h: cmd_NAME runs it, cmd_NAME_help is its --help. */
#define CAIRN_COMMAND(name, summary) COMMAND_ENTRY(name, cmd_##name, cmd_##name##_help, summary)
static const Command commands[] = {COMMANDS(CAIRN_COMMAND)};

/* Whether diagnostics are painted under WHEN ("auto", "always", "never"): auto paints
 * on a terminal that is not `dumb`, unless NO_COLOR is set to anything (no-color.org);
 * an explicit --color=always wins over NO_COLOR. -1 for another word. */
static int color_for(const char *when) {
    if (strcmp(when, "always") == 0) return 1;
    if (strcmp(when, "never") == 0) return 0;
    if (strcmp(when, "auto") != 0) return -1;
    const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");
    if (no_color && *no_color) return 0;
    return isatty(STDERR_FILENO) && !(term && strcmp(term, "dumb") == 0);
}

/* Takes every --color[=WHEN] out of ARGV (up to a `--`, after which arguments belong to
 * the program cairn run starts) and sets diagnostics' colour. 0, or the exit status of
 * a bad WHEN. */
static int take_color(int *argc, char **argv) {
    const char *when = "auto";
    int kept = 1;
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            while (i < *argc) argv[kept++] = argv[i++];
            break;
        }
        if (strcmp(argv[i], "--color") == 0) when = "always";
        else if (strncmp(argv[i], "--color=", 8) == 0) when = argv[i] + 8;
        else argv[kept++] = argv[i];
    }
    argv[kept] = NULL;
    *argc = kept;
    int on = color_for(when);
    if (on < 0) {
        fprintf(stderr, "cairn: error: --color takes auto, always or never, not '%s'\n", when);
        return *argc > 1 && strcmp(argv[1], "run") == 0 ? 125 : 2;
    }
    diags_set_color(on);
    return 0;
}

int main(int argc, char **argv) {
    static const CommandSet set = {
        "cairn",
        "command",
        CAIRN_VERSION,
        "the CAIRN compiler (every rounding named, every claim checked)",
        "Every command also takes --color=auto|always|never: diagnostics in colour on a\n"
        "terminal (auto, the default; NO_COLOR set to anything turns it off), always or never.\n"
        "Exit statuses of cairn run: its --help.\n",
        commands,
        sizeof commands / sizeof commands[0]};
    int bad = take_color(&argc, argv);
    return bad ? bad : command_main(&set, argc, argv);
}
