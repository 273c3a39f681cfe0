/* layout_check.c: the checker's side of layouts (layout_check.h). A layout is a
 * constant: its constructor's arguments are folded, the layout is built and proved
 * injective once (layout.c), and the value is kept on the expression (Expr.layout) for
 * the methods, the fragment rules and the lowering. */
#include "check/layout_check.h"

#include <assert.h>
#include <inttypes.h>
#include <string.h>

static Expr *arg(const Expr *e, int i) { return e->u.call.args[i]; }

/* Which constructor a call spells (by name, ops.def's FAM_LAYOUT rows and their arity: a
 * layout item's value is folded before its names are resolved), or BI_NONE. */
static Builtin constructor_of(const Expr *e) {
    if (e->kind != EXPR_CALL || e->u.call.callee->kind != EXPR_NAME) return BI_NONE;
    Builtin b = ast_builtin_lookup(e->u.call.callee->u.name.name);
    const OpInfo *op = ast_op(b);
    return op->family == FAM_LAYOUT && e->u.call.nargs == op->min_args ? b : BI_NONE;
}

static const Layout *fold(Checker *c, Expr *e, int depth);

/* Keeps a proved layout on its expression: within the caps its proof enumerated. */
static const Layout *keep(Checker *c, Expr *e, const Layout *l) {
    assert(l->rows * l->cols <= LAYOUT_MAX_SIZE && l->cosize <= LAYOUT_MAX_COSIZE);
    return e->layout = arena_copy(c->arena, l, sizeof *l);
}

/* What build() says when the layout it builds on has none: a cycle of layouts or an
 * error already reported where that layout is written, so nothing more is said. */
static const char INNER_FAILED[] = "the layout it builds on has no value";

/* What build() makes: the layout, the words of why there is none, and whether the
 * arguments were constants. */
typedef struct Built {
    Layout l;
    char msg[256];
    bool constant;
} Built;

/* Builds (not yet proves) the layout a constructor call makes. The result says why the
 * arguments make none; NULL with out->constant false means an argument is not constant
 * (or its layout failed, reported where it is written). */
static const char *build(Checker *c, Expr *e, Builtin b, Built *out, int depth) {
    int64_t v[5] = {0};
    int first = b == BI_LAYOUT_ROWS || b == BI_LAYOUT_COLS ? 0 : 1;
    out->constant = true;
    for (int i = first; i < e->u.call.nargs; i++)
        if (!check_const_int(c, arg(e, i), &v[i], depth + 1)) {
            out->constant = false;
            return NULL;
        }
    Layout *l = &out->l;
    char *msg = out->msg;
    size_t cap = sizeof out->msg;
    if (!first) return layout_rows(v, b == BI_LAYOUT_COLS, l, msg, cap);
    const Layout *inner = fold(c, arg(e, 0), depth + 1); /* depth bounds a cycle of layouts */
    if (!inner) /* never prove `out` unset: a cycle of layouts, or an inner error */
        return INNER_FAILED;
    if (b == BI_LAYOUT_PAD) return layout_pad(inner, v[1], l, msg, cap);
    if (b == BI_LAYOUT_SWIZZLE) return layout_swizzle(inner, &v[1], l, msg, cap);
    return layout_spread(inner, &v[1], l, msg, cap);
}

/* Folds and proves a constructor call; reports what is wrong when `report`. */
static const Layout *fold_call(Checker *c, Expr *e, Builtin b, bool report, int depth) {
    if (e->layout) return e->layout;
    Built built;
    Layout *l = &built.l;
    const char *why = build(c, e, b, &built, depth);
    if (!report) {
        LayoutClash clash;
        return !why && built.constant && layout_prove(l, &clash) ? keep(c, e, l) : NULL;
    }
    if (!built.constant) {
        diag_error(c->d, e->span, E_CONST, "write a layout's sizes as literals or consts",
                   "a layout's arguments are constants");
        return NULL;
    }
    if (why == INNER_FAILED) return NULL;
    if (why) {
        diag_error(c->d, e->span, E_LAYOUT, "see docs/memory.md, \"Layouts\"", "%s", why);
        return NULL;
    }
    LayoutClash k;
    if (!layout_prove(l, &k)) {
        if (k.outside)
            diag_error(c->d, e->span, E_LAYOUT,
                       "swizzle bits inside the tile: m + s + b at most the bits of its cosize",
                       "the swizzle moves coordinate (%" PRIu64 ", %" PRIu64 ") to offset %" PRIu64
                       ", past the %" PRIu64 " offsets of the layout it swizzles",
                       k.a0, k.a1, k.at, k.at2);
        else if (k.share)
            diag_error(c->d, e->span, E_LAYOUT,
                       "give each thread its own values: the spread's counts tile the layout",
                       "thread %" PRIu64 "'s value %" PRIu64 " and thread %" PRIu64
                       "'s value %" PRIu64 " are both element (%" PRIu64 ", %" PRIu64 ")",
                       k.a0, k.a1, k.b0, k.b1, k.at, k.at2);
        else
            diag_error(c->d, e->span, E_LAYOUT,
                       "a layout places each coordinate at its own offset: "
                       "check the swizzle's bits (b, m, s) against the tile",
                       "coordinates (%" PRIu64 ", %" PRIu64 ") and (%" PRIu64 ", %" PRIu64
                       ") both land at offset %" PRIu64,
                       k.a0, k.a1, k.b0, k.b1, k.at);
        return NULL;
    }
    return keep(c, e, l);
}

