/* parser.c: tokens to the syntax tree (ast.h), by recursive descent.
 *
 * The grammar is docs/language.md's. A syntax error reports what was expected (E-SYNTAX)
 * and abandons the statement it sits in: the parser longjmps back to the loop of the
 * innermost block, which skips to the next statement (past the next ';' or balanced
 * '{...}', or to a statement keyword, or to the block's '}') and goes on, so a file with
 * several mistakes reports each of them. A missing ';' resumes right where the ';' was
 * due. What a block cannot recover from (an item keyword or the end of the file inside
 * it) goes up to the item loop, which skips to the next item keyword. Every step of the
 * skipping moves forward, so the parser never loops. Every node lives in the arena, so
 * an abandoned statement leaks nothing. Nesting is bounded (MAX_DEPTH) so hostile input
 * cannot exhaust the stack.
 */
#include <assert.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "syntax/syntax.h"
#include "syntax/lexer.h"

enum { MAX_DEPTH = 200 };

typedef struct Parser {
    const SourceFile *src;
    Arena *arena;
    Diags *d;
    Token *toks;
    int ntoks, pos;
    int depth;
    jmp_buf on_error;     /* where a syntax error goes: the innermost block's loop */
    bool resume_here;     /* the error was a missing ';': go on at the current token */
    struct PtrVec *items; /* the program's items: in memory, so longjmp keeps them */
    const char **names;   /* interned identifier texts: open addressing, power-of-two size */
    int nnames, capnames;
} Parser;

/* A growable list of pointers in the arena (safe to abandon on longjmp). */
typedef struct PtrVec {
    void **items;
    int len, cap;
} PtrVec;

static void vec_push(Parser *p, PtrVec *v, void *x) {
    if (v->len == v->cap) {
        int cap = v->cap ? v->cap * 2 : 4;
        void **items = arena_alloc(p->arena, sizeof(void *) * (size_t)cap);
        if (v->len) memcpy(items, v->items, sizeof(void *) * (size_t)v->len);
        v->items = items;
        v->cap = cap;
    }
    v->items[v->len++] = x;
}

/* ---- tokens and spans ---- */

static const Token *peek(const Parser *p) { return &p->toks[p->pos]; }
static const Token *peek_at(const Parser *p, int k) {
    int i = p->pos + k;
    return &p->toks[i < p->ntoks ? i : p->ntoks - 1];
}
static bool lower_at(const Parser *p, TokKind k) { return peek(p)->kind == k; }

static Span tok_span(const Parser *p, const Token *t) {
    return (Span){p->src->path, t->line, t->col, t->off, t->len};
}

/* The span from token `start` to the last token consumed. */
static Span span_from(const Parser *p, int start) {
    const Token *a = &p->toks[start];
    const Token *b = &p->toks[p->pos > start ? p->pos - 1 : start];
    return (Span){p->src->path, a->line, a->col, a->off, b->off + b->len - a->off};
}

