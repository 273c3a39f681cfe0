/* verify_prop.c: the properties of each function, their queries and their verdicts.
 *
 * A function is run once (verify_stmt.c), which leaves one property per guard site; an
 * implementation (`fn g(...) implements f`) adds the property that g and f agree. Each
 * property is one query to a fresh solver, under its own time limit: the top function's
 * `requires`, no run past --unwind, and the violation. sat is a counterexample (printed
 * and written as a replay program, verify_cex.c), unsat is verified (or "verified for
 * extents up to N" when some input runs past the unwinding), unknown is the solver's
 * reason. A tainted property is not asked: it is unknown, with the reasons of its taint.
 * Each verdict prints as soon as it is decided, with its time. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "verify/verify.h"
#include "lib/timing.h"

static const char *const VK_NAMES[VK_COUNT] = {
    [VK_OVERFLOW] = "integer overflow",
    [VK_DIVZERO] = "division by zero",
    [VK_SHIFT] = "shift count out of range",
    [VK_INDEX] = "index out of bounds",
    [VK_CONVERT] = "integer conversion out of range",
    [VK_FLOAT_CONVERT] = "float to integer conversion out of range",
    [VK_EXTENT] = "view extent mismatch",
    [VK_QUANT_SCALE] = "quantize scale not positive and finite",
    [VK_QUANT_NAN] = "quantize of NaN",
    [VK_E4M3] = "f8e4m3 overflow",
    [VK_REQUIRES] = "requires broken",
    [VK_UNMODELLED] = "unmodelled construct",
    [VK_IMPLEMENTS] = "implements",
};

typedef enum Verdict { VD_VERIFIED, VD_BOUNDED, VD_COUNTEREXAMPLE, VD_UNKNOWN } Verdict;
static const char *const VERDICT_NAMES[] = {"verified", "bounded", "counterexample", "unknown"};

typedef struct Tally {
    int n[4];
} Tally;

/* Z3 reports API misuse through this handler; the default one exits. A property whose
 * terms could not be built answers unknown. */
static bool z3_failed;
static void on_z3_error(Z3_context z, Z3_error_code e) {
    (void)z;
    (void)e;
    z3_failed = true;
}

/* A fresh solver under the time limit, holding the promises (requires) and the
 * restriction to runs within --unwind. Without floats the QF_ABV solver decides the 64-bit
 * index arithmetic of the examples several times faster than the default portfolio
 * (measured on examples/enclose.cairn); with floats the default picks the FP theory. */
static Z3_solver new_solver(Verifier *V, bool within_unwind) {
    Z3_solver s = V->has_float ? Z3_mk_solver(V->z)
                               : Z3_mk_solver_for_logic(V->z, Z3_mk_string_symbol(V->z, "QF_ABV"));
    Z3_solver_inc_ref(V->z, s);
    Z3_params p = Z3_mk_params(V->z);
    Z3_params_inc_ref(V->z, p);
    double ms = V->opt->timeout_s * 1000.0;
    Z3_params_set_uint(V->z, p, Z3_mk_string_symbol(V->z, "timeout"),
                       ms < 1     ? 1u
                       : ms > 4e9 ? 4000000000u
                                  : (unsigned)ms);
    Z3_solver_set_params(V->z, s, p);
    Z3_params_dec_ref(V->z, p);
    Z3_solver_assert(V->z, s, V->assume);
    if (within_unwind) Z3_solver_assert(V->z, s, Z3_mk_not(V->z, V->beyond));
    return s;
}

/* Whether some input that keeps the promises runs past --unwind (computed once). */
static int beyond_reachable(Verifier *V, int *cache) {
    if (*cache >= 0) return *cache;
    Z3_solver s = new_solver(V, false);
    Z3_solver_assert(V->z, s, V->beyond);
    *cache = Z3_solver_check(V->z, s) != Z3_L_FALSE; /* undecided counts as reachable */
    Z3_solver_dec_ref(V->z, s);
    return *cache;
}

