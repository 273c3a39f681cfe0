/* check.c: name resolution and the rules of items, statements and regions.
 *
 * Order: declare every top-level name; check consts and layouts; check function
 * signatures; summarise what each function does that a lane may not (transitively
 * through calls); check derive targets and hand them to cairn_derive_grad; check every
 * body; then the whole-program rules (main, implements). Expressions are check_expr.c's.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "check/check_internal.h"
#include "check/layout_check.h"

#define ERR type_scalar(TY_ERROR)

/* ---- symbols and scopes ---- */

static void push_ptr(Arena *a, Symbol ***items, int *len, int *cap, Symbol *s) {
    if (*len == *cap) {
        int ncap = *cap ? *cap * 2 : 32;
        Symbol **n = arena_alloc(a, sizeof(Symbol *) * (size_t)ncap);
        if (*len) memcpy(n, *items, sizeof(Symbol *) * (size_t)*len);
        *items = n;
        *cap = ncap;
    }
    (*items)[(*len)++] = s;
}

Symbol *check_new_symbol(Checker *c, SymKind kind, const char *name, const Type *t, Span span) {
    Symbol *s = arena_alloc(c->arena, sizeof *s);
    s->kind = kind;
    s->name = name;
    s->type = t;
    s->span = span;
    return s;
}

