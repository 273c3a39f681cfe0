/* lower_c_region.c: `parallel` regions and reductions to C.
 *
 * A region's body becomes a lane function run by cairn_pool_run over blocks of
 * indices; what the body uses from outside is copied into a context struct (scalars by
 * value, views as pointer and count, scalar references as pointers; lanes never assign
 * an outer scalar, the checker sees to that). `reduce + parallel` over floats hands each
 * block an exact accumulator (cairn_sum64_pooled / cairn_sum32_pooled): each yield is
 * evaluated once and added exactly, so the bits do not depend on the pool. Other pooled
 * reductions keep one partial per worker and combine them in worker order with
 * operations that are associative and commutative as implemented: integer + adds in
 * 128 bits and traps only when the total does not fit; float min/max order NaN and
 * zeros (cairn_checked.h). `reduce OP for` folds in written order. */
#include <assert.h>
#include <string.h>

#include "lower/lower_c_internal.h"
#include "lower/target_internal.h"

#define FMT(...) arena_printf(L->arena, __VA_ARGS__)

/* ---- what a region captures ---- */

static void set_add(SymSet *set, const Symbol *s) {
    if (!s) return;
    for (int i = 0; i < set->len; i++)
        if (set->items[i] == s) return;
    if (set->len < 512) set->items[set->len++] = s;
}

static bool set_has(const SymSet *set, const Symbol *s) {
    for (int i = 0; i < set->len; i++)
        if (set->items[i] == s) return true;
    return false;
}

static void walk_block(const Block *b, SymSet *used, SymSet *declared);

static void walk_expr(const Expr *e, SymSet *used, SymSet *declared) {
    if (!e) return;
    switch (e->kind) {
    case EXPR_NAME: {
        SymKind k = e->u.name.sym ? e->u.name.sym->kind : SYM_POISON;
        if (k == SYM_LOCAL || k == SYM_PARAM || k == SYM_LOOP || k == SYM_BUFFER)
            set_add(used, e->u.name.sym);
        break;
    }
    case EXPR_UNARY: walk_expr(e->u.unary.operand, used, declared); break;
    case EXPR_BINARY:
        walk_expr(e->u.binary.lhs, used, declared);
        walk_expr(e->u.binary.rhs, used, declared);
        break;
    case EXPR_CALL:
        for (int i = 0; i < e->u.call.nargs; i++) walk_expr(e->u.call.args[i], used, declared);
        break;
    case EXPR_INDEX:
        walk_expr(e->u.index.base, used, declared);
        walk_expr(e->u.index.index, used, declared);
        break;
    case EXPR_CONVERT: walk_expr(e->u.convert.arg, used, declared); break;
    case EXPR_REDUCE:
        set_add(declared, e->u.reduce.var_sym);
        walk_expr(e->u.reduce.lo, used, declared);
        walk_expr(e->u.reduce.count, used, declared);
        walk_expr(e->u.reduce.body, used, declared);
        walk_expr(e->u.reduce.into, used, declared);
        break;
    default: break;
    }
}

static void walk_stmt(const Stmt *s, SymSet *used, SymSet *declared) {
    switch (s->kind) {
    case STMT_LET:
        set_add(declared, s->u.let.sym);
        walk_expr(s->u.let.init, used, declared);
        break;
    case STMT_ASSIGN:
        walk_expr(s->u.assign.target, used, declared);
        walk_expr(s->u.assign.value, used, declared);
        break;
    case STMT_EXPR: walk_expr(s->u.expr, used, declared); break;
    case STMT_IF:
        walk_expr(s->u.if_.cond, used, declared);
        walk_block(s->u.if_.then, used, declared);
        if (s->u.if_.els) walk_stmt(s->u.if_.els, used, declared);
        break;
    case STMT_FOR:
    case STMT_PARALLEL: {
        const Binder *b = s->kind == STMT_FOR ? &s->u.for_.b : &s->u.parallel.b;
        set_add(declared, b->sym);
        walk_expr(b->lo, used, declared);
        walk_expr(b->count, used, declared);
        walk_block(s->kind == STMT_FOR ? s->u.for_.body : s->u.parallel.body, used, declared);
        break;
    }
    case STMT_RETURN: walk_expr(s->u.ret.value, used, declared); break;
    case STMT_BUFFER:
    case STMT_SHARED:
        set_add(declared, s->u.alloc.sym);
        walk_expr(s->u.alloc.count, used, declared);
        break;
    case STMT_BLOCK: walk_block(s->u.block, used, declared); break;
    case STMT_BLOCKS:
        set_add(declared, s->u.blocks.grid.sym);
        set_add(declared, s->u.blocks.threads.sym);
        walk_block(s->u.blocks.body, used, declared);
        break;
    default: break;
    }
}