static unsigned hash_bytes(const char *s, int n) {
    unsigned h = 2166136261u; /* FNV-1a */
    for (int i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

/* A token's text in the arena; identifiers are interned (one copy of each name). */
static char *tok_text(Parser *p, const Token *t) {
    const char *s = p->src->text + t->off;
    if (t->kind != TOK_IDENT) return arena_strndup(p->arena, s, (size_t)t->len);
    if (p->nnames * 2 >= p->capnames) {
        int cap = p->capnames ? p->capnames * 2 : 256;
        const char **names = arena_alloc(p->arena, sizeof(char *) * (size_t)cap);
        for (int i = 0; i < p->capnames; i++) {
            if (!p->names[i]) continue;
            unsigned j = hash_bytes(p->names[i], (int)strlen(p->names[i])) & (unsigned)(cap - 1);
            while (names[j]) j = (j + 1) & (unsigned)(cap - 1);
            names[j] = p->names[i];
        }
        p->names = names;
        p->capnames = cap;
    }
    assert(p->capnames > 0 && (p->capnames & (p->capnames - 1)) == 0 &&
           p->nnames * 2 < p->capnames);
    unsigned j = hash_bytes(s, t->len) & (unsigned)(p->capnames - 1);
    for (; p->names[j]; j = (j + 1) & (unsigned)(p->capnames - 1))
        if (strncmp(p->names[j], s, (size_t)t->len) == 0 && p->names[j][t->len] == '\0')
            return (char *)p->names[j];
    p->nnames++;
    return (char *)(p->names[j] = arena_strndup(p->arena, s, (size_t)t->len));
}

static bool tok_is(const Parser *p, const Token *t, const char *word) {
    return t->kind == TOK_IDENT && (size_t)t->len == strlen(word) &&
           memcmp(p->src->text + t->off, word, (size_t)t->len) == 0;
}

static _Noreturn void fail_at(Parser *p, const Token *t, const char *help, const char *what) {
    if (t->kind == TOK_ERROR) longjmp(p->on_error, 1); /* the lexer said what is wrong here */
    if (t->kind == TOK_EOF)
        diag_error(p->d, tok_span(p, t), E_SYNTAX, help, "expected %s, found end of file", what);
    else
        diag_error(p->d, tok_span(p, t), E_SYNTAX, help, "expected %s, found '%.*s'", what, t->len,
                   p->src->text + t->off);
    longjmp(p->on_error, 1);
}

static _Noreturn void fail(Parser *p, const char *what) { fail_at(p, peek(p), NULL, what); }

static const Token *advance_tok(Parser *p) {
    const Token *t = peek(p);
    if (t->kind != TOK_EOF) p->pos++;
    return t;
}

static bool accept(Parser *p, TokKind k) {
    if (!lower_at(p, k)) return false;
    advance_tok(p);
    return true;
}

/* A missing ';' is reported where it belongs, right after the statement that lacks
 * it (rustc's place), not at the next line's first token. */
static _Noreturn void fail_semicolon(Parser *p) {
    const Token *t = peek(p), *prev = &p->toks[p->pos > 0 ? p->pos - 1 : 0];
    if (t->kind == TOK_ERROR || p->pos == 0) fail(p, "';'");
    Span end = {p->src->path, prev->line, prev->col + prev->len, prev->off + prev->len, 1};
    if (t->kind == TOK_EOF)
        diag_error(p->d, end, E_SYNTAX, "add ';'", "expected ';', found end of file");
    else
        diag_error(p->d, end, E_SYNTAX, "add ';'", "expected ';', found '%.*s'", t->len,
                   p->src->text + t->off);
    p->resume_here = true;
    longjmp(p->on_error, 1);
}

static const Token *expect(Parser *p, TokKind k) {
    if (!lower_at(p, k) && k == TOK_SEMI) fail_semicolon(p);
    if (!lower_at(p, k)) {
        char what[48];
        const char *text = lexer_kind_text(k);
        if (k == TOK_IDENT || k == TOK_INT) snprintf(what, sizeof what, "%s", text);
        else snprintf(what, sizeof what, "'%s'", text);
        fail(p, what);
    }
    return advance_tok(p);
}

static void enter(Parser *p) {
    if (++p->depth > MAX_DEPTH)
        fail_at(p, peek(p), "split the expression or block into smaller ones",
                "less deeply nested code (nesting limit reached)");
}
static void leave(Parser *p) { p->depth--; }

/* ---- types ---- */

static Expr *parse_expr(Parser *p);
static Block *parse_block(Parser *p);
static const Type *parse_type(Parser *p);

static uint64_t parse_small_int(Parser *p, const char *what) {
    const Token *t = peek(p);
    if (t->kind != TOK_INT) fail(p, what);
    advance_tok(p);
    uint64_t v = strtoull(p->src->text + t->off, NULL, 0);
    if (v > 1024) fail_at(p, t, "fragment dimensions are at most 1024", what);
    return v;
}

static Placement parse_placement(Parser *p) {
    if (!accept(p, TOK_AT)) return PLACE_HOST;
    const Token *t = peek(p);
    if (tok_is(p, t, "device")) {
        advance_tok(p);
        return PLACE_DEVICE;
    }
    if (tok_is(p, t, "unified")) {
        advance_tok(p);
        return PLACE_UNIFIED;
    }
    if (tok_is(p, t, "host")) {
        advance_tok(p);
        return PLACE_HOST;
    }
    fail_at(p, t, "placements are @device, @unified and @host", "a placement");
}

static const Type *parse_fragment_type(Parser *p) {
    const Token *t = advance_tok(p);
    static const struct {
        const char *name;
        FragFamily fam;
        FragRole role;
    } fams[] = {
        {"WmmaA", FRAG_WMMA, FRAG_A},     {"WmmaB", FRAG_WMMA, FRAG_B},
        {"WmmaAcc", FRAG_WMMA, FRAG_ACC}, {"MmaA", FRAG_MMA, FRAG_A},
        {"MmaB", FRAG_MMA, FRAG_B},       {"MmaAcc", FRAG_MMA, FRAG_ACC},
        {"TmemAcc", FRAG_TMEM, FRAG_ACC},
    };
    size_t i = 0;
    while (i + 1 < sizeof fams / sizeof fams[0] &&
           !((size_t)t->len == strlen(fams[i].name) &&
             memcmp(p->src->text + t->off, fams[i].name, (size_t)t->len) == 0))
        i++;
    expect(p, TOK_LBRACKET);
    const Type *elem = parse_type(p);
    int dims[3];
    for (int k = 0; k < 3; k++) {
        expect(p, TOK_COMMA);
        dims[k] = (int)parse_small_int(p, "a fragment dimension (an integer)");
    }
    expect(p, TOK_RBRACKET);
    return type_new_fragment(
        p->arena, (TypeFrag){fams[i].fam, fams[i].role, elem, dims[0], dims[1], dims[2]});
}

static const Type *parse_view_type(Parser *p) {
    Access acc = advance_tok(p)->kind == TOK_RO ? ACCESS_RO : ACCESS_RW;
    expect(p, TOK_LT);
    const Type *elem = parse_type(p);
    expect(p, TOK_GT);
    Expr *extent = NULL;
    if (accept(p, TOK_LBRACKET)) {
        extent = parse_expr(p);
        expect(p, TOK_RBRACKET);
    }
    Placement place = parse_placement(p);
    return type_new_view(p->arena, (TypeView){acc, elem, extent, place, VIEW_PARAM});
}

static const Type *parse_type(Parser *p) {
    const Token *t = peek(p);
    switch (t->kind) {
    case TOK_SCALAR_TYPE:
        advance_tok(p);
        return type_scalar(type_kind_from_keyword(p->src->text + t->off, (size_t)t->len));
    case TOK_RO:
    case TOK_RW: return parse_view_type(p);
    case TOK_FRAGMENT_TYPE: return parse_fragment_type(p);
    default:
        fail_at(p, t,
                "types are i8..u64, usize, bool, f32, f64, f16, bf16, f8e4m3, f8e5m2, "
                "ro<T>[n], rw<T>[n], rw<T> and fragment types",
                "a type");
    }
}

static bool starts_type(TokKind k) {
    return k == TOK_SCALAR_TYPE || k == TOK_RO || k == TOK_RW || k == TOK_FRAGMENT_TYPE;
}

/* ---- expressions ---- */

static Expr *new_expr(Parser *p, ExprKind k, int start) {
    return ast_new_expr(p->arena, k, span_from(p, start));
}

static void parse_args(Parser *p, Expr ***args, int *nargs) {
    PtrVec v = {0};
    expect(p, TOK_LPAREN);
    if (!lower_at(p, TOK_RPAREN)) {
        do vec_push(p, &v, parse_expr(p));
        while (accept(p, TOK_COMMA));
    }
    expect(p, TOK_RPAREN);
    *args = (Expr **)v.items;
    *nargs = v.len;
}

static Expr *parse_literal(Parser *p) {
    int start = p->pos;
    const Token *t = advance_tok(p);
    Expr *e;
    switch (t->kind) {
    case TOK_INT: {
        e = new_expr(p, EXPR_INT, start);
        e->u.int_lit.text = tok_text(p, t);
        const char *s = e->u.int_lit.text;
        bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
        uint64_t v = 0;
        for (const char *c = s + (hex ? 2 : 0); *c; c++) {
            int digit = *c <= '9' ? *c - '0' : (*c | 0x20) - 'a' + 10;
            uint64_t base = hex ? 16 : 10;
            if (v > (UINT64_MAX - (uint64_t)digit) / base) e->u.int_lit.overflow = true;
            v = v * base + (uint64_t)digit;
        }
        if (hex && !s[2]) fail_at(p, t, "write hex digits after 0x", "a hex number");
        e->u.int_lit.value = v;
        return e;
    }
    case TOK_FLOAT:
        e = new_expr(p, EXPR_FLOAT, start);
        e->u.float_lit.text = tok_text(p, t);
        return e;
    case TOK_STRING: {
        e = new_expr(p, EXPR_STRING, start);
        char *out = arena_alloc(p->arena, (size_t)t->len);
        int n = 0;
        for (int i = 1; i < t->len - 1; i++) {
            char c = p->src->text[t->off + i];
            if (c == '\\') {
                c = p->src->text[t->off + ++i];
                c = c == 'n' ? '\n' : c == 't' ? '\t' : c == '0' ? '\0' : c;
            }
            out[n++] = c;
        }
        e->u.str.text = out;
        e->u.str.len = n;
        return e;
    }
    default: /* TOK_TRUE, TOK_FALSE */
        e = new_expr(p, EXPR_BOOL, start);
        e->u.bool_lit = t->kind == TOK_TRUE;
        return e;
    }
}

static bool parse_reduce_op(Parser *p, ReduceOp *op) {
    const Token *t = peek(p);
    switch (t->kind) {
    case TOK_PLUS: *op = RED_ADD; break;
    case TOK_STAR: *op = RED_MUL; break;
    case TOK_AMP: *op = RED_BITAND; break;
    case TOK_PIPE: *op = RED_BITOR; break;
    case TOK_CARET: *op = RED_BITXOR; break;
    default:
        if (tok_is(p, t, "min")) *op = RED_MIN;
        else if (tok_is(p, t, "max")) *op = RED_MAX;
        else return false;
    }
    advance_tok(p);
    return true;
}

/* `i in n` or `i in a..b`: the binder of for, parallel, blocks, threads, reduce. */
static void parse_binder_rest(Parser *p, const char **var, Span *var_span, Expr **lo,
                              Expr **count) {
    const Token *t = expect(p, TOK_IDENT);
    *var = tok_text(p, t);
    *var_span = tok_span(p, t);
    expect(p, TOK_IN);
    Expr *first = parse_expr(p);
    if (accept(p, TOK_DOTDOT)) {
        *lo = first;
        *count = parse_expr(p);
    } else {
        *lo = NULL;
        *count = first;
    }
}

static Binder parse_binder(Parser *p) {
    Binder b = {0};
    parse_binder_rest(p, &b.var, &b.var_span, &b.lo, &b.count);
    return b;
}

static Expr *parse_reduce(Parser *p) {
    int start = p->pos;
    bool scan = advance_tok(p)->kind == TOK_SCAN;
    Expr *e = new_expr(p, EXPR_REDUCE, start);
    e->u.reduce.scan = scan;
    if (!parse_reduce_op(p, &e->u.reduce.op))
        fail_at(p, peek(p), "reduction operators are + * min max & | ^", "a reduction operator");
    if (accept(p, TOK_FOR)) e->u.reduce.mode = MODE_FOR;
    else if (accept(p, TOK_PARALLEL)) e->u.reduce.mode = MODE_PARALLEL;
    else if (tok_is(p, peek(p), "warp")) {
        advance_tok(p);
        e->u.reduce.mode = MODE_WARP;
    } else
        fail_at(p, peek(p), "write `for` (written order), `parallel` (pool) or `warp`",
                "for, parallel or warp");
    if (e->u.reduce.mode != MODE_WARP || (lower_at(p, TOK_IDENT) && peek_at(p, 1)->kind == TOK_IN))
        parse_binder_rest(p, &e->u.reduce.var, &e->u.reduce.var_span, &e->u.reduce.lo,
                          &e->u.reduce.count);
    expect(p, TOK_YIELD);
    e->u.reduce.body = parse_expr(p);
    if (scan) {
        expect(p, TOK_INTO);
        e->u.reduce.into = parse_expr(p);
    }
    e->span = span_from(p, start);
    return e;
}

static Expr *parse_primary(Parser *p) {
    int start = p->pos;
    const Token *t = peek(p);
    switch (t->kind) {
    case TOK_INT:
    case TOK_FLOAT:
    case TOK_STRING:
    case TOK_TRUE:
    case TOK_FALSE: return parse_literal(p);
    case TOK_ZEROED: advance_tok(p); return new_expr(p, EXPR_ZEROED, start);
    case TOK_IDENT: {
        advance_tok(p);
        Expr *e = new_expr(p, EXPR_NAME, start);
        e->u.name.name = tok_text(p, t);
        return e;
    }
    case TOK_LPAREN: {
        advance_tok(p);
        Expr *e = parse_expr(p);
        expect(p, TOK_RPAREN);
        return e; /* parentheses are not kept: the printer adds what precedence needs */
    }
    case TOK_SCALAR_TYPE:
    case TOK_FRAGMENT_TYPE: {
        const Type *to = parse_type(p);
        Expr *arg = NULL;
        expect(p, TOK_LPAREN);
        arg = parse_expr(p);
        expect(p, TOK_RPAREN);
        Expr *e = new_expr(p, EXPR_CONVERT, start);
        e->u.convert.to = to;
        e->u.convert.arg = arg;
        return e;
    }
    case TOK_REDUCE:
    case TOK_SCAN: return parse_reduce(p);
    default: fail_at(p, t, NULL, "an expression");
    }
}

static Expr *parse_postfix(Parser *p) {
    int start = p->pos;
    Expr *e = parse_primary(p);
    for (;;) {
        /* `a[usize(row)]` indexes by a conversion: a scalar type followed by `(` */
        bool conversion =
            peek_at(p, 1)->kind == TOK_SCALAR_TYPE && peek_at(p, 2)->kind == TOK_LPAREN;
        if (lower_at(p, TOK_LBRACKET) && starts_type(peek_at(p, 1)->kind) && !conversion &&
            e->kind != EXPR_CONVERT) {
            /* generic call: quantize[f16](x, s), mma_load[WmmaA[f16, 16, 16, 16]](...) */
            advance_tok(p);
            PtrVec g = {0};
            do vec_push(p, &g, (void *)parse_type(p));
            while (accept(p, TOK_COMMA));
            expect(p, TOK_RBRACKET);
            if (!lower_at(p, TOK_LPAREN)) fail(p, "'(' after generic arguments");
            Expr *call = new_expr(p, EXPR_CALL, start);
            call->u.call.callee = e;
            call->u.call.generics = (const Type **)g.items;
            call->u.call.ngenerics = g.len;
            parse_args(p, &call->u.call.args, &call->u.call.nargs);
            call->span = span_from(p, start);
            e = call;
        } else if (lower_at(p, TOK_LBRACKET)) {
            advance_tok(p);
            Expr *ix = new_expr(p, EXPR_INDEX, start);
            ix->u.index.base = e;
            ix->u.index.index = parse_expr(p);
            expect(p, TOK_RBRACKET);
            ix->span = span_from(p, start);
            e = ix;
        } else if (lower_at(p, TOK_LPAREN)) {
            Expr *call = new_expr(p, EXPR_CALL, start);
            call->u.call.callee = e;
            parse_args(p, &call->u.call.args, &call->u.call.nargs);
            call->span = span_from(p, start);
            e = call;
        } else if (lower_at(p, TOK_DOT)) {
            advance_tok(p);
            const Token *f = expect(p, TOK_IDENT);
            Expr *m = new_expr(p, EXPR_MEMBER, start);
            m->u.member.base = e;
            m->u.member.field = tok_text(p, f);
            m->u.member.field_span = tok_span(p, f);
            e = m;
        } else {
            return e;
        }
    }
}

static Expr *parse_unary(Parser *p) {
    int start = p->pos;
    if (lower_at(p, TOK_MINUS) || lower_at(p, TOK_BANG)) {
        UnaryOp op = advance_tok(p)->kind == TOK_MINUS ? UN_NEG : UN_NOT;
        enter(p);
        Expr *operand = parse_unary(p);
        leave(p);
        Expr *e = new_expr(p, EXPR_UNARY, start);
        e->u.unary.op = op;
        e->u.unary.operand = operand;
        return e;
    }
    return parse_postfix(p);
}

/* Binding power of a binary operator token; 0 when the token is not one. */
static int binary_prec(TokKind k, BinaryOp *op) {
    static const struct {
        TokKind tok;
        BinaryOp op;
        int prec;
    } table[] = {
        {TOK_OROR, BIN_OR, 1},      {TOK_ANDAND, BIN_AND, 2}, {TOK_EQEQ, BIN_EQ, 3},
        {TOK_NE, BIN_NE, 3},        {TOK_LT, BIN_LT, 3},      {TOK_LE, BIN_LE, 3},
        {TOK_GT, BIN_GT, 3},        {TOK_GE, BIN_GE, 3},      {TOK_PIPE, BIN_BITOR, 4},
        {TOK_CARET, BIN_BITXOR, 5}, {TOK_AMP, BIN_BITAND, 6}, {TOK_SHL, BIN_SHL, 7},
        {TOK_SHR, BIN_SHR, 7},      {TOK_PLUS, BIN_ADD, 8},   {TOK_MINUS, BIN_SUB, 8},
        {TOK_STAR, BIN_MUL, 9},     {TOK_SLASH, BIN_DIV, 9},  {TOK_PERCENT, BIN_REM, 9},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].tok == k) {
            *op = table[i].op;
            return table[i].prec;
        }
    return 0;
}

static Expr *parse_binary(Parser *p, int min_prec) {
    int start = p->pos;
    enter(p);
    Expr *lhs = parse_unary(p);
    for (;;) {
        BinaryOp op;
        int prec = binary_prec(peek(p)->kind, &op);
        if (prec == 0 || prec < min_prec) break;
        advance_tok(p);
        Expr *rhs = parse_binary(p, prec + 1);
        Expr *e = new_expr(p, EXPR_BINARY, start);
        e->u.binary.op = op;
        e->u.binary.lhs = lhs;
        e->u.binary.rhs = rhs;
        lhs = e;
    }
    leave(p);
    return lhs;
}

static Expr *parse_expr(Parser *p) { return parse_binary(p, 1); }

/* ---- statements ---- */

static Stmt *new_stmt(Parser *p, StmtKind k, int start) {
    return ast_new_stmt(p->arena, k, span_from(p, start));
}

static Stmt *parse_stmt(Parser *p);

static Stmt *parse_let(Parser *p, int start) {
    Stmt *s = new_stmt(p, STMT_LET, start);
    s->u.let.mut = accept(p, TOK_MUT);
    const Token *name = expect(p, TOK_IDENT);
    s->u.let.name = tok_text(p, name);
    s->u.let.name_span = tok_span(p, name);
    if (accept(p, TOK_COLON)) s->u.let.declared = parse_type(p);
    expect(p, TOK_EQ);
    s->u.let.init = parse_expr(p);
    expect(p, TOK_SEMI);
    return s;
}

static Stmt *parse_if(Parser *p, int start) {
    Stmt *s = new_stmt(p, STMT_IF, start);
    s->u.if_.cond = parse_expr(p);
    s->u.if_.then = parse_block(p);
    if (accept(p, TOK_ELSE)) {
        int else_start = p->pos;
        if (accept(p, TOK_IF)) {
            enter(p);
            s->u.if_.els = parse_if(p, else_start);
            leave(p);
        } else {
            Stmt *b = new_stmt(p, STMT_BLOCK, else_start);
            b->u.block = parse_block(p);
            b->span = span_from(p, else_start);
            s->u.if_.els = b;
        }
    }
    return s;
}

static Stmt *parse_alloc(Parser *p, int start, StmtKind kind) {
    Stmt *s = new_stmt(p, kind, start);
    const Token *name = expect(p, TOK_IDENT);
    s->u.alloc.name = tok_text(p, name);
    s->u.alloc.name_span = tok_span(p, name);
    expect(p, TOK_COLON);
    s->u.alloc.elem = parse_type(p);
    expect(p, TOK_LBRACKET);
    s->u.alloc.count = parse_expr(p);
    expect(p, TOK_RBRACKET);
    s->u.alloc.place = parse_placement(p);
    expect(p, TOK_EQ);
    s->u.alloc.init = parse_expr(p);
    expect(p, TOK_SEMI);
    return s;
}

static bool parse_assign_op(Parser *p, AssignOp *op) {
    switch (peek(p)->kind) {
    case TOK_EQ: *op = ASSIGN_SET; break;
    case TOK_PLUSEQ: *op = ASSIGN_ADD; break;
    case TOK_MINUSEQ: *op = ASSIGN_SUB; break;
    case TOK_STAREQ: *op = ASSIGN_MUL; break;
    case TOK_SLASHEQ: *op = ASSIGN_DIV; break;
    default: return false;
    }
    advance_tok(p);
    return true;
}

static Stmt *parse_simple(Parser *p, int start) {
    Expr *e = parse_expr(p);
    AssignOp op;
    Stmt *s;
    if (parse_assign_op(p, &op)) {
        s = new_stmt(p, STMT_ASSIGN, start);
        s->u.assign.op = op;
        s->u.assign.target = e;
        s->u.assign.value = parse_expr(p);
    } else {
        s = new_stmt(p, STMT_EXPR, start);
        s->u.expr = e;
    }
    expect(p, TOK_SEMI); /* a missing ';' is reported on the statement's own line */
    return s;
}

/* `while` is no keyword (a name may be `while`), but `while COND {` is a loop the
 * language does not have: a statement that starts with it and does not go on as an
 * assignment or a call's statement is read as one. */
static bool is_while(const Parser *p) {
    if (!tok_is(p, peek(p), "while")) return false;
    switch (peek_at(p, 1)->kind) {
    case TOK_EQ:
    case TOK_PLUSEQ:
    case TOK_MINUSEQ:
    case TOK_STAREQ:
    case TOK_SLASHEQ:
    case TOK_SEMI:
    case TOK_LBRACKET:
    case TOK_DOT: return false;
    default: return true;
    }
}

/* `while COND { ... }`: one error naming the loop to write, then the condition and the
 * body are parsed (their own mistakes are reported too) and kept as a plain block, so
 * parsing goes on after the loop. */
static Stmt *parse_while(Parser *p, int start) {
    const Token *w = advance_tok(p);
    diag_error(p->d, tok_span(p, w), E_SYNTAX,
               "a loop's count is known when it starts: `for k in 0..K { ... }`, with an `if` "
               "inside to skip the rest",
               "CAIRN has no while loop: write `for k in 0..K`");
    parse_expr(p);
    Stmt *s = new_stmt(p, STMT_BLOCK, start);
    s->u.block = parse_block(p);
    return s;
}

static Stmt *parse_stmt_inner(Parser *p) {
    int start = p->pos;
    Stmt *s;
    switch (peek(p)->kind) {
    case TOK_LET:
        advance_tok(p);
        s = parse_let(p, start);
        break;
    case TOK_IF:
        advance_tok(p);
        s = parse_if(p, start);
        break;
    case TOK_FOR:
        advance_tok(p);
        s = new_stmt(p, STMT_FOR, start);
        s->u.for_.b = parse_binder(p);
        s->u.for_.body = parse_block(p);
        break;
    case TOK_PARALLEL:
        advance_tok(p);
        s = new_stmt(p, STMT_PARALLEL, start);
        s->u.parallel.b = parse_binder(p);
        s->u.parallel.body = parse_block(p);
        break;
    case TOK_BLOCKS:
        advance_tok(p);
        s = new_stmt(p, STMT_BLOCKS, start);
        s->u.blocks.grid = parse_binder(p);
        expect(p, TOK_THREADS);
        s->u.blocks.threads = parse_binder(p);
        s->u.blocks.body = parse_block(p);
        break;
    case TOK_RETURN:
        advance_tok(p);
        s = new_stmt(p, STMT_RETURN, start);
        if (!lower_at(p, TOK_SEMI)) s->u.ret.value = parse_expr(p);
        expect(p, TOK_SEMI);
        break;
    case TOK_BUFFER:
        advance_tok(p);
        s = parse_alloc(p, start, STMT_BUFFER);
        break;
    case TOK_SHARED:
        advance_tok(p);
        s = parse_alloc(p, start, STMT_SHARED);
        break;
    case TOK_BARRIER:
        advance_tok(p);
        expect(p, TOK_SEMI);
        s = new_stmt(p, STMT_BARRIER, start);
        break;
    case TOK_LBRACE:
        s = new_stmt(p, STMT_BLOCK, start);
        s->u.block = parse_block(p);
        break;
    default: s = is_while(p) ? parse_while(p, start) : parse_simple(p, start); break;
    }
    s->span = span_from(p, start);
    return s;
}

static Stmt *parse_stmt(Parser *p) {
    enter(p);
    Stmt *s = parse_stmt_inner(p);
    leave(p);
    return s;
}

static bool starts_item(TokKind k);

static bool starts_stmt(TokKind k) {
    return k == TOK_LET || k == TOK_IF || k == TOK_FOR || k == TOK_RETURN || k == TOK_PARALLEL ||
           k == TOK_BLOCKS || k == TOK_BUFFER || k == TOK_SHARED || k == TOK_BARRIER;
}

/* After a syntax error in the statement that began at token STMT_START, the parser
 * having stopped at token ERROR_POS: moves to where the block's next statement begins
 * (true), or reports that the block cannot go on (false: an item keyword or the end of
 * the file came first). Always moves past STMT_START. */
static bool sync_to_stmt(Parser *p, int stmt_start, int error_pos) {
    if (p->resume_here) { /* a missing ';': the statement ended where it was due */
        p->resume_here = false;
        if (p->pos > stmt_start) return true;
    }
    p->pos = error_pos > stmt_start ? error_pos : stmt_start + 1;
    if (p->pos >= p->ntoks) p->pos = p->ntoks - 1;
    int depth = 0; /* braces opened while skipping */
    for (;;) {
        TokKind k = peek(p)->kind;
        if (k == TOK_EOF || (depth == 0 && starts_item(k))) return false;
        if (depth == 0 && (k == TOK_RBRACE || (starts_stmt(k) && p->pos > stmt_start)))
            return true; /* the block's end, or the next statement */
        advance_tok(p);
        if (depth == 0 && k == TOK_SEMI) return true;
        depth += k == TOK_LBRACE;
        if (k == TOK_RBRACE && --depth == 0) return true; /* past a `{ ... }` */
    }
}

/* The statements of a block, each parsed under this block's recovery (see the top). */
static Block *parse_block(Parser *p) {
    int start = p->pos;
    expect(p, TOK_LBRACE);
    PtrVec *v = arena_alloc(p->arena, sizeof *v); /* in memory: longjmp keeps it */
    jmp_buf outer;
    memcpy(outer, p->on_error, sizeof outer);
    int depth = p->depth;
    while (!lower_at(p, TOK_RBRACE)) {
        if (lower_at(p, TOK_EOF)) { /* say where the unclosed block began */
            diag_error(p->d, tok_span(p, peek(p)), E_SYNTAX, "close the block with '}'",
                       "expected '}', found end of file");
            diag_note(p->d, tok_span(p, &p->toks[start]), "the block opened here");
            memcpy(p->on_error, outer, sizeof outer);
            longjmp(p->on_error, 1);
        }
        int stmt_start = p->pos;
        if (setjmp(p->on_error) == 0) {
            vec_push(p, v, parse_stmt(p));
        } else {
            p->depth = depth;
            if (!sync_to_stmt(p, stmt_start, p->pos)) { /* the item loop takes over */
                memcpy(p->on_error, outer, sizeof outer);
                longjmp(p->on_error, 1);
            }
        }
    }
    memcpy(p->on_error, outer, sizeof outer);
    advance_tok(p);
    return ast_new_block(p->arena, span_from(p, start), (Stmt **)v->items, v->len);
}

/* ---- items ---- */

static Param *parse_param(Parser *p) {
    int start = p->pos;
    Param *pr = arena_alloc(p->arena, sizeof *pr);
    const Token *name = expect(p, TOK_IDENT);
    pr->name = tok_text(p, name);
    pr->name_span = tok_span(p, name);
    expect(p, TOK_COLON);
    pr->type = parse_type(p);
    pr->span = span_from(p, start);
    return pr;
}

static void parse_fn(Parser *p, Item *it) {
    const Token *name = expect(p, TOK_IDENT);
    it->name = tok_text(p, name);
    it->name_span = tok_span(p, name);
    expect(p, TOK_LPAREN);
    PtrVec params = {0};
    if (!lower_at(p, TOK_RPAREN)) {
        do vec_push(p, &params, parse_param(p));
        while (accept(p, TOK_COMMA));
    }
    expect(p, TOK_RPAREN);
    it->u.fn.params = (Param **)params.items;
    it->u.fn.nparams = params.len;
    it->u.fn.ret = type_scalar(TY_VOID);
    if (accept(p, TOK_ARROW)) {
        int rstart = p->pos;
        it->u.fn.ret = parse_type(p);
        it->u.fn.ret_span = span_from(p, rstart);
    }
    if (accept(p, TOK_IMPLEMENTS)) {
        const Token *ref = expect(p, TOK_IDENT);
        it->u.fn.implements = tok_text(p, ref);
        it->u.fn.implements_span = tok_span(p, ref);
    }
    if (tok_is(p, peek(p), "requires")) { /* a contextual keyword: `requires e` */
        advance_tok(p);
        it->u.fn.requires = parse_expr(p);
    }
    if (lower_at(p, TOK_EQ)) {
        int estart = p->pos;
        advance_tok(p);
        Expr *e = parse_expr(p);
        expect(p, TOK_SEMI);
        Stmt *ret = new_stmt(p, STMT_RETURN, estart + 1);
        ret->span = e->span;
        ret->u.ret.value = e;
        Stmt **stmts = arena_alloc(p->arena, sizeof(Stmt *));
        stmts[0] = ret;
        it->u.fn.body = ast_new_block(p->arena, e->span, stmts, 1);
        it->u.fn.expr_body = true;
    } else if (lower_at(p, TOK_LBRACE)) {
        it->u.fn.body = parse_block(p);
    } else {
        fail(p, "'{' or '=' (the function's body)");
    }
}

static void parse_derive(Parser *p, Item *it) {
    const Token *kind = expect(p, TOK_IDENT);
    if (!tok_is(p, kind, "grad"))
        fail_at(p, kind, "the only derivation is `derive grad for f;`", "'grad'");
    it->name = tok_text(p, kind);
    it->name_span = tok_span(p, kind);
    if (accept(p, TOK_LBRACKET)) {
        it->u.derive.has_list = true;
        PtrVec names = {0}, spans = {0};
        do {
            const Token *t = expect(p, TOK_IDENT);
            vec_push(p, &names, tok_text(p, t));
            Span *sp = arena_alloc(p->arena, sizeof *sp);
            *sp = tok_span(p, t);
            vec_push(p, &spans, sp);
        } while (accept(p, TOK_COMMA));
        expect(p, TOK_RBRACKET);
        it->u.derive.nwrt = names.len;
        it->u.derive.wrt = (const char **)names.items;
        it->u.derive.wrt_spans = arena_alloc(p->arena, sizeof(Span) * (size_t)names.len);
        for (int i = 0; i < spans.len; i++) it->u.derive.wrt_spans[i] = *(Span *)spans.items[i];
    }
    expect(p, TOK_FOR);
    const Token *target = expect(p, TOK_IDENT);
    it->u.derive.target = tok_text(p, target);
    it->u.derive.target_span = tok_span(p, target);
    expect(p, TOK_SEMI);
}

static Item *parse_item(Parser *p) {
    int start = p->pos;
    bool pub = accept(p, TOK_PUB);
    const Token *t = advance_tok(p);
    if (pub && t->kind != TOK_FN && t->kind != TOK_DERIVE) {
        p->pos--;
        fail_at(p, t, "pub marks what a library exports: write `pub fn` or `pub derive`",
                "'fn' or 'derive' after 'pub'");
    }
    Item *it;
    switch (t->kind) {
    case TOK_FN:
        it = ast_new_item(p->arena, ITEM_FN, tok_span(p, t));
        parse_fn(p, it);
        break;
    case TOK_CONST: {
        it = ast_new_item(p->arena, ITEM_CONST, tok_span(p, t));
        const Token *name = expect(p, TOK_IDENT);
        it->name = tok_text(p, name);
        it->name_span = tok_span(p, name);
        expect(p, TOK_COLON);
        it->u.const_.type = parse_type(p);
        expect(p, TOK_EQ);
        it->u.const_.value = parse_expr(p);
        expect(p, TOK_SEMI);
        break;
    }
    case TOK_LAYOUT: {
        it = ast_new_item(p->arena, ITEM_LAYOUT, tok_span(p, t));
        const Token *name = expect(p, TOK_IDENT);
        it->name = tok_text(p, name);
        it->name_span = tok_span(p, name);
        expect(p, TOK_EQ);
        it->u.layout.value = parse_expr(p);
        expect(p, TOK_SEMI);
        break;
    }
    case TOK_DERIVE:
        it = ast_new_item(p->arena, ITEM_DERIVE, tok_span(p, t));
        parse_derive(p, it);
        break;
    default:
        p->pos = start;
        fail_at(p, t, "a program is a list of fn, const, layout and derive items", "an item");
    }
    it->span = span_from(p, start);
    it->pub = pub;
    return it;
}

static bool starts_item(TokKind k) {
    return k == TOK_FN || k == TOK_CONST || k == TOK_LAYOUT || k == TOK_DERIVE || k == TOK_PUB ||
           k == TOK_EOF;
}

/* After an error at token `error_pos`: skip to the next item keyword (fn, const, layout
 * and derive never occur inside an item), always moving forward at least one token. */
static void sync_to_item(Parser *p, int item_start, int error_pos) {
    p->pos = error_pos > item_start ? error_pos : item_start + 1;
    if (p->pos >= p->ntoks) p->pos = p->ntoks - 1;
    assert(p->pos > item_start);
    while (!starts_item(peek(p)->kind)) advance_tok(p);
}

Program *cairn_parse(const char *path, const char *text, size_t len, Diags *d) {
    Arena *arena = arena_new();
    Program *prog = arena_alloc(arena, sizeof *prog);
    prog->arena = arena;
    prog->src = (SourceFile){arena_strdup(arena, path), arena_strndup(arena, text, len), len};
    if (!d->src) d->src = &prog->src;
    TokenList tl = lexer_run(arena, &prog->src, d);
    Parser *p = arena_alloc(arena, sizeof *p);
    p->src = &prog->src;
    p->arena = arena;
    p->d = d;
    p->toks = tl.toks;
    p->ntoks = tl.len;
    assert(tl.len > 0 && tl.toks[tl.len - 1].kind == TOK_EOF); /* lexer.h: always ends so */
    p->items = arena_alloc(arena, sizeof(PtrVec));
    while (!lower_at(p, TOK_EOF)) {
        int item_start = p->pos;
        if (setjmp(p->on_error) == 0) {
            Item *it = parse_item(p);
            vec_push(p, p->items, it);
        } else {
            p->depth = 0;
            p->resume_here = false;
            sync_to_item(p, item_start, p->pos);
        }
    }
    prog->items = (Item **)p->items->items;
    prog->nitems = p->items->len;
    free(tl.toks);
    return prog;
}
