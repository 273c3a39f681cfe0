/* check_phase.c: the phase rule of cooperative regions (E-COOP-PHASE).
 *
 * The rule. Between two barriers, an element of a shared array or of a @device/@unified
 * view that one thread of a block writes is read or written by no other thread of the
 * block; and since blocks never synchronise, an element one block writes is touched by
 * no other block at all. Atomics may meet atomics; a warp operation on a whole tile
 * (mma_store, mma_load) counts as every thread of its warp touching every element.
 *
 * The model. The region body becomes a control-flow graph whose nodes are accesses and
 * barriers; ifs fork and join (every path, whatever the condition), loops (for, and the
 * binder of a reduce/scan ... for) have a back edge and an exit edge. Barriers are uniform
 * (E-COOP-BARRIER), so all threads of a block pass the same dynamic barriers, and two
 * accesses can run in one phase only if both are reachable from one origin (the region's
 * entry or a barrier) along barrier-free paths. A breadth-first walk from each origin
 * records, for each access it reaches, how often the path went around each loop (0, 1,
 * or "more or left it"): two accesses reached going around a loop that encloses both at
 * most once each are at iterations origin + laps, so their loop variables are tied (equal,
 * or one apart); otherwise they are independent. A loop around a barrier thereby joins
 * the end of one iteration to the start of the next, exactly.
 *
 * The decision. For each pair that can share a phase, with at least one write, the
 * question "can two different threads (t1 != t2, same g; or g1 != g2 for device views)
 * reach the same element?" becomes a small integer linear system over t, g, loop
 * variables and parameters: indices, loop bounds and the comparisons of enclosing ifs
 * (conjunctions; anything else is dropped, which only loses precision) are affine with
 * constant coefficients; x / C and x % C of an unsigned x add a quotient and remainder;
 * x / d and x % d for a d that is not a constant add their ranges (d >= 1, rem < d) and,
 * for two numerators over one d, the disjunction "quotients differ, or x1 - x2 = rem1 -
 * rem2"; immutable lets are read through. Two indices row * n + rest over one stride n
 * that is not a constant add "equal rows and rests, or rests n apart" (stride_split); each
 * choice of cases is then a system of its own. What is not affine (an element read, a
 * call, a let mut) becomes a fresh unknown.
 *
 * Layouts. L.at(i, j) of an unswizzled layout is the affine i * row_stride + j *
 * col_stride. A swizzled one is not affine, but every constant layout is proved injective
 * at `cairn check` (layout_prove), and .at and fragments trap outside its domain: so two
 * accesses s[L.at(i1, j1)] and s[L.at(i2, j2)] through one layout (one map:
 * layout_same_map) meet exactly when (i1, j1) == (i2, j2), and a fragment through it
 * touches exactly the image of its rectangle of coordinates; the system then equates the
 * coordinates instead of the offsets. A swizzled access against a plain index, a
 * whole-array access or another layout says nothing about the element: conservative
 * (no offsets are enumerated). The system is solved by base/intsys.c (exact integer
 * elimination of the equalities with a unit coefficient, then Fourier-Motzkin with integer
 * tightening of each derived inequality). A system proven infeasible is safe; anything
 * else (feasible, too large, an overflow) is refused, so the rule errs only toward refusal.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "check/check_internal.h"

enum { MAXV = INTSYS_MAXV, MAXLOOPS = 30, MAXSTATES = 4000, MAXDIVS = 8, MAXSPLITS = 4 };
/* Loop sets are bits of an unsigned, and laps two bits a loop of a Laps (below). */
_Static_assert(MAXLOOPS < 32 && 2 * MAXLOOPS <= 64, "loop sets and laps fit their words");

/* ---- the region's accesses and its control-flow graph ---- */

typedef enum AccKind { ACC_READ, ACC_WRITE, ACC_ATOMIC, ACC_WARP_READ, ACC_WARP_WRITE } AccKind;

typedef struct Guard {
    Expr *cond;
    bool negated;
} Guard;

typedef struct Touch {
    Symbol *array;
    AccKind kind;
    Expr *index;           /* NULL: any element (a whole-array access) */
    bool at_thread;        /* the index is t itself (a warp scan's target) */
    int width;             /* wide access: elements index .. index + width - 1; else 1 */
    Expr *frag_i, *frag_j; /* a fragment (i, j): its elements (a rectangle) */
    int64_t frag_rows, frag_cols, row_stride, col_stride;
    const Layout *via; /* a swizzled layout: the access is at coordinates, not offsets */
    Expr *at_i, *at_j; /* an index via.at(i, j) (else frag_i, frag_j above) */
    Guard *guards;
    int nguards;
    int *loops; /* enclosing loops, outermost first */
    int nloops;
    Span span;
} Touch;

typedef struct Loop {
    Symbol *var;
    Expr *lo, *count;
} Loop;

/* crossing: a loop id, or -1; exit: leaving the loop (else going around it again) */
typedef struct Edge {
    int to;
    int crossing;
    bool exit;
} Edge;

/* How often a path went around each loop since its origin, 2 bits a loop: 0, 1, or 2
 * for "more, or it left the loop" (then nothing ties the iterations together). */
typedef uint64_t Laps;

static unsigned laps_of(Laps l, int id) {
    assert(id >= 0 && id < MAXLOOPS);
    return (unsigned)(l >> (2 * id)) & 3u;
}

typedef struct Node {
    int access; /* -1 when none */
    bool barrier;
    Edge *edges;
    int nedges, capedges;
} Node;

typedef struct Phase {
    Checker *c;
    Stmt *region;
    Symbol *tvar, *gvar;
    Touch *acc;
    int nacc, capacc;
    Loop loops[MAXLOOPS + 1];
    int nloops;
    bool too_many_loops;
    Node *nodes;
    int nnodes, capnodes;
    Guard guards[64];
    int nguards;
    int loopstack[MAXLOOPS + 1];
    int nloopstack;
    Symbol **lets;
    int nlets, caplets; /* immutable lets declared in the region */
    bool reported_array_pair;
} Phase;

static int new_node(Phase *p) {
    if (p->nnodes == p->capnodes) {
        p->capnodes = p->capnodes ? p->capnodes * 2 : 64;
        p->nodes = realloc(p->nodes, sizeof(Node) * (size_t)p->capnodes);
        if (!p->nodes) abort();
    }
    p->nodes[p->nnodes] = (Node){.access = -1};
    return p->nnodes++;
}

static void edge(Phase *p, int from, int to, int crossing, bool exit) {
    Node *n = &p->nodes[from];
    if (n->nedges == n->capedges) {
        n->capedges = n->capedges ? n->capedges * 2 : 2;
        n->edges = realloc(n->edges, sizeof(Edge) * (size_t)n->capedges);
        if (!n->edges) abort();
    }
    n->edges[n->nedges++] = (Edge){to, crossing, exit};
}

static bool is_array(const Symbol *s) {
    return s && s->type && s->type->kind == TY_VIEW && s->type->u.view.extent;
}

static bool is_region_let(const Phase *p, const Symbol *s);

/* The layout method call an index is (L.at(i, j)), read through the region's immutable
 * lets; NULL when it is none. */
static Expr *layout_call(const Phase *p, Expr *e, Builtin b, int depth) {
    if (!e || depth > 32) return NULL;
    if (e->kind == EXPR_NAME && e->u.name.sym && is_region_let(p, e->u.name.sym))
        return layout_call(p, e->u.name.sym->decl.stmt->u.let.init, b, depth + 1);
    if (e->kind != EXPR_CALL || e->u.call.builtin != b || e->u.call.nargs != 2 ||
        e->u.call.callee->kind != EXPR_MEMBER || !e->u.call.callee->u.member.base->layout)
        return NULL;
    return e;
}

