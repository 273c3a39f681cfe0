/* verify_internal.h: what the files of verify/ share: `cairn verify`'s model of a checked
 * program in Z3 (docs/tools.md; the command's interface: verify.h).
 *
 * How a function is modelled. Each function is run symbolically, straight through:
 * integers are bit-vectors of their width, bool is Bool, f32/f64 values are Z3
 * floating-point terms rounded to nearest-even, storage floats are bit-vectors of their
 * width, and a view is an array from 64-bit indices to elements with a length. A float
 * held in a variable or a view element is stored as its IEEE bits, so an input NaN keeps
 * its payload (the replay writes those bits) and `to_bits` of it is exact; the bits of a
 * NaN an operation produced are the hardware's, a fresh NaN pattern (below). Nothing
 * branches: an `if` runs both arms under its condition (the path condition `pc`), and
 * every write is `ite(active, new, old)` where active = pc && alive && !returned.
 * `alive` turns false where a guard fails (the program trapped there), `returned` where
 * the current function returned. Calls are inlined.
 *
 * Two runs of each function. The unrolled run (VP_UNROLL) unrolls loops, regions and
 * reductions up to --unwind iterations; a run that would go further is collected in
 * `beyond`. A guard reached with `beyond` false is reached by a real run (every loop
 * before it modelled), so its sat answers are real counterexamples; its unsat answers
 * mean "verified for extents up to N" when the site can be reached with `beyond` true.
 * The inductive run (VP_INDUCT) replaces every loop by one arbitrary iteration i, lo <= i
 * < hi, from a state where everything the loop writes holds a fresh value (the loop
 * bit), and gives everything it writes fresh values again after it: a superset of every
 * real run at any extent, so its unsat answers prove a property for every extent (the
 * inductive argument, docs/tools.md). Lanes of a parallel region run concurrently: each
 * starts from the region's entry state, and none assumes another passed its guards.
 *
 * Properties. Each guard the lowering emits (compiler/lower/lower_c*.c, runtime/cairn_checked.h)
 * is a site, told apart by its tree node (two guards at one line:col are two sites); the
 * property "this guard never fails" holds when no input reaches it with its condition
 * false. An `implements` declaration is the property "g returns the same bits as its
 * reference for every input": g is called as the reference's callers call it (its
 * extents and requires checked), and they differ when one traps and the other does not,
 * or the results or written views differ (SMT equality: all NaNs one value, +0 and -0
 * two).
 *
 * What is not modelled: a value the model cannot give exactly (a storage float
 * conversion, quantize's exact quotient, mma_unordered, a float reduction, an atomic float
 * add, std.math, what a scan, recursive call or cooperative region may write) is a fresh
 * term carrying a taint bit that names the reason; a property whose formula holds a
 * tainted condition answers unknown with that reason, never verified; one only reached
 * through such a term (a branch on it) is decided over every value the term can take,
 * and a model through it is no counterexample (unknown). Two bits are not
 * reasons: the loop bit (the inductive run's fresh state, which over-approximates), and
 * the NaN bit (the hardware's bits of a computed NaN), which matters only where `to_bits`
 * observes such a NaN: a counterexample is sought again with those NaNs excluded.
 *
 * A std.cr call is an uninterpreted function of its argument with facts that hold for
 * every input (verify_cr.c), and its result carries a range bit, a reason that does not stop a proof:
 * the real function is one the facts allow, so an unsat answer through it proves the
 * property, while a model through it answers unknown with that reason.
 *
 * Files: verify_expr.c (expressions), verify_cr.c (std.cr), verify_stmt.c (statements), verify_call.c (calls,
 * the function's prologue), verify_loop.c (loops, regions, reductions, scans, both runs),
 * verify_solve.c (solvers, the product abstraction, shrinking counterexamples),
 * verify_prop.c (properties, verdicts), verify_cex.c (counterexamples and their replay
 * programs), cmd_verify.c (the command). */
#ifndef CAIRN_VERIFY_INTERNAL_H
#define CAIRN_VERIFY_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>
#include <cjson/cJSON.h>
#include "verify/verify_z3.h"

#include "lib/err.h"
#include "syntax/syntax.h"
#include "verify/verify.h"

#define VERIFY_MAX_REASONS  31  /* taint bits; bit 31 means "more reasons than bits" */
#define VERIFY_MAX_MULS     64  /* products the abstraction relates (more stay exact) */
#define VERIFY_FULL_UNROLL  256 /* a loop with constant bounds runs this many times whole */
#define VERIFY_REPLAY_BYTES ((uint64_t)1 << 28) /* the views a replay allocates, at most */