static char *taint_reasons(Verifier *V, unsigned taint) {
    StrBuf sb = {0};
    for (int i = 0; i < V->nreasons; i++)
        if (taint & (1u << i)) sb_printf(&sb, "%s%s", sb.len ? "; " : "", V->reasons[i]);
    if (taint & (1u << VERIFY_MAX_REASONS))
        sb_printf(&sb, "%smore constructs not modelled", sb.len ? "; " : "");
    return sb.data ? sb.data : strdup("a construct not modelled");
}

static const char *prop_title(Verifier *V, const VProp *p) {
    if (p->kind == VK_IMPLEMENTS)
        return arena_printf(V->prog->arena, "same result as %s for every input", p->detail);
    if (p->kind == VK_REQUIRES)
        return arena_printf(V->prog->arena, "requires of %s kept", p->detail);
    if (p->kind == VK_EXTENT)
        return arena_printf(V->prog->arena, "view extents of %s match", p->detail);
    if (p->kind == VK_UNMODELLED) return arena_printf(V->prog->arena, "%s", p->detail);
    if (p->detail) return arena_printf(V->prog->arena, "no %s (%s)", VK_NAMES[p->kind], p->detail);
    return arena_printf(V->prog->arena, "no %s", VK_NAMES[p->kind]);
}

static void report(Verifier *V, const VProp *p, Verdict vd, double secs, const char *reason,
                   const char *inputs_json, const char *replay) {
    FILE *out = V->opt->out;
    const char *title = prop_title(V, p);
    if (V->opt->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "function", V->top->name);
        cJSON_AddStringToObject(o, "property",
                                p->kind == VK_IMPLEMENTS ? "implements" : VK_NAMES[p->kind]);
        cJSON_AddStringToObject(o, "title", title);
        char *at =
            arena_printf(V->prog->arena, "%s:%d:%d", p->span.file, p->span.line, p->span.col);
        cJSON_AddStringToObject(o, "at", at);
        cJSON_AddStringToObject(o, "verdict", VERDICT_NAMES[vd]);
        if (vd == VD_BOUNDED) cJSON_AddNumberToObject(o, "unwind", V->opt->unwind);
        cJSON_AddNumberToObject(o, "seconds", secs);
        if (reason) cJSON_AddStringToObject(o, "reason", reason);
        if (inputs_json) cJSON_AddItemToObject(o, "inputs", cJSON_Parse(inputs_json));
        if (replay) cJSON_AddStringToObject(o, "replay", replay);
        char *text = cJSON_PrintUnformatted(o);
        fprintf(out, "%s\n", text);
        free(text);
        cJSON_Delete(o);
    } else {
        const char *verdict =
            vd == VD_BOUNDED ? arena_printf(V->prog->arena,
                                            "verified for extents up to %u (not beyond: unknown)",
                                            V->opt->unwind)
                             : VERDICT_NAMES[vd];
        fprintf(out, "%s: %s at %s:%d:%d: %s (%.2f s)\n", V->top->name, title, p->span.file,
                p->span.line, p->span.col, verdict, secs);
        if (reason) fprintf(out, "    reason: %s\n", reason);
        if (replay) fprintf(out, "    replay: cairn run %s\n", replay);
    }
    fflush(out);
}

/* Decides one property and prints its verdict. An unmodelled value is a fresh term,
 * which can take every value the real one can (and more): so unsat proves the property
 * even through it, but a model that runs through one may be no real run, and answers
 * unknown with the reasons. */