/* An element index L.at(i, j) of a swizzled layout: the access is at coordinates (i, j)
 * of L. (An unswizzled layout's .at is affine: linearize reads it.) */
static void index_through_layout(const Phase *p, Touch *a) {
    Expr *at = a->width == 1 ? layout_call(p, a->index, BI_LAYOUT_AT, 0) : NULL;
    const Layout *l = at ? at->u.call.callee->u.member.base->layout : NULL;
    if (!l || !l->sw_bits) return;
    a->via = l;
    a->at_i = at->u.call.args[0];
    a->at_j = at->u.call.args[1];
}

/* Appends an access node after `cur` (t: its array, kind, index, width and span; the
 * rest is the walk's now); returns the new node. */
static int add_access(Phase *p, int cur, Touch t) {
    if (!is_array(t.array)) return cur;
    assert(t.width >= 1); /* elements index .. index + width - 1 */
    if (p->nacc == p->capacc) {
        p->capacc = p->capacc ? p->capacc * 2 : 16;
        p->acc = realloc(p->acc, sizeof(Touch) * (size_t)p->capacc);
        if (!p->acc) abort();
    }
    Touch *a = &p->acc[p->nacc];
    *a = t;
    a->nguards = p->nguards;
    a->nloops = p->nloopstack;
    a->guards = arena_alloc(p->c->arena, sizeof(Guard) * (size_t)(p->nguards + 1));
    memcpy(a->guards, p->guards, sizeof(Guard) * (size_t)p->nguards);
    a->loops = arena_alloc(p->c->arena, sizeof(int) * (size_t)(p->nloopstack + 1));
    memcpy(a->loops, p->loopstack, sizeof(int) * (size_t)p->nloopstack);
    index_through_layout(p, a);
    int n = new_node(p);
    p->nodes[n].access = p->nacc++;
    edge(p, cur, n, -1, false);
    return n;
}

/* Opens a loop: its head follows `cur`; the body starts at the returned head. */
static int open_loop(Phase *p, int cur, Loop loop, int *id) {
    *id = p->nloops < MAXLOOPS ? p->nloops++ : MAXLOOPS;
    if (*id == MAXLOOPS) p->too_many_loops = true;
    p->loops[*id] = loop;
    p->loopstack[p->nloopstack++] = *id;
    int head = new_node(p);
    edge(p, cur, head, -1, false);
    return head;
}

static int close_loop(Phase *p, int head, int body_end, int id) {
    p->nloopstack--;
    edge(p, body_end, head, id, false); /* around again */
    int exit = new_node(p);
    edge(p, head, exit, id, true); /* left */
    return exit;
}

static int walk_expr(Phase *p, Expr *e, int cur);

static int walk_args(Phase *p, Expr *e, int from, int cur) {
    for (int i = from; i < e->u.call.nargs; i++) cur = walk_expr(p, e->u.call.args[i], cur);
    return cur;
}

static Symbol *base_sym(const Expr *e) { return e && e->kind == EXPR_NAME ? e->u.name.sym : NULL; }

/* An access to the one element v[i] that index expression x names, at span. */
static int add_element(Phase *p, int cur, const Expr *x, AccKind kind, Span span) {
    return add_access(p, cur,
                      (Touch){.array = base_sym(x->u.index.base),
                              .kind = kind,
                              .index = x->u.index.index,
                              .width = 1,
                              .span = span});
}

/* Elements a wide access moves at once: 16 bytes. */
static int wide_width(const Type *elem) {
    int bits = type_bits(elem);
    return bits >= 8 ? 128 / bits : 1;
}

/* A fragment load or store touches the fragment's rectangle of the tile: rows FR*i ..
 * FR*i + FR - 1 and columns FC*j .. FC*j + FC - 1; through an unswizzled layout at
 * row * row_stride + col * col_stride, through a swizzled one at those coordinates (via).
 * A spread leaves the access on the whole array. */
static void fragment_elements(Touch *a, Expr *e, Builtin b) {
    const Type *f = b == BI_MMA_LOAD ? e->u.call.generics[0] : e->u.call.args[4]->type;
    const Layout *l = e->u.call.args[1]->layout;
    if (!f || f->kind != TY_FRAGMENT || !l || l->thr_rows || l->row_stride > INT32_MAX ||
        l->col_stride > INT32_MAX)
        return;
    a->via = l->sw_bits ? l : NULL;
    a->frag_rows = f->u.frag.role == FRAG_B ? f->u.frag.k : f->u.frag.m;
    a->frag_cols = f->u.frag.role == FRAG_A ? f->u.frag.k : f->u.frag.n;
    a->row_stride = (int64_t)l->row_stride;
    a->col_stride = (int64_t)l->col_stride;
    a->frag_i = e->u.call.args[2];
    a->frag_j = e->u.call.args[3];
}

/* What a call touches of the array s it passes as parameter prm (NULL: a builtin's). */
static Touch helper_touch(Expr *call, const Param *prm, Symbol *s, bool write, Span span) {
    Touch t = {.array = s, .kind = write ? ACC_WRITE : ACC_READ, .width = 1, .span = span};
    if (write || !prm || prm->type->kind != TY_VIEW || !prm->type->u.view.extent) return t;
    if (prm->reads == PARAM_READS_NONE) t.array = NULL; /* reads nothing: no access */
    else if (prm->reads == PARAM_READS_AT && prm->reads_at < call->u.call.nargs)
        t.index = call->u.call.args[prm->reads_at];
    return t;
}

static int walk_call(Phase *p, Expr *e, int cur) {
    Builtin b = e->u.call.builtin;
    Expr **a = e->u.call.args;
    if (ast_builtin_is_atomic(b) && a[0]->kind == EXPR_INDEX) {
        cur = walk_expr(p, a[0]->u.index.index, cur);
        cur = walk_args(p, e, 1, cur);
        return add_element(p, cur, a[0], ACC_ATOMIC, e->span);
    }
    if (b == BI_LOAD_WIDE || b == BI_STORE_WIDE) {
        cur = walk_expr(p, a[2], cur);
        Symbol *dst = base_sym(a[0]), *src = base_sym(a[1]);
        int w = dst && dst->type->kind == TY_VIEW ? wide_width(dst->type->u.view.elem) : 1;
        cur = add_access(
            p, cur,
            (Touch){.array = src, .kind = ACC_READ, .index = a[2], .width = w, .span = e->span});
        return add_access(
            p, cur,
            (Touch){.array = dst, .kind = ACC_WRITE, .index = a[2], .width = w, .span = e->span});
    }
    if (b == BI_MMA_LOAD || b == BI_MMA_STORE) {
        cur = walk_args(p, e, 1, cur);
        int before = p->nacc;
        cur = add_access(p, cur,
                         (Touch){.array = base_sym(a[0]),
                                 .kind = b == BI_MMA_LOAD ? ACC_WARP_READ : ACC_WARP_WRITE,
                                 .index = NULL,
                                 .width = 1,
                                 .span = e->span});
        if (p->nacc > before) fragment_elements(&p->acc[before], e, b);
        return cur;
    }
    /* Any other array argument: a whole-array access by this thread, a write when the
     * callee may write it (an rw parameter, mma_unordered's c); what a helper reads of
     * an ro parameter is its read set (check_param_reads): nothing, the element at one
     * of its scalar arguments, or any. */
    for (int i = 0; i < e->u.call.nargs; i++) {
        Symbol *s = base_sym(a[i]);
        if (is_array(s) && a[i]->type && a[i]->type->kind == TY_VIEW) {
            const Param *prm = e->u.call.fn && i < e->u.call.fn->u.fn.nparams
                                   ? e->u.call.fn->u.fn.params[i]
                                   : NULL;
            bool write = b == BI_MMA_UNORDERED ? i == 3
                                               : prm && prm->type->kind == TY_VIEW &&
                                                     prm->type->u.view.access == ACCESS_RW;
            cur = add_access(p, cur, helper_touch(e, prm, s, write, a[i]->span));
        } else {
            cur = walk_expr(p, a[i], cur);
        }
    }
    return cur;
}

