/* print.c: the syntax tree back to CAIRN source (`cairn expand`, round-trip tests).
 *
 * The output parses back to the same tree: parentheses are written exactly where the
 * precedence of the operators needs them, literals keep their source text, and
 * expression-bodied functions print as `= e;`. Layout is fixed (two-space indent, one
 * statement a line), so print(parse(print(parse(x)))) == print(parse(x)).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syntax/syntax.h"

typedef struct Buf {
    char *s;
    size_t len, cap;
} Buf;

static void put(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(Buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (b->len + (size_t)n + 1 > cap) cap *= 2;
        b->s = realloc(b->s, cap);
        if (!b->s) abort();
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static char *finish(Buf *b) {
    if (!b->s) put(b, "%s", "");
    return b->s;
}

static void print_expr(Buf *b, const Expr *e, int min_prec);

static void print_type(Buf *b, const Type *t) {
    if (t->kind == TY_VIEW) {
        put(b, "%s<", t->u.view.access == ACCESS_RO ? "ro" : "rw");
        print_type(b, t->u.view.elem);
        put(b, ">");
        if (t->u.view.extent) {
            put(b, "[");
            print_expr(b, t->u.view.extent, 0);
            put(b, "]");
        }
        if (t->u.view.place == PLACE_DEVICE) put(b, "@device");
        else if (t->u.view.place == PLACE_UNIFIED) put(b, "@unified");
    } else if (t->kind == TY_FRAGMENT) {
        put(b, "%s[", type_frag_family_name(t->u.frag.family, t->u.frag.role));
        print_type(b, t->u.frag.elem);
        put(b, ", %d, %d, %d]", t->u.frag.m, t->u.frag.n, t->u.frag.k);
    } else {
        char name[64];
        put(b, "%s", type_name(t, name, sizeof name));
    }
}

/* Precedence of binary operators, as the parser's table; unary is 10, postfix 11. */
static int binary_prec_of(BinaryOp op) {
    switch (op) {
    case BIN_OR: return 1;
    case BIN_AND: return 2;
    case BIN_EQ:
    case BIN_NE:
    case BIN_LT:
    case BIN_LE:
    case BIN_GT:
    case BIN_GE: return 3;
    case BIN_BITOR: return 4;
    case BIN_BITXOR: return 5;
    case BIN_BITAND: return 6;
    case BIN_SHL:
    case BIN_SHR: return 7;
    case BIN_ADD:
    case BIN_SUB: return 8;
    default: return 9;
    }
}

enum { PREC_UNARY = 10, PREC_POSTFIX = 11 };

static int expr_prec(const Expr *e) {
    switch (e->kind) {
    case EXPR_BINARY: return binary_prec_of(e->u.binary.op);
    case EXPR_UNARY: return PREC_UNARY;
    case EXPR_REDUCE: return 0; /* extends to the right as far as it can */
    default: return PREC_POSTFIX + 1;
    }
}

static void print_string(Buf *b, const char *s, int len) {
    put(b, "\"");
    for (int i = 0; i < len; i++) {
        char c = s[i];
        if (c == '"' || c == '\\') put(b, "\\%c", c);
        else if (c == '\n') put(b, "\\n");
        else if (c == '\t') put(b, "\\t");
        else if (c == '\0') put(b, "\\0");
        else put(b, "%c", c);
    }
    put(b, "\"");
}

static void print_args(Buf *b, Expr *const *args, int n) {
    put(b, "(");
    for (int i = 0; i < n; i++) {
        if (i) put(b, ", ");
        print_expr(b, args[i], 0);
    }
    put(b, ")");
}

static void print_binder(Buf *b, const char *var, const Expr *lo, const Expr *count) {
    put(b, "%s in ", var);
    if (lo) {
        print_expr(b, lo, 1);
        put(b, "..");
    }
    print_expr(b, count, 1);
}

static void print_reduce(Buf *b, const Expr *e) {
    put(b, "%s %s %s", e->u.reduce.scan ? "scan" : "reduce", ast_reduce_op_text(e->u.reduce.op),
        ast_reduce_mode_text(e->u.reduce.mode));
    if (e->u.reduce.var) {
        put(b, " ");
        print_binder(b, e->u.reduce.var, e->u.reduce.lo, e->u.reduce.count);
    }
    put(b, " yield ");
    print_expr(b, e->u.reduce.body, 0);
    if (e->u.reduce.scan) {
        put(b, " into ");
        print_expr(b, e->u.reduce.into, 0);
    }
}