static Verdict decide(Verifier *V, const VProp *p, int *beyond_cache) {
    double t0 = timing_monotonic_seconds();
    if (z3_failed) {
        report(V, p, VD_UNKNOWN, timing_monotonic_seconds() - t0,
               "the model could not be built (Z3 error)", NULL, NULL);
        return VD_UNKNOWN;
    }
    if (p->kind == VK_UNMODELLED) { /* whether it is reached, the construct itself stays unknown */
        char *why = taint_reasons(V, p->taint);
        report(V, p, VD_UNKNOWN, timing_monotonic_seconds() - t0, why, NULL, NULL);
        free(why);
        return VD_UNKNOWN;
    }
    Z3_solver s = new_solver(V, true);
    Z3_solver_assert(V->z, s, p->violation);
    Z3_lbool r = Z3_solver_check(V->z, s);
    Verdict vd;
    if (r == Z3_L_TRUE && p->taint) {
        char *why = taint_reasons(V, p->taint);
        report(V, p, VD_UNKNOWN, timing_monotonic_seconds() - t0, why, NULL, NULL);
        free(why);
        vd = VD_UNKNOWN;
    } else if (r == Z3_L_TRUE) {
        Z3_model m = Z3_solver_get_model(V->z, s);
        Z3_model_inc_ref(V->z, m);
        char *inputs = NULL, *shown = NULL;
        size_t shown_len = 0;
        FILE *mem = V->opt->json ? NULL : open_memstream(&shown, &shown_len);
        char *replay = verify_write_cex(V, m, p, mem, &inputs);
        if (mem) fclose(mem);
        report(V, p, VD_COUNTEREXAMPLE, timing_monotonic_seconds() - t0, NULL, inputs, replay);
        if (shown) fputs(shown, V->opt->out);
        free(shown);
        free(inputs);
        free(replay);
        Z3_model_dec_ref(V->z, m);
        vd = VD_COUNTEREXAMPLE;
    } else if (r == Z3_L_FALSE) {
        vd = beyond_reachable(V, beyond_cache) ? VD_BOUNDED : VD_VERIFIED;
        report(V, p, vd, timing_monotonic_seconds() - t0,
               vd == VD_BOUNDED ? "a loop runs past --unwind for some input" : NULL, NULL, NULL);
    } else {
        const char *why = Z3_solver_get_reason_unknown(V->z, s);
        char *reason =
            (strstr(why, "timeout") || strstr(why, "canceled"))
                ? arena_printf(V->prog->arena, "the solver's time limit (%g s)", V->opt->timeout_s)
                : arena_printf(V->prog->arena, "the solver gave up (%s)", why);
        report(V, p, VD_UNKNOWN, timing_monotonic_seconds() - t0, reason, NULL, NULL);
        vd = VD_UNKNOWN;
    }
    Z3_solver_dec_ref(V->z, s);
    return vd;
}

/* SMT equality of two results: all NaNs are one value, +0 and -0 are two. */
static Z3_ast differ(Verifier *V, Z3_ast a, Z3_ast b) {
    return Z3_mk_not(V->z, Z3_mk_eq(V->z, a, b));
}

/* g implements f: run both on the same inputs; they differ when exactly one traps, or
 * both return and a result or a written element differs. */