static int walk_expr(Phase *p, Expr *e, int cur) {
    if (!e) return cur;
    switch (e->kind) {
    case EXPR_UNARY: return walk_expr(p, e->u.unary.operand, cur);
    case EXPR_BINARY: return walk_expr(p, e->u.binary.rhs, walk_expr(p, e->u.binary.lhs, cur));
    case EXPR_CONVERT: return walk_expr(p, e->u.convert.arg, cur);
    case EXPR_INDEX:
        cur = walk_expr(p, e->u.index.index, cur);
        return add_element(p, cur, e, ACC_READ, e->span);
    case EXPR_CALL: return walk_call(p, e, cur);
    case EXPR_REDUCE: {
        cur = walk_expr(p, e->u.reduce.count, walk_expr(p, e->u.reduce.lo, cur));
        if (e->u.reduce.var_sym) {
            int id, head = open_loop(p, cur,
                                     (Loop){e->u.reduce.var_sym, e->u.reduce.lo, e->u.reduce.count},
                                     &id);
            cur = close_loop(p, head, walk_expr(p, e->u.reduce.body, head), id);
        } else {
            cur = walk_expr(p, e->u.reduce.body, cur);
        }
        if (e->u.reduce.into) { /* a warp scan: thread t writes into[t]; a for scan all of it */
            int before = p->nacc;
            cur = add_access(p, cur,
                             (Touch){.array = base_sym(e->u.reduce.into),
                                     .kind = ACC_WRITE,
                                     .index = NULL,
                                     .width = 1,
                                     .span = e->span});
            if (p->nacc > before) p->acc[before].at_thread = e->u.reduce.mode == MODE_WARP;
        }
        return cur;
    }
    default: return cur;
    }
}

static int walk_block(Phase *p, Block *b, int cur);

static int push_guard(Phase *p, Expr *cond, bool negated) {
    if (p->nguards < 64) p->guards[p->nguards++] = (Guard){cond, negated};
    return 1;
}

static int walk_stmt(Phase *p, Stmt *s, int cur) {
    switch (s->kind) {
    case STMT_LET:
        cur = walk_expr(p, s->u.let.init, cur);
        if (!s->u.let.mut && s->u.let.sym) {
            if (p->nlets == p->caplets) {
                p->caplets = p->caplets ? p->caplets * 2 : 16;
                p->lets = realloc(p->lets, sizeof(Symbol *) * (size_t)p->caplets);
                if (!p->lets) abort();
            }
            p->lets[p->nlets++] = s->u.let.sym;
        }
        return cur;
    case STMT_ASSIGN: {
        Expr *t = s->u.assign.target;
        cur = walk_expr(p, s->u.assign.value, cur);
        if (t->kind != EXPR_INDEX) return cur;
        cur = walk_expr(p, t->u.index.index, cur);
        return add_element(p, cur, t, ACC_WRITE, t->span);
    }
    case STMT_EXPR: return walk_expr(p, s->u.expr, cur);
    case STMT_IF: {
        cur = walk_expr(p, s->u.if_.cond, cur);
        int saved = p->nguards;
        push_guard(p, s->u.if_.cond, false);
        int then_end = walk_block(p, s->u.if_.then, cur);
        p->nguards = saved;
        push_guard(p, s->u.if_.cond, true);
        int else_end = s->u.if_.els ? walk_stmt(p, s->u.if_.els, cur) : cur;
        p->nguards = saved;
        int join = new_node(p);
        edge(p, then_end, join, -1, false);
        edge(p, else_end, join, -1, false);
        return join;
    }
    case STMT_FOR: {
        Binder *b = &s->u.for_.b;
        cur = walk_expr(p, b->count, walk_expr(p, b->lo, cur));
        int id, head = open_loop(p, cur, (Loop){b->sym, b->lo, b->count}, &id);
        return close_loop(p, head, walk_block(p, s->u.for_.body, head), id);
    }
    case STMT_BARRIER: {
        int n = new_node(p);
        p->nodes[n].barrier = true;
        edge(p, cur, n, -1, false);
        return n;
    }
    case STMT_BLOCK: return walk_block(p, s->u.block, cur);
    default: return cur; /* shared arrays start zeroed before the threads run */
    }
}

static int walk_block(Phase *p, Block *b, int cur) {
    for (int i = 0; i < b->nstmts; i++) cur = walk_stmt(p, b->stmts[i], cur);
    return cur;
}

/* ---- linear forms of index expressions ---- */

typedef struct Lin {
    int64_t a[MAXV];
    int64_t c;
    bool ok;
} Lin;

/* One of the cases of a disjunction: up to two rows, each >= 0 or == 0. */
typedef struct Alt {
    Lin rows[2];
    bool eq[2];
    int n;
} Alt;

/* What one pair check knows: which variable each thread's names map to, and the
 * disjunctions (three cases each) that hold beside the system's rows. */
typedef struct Pair {
    Phase *p;
    IntSys sys;
    bool same_block;
    unsigned tied;         /* loops whose iterations the paths relate: i = base + laps */
    unsigned equal_loops;  /* tied loops both threads are in the same iteration of */
    int laps[2][MAXLOOPS]; /* per thread: times around each tied loop since the origin */
    unsigned bounded[2];   /* per thread: tied loops whose bounds are constrained */
    struct {
        const void *key;
        int side;
        int var;
    } keys[MAXV];
    int nkeys;
    int fresh; /* counter for unknowns that are never shared */
    struct DivMod {
        Lin x;
        int64_t d;
        int qv, rv;
    } divs[MAXDIVS];
    int ndivs;
    struct NDiv { /* x / d and x % d for a divisor d that is not a constant */
        Lin x, d;
        int qv, rv;
    } nd[MAXDIVS];
    int nnd;
    Alt splits[MAXSPLITS][3];
    int nsplits;
    const Expr *zero; /* a product term linearize reads as 0 (stride_split) */
} Pair;

enum { KEY_T = 1, KEY_G, KEY_LOOP }; /* small integers as keys, distinct from pointers */

static int var_for(Pair *q, const void *key, int side, bool *created) {
    *created = false;
    for (int i = 0; i < q->nkeys; i++)
        if (q->keys[i].key == key && q->keys[i].side == side) return q->keys[i].var;
    if (q->sys.nv >= MAXV) return -1;
    q->keys[q->nkeys].key = key;
    q->keys[q->nkeys].side = side;
    q->keys[q->nkeys++].var = q->sys.nv;
    *created = true;
    return q->sys.nv++;
}

static Lin lin_const(int64_t c) {
    Lin l;
    memset(&l, 0, sizeof l);
    l.c = c;
    l.ok = true;
    return l;
}
static Lin lin_fail(void) {
    Lin l;
    memset(&l, 0, sizeof l);
    return l;
}

static Lin lin_var(int v) {
    if (v < 0) return lin_fail();
    Lin l = lin_const(0);
    l.a[v] = 1;
    return l;
}