/* A scalar value: its term, the reasons (taint bits) it is not exact, and for floats the
 * exact IEEE bits where the model knows them (NULL: a NaN's bits are the hardware's). */
typedef struct VVal {
    Z3_ast t;
    unsigned taint;
    Z3_ast bits;
} VVal;

/* A variable, scalar reference or array: what a Symbol is bound to. Views passed to a
 * callee bind the callee's parameter to the caller's cell, so writes reach the caller.
 * `val` holds the stored form: a float's IEEE bits (verify_cell_sort). */
typedef struct VCell {
    const Type *elem; /* the scalar type held (element type for arrays) */
    bool array;
    Z3_ast val; /* the value, or the array term */
    Z3_ast len; /* arrays: the element count, 64 bits */
    unsigned taint;
    Placement place; /* arrays: where the caller's memory lives (replays) */
} VCell;

typedef struct VBind {
    const Symbol *sym;
    VCell *cell;
} VBind;

/* The kinds of property: first every trap kind of ops.def's GUARD rows, in their order
 * and with their wording (ast_guard_text), then the model's own; vk_name in
 * verify_prop.c words those. */
typedef enum VKind {
#define GUARD(kind, wording) VK_##kind = GK_##kind,
#include "syntax/ops.def"
    VK_LAUNCH = GK_COUNT,
    VK_UNMODELLED,
    VK_IMPLEMENTS,
    VK_COUNT
} VKind;

typedef enum VPass { VP_UNROLL, VP_INDUCT } VPass;

/* One property: a guard site (all its unrolled and inlined copies together), with what
 * each run found. */
typedef struct VProp {
    VKind kind;
    Span span;
    const void *node;     /* the tree node of the guard: sites at one span differ by it */
    const char *detail;   /* e.g. the operator, the callee of a requires, the construct */
    Z3_ast violation;     /* the unrolled run: some input reaches the site with ok false,
                         * every loop before it within --unwind */
    Z3_ast beyond;        /* some input reaches the site after a loop ran past --unwind */
    unsigned taint;       /* of the guard's condition */
    unsigned path_taint;  /* of the way to it (branches, earlier guards) */
    unsigned stamp;       /* when the unrolled run last reached it (loops mark theirs) */
    Z3_ast ind_violation; /* the inductive run's (NULL when that run did not reach it) */
    unsigned ind_taint, ind_path_taint;
    int occurrence, occurrences; /* k of n sites with this kind, span and detail */
} VProp;

/* An unsigned product of two non-constant terms, for the abstraction (verify_solve.c). */
typedef struct VMul {
    Z3_ast x, y, p, ok; /* p = x * y; ok: it does not overflow */
} VMul;

typedef struct Verifier {
    Z3_context z;
    Program *prog;
    const VerifyOpts *opt;
    const Item *top;     /* the function under verification */
    const Item *running; /* the function run at depth 0 (top, or its reference) */
    VPass pass;
    /* the symbolic state */
    Z3_ast pc, alive, returned, ret;
    unsigned pc_taint, alive_taint, ret_taint;
    Z3_ast beyond;       /* some run goes past --unwind */
    Z3_ast beyond_at[3]; /* past 1, 2, 4 iterations (small counterexamples are sought first) */
    Z3_ast assume;       /* the top function's prologue: its requires, extents equal to lengths */
    Z3_ast assume_ind;   /* the same, from the inductive run */
    unsigned assume_taint;
    Z3_ast side; /* facts about fresh terms (a hardware NaN pattern is a NaN) */
    VBind *env;
    int nenv, capenv;
    int depth;             /* calls inlined now */
    const Item *stack[16]; /* and which (a recursive call is not modelled) */
    int in_parallel;       /* inside a region's lanes (a pooled reduction's too) */
    int in_device;         /* inside a device region's lanes (their NaNs are the device's) */
    int fresh;             /* names fresh constants */
    bool has_float;        /* the model holds floating-point terms */
    bool saw_loop;         /* the unrolled run met a loop, region or reduction */
    unsigned stamp;        /* counts the unrolled run's guard copies */
    /* what was found */
    VProp *props;
    int nprops, capprops;
    bool collect; /* record guards as properties (off for implements runs) */
    const char *reasons[VERIFY_MAX_REASONS];
    int nreasons;
    unsigned loop_bit, nan_bit; /* the two taint bits that are not reasons */
    unsigned range_bits;        /* std.cr results: bound only by facts true of the real value,
                                 * so unsat through them proves, and a model through them is
                                 * no counterexample */
    Z3_ast nan_sites;           /* to_bits observed a hardware NaN here */
    VMul muls[VERIFY_MAX_MULS];
    int nmuls;
    /* the top function's inputs as they were on entry, one per parameter, for
     * counterexamples and for running an implementation on the same inputs */
    VCell *inputs;
    int ninputs;
    /* the wall-clock safety bound of the property (or prologue) being decided, and
     * whether a query met it: then the verdict is unknown, since it depends on the load */
    double deadline;
    bool expired, prologue_expired;
    const char *cex_prefix; /* the replay being written: its names' prefix (verify_cex.c) */
    /* source ranges of code a run did not walk, each with why (verify_skipped) */
    struct VSkip {
        int off, len;
        const char *why;
    } * skips;
    int nskips, capskips;
    const char *skip_why; /* the property being decided lies in such code: never verified */
    /* replays that could not be written (the first one's reason): an I/O error, exit 2 */
    int unwritten;
    Err unwritten_err;
} Verifier;

