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

#endif