static Lin lin_add(Lin x, Lin y, int64_t k) { /* x + k * y */
    if (!x.ok || !y.ok) return lin_fail();
    int64_t m;
    for (int i = 0; i < MAXV; i++)
        if (__builtin_mul_overflow(y.a[i], k, &m) || __builtin_add_overflow(x.a[i], m, &x.a[i]))
            return lin_fail();
    if (__builtin_mul_overflow(y.c, k, &m) || __builtin_add_overflow(x.c, m, &x.c))
        return lin_fail();
    return x;
}

static bool lin_is_const(const Lin *l) {
    for (int i = 0; i < MAXV; i++)
        if (l->a[i]) return false;
    return l->ok;
}

/* Adds sum(l) + k (>= 0 or == 0) to the pair's system. */
static void constrain(Pair *q, Lin l, int64_t k, bool eq) {
    if (!l.ok || __builtin_add_overflow(l.c, k, &l.c)) return; /* dropping a constraint is sound */
    IntRow *r = intsys_row(&q->sys, eq);
    memcpy(r->a, l.a, sizeof r->a);
    r->c = l.c;
}

static Lin linearize(Pair *q, Expr *e, int side, int depth);
static Lin opaque(Pair *q, Expr *e, int side);
static void in_domain(Pair *q, Lin row, Lin col, const Layout *l);

static int loop_of(const Phase *p, const Symbol *s) {
    for (int i = 0; i < p->nloops; i++)
        if (p->loops[i].var == s) return i;
    return -1;
}

static bool is_region_let(const Phase *p, const Symbol *s) {
    for (int i = 0; i < p->nlets; i++)
        if (p->lets[i] == s) return true;
    return false;
}

/* A variable that is never shared with anything: an unknown value. */
static Lin unknown(Pair *q) {
    bool created;
    return lin_var(var_for(q, (const void *)(intptr_t)(1000 + q->fresh++), 2, &created));
}

/* A loop variable: lo <= v < count. For a tied loop both threads share one base, the
 * iteration of the phase's origin, and each is `laps` iterations past it; otherwise each
 * thread's is its own. */
static Lin loop_var(Pair *q, int id, int side, int depth) {
    bool tied = q->same_block && (q->tied >> id & 1u);
    bool created;
    int v = var_for(q, (const void *)(intptr_t)(KEY_LOOP * 100 + id), tied ? 0 : side, &created);
    Lin x = lin_var(v);
    if (tied && x.ok) {
        x.c = q->laps[side][id];
        created = !(q->bounded[side] >> id & 1u);
        q->bounded[side] |= 1u << id;
    }
    if (created && x.ok) {
        Loop *L = &q->p->loops[id];
        Lin lo = L->lo ? linearize(q, L->lo, side, depth + 1) : lin_const(0);
        Lin hi = linearize(q, L->count, side, depth + 1);
        constrain(q, lin_add(x, lo, -1), 0, false);  /* v - lo >= 0 */
        constrain(q, lin_add(hi, x, -1), -1, false); /* hi - v - 1 >= 0 */
    }
    return x;
}

static Lin lin_name(Pair *q, Expr *e, int side, int depth) {
    Phase *p = q->p;
    Symbol *s = e->u.name.sym;
    int64_t k;
    if (!s) return unknown(q);
    if (s->kind == SYM_CONST && check_const_int(p->c, e, &k, 0)) return lin_const(k);
    bool created;
    if (s == p->tvar) {
        int v = var_for(q, (const void *)(intptr_t)KEY_T, side, &created);
        Lin x = lin_var(v);
        if (created && x.ok) { /* lo <= t < count (lo 0 when not written) */
            Expr *lo = p->region->u.blocks.threads.lo;
            constrain(q, lo ? lin_add(x, linearize(q, lo, 0, depth + 1), -1) : x, 0, false);
            constrain(q,
                      lin_add(linearize(q, p->region->u.blocks.threads.count, 0, depth + 1), x, -1),
                      -1, false);
        }
        return x;
    }
    if (s == p->gvar) {
        int v = var_for(q, (const void *)(intptr_t)KEY_G, q->same_block ? 0 : side, &created);
        Lin x = lin_var(v);
        if (created && x.ok) { /* lo <= g < count */
            Expr *lo = p->region->u.blocks.grid.lo;
            constrain(q, lo ? lin_add(x, linearize(q, lo, 0, depth + 1), -1) : x, 0, false);
            constrain(q, lin_add(linearize(q, p->region->u.blocks.grid.count, 0, depth + 1), x, -1),
                      -1, false);
        }
        return x;
    }
    int id = loop_of(p, s);
    if (id >= 0) return loop_var(q, id, side, depth);
    if (is_region_let(p, s)) return linearize(q, s->decl.stmt->u.let.init, side, depth + 1);
    if (s->mut || s->block_varying) return unknown(q); /* a let mut, or a region value */
    /* Declared outside the region (and never written in it): one value for every thread,
     * a constant when its initialiser is one (let tiles = (N + 63) / 64). */
    if (s->kind == SYM_LOCAL && s->decl.stmt &&
        check_const_int(p->c, s->decl.stmt->u.let.init, &k, 0))
        return lin_const(k);
    if (!type_is_int(s->type)) return unknown(q);
    if (s->kind == SYM_LOCAL && s->decl.stmt && s->decl.stmt->kind == STMT_LET &&
        s->decl.stmt->u.let.init) /* let n = tn * 32: one value, read through */
        return linearize(q, s->decl.stmt->u.let.init, side, depth + 1);
    return lin_var(var_for(q, s, 0, &created));
}

/* x / d and x % d of an unsigned x >= 0: x = d * quot + rem, 0 <= rem < d. One pair
 * of unknowns per (x, d), so t / 32 and t % 32 name one quotient and one remainder
 * (32 * (t / 32) + t % 32 is then t). */
static Lin divmod_of(Pair *q, Lin x, int64_t d, bool want_rem) {
    if (!x.ok) return unknown(q);
    for (int i = 0; i < q->ndivs; i++)
        if (q->divs[i].d == d && memcmp(q->divs[i].x.a, x.a, sizeof x.a) == 0 &&
            q->divs[i].x.c == x.c)
            return lin_var(want_rem ? q->divs[i].rv : q->divs[i].qv);
    Lin quot = unknown(q), rem = unknown(q);
    if (!quot.ok || !rem.ok || q->ndivs == MAXDIVS) return unknown(q);
    constrain(q, lin_add(lin_add(x, quot, -d), rem, -1), 0, true);
    constrain(q, rem, 0, false);
    constrain(q, lin_add(lin_const(0), rem, -1), d - 1, false);
    int qv = 0, rv = 0;
    for (int i = 0; i < MAXV; i++) qv = quot.a[i] ? i : qv, rv = rem.a[i] ? i : rv;
    q->divs[q->ndivs++] = (struct DivMod){x, d, qv, rv};
    return want_rem ? rem : quot;
}

static bool lin_equal(const Lin *x, const Lin *y) {
    return x->ok && y->ok && x->c == y->c && memcmp(x->a, y->a, sizeof x->a) == 0;
}

static int lin_the_var(const Lin *l) {
    for (int i = 0; i < MAXV; i++)
        if (l->a[i]) return i;
    return 0;
}

/* A disjunction of three cases holds beside the system (dropped when there are too many,
 * which only makes the system larger). */
static void add_split(Pair *q, const Alt alt[3]) {
    if (q->nsplits == MAXSPLITS) return;
    memcpy(q->splits[q->nsplits++], alt, sizeof(Alt) * 3);
}

/* x / d and x % d of unsigned x and a divisor d that is not a constant: d >= 1 (the
 * division traps otherwise), 0 <= rem < d, 0 <= quot <= x. x = d * quot + rem is not
 * linear, but of two such pairs with one divisor, either the quotients differ (two
 * cases) or they are equal and x1 - x2 = rem1 - rem2: a disjunction. */
