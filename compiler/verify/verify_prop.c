/* verify_prop.c: the properties of each function, their queries and their verdicts.
 *
 * A function is run twice (verify_loop.c): unrolled, which leaves one property per guard
 * site with its violation, and, when it has a loop, inductively. Before any property,
 * the prologue's assumption is checked once: a `requires` that can never hold makes
 * every property vacuous (its own verdict, exit 5, never 0). Then each property, under
 * its own share of the budget (verify_solve.c):
 *   - a property whose formula holds a value the model does not give exactly is
 *     unknown, with the reasons (no query); a std.cr result is not such a value (its
 *     range bit, verify.h): unsat through it proves, a model through it is unknown;
 *   - the inductive run's violation unsat: verified, at every extent;
 *   - the unrolled run's violation (no run past --unwind) sat: a counterexample, shrunk,
 *     printed and written as a replay (verify_cex.c); where the model went through the
 *     bits of a NaN the hardware picks, it is sought again without them, else unknown;
 *   - unsat: verified, or "verified for extents up to N" when some input runs past the
 *     unwinding; the solver's unknown is its reason.
 * An implementation (`fn g(...) implements f`) adds the property that g and f agree.
 * Each verdict prints as soon as it is decided, with its time. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "verify/verify_internal.h"
#include "lib/timing.h"

/* A property kind's wording: a guard's from its GUARD row, the model's own here. */
static const char *vk_name(VKind k) {
    static const char *const own[VK_COUNT] = {
        [VK_LAUNCH] = "device launch limit",
        [VK_UNMODELLED] = "unmodelled construct",
        [VK_IMPLEMENTS] = "implements",
    };
    return k < VK_LAUNCH ? ast_guard_text((GuardKind)k) : own[k];
}

typedef enum Verdict { VD_VERIFIED, VD_BOUNDED, VD_COUNTEREXAMPLE, VD_UNKNOWN, VD_VACUOUS } Verdict;
static const char *const VERDICT_NAMES[] = {"verified", "bounded", "counterexample", "unknown",
                                            "vacuous"};

typedef struct Tally {
    int n[5];
    int unwritten; /* replays not written, the first one's reason in err */
    Err err;
} Tally;

/* Z3 reports API misuse through this handler; the default one exits. A property whose
 * terms could not be built answers unknown. */
static bool z3_failed;
static void on_z3_error(Z3_context z, Z3_error_code e) {
    (void)z;
    (void)e;
    z3_failed = true;
}

/* Whether some input that keeps the promises reaches p's site after a loop ran past
 * --unwind (then an unsat answer only covers runs within it). */
static bool beyond_reachable(Verifier *V, const VProp *p) {
    if (Z3_is_eq_ast(V->z, p->beyond, Z3_mk_false(V->z))) return false;
    Z3_lbool r = verify_check(V, (VQuery){p->beyond, VERIFY_ANY, V->opt->budget}, NULL, NULL);
    return r != Z3_L_FALSE; /* undecided counts as reachable */
}

/* The reasons of the taint bits, in the order they were met (the loop bit is none). */
static char *taint_reasons(Verifier *V, unsigned taint) {
    StrBuf sb = {0};
    for (int i = 0; i < V->nreasons; i++)
        if ((taint & (1u << i)) && (1u << i) != V->loop_bit)
            sb_printf(&sb, "%s%s", sb.len ? "; " : "", V->reasons[i]);
    if (taint & (1u << VERIFY_MAX_REASONS))
        sb_printf(&sb, "%smore constructs not modelled", sb.len ? "; " : "");
    return sb.data ? sb.data : strdup("a construct not modelled");
}

static const char *prop_title(Verifier *V, const VProp *p) {
    Arena *a = V->prog->arena;
    const char *t;
    if (p->kind == VK_IMPLEMENTS)
        t = arena_printf(a, "same result as %s for every input", p->detail);
    else if (p->kind == VK_REQUIRES) t = arena_printf(a, "requires of %s kept", p->detail);
    else if (p->kind == VK_EXTENT) t = arena_printf(a, "view extents of %s match", p->detail);
    else if (p->kind == VK_UNMODELLED) t = arena_printf(a, "%s", p->detail);
    else if (p->kind == VK_LAUNCH) t = arena_printf(a, "never %s", p->detail);
    else if (p->detail) t = arena_printf(a, "no %s (%s)", vk_name(p->kind), p->detail);
    else t = arena_printf(a, "no %s", vk_name(p->kind));
    if (p->occurrences > 1) t = arena_printf(a, "%s [%d of %d]", t, p->occurrence, p->occurrences);
    return t;
}

