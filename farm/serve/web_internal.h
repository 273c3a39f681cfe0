/* web_internal.h: the dashboard cairn-farm serves to people (docs/farm.md, "Dashboard"): runs and
 * machines at /, a run's matrix of verdicts at /runs/ID with its error/bound plot (SVG,
 * also at /runs/ID/plot.svg), a case's history across runs at /history/CASE, and the
 * filed evidence read-only at /files/evidence/... Read-only, no JavaScript; every string
 * an agent sent is HTML-escaped. */
#ifndef CAIRN_FARM_WEB_INTERNAL_H
#define CAIRN_FARM_WEB_INTERNAL_H

#include <stdio.h>
#include "serve/serve_internal.h"

void web_index(Server *s, Request *q, Reply *r);
void web_run(Server *s, Request *q, Reply *r);
void web_plot(Server *s, Request *q, Reply *r);
void web_history(Server *s, Request *q, Reply *r);
void web_file(Server *s, Request *q, Reply *r);
void web_icon(Server *s, Request *q, Reply *r);

/* Remembers when agent ID was last heard from (any authenticated request). */
void web_agent_seen(long id);

/* Shared by the pages (web.c) and the plot (web_plot.c). */
void web_esc(FILE *out, const char *s); /* HTML-escaped text; NULL prints nothing */
void web_url(FILE *out, const char *s); /* a URL path, percent-encoded */
void web_time(FILE *out, double t);     /* UTC and how long ago */
long web_run_id(const char *arg);       /* a positive run id, or 0 */
/* A page in a memory stream: head (no script, nothing fetched), navigation, title. */
FILE *web_page_open(char **html, size_t *len, const char *title, int refresh);
void web_page_close(FILE *out, char **html, size_t *len, Reply *r);
void web_plot_svg(FILE *out, const cJSON *report);

#endif
