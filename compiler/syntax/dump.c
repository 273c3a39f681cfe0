/* dump.c: the checked tree as text (`cairn check --dump`, docs/tools.md): one node a
 * line, indented by depth, each with its source position, its kind, its type as the
 * checker set it, what a name resolves to (the symbol's kind and number), what a call
 * calls, and the placement the checker decided for each region and pooled reduction
 * (host pool or device) and for each allocation. The passes after the checker read
 * exactly these fields (ast.h), so the dump shows what they are given. */
#include <stdio.h>
#include <stdlib.h>

#include "syntax/syntax.h"

typedef struct Dump {
    StrBuf out;
} Dump;

static void dump_expr(Dump *d, const Expr *e, int depth, const char *label);
static void dump_block(Dump *d, const Block *b, int depth);

/* Starts a node's line: indentation, an optional "label: " and the position. */
static void line_start(Dump *d, int depth, const char *label, Span at) {
    sb_printf(&d->out, "%*s%s%s%d:%d ", depth * 2, "", label ? label : "", label ? ": " : "",
              at.line, at.col);
}

/* " : TYPE" (the checker's type), or nothing when the node has none. */
static void put_type(Dump *d, const Type *t) {
    if (!t) return;
    char *text = cairn_print_type(t);
    sb_printf(&d->out, " : %s", text);
    free(text);
}

static const char *symbol_kind(SymKind k) {
    static const char *const names[] = {
        [SYM_LOCAL] = "local",   [SYM_PARAM] = "param",   [SYM_LOOP] = "loop",
        [SYM_BUFFER] = "buffer", [SYM_CONST] = "const",   [SYM_LAYOUT] = "layout",
        [SYM_FN] = "fn",         [SYM_POISON] = "poison",
    };
    return names[k];
}

/* "  (param #1)": what a name resolves to. */
static void put_symbol(Dump *d, const Symbol *s) {
    if (!s) return;
    bool numbered = s->kind == SYM_LOCAL || s->kind == SYM_PARAM || s->kind == SYM_LOOP ||
                    s->kind == SYM_BUFFER;
    if (numbered) sb_printf(&d->out, "  (%s #%d)", symbol_kind(s->kind), s->id);
    else sb_printf(&d->out, "  (%s)", symbol_kind(s->kind));
}

static const char *placement(Placement p) {
    return p == PLACE_DEVICE ? "device" : p == PLACE_UNIFIED ? "unified" : "host";
}

static void dump_call(Dump *d, const Expr *e, int depth) {
    const Builtin b = e->u.call.builtin;
    if (b != BI_NONE) sb_printf(&d->out, "call builtin %s", ast_builtin_name(b));
    else sb_printf(&d->out, "call fn %s", e->u.call.fn ? e->u.call.fn->name : "?");
    for (int g = 0; g < e->u.call.ngenerics; g++) {
        char *text = cairn_print_type(e->u.call.generics[g]);
        sb_printf(&d->out, "%s%s%s", g ? ", " : "[", text, g + 1 == e->u.call.ngenerics ? "]" : "");
        free(text);
    }
    put_type(d, e->type);
    sb_puts(&d->out, "\n");
    if (b >= BI_LAYOUT_COSIZE && b <= BI_LAYOUT_COL)
        dump_expr(d, e->u.call.callee->u.member.base, depth + 1, "receiver");
    for (int i = 0; i < e->u.call.nargs; i++) dump_expr(d, e->u.call.args[i], depth + 1, NULL);
}

/* "reduce + parallel i : T  [device]" and its parts. */
static void dump_reduce(Dump *d, const Expr *e, int depth) {
    ReduceMode m = e->u.reduce.mode;
    sb_printf(&d->out, "%s %s %s", e->u.reduce.scan ? "scan" : "reduce",
              ast_reduce_op_text(e->u.reduce.op), ast_reduce_mode_text(m));
    if (e->u.reduce.var) sb_printf(&d->out, " %s", e->u.reduce.var);
    put_symbol(d, e->u.reduce.var_sym);
    put_type(d, e->type);
    const char *where = m == MODE_FOR           ? "written order"
                        : m == MODE_WARP        ? "across the warp"
                        : e->u.reduce.on_device ? "device"
                                                : "host pool";
    sb_printf(&d->out, "  [%s]\n", where);
    if (e->u.reduce.lo) dump_expr(d, e->u.reduce.lo, depth + 1, "from");
    if (e->u.reduce.count)
        dump_expr(d, e->u.reduce.count, depth + 1, e->u.reduce.lo ? "to" : "count");
    dump_expr(d, e->u.reduce.body, depth + 1, "yield");
    if (e->u.reduce.into) dump_expr(d, e->u.reduce.into, depth + 1, "into");
}