static Lin ndivmod_of(Pair *q, Lin x, Lin d, bool want_rem) {
    for (int i = 0; i < q->nnd; i++)
        if (lin_equal(&q->nd[i].x, &x) && lin_equal(&q->nd[i].d, &d))
            return lin_var(want_rem ? q->nd[i].rv : q->nd[i].qv);
    Lin quot = unknown(q), rem = unknown(q);
    if (!x.ok || !d.ok || !quot.ok || !rem.ok || q->nnd == MAXDIVS) return unknown(q);
    constrain(q, d, -1, false);
    constrain(q, rem, 0, false);
    constrain(q, lin_add(d, rem, -1), -1, false);
    constrain(q, quot, 0, false);
    constrain(q, lin_add(x, quot, -1), 0, false);
    for (int i = 0; i < q->nnd; i++) {
        if (!lin_equal(&q->nd[i].d, &d)) continue;
        Lin qd = lin_add(lin_var(q->nd[i].qv), quot, -1);
        Lin xd = lin_add(lin_add(q->nd[i].x, x, -1), lin_add(lin_var(q->nd[i].rv), rem, -1), -1);
        Alt alt[3] = {{{lin_add(qd, lin_const(1), -1)}, {false}, 1},
                      {{lin_add(lin_const(-1), qd, -1)}, {false}, 1},
                      {{qd, xd}, {true, true}, 2}};
        add_split(q, alt);
    }
    q->nd[q->nnd++] = (struct NDiv){x, d, lin_the_var(&quot), lin_the_var(&rem)};
    return want_rem ? rem : quot;
}

static Lin lin_binary(Pair *q, Expr *e, int side, int depth) {
    BinaryOp op = e->u.binary.op;
    Lin l = linearize(q, e->u.binary.lhs, side, depth + 1);
    Lin r = linearize(q, e->u.binary.rhs, side, depth + 1);
    bool unsig = e->type && type_is_int(e->type) && !type_is_signed(e->type);
    switch (op) {
    case BIN_ADD: return lin_add(l, r, 1);
    case BIN_SUB: return lin_add(l, r, -1);
    case BIN_MUL:
        if (lin_is_const(&r)) return lin_add(lin_const(0), l, r.c);
        if (lin_is_const(&l)) return lin_add(lin_const(0), r, l.c);
        return opaque(q, e, side);
    case BIN_SHL:
        if (lin_is_const(&r) && r.c >= 0 && r.c < 32)
            return lin_add(lin_const(0), l, (int64_t)1 << r.c);
        return opaque(q, e, side);
    case BIN_DIV:
    case BIN_REM:
    case BIN_SHR: {
        if (!unsig) return opaque(q, e, side);
        if (!lin_is_const(&r))
            return op == BIN_SHR ? opaque(q, e, side) : ndivmod_of(q, l, r, op == BIN_REM);
        int64_t d = op == BIN_SHR ? (r.c >= 0 && r.c < 32 ? (int64_t)1 << r.c : 0) : r.c;
        if (d <= 0) return opaque(q, e, side);
        if (lin_is_const(&l)) return lin_const(op == BIN_REM ? l.c % d : l.c / d);
        return divmod_of(q, linearize(q, e->u.binary.lhs, side, depth + 1), d, op == BIN_REM);
    }
    default: return unknown(q);
    }
}

/* What a value that is not affine depends on, when it is stable (the same each time a
 * thread evaluates it in one iteration): literals, constants, parameters, t, g, loop
 * variables and immutable lets of those, through operators and conversions. */
typedef struct Deps {
    unsigned loops;
    bool t, g;
} Deps;

static bool stable(const Phase *p, const Expr *e, Deps *d, int depth) {
    if (!e || depth > 32) return false;
    switch (e->kind) {
    case EXPR_INT:
    case EXPR_BOOL: return true;
    case EXPR_NAME: {
        const Symbol *s = e->u.name.sym;
        if (!s) return false;
        if (s == p->tvar) return d->t = true;
        if (s == p->gvar) return d->g = true;
        int id = loop_of(p, s);
        if (id >= 0) {
            d->loops |= id < MAXLOOPS ? 1u << id : ~0u;
            return true;
        }
        if (is_region_let(p, s)) return stable(p, s->decl.stmt->u.let.init, d, depth + 1);
        return !s->mut && !s->block_varying;
    }
    case EXPR_BINARY:
        return stable(p, e->u.binary.lhs, d, depth + 1) && stable(p, e->u.binary.rhs, d, depth + 1);
    case EXPR_UNARY: return stable(p, e->u.unary.operand, d, depth + 1);
    case EXPR_CONVERT: return stable(p, e->u.convert.arg, d, depth + 1);
    default: return false;
    }
}

/* A stable value that is not affine: one unknown per thread, or one for both threads
 * when it cannot differ between them (no t; one block, or no g; the same iteration of
 * every loop it reads). Otherwise a fresh unknown each time. */
static Lin opaque(Pair *q, Expr *e, int side) {
    Deps d = {0};
    if (!stable(q->p, e, &d, 0)) return unknown(q);
    bool shared = !d.t && (q->same_block || !d.g) &&
                  (q->same_block ? (d.loops & ~q->equal_loops) == 0 : d.loops == 0);
    bool created;
    return lin_var(var_for(q, e, shared ? 0 : side, &created));
}

/* L.at(i, j) of an unswizzled layout is i * row_stride + j * col_stride, (i, j) inside
 * the domain; a swizzled one is not affine (an access indexed by it is at coordinates:
 * index_through_layout), and other calls are unknowns. */
static Lin lin_layout_at(Pair *q, Expr *e, int side, int depth) {
    Expr *at = layout_call(q->p, e, BI_LAYOUT_AT, 0);
    const Layout *l = at ? at->u.call.callee->u.member.base->layout : NULL;
    if (!l || l->sw_bits || l->row_stride > INT32_MAX || l->col_stride > INT32_MAX)
        return unknown(q);
    Lin row = linearize(q, at->u.call.args[0], side, depth + 1);
    Lin col = linearize(q, at->u.call.args[1], side, depth + 1);
    in_domain(q, row, col, l);
    return lin_add(lin_add(lin_const(0), row, (int64_t)l->row_stride), col, (int64_t)l->col_stride);
}

static Lin linearize(Pair *q, Expr *e, int side, int depth) {
    if (!e || depth > 32) return unknown(q);
    if (e == q->zero) return lin_const(0);
    switch (e->kind) {
    case EXPR_INT:
        return e->u.int_lit.overflow || e->u.int_lit.value > INT64_MAX
                   ? unknown(q)
                   : lin_const((int64_t)e->u.int_lit.value);
    case EXPR_NAME: return lin_name(q, e, side, depth);
    case EXPR_BINARY: return lin_binary(q, e, side, depth);
    case EXPR_UNARY:
        if (e->u.unary.op == UN_NEG)
            return lin_add(lin_const(0), linearize(q, e->u.unary.operand, side, depth + 1), -1);
        return unknown(q);
    case EXPR_CONVERT: /* integer conversions keep the value (they trap otherwise) */
        if (type_is_int(e->type) && e->u.convert.arg->type && type_is_int(e->u.convert.arg->type))
            return linearize(q, e->u.convert.arg, side, depth + 1);
        return unknown(q);
    case EXPR_CALL: return lin_layout_at(q, e, side, depth);
    default: return unknown(q);
    }
}

/* Adds what an enclosing condition says (a conjunction of comparisons); the rest is
 * dropped, which can only make the system larger. */
