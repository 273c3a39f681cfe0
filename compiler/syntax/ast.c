/* ast.c: syntax tree constructors and the spelling of operators (see ast.h). */
#include "syntax/ast.h"

#include <assert.h>
#include <string.h>

Expr *ast_new_expr(Arena *a, ExprKind kind, Span span) {
    Expr *e = arena_alloc(a, sizeof *e);
    e->kind = kind;
    e->span = span;
    return e;
}

Stmt *ast_new_stmt(Arena *a, StmtKind kind, Span span) {
    Stmt *s = arena_alloc(a, sizeof *s);
    s->kind = kind;
    s->span = span;
    return s;
}

Block *ast_new_block(Arena *a, Span span, Stmt **stmts, int nstmts) {
    Block *b = arena_alloc(a, sizeof *b);
    b->span = span;
    b->stmts = stmts;
    b->nstmts = nstmts;
    return b;
}

Item *ast_new_item(Arena *a, ItemKind kind, Span span) {
    Item *it = arena_alloc(a, sizeof *it);
    it->kind = kind;
    it->span = span;
    return it;
}

void ast_program_add_item(Program *p, Item *it) {
    Item **items = arena_alloc(p->arena, sizeof(Item *) * (size_t)(p->nitems + 1));
    if (p->nitems) memcpy(items, p->items, sizeof(Item *) * (size_t)p->nitems);
    items[p->nitems++] = it;
    p->items = items;
}

void ast_program_free(Program *p) {
    if (!p) return;
    Arena *a = p->arena;
    arena_free(a); /* the Program itself lives in its arena */
}

typedef struct Visitor {
    void (*visit)(Expr *e, void *ctx);
    void *ctx;
} Visitor;

static void visit_expr(const Visitor *v, Expr *e) {
    if (!e) return;
    v->visit(e, v->ctx);
    switch (e->kind) {
    case EXPR_UNARY: visit_expr(v, e->u.unary.operand); break;
    case EXPR_BINARY:
        visit_expr(v, e->u.binary.lhs);
        visit_expr(v, e->u.binary.rhs);
        break;
    case EXPR_CALL:
        if (ast_builtin_is_method(e->u.call.builtin))
            visit_expr(v, e->u.call.callee->u.member.base); /* a layout method's receiver */
        for (int i = 0; i < e->u.call.nargs; i++) visit_expr(v, e->u.call.args[i]);
        break;
    case EXPR_INDEX:
        visit_expr(v, e->u.index.base);
        visit_expr(v, e->u.index.index);
        break;
    case EXPR_MEMBER: visit_expr(v, e->u.member.base); break;
    case EXPR_CONVERT: visit_expr(v, e->u.convert.arg); break;
    case EXPR_REDUCE:
        visit_expr(v, e->u.reduce.lo);
        visit_expr(v, e->u.reduce.count);
        visit_expr(v, e->u.reduce.body);
        visit_expr(v, e->u.reduce.into);
        break;
    default: break;
    }
}

static void visit_block(const Visitor *v, Block *b);

static void visit_binder(const Visitor *v, Binder *b) {
    visit_expr(v, b->lo);
    visit_expr(v, b->count);
}

static void visit_stmt(const Visitor *v, Stmt *s) {
    switch (s->kind) {
    case STMT_LET: visit_expr(v, s->u.let.init); break;
    case STMT_ASSIGN:
        visit_expr(v, s->u.assign.target);
        visit_expr(v, s->u.assign.value);
        break;
    case STMT_EXPR: visit_expr(v, s->u.expr); break;
    case STMT_IF:
        visit_expr(v, s->u.if_.cond);
        visit_block(v, s->u.if_.then);
        if (s->u.if_.els) visit_stmt(v, s->u.if_.els);
        break;
    case STMT_FOR:
        visit_binder(v, &s->u.for_.b);
        visit_block(v, s->u.for_.body);
        break;
    case STMT_RETURN: visit_expr(v, s->u.ret.value); break;
    case STMT_PARALLEL:
        visit_binder(v, &s->u.parallel.b);
        visit_block(v, s->u.parallel.body);
        break;
    case STMT_BLOCKS:
        visit_binder(v, &s->u.blocks.grid);
        visit_binder(v, &s->u.blocks.threads);
        visit_block(v, s->u.blocks.body);
        break;
    case STMT_BUFFER:
    case STMT_SHARED:
        visit_expr(v, s->u.alloc.count);
        visit_expr(v, s->u.alloc.init);
        break;
    case STMT_BARRIER: break;
    case STMT_BLOCK: visit_block(v, s->u.block); break;
    }
}

static void visit_block(const Visitor *v, Block *b) {
    for (int i = 0; i < b->nstmts; i++) visit_stmt(v, b->stmts[i]);
}

