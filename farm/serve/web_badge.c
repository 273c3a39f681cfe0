/* web_badge.c: /badge/MATRIX (".svg" may follow), a badge for READMEs: the result of the
 * newest run of that matrix whose comparison is stored (its id is on every run's page:
 * the first 16 hex digits of the SHA-256 of the matrix's text). Green "passing" when no
 * case broke a promise, red "failing" when one did, grey "not compared" or "no run". Plain
 * SVG in the generic sans-serif font, fetching nothing. */
#include "serve/web_internal.h"

#include <stdlib.h>
#include <string.h>

#define BADGE_LABEL "cairn farm"

/* Width in pixels of TEXT at 11 px sans-serif, roughly (6.5 px a character). */
static int text_width(const char *text) { return (int)(strlen(text) * 6.5) + 10; }

void web_badge(Server *s, Request *q, Reply *r) {
    char id[64];
    snprintf(id, sizeof id, "%s", q->arg);
    size_t n = strlen(id);
    if (n > 4 && !strcmp(id + n - 4, ".svg")) id[n - 4] = '\0';
    if (strlen(id) != 16 || strspn(id, "0123456789abcdef") != 16) {
        reply_error(r, PROTO_E_NOT_FOUND, "no matrix %s (a badge is named by 16 hex digits)",
                    q->arg);
        return;
    }
    cJSON *latest = db_matrix_latest(s->db, id);
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(latest, "summary");
    const char *status = "no run", *colour = "#9f9f9f";
    if (summary && json_str(summary, "refused")) status = "not compared";
    else if (summary && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(summary, "ok")))
        status = "passing", colour = "#4c1";
    else if (summary) status = "failing", colour = "#e05d44";
    int left = text_width(BADGE_LABEL), right = text_width(status), w = left + right;
    char *svg = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&svg, &len);
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"20\" role=\"img\" "
            "aria-label=\"%s: %s\"><title>%s: %s (run %.0f)</title>"
            "<rect width=\"%d\" height=\"20\" fill=\"#555\"/>"
            "<rect x=\"%d\" width=\"%d\" height=\"20\" fill=\"%s\"/>"
            "<g fill=\"#fff\" font-family=\"sans-serif\" font-size=\"11\" text-anchor=\"middle\">"
            "<text x=\"%d\" y=\"14\">%s</text><text x=\"%d\" y=\"14\">%s</text></g></svg>",
            w, BADGE_LABEL, status, BADGE_LABEL, status, json_num(latest, "run", 0), left, left,
            right, colour, left / 2, BADGE_LABEL, left + right / 2, status);
    fclose(out);
    cJSON_Delete(latest);
    reply_raw(r, svg, len, "image/svg+xml");
}