static void add_condition(Pair *q, Expr *e, bool negated, int side) {
    if (e->kind == EXPR_UNARY && e->u.unary.op == UN_NOT) {
        add_condition(q, e->u.unary.operand, !negated, side);
        return;
    }
    if (e->kind != EXPR_BINARY) return;
    BinaryOp op = e->u.binary.op;
    if (op == BIN_AND && !negated) {
        add_condition(q, e->u.binary.lhs, false, side);
        add_condition(q, e->u.binary.rhs, false, side);
        return;
    }
    if (op == BIN_OR && negated) { /* !(a || b) = !a && !b */
        add_condition(q, e->u.binary.lhs, true, side);
        add_condition(q, e->u.binary.rhs, true, side);
        return;
    }
    if (op < BIN_EQ || op > BIN_GE || !e->u.binary.lhs->type || !type_is_int(e->u.binary.lhs->type))
        return;
    if (negated) {
        static const BinaryOp flip[] = {[BIN_EQ] = BIN_NE, [BIN_NE] = BIN_EQ, [BIN_LT] = BIN_GE,
                                        [BIN_LE] = BIN_GT, [BIN_GT] = BIN_LE, [BIN_GE] = BIN_LT};
        op = flip[op];
    }
    Lin d =
        lin_add(linearize(q, e->u.binary.lhs, side, 0), linearize(q, e->u.binary.rhs, side, 0), -1);
    switch (op) { /* d = lhs - rhs */
    case BIN_EQ: constrain(q, d, 0, true); break;
    case BIN_LT: constrain(q, lin_add(lin_const(0), d, -1), -1, false); break;
    case BIN_LE: constrain(q, lin_add(lin_const(0), d, -1), 0, false); break;
    case BIN_GT: constrain(q, d, -1, false); break;
    case BIN_GE: constrain(q, d, 0, false); break;
    default: break; /* != is a disjunction: dropped */
    }
}

/* The element an access touches, as a form in its thread's variables. */
/* A variable in lo .. hi. */
static Lin ranged(Pair *q, int64_t lo, int64_t hi) {
    Lin k = unknown(q);
    constrain(q, k, -lo, false);
    constrain(q, lin_add(lin_const(0), k, -1), hi, false);
    return k;
}

/* Coordinates (row, col) lie in the layout's domain: outside it the access traps (the
 * guards of .at in lower_mma.c, cairn_frag_check), so it touches nothing. */
static void in_domain(Pair *q, Lin row, Lin col, const Layout *l) {
    if (l->rows > INT32_MAX || l->cols > INT32_MAX) return;
    constrain(q, row, 0, false);
    constrain(q, lin_add(lin_const(0), row, -1), (int64_t)l->rows - 1, false);
    constrain(q, col, 0, false);
    constrain(q, lin_add(lin_const(0), col, -1), (int64_t)l->cols - 1, false);
}

/* The coordinates a fragment access or an index via.at(i, j) touches. */
static void coordinates(Pair *q, const Touch *a, int side, Lin *row, Lin *col) {
    if (a->frag_i) {
        *row =
            lin_add(ranged(q, 0, a->frag_rows - 1), linearize(q, a->frag_i, side, 0), a->frag_rows);
        *col =
            lin_add(ranged(q, 0, a->frag_cols - 1), linearize(q, a->frag_j, side, 0), a->frag_cols);
    } else {
        *row = linearize(q, a->at_i, side, 0);
        *col = linearize(q, a->at_j, side, 0);
    }
}

static Lin element(Pair *q, const Touch *a, int side) {
    Lin x;
    if (a->frag_i) {
        Lin row, col;
        coordinates(q, a, side, &row, &col);
        return lin_add(lin_add(lin_const(0), row, a->row_stride), col, a->col_stride);
    }
    if (a->at_thread) {
        Expr name = {.kind = EXPR_NAME};
        name.u.name.sym = q->p->tvar;
        x = lin_name(q, &name, side, 0);
    } else {
        x = a->index ? linearize(q, a->index, side, 0) : unknown(q);
    }
    if (a->width > 1 && x.ok)
        x = lin_add(x, ranged(q, 0, a->width - 1), 1); /* + k, 0 <= k < width */
    return x;
}

static bool warp_kind(AccKind k) { return k == ACC_WARP_READ || k == ACC_WARP_WRITE; }

/* The first term row * n of an index's sum (read through the region's lets) whose
 * factors are not constants, n being one that no thread, block or loop changes. */
static Expr *product_term(const Phase *p, Expr *e, int depth) {
    if (!e || depth > 32) return NULL;
    if (e->kind == EXPR_NAME && e->u.name.sym && is_region_let(p, e->u.name.sym))
        return product_term(p, e->u.name.sym->decl.stmt->u.let.init, depth + 1);
    if (e->kind != EXPR_BINARY) return NULL;
    if (e->u.binary.op == BIN_ADD) {
        Expr *m = product_term(p, e->u.binary.lhs, depth + 1);
        return m ? m : product_term(p, e->u.binary.rhs, depth + 1);
    }
    int64_t k;
    if (e->u.binary.op != BIN_MUL || !e->type || !type_is_int(e->type) || type_is_signed(e->type) ||
        check_const_int(p->c, e->u.binary.lhs, &k, 0) ||
        check_const_int(p->c, e->u.binary.rhs, &k, 0))
        return NULL;
    Deps d = {0};
    return stable(p, e->u.binary.rhs, &d, 0) && !d.t && !d.g && !d.loops ? e : NULL;
}

/* How often the node m occurs in e, reading lets through (at least; 2 says "more"). */
static int occurrences(const Expr *e, const Expr *m, int depth) {
    if (!e) return 0;
    if (e == m) return 1;
    if (depth > 32) return 2;
    switch (e->kind) {
    case EXPR_NAME: {
        const Symbol *s = e->u.name.sym;
        bool let = s && s->kind == SYM_LOCAL && s->decl.stmt && s->decl.stmt->kind == STMT_LET;
        return let ? occurrences(s->decl.stmt->u.let.init, m, depth + 1) : 0;
    }
    case EXPR_BINARY:
        return occurrences(e->u.binary.lhs, m, depth + 1) +
               occurrences(e->u.binary.rhs, m, depth + 1);
    case EXPR_UNARY: return occurrences(e->u.unary.operand, m, depth + 1);
    case EXPR_CONVERT: return occurrences(e->u.convert.arg, m, depth + 1);
    case EXPR_CALL: {
        int n = 0;
        for (int i = 0; i < e->u.call.nargs; i++) n += occurrences(e->u.call.args[i], m, depth + 1);
        return n;
    }
    default: return 0;
    }
}

/* Two elements row1 * n + rest1 and row2 * n + rest2 of one stride n that is not a
 * constant (unsigned, so n >= 0): (row1 - row2) * n = rest2 - rest1, so either the rows
 * are equal and so are the rests, or the rows differ and the rests differ by n at least.
 * A tile of width 32 stored at y[(32 * bj + ty) * n + 32 * bi + tx] with bi < n / 32
 * is thus proved disjoint without n's value. False when the indices have no such form. */
