/* diag.h: diagnostics, collected as values and printed in one place.
 *
 * A pass reports with diag_error(); nothing is printed until diags_print(). Each
 * diagnostic prints as
 *     file:line:col: error[E-CODE]: message
 *      12 |   let x = a + b;
 *         |           ^^^^^
 *     help: what to write instead
 * A note (diag_note) adds a second place: "file:3:11: note: the block opened here" and
 * its line. The code table (codes.def) is shared with `cairn explain`, so a code the checker uses
 * always has an explanation. A "deferred" diagnostic (E-UNSUPPORTED for a construct a
 * later stage will give meaning to) is shown only when no other error was found, so a
 * program is refused for its real mistake first and for what is not built yet last.
 */
#ifndef CAIRN_DIAG_H
#define CAIRN_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "syntax/ast.h"

typedef enum Code {
#define CODE(id, text, title, rule, refused, accepted) id,
#include "syntax/codes.def"
#undef CODE
    CODE_COUNT
} Code;

typedef struct CodeInfo {
    const char *text;     /* "E-CAST" */
    const char *title;    /* one line */
    const char *rule;     /* the rule, a paragraph */
    const char *refused;  /* a program refused with this code */
    const char *accepted; /* the same program, fixed */
} CodeInfo;

const CodeInfo *diag_code_info(Code c);
/* Looks a code up by its text ("E-CAST", case-insensitive); CODE_COUNT if unknown. */
Code diag_code_from_text(const char *text);

typedef struct Diag {
    Code code;
    Span span;
    char *message;
    char *help; /* NULL when none */
    bool deferred;
    Span note_span; /* a second place that explains the first (diag_note) */
    char *note;     /* NULL when none */
} Diag;

typedef struct Diags {
    const SourceFile *src; /* for the source line under each message; may be NULL */
    Diag *items;
    int len, cap;
    int limit; /* errors kept at most (default 50); more are counted */
    int dropped;
    struct Program
        *keep; /* a refused program whose source the messages show; freed by diags_free */
} Diags;

void diags_init(Diags *d, const SourceFile *src);
void diags_free(Diags *d);
/* Reports an error at span. help may be NULL. */
void diag_error(Diags *d, Span span, Code code, const char *help, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Adds a note with its own span to the diagnostic reported last, printed under it as
 *     file:line:col: note: the block opened here
 * with that line and a caret (rustc's second span). */
void diag_note(Diags *d, Span span, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Reports a construct a later stage will give meaning to: shown only when alone. */
void diag_deferred(Diags *d, Span span, Code code, const char *help, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Errors that count: the non-deferred ones, or the deferred ones when those are all. */
int diags_count(const Diags *d);
bool diags_has_errors(const Diags *d);
/* Whether diags_print paints with ANSI colours (rustc's: the error and carets red, the
 * gutter blue, help cyan). Off until a command turns it on (main.c: --color, NO_COLOR). */
void diags_set_color(bool on);
/* Prints what counts, sorted by position, then a summary line. */
void diags_print(const Diags *d, FILE *out);
/* The codes that count, in printing order (for tests and tools); returns how many. */
int diags_codes(const Diags *d, Code *out, int max);

#endif
