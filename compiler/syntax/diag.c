/* diag.c: collecting and printing diagnostics (see diag.h), and the code table. */
#include "syntax/diag.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const CodeInfo code_table[CODE_COUNT] = {
#define CODE(id, text, title, rule, refused, accepted)                                             \
    [id] = {text, title, rule, refused, accepted},
#include "syntax/codes.def"
#undef CODE
};

/* Colour (diags_set_color): rustc's palette, as SGR escape sequences. */
static bool use_color;
#define PAINT(style, text) (use_color ? "\033[" style "m" : ""), text, (use_color ? "\033[0m" : "")
#define RED_BOLD           "1;31"
#define BLUE_BOLD          "1;34"
#define CYAN_BOLD          "1;36"
#define GREEN_BOLD         "1;32"
#define BOLD               "1"

void diags_set_color(bool on) { use_color = on; }

const CodeInfo *diag_code_info(Code c) { return (unsigned)c < CODE_COUNT ? &code_table[c] : NULL; }

Code diag_code_from_text(const char *text) {
    for (int c = 0; c < CODE_COUNT; c++)
        if (strcasecmp(code_table[c].text, text) == 0) return (Code)c;
    return CODE_COUNT;
}

void diags_init(Diags *d, const SourceFile *src) {
    memset(d, 0, sizeof *d);
    d->src = src;
    d->limit = 50;
}

void diags_free(Diags *d) {
    for (int i = 0; i < d->len; i++) {
        free(d->items[i].message);
        free(d->items[i].help);
        free(d->items[i].note);
    }
    free(d->items);
    d->items = NULL;
    if (d->keep) ast_program_free(d->keep);
    d->keep = NULL;
    d->len = d->cap = 0;
}

static char *vformat(const char *fmt, va_list ap) {
    if (!fmt) fmt = ""; /* also quiets gcc's -Wformat-truncation under UBSan */
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0) n = 0;
    char *s = malloc((size_t)n + 1);
    if (!s) abort();
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

static char *dup_or_null(const char *s) {
    if (!s) return NULL;
    char *p = strdup(s);
    if (!p) abort();
    return p;
}

/* Appends g (its code, span, whether deferred) with its message from fmt and a copy of
 * help. */
static void add(Diags *d, Diag g, const char *help, const char *fmt, va_list ap) {
    if (d->len >= d->limit * 4) { /* keep a bounded list; extra ones are only counted */
        d->dropped++;
        return;
    }
    if (d->len == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 16;
        d->items = realloc(d->items, sizeof(Diag) * (size_t)d->cap);
        if (!d->items) abort();
    }
    g.message = vformat(fmt, ap);
    g.help = dup_or_null(help);
    d->items[d->len++] = g;
}

void diag_note(Diags *d, Span span, const char *fmt, ...) {
    if (d->len == 0 || d->items[d->len - 1].note) return; /* its error was dropped */
    Diag *g = &d->items[d->len - 1];
    va_list ap;
    va_start(ap, fmt);
    g->note = vformat(fmt, ap);
    va_end(ap);
    g->note_span = span;
}

void diag_error(Diags *d, Span span, Code code, const char *help, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    add(d, (Diag){.code = code, .span = span}, help, fmt, ap);
    va_end(ap);
}

void diag_deferred(Diags *d, Span span, Code code, const char *help, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    add(d, (Diag){.code = code, .span = span, .deferred = true}, help, fmt, ap);
    va_end(ap);
}

static bool any_real(const Diags *d) {
    for (int i = 0; i < d->len; i++)
        if (!d->items[i].deferred) return true;
    return false;
}

/* Whether diagnostic i is shown: deferred ones only when nothing else went wrong. */
static bool counts(const Diags *d, int i, bool real) { return real ? !d->items[i].deferred : true; }

int diags_count(const Diags *d) {
    bool real = any_real(d);
    int n = 0;
    for (int i = 0; i < d->len; i++) n += counts(d, i, real);
    return n + d->dropped;
}

bool diags_has_errors(const Diags *d) { return d->len > 0 || d->dropped > 0; }