static void walk_block(const Block *b, SymSet *used, SymSet *declared) {
    for (int i = 0; i < b->nstmts; i++) walk_stmt(b->stmts[i], used, declared);
}

/* ---- lane functions ---- */

void lower_capture_decl(Lower *L, StrBuf *sb, const Symbol *s, const char *init_prefix) {
    const Type *t = s->type;
    const char *name = lower_sym_c(L, s);
    const char *init = init_prefix ? FMT(" = %s%s", init_prefix, name) : "";
    if (lower_is_view(t)) {
        const char *cq = t->u.view.access == ACCESS_RO ? "const " : "";
        const char *len = lower_sym_len(L, s);
        sb_printf(sb, "%s%s *%s%s; uint64_t %s%s;", cq, lower_c_scalar(t->u.view.elem), name, init,
                  len, init_prefix ? FMT(" = %s%s", init_prefix, len) : "");
    } else if (lower_is_scalar_ref(t)) {
        sb_printf(sb, "%s *%s%s;", lower_c_scalar(t->u.view.elem), name, init);
    } else {
        sb_printf(sb, "%s %s%s;", lower_c_scalar(t), name, init);
    }
}

/* Opens a lane function: struct laneN { captures; lo; EXTRA }, then
 * static void laneN(void *, size_t, size_t, PARAM4) { ...copies...; for each index { */
void lower_region_captures(const Block *body, const Expr *yield, const Symbol *var, SymSet *out) {
    SymSet declared = {0}, used = {0};
    set_add(&declared, var);
    if (body) walk_block(body, &used, &declared);
    if (yield) walk_expr(yield, &used, &declared);
    memset(out, 0, sizeof *out);
    for (int i = 0; i < used.len; i++)
        if (!set_has(&declared, used.items[i])) set_add(out, used.items[i]);
}

/* The context struct, the function's first line (`signature`, a format taking the
 * lane's id) and its copies of the captures; output then goes into the function. */
static void lane_head(Lower *L, Lane *ln, const Block *body, const Expr *yield, const Symbol *var,
                      const Type *index_type, const char *extra_field, const char *signature) {
    lower_region_captures(body, yield, var, &ln->captures);
    const SymSet outer = ln->captures;
    ln->id = ++L->tmp;
    ln->var = var;
    ln->index_type = index_type;
    ln->text = (StrBuf){0};
    sb_printf(&ln->text, "struct lane%d {\n", ln->id);
    for (int i = 0; i < outer.len; i++) {
        sb_puts(&ln->text, "    ");
        lower_capture_decl(L, &ln->text, outer.items[i], NULL);
        sb_puts(&ln->text, "\n");
    }
    sb_printf(&ln->text, "    %s cairn_lo;\n%s};\n\n", lower_c_scalar(index_type), extra_field);
    sb_printf(&ln->text, signature, ln->id);
    sb_printf(&ln->text, "    struct lane%d *c = cairn_ctx;\n", ln->id);
    lower_capture_copies(L, &ln->text, &outer, "c->");
    lower_lane_enter(L, ln);
}

/* The index variable of iteration cairn_k. */
static void lane_index(Lower *L, const Lane *ln) {
    const char *i = ln->var ? lower_sym_c(L, ln->var) : lower_new_tmp(L);
    lower_emit(L, "const %s %s = (%s)((uint64_t)c->cairn_lo + cairn_k);",
               lower_c_scalar(ln->index_type), i, lower_c_scalar(ln->index_type));
    lower_emit(L, "(void)%s;", i);
}

void lower_capture_copies(Lower *L, StrBuf *sb, const SymSet *captures, const char *prefix) {
    for (int i = 0; i < captures->len; i++) {
        const Symbol *s = captures->items[i];
        sb_puts(sb, "    ");
        lower_capture_decl(L, sb, s, prefix);
        sb_printf(sb, " (void)%s;%s\n", lower_sym_c(L, s),
                  lower_is_view(s->type) ? FMT(" (void)%s;", lower_sym_len(L, s)) : "");
    }
}