/* What a verdict carries besides its name: a reason, a counterexample's inputs (JSON
 * text), its replay (or why none was written), and the other guards its inputs also
 * fail. */
typedef struct Outcome {
    const char *reason, *inputs_json, *replay;
    cJSON *also;
    const char *replay_error;
} Outcome;

static void report_json(Verifier *V, const VProp *p, Verdict vd, double secs, const Outcome *o) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "function", V->top->name);
    cJSON_AddStringToObject(j, "property", vk_name(p->kind));
    cJSON_AddStringToObject(j, "title", prop_title(V, p));
    if (p->detail) cJSON_AddStringToObject(j, "detail", p->detail);
    if (p->occurrences > 1) {
        cJSON_AddNumberToObject(j, "occurrence", p->occurrence);
        cJSON_AddNumberToObject(j, "of", p->occurrences);
    }
    cJSON_AddStringToObject(
        j, "at", arena_printf(V->prog->arena, "%s:%d:%d", p->span.file, p->span.line, p->span.col));
    cJSON_AddStringToObject(j, "verdict", VERDICT_NAMES[vd]);
    if (vd == VD_BOUNDED) cJSON_AddNumberToObject(j, "unwind", V->opt->unwind);
    cJSON_AddNumberToObject(j, "seconds", secs);
    if (o->reason) cJSON_AddStringToObject(j, "reason", o->reason);
    if (o->inputs_json) cJSON_AddItemToObject(j, "inputs", cJSON_Parse(o->inputs_json));
    if (o->replay) cJSON_AddStringToObject(j, "replay", o->replay);
    if (o->replay_error) cJSON_AddStringToObject(j, "replay_error", o->replay_error);
    if (o->also) cJSON_AddItemReferenceToObject(j, "also", o->also);
    char *text = cJSON_PrintUnformatted(j);
    fprintf(V->opt->out, "%s\n", text);
    free(text);
    cJSON_Delete(j);
}

static const char *expired_reason(Verifier *V);

/* Prints a verdict; where the wall-clock bound ran out during the property's queries,
 * whatever they answered, it is unknown with that reason, so that every other verdict
 * is the budget's alone, the same on every machine. */
static void report(Verifier *V, const VProp *p, Verdict vd, double secs, const Outcome *o) {
    FILE *out = V->opt->out;
    Outcome expired = {NULL, NULL, NULL, NULL, NULL};
    if (V->expired) {
        expired.reason = expired_reason(V);
        vd = VD_UNKNOWN, o = &expired;
    } else if (V->skip_why && (vd == VD_VERIFIED || vd == VD_BOUNDED)) {
        /* a counterexample stands (its run is a real one); a proof does not cover the
         * unwalked paths to the guard */
        expired.reason = V->skip_why;
        vd = VD_UNKNOWN, o = &expired;
    }
    if (V->opt->json) {
        report_json(V, p, vd, secs, o);
    } else {
        const char *verdict =
            vd == VD_BOUNDED ? arena_printf(V->prog->arena,
                                            "verified for extents up to %u (not beyond: unknown)",
                                            V->opt->unwind)
                             : VERDICT_NAMES[vd];
        fprintf(out, "%s: %s at %s:%d:%d: %s (%.2f s)\n", V->top->name, prop_title(V, p),
                p->span.file, p->span.line, p->span.col, verdict, secs);
        if (o->reason) fprintf(out, "    reason: %s\n", o->reason);
        if (o->replay) fprintf(out, "    replay: cairn run %s\n", o->replay);
        if (o->replay_error) fprintf(out, "    replay: not written: %s\n", o->replay_error);
        for (int i = 0; o->also && i < cJSON_GetArraySize(o->also); i++)
            fprintf(out, "    the same inputs also fail: %s\n",
                    cJSON_GetArrayItem(o->also, i)->valuestring);
    }
    fflush(out);
}

static Outcome no_outcome(const char *reason) { return (Outcome){reason, NULL, NULL, NULL, NULL}; }

/* The other guards a model fails too ("at FILE:L:C: title"): in a region whose lanes all
 * fail, the replay traps at whichever the pool runs first. */
static cJSON *also_failing(Verifier *V, const VProp *p, Z3_model m) {
    cJSON *list = NULL;
    for (int i = 0; i < V->nprops; i++) {
        const VProp *q = &V->props[i];
        Z3_ast v = NULL;
        if (q == p || q->kind == VK_UNMODELLED || !Z3_model_eval(V->z, m, q->violation, true, &v) ||
            Z3_get_bool_value(V->z, v) != Z3_L_TRUE)
            continue;
        if (!list) list = cJSON_CreateArray();
        cJSON_AddItemToArray(
            list, cJSON_CreateString(arena_printf(V->prog->arena, "%s:%d:%d: %s", q->span.file,
                                                  q->span.line, q->span.col, prop_title(V, q))));
    }
    return list;
}

