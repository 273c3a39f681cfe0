/* frontend.c: reading a program and running the front end's stages (check/check.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "lib/fs.h"

Program *cairn_load_text(const char *path, const char *text, size_t len, Diags *d) {
    Program *p = cairn_parse(path, text, len, d);
    d->src = &p->src;
    cairn_check(p, d); /* after a syntax error, the items that parsed (docs/language.md) */
    if (diags_has_errors(d)) {
        /* Keep the source readable for diags_print: the refused program's arena stays
         * alive until diags_free (it is small, and a refused program ends the run). */
        d->keep = p;
        return NULL;
    }
    return p;
}

/* Whether every error is E-UNSUPPORTED: the program is checked, and only waits for a
 * later stage of the back end. */
static bool only_pending(const Diags *d) {
    Code codes[64];
    int n = diags_codes(d, codes, 64);
    for (int i = 0; i < n; i++)
        if (codes[i] != E_UNSUPPORTED) return false;
    return n > 0 && n < 64 && d->dropped == 0;
}

Program *cairn_load(const char *path, Diags *d, LoadStatus *status, unsigned flags) {
    size_t len = 0;
    char *text = fs_read(path, &len, NULL);
    if (!text) {
        if (status) *status = LOAD_IO_ERROR;
        return NULL;
    }
    Program *p = cairn_load_text(path, text, len, d);
    free(text);
    LoadStatus st = p ? LOAD_OK : LOAD_REFUSED;
    if (!p && (flags & LOAD_PENDING_OK) && d->keep && only_pending(d)) {
        p = d->keep; /* the caller owns it now; d keeps the reasons, not the program */
        d->keep = NULL;
        st = LOAD_PENDING;
    }
    if (status) *status = st;
    return p;
}