static const Layout *fold(Checker *c, Expr *e, int depth) {
    if (!e || depth > 64) return NULL;
    if (e->layout) return e->layout;
    if (e->kind == EXPR_NAME) {
        Symbol *s = e->u.name.sym ? e->u.name.sym : check_lookup(c, e->u.name.name);
        if (!s || s->kind != SYM_LAYOUT) return NULL;
        return e->layout = fold(c, s->decl.item->u.layout.value, depth + 1);
    }
    Builtin b = constructor_of(e);
    return b == BI_NONE ? NULL : fold_call(c, e, b, false, depth + 1);
}

const Layout *layout_check_value(Checker *c, Expr *e) { return fold(c, e, 0); }

/* A method call's receiver layout, its arguments and whether they are all constants. */
typedef struct MethodArgs {
    const Layout *l;
    int64_t v[2];
    bool constant;
} MethodArgs;

/* The receiver's layout and the method's constant arguments. */
static bool method_args(Checker *c, const Expr *e, Expr *receiver, MethodArgs *m, int depth) {
    m->l = fold(c, receiver, depth + 1);
    m->constant = true;
    for (int i = 0; i < e->u.call.nargs && i < 2; i++)
        m->constant = m->constant && check_const_int(c, arg(e, i), &m->v[i], depth + 1);
    return m->l != NULL;
}

/* The value of a method with constant arguments, or why it has none. */
static const char *method_value(const MethodArgs *m, Builtin b, uint64_t *out, char *msg,
                                size_t cap) {
    const Layout *l = m->l;
    const int64_t *v = m->v;
    switch (b) {
    case BI_LAYOUT_COSIZE: *out = l->cosize; return NULL;
    case BI_LAYOUT_SIZE: *out = l->rows * l->cols; return NULL;
    case BI_LAYOUT_AT:
        if (v[0] < 0 || v[1] < 0 || (uint64_t)v[0] >= l->rows || (uint64_t)v[1] >= l->cols) {
            snprintf(msg, cap,
                     "(%" PRId64 ", %" PRId64 ") lies outside the %" PRIu64 " x %" PRIu64 " layout",
                     v[0], v[1], l->rows, l->cols);
            return msg;
        }
        *out = cairn_layout_at(l, (uint64_t)v[0], (uint64_t)v[1]);
        return NULL;
    default:
        if (!l->thr_rows) return "only a spread says which thread holds which element";
        if (v[0] < 0 || v[1] < 0 || (uint64_t)v[0] >= cairn_layout_threads(l) ||
            (uint64_t)v[1] >= cairn_layout_values(l)) {
            snprintf(msg, cap,
                     "thread %" PRId64 "'s value %" PRId64 " lies outside the spread (%" PRIu64
                     " threads of %" PRIu64 " values)",
                     v[0], v[1], cairn_layout_threads(l), cairn_layout_values(l));
            return msg;
        }
        *out = cairn_layout_share(l, (uint64_t)v[0], (uint64_t)v[1], b == BI_LAYOUT_COL);
        return NULL;
    }
}

/* Which layout method a call spells (ops.def's FAM_METHOD rows, spelt ".X"), or BI_NONE. */
static Builtin method_of(const Expr *e, Expr **receiver) {
    const Expr *callee = e->u.call.callee;
    if (e->kind != EXPR_CALL || callee->kind != EXPR_MEMBER) return BI_NONE;
    char spelling[32];
    if (snprintf(spelling, sizeof spelling, ".%s", callee->u.member.field) >= (int)sizeof spelling)
        return BI_NONE;
    Builtin b = ast_builtin_lookup(spelling);
    if (!ast_builtin_is_method(b)) return BI_NONE;
    *receiver = callee->u.member.base;
    return b;
}

