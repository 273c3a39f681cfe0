/* syntax.h: CAIRN's syntax, the layer every pass builds on: types (types.h), the tree
 * (ast.h), diagnostics and the code table (diag.h, codes.def), constant layouts
 * (layout.h), the parser and the printer. Passes above include this header only.
 *
 *   Diags d; diags_init(&d, NULL);
 *   Program *p = cairn_parse(path, text, len, &d);   // the tree, unchecked
 *   ... check/check.h checks it; ast_program_free(p); diags_free(&d);
 */
#ifndef CAIRN_SYNTAX_H
#define CAIRN_SYNTAX_H

#include <stddef.h>

#include "syntax/types.h"
#include "syntax/ast.h"
#include "syntax/diag.h"
#include "syntax/layout.h"

/* Parses text (len bytes; path only names it in messages) into a Program. Syntax
 * errors go to d; the tree returned is what could be read (check it only when d holds
 * no error). */
Program *cairn_parse(const char *path, const char *text, size_t len, Diags *d);

/* Pretty printer (print.c): the program as CAIRN source that parses back to the same
 * tree. Returns a malloc'ed string. */
char *cairn_print_program(const Program *p);
char *cairn_print_expr(const Expr *e);
char *cairn_print_type(const Type *t);
/* The checked tree, one node a line with its type, what each name and call resolves to
 * and each placement the checker decided (dump.c; `cairn check --dump`). Malloc'ed. */
char *cairn_dump_program(const Program *p);

/* ast.h's contract, checked between passes (ast_verify.c, as QBE's ssacheck): the
 * checker runs it after `derive grad` has added functions (AST_SHAPE: every node has the
 * children its kind requires) and on the program it accepts (AST_CHECKED: also every
 * expression typed, every name, binder and declaration resolved, every call's target
 * and arity, scans void, locals numbered within their function, cooperative regions on
 * the device). */
typedef enum AstStage { AST_SHAPE, AST_CHECKED } AstStage;
/* NULL when p keeps the contract of STAGE; else the first violation, in words, with its
 * place in *where (when given). */
const char *ast_verify(const Program *p, AstStage stage, Span *where);
/* The same as a check between passes: a violation is a compiler bug, reported on stderr
 * ("after AFTER, FILE:LINE:COL: ...") before abort(). */
void ast_verify_or_die(const Program *p, AstStage stage, const char *after);

#endif