void lower_lane_enter(Lower *L, Lane *ln) {
    ln->saved_out = L->out;
    ln->saved_indent = L->indent;
    ln->saved_nlive = L->nlive;
    ln->saved_base = L->live_base;
    L->out = &ln->text;
    L->indent = 1;
    L->live_base = L->nlive;
}

void lower_lane_leave(Lower *L, Lane *ln) {
    L->out = ln->saved_out;
    L->indent = ln->saved_indent;
    L->nlive = ln->saved_nlive;
    L->live_base = ln->saved_base;
}

void lower_lane_open(Lower *L, Lane *ln, const Block *body, const Expr *yield, const Symbol *var,
                     const Type *index_type, const char *extra_field, const char *fourth_param) {
    lane_head(
        L, ln, body, yield, var, index_type, extra_field,
        FMT("static void lane%%d(void *cairn_ctx, size_t cairn_begin, size_t cairn_end, %s) {\n",
            fourth_param));
    lower_emit(L, "for (size_t cairn_k = cairn_begin; cairn_k < cairn_end; cairn_k++) {");
    L->indent = 2;
    lane_index(L, ln);
}

/* As lower_lane_open, its indices in blocks of `block`: for each block, cairn_b its
 * first index and cairn_m its count, cairn_v (C type in_t), cairn_w (out_t) and cairn_at
 * (out_t *) block-sized arrays, then the per-index loop the body goes into
 * (lower_c_array.c closes it). */
void lower_lane_open_blocks(Lower *L, Lane *ln, const Block *body, const Symbol *var,
                            const Type *index_type, int block, const char *in_t,
                            const char *out_t) {
    lane_head(L, ln, body, NULL, var, index_type, "",
              "static void lane%d(void *cairn_ctx, size_t cairn_begin, size_t cairn_end, "
              "unsigned cairn_worker) {\n");
    lower_emit(L, "(void)cairn_worker;");
    lower_emit(L, "for (size_t cairn_b = cairn_begin; cairn_b < cairn_end; cairn_b += %d) {",
               block);
    L->indent = 2;
    lower_emit(L, "const size_t cairn_m = cairn_end - cairn_b < %d ? cairn_end - cairn_b : %d;",
               block, block);
    lower_emit(L, "%s cairn_v[%d];", in_t, block);
    lower_emit(L, "%s cairn_w[%d], *cairn_at[%d];", out_t, block, block);
    lower_emit(L, "for (size_t cairn_k = cairn_b; cairn_k < cairn_b + cairn_m; cairn_k++) {");
    L->indent = 3;
    lane_index(L, ln);
}

/* Ends the function: `tail` (a statement, or NULL), its brace, and back to the caller. */
static void lane_finish(Lower *L, Lane *ln, const char *tail) {
    assert(L->out == &ln->text && "lanes close innermost first");
    if (tail) lower_emit(L, "%s", tail);
    L->indent = 0;
    lower_emit(L, "}\n");
    lower_lane_leave(L, ln);
    sb_append(&L->lanes, ln->text.data, ln->text.len);
    sb_free(&ln->text);
}

/* Closes the loop (after `tail`, a statement run after it, e.g. storing a partial). */
void lower_lane_close(Lower *L, Lane *ln, const char *tail) {
    L->indent = 1;
    lower_emit(L, "}");
    lane_finish(L, ln, tail);
}

/* In the caller: the context, filled; returns its name. */
const char *lower_lane_context(Lower *L, const Lane *ln, const char *lo, const char *extra_init) {
    StrBuf sb = {0};
    const char *ctx = FMT("c%d", ln->id);
    sb_printf(&sb, "struct lane%d %s = {", ln->id, ctx);
    for (int i = 0; i < ln->captures.len; i++) {
        const Symbol *s = ln->captures.items[i];
        sb_printf(&sb, ".%s = %s, ", lower_sym_c(L, s), lower_sym_c(L, s));
        if (lower_is_view(s->type))
            sb_printf(&sb, ".%s = %s, ", lower_sym_len(L, s), lower_sym_len(L, s));
    }
    sb_printf(&sb, ".cairn_lo = %s%s};", lo, extra_init);
    lower_emit(L, "%s", sb.data);
    sb_free(&sb);
    return ctx;
}