static Verdict unknown(Verifier *V, const VProp *p, double t0, const char *why) {
    Outcome o = no_outcome(why);
    report(V, p, VD_UNKNOWN, timing_monotonic_seconds() - t0, &o);
    return VD_UNKNOWN;
}

static Verdict unknown_taint(Verifier *V, const VProp *p, double t0, unsigned taint) {
    char *why = taint_reasons(V, taint);
    unknown(V, p, t0, why);
    free(why);
    return VD_UNKNOWN;
}

/* The reason when the wall-clock safety bound, not the budget, ended a property's
 * queries: the one verdict that depends on the machine, and it says so. */
static const char *expired_reason(Verifier *V) {
    return arena_printf(V->prog->arena,
                        "the wall-clock bound (--timeout %g s) ran out before the solver's "
                        "budget (%u units): this verdict depends on the machine's speed and "
                        "load; a larger --timeout gives the budget's verdict",
                        V->opt->timeout_s, V->opt->budget);
}

static const char *solver_reason(Verifier *V, const char *why) {
    if (V->expired) return expired_reason(V);
    if (!why || strstr(why, "resource"))
        return arena_printf(V->prog->arena, "the solver's budget (%u units, --budget)",
                            V->opt->budget);
    return arena_printf(V->prog->arena, "the solver gave up (%s)", why);
}

/* A model m of the violation q found, shrunk, printed and written as a replay. */
static Verdict counterexample(Verifier *V, const VProp *p, double t0, VQuery q, Z3_model m) {
    Z3_ast violation = q.f;
    int within = q.within;
    Z3_ast others = Z3_mk_false(V->z);
    for (int i = 0; i < V->nprops; i++)
        if (&V->props[i] != p && V->props[i].kind != VK_UNMODELLED)
            others = verify_or(V, others, V->props[i].violation);
    verify_shrink(V, violation, within, others, &m);
    if (V->expired) {
        Z3_model_dec_ref(V->z, m);
        return unknown(V, p, t0, NULL);
    }
    if (!verify_replayable(V, m)) { /* one whose views a replay can allocate, if any */
        Z3_model_dec_ref(V->z, m);
        m = NULL;
        violation = verify_and(V, violation, verify_replay_fits(V));
        Z3_lbool r = verify_check(V, (VQuery){violation, within, V->opt->budget}, &m, NULL);
        if (r != Z3_L_TRUE) {
            const char *why = r == Z3_L_FALSE
                                  ? "its counterexamples need views of more than 256 MiB, which no "
                                    "replay can allocate"
                                  : "its counterexamples found need views of more than 256 MiB "
                                    "(no replay can allocate them), and no smaller one was found "
                                    "within the budget";
            if (m) Z3_model_dec_ref(V->z, m);
            return unknown(V, p, t0, why);
        }
        verify_shrink(V, violation, within, others, &m);
        if (V->expired) {
            Z3_model_dec_ref(V->z, m);
            return unknown(V, p, t0, NULL);
        }
    }
    char *shown = NULL;
    size_t shown_len = 0;
    FILE *mem = V->opt->json ? NULL : open_memstream(&shown, &shown_len);
    Err e = {{0}};
    VReplay rp = verify_write_cex(V, m, p, mem, &e);
    char *inputs = rp.inputs_json, *replay = rp.path;
    if (mem) fclose(mem);
    if (!replay && V->unwritten++ == 0) V->unwritten_err = e;
    Outcome o = {NULL, inputs, replay, also_failing(V, p, m), replay ? NULL : e.msg};
    report(V, p, VD_COUNTEREXAMPLE, timing_monotonic_seconds() - t0, &o);
    cJSON_Delete(o.also);
    if (shown) fputs(shown, V->opt->out);
    free(shown);
    free(inputs);
    free(replay);
    Z3_model_dec_ref(V->z, m);
    return VD_COUNTEREXAMPLE;
}

/* The inductive run's answer: unsat proves the property at every extent. */
static bool proved_inductively(Verifier *V, const VProp *p) {
    unsigned soft = V->loop_bit | V->nan_bit | V->range_bits;
    if (!p->ind_violation || ((p->ind_taint | V->assume_taint) & ~soft)) return false;
    Z3_ast assume = V->assume;
    V->assume = V->assume_ind;
    Z3_lbool r =
        verify_check(V, (VQuery){p->ind_violation, VERIFY_ANY, V->opt->budget}, NULL, NULL);
    V->assume = assume;
    return r == Z3_L_FALSE;
}