/* The shown diagnostics' indices, sorted by position (stable), at most d->limit. */
static int shown_order(const Diags *d, int *order) {
    bool real = any_real(d);
    int n = 0;
    for (int i = 0; i < d->len; i++)
        if (counts(d, i, real)) order[n++] = i;
    for (int i = 1; i < n; i++) { /* insertion sort: stable, lists are short */
        int x = order[i], j = i - 1;
        while (j >= 0 && d->items[order[j]].span.off > d->items[x].span.off) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = x;
    }
    return n < d->limit ? n : d->limit;
}

int diags_codes(const Diags *d, Code *out, int max) {
    int *order = malloc(sizeof(int) * (size_t)(d->len + 1));
    if (!order) abort();
    int n = shown_order(d, order);
    int k = 0;
    for (int i = 0; i < n && k < max; i++) out[k++] = d->items[order[i]].code;
    free(order);
    return k;
}

/* Prints the source line of span with a caret run under it. */
static void print_source_line(const Diags *d, Span span, FILE *out) {
    const SourceFile *src = d->src;
    if (!src || !src->text || span.line <= 0 || (size_t)span.off > src->len) return;
    const char *text = src->text;
    size_t start = (size_t)span.off, end;
    while (start > 0 && text[start - 1] != '\n') start--;
    for (end = start; end < src->len && text[end] != '\n' && text[end] != '\r'; end++) {}
    int gutter = snprintf(NULL, 0, "%d", span.line);
    char number[16];
    snprintf(number, sizeof number, "%d", span.line);
    fprintf(out, "%*s%s%s%s\n", gutter + 1, "", PAINT(BLUE_BOLD, "|"));
    fprintf(out, "%s%s%s%s%s%s ", PAINT(BLUE_BOLD, number), PAINT(BLUE_BOLD, " |"));
    for (size_t i = start; i < end; i++) {
        unsigned char c = (unsigned char)text[i];
        fputc(c == '\t' ? ' ' : (c < 0x20 || c == 0x7f) ? '?' : c, out);
    }
    fputc('\n', out);
    size_t col = (size_t)span.off - start;
    size_t len = span.len > 0 ? (size_t)span.len : 1;
    if (col + len > end - start) len = end - start > col ? end - start - col : 1;
    fprintf(out, "%*s%s%s%s %*s%s", gutter + 1, "", PAINT(BLUE_BOLD, "|"), (int)col, "",
            use_color ? "\033[" RED_BOLD "m" : "");
    for (size_t i = 0; i < len; i++) fputc('^', out);
    fprintf(out, "%s\n", use_color ? "\033[0m" : "");
}

static void print_one(const Diags *d, const Diag *g, FILE *out) {
    char head[96];
    snprintf(head, sizeof head, "error[%s]", code_table[g->code].text);
    fprintf(out, "%s:%d:%d: %s%s%s: %s%s%s\n", g->span.file ? g->span.file : "<input>",
            g->span.line, g->span.col, PAINT(RED_BOLD, head), PAINT(BOLD, g->message));
    print_source_line(d, g->span, out);
    if (g->note) {
        fprintf(out, "%s:%d:%d: %s%s%s: %s\n", g->note_span.file ? g->note_span.file : "<input>",
                g->note_span.line, g->note_span.col, PAINT(GREEN_BOLD, "note"), g->note);
        print_source_line(d, g->note_span, out);
    }
    if (g->help) fprintf(out, "%s%s%s: %s\n", PAINT(CYAN_BOLD, "help"), g->help);
}

void diags_print(const Diags *d, FILE *out) {
    int *order = malloc(sizeof(int) * (size_t)(d->len + 1));
    if (!order) abort();
    int n = shown_order(d, order);
    for (int i = 0; i < n; i++) print_one(d, &d->items[order[i]], out);
    int total = diags_count(d);
    if (total > n)
        fprintf(out, "... and %d more error%s not shown\n", total - n, total - n == 1 ? "" : "s");
    if (total > 0) {
        char summary[64];
        snprintf(summary, sizeof summary, "%d error%s", total, total == 1 ? "" : "s");
        fprintf(out, "%s%s%s (cairn explain CODE says more)\n", PAINT(BOLD, summary));
    }
    free(order);
}