/* The number of indices in [lo, hi), as uint64_t (modular subtraction is exact here). */
const char *lower_index_count(Lower *L, const char *lo, const char *hi) {
    const char *n = lower_new_tmp(L);
    lower_emit(L, "const uint64_t %s = %s > %s ? (uint64_t)%s - (uint64_t)%s : 0;", n, hi, lo, hi,
               lo);
    lower_emit(L, "(void)%s;", n);
    return n;
}

/* A device region goes to the target; the host pool runs the others. */
void lower_parallel(Lower *L, const Stmt *s) {
    if (!s->u.parallel.on_device) {
        lower_parallel_pool(L, s);
        return;
    }
    L->has_device = true;
    L->target->device_parallel(L, s);
}

void lower_parallel_pool(Lower *L, const Stmt *s) {
    const Binder *b = &s->u.parallel.b;
    const Type *it = b->sym ? b->sym->type : b->count->type;
    const char *lo = lower_opaque(L, it, b->lo ? lower_expr(L, b->lo) : "0");
    const char *hi = lower_opaque(L, it, lower_expr(L, b->count)); /* see lower_opaque */
    const char *n = lower_index_count(L, lo, hi);
    if (s->u.parallel.on_device) lower_lane_limit(L, n, s->span); /* as a device launch */
    Lane ln;
    if (!lower_array_lane(L, s, &ln, it)) { /* std.cr, a conversion: the array form */
        lower_lane_open(L, &ln, s->u.parallel.body, NULL, b->sym, it, "", "unsigned cairn_worker");
        lower_emit(L, "(void)cairn_worker;");
        bool was_device = L->in_device;
        L->in_device = s->u.parallel.on_device;
        lower_block(L, s->u.parallel.body);
        L->in_device = was_device;
        lower_lane_close(L, &ln, NULL);
    }
    const char *ctx = lower_lane_context(L, &ln, lo, "");
    lower_use_runtime(L, LOWER_MODULE_POOL);
    lower_emit(L, "if (%s) cairn_pool_run((size_t)%s, 0, lane%d, &%s);", n, n, ln.id, ctx);
}

/* ---- reductions ---- */

static const char *int_limit(const Type *t, bool max) {
    assert(type_is_int(t));
    static const char *const lo[] = {
        [TY_I8] = "INT8_MIN",   [TY_I16] = "INT16_MIN", [TY_I32] = "INT32_MIN",
        [TY_I64] = "INT64_MIN", [TY_U8] = "0",          [TY_U16] = "0",
        [TY_U32] = "0",         [TY_U64] = "0",         [TY_USIZE] = "0"};
    static const char *const hi[] = {
        [TY_I8] = "INT8_MAX",    [TY_I16] = "INT16_MAX",  [TY_I32] = "INT32_MAX",
        [TY_I64] = "INT64_MAX",  [TY_U8] = "UINT8_MAX",   [TY_U16] = "UINT16_MAX",
        [TY_U32] = "UINT32_MAX", [TY_U64] = "UINT64_MAX", [TY_USIZE] = "UINT64_MAX"};
    return max ? hi[t->kind] : lo[t->kind];
}

/* The value a reduction starts from. A float sum starts at -0.0, which leaves its
 * first term unchanged (even -0.0), so the fold is exactly t0 + t1 + ... */
static const char *identity(Lower *L, ReduceOp op, const Type *t) {
    bool fl = type_is_float(t);
    switch (op) {
    case RED_ADD: return fl ? "-0.0" : "0";
    case RED_MUL: return "1";
    case RED_MIN: return fl ? "INFINITY" : int_limit(t, true);
    case RED_MAX: return fl ? "-INFINITY" : int_limit(t, false);
    case RED_BITAND: return FMT("(%s)~(%s)0", lower_c_scalar(t), lower_c_scalar(t));
    default: return "0";
    }
}

