/* lexer.h: CAIRN source text to tokens. The lexer runs once over the whole file into an
 * array the parser walks; a bad character or an unterminated string or comment is
 * reported (E-SYNTAX) and skipped, so lexing always ends with TOK_EOF. */
#ifndef CAIRN_LEXER_H
#define CAIRN_LEXER_H

#include "syntax/ast.h"
#include "syntax/diag.h"

typedef enum TokKind {
    TOK_EOF,
    TOK_ERROR /* already reported by the lexer */,
    TOK_IDENT,
    TOK_INT,
    TOK_FLOAT,
    TOK_STRING,
    /* keywords */
    TOK_FN,
    TOK_CONST,
    TOK_LAYOUT,
    TOK_DERIVE,
    TOK_LET,
    TOK_MUT,
    TOK_IF,
    TOK_ELSE,
    TOK_FOR,
    TOK_IN,
    TOK_RETURN,
    TOK_PARALLEL,
    TOK_BLOCKS,
    TOK_THREADS,
    TOK_SHARED,
    TOK_BUFFER,
    TOK_BARRIER,
    TOK_REDUCE,
    TOK_SCAN,
    TOK_YIELD,
    TOK_INTO,
    TOK_ZEROED,
    TOK_TRUE,
    TOK_FALSE,
    TOK_IMPLEMENTS,
    TOK_PUB,
    TOK_RO,
    TOK_RW,
    TOK_SCALAR_TYPE,   /* i8 ... f8e5m2, bool */
    TOK_FRAGMENT_TYPE, /* WmmaA ... TmemAcc */
    /* punctuation */
    TOK_LPAREN,
    TOK_RPAREN,
    TOK_LBRACKET,
    TOK_RBRACKET,
    TOK_LBRACE,
    TOK_RBRACE,
    TOK_LT,
    TOK_GT,
    TOK_LE,
    TOK_GE,
    TOK_EQEQ,
    TOK_NE,
    TOK_COMMA,
    TOK_SEMI,
    TOK_COLON,
    TOK_DOT,
    TOK_DOTDOT,
    TOK_ARROW,
    TOK_EQ,
    TOK_PLUS,
    TOK_MINUS,
    TOK_STAR,
    TOK_SLASH,
    TOK_PERCENT,
    TOK_PLUSEQ,
    TOK_MINUSEQ,
    TOK_STAREQ,
    TOK_SLASHEQ,
    TOK_ANDAND,
    TOK_OROR,
    TOK_BANG,
    TOK_AMP,
    TOK_PIPE,
    TOK_CARET,
    TOK_SHL,
    TOK_SHR,
    TOK_AT,
    TOK_KIND_COUNT
} TokKind;

typedef struct Token {
    TokKind kind;
    int off, len;
    int line, col;
} Token;

typedef struct TokenList {
    Token *toks;
    int len;
} TokenList;

/* Lexes src (NUL-terminated, len bytes) into a malloc'ed token array (free(toks)). */
TokenList lexer_run(Arena *arena, const SourceFile *src, Diags *d);
/* How a kind reads in a message: "'('", "identifier", "'fn'". */
const char *lexer_kind_text(TokKind k);

#endif