bool layout_check_fold_int(Checker *c, const Expr *e, int64_t *out, int depth) {
    Expr *receiver;
    Builtin b = method_of(e, &receiver);
    MethodArgs m = {0};
    if (b == BI_NONE || !method_args(c, e, receiver, &m, depth) || !m.constant) return false;
    uint64_t value;
    char msg[160];
    if (method_value(&m, b, &value, msg, sizeof msg) || value > INT64_MAX) return false;
    *out = (int64_t)value;
    return true;
}

bool layout_check_rules(Checker *c, Expr *e, Builtin b, Expr *receiver) {
    if (!receiver) return fold_call(c, e, b, true, 0) != NULL;
    MethodArgs m = {0};
    if (!method_args(c, e, receiver, &m, 0)) return true; /* reported where it is written */
    uint64_t value;
    char msg[160];
    const char *why = method_value(&m, b, &value, msg, sizeof msg);
    bool share = b == BI_LAYOUT_ROW || b == BI_LAYOUT_COL;
    if (why && (m.constant || (share && !m.l->thr_rows))) {
        diag_error(c->d, e->span, E_LAYOUT,
                   share && !m.l->thr_rows
                       ? "name a thread share as spread(L, threads down, threads across, values "
                         "down, values across)"
                       : "coordinates count from 0 below the layout's rows and columns",
                   "%s", why);
        return false;
    }
    return true;
}

/* Rows and columns of the tile one fragment covers. */
static void fragment_extent(const Type *f, uint64_t *rows, uint64_t *cols) {
    int m = f->u.frag.m, n = f->u.frag.n, k = f->u.frag.k;
    *rows = (uint64_t)(f->u.frag.role == FRAG_B ? k : m);
    *cols = (uint64_t)(f->u.frag.role == FRAG_A ? k : n);
}

static bool refuse_consumer(Checker *c, Expr *layout, const char *help, const char *fmt,
                            const char *what) {
    diag_error(c->d, layout->span, E_LAYOUT_CONSUMER, help, fmt, what);
    return false;
}

bool layout_check_consumer(Checker *c, Expr *tile, Expr *layout, const Type *frag) {
    const Layout *l = layout_check_value(c, layout);
    if (!l) return true; /* its error is reported where it is written */
    const char *fam = type_frag_family_name(frag->u.frag.family, frag->u.frag.role);
    int bytes = type_bits(frag->u.frag.elem) / 8;
    if (l->thr_rows)
        return refuse_consumer(
            c, layout, "lay tiles out with rows, cols, pad or swizzle; a spread is a thread share",
            "%s cannot read a spread", fam);
    if (frag->u.frag.family == FRAG_WMMA && l->sw_bits)
        return refuse_consumer(
            c, layout,
            "WMMA reads row-major tiles: use rows(...), or an mma.sync fragment (MmaA) for a swizzle",
            "a WMMA fragment cannot read a swizzled layout%s", "");
    if (frag->u.frag.family == FRAG_WMMA && !layout_wmma_readable(l, bytes))
        return refuse_consumer(
            c, layout,
            "WMMA takes a pointer and a leading dimension: a rows layout whose rows are "
            "a multiple of 16 bytes apart (pad by whole 16-byte runs)",
            "%s cannot read this layout", fam);
    uint64_t bi, bj;
    if (frag->u.frag.family == FRAG_MMA && frag->u.frag.role != FRAG_ACC &&
        !layout_runs_intact(l, bytes, &bi, &bj)) {
        diag_error(
            c->d, layout->span, E_LAYOUT_CONSUMER,
            "ldmatrix reads 16-byte runs: pad by whole runs, and swizzle with m of at least the run's bits",
            "%s is loaded with ldmatrix, and this layout splits the 16-byte run lower_at (%" PRIu64
            ", %" PRIu64 ")",
            fam, bi, bj);
        return false;
    }
    uint64_t fr, fc;
    fragment_extent(frag, &fr, &fc);
    if (l->rows % fr || l->cols % fc) {
        diag_error(c->d, layout->span, E_LAYOUT_CONSUMER, "lay the tile out in whole fragments",
                   "a %" PRIu64 " x %" PRIu64 " layout is not made of %s's %" PRIu64 " x %" PRIu64
                   " fragments",
                   l->rows, l->cols, fam, fr, fc);
        return false;
    }
    int64_t have;
    const Type *tt = tile->type;
    if (tt && tt->kind == TY_VIEW && tt->u.view.extent &&
        check_const_int(c, tt->u.view.extent, &have, 0) && have >= 0 &&
        (uint64_t)have < l->cosize) {
        diag_error(c->d, tile->span, E_EXTENT,
                   "give the array the layout's cosize: L.cosize() elements",
                   "the layout places offsets up to %" PRIu64 ", and this array holds %" PRId64,
                   l->cosize - 1, have);
        return false;
    }
    return true;
}