static unsigned hash_name(const char *s) {
    unsigned h = 2166136261u; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static Symbol *lookup_global(Checker *c, const char *name) {
    if (!c->index_cap) return NULL;
    /* Open addressing in a power-of-two table at most half full: a probe ends. */
    assert((c->index_cap & (c->index_cap - 1)) == 0 && c->nglobals * 2 <= c->index_cap);
    for (unsigned i = hash_name(name) & (unsigned)(c->index_cap - 1);;
         i = (i + 1) & (unsigned)(c->index_cap - 1)) {
        Symbol *s = c->global_index[i];
        if (!s) return NULL;
        if (strcmp(s->name, name) == 0) return s;
    }
}

/* Adds a global to the array and the index (growing it at half full). */
static void add_global(Checker *c, Symbol *s) {
    push_ptr(c->arena, &c->globals, &c->nglobals, &c->capglobals, s);
    if (c->nglobals * 2 > c->index_cap) {
        int cap = c->index_cap ? c->index_cap * 2 : 64;
        while (c->nglobals * 2 > cap) cap *= 2;
        c->global_index = arena_alloc(c->arena, sizeof(Symbol *) * (size_t)cap);
        c->index_cap = cap;
        for (int i = 0; i < c->nglobals - 1; i++) {
            unsigned j = hash_name(c->globals[i]->name) & (unsigned)(cap - 1);
            while (c->global_index[j]) j = (j + 1) & (unsigned)(cap - 1);
            c->global_index[j] = c->globals[i];
        }
    }
    unsigned j = hash_name(s->name) & (unsigned)(c->index_cap - 1);
    while (c->global_index[j]) j = (j + 1) & (unsigned)(c->index_cap - 1);
    c->global_index[j] = s;
}

Symbol *check_lookup(Checker *c, const char *name) {
    for (int i = c->nlocals - 1; i >= 0; i--)
        if (strcmp(c->locals[i]->name, name) == 0) return c->locals[i];
    return lookup_global(c, name);
}

/* Declares a local. Reusing the name of a parameter or an enclosing local is
 * E-DUPLICATE (no shadowing among locals); a top-level name may be hidden. */
void check_declare_local(Checker *c, Symbol *s) {
    if (strcmp(s->name, "_") == 0) return;
    Symbol *old = NULL;
    for (int i = c->nlocals - 1; i >= 0 && !old; i--)
        if (strcmp(c->locals[i]->name, s->name) == 0) old = c->locals[i];
    if (old && old->kind != SYM_POISON) {
        diag_error(c->d, s->span, E_DUPLICATE, "pick another name: names are never shadowed",
                   "'%s' is already declared (line %d)", s->name, old->span.line);
    }
    if (c->fn) s->id = c->fn->u.fn.nlocals++;
    push_ptr(c->arena, &c->locals, &c->nlocals, &c->caplocals, s);
}

static void declare_global(Checker *c, Symbol *s) {
    Symbol *old = lookup_global(c, s->name);
    if (old) {
        diag_error(c->d, s->span, E_DUPLICATE, "give each top-level item its own name",
                   "'%s' is already declared (line %d)", s->name, old->span.line);
        return;
    }
    add_global(c, s);
}

void check_defer_later(Checker *c, Later what, Span span, const char *construct) {
    if (c->later_reported[what]) return;
    c->later_reported[what] = true;
    diag_deferred(
        c->d, span, E_UNSUPPORTED,
        "this build checks it but does not lower it yet (docs/language.md lists what is pending)",
        "not supported yet: %s", construct);
}

/* ---- regions ---- */

bool check_in_lane(const Checker *c) {
    for (const Region *r = c->region; r; r = r->outer)
        if (r->lane || r->coop) return true;
    return false;
}

bool check_in_coop(const Checker *c) {
    for (const Region *r = c->region; r; r = r->outer)
        if (r->coop) return true;
    return false;
}

Region *check_push_region(Checker *c, Region *r, bool lane, bool coop, Symbol *var) {
    memset(r, 0, sizeof *r);
    r->outer = c->region;
    r->lane = lane;
    r->coop = coop;
    r->lane_var = var;
    r->scope_base = c->nlocals;
    if (var && strcmp(var->name, "_") != 0) r->scope_base--; /* the binder is the region's */
    c->region = r;
    return r;
}

/* Atomics and plain accesses of one array in one region race (an atomic may hit the
 * element another lane reads or writes plainly): one report per array. */
static void check_atomic_races(Checker *c, Region *r) {
    for (int i = 0; i < r->nacc; i++) {
        if (!r->acc[i].atomic) continue;
        for (int j = 0; j < r->nacc; j++) {
            LaneAccess *p = &r->acc[j];
            if (p->array != r->acc[i].array || p->atomic) continue;
            diag_error(
                c->d, p->span, E_LANE_RACE,
                "touch it only through atomics inside the region, or read it after the region",
                "a lane touches '%s' plainly while lanes update it atomically", p->array->name);
            for (int k = 0; k < r->nacc; k++)
                if (r->acc[k].array == p->array) r->acc[k].atomic = false, r->acc[k].write = false;
            break;
        }
    }
}

/* The race rule, at the end of a parallel region: a lane writes only [i], and reads an
 * array it writes only at [i]. */
static void check_races(Checker *c, Region *r) {
    check_atomic_races(c, r);
    for (int i = 0; i < r->nacc; i++) {
        LaneAccess *w = &r->acc[i];
        if (!w->write) continue;
        bool scalar =
            !(w->array->type && w->array->type->kind == TY_VIEW && w->array->type->u.view.extent);
        if (scalar && !w->whole) {
            diag_error(c->d, w->span, E_LANE_RACE,
                       "give each lane its own variable, or combine with reduce",
                       "a lane assigns '%s', which is declared outside the region", w->array->name);
            continue;
        }
        if (w->whole) {
            diag_error(
                c->d, w->span, E_LANE_RACE,
                "write the lane's own element in the region, or call the function outside it",
                scalar ? "a lane passes '%s', declared outside the region, to be written"
                       : "a lane passes '%s' where it may be written at any element",
                w->array->name);
            continue;
        }
        if (!w->at_lane_index) {
            diag_error(c->d, w->span, E_LANE_RACE,
                       "a lane writes only its own element [i]: to write a neighbour, shift "
                       "the range instead (parallel i in 1..n { y[i] = x[i - 1]; })",
                       "a lane writes '%s' at another lane's element", w->array->name);
            continue;
        }
        for (int j = 0; j < r->nacc; j++) {
            LaneAccess *a = &r->acc[j];
            if (a->array == w->array && !a->write && !a->at_lane_index) {
                diag_error(c->d, a->span, E_LANE_RACE,
                           "read what the region writes only at the lane's own index",
                           "a lane reads '%s' at another lane's element, which that lane writes",
                           a->array->name);
                a->at_lane_index = true; /* one report per read */
            }
        }
    }
    free(r->acc);
}

void check_pop_region(Checker *c, Region *r) {
    assert(c->region == r); /* regions nest: the innermost is popped */
    if (r->lane && !r->coop) check_races(c, r);
    else free(r->acc);
    c->region = r->outer;
}

/* Records an array access inside a lane (the innermost parallel region). In a
 * cooperative region the phase rule judges arrays (check_phase.c); only a thread's
 * write of a variable declared outside the region is refused here. */
void check_region_record(Checker *c, Symbol *array, unsigned how, Expr *index, Span span) {
    bool write = how & REC_WRITE, whole = how & REC_WHOLE;
    Region *r = c->region;
    if (!r || c->no_record || !(r->lane || r->coop)) return;
    bool outside = false;
    for (int i = 0; i < r->scope_base && i < c->nlocals; i++)
        if (c->locals[i] == array) outside = true;
    if (array->kind == SYM_PARAM || array->kind == SYM_CONST) outside = true;
    if (!outside) return; /* the lane's own locals */
    if (r->coop) {
        bool scalar = !(array->type && array->type->kind == TY_VIEW && array->type->u.view.extent);
        if (write && scalar)
            diag_error(c->d, span, E_LANE_RACE,
                       "give each thread its own variable, or combine with an atomic",
                       "a thread assigns '%s', which is declared outside the region", array->name);
        return;
    }
    if (r->nacc == r->capacc) {
        r->capacc = r->capacc ? r->capacc * 2 : 8;
        r->acc = realloc(r->acc, sizeof(LaneAccess) * (size_t)r->capacc);
        if (!r->acc) abort();
    }
    bool at_lane =
        index && index->kind == EXPR_NAME && r->lane_var && index->u.name.sym == r->lane_var;
    r->acc[r->nacc++] = (LaneAccess){array, write, at_lane, whole, span, c->recording_atomic};
}

static void record_index_read(Expr *e, void *ctx) {
    Checker *c = ctx;
    if (e->kind == EXPR_INDEX && e->u.index.base->kind == EXPR_NAME && e->u.index.base->u.name.sym)
        check_region_record(c, e->u.index.base->u.name.sym, 0, e->u.index.index, e->span);
}

void check_region_record_call(Checker *c, const Expr *call, const Item *fn) {
    for (int i = 0; c->region && i < call->u.call.nargs && i < fn->u.fn.nparams; i++) {
        const Param *prm = fn->u.fn.params[i];
        Expr *arg = call->u.call.args[i];
        const Type *pt = prm->type;
        if (pt->kind != TY_VIEW || !pt->u.view.extent || pt->u.view.access != ACCESS_RO ||
            arg->kind != EXPR_NAME || !arg->u.name.sym || prm->reads == PARAM_READS_NONE)
            continue;
        Expr *index = prm->reads == PARAM_READS_AT ? call->u.call.args[prm->reads_at] : NULL;
        check_region_record(c, arg->u.name.sym, 0, index, arg->span);
    }
}

void check_region_record_atomic(Checker *c, Expr *target) {
    ast_visit_expr(target->u.index.index, record_index_read, c);
    Symbol *s = target->u.index.base->kind == EXPR_NAME ? target->u.index.base->u.name.sym : NULL;
    if (!s || c->no_record) return;
    c->recording_atomic = true;
    check_region_record(c, s, 0, target->u.index.index, target->span);
    c->recording_atomic = false;
}

/* A region's arrays must live where it runs: all host, or all device (@unified fits both). */
void check_note_placement(Checker *c, const Type *view, Span span) {
    Placement p = view->u.view.place;
    if (view->u.view.origin == VIEW_SHARED || p == PLACE_UNIFIED) return;
    Region *r = c->region;
    while (r && r->outer) r = r->outer; /* the outermost region decides */
    if (!r) {
        if (p == PLACE_DEVICE)
            diag_error(
                c->d, span, E_PLACEMENT,
                "copy it into a host buffer first: copy(dst, src); or index it inside a region",
                "host code indexes a @device view");
        return;
    }
    if (r->coop && p == PLACE_HOST) {
        diag_error(c->d, span, E_PLACEMENT,
                   "a cooperative region runs on the device: pass @device views",
                   "a cooperative region indexes a host view");
        return;
    }
    if (!r->place_known) {
        r->place_known = true;
        r->place = p;
    } else if (r->place != p) {
        diag_error(
            c->d, span, E_PLACEMENT,
            "a region's arrays all live on the host or all on the device (@unified fits both): "
            "copy(dst, src) moves an array across",
            "a region mixes host and @device views");
    }
}

/* Whether a finished parallel region or pooled reduction runs on the device: it
 * indexed a @device view (host and @unified views alone keep it on the pool). */
bool check_region_on_device(const Region *r) { return r->place_known && r->place == PLACE_DEVICE; }

/* Whether e is the thread's position in the block plus a multiple of 32 (t when the
 * threads start at a multiple of 32, t - 16 when they start at 16, ...): then e / k for
 * k a multiple of 32 is the same in every thread of a hardware warp, which is 32
 * consecutive threads counted from the block's first. */
static bool warp_aligned(const Checker *c, const Expr *e) {
    const Region *r = c->region;
    if (!r || !r->coop) return false;
    int64_t lo = 0, k = 0;
    if (r->lane_lo && !check_const_int((Checker *)c, r->lane_lo, &lo, 0)) return false;
    if (e->kind == EXPR_BINARY && (e->u.binary.op == BIN_SUB || e->u.binary.op == BIN_ADD) &&
        check_const_int((Checker *)c, e->u.binary.rhs, &k, 0)) {
        if (e->u.binary.op == BIN_ADD) k = -k;
        e = e->u.binary.lhs;
    }
    return e->kind == EXPR_NAME && e->u.name.sym == r->lane_var && ((lo - k) % 32 + 32) % 32 == 0;
}

/* Whether e compares a warp-aligned position against a constant that falls on a warp
 * boundary: t < 32 * k and t >= 32 * k (t <= 32 * k - 1, t > 32 * k - 1, either side
 * written first) split the block between warps, never inside one. t < 20 and t == 3
 * do not. */
static bool warp_split(const Checker *c, const Expr *e) {
    BinaryOp op = e->u.binary.op;
    const Expr *l = e->u.binary.lhs, *r = e->u.binary.rhs;
    int64_t k;
    if (op != BIN_LT && op != BIN_LE && op != BIN_GT && op != BIN_GE) return false;
    if (!warp_aligned(c, l)) { /* K op t is t op' K */
        static const BinaryOp swap[] = {
            [BIN_LT] = BIN_GT, [BIN_LE] = BIN_GE, [BIN_GT] = BIN_LT, [BIN_GE] = BIN_LE};
        const Expr *x = l;
        l = r, r = x, op = swap[op];
        if (!warp_aligned(c, l)) return false;
    }
    if (!check_const_int((Checker *)c, r, &k, 0) || k == INT64_MAX) return false;
    if (op == BIN_LE || op == BIN_GT) k += 1; /* t <= K is t < K + 1, t > K is t >= K + 1 */
    return k % 32 == 0;
}

/* Whether a value is the same in every thread of a warp (block false) or of a block
 * (block true). Warp: t / 32 (any multiple of 32) and t < 32 * k are uniform when the
 * threads start at a multiple of 32 (warp_aligned, warp_split), t and t % 2 are not, an
 * element read at a uniform index is uniform (the phase rule keeps it still), and a warp
 * reduction's result is. Block: only constants, parameters, g, uniform loop variables and
 * immutable lets of those, through operators, conversions and pure builtins (the
 * emulation evaluates a barrier's conditions once per block). A user call or an atomic
 * is never uniform (an atomic hands each thread its own old value). */
static bool expr_uniform(const Checker *c, const Expr *e, bool block) {
    switch (e->kind) {
    case EXPR_NAME: {
        const Symbol *s = e->u.name.sym;
        return !(s && (block ? s->block_varying : s->lane_varying));
    }
    case EXPR_BINARY: {
        const Expr *l = e->u.binary.lhs, *r = e->u.binary.rhs;
        int64_t k;
        if (!block && e->u.binary.op == BIN_DIV && check_const_int((Checker *)c, r, &k, 0) &&
            k > 0 && k % 32 == 0 && warp_aligned(c, l))
            return true;
        if (!block && warp_split(c, e)) return true;
        return expr_uniform(c, l, block) && expr_uniform(c, r, block);
    }
    case EXPR_UNARY: return expr_uniform(c, e->u.unary.operand, block);
    case EXPR_CONVERT: return expr_uniform(c, e->u.convert.arg, block);
    case EXPR_INDEX: return !block && expr_uniform(c, e->u.index.index, block);
    case EXPR_CALL: {
        Builtin b = e->u.call.builtin;
        if (b == BI_NONE || ast_builtin_is_atomic(b)) return false;
        if (block && (b == BI_SHUFFLE || b == BI_SHUFFLE_XOR || b == BI_MMA_GET)) return false;
        for (int i = 0; i < e->u.call.nargs; i++)
            if (e->u.call.args[i]->kind != EXPR_STRING &&
                !expr_uniform(c, e->u.call.args[i], block))
                return false;
        return true;
    }
    case EXPR_REDUCE:
        if (e->u.reduce.mode == MODE_WARP) return !block;
        return (!e->u.reduce.lo || expr_uniform(c, e->u.reduce.lo, block)) &&
               expr_uniform(c, e->u.reduce.count, block) &&
               expr_uniform(c, e->u.reduce.body, block);
    default: return true;
    }
}

bool check_warp_uniform(const Checker *c, const Expr *e) { return expr_uniform(c, e, false); }
bool check_block_uniform(const Checker *c, const Expr *e) { return expr_uniform(c, e, true); }

/* The names a cooperative region's body may change after declaring them: assignment
 * targets and names passed to calls (an rw<T> parameter takes a variable by reference).
 * A `let mut` among them counts as varying in the whole region, a sound shortcut that
 * needs no flow analysis. */
static void note_assigned(Region *r, const char *name) {
    for (int i = 0; i < r->nassigned; i++)
        if (strcmp(r->assigned[i], name) == 0) return;
    r->assigned = realloc(r->assigned, sizeof(char *) * (size_t)(r->nassigned + 1));
    if (!r->assigned) abort();
    r->assigned[r->nassigned++] = name;
}

static void collect_call_args(Expr *e, void *ctx) {
    if (e->kind != EXPR_CALL) return;
    for (int i = 0; i < e->u.call.nargs; i++)
        if (e->u.call.args[i]->kind == EXPR_NAME)
            note_assigned(ctx, e->u.call.args[i]->u.name.name);
}

static void collect_assigned(Region *r, const Block *b) {
    for (int i = 0; i < b->nstmts; i++) {
        const Stmt *s = b->stmts[i];
        if (s->kind == STMT_ASSIGN && s->u.assign.target->kind == EXPR_NAME)
            note_assigned(r, s->u.assign.target->u.name.name);
        else if (s->kind == STMT_IF) {
            collect_assigned(r, s->u.if_.then);
            for (const Stmt *e = s->u.if_.els; e; e = e->kind == STMT_IF ? e->u.if_.els : NULL) {
                if (e->kind == STMT_BLOCK) collect_assigned(r, e->u.block);
                else collect_assigned(r, e->u.if_.then);
            }
        } else if (s->kind == STMT_FOR) collect_assigned(r, s->u.for_.body);
        else if (s->kind == STMT_BLOCK) collect_assigned(r, s->u.block);
    }
}

static bool region_assigns(const Region *r, const char *name) {
    for (int i = 0; i < r->nassigned; i++)
        if (strcmp(r->assigned[i], name) == 0) return true;
    return false;
}

/* ---- constants ---- */

bool check_const_int(Checker *c, const Expr *e, int64_t *out, int depth) {
    if (!e || depth > 64) return false;
    switch (e->kind) {
    case EXPR_INT:
        if (e->u.int_lit.overflow || e->u.int_lit.value > INT64_MAX) return false;
        *out = (int64_t)e->u.int_lit.value;
        return true;
    case EXPR_NAME: {
        Symbol *s = e->u.name.sym ? e->u.name.sym : lookup_global(c, e->u.name.name);
        if (!s || s->kind != SYM_CONST) return false;
        return check_const_int(c, s->decl.item->u.const_.value, out, depth + 1);
    }
    case EXPR_UNARY: {
        int64_t v;
        if (e->u.unary.op != UN_NEG || !check_const_int(c, e->u.unary.operand, &v, depth + 1) ||
            v == INT64_MIN)
            return false;
        *out = -v;
        return true;
    }
    case EXPR_BINARY: {
        int64_t a, b;
        if (!check_const_int(c, e->u.binary.lhs, &a, depth + 1) ||
            !check_const_int(c, e->u.binary.rhs, &b, depth + 1))
            return false;
        switch (e->u.binary.op) {
        case BIN_ADD: return !__builtin_add_overflow(a, b, out);
        case BIN_SUB: return !__builtin_sub_overflow(a, b, out);
        case BIN_MUL: return !__builtin_mul_overflow(a, b, out);
        case BIN_DIV:
            if (b == 0 || (a == INT64_MIN && b == -1)) return false;
            *out = a / b;
            return true;
        case BIN_REM:
            if (b == 0 || (a == INT64_MIN && b == -1)) return false;
            *out = a % b;
            return true;
        default: return false;
        }
    }
    case EXPR_CALL: return layout_check_fold_int(c, e, out, depth); /* L.cosize() */
    default: return false;
    }
}

/* ---- types written in the source ---- */

/* Checks a written type: view elements are scalars, extents are usize, fragments are
 * well formed. */
const Type *check_type_ok(Checker *c, const Type *t, Span span, bool param) {
    if (t->kind == TY_FRAGMENT) return check_fragment_type(c, t, span);
    if (t->kind != TY_VIEW) return t;
    if (!param) {
        diag_error(c->d, span, E_TYPE_MISMATCH, "views are parameters; allocate arrays with buffer",
                   "a view type is only a parameter's type");
        return ERR;
    }
    const Type *el = t->u.view.elem;
    if (!type_is_scalar(el)) {
        diag_error(c->d, span, E_TYPE_MISMATCH, "views hold scalars", "a view of %s",
                   check_type_text(el));
        return ERR;
    }
    if (t->u.view.extent &&
        type_is_error(check_expr_as(c, t->u.view.extent, type_scalar(TY_USIZE), "a view's extent")))
        return ERR;
    return t;
}

Symbol *check_bind_var(Checker *c, const char *var, Span span, const Type *t);
Symbol *check_bind_var(Checker *c, const char *var, Span span, const Type *t) {
    Symbol *s = check_new_symbol(c, SYM_LOOP, var, t, span);
    check_declare_local(c, s);
    return s;
}

/* `i in n` / `i in a..b`: bounds of one integer type (usize when both are literals). */
void check_binder(Checker *c, Binder *b) {
    const Type *t;
    if (b->lo) {
        CheckTypes both = check_pair(c, b->lo, b->count, type_scalar(TY_USIZE));
        const Type *lt = both.l, *ht = both.r;
        t = type_is_error(lt) || type_is_error(ht) ? ERR : lt;
        if (!type_is_error(t) && !type_equal(lt, ht)) {
            diag_error(c->d, b->count->span, E_TYPE_MISMATCH, "write both bounds in one type",
                       "a range from %s to %s", check_type_text(lt), check_type_text(ht));
            t = ERR;
        }
    } else {
        t = check_expr(c, b->count, type_scalar(TY_USIZE));
    }
    if (!type_is_error(t) && !type_is_int(t)) {
        diag_error(c->d, b->count->span, E_TYPE_MISMATCH, "a range counts with an integer type",
                   "a range over %s", check_type_text(t));
        t = ERR;
    }
    b->sym = check_bind_var(c, b->var, b->var_span, t);
}

/* ---- statements ---- */

static void check_block(Checker *c, Block *b);

static void check_let(Checker *c, Stmt *s) {
    const Type *want =
        s->u.let.declared ? check_type_ok(c, s->u.let.declared, s->span, false) : NULL;
    const Type *t = want ? check_expr_as(c, s->u.let.init, want, "the initialiser")
                         : check_expr(c, s->u.let.init, NULL);
    if (want && !type_is_error(want)) t = want;
    if (!type_is_error(t) && !type_is_scalar(t) && t->kind != TY_FRAGMENT) {
        diag_error(c->d, s->u.let.init->span, E_TYPE_MISMATCH,
                   t->kind == TY_VOID ? "only expressions with a value initialise a let"
                                      : "lets hold scalars and fragments; pass arrays by name",
                   "a let of %s", check_type_text(t));
        t = ERR;
    }
    Symbol *sym = check_new_symbol(c, SYM_LOCAL, s->u.let.name, t, s->u.let.name_span);
    sym->mut = s->u.let.mut;
    sym->decl.stmt = s;
    if (check_in_coop(c)) {
        bool changes = sym->mut && region_assigns(c->region, sym->name);
        sym->lane_varying = changes || !check_warp_uniform(c, s->u.let.init);
        sym->block_varying = changes || !check_block_uniform(c, s->u.let.init);
    }
    if (type_is_error(t)) sym->kind = SYM_POISON;
    check_declare_local(c, sym);
    s->u.let.sym = sym;
}

static bool is_float_assign_op(AssignOp op) { return op != ASSIGN_SET; }

/* Whether target names a `let` whose type its untyped literal gave (let mut s = 0.0;). */
static bool defaulted_let(const Expr *target) {
    if (target->kind != EXPR_NAME || !target->u.name.sym) return false;
    const Symbol *sym = target->u.name.sym;
    return sym->kind == SYM_LOCAL && sym->decl.stmt && sym->decl.stmt->kind == STMT_LET &&
           !sym->decl.stmt->u.let.declared && check_untyped_literal(sym->decl.stmt->u.let.init);
}

/* The value assigned to a let whose literal defaulted its type: a mismatch points at the
 * let, whose type is what to change (let mut s:f32 = 0.0;), not at the value. */
static const Type *check_assign_to_defaulted(Checker *c, Stmt *s, Stmt *let, const Type *t) {
    const Type *v = check_expr(c, s->u.assign.value, t);
    if (type_is_error(v) || type_equal(v, t)) return v;
    if (!type_is_scalar(v)) return check_expr_as(c, s->u.assign.value, t, "the assigned value");
    char *init = cairn_print_expr(let->u.let.init), help[256];
    snprintf(help, sizeof help, "give the let the type you mean: let %s%s:%s = %s;",
             let->u.let.mut ? "mut " : "", let->u.let.name, check_type_text(v), init);
    diag_error(c->d, s->u.assign.value->span, E_TYPE_MISMATCH, help,
               "the assigned value: expected %s, found %s", check_type_text(t), check_type_text(v));
    diag_note(c->d, let->span, "'%s' is %s because its literal %s defaulted to %s", let->u.let.name,
              check_type_text(t), init, check_type_text(t));
    free(init);
    return ERR;
}

static void check_assign(Checker *c, Stmt *s) {
    Expr *target = s->u.assign.target;
    const Type *t;
    if (target->kind == EXPR_NAME) {
        t = check_expr(c, target, NULL);
        Symbol *sym = target->u.name.sym;
        if (sym && sym->kind != SYM_POISON && !sym->mut) {
            const char *help = sym->kind == SYM_LOCAL ? "declare it with `let mut`"
                               : sym->kind == SYM_PARAM
                                   ? "copy it into a `let mut`, or take it as rw<T>"
                                   : "assign a `let mut` variable or an array element";
            diag_error(c->d, target->span, E_IMMUTABLE, help, "'%s' cannot be assigned", sym->name);
            t = ERR;
        } else if (sym && c->region) {
            check_region_record(c, sym, REC_WRITE, NULL, target->span);
        }
    } else if (target->kind == EXPR_INDEX) {
        bool saved = c->no_record;
        c->no_record = true; /* the write is recorded below, not as a read */
        t = check_expr(c, target, NULL);
        c->no_record = saved;
        const Type *vt = target->u.index.base->type;
        if (!type_is_error(t) && vt && vt->kind == TY_VIEW && vt->u.view.access == ACCESS_RO) {
            diag_error(c->d, target->span, E_RO_WRITE, "take the parameter as rw<T>[n]",
                       "a write through the read-only view '%s'",
                       target->u.index.base->kind == EXPR_NAME ? target->u.index.base->u.name.name
                                                               : "?");
            t = ERR;
        }
        Expr *base = target->u.index.base;
        if (base->kind == EXPR_NAME && base->u.name.sym)
            check_region_record(c, base->u.name.sym, REC_WRITE, target->u.index.index,
                                target->span);
    } else {
        diag_error(c->d, target->span, E_IMMUTABLE,
                   "assign a `let mut` variable or an array element", "this cannot be assigned");
        t = ERR;
        check_expr(c, target, NULL);
    }
    const Type *v = defaulted_let(target) && !type_is_error(t)
                        ? check_assign_to_defaulted(c, s, target->u.name.sym->decl.stmt, t)
                        : check_expr_as(c, s->u.assign.value, type_is_error(t) ? NULL : t,
                                        "the assigned value");
    if (type_is_error(t) || type_is_error(v)) return;
    if (is_float_assign_op(s->u.assign.op) && !type_is_int(t) && !type_is_compute_float(t))
        check_operator_error(c, target, t, ast_assign_op_text(s->u.assign.op));
}

static void check_alloc(Checker *c, Stmt *s) {
    bool shared = s->kind == STMT_SHARED;
    const Type *el = s->u.alloc.elem;
    if (shared && !check_in_coop(c))
        diag_error(c->d, s->span, E_COOP_REGION,
                   "declare shared arrays inside blocks ... threads ... { }",
                   "a shared array outside a cooperative region");
    else if (!shared && check_in_lane(c))
        diag_error(c->d, s->span, E_PARALLEL_CALL, "allocate the buffer before the region",
                   "a lane cannot allocate a buffer");
    if (!type_is_scalar(el))
        diag_error(c->d, s->span, E_TYPE_MISMATCH, "arrays hold scalars", "an array of %s",
                   check_type_text(el));
    check_expr_as(c, s->u.alloc.count, type_scalar(TY_USIZE), "an array's length");
    if (s->u.alloc.init->kind != EXPR_ZEROED) {
        check_expr(c, s->u.alloc.init, NULL);
        diag_error(c->d, s->u.alloc.init->span, E_TYPE_MISMATCH, "write `= zeroed`",
                   "arrays start zeroed");
    } else {
        s->u.alloc.init->type = type_scalar(TY_VOID);
    }
    Placement place = shared ? PLACE_DEVICE : s->u.alloc.place;
    if (shared && s->u.alloc.place != PLACE_HOST)
        diag_error(c->d, s->span, E_PLACEMENT, "shared arrays live in the block's shared memory",
                   "a shared array takes no placement");
    Type *t = type_new_view(c->arena, (TypeView){ACCESS_RW, el, s->u.alloc.count, place,
                                                 shared ? VIEW_SHARED : VIEW_BUFFER});
    Symbol *sym = check_new_symbol(c, SYM_BUFFER, s->u.alloc.name, t, s->u.alloc.name_span);
    sym->decl.stmt = s;
    check_declare_local(c, sym);
    s->u.alloc.sym = sym;
}

static void check_return(Checker *c, Stmt *s) {
    const Type *want = c->fn->u.fn.ret;
    if (c->region) {
        diag_error(c->d, s->span, E_LANE_RETURN, "compute a flag in the region and return after it",
                   "a return inside a %s", check_in_coop(c) ? "cooperative region" : "lane");
    }
    if (!s->u.ret.value) {
        if (want->kind != TY_VOID && !type_is_error(want))
            diag_error(c->d, s->span, E_TYPE_MISMATCH, "return a value",
                       "%s returns %s: a value is needed", c->fn->name, check_type_text(want));
        return;
    }
    if (want->kind == TY_VOID) {
        check_expr(c, s->u.ret.value, NULL);
        diag_error(c->d, s->u.ret.value->span, E_TYPE_MISMATCH,
                   "declare the result: fn f(...) -> T", "%s returns no value", c->fn->name);
        return;
    }
    check_expr_as(c, s->u.ret.value, want, "the returned value");
}

static void check_cond(Checker *c, Expr *cond) {
    check_expr_as(c, cond, type_scalar(TY_BOOL), "a condition");
}

/* Shared arrays live for the whole block: declared only at the top level of a blocks
 * region's body (E-COOP-SHARED inside a for, an if or a block statement). */
static void refuse_nested_shared(Checker *c, const Block *b);

static void refuse_nested_shared_stmt(Checker *c, const Stmt *s) {
    switch (s->kind) {
    case STMT_SHARED:
        diag_error(c->d, s->span, E_COOP_SHARED,
                   "declare it at the top of the blocks ... threads ... body: it lives for the "
                   "whole block",
                   "a shared array declared inside a loop, branch or block");
        break;
    case STMT_IF:
        refuse_nested_shared(c, s->u.if_.then);
        if (s->u.if_.els) refuse_nested_shared_stmt(c, s->u.if_.els);
        break;
    case STMT_FOR: refuse_nested_shared(c, s->u.for_.body); break;
    case STMT_BLOCK: refuse_nested_shared(c, s->u.block); break;
    default: break;
    }
}

static void refuse_nested_shared(Checker *c, const Block *b) {
    for (int i = 0; i < b->nstmts; i++) refuse_nested_shared_stmt(c, b->stmts[i]);
}

static void check_region_stmt(Checker *c, Stmt *s) {
    int mark = c->nlocals;
    Region r;
    if (s->kind == STMT_PARALLEL) {
        if (check_in_lane(c))
            diag_error(c->d, s->span, E_PARALLEL_NEST, "nest a for loop inside the lane",
                       "a parallel region inside a lane");
        check_binder(c, &s->u.parallel.b);
        check_push_region(c, &r, true, false, s->u.parallel.b.sym);
        check_block(c, s->u.parallel.body);
        s->u.parallel.on_device = check_region_on_device(&r);
    } else {
        if (check_in_lane(c))
            diag_error(c->d, s->span, E_PARALLEL_NEST, "start cooperative regions from host code",
                       "a cooperative region inside a lane");
        check_binder(c, &s->u.blocks.grid);
        check_binder(c, &s->u.blocks.threads);
        s->u.blocks.threads.sym->lane_varying = true;
        s->u.blocks.threads.sym->block_varying = true;
        check_push_region(c, &r, false, true, s->u.blocks.threads.sym);
        r.lane_lo = s->u.blocks.threads.lo;
        s->u.blocks.on_device = true;
        ast_visit_exprs(s->u.blocks.body, collect_call_args, &r);
        collect_assigned(&r, s->u.blocks.body);
        int errors = c->d->len;
        for (int i = 0; i < s->u.blocks.body->nstmts; i++)
            if (s->u.blocks.body->stmts[i]->kind != STMT_SHARED)
                refuse_nested_shared_stmt(c, s->u.blocks.body->stmts[i]);
        check_block(c, s->u.blocks.body);
        if (c->d->len == errors) check_phases(c, s); /* the phase rule reads a typed body */
        free(r.assigned);
    }
    check_pop_region(c, &r);
    c->nlocals = mark;
}

static void check_stmt(Checker *c, Stmt *s) {
    switch (s->kind) {
    case STMT_LET: check_let(c, s); break;
    case STMT_ASSIGN: check_assign(c, s); break;
    case STMT_EXPR: check_expr(c, s->u.expr, NULL); break;
    case STMT_IF: {
        check_cond(c, s->u.if_.cond);
        bool coop = check_in_coop(c);
        bool varying = coop && !check_warp_uniform(c, s->u.if_.cond);
        bool block_varying = coop && !check_block_uniform(c, s->u.if_.cond);
        if (coop)
            c->region->nonuniform_depth += varying, c->region->block_varying_depth += block_varying;
        check_block(c, s->u.if_.then);
        if (s->u.if_.els) check_stmt(c, s->u.if_.els);
        if (coop)
            c->region->nonuniform_depth -= varying, c->region->block_varying_depth -= block_varying;
        break;
    }
    case STMT_FOR: {
        int mark = c->nlocals;
        Binder *b = &s->u.for_.b;
        check_binder(c, b);
        bool coop = check_in_coop(c);
        bool varying =
            coop && !(check_warp_uniform(c, b->count) && (!b->lo || check_warp_uniform(c, b->lo)));
        bool block_varying = coop && !(check_block_uniform(c, b->count) &&
                                       (!b->lo || check_block_uniform(c, b->lo)));
        b->sym->lane_varying = varying;
        b->sym->block_varying = block_varying;
        if (coop)
            c->region->nonuniform_depth += varying, c->region->block_varying_depth += block_varying;
        check_block(c, s->u.for_.body);
        if (coop)
            c->region->nonuniform_depth -= varying, c->region->block_varying_depth -= block_varying;
        c->nlocals = mark;
        break;
    }
    case STMT_RETURN: check_return(c, s); break;
    case STMT_PARALLEL:
    case STMT_BLOCKS: check_region_stmt(c, s); break;
    case STMT_BUFFER:
    case STMT_SHARED: check_alloc(c, s); break;
    case STMT_BARRIER:
        if (!check_in_coop(c))
            diag_error(c->d, s->span, E_COOP_REGION,
                       "barrier synchronises a block's threads inside blocks ... threads ...",
                       "a barrier outside a cooperative region");
        else if (c->region->block_varying_depth > 0)
            diag_error(
                c->d, s->span, E_COOP_BARRIER,
                "every thread of the block reaches each barrier: put it where conditions and loop "
                "bounds are built from constants, parameters, g and lets of those",
                "a barrier some threads of the block may skip");
        break;
    case STMT_BLOCK: check_block(c, s->u.block); break;
    }
}

static void check_block(Checker *c, Block *b) {
    int mark = c->nlocals;
    for (int i = 0; i < b->nstmts; i++) check_stmt(c, b->stmts[i]);
    c->nlocals = mark;
}

static bool block_returns(const Block *b);

static bool stmt_returns(const Stmt *s) {
    switch (s->kind) {
    case STMT_RETURN: return true;
    case STMT_BLOCK: return block_returns(s->u.block);
    case STMT_IF: return s->u.if_.els && block_returns(s->u.if_.then) && stmt_returns(s->u.if_.els);
    default: return false;
    }
}

static bool block_returns(const Block *b) {
    for (int i = 0; i < b->nstmts; i++)
        if (stmt_returns(b->stmts[i])) return true;
    return false;
}

/* ---- items ---- */

static void check_signature(Checker *c, Item *fn) {
    c->fn = fn;
    int mark = c->nlocals;
    for (int i = 0; i < fn->u.fn.nparams; i++) {
        Param *p = fn->u.fn.params[i];
        const Type *t = check_type_ok(c, p->type, p->span, true);
        Symbol *s = check_new_symbol(c, type_is_error(t) ? SYM_POISON : SYM_PARAM, p->name, t,
                                     p->name_span);
        s->decl.param = p;
        s->mut = t->kind == TY_VIEW && !t->u.view.extent; /* rw<T>: a reference */
        if (s->mut && t->u.view.access == ACCESS_RO) {
            diag_error(c->d, p->span, E_TYPE_MISMATCH, "a scalar parameter is passed by value: x:T",
                       "ro<T> without an extent says nothing");
        }
        check_declare_local(c, s);
        p->sym = s;
    }
    const Type *r = fn->u.fn.ret;
    Span rs = fn->u.fn.ret_span.line ? fn->u.fn.ret_span : fn->name_span;
    if (r->kind == TY_VIEW)
        diag_error(c->d, rs, E_TYPE_MISMATCH,
                   "return scalars; write results through an rw view parameter",
                   "a function cannot return a view");
    else check_type_ok(c, r, rs, false);
    c->nlocals = mark;
    c->fn = NULL;
}

/* `requires e`: a condition on the parameters that every call checks, so it may call no
 * user function and no builtin with an effect, and hold no reduction (E-REQUIRES). */
static void refuse_in_requires(Expr *e, void *ctx) {
    Checker *c = ctx;
    OpFamily family = e->kind == EXPR_CALL ? ast_op(e->u.call.builtin)->family : FAM_FN;
    bool pure_call = e->kind == EXPR_CALL && e->u.call.builtin != BI_NONE &&
                     (family == FAM_BITS || family == FAM_EXACT);
    if ((e->kind == EXPR_CALL && !pure_call) || e->kind == EXPR_REDUCE)
        diag_error(c->d, e->span, E_REQUIRES,
                   "state the promise on the parameters with operators, "
                   "conversions, and sqrt/abs/floor/ceil/trunc/min/max/to_bits/from_bits",
                   "a requires clause cannot hold %s",
                   e->kind == EXPR_REDUCE ? "a reduction" : "this call");
}

static void check_requires(Checker *c, Item *fn) {
    Expr *r = fn->u.fn.requires;
    if (strcmp(fn->name, "main") == 0) {
        diag_error(c->d, r->span, E_REQUIRES,
                   "check the condition in main's body and return an exit status",
                   "main has no callers to promise anything");
        return;
    }
    const Type *t = check_expr_as(c, r, type_scalar(TY_BOOL), "a requires clause");
    if (!type_is_error(t)) ast_visit_expr(r, refuse_in_requires, c);
}

static void check_body(Checker *c, Item *fn) {
    c->fn = fn;
    c->nlocals = 0;
    for (int i = 0; i < fn->u.fn.nparams; i++) {
        Symbol *s = fn->u.fn.params[i]->sym;
        if (s) push_ptr(c->arena, &c->locals, &c->nlocals, &c->caplocals, s);
    }
    if (fn->u.fn.requires) check_requires(c, fn);
    check_block(c, fn->u.fn.body);
    if (fn->u.fn.ret->kind != TY_VOID && !type_is_error(fn->u.fn.ret) &&
        !block_returns(fn->u.fn.body))
        diag_error(c->d, fn->name_span, E_MISSING_RETURN, "end the body with a return",
                   "%s can reach its end without returning %s", fn->name,
                   check_type_text(fn->u.fn.ret));
    c->nlocals = 0;
    c->fn = NULL;
}

/* Whether a const or layout value reaches `target` through the consts and layouts it
 * names (a cycle, which has no value). */
static bool refers_to(Checker *c, const Expr *e, const Item *target, int depth) {
    if (!e || depth > 64) return depth > 64;
    switch (e->kind) {
    case EXPR_NAME: {
        Symbol *s = lookup_global(c, e->u.name.name);
        if (!s || (s->kind != SYM_CONST && s->kind != SYM_LAYOUT)) return false;
        const Item *it = s->decl.item;
        if (it == target) return true;
        return refers_to(c, it->kind == ITEM_CONST ? it->u.const_.value : it->u.layout.value,
                         target, depth + 1);
    }
    case EXPR_UNARY: return refers_to(c, e->u.unary.operand, target, depth + 1);
    case EXPR_BINARY:
        return refers_to(c, e->u.binary.lhs, target, depth + 1) ||
               refers_to(c, e->u.binary.rhs, target, depth + 1);
    case EXPR_CONVERT: return refers_to(c, e->u.convert.arg, target, depth + 1);
    case EXPR_MEMBER: return refers_to(c, e->u.member.base, target, depth + 1);
    case EXPR_CALL:
        if (refers_to(c, e->u.call.callee, target, depth + 1)) return true;
        for (int i = 0; i < e->u.call.nargs; i++)
            if (refers_to(c, e->u.call.args[i], target, depth + 1)) return true;
        return false;
    default: return false;
    }
}

static bool refuse_cycle(Checker *c, Item *it, const Expr *value) {
    if (!refers_to(c, value, it, 0)) return false;
    diag_error(c->d, it->name_span, E_CONST, "give it a value that does not depend on itself",
               "'%s' is defined in terms of itself", it->name);
    return true;
}

static void check_const(Checker *c, Item *it) {
    if (refuse_cycle(c, it, it->u.const_.value)) return;
    const Type *t = it->u.const_.type;
    if (!type_is_int(t) && !type_is_compute_float(t) && t->kind != TY_BOOL) {
        diag_error(c->d, it->span, E_CONST, "consts are integers, f32, f64 or bool",
                   "a const of %s", check_type_text(t));
        return;
    }
    c->in_const = true;
    check_expr_as(c, it->u.const_.value, t, "the const's value");
    c->in_const = false;
}

static void check_layout_item(Checker *c, Item *it) {
    if (refuse_cycle(c, it, it->u.layout.value)) return;
    c->in_const = true;
    check_expr_as(c, it->u.layout.value, type_scalar(TY_LAYOUT), "a layout");
    c->in_const = false;
}

static Symbol *declare_item(Checker *c, Item *it) {
    SymKind k = it->kind == ITEM_FN ? SYM_FN : it->kind == ITEM_CONST ? SYM_CONST : SYM_LAYOUT;
    const Type *t = it->kind == ITEM_CONST    ? it->u.const_.type
                    : it->kind == ITEM_LAYOUT ? type_scalar(TY_LAYOUT)
                                              : type_scalar(TY_VOID);
    Symbol *s = check_new_symbol(c, k, it->name, t, it->name_span);
    s->decl.item = it;
    it->sym = s;
    declare_global(c, s);
    return s;
}

static void check_derive(Checker *c, Item *it, bool *checked) {
    Symbol *s = lookup_global(c, it->u.derive.target);
    if (!s || s->kind != SYM_FN) {
        diag_error(c->d, it->u.derive.target_span, E_GRAD,
                   "derive grad for a function declared in this program", "'%s' is not a function",
                   it->u.derive.target);
    } else {
        it->u.derive.target_fn = s->decl.item;
    }
    int before = c->prog->nitems;
    int errors = c->d->len;
    bool ok = false;
    if (it->u.derive.target_fn) {
        int idx = 0, n0 = c->nitems_written;
        while (idx < n0 && c->prog->items[idx] != it->u.derive.target_fn) idx++;
        if (idx < n0 && !checked[idx]) {
            check_body(c, it->u.derive.target_fn);
            checked[idx] = true;
        }
        if (c->d->len == errors) ok = cairn_derive_grad(c->prog, it, c->d);
        if (c->d->len == errors && ok) ast_verify_or_die(c->prog, AST_SHAPE, "derive grad");
    }
    /* Declare what derive made; when it failed, poison f_grad so calls stay quiet. */
    for (int i = before; i < c->prog->nitems; i++) {
        declare_item(c, c->prog->items[i]);
        if (c->prog->items[i]->kind == ITEM_FN) check_signature(c, c->prog->items[i]);
    }
    if (!ok && c->prog->nitems == before) {
        char *name = arena_printf(c->arena, "%s_grad", it->u.derive.target);
        if (!lookup_global(c, name)) {
            Symbol *poison = check_new_symbol(c, SYM_POISON, name, ERR, it->span);
            add_global(c, poison);
        }
    }
}

/* What main's parameter p cannot be: the command line gives scalars (integers, f32,
 * f64, bool) and host views read from .npy files (docs/tools.md); NULL when it can. */
static const char *main_param_problem(const Param *p, const char **help) {
    const Type *t = p->type;
    if (t->kind == TY_VIEW && !t->u.view.extent) {
        *help = "return what main computes through an rw view, or observe it";
        return "a scalar rw<T> reference";
    }
    if (t->kind == TY_VIEW && t->u.view.place != PLACE_HOST) {
        *help = "take a host view and copy it into a @device buffer: copy(dst, src)";
        return "a view placed off the host";
    }
    if (t->kind == TY_VIEW) return NULL;
    if (type_is_storage_float(t)) {
        *help = "take an f32 and convert it: f16(x), bf16(x), f8e4m3(x)";
        return "a storage float scalar";
    }
    if (!type_is_scalar(t)) {
        *help = "main takes scalars and views";
        return "a fragment";
    }
    return NULL;
}

/* fn main(params) -> i32: its result is the exit status; its parameters come from the
 * command line (`prog x=data.npy n=1000`). */
static void check_main(Checker *c, Item *it) {
    if (it->u.fn.ret->kind != TY_I32)
        diag_error(c->d, it->name_span, E_MAIN, "write fn main(...) -> i32 { ... return 0; }",
                   "main returns i32 (the exit status)");
    for (int i = 0; i < it->u.fn.nparams; i++) {
        const Param *p = it->u.fn.params[i];
        const char *help = NULL, *what = main_param_problem(p, &help);
        if (what)
            diag_error(
                c->d, p->span, E_MAIN, help,
                "main's parameter %s is %s: the command line gives integers, f32, f64, bool and host views",
                p->name, what);
    }
}

/* A pub fn is called from C (cairn build --lib): a C signature must say each parameter
 * and its result (docs/language.md, "pub"). */
static void check_pub(Checker *c, Item *it) {
    if (strcmp(it->name, "last_error") == 0)
        diag_error(c->d, it->name_span, E_PUB, "rename the function",
                   "a pub fn named last_error: a library's PREFIX_last_error is its own");
    for (int i = 0; i < it->u.fn.nparams; i++) {
        const Param *p = it->u.fn.params[i];
        const Type *t = p->type;
        if (t->kind == TY_FRAGMENT)
            diag_error(c->d, p->span, E_PUB, "take the fragment's tile as a view and mma_load it",
                       "a pub fn cannot take a fragment (%s): C has no such type", p->name);
    }
    if (it->u.fn.ret && it->u.fn.ret->kind == TY_FRAGMENT)
        diag_error(c->d, it->name_span, E_PUB, "store the fragment into an rw view: mma_store",
                   "a pub fn cannot return a fragment: C has no such type");
}

static bool same_signature(const Item *a, const Item *b) {
    if (a->u.fn.nparams != b->u.fn.nparams || !type_equal(a->u.fn.ret, b->u.fn.ret)) return false;
    for (int i = 0; i < a->u.fn.nparams; i++)
        if (!type_equal(a->u.fn.params[i]->type, b->u.fn.params[i]->type)) return false;
    return true;
}

static void check_implements(Checker *c, Item *it) {
    Symbol *s = lookup_global(c, it->u.fn.implements);
    if (!s || s->kind != SYM_FN || s->decl.item == it) {
        diag_error(c->d, it->u.fn.implements_span, E_IMPL,
                   "name the reference function this one implements",
                   "'%s' is not another function of this program", it->u.fn.implements);
        return;
    }
    Item *ref = s->decl.item;
    it->u.fn.implements_fn = ref;
    if (!same_signature(it, ref)) {
        diag_error(c->d, it->name_span, E_IMPL,
                   "give the implementation the reference's parameter and return types",
                   "%s's signature differs from %s's", it->name, ref->name);
        return;
    }
    if (diags_has_errors(c->d)) return; /* the signatures need fully typed bodies */
    char *mine = check_rounding_signature(it), *theirs = check_rounding_signature(ref);
    if (strcmp(mine, theirs) != 0)
        diag_error(c->d, it->name_span, E_IMPL_NUMERICS,
                   "perform the reference's roundings: the same sums, conversions and quantizes",
                   "%s rounds as {%s}, its reference %s as {%s}", it->name, mine, ref->name,
                   theirs);
    free(mine);
    free(theirs);
}

/* The last fence: an accepted program has a type on every expression. An untyped one
 * would mean a checker path that returned without a verdict; refuse rather than guess. */
static void require_typed(Expr *e, void *ctx) {
    Checker *c = ctx;
    if (e->type && e->type->kind != TY_ERROR) return;
    diag_error(c->d, e->span, E_UNSUPPORTED,
               "please report this program: the checker missed a rule",
               "this expression was left without a type (internal error)");
}

bool cairn_check(Program *p, Diags *d) {
    int n0 = p->nitems;
    Checker c = {.prog = p, .arena = p->arena, .d = d, .nitems_written = n0};
    for (int i = 0; i < n0; i++)
        if (p->items[i]->kind != ITEM_DERIVE) declare_item(&c, p->items[i]);
    for (int i = 0; i < p->nbroken; i++) /* abandoned by a syntax error: uses stay quiet */
        if (p->broken[i] && !lookup_global(&c, p->broken[i]))
            add_global(&c, check_new_symbol(&c, SYM_POISON, p->broken[i], ERR, (Span){0}));
    for (int i = 0; i < n0; i++) {
        Item *it = p->items[i];
        if (it->kind == ITEM_CONST) check_const(&c, it);
        else if (it->kind == ITEM_LAYOUT) check_layout_item(&c, it);
        else if (it->kind == ITEM_FN) check_signature(&c, it);
    }
    check_lane_effects(&c);
    check_param_reads(&c);
    bool *checked = calloc((size_t)n0 + 1, sizeof(bool));
    if (!checked) abort();
    for (int i = 0; i < n0; i++) {
        if (p->items[i]->kind != ITEM_DERIVE) continue;
        int before = p->nitems;
        check_derive(&c, p->items[i], checked);
        /* again, now that `derive grad` has made functions: a derived function that runs
         * a region has the effect, and so does every function that calls it (a later
         * derive's target, checked next, among them) */
        if (p->nitems > before) check_lane_effects(&c), check_param_reads(&c);
    }
    for (int i = 0; i < p->nitems; i++) {
        Item *it = p->items[i];
        if (it->kind == ITEM_FN && !(i < n0 && checked[i])) check_body(&c, it);
    }
    free(checked);
    if (!diags_has_errors(d)) check_record_facts(&c);
    for (int i = 0; i < p->nitems; i++) {
        Item *it = p->items[i];
        if (it->kind != ITEM_FN) continue;
        if (strcmp(it->name, "main") == 0) check_main(&c, it);
        if (it->pub) check_pub(&c, it);
        if (it->u.fn.implements) check_implements(&c, it);
    }
    for (int i = 0; i < p->nitems && !diags_has_errors(d); i++)
        if (p->items[i]->kind == ITEM_FN)
            ast_visit_exprs(p->items[i]->u.fn.body, require_typed, &c);
    p->checked = !diags_has_errors(d);
    if (p->checked) ast_verify_or_die(p, AST_CHECKED, "checking");
    return p->checked;
}
