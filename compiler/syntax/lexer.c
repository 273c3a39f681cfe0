/* lexer.c: CAIRN source text to tokens (see lexer.h). */
#include "syntax/lexer.h"

#include <stdlib.h>
#include <string.h>

typedef struct Keyword {
    const char *text;
    TokKind kind;
} Keyword;

/* A keyword's length (checked only after its first character matches). */
static size_t keyword_len(const Keyword *k) { return strlen(k->text); }

static const Keyword keywords[] = {
    {"fn", TOK_FN},
    {"const", TOK_CONST},
    {"layout", TOK_LAYOUT},
    {"derive", TOK_DERIVE},
    {"let", TOK_LET},
    {"mut", TOK_MUT},
    {"if", TOK_IF},
    {"else", TOK_ELSE},
    {"for", TOK_FOR},
    {"in", TOK_IN},
    {"return", TOK_RETURN},
    {"parallel", TOK_PARALLEL},
    {"blocks", TOK_BLOCKS},
    {"threads", TOK_THREADS},
    {"shared", TOK_SHARED},
    {"buffer", TOK_BUFFER},
    {"barrier", TOK_BARRIER},
    {"reduce", TOK_REDUCE},
    {"scan", TOK_SCAN},
    {"yield", TOK_YIELD},
    {"into", TOK_INTO},
    {"zeroed", TOK_ZEROED},
    {"true", TOK_TRUE},
    {"false", TOK_FALSE},
    {"implements", TOK_IMPLEMENTS},
    {"pub", TOK_PUB},
    {"ro", TOK_RO},
    {"rw", TOK_RW},
    {"WmmaA", TOK_FRAGMENT_TYPE},
    {"WmmaB", TOK_FRAGMENT_TYPE},
    {"WmmaAcc", TOK_FRAGMENT_TYPE},
    {"MmaA", TOK_FRAGMENT_TYPE},
    {"MmaB", TOK_FRAGMENT_TYPE},
    {"MmaAcc", TOK_FRAGMENT_TYPE},
    {"TmemAcc", TOK_FRAGMENT_TYPE},
};

/* Punctuation, longest first so that "..", "->", "+=", "<<" win over their prefixes. */
static const Keyword puncts[] = {
    {"..", TOK_DOTDOT},  {"->", TOK_ARROW},   {"<=", TOK_LE},     {">=", TOK_GE},
    {"==", TOK_EQEQ},    {"!=", TOK_NE},      {"+=", TOK_PLUSEQ}, {"-=", TOK_MINUSEQ},
    {"*=", TOK_STAREQ},  {"/=", TOK_SLASHEQ}, {"&&", TOK_ANDAND}, {"||", TOK_OROR},
    {"<<", TOK_SHL},     {">>", TOK_SHR},     {"(", TOK_LPAREN},  {")", TOK_RPAREN},
    {"[", TOK_LBRACKET}, {"]", TOK_RBRACKET}, {"{", TOK_LBRACE},  {"}", TOK_RBRACE},
    {"<", TOK_LT},       {">", TOK_GT},       {",", TOK_COMMA},   {";", TOK_SEMI},
    {":", TOK_COLON},    {".", TOK_DOT},      {"=", TOK_EQ},      {"+", TOK_PLUS},
    {"-", TOK_MINUS},    {"*", TOK_STAR},     {"/", TOK_SLASH},   {"%", TOK_PERCENT},
    {"!", TOK_BANG},     {"&", TOK_AMP},      {"|", TOK_PIPE},    {"^", TOK_CARET},
    {"@", TOK_AT},
};

const char *lexer_kind_text(TokKind k) {
    switch (k) {
    case TOK_EOF: return "end of file";
    case TOK_IDENT: return "a name";
    case TOK_INT: return "an integer";
    case TOK_FLOAT: return "a float literal";
    case TOK_STRING: return "a string";
    case TOK_SCALAR_TYPE: return "a type";
    case TOK_FRAGMENT_TYPE: return "a fragment type";
    default: break;
    }
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (keywords[i].kind == k) return keywords[i].text;
    for (size_t i = 0; i < sizeof puncts / sizeof puncts[0]; i++)
        if (puncts[i].kind == k) return puncts[i].text;
    return "?";
}