static void dump_expr(Dump *d, const Expr *e, int depth, const char *label) {
    if (!e) return;
    line_start(d, depth, label, e->span);
    switch (e->kind) {
    case EXPR_CALL: dump_call(d, e, depth); return;
    case EXPR_REDUCE: dump_reduce(d, e, depth); return;
    case EXPR_INT: sb_printf(&d->out, "int %s", e->u.int_lit.text); break;
    case EXPR_FLOAT: sb_printf(&d->out, "float %s", e->u.float_lit.text); break;
    case EXPR_BOOL: sb_printf(&d->out, "bool %s", e->u.bool_lit ? "true" : "false"); break;
    case EXPR_STRING: sb_printf(&d->out, "string \"%.*s\"", e->u.str.len, e->u.str.text); break;
    case EXPR_NAME: sb_printf(&d->out, "name %s", e->u.name.name); break;
    case EXPR_UNARY: sb_printf(&d->out, "unary %s", ast_unary_op_text(e->u.unary.op)); break;
    case EXPR_BINARY: sb_printf(&d->out, "binary %s", ast_binary_op_text(e->u.binary.op)); break;
    case EXPR_INDEX: sb_puts(&d->out, "index"); break;
    case EXPR_MEMBER: sb_printf(&d->out, "member .%s", e->u.member.field); break;
    case EXPR_CONVERT: sb_puts(&d->out, "convert"); break;
    case EXPR_ZEROED: sb_puts(&d->out, "zeroed"); break;
    }
    put_type(d, e->type);
    if (e->kind == EXPR_NAME) put_symbol(d, e->u.name.sym);
    sb_puts(&d->out, "\n");
    const Expr *kids[2] = {NULL, NULL};
    if (e->kind == EXPR_UNARY) kids[0] = e->u.unary.operand;
    if (e->kind == EXPR_BINARY) kids[0] = e->u.binary.lhs, kids[1] = e->u.binary.rhs;
    if (e->kind == EXPR_INDEX) kids[0] = e->u.index.base, kids[1] = e->u.index.index;
    if (e->kind == EXPR_MEMBER) kids[0] = e->u.member.base;
    if (e->kind == EXPR_CONVERT) kids[0] = e->u.convert.arg;
    for (int k = 0; k < 2; k++) dump_expr(d, kids[k], depth + 1, NULL);
}

/* "for i : usize (loop #2)" and the binder's bounds. */
static void dump_binder(Dump *d, const Binder *b, const char *what) {
    sb_printf(&d->out, "%s %s", what, b->var);
    if (b->sym) put_type(d, b->sym->type);
    put_symbol(d, b->sym);
}

/* A binder's bounds: "from" and "to", or its count (labelled LABEL when given). */
static void dump_binder_bounds(Dump *d, const Binder *b, int depth, const char *label) {
    if (b->lo) dump_expr(d, b->lo, depth, "from");
    dump_expr(d, b->count, depth, b->lo ? "to" : label ? label : "count");
}

static void dump_region(Dump *d, const Stmt *s, int depth) {
    if (s->kind == STMT_PARALLEL) {
        dump_binder(d, &s->u.parallel.b, "parallel");
        sb_printf(&d->out, "  [%s]\n", s->u.parallel.on_device ? "device" : "host pool");
        dump_binder_bounds(d, &s->u.parallel.b, depth + 1, NULL);
        dump_block(d, s->u.parallel.body, depth + 1);
        return;
    }
    dump_binder(d, &s->u.blocks.grid, "blocks");
    dump_binder(d, &s->u.blocks.threads, " threads");
    sb_printf(&d->out, "  [%s]\n", s->u.blocks.on_device ? "device" : "host");
    dump_binder_bounds(d, &s->u.blocks.grid, depth + 1, "grid");
    dump_binder_bounds(d, &s->u.blocks.threads, depth + 1, "threads");
    dump_block(d, s->u.blocks.body, depth + 1);
}

static void dump_alloc(Dump *d, const Stmt *s, int depth) {
    char *elem = cairn_print_type(s->u.alloc.elem);
    sb_printf(&d->out, "%s %s : %s", s->kind == STMT_SHARED ? "shared" : "buffer", s->u.alloc.name,
              elem);
    free(elem);
    sb_printf(&d->out, "  [%s]", s->kind == STMT_SHARED ? "block" : placement(s->u.alloc.place));
    put_symbol(d, s->u.alloc.sym);
    sb_puts(&d->out, "\n");
    dump_expr(d, s->u.alloc.count, depth + 1, "count");
}