/* The unrolled run's query: runs of at most 1 iteration of every loop with small
 * integer inputs, then of at most 2 (small formulas, small counterexamples, each under a
 * sixth of the budget), then every run within --unwind. *within says where a model
 * was found. */
static Z3_lbool search_small(Verifier *V, Z3_ast violation, int *within, Z3_model *m) {
    static const unsigned small[3] = {1, 2, 4};
    /* within one iteration and with small inputs; then within two, any inputs */
    for (int s = 0; s < 2 && small[s] < V->opt->unwind; s++) {
        bool looped = !Z3_is_eq_ast(V->z, V->beyond_at[s], Z3_mk_false(V->z));
        int w =
            (looped ? VERIFY_WITHIN_SMALL + s : VERIFY_ANY) | (s == 0 ? VERIFY_SMALL_INPUTS : 0);
        if (verify_check(V, (VQuery){violation, w, V->opt->budget / 6}, m, NULL) == Z3_L_TRUE) {
            *within = w;
            return Z3_L_TRUE;
        }
        if (!looped) break; /* no loop: the full query is the next */
    }
    *within = VERIFY_ANY;
    return Z3_L_UNDEF;
}

static Z3_lbool search(Verifier *V, Z3_ast violation, int *within, Z3_model *m, const char **why) {
    if (search_small(V, violation, within, m) == Z3_L_TRUE) return Z3_L_TRUE;
    return verify_check(V, (VQuery){violation, VERIFY_ANY, V->opt->budget}, m, why);
}

/* Decides one property and prints its verdict. A property whose condition holds a value
 * the model does not give exactly is unknown, with the reasons: a fresh term can take
 * values the real one cannot reach. One reached through such a value (a branch on it)
 * is decided over every value the fresh term can take: unsat proves it, and a model
 * through it is no counterexample. */
static const char *skipped_reason(const Verifier *V, const VProp *p);

static Verdict decide_queries(Verifier *V, const VProp *p, double t0) {
    if (z3_failed) return unknown(V, p, t0, "the model could not be built (Z3 error)");
    unsigned hard = (p->taint | V->assume_taint) & ~(V->loop_bit | V->nan_bit | V->range_bits);
    if (p->kind == VK_UNMODELLED || hard) return unknown_taint(V, p, t0, hard | p->taint);
    Z3_model m = NULL;
    const char *why = NULL;
    Z3_ast violation = p->violation;
    int within = VERIFY_ANY;
    Z3_lbool r = search_small(V, violation, &within, &m); /* a quick counterexample first */
    if (r != Z3_L_TRUE && proved_inductively(V, p)) {
        Outcome o = no_outcome(NULL);
        report(V, p, VD_VERIFIED, timing_monotonic_seconds() - t0, &o);
        return VD_VERIFIED;
    }
    if (r != Z3_L_TRUE)
        r = verify_check(V, (VQuery){violation, VERIFY_ANY, V->opt->budget}, &m, &why);
    if (r == Z3_L_TRUE && ((p->taint | p->path_taint) & V->nan_bit) &&
        !Z3_is_eq_ast(V->z, V->nan_sites, Z3_mk_false(V->z))) {
        /* again, with no to_bits seeing a NaN whose bits the hardware picks */
        Z3_model_dec_ref(V->z, m);
        m = NULL;
        violation = verify_and(V, violation, Z3_mk_not(V->z, V->nan_sites));
        within = VERIFY_ANY;
        r = search(V, violation, &within, &m, &why);
        if (r != Z3_L_TRUE) return unknown_taint(V, p, t0, V->nan_bit);
    }
    unsigned path = (p->path_taint & ~(V->loop_bit | V->nan_bit)) |
                    ((p->taint | V->assume_taint) & V->range_bits);
    if (r == Z3_L_TRUE && path) { /* the model goes through a value not modelled */
        Z3_model_dec_ref(V->z, m);
        return unknown_taint(V, p, t0, path);
    }
    if (r == Z3_L_TRUE)
        return counterexample(V, p, t0, (VQuery){violation, within, V->opt->budget}, m);
    if (r == Z3_L_UNDEF) return unknown(V, p, t0, solver_reason(V, why));
    Verdict vd = beyond_reachable(V, p) ? VD_BOUNDED : VD_VERIFIED;
    Outcome o = no_outcome(vd == VD_BOUNDED ? "a loop runs past --unwind for some input" : NULL);
    report(V, p, vd, timing_monotonic_seconds() - t0, &o);
    return vd;
}

/* Starts a property's (or the prologue's) wall-clock safety bound. */
static void start_clock(Verifier *V) {
    V->expired = false;
    V->deadline = timing_monotonic_seconds() + V->opt->timeout_s;
}