/* acc OP v as a C expression (checked for integers). */
static const char *combine(Lower *L, ReduceOp op, const Type *t, const char *acc, const char *v,
                           Span s) {
    const char *sfx = lower_helper_suffix(t);
    switch (op) {
    case RED_ADD:
    case RED_MUL:
        if (type_is_float(t)) return FMT("%s %s %s", acc, op == RED_ADD ? "+" : "*", v);
        return FMT("cairn_%s_%s(%s, %s, %s)", op == RED_ADD ? "add" : "mul", sfx, acc, v,
                   lower_at(L, s));
    case RED_MIN: return FMT("cairn_min_%s(%s, %s)", sfx, acc, v);
    case RED_MAX: return FMT("cairn_max_%s(%s, %s)", sfx, acc, v);
    case RED_BITAND: return FMT("(%s)(%s & %s)", lower_c_scalar(t), acc, v);
    case RED_BITOR: return FMT("(%s)(%s | %s)", lower_c_scalar(t), acc, v);
    default: return FMT("(%s)(%s ^ %s)", lower_c_scalar(t), acc, v);
    }
}

const char *lower_identity(Lower *L, ReduceOp op, const Type *t) { return identity(L, op, t); }

const char *lower_combine(Lower *L, ReduceOp op, const Type *t, const char *acc, const char *v,
                          Span s) {
    return combine(L, op, t, acc, v, s);
}

/* The written-order fold's loop (fold_in_order): acc = acc OP yield for each index,
 * storing each prefix into `out` (scans) when given. */
typedef struct Fold {
    Expr *e;
    const Type *it;
    const char *lo, *hi, *acc;
    const Symbol *out;
} Fold;

static void emit_fold(Lower *L, void *ctx) {
    const Fold *f = ctx;
    Expr *e = f->e;
    const Type *t = e->u.reduce.body->type;
    const char *i = e->u.reduce.var_sym ? lower_sym_c(L, e->u.reduce.var_sym) : lower_new_tmp(L);
    lower_loop_head(L, lower_c_scalar(f->it), i, f->lo, f->hi);
    L->indent++;
    const char *v = lower_expr(L, e->u.reduce.body);
    lower_emit(L, "%s = %s;", f->acc, combine(L, e->u.reduce.op, t, f->acc, v, e->span));
    if (f->out && lower_guard_proved(L, e)) /* out holds the loop's count (lower_guard.c) */
        lower_emit(L, "%s[(uint64_t)%s - (uint64_t)%s] = %s;", lower_sym_c(L, f->out), i, f->lo,
                   lower_dnan(L, t, f->acc));
    else if (f->out)
        lower_emit(L, "%s[cairn_index_u((uint64_t)%s - (uint64_t)%s, %s, %s)] = %s;",
                   lower_sym_c(L, f->out), i, f->lo, lower_sym_len(L, f->out),
                   lower_at(L, e->u.reduce.into->span), lower_dnan(L, t, f->acc)); /* bits leave */
    L->indent--;
    lower_emit(L, "}");
}

/* The written-order fold of `reduce OP for` and of every scan: acc = identity, then
 * the loop (emit_fold), its guards proved for the whole loop where a check before it
 * can (lower_guard.c). Returns the accumulator's name. */
static const char *fold_in_order(Lower *L, Expr *e, const Type *it, const char *lo, const char *hi,
                                 const Symbol *out) {
    const Type *t = e->u.reduce.body->type;
    const char *acc = lower_new_tmp(L);
    lower_emit(L, "%s %s = %s;", lower_c_scalar(t), acc, identity(L, e->u.reduce.op, t));
    Fold f = {e, it, lo, hi, acc, out};
    GuardLoop g = {.var = e->u.reduce.var_sym,
                   .type = it,
                   .lo = lo,
                   .hi = hi,
                   .yield = e->u.reduce.body,
                   .scan = out ? e : NULL,
                   .span = e->span};
    lower_guarded_loop(L, &g, emit_fold, &f);
    return acc;
}

static const char *reduce_for(Lower *L, Expr *e, const Type *it, const char *lo, const char *hi,
                              const char *n) {
    const char *acc = fold_in_order(L, e, it, lo, hi, NULL);
    if (type_is_float(e->type) && e->u.reduce.op == RED_ADD)
        lower_emit(L, "if (!%s) %s = 0.0%s;  /* no terms: +0.0 */", n, acc,
                   e->type->kind == TY_F32 ? "f" : "");
    return acc;
}

/* ---- the exact sum's hoisted index checks ---- */