/* ---- verify_expr.c ---- */
Z3_sort verify_sort(Verifier *V, const Type *t);
/* The sort a cell stores t in: a float's bits, else verify_sort. */
Z3_sort verify_cell_sort(Verifier *V, const Type *t);
VVal verify_expr(Verifier *V, Expr *e);
/* A stored value read back as a VVal of type t (floats: the value and its bits). */
VVal verify_load(Verifier *V, Z3_ast stored, const Type *t, unsigned taint);
/* v in its stored form; *taint gets the NaN bit when a float's bits are the hardware's. */
Z3_ast verify_stored(Verifier *V, VVal v, const Type *t, unsigned *taint);
/* a && b, a || b */
Z3_ast verify_and(Verifier *V, Z3_ast a, Z3_ast b);
Z3_ast verify_or(Verifier *V, Z3_ast a, Z3_ast b);
/* The current activity: pc && alive && !returned. */
Z3_ast verify_active(Verifier *V);
/* A guard's site: its kind, its tree node and span (two guards at one span are two
 * sites), and what it names (the operator, the callee of a requires, ...; or NULL). */
typedef struct VSite {
    VKind kind;
    const void *node;
    Span span;
    const char *detail;
} VSite;
/* Records a guard at a site: where active, ok must hold; failing kills `alive`. */
void verify_guard(Verifier *V, VSite at, Z3_ast ok, unsigned taint);
/* A fresh constant of a sort, named after stem. */
Z3_ast verify_fresh(Verifier *V, const char *stem, Z3_sort sort);
/* A fresh unconstrained value of type t tainted with reason (formatted at span). */
VVal verify_havoc(Verifier *V, const Type *t, Span span, const char *reason);
unsigned verify_taint_bit(Verifier *V, Span span, const char *reason);
/* A fresh value for everything a cell holds, tainted with bit. */
void verify_havoc_cell(Verifier *V, VCell *c, unsigned bit);
/* An unmodelled construct that may trap: a property answered unknown, and the state
 * after it tainted. */
void verify_unmodelled(Verifier *V, const void *node, Span span, const char *what);
VCell *verify_lookup(Verifier *V, const Symbol *s);
void verify_bind(Verifier *V, const Symbol *s, VCell *c);
/* A new cell holding what init holds (in the arena). */
VCell *verify_new_cell(Verifier *V, VCell init);
Z3_ast verify_u64(Verifier *V, uint64_t v);
/* Integer value v of type t widened to 64 bits (sign- or zero-extended). */
Z3_ast verify_to_u64(Verifier *V, Z3_ast v, const Type *t);
Z3_ast verify_int_const(Verifier *V, const Type *t, uint64_t v);
/* The value of an f32's or f64's IEEE bits. */
double verify_bits_value(const Type *t, uint64_t bits);
/* v[i] as a place: the index guard, then the array's cell and the 64-bit index (NULL
 * when the base is not a view by name, reported unmodelled). */
VCell *verify_element(Verifier *V, Expr *e, Z3_ast *index, unsigned *taint);
/* An arithmetic operation: the operator, the operands' type, and the tree node (and its
 * span) its guards are keyed by. */
typedef struct VArith {
    BinaryOp op;
    const Type *t;
    const void *node;
    Span span;
} VArith;
/* a OP b for integers (checked) or floats, with guards at o's node. */
VVal verify_arith(Verifier *V, VArith o, VVal a, VVal b);

/* ---- verify_cr.c ---- */
/* A std.cr call: an uninterpreted function of its argument with its range facts. */
VVal verify_cr(Verifier *V, Expr *e);