/* Decides one property under the budget; where the wall-clock bound ran out first (here,
 * or in the prologue's check), the verdict is unknown and says so, whatever the queries
 * answered, so that every other verdict is the budget's alone. */
static Verdict decide(Verifier *V, const VProp *p) {
    double t0 = timing_monotonic_seconds();
    start_clock(V);
    V->expired = V->prologue_expired;
    V->skip_why = p->kind == VK_UNMODELLED ? NULL : skipped_reason(V, p);
    Verdict vd = decide_queries(V, p, t0); /* report() turns it unknown if expired */
    bool held = V->skip_why && (vd == VD_VERIFIED || vd == VD_BOUNDED);
    V->skip_why = NULL;
    return V->expired || held ? VD_UNKNOWN : vd;
}

/* Two stored values of type t differ: floats as SMT values (all NaNs one, +0 and -0 two). */
static Z3_ast differ(Verifier *V, const Type *t, Z3_ast a, Z3_ast b) {
    Z3_ast x = verify_load(V, a, t, 0).t, y = verify_load(V, b, t, 0).t;
    return Z3_mk_not(V->z, Z3_mk_eq(V->z, x, y));
}

/* Where a function's run ended: its result (NULL for none) and its parameters' cells. */
typedef struct RunEnd {
    Z3_ast result;
    VCell **finals;
} RunEnd;

/* Whether a result or a written view or reference of g's run and f's differ. */
static Z3_ast outputs_differ(Verifier *V, const Item *g, RunEnd run_g, RunEnd run_f,
                             unsigned *taint) {
    Z3_context z = V->z;
    Z3_ast rg = run_g.result, rf = run_f.result;
    VCell **fin_g = run_g.finals, **fin_f = run_f.finals;
    Z3_ast diff = rg && rf ? Z3_mk_not(z, Z3_mk_eq(z, rg, rf)) : Z3_mk_false(z);
    for (int i = 0; i < g->u.fn.nparams; i++) {
        const Type *pt = g->u.fn.params[i]->type;
        if (pt->kind != TY_VIEW || pt->u.view.access != ACCESS_RW) continue;
        *taint |= fin_g[i]->taint | fin_f[i]->taint;
        if (!fin_g[i]->array) {
            diff = verify_or(V, diff, differ(V, fin_g[i]->elem, fin_g[i]->val, fin_f[i]->val));
            continue;
        }
        Z3_ast k = verify_fresh(V, "element", Z3_mk_bv_sort(z, 64));
        Z3_ast ne = differ(V, fin_g[i]->elem, Z3_mk_select(z, fin_g[i]->val, k),
                           Z3_mk_select(z, fin_f[i]->val, k));
        diff = verify_or(V, diff, verify_and(V, Z3_mk_bvult(z, k, fin_g[i]->len), ne));
    }
    return diff;
}

/* g implements f: f runs as its callers call it (its prologue assumed), and g as those
 * callers would call g in its place (g's extents and requires checked against the same
 * views); they differ when exactly one traps, or both return and a result or a written
 * element differs. */
static VProp implements_prop(Verifier *V, const Item *g) {
    const Item *f = g->u.fn.implements_fn;
    int n = g->u.fn.nparams;
    VCell **fin_g = calloc((size_t)n + 1, sizeof *fin_g),
          **fin_f = calloc((size_t)n + 1, sizeof *fin_f);
    if (!fin_g || !fin_f) abort();
    V->collect = false;
    V->pass = VP_UNROLL;
    V->beyond = V->beyond_at[0] = V->beyond_at[1] = V->beyond_at[2] = Z3_mk_false(V->z);
    V->assume_taint = 0;
    VVal rf, rg;
    V->assume = verify_run_top(V, f, false, &rf, fin_f);
    Z3_ast alive_f = V->alive;
    unsigned taint = rf.taint | V->alive_taint;
    verify_run_top(V, g, true, &rg, fin_g);
    Z3_ast alive_g = V->alive;
    taint |= rg.taint | V->alive_taint;
    Z3_context z = V->z;
    Z3_ast diff = outputs_differ(V, g, (RunEnd){rg.t, fin_g}, (RunEnd){rf.t, fin_f}, &taint);
    Z3_ast both_alive[3] = {alive_g, alive_f, diff};
    Z3_ast cases[2] = {Z3_mk_not(z, Z3_mk_eq(z, alive_g, alive_f)), Z3_mk_and(z, 3, both_alive)};
    free(fin_g);
    free(fin_f);
    return (VProp){.kind = VK_IMPLEMENTS,
                   .span = g->name_span,
                   .node = g,
                   .detail = f->name,
                   .violation = verify_and(V, Z3_mk_or(z, 2, cases), Z3_mk_not(z, V->beyond)),
                   .beyond = V->beyond,
                   .taint = taint};
}