void ast_visit_exprs(Block *b, void (*visit)(Expr *e, void *ctx), void *ctx) {
    Visitor v = {visit, ctx};
    visit_block(&v, b);
}

void ast_visit_expr(Expr *e, void (*visit)(Expr *e, void *ctx), void *ctx) {
    Visitor v = {visit, ctx};
    visit_expr(&v, e);
}

const char *ast_binary_op_text(BinaryOp op) { return ast_binop(op)->spelling; }

const char *ast_unary_op_text(UnaryOp op) { return ast_unop(op)->spelling; }

const char *ast_reduce_op_text(ReduceOp op) {
    static const char *const text[] = {
        [RED_ADD] = "+",    [RED_MUL] = "*",   [RED_MIN] = "min",  [RED_MAX] = "max",
        [RED_BITAND] = "&", [RED_BITOR] = "|", [RED_BITXOR] = "^",
    };
    return text[op];
}

const char *ast_reduce_mode_text(ReduceMode m) {
    return m == MODE_FOR ? "for" : m == MODE_PARALLEL ? "parallel" : "warp";
}

const char *ast_assign_op_text(AssignOp op) {
    static const char *const text[] = {
        [ASSIGN_SET] = "=",  [ASSIGN_ADD] = "+=", [ASSIGN_SUB] = "-=",
        [ASSIGN_MUL] = "*=", [ASSIGN_DIV] = "/=",
    };
    return text[op];
}

BinaryOp ast_assign_binop(AssignOp op) {
    static const BinaryOp ops[] = {[ASSIGN_ADD] = BIN_ADD,
                                   [ASSIGN_SUB] = BIN_SUB,
                                   [ASSIGN_MUL] = BIN_MUL,
                                   [ASSIGN_DIV] = BIN_DIV};
    assert(op > ASSIGN_SET && op <= ASSIGN_DIV);
    return ops[op];
}

/* ---- the operation table (ops.def) ---- */

static const OpInfo op_rows[BI_COUNT] = {
    [BI_NONE] = {.spelling = "", .family = FAM_FN},
#define OP(id, spelling, amin, amax, generics, family, rule, rounding, where, guards, grad, cost,  \
           module)                                                                                 \
    [id] = {spelling, amin, amax, generics, family, rule, rounding, where, guards, grad, cost},
#include "syntax/ops.def"
};

const OpInfo *ast_op(Builtin b) { return &op_rows[(unsigned)b < BI_COUNT ? b : BI_NONE]; }

const char *ast_builtin_name(Builtin b) { return ast_op(b)->spelling; }

Builtin ast_builtin_lookup(const char *spelling) {
    for (int b = 1; b < BI_COUNT; b++)
        if (strcmp(op_rows[b].spelling, spelling) == 0) return (Builtin)b;
    return BI_NONE;
}

static const OperatorInfo binop_rows[BIN_COUNT] = {
#define BINOP(id, spelling, opclass, rounding, guards, grad, cost)                                 \
    [id] = {spelling, opclass, rounding, guards, grad, cost},
#include "syntax/ops.def"
};

static const OperatorInfo unop_rows[UN_COUNT] = {
#define UNOP(id, spelling, rounding, guards, grad, cost)                                           \
    [id] = {spelling, OPC_ARITH, rounding, guards, grad, cost},
#include "syntax/ops.def"
};

const OperatorInfo *ast_binop(BinaryOp op) {
    assert((unsigned)op < BIN_COUNT);
    return &binop_rows[op];
}

const OperatorInfo *ast_unop(UnaryOp op) {
    assert((unsigned)op < UN_COUNT);
    return &unop_rows[op];
}

static const struct {
    OpRounding rounding;
    unsigned guards;
    OpCost cost;
} form_rows[FORM_COUNT] = {
#define FORM(id, spelling, rounding, guards, cost) [id] = {rounding, guards, cost},
#include "syntax/ops.def"
};

OpRounding ast_form_rounding(OpForm f) { return form_rows[f].rounding; }
unsigned ast_form_guards(OpForm f) { return form_rows[f].guards; }
OpCost ast_form_cost(OpForm f) { return form_rows[f].cost; }

static const struct {
    const char *receipt, *text;
} rounding_rows[RND_COUNT] = {
#define ROUNDING(id, receipt, wording) [RND_##id] = {receipt, wording},
#include "syntax/ops.def"
};

const char *ast_rounding_receipt(OpRounding r) {
    assert((unsigned)r < RND_COUNT);
    return rounding_rows[r].receipt;
}

const char *ast_rounding_text(OpRounding r) {
    assert((unsigned)r < RND_COUNT);
    return rounding_rows[r].text;
}

const char *ast_guard_text(GuardKind k) {
    static const char *const text[GK_COUNT] = {
#define GUARD(kind, wording) [GK_##kind] = wording,
#include "syntax/ops.def"
    };
    return (unsigned)k < GK_COUNT ? text[k] : "";
}