static Verdict implements_prop(Verifier *V, const Item *g) {
    const Item *f = g->u.fn.implements_fn;
    int n = g->u.fn.nparams;
    VCell **fin_g = calloc((size_t)n + 1, sizeof *fin_g),
          **fin_f = calloc((size_t)n + 1, sizeof *fin_f);
    if (!fin_g || !fin_f) abort();
    V->collect = false;
    VVal rg = verify_run_top(V, g, fin_g);
    Z3_ast alive_g = V->alive;
    unsigned taint = rg.taint | V->alive_taint;
    VVal rf = verify_run_top(V, f, fin_f);
    Z3_ast alive_f = V->alive;
    taint |= rf.taint | V->alive_taint;
    Z3_context z = V->z;
    Z3_ast diff = Z3_mk_false(z);
    if (rg.t && rf.t) diff = differ(V, rg.t, rf.t);
    for (int i = 0; i < n; i++) {
        const Type *pt = g->u.fn.params[i]->type;
        if (pt->kind != TY_VIEW || pt->u.view.access != ACCESS_RW) continue;
        taint |= fin_g[i]->taint | fin_f[i]->taint;
        if (!fin_g[i]->array) {
            Z3_ast args[2] = {diff, differ(V, fin_g[i]->val, fin_f[i]->val)};
            diff = Z3_mk_or(z, 2, args);
            continue;
        }
        char name[32];
        snprintf(name, sizeof name, "element!%d", V->fresh++);
        Z3_ast k = Z3_mk_const(z, Z3_mk_string_symbol(z, name), Z3_mk_bv_sort(z, 64));
        Z3_ast in = Z3_mk_bvult(z, k, fin_g[i]->len);
        Z3_ast ne = differ(V, Z3_mk_select(z, fin_g[i]->val, k), Z3_mk_select(z, fin_f[i]->val, k));
        Z3_ast both[2] = {in, ne};
        Z3_ast args[2] = {diff, Z3_mk_and(z, 2, both)};
        diff = Z3_mk_or(z, 2, args);
    }
    Z3_ast both_alive[3] = {alive_g, alive_f, diff};
    Z3_ast cases[2] = {Z3_mk_not(z, Z3_mk_eq(z, alive_g, alive_f)), Z3_mk_and(z, 3, both_alive)};
    VProp p = {.kind = VK_IMPLEMENTS,
               .span = g->name_span,
               .detail = f->name,
               .violation = Z3_mk_or(z, 2, cases),
               .taint = taint};
    free(fin_g);
    free(fin_f);
    int cache = -1;
    return decide(V, &p, &cache);
}

static void verify_function(Program *prog, const Item *fn, const VerifyOpts *opt, Tally *tally) {
    Z3_config cfg = Z3_mk_config();
    Z3_context z = Z3_mk_context(cfg);
    Z3_del_config(cfg);
    Z3_set_error_handler(z, on_z3_error);
    z3_failed = false;
    Verifier V = {.z = z, .prog = prog, .opt = opt, .top = fn, .collect = true};
    V.beyond = Z3_mk_false(z);
    V.assume = Z3_mk_true(z);
    VCell **finals = calloc((size_t)fn->u.fn.nparams + 1, sizeof *finals);
    if (!finals) abort();
    verify_run_top(&V, fn, finals);
    free(finals);
    int cache = -1, first = V.nprops;
    for (int i = 0; i < first; i++) tally->n[decide(&V, &V.props[i], &cache)]++;
    if (fn->u.fn.implements_fn) tally->n[implements_prop(&V, fn)]++;
    else if (V.nprops == 0 && !opt->json) fprintf(opt->out, "%s: no guard to check\n", fn->name);
    free(V.props);
    free(V.env);
    Z3_del_context(z);
}

int verify_program(Program *p, const VerifyOpts *opt) {
    Tally t = {{0}};
    double t0 = timing_monotonic_seconds();
    int seen = 0;
    for (int i = 0; i < p->nitems; i++) {
        const Item *it = p->items[i];
        if (it->kind != ITEM_FN || (opt->only && strcmp(opt->only, it->name) != 0)) continue;
        seen++;
        verify_function(p, it, opt, &t);
    }
    if (opt->only && !seen) {
        fprintf(stderr, "cairn verify: error: no function '%s' in %s\n", opt->only, p->src.path);
        return 2;
    }
    if (!opt->json)
        fprintf(
            opt->out,
            "%d verified, %d verified up to %u iterations, %d counterexamples, %d unknown (%.2f s)\n",
            t.n[VD_VERIFIED], t.n[VD_BOUNDED], opt->unwind, t.n[VD_COUNTEREXAMPLE], t.n[VD_UNKNOWN],
            timing_monotonic_seconds() - t0);
    if (t.n[VD_COUNTEREXAMPLE]) return 10;
    if (t.n[VD_BOUNDED] || t.n[VD_UNKNOWN]) return 5;
    return 0;
}