/* Whether the prologue's assumption can hold at all; prints the vacuous verdict if not. */
static bool vacuous(Verifier *V, const Item *fn, const char *what) {
    start_clock(V);
    Z3_lbool r =
        verify_check(V, (VQuery){Z3_mk_true(V->z), VERIFY_ANY, V->opt->budget}, NULL, NULL);
    if (V->expired) V->prologue_expired = true; /* its properties say so (decide) */
    if (r != Z3_L_FALSE) return false;
    const Expr *req = fn->u.fn.requires;
    VProp p = {.kind = VK_REQUIRES,
               .span = req ? req->span : fn->name_span,
               .node = req,
               .detail = fn->name};
    const char *why = arena_printf(V->prog->arena, "requires can never hold: %s is vacuous", what);
    if (V->opt->json) {
        Outcome o = no_outcome(why);
        report_json(V, &p, VD_VACUOUS, 0, &o);
    } else {
        fprintf(V->opt->out, "%s: requires of %s can hold at %s:%d:%d: vacuous\n    reason: %s\n",
                V->top->name, fn->name, p.span.file, p.span.line, p.span.col, why);
        fflush(V->opt->out);
    }
    return true;
}

/* Numbers the properties that share a kind, a line and column and a detail: k of n. */
static void number_sites(Verifier *V) {
    for (int i = 0; i < V->nprops; i++) {
        VProp *p = &V->props[i];
        p->occurrence = p->occurrences = 0;
        for (int j = 0; j < V->nprops; j++) {
            const VProp *q = &V->props[j];
            bool same = q->kind == p->kind && q->span.line == p->span.line &&
                        q->span.col == p->span.col &&
                        strcmp(q->detail ? q->detail : "", p->detail ? p->detail : "") == 0;
            if (!same) continue;
            p->occurrences++;
            if (j <= i) p->occurrence++;
        }
    }
}

/* ---- every trap site has a verdict ----
 * The lowering names each place the built program can trap at (opt->sites). A function
 * reaches the sites of itself, of every function it calls and of every constant it
 * reads, transitively; each such site with no property in its run (a guard the model
 * does not know, or one only in code the model does not walk) is reported unknown, so
 * nothing the built program checks is left without a verdict. */

typedef struct Reach {
    const Item **items;
    int n, cap;
} Reach;

static bool reach_has(const Reach *r, const Item *it) {
    for (int i = 0; i < r->n; i++)
        if (r->items[i] == it) return true;
    return false;
}

static void reach_add(Reach *r, const Item *it) {
    if (!it || reach_has(r, it)) return;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->items = realloc(r->items, sizeof *r->items * (size_t)r->cap);
        if (!r->items) abort();
    }
    r->items[r->n++] = it;
}

static void reach_visit(Expr *e, void *ctx) {
    if (e->kind == EXPR_CALL && e->u.call.builtin == BI_NONE) reach_add(ctx, e->u.call.fn);
    if (e->kind == EXPR_NAME && e->u.name.sym && e->u.name.sym->kind == SYM_CONST)
        reach_add(ctx, e->u.name.sym->decl.item);
}

/* fn and everything it reaches (a worklist over r). */
static void reach_from(Reach *r, const Item *fn) {
    reach_add(r, fn);
    for (int k = 0; k < r->n; k++) {
        const Item *it = r->items[k];
        if (it->kind == ITEM_CONST) {
            ast_visit_expr(it->u.const_.value, reach_visit, r);
            continue;
        }
        if (it->kind != ITEM_FN) continue;
        for (int i = 0; i < it->u.fn.nparams; i++) {
            const Type *t = it->u.fn.params[i]->type;
            if (t->kind == TY_VIEW && t->u.view.extent)
                ast_visit_expr(t->u.view.extent, reach_visit, r);
        }
        if (it->u.fn.requires) ast_visit_expr(it->u.fn.requires, reach_visit, r);
        ast_visit_exprs(it->u.fn.body, reach_visit, r);
    }
}

/* ---- code the model does not walk ---- */

static void add_skip(Verifier *V, Span range, const char *why) {
    if (V->nskips == V->capskips) {
        V->capskips = V->capskips ? 2 * V->capskips : 16;
        V->skips = realloc(V->skips, sizeof *V->skips * (size_t)V->capskips);
        if (!V->skips) abort();
    }
    V->skips[V->nskips++] = (struct VSkip){range.off, range.len, why};
}