/* The views `e` indexes by exactly the binder `var` (nested reductions included). */
static void covered_views(const Expr *e, const Symbol *var, SymSet *views) {
    if (!e) return;
    switch (e->kind) {
    case EXPR_UNARY: covered_views(e->u.unary.operand, var, views); break;
    case EXPR_BINARY:
        covered_views(e->u.binary.lhs, var, views);
        covered_views(e->u.binary.rhs, var, views);
        break;
    case EXPR_CALL:
        for (int i = 0; i < e->u.call.nargs; i++) covered_views(e->u.call.args[i], var, views);
        break;
    case EXPR_INDEX: {
        const Symbol *view = lower_expr_sym(e->u.index.base);
        if (var && view && lower_is_view(view->type) && lower_expr_sym(e->u.index.index) == var)
            set_add(views, view);
        covered_views(e->u.index.index, var, views);
        break;
    }
    case EXPR_CONVERT: covered_views(e->u.convert.arg, var, views); break;
    case EXPR_REDUCE:
        covered_views(e->u.reduce.lo, var, views);
        covered_views(e->u.reduce.count, var, views);
        covered_views(e->u.reduce.body, var, views);
        break;
    default: break;
    }
}

const char *lower_covered_index(Lower *L, const Symbol *view, const Expr *index, const char *i,
                                const char *check) {
    const Covered *cov = L->covered;
    if (!cov || lower_expr_sym(index) != cov->var || !set_has(&cov->views, view)) return check;
    return FMT("cairn_covered ? (uint64_t)%s : %s", i, check);
}

/* laneN_covers(ctx, b, e), b < e: every covered view holds the indexes of terms b..e-1
 * (an index is a usize, lo + k, increasing with k: its last value decides). */
static void covers_function(Lower *L, const Lane *ln, const Covered *cov) {
    const char *it = lower_c_scalar(ln->index_type);
    StrBuf *sb = &L->lanes;
    sb_printf(sb,
              "static inline __attribute__((always_inline)) int lane%d_covers(void *cairn_ctx, "
              "size_t cairn_b, size_t cairn_e) {\n"
              "    struct lane%d *c = cairn_ctx;\n"
              "    const %s cairn_last = (%s)((uint64_t)c->cairn_lo + cairn_e - 1);\n"
              "    (void)c, (void)cairn_b, (void)cairn_last;\n    return 1",
              ln->id, ln->id, it, it);
    for (int k = 0; k < cov->views.len; k++)
        sb_printf(sb, " && (uint64_t)cairn_last < c->%s", lower_sym_len(L, cov->views.items[k]));
    sb_puts(sb, ";\n}\n\n");
}

/* The terms of an exact float sum as functions of their index (what the host's pooled
 * sum and the emulated device sum both run): laneN_term(ctx, k, covered), the yield
 * (inlined; index checks of views by the loop variable skipped when covered), and
 * laneN_covers(ctx, b, e), which says that every such view holds the indexes of terms
 * b..e-1. `device`: the yield runs as a device lane (its NaNs the device's). Returns the
 * lane, whose context the caller fills. */
void lower_sum_terms(Lower *L, Expr *e, const Type *it, bool device, Lane *ln) {
    const Type *t = e->type;
    assert(type_is_compute_float(t) && e->u.reduce.op == RED_ADD);
    Covered cov = {.var = e->u.reduce.var_sym};
    covered_views(e->u.reduce.body, cov.var, &cov.views);
    lane_head(L, ln, NULL, e->u.reduce.body, e->u.reduce.var_sym, it, "",
              FMT("static inline __attribute__((always_inline)) %s lane%%d_term(void *cairn_ctx, "
                  "size_t cairn_k, int cairn_covered) {\n",
                  lower_c_scalar(t)));
    lower_emit(L, "(void)cairn_covered;");
    lane_index(L, ln);
    const Covered *saved = L->covered;
    bool was_device = L->in_device;
    L->covered = &cov;
    L->in_device = device;
    const char *v = lower_expr(L, e->u.reduce.body);
    L->in_device = was_device;
    L->covered = saved;
    lane_finish(L, ln, FMT("return %s;", v));
    covers_function(L, ln, &cov);
}

/* reduce + parallel over floats: exact, rounded once. The yield becomes a term function
 * of the index (inlined), and CAIRN_SUM_CHECKED (cairn_sum.h) makes the block function
 * around it, which adds each group of eight terms straight into the expansions held in
 * registers: no buffer, and the loop vectorizes. Index checks of views by the loop
 * variable are hoisted: laneN_covers checks the block's range once, and the term skips
 * them when covered (a block that is not covered runs with them, and traps as it
 * would). laneN_sum takes a tiny path for a few terms, the pool otherwise. */
