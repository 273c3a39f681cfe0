/* web_internal.h: the dashboard cairn-farm serves to people (docs/farm.md, "Dashboard"):
 * runs and machines at / (web.c), a run's matrix of verdicts at /runs/ID with its
 * error/bound plot (SVG, also at /runs/ID/plot.svg) and a case's history across runs at
 * /history/CASE (web_run.c), one case's cells side by side with their values at
 * /cases/RUN/CASE (web_case.c), the cases by recent runs at /grid (web_grid.c), a machine
 * at /machines/NAME (web_machine.c), a matrix's badge at /badge/MATRIX (web_badge.c), and
 * the filed evidence read-only at /files/evidence/... Read-only, no JavaScript; every
 * string an agent or a submitter sent is HTML-escaped. */
#ifndef CAIRN_FARM_WEB_INTERNAL_H
#define CAIRN_FARM_WEB_INTERNAL_H

#include <stdio.h>

#include "core/core.h"
#include "serve/serve_internal.h"

void web_index(Server *s, Request *q, Reply *r);
void web_run(Server *s, Request *q, Reply *r);
void web_plot(Server *s, Request *q, Reply *r);
void web_history(Server *s, Request *q, Reply *r);
void web_file(Server *s, Request *q, Reply *r);
void web_icon(Server *s, Request *q, Reply *r);
void web_case(Server *s, Request *q, Reply *r);
void web_grid(Server *s, Request *q, Reply *r);
void web_machine(Server *s, Request *q, Reply *r);
void web_badge(Server *s, Request *q, Reply *r);

/* Remembers when agent ID was last heard from (any authenticated request). */
void web_agent_seen(Server *s, long id);

/* Shared by the pages (web.c) and the plot (web_plot.c). */
void web_esc(FILE *out, const char *s); /* HTML-escaped text; NULL prints nothing */
void web_url(FILE *out, const char *s); /* a URL path, percent-encoded */
void web_time(FILE *out, double t);     /* UTC and how long ago; "-" for none (0) */
void web_utc(FILE *out, double t);      /* UTC alone; "-" for none */
void web_duration(FILE *out, double s); /* "3.20 s", "4 min 2 s"...; "-" when negative */
/* The span from ROW's number FROM to its number TO; "-" when either is missing. */
void web_span(FILE *out, const cJSON *row, const char *from, const char *to);
/* A job's row from its attempt on: claimed, how long it took, its result, NOTE (a
 * failure or progress), and the row's end. */
void web_job_cells(FILE *out, const cJSON *job, const char *note);
void web_text(FILE *out, const char *s);              /* escaped, or "-" for none or "" */
void web_machine_link(FILE *out, const char *n);      /* a link to the machine's page */
void web_gpus(FILE *out, const cJSON *caps);          /* an agent's GPUs, driver and CUDA */
void web_compilers(FILE *out, const cJSON *caps);     /* its compilers and their sanitizers */
int web_labels(FILE *out, const cJSON *caps);         /* its labels; returns how many */
double web_last_heard(Server *s, const cJSON *agent); /* when the agent was last heard from */
long web_run_id(const char *arg);                     /* a positive run id, or 0 */
/* URL argument KEY of Q (a page's filter), or NULL when absent or empty. */
const char *web_arg(const Request *q, const char *key);
/* A page in a memory stream: head (no script, nothing fetched), navigation, title. */
FILE *web_page_open(char **html, size_t *len, const char *title, int refresh);
void web_page_close(FILE *out, char **html, size_t *len, Reply *r);
void web_plot_svg(FILE *out, const cJSON *report);
/* Values and differences as the report keeps them (report_values.c), in words: one
 * observation's decoded values ("f32[1000]: 0.5, 1.0, ...; min ... max ..."), and how a
 * cell's bits differ from the reference's (as `cairn diff` says it). web_run.c. */
void web_decoded(FILE *out, const cJSON *decoded);
void web_diff(FILE *out, const cJSON *diff);
/* A link to the side-by-side page of case CASE_PATH in run RUN, reading TEXT. */
void web_case_link(FILE *out, long run, const char *case_path, const char *text);
/* The form of a page's filters (case, machine among MACHINES, verdict) that GETs ACTION,
 * and whether column COL ("machine/cell") is one the machine filter shows. */
void web_filter_form(FILE *out, const char *action, const Request *q, const cJSON *machines);
int web_column_shown(const char *col, const char *machine);

#endif