void verify_skipped(Verifier *V, const Item *callee, Block *region, Span at, const char *why) {
    const char *text =
        arena_printf(V->prog->arena, "reached through %s (line %d), which the model does not walk",
                     why, at.line);
    Reach r = {0};
    if (callee) reach_from(&r, callee);
    if (region) {
        add_skip(V, at, text);
        ast_visit_exprs(region, reach_visit, &r);
        if (r.n) reach_from(&r, r.items[0]); /* the worklist runs over every item found */
    }
    for (int k = 0; k < r.n; k++) add_skip(V, r.items[k]->span, text);
    free(r.items);
}

/* Why p's guard lies in code the run did not walk somewhere, or NULL. */
static const char *skipped_reason(const Verifier *V, const VProp *p) {
    for (int i = 0; i < V->nskips; i++)
        if (p->span.off >= V->skips[i].off && p->span.off < V->skips[i].off + V->skips[i].len)
            return V->skips[i].why;
    return NULL;
}

static bool same_place(Span a, Span b) { return a.line == b.line && a.col == b.col; }

/* Whether a property of this run stands at s (the implements property is no guard's). */
static bool has_prop(const Verifier *V, Span s) {
    for (int i = 0; i < V->nprops; i++)
        if (V->props[i].kind != VK_IMPLEMENTS && same_place(V->props[i].span, s)) return true;
    return false;
}

/* Whether site k is the first of the sites fn reaches at its place (one verdict each). */
static bool first_reached(const VerifyOpts *o, const Reach *r, int k) {
    if (!o->sites[k].item || !reach_has(r, o->sites[k].item)) return false;
    for (int j = 0; j < k; j++)
        if (o->sites[j].item && same_place(o->sites[j].span, o->sites[k].span) &&
            reach_has(r, o->sites[j].item))
            return false;
    return true;
}

/* Whether s lies in fn's own requires: its guards are the callers' promise, assumed in
 * fn's run and checked in each caller's (docs/tools.md, "What verified means"). */
static bool promised(const Item *fn, Span s) {
    const Expr *r = fn->u.fn.requires;
    return r && s.off >= r->span.off && s.off < r->span.off + r->span.len;
}

static const char *const UNCOVERED =
    "the built program checks here and can trap, and the model has no property for this "
    "guard in this function's run (a guard it does not know, or one reached only through "
    "code it does not walk): not verified";

/* The sites fn reaches without a property: each unknown (or, --coverage, listed).
 * Returns how many. */
static int uncovered_sites(Verifier *V, const Item *fn) {
    const VerifyOpts *o = V->opt;
    if (!o->sites) return 0;
    Reach r = {0};
    reach_from(&r, fn);
    int n = 0;
    for (int k = 0; k < o->nsites; k++) {
        if (!first_reached(o, &r, k) || has_prop(V, o->sites[k].span) ||
            promised(fn, o->sites[k].span))
            continue;
        VProp p = {.kind = VK_UNMODELLED,
                   .span = o->sites[k].span,
                   .detail = "a guard the model has no property for"};
        const char *skipped = skipped_reason(V, &p);
        if (o->coverage && skipped) /* known unwalked: unknown in a run, and says why */
            fprintf(o->out, "%s: unwalked: a trap site at %s:%d:%d: %s\n", fn->name, p.span.file,
                    p.span.line, p.span.col, skipped);
        else if (o->coverage)
            fprintf(o->out, "%s: uncovered: a trap site at %s:%d:%d has no property\n", fn->name,
                    p.span.file, p.span.line, p.span.col);
        else unknown(V, &p, timing_monotonic_seconds(), skipped ? skipped : UNCOVERED);
        n += !(o->coverage && skipped);
    }
    free(r.items);
    return n;
}

/* --coverage: the properties no trap site stands at (a guard the model invents). */
static int unsited_props(Verifier *V, const Item *fn) {
    int n = 0;
    for (int i = 0; i < V->nprops; i++) {
        const VProp *p = &V->props[i];
        bool sited = p->kind == VK_UNMODELLED || p->kind == VK_IMPLEMENTS;
        for (int k = 0; k < V->opt->nsites && !sited; k++)
            sited = same_place(V->opt->sites[k].span, p->span);
        if (sited) continue;
        n++;
        fprintf(V->opt->out, "%s: unsited: %s at %s:%d:%d stands at no trap site\n", fn->name,
                prop_title(V, p), p->span.file, p->span.line, p->span.col);
    }
    return n;
}

/* Both runs of fn: the unrolled one (properties, V->assume) and, when it met a loop, the
 * inductive one (V->assume_ind). */