static void print_expr_inner(Buf *b, const Expr *e) {
    switch (e->kind) {
    case EXPR_INT: put(b, "%s", e->u.int_lit.text); break;
    case EXPR_FLOAT: put(b, "%s", e->u.float_lit.text); break;
    case EXPR_BOOL: put(b, "%s", e->u.bool_lit ? "true" : "false"); break;
    case EXPR_STRING: print_string(b, e->u.str.text, e->u.str.len); break;
    case EXPR_NAME: put(b, "%s", e->u.name.name); break;
    case EXPR_ZEROED: put(b, "zeroed"); break;
    case EXPR_UNARY:
        put(b, "%s", ast_unary_op_text(e->u.unary.op));
        print_expr(b, e->u.unary.operand, PREC_UNARY);
        break;
    case EXPR_BINARY: {
        int prec = binary_prec_of(e->u.binary.op);
        print_expr(b, e->u.binary.lhs, prec);
        put(b, " %s ", ast_binary_op_text(e->u.binary.op));
        print_expr(b, e->u.binary.rhs, prec + 1);
        break;
    }
    case EXPR_CALL:
        print_expr(b, e->u.call.callee, PREC_POSTFIX);
        if (e->u.call.ngenerics) {
            put(b, "[");
            for (int i = 0; i < e->u.call.ngenerics; i++) {
                if (i) put(b, ", ");
                print_type(b, e->u.call.generics[i]);
            }
            put(b, "]");
        }
        print_args(b, e->u.call.args, e->u.call.nargs);
        break;
    case EXPR_INDEX:
        print_expr(b, e->u.index.base, PREC_POSTFIX);
        put(b, "[");
        print_expr(b, e->u.index.index, 0);
        put(b, "]");
        break;
    case EXPR_MEMBER:
        print_expr(b, e->u.member.base, PREC_POSTFIX);
        put(b, ".%s", e->u.member.field);
        break;
    case EXPR_CONVERT:
        print_type(b, e->u.convert.to);
        put(b, "(");
        print_expr(b, e->u.convert.arg, 0);
        put(b, ")");
        break;
    case EXPR_REDUCE: print_reduce(b, e); break;
    }
}

/* Prints e, in parentheses when its precedence is below what the context needs. */
static void print_expr(Buf *b, const Expr *e, int min_prec) {
    bool paren = expr_prec(e) < min_prec || (e->kind == EXPR_REDUCE && min_prec > 0);
    if (paren) put(b, "(");
    print_expr_inner(b, e);
    if (paren) put(b, ")");
}

static void indent(Buf *b, int depth) { put(b, "%*s", depth * 2, ""); }

static void print_block(Buf *b, const Block *blk, int depth);

/* for / parallel / blocks ... threads ...: a keyword, binders, and a body (s: one of
 * the three). */
static void print_loop(Buf *b, const Stmt *s, int depth) {
    const char *keyword = s->kind == STMT_FOR        ? "for"
                          : s->kind == STMT_PARALLEL ? "parallel"
                                                     : "blocks";
    const Binder *first = s->kind == STMT_FOR        ? &s->u.for_.b
                          : s->kind == STMT_PARALLEL ? &s->u.parallel.b
                                                     : &s->u.blocks.grid;
    const Binder *threads = s->kind == STMT_BLOCKS ? &s->u.blocks.threads : NULL;
    const Block *body = s->kind == STMT_FOR        ? s->u.for_.body
                        : s->kind == STMT_PARALLEL ? s->u.parallel.body
                                                   : s->u.blocks.body;
    put(b, "%s ", keyword);
    print_binder(b, first->var, first->lo, first->count);
    if (threads) {
        put(b, " threads ");
        print_binder(b, threads->var, threads->lo, threads->count);
    }
    put(b, " ");
    print_block(b, body, depth);
    put(b, "\n");
}