static bool stride_split(Pair *q, const Touch *a, const Touch *b) {
    const Touch *t[2] = {a, b};
    Expr *m[2];
    Lin n[2], row[2], rest[2];
    for (int k = 0; k < 2; k++) {
        if (t[k]->via || t[k]->frag_i || t[k]->at_thread || t[k]->width != 1 || !t[k]->index)
            return false;
        m[k] = product_term(q->p, t[k]->index, 0);
        if (!m[k] || occurrences(t[k]->index, m[k], 0) != 1) return false; /* once: rest exact */
    }
    for (int k = 0; k < 2; k++) n[k] = linearize(q, m[k]->u.binary.rhs, k, 0);
    if (!lin_equal(&n[0], &n[1]) || lin_is_const(&n[0])) return false;
    for (int k = 0; k < 2; k++) {
        row[k] = linearize(q, m[k]->u.binary.lhs, k, 0);
        q->zero = m[k];
        rest[k] = linearize(q, t[k]->index, k, 0);
        q->zero = NULL;
        if (!row[k].ok || !rest[k].ok) return false;
    }
    Lin r = lin_add(row[0], row[1], -1), d = lin_add(rest[1], rest[0], -1);
    constrain(q, n[0], 0, false);
    Alt alt[3] = {{{r, d}, {true, true}, 2},
                  {{lin_add(r, lin_const(1), -1), lin_add(d, n[0], -1)}, {false, false}, 2},
                  {{lin_add(lin_const(-1), r, -1), lin_add(lin_add(lin_const(0), d, -1), n[0], -1)},
                   {false, false},
                   2}};
    add_split(q, alt);
    return true;
}

/* Adds "a (thread 0) and b (thread 1) touch one element": equal offsets; or, both through
 * one swizzled layout, equal coordinates, since a proved layout is injective (layout_prove
 * at `cairn check`). A swizzled layout against a plain index or another layout adds
 * nothing, which only makes the system larger. */
static void same_element(Pair *q, const Touch *a, const Touch *b) {
    if (stride_split(q, a, b)) return;
    if (!a->via && !b->via) {
        Lin ea = element(q, a, 0), eb = element(q, b, 1);
        if (ea.ok && eb.ok) constrain(q, lin_add(ea, eb, -1), 0, true);
        return;
    }
    if (!a->via || !b->via || !layout_same_map(a->via, b->via)) return;
    Lin ra, ca, rb, cb;
    coordinates(q, a, 0, &ra, &ca);
    coordinates(q, b, 1, &rb, &cb);
    in_domain(q, ra, ca, a->via);
    in_domain(q, rb, cb, b->via);
    if (ra.ok && rb.ok) constrain(q, lin_add(ra, rb, -1), 0, true);
    if (ca.ok && cb.ok) constrain(q, lin_add(ca, cb, -1), 0, true);
}

/* Whether the system has a solution in some case of its disjunctions: each choice of
 * one case per disjunction is a system of its own. */
static bool feasible_in_some_case(const Pair *q) {
    int cases = 1;
    for (int i = 0; i < q->nsplits; i++) cases *= 3;
    for (int c = 0; c < cases; c++) {
        IntSys s = {.nv = q->sys.nv};
        for (int i = 0; i < q->sys.n; i++) *intsys_row(&s, false) = q->sys.rows[i];
        for (int i = 0, k = c; i < q->nsplits; i++, k /= 3) {
            const Alt *alt = &q->splits[i][k % 3];
            for (int j = 0; j < alt->n; j++) {
                if (!alt->rows[j].ok) continue; /* dropping a row is sound */
                IntRow *r = intsys_row(&s, alt->eq[j]);
                memcpy(r->a, alt->rows[j].a, sizeof r->a);
                r->c = alt->rows[j].c;
            }
        }
        bool maybe = intsys_feasible(&s) == INTSYS_MAYBE;
        intsys_free(&s);
        if (maybe) return true;
    }
    return false;
}

/* Whether a thread at `a` and another at `b` may touch one element. */
/* A hardware warp is 32 consecutive threads of the block counted from its first: thread
 * t is in warp (t - lo) / 32, lo the first t. Gives lo when it is a constant. */
static bool warp_position(Phase *p, int64_t *lo) {
    const Expr *first = p->region->u.blocks.threads.lo;
    *lo = 0;
    return !first || check_const_int(p->c, first, lo, 0);
}

/* Two accesses that may meet: in one block or two, the loops they share (tied) and the
 * laps each has gone round them. */
typedef struct Meeting {
    const Touch *a, *b;
    bool same_block;
    unsigned tied;
    Laps la, lb;
} Meeting;

static bool may_collide(Phase *p, const Meeting *m, int order) {
    const Touch *a = m->a, *b = m->b;
    bool same_block = m->same_block;
    unsigned tied = m->tied;
    Laps la = m->la, lb = m->lb;
    Pair q = {.p = p, .same_block = same_block, .tied = tied};
    for (int id = 0; id < MAXLOOPS; id++) {
        q.laps[0][id] = (int)laps_of(la, id);
        q.laps[1][id] = (int)laps_of(lb, id);
        if ((tied >> id & 1u) && q.laps[0][id] == q.laps[1][id]) q.equal_loops |= 1u << id;
    }
    for (int i = 0; i < a->nguards; i++)
        add_condition(&q, a->guards[i].cond, a->guards[i].negated, 0);
    for (int i = 0; i < b->nguards; i++)
        add_condition(&q, b->guards[i].cond, b->guards[i].negated, 1);
    for (int i = 0; i < a->nloops; i++) loop_var(&q, a->loops[i], 0, 0);
    for (int i = 0; i < b->nloops; i++) loop_var(&q, b->loops[i], 1, 0);
    same_element(&q, a, b);
    /* Two different threads: order -1 puts the first below the second, +1 above. */
    Expr tname = {.kind = EXPR_NAME}, gname = {.kind = EXPR_NAME};
    tname.u.name.sym = p->tvar;
    gname.u.name.sym = p->gvar;
    /* A warp operation is every thread of its warp touching its elements, the storing
     * thread's own included: nothing tells the two threads apart, except that one warp
     * operation meets itself only in another warp (its own lanes act together). */
    bool warp = warp_kind(a->kind) || warp_kind(b->kind);
    Lin d = lin_const(0);
    int64_t lo;
    if (!same_block)
        d = lin_add(lin_name(&q, &gname, 1, 0), lin_name(&q, &gname, 0, 0),
                    -1); /* second - first */
    else if (!warp) d = lin_add(lin_name(&q, &tname, 1, 0), lin_name(&q, &tname, 0, 0), -1);
    else if (a == b && warp_position(p, &lo))
        d = lin_add(
            divmod_of(&q, lin_add(lin_name(&q, &tname, 1, 0), lin_const(lo), -1), 32, false),
            divmod_of(&q, lin_add(lin_name(&q, &tname, 0, 0), lin_const(lo), -1), 32, false), -1);
    else if (a == b) /* a first thread not known: other threads, maybe of one warp */
        d = lin_add(lin_name(&q, &tname, 1, 0), lin_name(&q, &tname, 0, 0), -1);
    if (!same_block || !warp || a == b)
        constrain(&q, order < 0 ? d : lin_add(lin_const(0), d, -1), -1, false);
    /* Every unknown taken: one may have been refused (var_for), so the answer is "maybe". */
    bool feasible = q.sys.nv >= MAXV || feasible_in_some_case(&q);
    intsys_free(&q.sys);
    return feasible;
}

static bool conflicting_kinds(AccKind x, AccKind y) {
    bool wx = x == ACC_WRITE || x == ACC_WARP_WRITE, wy = y == ACC_WRITE || y == ACC_WARP_WRITE;
    if (x == ACC_ATOMIC && y == ACC_ATOMIC) return false;
    if (x == ACC_ATOMIC || y == ACC_ATOMIC) return true; /* an atomic meets a plain access */
    return wx || wy;
}

static bool collide(Phase *p, Meeting m) {
    return may_collide(p, &m, -1) || may_collide(p, &m, +1);
}

/* ---- which accesses share a phase ---- */

