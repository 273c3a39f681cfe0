/* cmd_build.c: `cairn build FILE [-o OUT] ...`: the program, built for the host or a
 * CUDA target, and its receipt OUT.receipt.json (driver.h does the work; this file reads the flags and
 * reports). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "driver/driver.h"

const char cmd_build_help[] =
    "usage: cairn build FILE [-o OUT] [--cc gcc|clang|PATH] [--sanitize address,undefined|thread]\n"
    "                   [-O0|-O1|-O2|-O3] [--emit-c DIR [--emit-only]] [--target host|sm_NN] [--emulate]\n"
    "                   [--lib [--prefix P]] [--no-elide] [--explain-guards]\n"
    "\n"
    "Checks FILE, lowers it to C11, compiles it with the host C compiler and writes OUT\n"
    "(default: FILE's name without .cairn, in this folder) and OUT.receipt.json, the\n"
    "build receipt: digests, the compiler and its exact flags, and every rounding the\n"
    "program performs (docs/tools.md). Device work (regions over @device views, blocks)\n"
    "runs emulated on host threads unless a CUDA target is built (docs/devices.md).\n"
    "\n"
    "  -o OUT          where the executable goes\n"
    "  --cc CC         the C compiler: gcc, clang or a path (default: gcc, else clang)\n"
    "  --sanitize S    address,undefined (ASan+UBSan) or thread (TSan)\n"
    "  -O0 .. -O3      optimization level (default -O2)\n"
    "  --emit-c DIR    also write the generated C to DIR/NAME.c (CUDA: and DIR/NAME_dev.cu)\n"
    "  --emit-only     with --emit-c: write the generated files and stop (no compiler runs)\n"
    "  --target T      host (default), or a CUDA architecture sm_NN (sm_80, sm_89, sm_90,\n"
    "                  sm_120): device work becomes CUDA kernels, built and linked by nvcc\n"
    "                  (--fmad=false -prec-div=true -prec-sqrt=true -ftz=false)\n"
    "  --emulate       with --target sm_NN: build with the C compiler and run the device\n"
    "                  work on host threads (the receipt says \"emulate\": true)\n"
    "  --lib           a library instead of an executable: OUT.so, OUT.a (the runtime\n"
    "                  inside) and OUT.h, one C entry per pub fn returning 0, or 1 when it\n"
    "                  trapped (PREFIX_last_error says what and where); OUT defaults to\n"
    "                  libNAME; main is not needed\n"
    "  --prefix P      the library's symbols are P_fn (default: OUT's name less lib)\n"
    "  --no-elide      check every guard where it runs: none proved for a loop (by\n"
    "                  default a check before a loop proves the index and overflow\n"
    "                  guards its bounds allow; the same bits and traps either way)\n"
    "  --explain-guards  print each function's guards by line:col: proved (and by\n"
    "                  what) or kept (the receipt's \"guards\" lists the same)\n"
    "\n"
    "The C flags are always -std=c11 -Wall -Wextra -Werror -ffp-contract=off -fno-fast-math.\n"
    "The runtime is carried inside cairn and compiled once per compiler and flags into the\n"
    "cache ($CAIRN_CACHE, else ~/.cache/cairn).\n"
    "Exit: 0 built, 1 the program was refused, 2 a bad flag, a missing compiler (or nvcc)\n"
    "or an unwritable output, 3 an internal error (the C compiler rejected generated code).\n";

/* Reads build flags and the one source file; shared with nothing else on purpose: run
 * has its own extra flags and its `--`. Returns -1 when it printed help. */
static int parse(int argc, char **argv, BuildOptions *opt, Err *err) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(cmd_build_help, stdout);
            return -1;
        }
        int taken = driver_parse_flag(opt, argc, argv, &i, err);
        if (taken < 0) return DRIVER_USAGE;
        if (taken) continue;
        if (argv[i][0] == '-' && argv[i][1]) {
            return err_fail(err, DRIVER_USAGE, "unknown flag '%s' (see cairn build --help)",
                            argv[i]);
        }
        if (opt->source) {
            return err_fail(err, DRIVER_USAGE, "one source file at a time ('%s' and '%s')",
                            opt->source, argv[i]);
        }
        opt->source = argv[i];
    }
    return 0;
}

int cmd_build(int argc, char **argv) {
    BuildOptions opt = {0};
    Err err = {{0}};
    int status = parse(argc, argv, &opt, &err);
    if (status < 0) return 0;
    if (status == 0) status = driver_build(&opt, &err);
    if (status != 0 && status != DRIVER_REFUSED)
        fprintf(stderr, "cairn build: error: %s\n", err.msg);
    return status == DRIVER_NO_TOOL ? DRIVER_USAGE : status;
}