/* ---- verify_stmt.c ---- */
void verify_block(Verifier *V, Block *b);
/* Gives what a call, region or statement may write fresh values tainted with bit: the
 * arrays and variables it assigns, and every argument it passes to an `rw` parameter.
 * Returns whether it may return from the function. */
bool verify_havoc_writes(Verifier *V, Block *b, Expr *e, unsigned bit);
/* ---- verify_call.c ---- */
/* Inlines a call of fn with evaluated arguments (cells for views and references). */
VVal verify_call(Verifier *V, Expr *call);
/* Runs fn as the top function, on V->inputs (made fresh when NULL: lengths free).
 * checked: its prologue is checked as a call checks it (implementations); else assumed,
 * and the assumption is returned (its requires, and extents equal to the lengths where
 * they evaluate). Returns the result in *result (t NULL for none); finals gets the cells
 * of its parameters after the run. */
Z3_ast verify_run_top(Verifier *V, const Item *fn, bool checked, VVal *result, VCell **finals);

/* ---- verify_loop.c ---- */
/* for / parallel statements, reductions and scans (scan answers t NULL). */
void verify_for(Verifier *V, Stmt *s);
void verify_parallel(Verifier *V, Stmt *s);
/* The lanes a region or launch over lo..hi (of type t) runs, as lower_index_count counts
 * them: hi - lo in 64 bits (each widened by its type) when hi > lo, else 0. */
Z3_ast verify_lane_count(Verifier *V, VVal lo, VVal hi, const Type *t);
VVal verify_reduce(Verifier *V, Expr *e);

/* ---- verify_solve.c ---- */
/* How far a query looks: every run the formula holds, or runs within 1, 2 or 4
 * iterations of every loop (VERIFY_WITHIN_SMALL + 0, 1, 2), optionally with every
 * integer input and view length within 256 (VERIFY_SMALL_INPUTS, or'ed in: small
 * operands keep 64-bit products cheap, and most index counterexamples have them). */
enum { VERIFY_ANY = 0, VERIFY_WITHIN_SMALL = 1, VERIFY_SMALL_INPUTS = 8 };
/* A query: the formula f, how far it looks (VERIFY_ANY, ...), and the Z3 resource
 * units it may spend. */
typedef struct VQuery {
    Z3_ast f;
    int within;
    unsigned rlimit;
} VQuery;
/* Checks assume && side && q.f within q.within under q.rlimit of Z3's resource units
 * (deterministic) and the wall clock left to V->deadline (a query that meets it sets
 * V->expired); on sat with model != NULL, *model gets the model (the caller dec-refs
 * it); *reason gets the solver's reason on unknown. An unsat answer is first sought with
 * products abstracted. */
Z3_lbool verify_check(Verifier *V, VQuery q, Z3_model *model, const char **reason);
/* Shrinks a counterexample: first no other guard failing (`others`: their violations),
 * then the smallest view lengths, small values, views of one value and no NaN where the
 * violation allows, within a share of the resource budget. Replaces *model. */
void verify_shrink(Verifier *V, Z3_ast f, int within, Z3_ast others, Z3_model *model);
/* Whether a model's views fit a replay (VERIFY_REPLAY_BYTES in all), and the condition
 * that they do (each view at most its share). */
bool verify_replayable(Verifier *V, Z3_model m);
Z3_ast verify_replay_fits(Verifier *V);
/* Records p = x * y (unsigned, ok its no-overflow test) for the abstraction. */
void verify_note_mul(Verifier *V, Z3_ast x, Z3_ast y, Z3_ast p, Z3_ast ok);

/* ---- verify_prop.c ---- */
/* Code the model does not walk at `at` (a recursive call of callee, a call chain past
 * the depth limit, a cooperative region's body): every guard in it, or in what it calls,
 * is unknown with why in this function's run, whatever another path through it says. */
void verify_skipped(Verifier *V, const Item *callee, Block *region, Span at, const char *why);

/* ---- verify_cex.c ---- */
/* A written counterexample: the replay's path (NULL when it could not be written) and
 * the inputs as the text of a JSON object, both malloc'ed. */
typedef struct VReplay {
    char *path;
    char *inputs_json;
} VReplay;
/* Prints the inputs of a satisfying model to out (when not NULL) and writes a replay
 * program into --cex-dir (created with its parents); a NULL path has the reason in e. */
VReplay verify_write_cex(Verifier *V, Z3_model m, const VProp *p, FILE *out, Err *e);
/* The replay's file name for p (in the arena), without the folder. */
const char *verify_replay_name(Verifier *V, const VProp *p);

#endif