static void print_stmt(Buf *b, const Stmt *s, int depth) {
    indent(b, depth);
    switch (s->kind) {
    case STMT_LET:
        put(b, "let %s%s", s->u.let.mut ? "mut " : "", s->u.let.name);
        if (s->u.let.declared) {
            put(b, ":");
            print_type(b, s->u.let.declared);
        }
        put(b, " = ");
        print_expr(b, s->u.let.init, 0);
        put(b, ";\n");
        break;
    case STMT_ASSIGN:
        print_expr(b, s->u.assign.target, 0);
        put(b, " %s ", ast_assign_op_text(s->u.assign.op));
        print_expr(b, s->u.assign.value, 0);
        put(b, ";\n");
        break;
    case STMT_EXPR:
        print_expr(b, s->u.expr, 0);
        put(b, ";\n");
        break;
    case STMT_IF: {
        const Stmt *cur = s;
        put(b, "if ");
        for (;;) {
            print_expr(b, cur->u.if_.cond, 0);
            put(b, " ");
            print_block(b, cur->u.if_.then, depth);
            const Stmt *els = cur->u.if_.els;
            if (!els) break;
            if (els->kind == STMT_IF) {
                put(b, " else if ");
                cur = els;
                continue;
            }
            put(b, " else ");
            print_block(b, els->u.block, depth);
            break;
        }
        put(b, "\n");
        break;
    }
    case STMT_FOR:
    case STMT_PARALLEL:
    case STMT_BLOCKS: print_loop(b, s, depth); break;
    case STMT_RETURN:
        put(b, "return");
        if (s->u.ret.value) {
            put(b, " ");
            print_expr(b, s->u.ret.value, 0);
        }
        put(b, ";\n");
        break;
    case STMT_BUFFER:
    case STMT_SHARED:
        put(b, "%s %s:", s->kind == STMT_BUFFER ? "buffer" : "shared", s->u.alloc.name);
        print_type(b, s->u.alloc.elem);
        put(b, "[");
        print_expr(b, s->u.alloc.count, 0);
        put(b, "]%s = ",
            s->u.alloc.place == PLACE_DEVICE    ? "@device"
            : s->u.alloc.place == PLACE_UNIFIED ? "@unified"
                                                : "");
        print_expr(b, s->u.alloc.init, 0);
        put(b, ";\n");
        break;
    case STMT_BARRIER: put(b, "barrier;\n"); break;
    case STMT_BLOCK:
        print_block(b, s->u.block, depth);
        put(b, "\n");
        break;
    }
}

static void print_block(Buf *b, const Block *blk, int depth) {
    put(b, "{\n");
    for (int i = 0; i < blk->nstmts; i++) print_stmt(b, blk->stmts[i], depth + 1);
    indent(b, depth);
    put(b, "}");
}

static void print_fn(Buf *b, const Item *it) {
    put(b, "%sfn %s(", it->pub ? "pub " : "", it->name);
    for (int i = 0; i < it->u.fn.nparams; i++) {
        if (i) put(b, ", ");
        put(b, "%s:", it->u.fn.params[i]->name);
        print_type(b, it->u.fn.params[i]->type);
    }
    put(b, ")");
    if (it->u.fn.ret && it->u.fn.ret->kind != TY_VOID) {
        put(b, " -> ");
        print_type(b, it->u.fn.ret);
    }
    if (it->u.fn.implements) put(b, " implements %s", it->u.fn.implements);
    if (it->u.fn.requires) {
        put(b, " requires ");
        print_expr(b, it->u.fn.requires, 0);
    }
    if (it->u.fn.expr_body && it->u.fn.body->nstmts == 1 &&
        it->u.fn.body->stmts[0]->kind == STMT_RETURN && it->u.fn.body->stmts[0]->u.ret.value) {
        put(b, " = ");
        print_expr(b, it->u.fn.body->stmts[0]->u.ret.value, 0);
        put(b, ";\n");
    } else {
        put(b, " ");
        print_block(b, it->u.fn.body, 0);
        put(b, "\n");
    }
}

static void print_item(Buf *b, const Item *it) {
    switch (it->kind) {
    case ITEM_FN: print_fn(b, it); break;
    case ITEM_CONST:
        put(b, "const %s:", it->name);
        print_type(b, it->u.const_.type);
        put(b, " = ");
        print_expr(b, it->u.const_.value, 0);
        put(b, ";\n");
        break;
    case ITEM_LAYOUT:
        put(b, "layout %s = ", it->name);
        print_expr(b, it->u.layout.value, 0);
        put(b, ";\n");
        break;
    case ITEM_DERIVE:
        put(b, "%sderive %s", it->pub ? "pub " : "", it->name);
        if (it->u.derive.has_list) {
            put(b, "[");
            for (int i = 0; i < it->u.derive.nwrt; i++)
                put(b, "%s%s", i ? ", " : "", it->u.derive.wrt[i]);
            put(b, "]");
        }
        put(b, " for %s;\n", it->u.derive.target);
        break;
    }
}

char *cairn_print_program(const Program *p) {
    Buf b = {0};
    for (int i = 0; i < p->nitems; i++) {
        if (i) put(&b, "\n");
        print_item(&b, p->items[i]);
    }
    return finish(&b);
}

char *cairn_print_expr(const Expr *e) {
    Buf b = {0};
    print_expr(&b, e, 0);
    return finish(&b);
}

char *cairn_print_type(const Type *t) {
    Buf b = {0};
    print_type(&b, t);
    return finish(&b);
}