static void dump_stmt(Dump *d, const Stmt *s, int depth) {
    line_start(d, depth, NULL, s->span);
    switch (s->kind) {
    case STMT_LET:
        sb_printf(&d->out, "let%s %s", s->u.let.mut ? " mut" : "", s->u.let.name);
        if (s->u.let.sym) put_type(d, s->u.let.sym->type);
        put_symbol(d, s->u.let.sym);
        sb_puts(&d->out, "\n");
        dump_expr(d, s->u.let.init, depth + 1, NULL);
        return;
    case STMT_ASSIGN:
        sb_printf(&d->out, "assign %s\n", ast_assign_op_text(s->u.assign.op));
        dump_expr(d, s->u.assign.target, depth + 1, "target");
        dump_expr(d, s->u.assign.value, depth + 1, "value");
        return;
    case STMT_EXPR:
        sb_puts(&d->out, "expr\n");
        dump_expr(d, s->u.expr, depth + 1, NULL);
        return;
    case STMT_IF:
        sb_puts(&d->out, "if\n");
        dump_expr(d, s->u.if_.cond, depth + 1, "cond");
        dump_block(d, s->u.if_.then, depth + 1);
        if (s->u.if_.els) {
            sb_printf(&d->out, "%*selse\n", depth * 2, "");
            dump_stmt(d, s->u.if_.els, depth + 1);
        }
        return;
    case STMT_FOR:
        dump_binder(d, &s->u.for_.b, "for");
        sb_puts(&d->out, "\n");
        dump_binder_bounds(d, &s->u.for_.b, depth + 1, NULL);
        dump_block(d, s->u.for_.body, depth + 1);
        return;
    case STMT_RETURN:
        sb_puts(&d->out, "return\n");
        dump_expr(d, s->u.ret.value, depth + 1, NULL);
        return;
    case STMT_PARALLEL:
    case STMT_BLOCKS: dump_region(d, s, depth); return;
    case STMT_BUFFER:
    case STMT_SHARED: dump_alloc(d, s, depth); return;
    case STMT_BARRIER: sb_puts(&d->out, "barrier\n"); return;
    case STMT_BLOCK:
        sb_puts(&d->out, "block\n");
        dump_block(d, s->u.block, depth + 1);
        return;
    }
}

static void dump_block(Dump *d, const Block *b, int depth) {
    for (int i = 0; i < b->nstmts; i++) dump_stmt(d, b->stmts[i], depth);
}

static void dump_fn(Dump *d, const Item *it) {
    sb_printf(&d->out, "%sfn %s(", it->pub ? "pub " : "", it->name);
    for (int i = 0; i < it->u.fn.nparams; i++) {
        char *t = cairn_print_type(it->u.fn.params[i]->type);
        sb_printf(&d->out, "%s%s:%s", i ? ", " : "", it->u.fn.params[i]->name, t);
        free(t);
    }
    char *ret = cairn_print_type(it->u.fn.ret);
    sb_printf(&d->out, ") -> %s", ret);
    free(ret);
    if (it->u.fn.derived_from)
        sb_printf(&d->out, "  (derived from %s)", it->u.fn.derived_from->name);
    unsigned fx = it->u.fn.lane_effects;
    sb_printf(&d->out, "  (%d locals%s%s)\n", it->u.fn.nlocals,
              fx & LANE_EFFECT_PARALLEL ? ", runs regions" : "",
              fx & LANE_EFFECT_HOST_ONLY ? ", host only" : "");
    dump_block(d, it->u.fn.body, 1);
}

char *cairn_dump_program(const Program *p) {
    Dump d = {{0}};
    for (int i = 0; i < p->nitems; i++) {
        const Item *it = p->items[i];
        line_start(&d, 0, NULL, it->span);
        if (it->kind == ITEM_FN) dump_fn(&d, it);
        else if (it->kind == ITEM_DERIVE)
            sb_printf(&d.out, "derive %s for %s\n", it->name, it->u.derive.target);
        else {
            sb_printf(&d.out, "%s %s\n", it->kind == ITEM_CONST ? "const" : "layout", it->name);
            dump_expr(&d, it->kind == ITEM_CONST ? it->u.const_.value : it->u.layout.value, 1,
                      NULL);
        }
    }
    return d.out.data ? d.out.data : calloc(1, 1);
}