static Laps lap(Laps l, const Edge *e) {
    if (e->crossing < 0 || e->crossing >= MAXLOOPS) return l;
    unsigned n = laps_of(l, e->crossing);
    unsigned next = e->exit || n >= 1 ? 2u : 1u;
    return (l & ~((Laps)3 << (2 * e->crossing))) | ((Laps)next << (2 * e->crossing));
}

typedef struct Reach {
    int access;
    Laps laps;
} Reach;

/* Every (access, laps) reachable from origin along barrier-free paths. */
static Reach *reach_from(Phase *p, int origin, int *nout, bool *gave_up) {
    typedef struct State {
        int node;
        Laps laps;
    } State;
    int cap = 64, n = 0, head = 0;
    State *queue = malloc(sizeof(State) * (size_t)cap);
    Reach *out = NULL;
    int nreach = 0, capreach = 0;
    if (!queue) abort();
    queue[n++] = (State){origin, 0};
    while (head < n) {
        State s = queue[head++];
        Node *nd = &p->nodes[s.node];
        if (nd->access >= 0) {
            if (nreach == capreach) {
                capreach = capreach ? capreach * 2 : 16;
                out = realloc(out, sizeof(Reach) * (size_t)capreach);
                if (!out) abort();
            }
            out[nreach++] = (Reach){nd->access, s.laps};
        }
        for (int i = 0; i < nd->nedges; i++) {
            Edge *e = &nd->edges[i];
            if (p->nodes[e->to].barrier) continue;
            State t = {e->to, lap(s.laps, e)};
            bool dup = false;
            for (int j = 0; j < n && !dup; j++)
                dup = queue[j].node == t.node && queue[j].laps == t.laps;
            if (dup) continue;
            if (n >= MAXSTATES) {
                *gave_up = true;
                break;
            }
            if (n == cap) {
                cap *= 2;
                queue = realloc(queue, sizeof(State) * (size_t)cap);
            }
            if (!queue) abort();
            queue[n++] = t;
        }
    }
    free(queue);
    *nout = nreach;
    return out;
}

/* Loops enclosing both accesses whose iterations the two paths tie together: each went
 * around it at most once and neither left it, so thread k is at origin + laps_k. */
static unsigned common_loops(const Touch *a, const Touch *b, Laps la, Laps lb) {
    unsigned m = 0;
    for (int i = 0; i < a->nloops; i++)
        for (int j = 0; j < b->nloops; j++) {
            int id = a->loops[i];
            if (id == b->loops[j] && id < MAXLOOPS && laps_of(la, id) < 2 && laps_of(lb, id) < 2)
                m |= 1u << id;
        }
    return m;
}

static void report(Phase *p, const Touch *a, const Touch *b, bool same_block) {
    static const char *const what[] = {"a read", "a write", "an atomic", "a warp's load",
                                       "a warp's store"};
    const Touch *later = a->span.off >= b->span.off ? a : b, *other = later == a ? b : a;
    /* a stride that is not a constant: say the limit the rule has there (stride_split) */
    bool strided = later->index && other->index && product_term(p, later->index, 0) &&
                   product_term(p, other->index, 0);
    const char *stride_help =
        "the row stride is not a constant: the phase rule tells elements row * n + rest apart "
        "only when every rest stays below n (as 32 * (g % tn) + tx does with n = 32 * tn); "
        "bound the rest, give the rows their own elements, or make the stride a const";
    if (strided)
        diag_error(p->c->d, later->span, E_COOP_PHASE, stride_help,
                   "%s may touch one element of '%s'%s: %s here and %s at line %d",
                   same_block ? "two threads of a block" : "two blocks", later->array->name,
                   same_block ? " between barriers" : "", what[later->kind], what[other->kind],
                   other->span.line);
    else if (same_block)
        diag_error(
            p->c->d, later->span, E_COOP_PHASE,
            "between two barriers a thread touches only what no other thread writes: index with t "
            "(s[t], s[t + 32 * i]), or put a barrier between the write and the read",
            "two threads of a block may touch one element of '%s' between barriers: %s here and %s "
            "at line %d",
            later->array->name, what[later->kind], what[other->kind], other->span.line);
    else
        diag_error(
            p->c->d, later->span, E_COOP_PHASE,
            "blocks never synchronise: give each block its own elements (index with g * T + t), or "
            "combine with an atomic",
            "two blocks may touch one element of '%s': %s here and %s at line %d",
            later->array->name, what[later->kind], what[other->kind], other->span.line);
}

/* Marks each array reported once, so one mistake gives one message. */
static bool first_report(Symbol ***done, int *ndone, Symbol *s) {
    for (int i = 0; i < *ndone; i++)
        if ((*done)[i] == s) return false;
    *done = realloc(*done, sizeof(Symbol *) * (size_t)(*ndone + 1));
    if (!*done) abort();
    (*done)[(*ndone)++] = s;
    return true;
}

static bool is_shared(const Symbol *s) { return s->type->u.view.origin == VIEW_SHARED; }

static void check_pairs_in_phase(Phase *p, Reach *r, int n, Symbol ***done, int *ndone) {
    for (int i = 0; i < n; i++)
        for (int j = i; j < n; j++) {
            const Touch *a = &p->acc[r[i].access], *b = &p->acc[r[j].access];
            if (a->array != b->array || !conflicting_kinds(a->kind, b->kind)) continue;
            unsigned tied = common_loops(a, b, r[i].laps, r[j].laps);
            if (collide(p, (Meeting){a, b, true, tied, r[i].laps, r[j].laps}) &&
                first_report(done, ndone, a->array))
                report(p, a, b, true);
        }
}

/* Device and unified views are shared by every block: no two blocks meet on a write. */
static void check_across_blocks(Phase *p, Symbol ***done, int *ndone) {
    int64_t G;
    if (check_const_int(p->c, p->region->u.blocks.grid.count, &G, 0) && G <= 1) return;
    for (int i = 0; i < p->nacc; i++)
        for (int j = i; j < p->nacc; j++) {
            const Touch *a = &p->acc[i], *b = &p->acc[j];
            if (a->array != b->array || is_shared(a->array) || !conflicting_kinds(a->kind, b->kind))
                continue;
            if (collide(p, (Meeting){a, b, false, 0, 0, 0}) && first_report(done, ndone, a->array))
                report(p, a, b, false);
        }
}

void check_phases(Checker *c, Stmt *region) {
    /* A checked cooperative region: its binders are declared (check_binder). */
    assert(region->kind == STMT_BLOCKS && region->u.blocks.threads.sym &&
           region->u.blocks.grid.sym);
    Phase p = {.c = c,
               .region = region,
               .tvar = region->u.blocks.threads.sym,
               .gvar = region->u.blocks.grid.sym};
    int entry = new_node(&p);
    walk_block(&p, region->u.blocks.body, entry);
    Symbol **done = NULL;
    int ndone = 0;
    bool gave_up = p.too_many_loops;
    for (int o = 0; o < p.nnodes && !gave_up; o++) {
        if (o != entry && !p.nodes[o].barrier) continue;
        int n;
        Reach *r = reach_from(&p, o, &n, &gave_up);
        if (!gave_up) check_pairs_in_phase(&p, r, n, &done, &ndone);
        free(r);
    }
    if (gave_up)
        diag_error(
            c->d, region->span, E_COOP_PHASE,
            "split the region, or put fewer loops between its barriers",
            "this cooperative region has too many paths between barriers to check the phase rule");
    else check_across_blocks(&p, &done, &ndone);
    free(done);
    for (int i = 0; i < p.nnodes; i++) free(p.nodes[i].edges);
    free(p.nodes);
    free(p.acc);
    free(p.lets);
}
