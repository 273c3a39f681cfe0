/* cmd_verify.c: `cairn verify FILE`: what no input can make a function do, proved with
 * Z3 (the model: verify.h; the properties and verdicts: verify_prop.c). Exit status in
 * CBMC's convention: 0 every property verified, 10 a counterexample, 5 inconclusive;
 * 1 refused program, 2 usage or I/O error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "check/check.h"
#include "lower/lower.h"
#include "verify/verify.h"
#include "lib/fs.h"

const char cmd_verify_help[] =
    "usage: cairn verify FILE [--json] [--budget N] [--timeout S] [--unwind N]\n"
    "                         [--function NAME] [--cex-dir DIR]\n"
    "\n"
    "Proves, for each function, that no input keeping its `requires` makes a guard fail\n"
    "(integer overflow, division by zero, a shift count, an index out of bounds, a\n"
    "conversion out of range, a view extent or requires at a call, a quantize scale that\n"
    "is not positive and finite, quantize of NaN, f8e4m3 overflow), and for\n"
    "`fn g(...) implements f` that g gives f's bits for every input (all NaNs one value,\n"
    "+0 and -0 two). Each property gets its own verdict, printed as soon as it is decided:\n"
    "  verified                        no input breaks it\n"
    "  verified for extents up to N    none within N loop iterations; some input runs more\n"
    "  counterexample                  the inputs, and a replay program: cairn run REPLAY\n"
    "                                  traps where the property said (or exits 10/11 when\n"
    "                                  an implementation's result differs)\n"
    "  unknown                         with the reason: a storage float, mma_unordered, a\n"
    "                                  float reduction, an atomic float add, std.math, a\n"
    "                                  construct not modelled, the solver's budget, or the\n"
    "                                  wall-clock bound (which says so)\n"
    "The same program, binary and options give the same verdicts on every machine at any\n"
    "load: the budget counts the solver's own work, not time.\n"
    "\n"
    "  --json          one JSON object per property, one a line\n"
    "  --budget N      the solver's work per property, in Z3 resource units (rlimit),\n"
    "                  1..4000000000 (default 40000000, about 10 s); decides verdicts\n"
    "  --timeout S     a wall-clock safety bound per property, in seconds (default 600);\n"
    "                  a property it stops is unknown, with that reason\n"
    "  --unwind N      loop iterations modelled, 1..1024 (default 8); a guard proved for one\n"
    "                  arbitrary iteration needs none (docs/tools.md: the inductive step)\n"
    "  --function NAME verify only this function\n"
    "  --coverage      decide nothing: list the trap sites of the built program without a\n"
    "                  property and the properties at no trap site (exit 0: none)\n"
    "  --cex-dir DIR   where replay programs go (default cairn-cex, made with parents)\n"
    "\n"
    "exit status: 0 all verified, 10 a counterexample, 5 inconclusive (unknown or bounded),\n"
    "1 refused program, 2 usage or I/O error (also a replay that could not be written)\n";

static int usage(const char *fmt, const char *arg) {
    fprintf(stderr, "cairn verify: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (cairn verify --help)\n");
    return 2;
}

static bool number(const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) return false;
    *out = v;
    return true;
}

Program *cmd_load_program(const char *cmd, const char *path, int *rc) {
    Diags d;
    diags_init(&d, NULL);
    LoadStatus st;
    Program *p = cairn_load(path, &d, &st, LOAD_PENDING_OK);
    if (st == LOAD_IO_ERROR) {
        fprintf(stderr, "cairn %s: error: cannot read %s: %s\n", cmd, path, strerror(errno));
        *rc = 2;
    } else if (st == LOAD_REFUSED) {
        diags_print(&d, stderr);
        *rc = 1;
    } else if (st == LOAD_PENDING) { /* checked, but for constructs not lowered yet */
        fprintf(stderr,
                "cairn %s: note: %s uses constructs not lowered yet (cairn check says which); "
                "modelling it anyway\n",
                cmd, path);
    }
    d.src = NULL;
    diags_free(&d);
    return p;
}

/* The trap sites of one lowering (LowerOutput.sites), into o: verify gives each a
 * verdict. False when the program does not lower so. */
static bool lowered_sites(Program *p, VerifyOpts *o, const LowerOptions *lo) {
    Diags d;
    diags_init(&d, NULL);
    LowerOutput out = {0};
    out.numerics = cJSON_CreateObject();
    bool ok = lower_program(p, &d, lo, &out) == 0;
    if (ok && out.nsites > 0) {
        VerifySite *sites = arena_alloc(p->arena, sizeof *sites * (size_t)out.nsites);
        for (int i = 0; i < out.nsites; i++)
            sites[i] = (VerifySite){out.sites[i].span, out.sites[i].item};
        o->sites = sites;
        o->nsites = out.nsites;
    }
    cJSON_Delete(out.numerics);
    cJSON_Delete(out.library);
    cJSON_Delete(out.guards);
    sb_free(&out.c);
    sb_free(&out.cu);
    sb_free(&out.h);
    diags_free(&d);
    return ok;
}

/* The trap sites of the program as `cairn run` builds it (the host, device work
 * emulated), or, for one without a main, as `cairn build --lib` does. */
static void trap_sites(Program *p, VerifyOpts *o) {
    if (!p->checked) return;
    LowerOptions exe = {0}, lib = {.lib_prefix = "cairn_verify", .lib_header = "cairn_verify.h"};
    if (!lowered_sites(p, o, &exe)) lowered_sites(p, o, &lib);
}

int cmd_verify(int argc, char **argv) {
    VerifyOpts o = {.unwind = 8,
                    .budget = VERIFY_BUDGET,
                    .timeout_s = 600,
                    .cex_dir = "cairn-cex",
                    .out = stdout};
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        double v;
        bool valued = strcmp(a, "--timeout") == 0 || strcmp(a, "--budget") == 0 ||
                      strcmp(a, "--unwind") == 0 || strcmp(a, "--function") == 0 ||
                      strcmp(a, "--cex-dir") == 0;
        if (valued && i + 1 >= argc) return usage("%s needs a value", a);
        if (strcmp(a, "--json") == 0) o.json = true;
        else if (strcmp(a, "--coverage") == 0) o.coverage = true;
        else if (strcmp(a, "--timeout") == 0) {
            if (!number(argv[++i], 0.001, 86400, &v))
                return usage("--timeout takes seconds, not '%s'", argv[i]);
            o.timeout_s = v;
        } else if (strcmp(a, "--budget") == 0) {
            if (!number(argv[++i], 1, 4e9, &v) || v != (double)(unsigned)v)
                return usage("--budget takes 1..4000000000 resource units, not '%s'", argv[i]);
            o.budget = (unsigned)v;
        } else if (strcmp(a, "--unwind") == 0) {
            if (!number(argv[++i], 1, 1024, &v) || v != (unsigned)v)
                return usage("--unwind takes 1..1024, not '%s'", argv[i]);
            o.unwind = (unsigned)v;
        } else if (strcmp(a, "--function") == 0) o.only = argv[++i];
        else if (strcmp(a, "--cex-dir") == 0) o.cex_dir = argv[++i];
        else if (a[0] == '-' && a[1]) return usage("unknown option '%s'", a);
        else if (path) return usage("one file at a time ('%s')", a);
        else path = a;
    }
    if (!path) return usage("%s", "no file given");
    int rc = 0;
    Program *p = cmd_load_program("verify", path, &rc);
    if (!p) return rc;
    trap_sites(p, &o);
    rc = verify_program(p, &o);
    ast_program_free(p);
    return rc;
}