static const char *reduce_exact(Lower *L, Expr *e, const Type *it, const char *lo, const char *n) {
    const Type *t = e->type;
    const char *w = t->kind == TY_F32 ? "32" : "64";
    Lane ln;
    lower_sum_terms(L, e, it, false, &ln);
    sb_printf(&L->lanes, "CAIRN_SUM_CHECKED(lane%d, cairn_sum%s, lane%d_term, lane%d_covers)\n\n",
              ln.id, w, ln.id, ln.id);
    const char *ctx = lower_lane_context(L, &ln, lo, "");
    lower_use_runtime(L, LOWER_MODULE_SUM);
    return FMT("(%s ? lane%d_sum(&%s, (size_t)%s) : 0.0%s)", n, ln.id, ctx, n,
               t->kind == TY_F32 ? "f" : "");
}

/* Other pooled reductions: one partial per worker, combined in worker order. */
/* An integer `reduce * parallel`: the pool's blocks keep the summaries of
 * runtime/cairn_reduce.h, joined in index order, so it traps exactly where the
 * index-order fold would (a zero factor first wins), whatever the pool's width. */
static const char *reduce_product(Lower *L, Expr *e, const Type *it, const char *lo,
                                  const char *n) {
    const Type *t = e->type;
    assert(type_is_int(t) && e->u.reduce.op == RED_MUL);
    Lane ln;
    lower_lane_open(L, &ln, NULL, e->u.reduce.body, e->u.reduce.var_sym, it,
                    "    cairn_prod_job *cairn_job;\n", "unsigned cairn_worker");
    const char *v = lower_expr(L, e->u.reduce.body);
    lower_emit(L, "cairn_prod_take_%s(cairn_prod_part(c->cairn_job, cairn_begin), (%s)%s);",
               type_is_signed(t) ? "i" : "u", type_is_signed(t) ? "int64_t" : "uint64_t", v);
    lower_lane_close(L, &ln, "(void)cairn_worker;");
    const char *job = lower_new_tmp(L), *all = lower_new_tmp(L);
    lower_use_runtime(L, LOWER_MODULE_POOL);
    lower_emit(L, "cairn_prod_job %s;", job);
    lower_emit(L, "cairn_prod_start(&%s, (size_t)%s);", job, n);
    const char *ctx = lower_lane_context(L, &ln, lo, FMT(", .cairn_job = &%s", job));
    lower_emit(L, "if (%s) cairn_pool_run((size_t)%s, %s.grain, lane%d, &%s);", n, n, job, ln.id,
               ctx);
    lower_emit(L, "const cairn_prod %s = cairn_prod_finish(&%s);", all, job);
    return FMT("(%s)cairn_prod_value_%s(&%s, %d, %s)", lower_c_scalar(t),
               type_is_signed(t) ? "i" : "u", all, type_bits(t), lower_at(L, e->span));
}