static void run_both(Verifier *V, const Item *fn) {
    VCell **finals = calloc((size_t)fn->u.fn.nparams + 1, sizeof *finals);
    if (!finals) abort();
    VVal result;
    V->pass = VP_UNROLL;
    V->assume = verify_run_top(V, fn, false, &result, finals);
    V->assume_ind = V->assume;
    if (V->saw_loop) {
        V->pass = VP_INDUCT;
        V->assume_ind = verify_run_top(V, fn, false, &result, finals);
        V->pass = VP_UNROLL;
    }
    free(finals);
}

static void verify_function(Program *prog, const Item *fn, const VerifyOpts *opt, Tally *tally) {
    Z3_config cfg = Z3_mk_config();
    Z3_context z = Z3_mk_context(cfg);
    Z3_del_config(cfg);
    Z3_set_error_handler(z, on_z3_error);
    z3_failed = false;
    Verifier V = {.z = z, .prog = prog, .opt = opt, .top = fn, .collect = true};
    Span none = {0};
    V.loop_bit = verify_taint_bit(&V, none, "a value a loop carries (the inductive step)");
    V.nan_bit = verify_taint_bit(&V, none, "the bits of a NaN an operation made (the hardware's)");
    V.beyond = V.nan_sites = Z3_mk_false(z);
    V.beyond_at[0] = V.beyond_at[1] = V.beyond_at[2] = V.beyond;
    V.side = Z3_mk_true(z);
    run_both(&V, fn);
    number_sites(&V);
    if (opt->coverage) { /* a program that does not build has no trap sites to compare */
        if (opt->sites) tally->n[VD_UNKNOWN] += uncovered_sites(&V, fn) + unsited_props(&V, fn);
        tally->n[VD_VERIFIED] += V.nprops;
    } else if (vacuous(&V, fn, "every property")) {
        tally->n[VD_VACUOUS]++;
    } else {
        for (int i = 0; i < V.nprops; i++) tally->n[decide(&V, &V.props[i])]++;
        tally->n[VD_UNKNOWN] += uncovered_sites(&V, fn);
        if (fn->u.fn.implements_fn) {
            VProp p = implements_prop(&V, fn);
            if (vacuous(&V, fn->u.fn.implements_fn, "the implements property"))
                tally->n[VD_VACUOUS]++;
            else tally->n[decide(&V, &p)]++;
        } else if (V.nprops == 0 && !opt->json) {
            fprintf(opt->out, "%s: no guard to check\n", fn->name);
        }
    }
    if (V.unwritten && tally->unwritten == 0) tally->err = V.unwritten_err;
    tally->unwritten += V.unwritten;
    free(V.props);
    free(V.env);
    free(V.skips);
    Z3_del_context(z);
}

int verify_program(Program *p, const VerifyOpts *opt) {
    Tally t = {{0}, 0, {{0}}};
    double t0 = timing_monotonic_seconds();
    int seen = 0;
    char why[256];
    if (!verify_z3_load(why, sizeof why)) {
        fprintf(stderr, "cairn verify: error: %s\n", why);
        return 2;
    }
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
    if (opt->coverage && !opt->sites) {
        fprintf(opt->out, "coverage: the program does not lower: no trap sites to compare\n");
        return 0;
    }
    if (opt->coverage) { /* n[VERIFIED]: properties; n[UNKNOWN]: sites and properties apart */
        fprintf(opt->out, "coverage: %d trap sites, %d properties, %d apart\n", opt->nsites,
                t.n[VD_VERIFIED], t.n[VD_UNKNOWN]);
        return t.n[VD_UNKNOWN] ? 5 : 0;
    }
    if (!opt->json) {
        fprintf(opt->out,
                "%d verified, %d verified up to %u iterations, %d counterexamples, %d unknown",
                t.n[VD_VERIFIED], t.n[VD_BOUNDED], opt->unwind, t.n[VD_COUNTEREXAMPLE],
                t.n[VD_UNKNOWN]);
        if (t.n[VD_VACUOUS]) fprintf(opt->out, ", %d vacuous", t.n[VD_VACUOUS]);
        fprintf(opt->out, " (%.2f s)\n", timing_monotonic_seconds() - t0);
    }
    if (t.unwritten) { /* the verdicts stand, but a counterexample without its replay */
        fprintf(stderr, "cairn verify: error: %d replay program%s not written (%s)\n", t.unwritten,
                t.unwritten == 1 ? "" : "s", t.err.msg);
        return 2;
    }
    if (t.n[VD_COUNTEREXAMPLE]) return 10;
    if (t.n[VD_BOUNDED] || t.n[VD_UNKNOWN] || t.n[VD_VACUOUS]) return 5;
    return 0;
}
