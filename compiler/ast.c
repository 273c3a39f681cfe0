/* ast.c: syntax tree constructors and the spelling of operators (see ast.h). */
#include "ast.h"

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

void program_add_item(Program *p, Item *it) {
    Item **items = arena_alloc(p->arena, sizeof(Item *) * (size_t)(p->nitems + 1));
    if (p->nitems) memcpy(items, p->items, sizeof(Item *) * (size_t)p->nitems);
    items[p->nitems++] = it;
    p->items = items;
}

void program_free(Program *p) {
    if (!p) return;
    Arena *a = p->arena;
    arena_free(a);   /* the Program itself lives in its arena */
}

const char *binary_op_text(BinaryOp op) {
    static const char *const text[] = {
        [BIN_ADD] = "+", [BIN_SUB] = "-", [BIN_MUL] = "*", [BIN_DIV] = "/", [BIN_REM] = "%",
        [BIN_EQ] = "==", [BIN_NE] = "!=", [BIN_LT] = "<", [BIN_LE] = "<=", [BIN_GT] = ">",
        [BIN_GE] = ">=", [BIN_AND] = "&&", [BIN_OR] = "||", [BIN_BITAND] = "&",
        [BIN_BITOR] = "|", [BIN_BITXOR] = "^", [BIN_SHL] = "<<", [BIN_SHR] = ">>",
    };
    return text[op];
}

const char *unary_op_text(UnaryOp op) { return op == UN_NEG ? "-" : "!"; }

const char *reduce_op_text(ReduceOp op) {
    static const char *const text[] = {
        [RED_ADD] = "+", [RED_MUL] = "*", [RED_MIN] = "min", [RED_MAX] = "max",
        [RED_BITAND] = "&", [RED_BITOR] = "|", [RED_BITXOR] = "^",
    };
    return text[op];
}

const char *reduce_mode_text(ReduceMode m) {
    return m == MODE_FOR ? "for" : m == MODE_PARALLEL ? "parallel" : "warp";
}

const char *assign_op_text(AssignOp op) {
    static const char *const text[] = {
        [ASSIGN_SET] = "=", [ASSIGN_ADD] = "+=", [ASSIGN_SUB] = "-=",
        [ASSIGN_MUL] = "*=", [ASSIGN_DIV] = "/=",
    };
    return text[op];
}

const char *builtin_name(Builtin b) {
    static const char *const names[] = {
        [BI_NONE] = "",
#define BUILTIN(id, spelling, minargs, maxargs, generics) [id] = spelling,
#include "builtins.def"
#undef BUILTIN
    };
    return (unsigned)b < BI_COUNT ? names[b] : "";
}
