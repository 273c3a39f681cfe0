/* check.h: the checker, and the front end's entry points for every command that reads a
 * program (parse, then check; derive grad runs inside the check).
 *
 *   Diags d; diags_init(&d, NULL);
 *   LoadStatus status;
 *   Program *p = cairn_load(path, &d, &status);     // read + parse + check
 *   if (!p) { diags_print(&d, stderr); ... exit 1 (2 when status == LOAD_IO_ERROR) }
 *   ... walk p (ast.h), then ast_program_free(p); diags_free(&d);
 */
#ifndef CAIRN_CHECK_H
#define CAIRN_CHECK_H

#include "syntax/syntax.h"

typedef enum LoadStatus { LOAD_OK, LOAD_REFUSED, LOAD_IO_ERROR } LoadStatus;

/* Reads, parses and checks path. Returns the checked program, or NULL with the reasons
 * in d (and *status, when given, saying whether the file could not be read). d->src is
 * pointed at the program's source so diags_print can show lines; keep the returned
 * program (or call diags_print) before program_free. On refusal the source stays alive
 * inside d until diags_free. */
Program *cairn_load(const char *path, Diags *d, LoadStatus *status);
/* The same from text in memory (path only names it in messages). */
Program *cairn_load_text(const char *path, const char *text, size_t len, Diags *d);

/* The stages, for tools that need only some (cairn_parse: syntax/syntax.h). */
bool cairn_check(Program *p, Diags *d);

#endif