const char *lower_reduce_partials(Lower *L, Expr *e, const Type *it, const char *lo,
                                  const char *n) {
    const Type *t = e->type;
    ReduceOp op = e->u.reduce.op;
    if (type_is_int(t) && op == RED_MUL) return reduce_product(L, e, it, lo, n);
    assert(!(type_is_float(t) && op == RED_ADD) && "a float + is the exact sum's or the device's");
    assert(!(type_is_float(t) && op == RED_MUL) && "E-REDUCE-ORDER: a float * runs in order");
    bool wide = op == RED_ADD && type_is_int(t); /* exact in 128 bits, checked at the end */
    const char *acc_t = !wide               ? lower_c_scalar(t)
                        : type_is_signed(t) ? "__int128"
                                            : "unsigned __int128";
    Lane ln;
    lower_lane_open(L, &ln, NULL, e->u.reduce.body, e->u.reduce.var_sym, it,
                    FMT("    %s *cairn_parts;\n", acc_t), "unsigned cairn_worker");
    const char *v = lower_expr(L, e->u.reduce.body);
    const char *slot = "c->cairn_parts[cairn_worker]";
    lower_emit(L, "%s = %s;", slot,
               wide ? FMT("%s + (%s)%s", slot, acc_t, v) : combine(L, op, t, slot, v, e->span));
    lower_lane_close(L, &ln, NULL);
    const char *width = lower_new_tmp(L), *parts = lower_new_tmp(L), *total = lower_new_tmp(L);
    lower_use_runtime(L, LOWER_MODULE_POOL);
    lower_emit(L, "const unsigned %s = cairn_pool_width();", width);
    lower_emit(L, "%s *%s = (%s *)cairn_zeroed(%s, sizeof(%s), %s);", acc_t, parts, acc_t, width,
               acc_t, lower_at_unguarded(L, e->span)); /* the pool's scratch: the machine's */
    lower_emit(L, "for (unsigned k = 0; k < %s; k++) %s[k] = %s;", width, parts,
               identity(L, op, t));
    const char *ctx = lower_lane_context(L, &ln, lo, FMT(", .cairn_parts = %s", parts));
    lower_emit(L, "if (%s) cairn_pool_run((size_t)%s, 0, lane%d, &%s);", n, n, ln.id, ctx);
    lower_emit(L, "%s %s = %s;", acc_t, total, identity(L, op, t));
    const char *part = FMT("%s[k]", parts);
    lower_emit(L, "for (unsigned k = 0; k < %s; k++) %s = %s;", width, total,
               wide ? FMT("%s + %s", total, part) : combine(L, op, t, total, part, e->span));
    lower_emit(L, "cairn_release(%s);", parts);
    if (!wide) return total;
    if (type_is_signed(t))
        lower_emit(L, "if (%s < %s || %s > %s) cairn__trap_sum_s(%s, \"%s\", %s);", total,
                   int_limit(t, false), total, int_limit(t, true), total, lower_type_word(t),
                   lower_at(L, e->span));
    else
        lower_emit(L, "if (%s > %s) cairn__trap_sum_u(%s, \"%s\", %s);", total, int_limit(t, true),
                   total, lower_type_word(t), lower_at(L, e->span));
    return FMT("(%s)%s", lower_c_scalar(t), total);
}

/* scan OP MODE i in a..b yield e into out: out[i - a] = the prefix through i. Every
 * mode runs in written order on the host: a float scan may only (E-SCAN-ORDER), and an
 * integer scan's prefixes are the same in any order (each one is an output, so each is
 * checked). */
void lower_scan(Lower *L, Expr *e, const Type *it, const char *lo, const char *hi) {
    assert(e->u.reduce.scan);
    assert((e->u.reduce.mode == MODE_FOR || type_is_int(e->u.reduce.body->type)) &&
           "E-SCAN-ORDER: a float scan runs in written order");
    const Symbol *out = lower_expr_sym(e->u.reduce.into);
    if (!out || !lower_is_view(out->type)) {
        lower_unsupported(L, e->span, "a scan into anything but a view by name");
        return;
    }
    fold_in_order(L, e, it, lo, hi, out);
}

const char *lower_reduce(Lower *L, Expr *e) {
    if (e->u.reduce.mode == MODE_WARP) return L->target->warp_op(L, e);
    const Type *it = e->u.reduce.var_sym ? e->u.reduce.var_sym->type : e->u.reduce.count->type;
    /* bounds as temporaries: `reduce + for i in 0` must not compare with a literal */
    const char *lo = lower_opaque(L, it, e->u.reduce.lo ? lower_expr(L, e->u.reduce.lo) : "0");
    const char *hi = lower_opaque(L, it, lower_expr(L, e->u.reduce.count));
    if (e->u.reduce.scan) {
        if (e->u.reduce.on_device) L->target->device_scan(L, e, it, lo, hi);
        else lower_scan(L, e, it, lo, hi);
        return NULL;
    }
    const char *n = lower_index_count(L, lo, hi);
    const char *r;
    if (e->u.reduce.mode == MODE_FOR) r = reduce_for(L, e, it, lo, hi, n);
    else if (e->u.reduce.on_device) r = L->target->device_reduce(L, e, it, lo, hi, n);
    else if (type_is_float(e->type) && e->u.reduce.op == RED_ADD) r = reduce_exact(L, e, it, lo, n);
    else r = lower_reduce_partials(L, e, it, lo, n);
    const char *name = lower_new_tmp(L);
    lower_emit(L, "const %s %s = %s;", lower_c_scalar(e->type), name, r);
    return name;
}