typedef struct Lexer {
    const SourceFile *src;
    const char *s;
    int pos, line, col;
    Diags *d;
    Arena *arena;
    Token *toks;
    int len, cap;
} Lexer;

static bool is_ident_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_hex(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static Span lex_span(const Lexer *lx, int off, int line, int col, int len) {
    return (Span){lx->src->path, line, col, off, len};
}

static void push(Lexer *lx, TokKind kind, int off, int line, int col) {
    if (lx->len == lx->cap) {
        int cap = lx->cap ? lx->cap * 2 : 1024;
        Token *t = realloc(lx->toks, sizeof(Token) * (size_t)cap);
        if (!t) abort();
        lx->toks = t;
        lx->cap = cap;
    }
    lx->toks[lx->len++] = (Token){kind, off, lx->pos - off, line, col};
}

/* Moves over n bytes of the current line (no newlines among them). */
static void advance(Lexer *lx, int n) {
    lx->pos += n;
    lx->col += n;
}

/* Skips blanks and comments; reports an unterminated block comment. */
static void skip_space(Lexer *lx) {
    for (;;) {
        char c = lx->s[lx->pos];
        if (c == '\n') {
            lx->pos++;
            lx->line++;
            lx->col = 1;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            advance(lx, 1);
        } else if (c == '/' && lx->s[lx->pos + 1] == '/') {
            while (lx->s[lx->pos] && lx->s[lx->pos] != '\n') advance(lx, 1);
        } else if (c == '/' && lx->s[lx->pos + 1] == '*') {
            int off = lx->pos, line = lx->line, col = lx->col;
            advance(lx, 2);
            while (lx->s[lx->pos] && !(lx->s[lx->pos] == '*' && lx->s[lx->pos + 1] == '/')) {
                if (lx->s[lx->pos] == '\n') {
                    lx->pos++;
                    lx->line++;
                    lx->col = 1;
                } else advance(lx, 1);
            }
            if (!lx->s[lx->pos]) { /* one error: the parser stops at the TOK_ERROR */
                diag_error(lx->d, lex_span(lx, off, line, col, 2), E_SYNTAX,
                           "close the comment with */", "unterminated block comment");
                push(lx, TOK_ERROR, off, line, col);
                return;
            }
            advance(lx, 2);
        } else {
            return;
        }
    }
}

static void lex_number(Lexer *lx) {
    int off = lx->pos, line = lx->line, col = lx->col;
    const char *s = lx->s;
    TokKind kind = TOK_INT;
    if (s[lx->pos] == '0' && (s[lx->pos + 1] == 'x' || s[lx->pos + 1] == 'X')) {
        advance(lx, 2);
        while (is_hex(s[lx->pos])) advance(lx, 1);
    } else {
        while (is_digit(s[lx->pos])) advance(lx, 1);
        if (s[lx->pos] == '.' && !is_digit(s[lx->pos + 1]) && s[lx->pos + 1] != '.') {
            advance(lx, 1); /* `2.`: not a float in CAIRN (`2..5` is a range) */
            diag_error(lx->d, lex_span(lx, off, line, col, lx->pos - off), E_SYNTAX,
                       arena_printf(lx->arena, "write %.*s0", lx->pos - off, s + off),
                       "a float literal needs digits after the point");
            push(lx, TOK_ERROR, off, line, col);
            return;
        }
        if (s[lx->pos] == '.' && is_digit(s[lx->pos + 1])) {
            kind = TOK_FLOAT;
            advance(lx, 1);
            while (is_digit(s[lx->pos])) advance(lx, 1);
        }
        if ((s[lx->pos] == 'e' || s[lx->pos] == 'E') &&
            (is_digit(s[lx->pos + 1]) ||
             ((s[lx->pos + 1] == '+' || s[lx->pos + 1] == '-') && is_digit(s[lx->pos + 2])))) {
            kind = TOK_FLOAT;
            advance(lx, 2);
            while (is_digit(s[lx->pos])) advance(lx, 1);
        }
    }
    if (is_ident_start(s[lx->pos]) || is_digit(s[lx->pos])) {
        while (is_ident_start(s[lx->pos]) || is_digit(s[lx->pos])) advance(lx, 1);
        diag_error(lx->d, lex_span(lx, off, line, col, lx->pos - off), E_SYNTAX,
                   "a number is digits (0x for hex), with a point and exponent for a float",
                   "malformed number '%.*s'", lx->pos - off, s + off);
        kind = TOK_ERROR;
    }
    push(lx, kind, off, line, col);
}

static void lex_string(Lexer *lx) {
    int off = lx->pos, line = lx->line, col = lx->col;
    advance(lx, 1);
    while (lx->s[lx->pos] && lx->s[lx->pos] != '"' && lx->s[lx->pos] != '\n') {
        if (lx->s[lx->pos] == '\\' && lx->s[lx->pos + 1] && lx->s[lx->pos + 1] != '\n')
            advance(lx, 1);
        advance(lx, 1);
    }
    if (lx->s[lx->pos] != '"') {
        diag_error(lx->d, lex_span(lx, off, line, col, lx->pos - off), E_SYNTAX,
                   "close the string with \" on the same line", "unterminated string");
        push(lx, TOK_ERROR, off, line, col);
        return;
    }
    advance(lx, 1);
    push(lx, TOK_STRING, off, line, col);
}

static void lex_word(Lexer *lx) {
    int off = lx->pos, line = lx->line, col = lx->col;
    while (is_ident_start(lx->s[lx->pos]) || is_digit(lx->s[lx->pos])) advance(lx, 1);
    size_t n = (size_t)(lx->pos - off);
    TokKind kind = TOK_IDENT;
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (keywords[i].text[0] == lx->s[off] && keyword_len(&keywords[i]) == n &&
            memcmp(keywords[i].text, lx->s + off, n) == 0)
            kind = keywords[i].kind;
    if (kind == TOK_IDENT && n <= 6 && type_kind_from_keyword(lx->s + off, n) != TY_ERROR)
        kind = TOK_SCALAR_TYPE;
    push(lx, kind, off, line, col);
}

static bool lex_punct(Lexer *lx) {
    for (size_t i = 0; i < sizeof puncts / sizeof puncts[0]; i++) {
        if (puncts[i].text[0] != lx->s[lx->pos]) continue;
        size_t n = strlen(puncts[i].text);
        if (strncmp(lx->s + lx->pos, puncts[i].text, n) == 0) {
            int off = lx->pos, line = lx->line, col = lx->col;
            advance(lx, (int)n);
            push(lx, puncts[i].kind, off, line, col);
            return true;
        }
    }
    return false;
}

TokenList lexer_run(Arena *arena, const SourceFile *src, Diags *d) {
    Lexer lx = {.src = src, .s = src->text, .pos = 0, .line = 1, .col = 1, .d = d, .arena = arena};
    for (;;) {
        skip_space(&lx);
        if ((size_t)lx.pos >= src->len) break;
        char c = lx.s[lx.pos];
        if (is_digit(c)) lex_number(&lx);
        else if (is_ident_start(c)) lex_word(&lx);
        else if (c == '"') lex_string(&lx);
        else if (!lex_punct(&lx)) {
            unsigned char u = (unsigned char)c;
            diag_error(
                d, lex_span(&lx, lx.pos, lx.line, lx.col, 1), E_SYNTAX, "remove it",
                u >= 0x20 && u < 0x7f ? "unexpected character '%c'" : "unexpected byte 0x%02x", u);
            advance(&lx, 1);
            push(&lx, TOK_ERROR, lx.pos - 1, lx.line, lx.col - 1);
        }
    }
    push(&lx, TOK_EOF, lx.pos, lx.line, lx.col);
    return (TokenList){lx.toks, lx.len};
}
