/* web_run.c: a run's page (the matrix of verdicts, the plot, each case's digests and
 * the jobs), the plot alone, and a case's history across runs. */
#include "serve/web_internal.h"

#include <stdlib.h>
#include <string.h>

/* A cell of the matrix: its value, coloured by the case's verdict (a cell whose own checks
 * failed by violates-contract), with links to what its agent filed. */
static void matrix_cell(FILE *out, const cJSON *v, const char *case_path, const char *verdict,
                        int row) {
    if (!v) {
        fprintf(out, "<td class=pending>-");
        return;
    }
    int checks_ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "checks_ok"));
    const char *evidence = json_str(v, "evidence"), *value = json_str(v, "value");
    fprintf(out, "<td class=%s><code>", checks_ok ? verdict : "violates-contract");
    web_esc(out, value);
    fprintf(out, "</code><br><span class=small>");
    if (evidence && json_str(v, "receipt")) {
        fprintf(out, "<a href=\"/files/");
        web_url(out, evidence);
        fprintf(out, "/");
        web_url(out, json_str(v, "receipt"));
        fprintf(out, "\">receipt</a> ");
    }
    fprintf(out, "<a href=\"#case-%d\">digests</a> ", row);
    if (evidence) {
        int built = value && strncmp(value, "build-", 6) != 0;
        fprintf(out, "<a href=\"/files/");
        web_url(out, evidence);
        fprintf(out, "/");
        web_url(out, case_path);
        fprintf(out, "/%s\">log</a> <a href=\"/files/", built ? "run.log" : "build.log");
        web_url(out, evidence);
        fprintf(out, "/bundle.dsse.json\">bundle</a>");
    }
    fprintf(out, "</span>");
}

static void matrix(FILE *out, const cJSON *report) {
    const cJSON *columns = cJSON_GetObjectItemCaseSensitive(report, "columns"), *col, *row;
    fprintf(out,
            "<h2>Verdicts</h2><p class=small>"
            "<span class=identical>identical</span> <span class=within-bound>within-bound</span> "
            "<span class=no-evidence>no-evidence</span> "
            "<span class=violates-contract>violates-contract</span> "
            "<span class=differs-where-fixed>differs-where-fixed</span></p>"
            "<table id=matrix><tr><th>#<th>case");
    cJSON_ArrayForEach(col, columns) {
        fprintf(out, "<th>");
        web_esc(out, col->valuestring);
    }
    fprintf(out, "<th>verdict<th>error/bound<th>promise checked<th>history</tr>");
    int i = 1;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(report, "cases")) {
        const char *verdict = json_str(row, "verdict"), *name = json_str(row, "case");
        const cJSON *cells = cJSON_GetObjectItemCaseSensitive(row, "cells");
        fprintf(out, "<tr data-case=\"");
        web_esc(out, name);
        fprintf(out, "\"><td>%d<td>", i);
        web_esc(out, name);
        cJSON_ArrayForEach(col, columns) matrix_cell(
            out, cJSON_GetObjectItemCaseSensitive(cells, col->valuestring), name, verdict, i);
        fprintf(out, "<td class=\"verdict %s\">", verdict);
        web_esc(out, verdict);
        const cJSON *ratio = cJSON_GetObjectItemCaseSensitive(row, "error_over_bound");
        if (cJSON_IsNumber(ratio)) fprintf(out, "<td>%.4g<td class=small>", ratio->valuedouble);
        else fprintf(out, "<td>-<td class=small>");
        web_esc(out, json_str(row, "promise"));
        if (json_str(row, "detail")) {
            fprintf(out, " (");
            web_esc(out, json_str(row, "detail"));
            fprintf(out, ")");
        }
        fprintf(out, "<td><a href=\"/history/");
        web_url(out, name);
        fprintf(out, "\">history</a></tr>");
        i++;
    }
    fprintf(out, "</table>");
}

/* Per case: each observation's digest in each column, and its own verdict. */
static void details(FILE *out, const cJSON *report) {
    const cJSON *columns = cJSON_GetObjectItemCaseSensitive(report, "columns"), *col, *row, *o;
    fprintf(out, "<h2>Digests</h2>");
    int i = 1;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(report, "cases")) {
        fprintf(out, "<h3 id=case-%d>%d. ", i, i);
        web_esc(out, json_str(row, "case"));
        fprintf(out, "</h3><table><tr><th>observation");
        cJSON_ArrayForEach(col, columns) {
            fprintf(out, "<th>");
            web_esc(out, col->valuestring);
        }
        fprintf(out, "<th>verdict</tr>");
        cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(row, "observations")) {
            const cJSON *digests = cJSON_GetObjectItemCaseSensitive(o, "digests");
            fprintf(out, "<tr><td>");
            web_esc(out, json_str(o, "observation"));
            cJSON_ArrayForEach(col, columns) {
                const char *d = json_str(digests, col->valuestring);
                char shown[17];
                snprintf(shown, sizeof shown, "%s", d ? d : "-");
                fprintf(out, "<td><code title=\"");
                web_esc(out, d);
                fprintf(out, "\">");
                web_esc(out, shown);
                fprintf(out, "</code>");
            }
            fprintf(out, "<td class=\"%s\">", json_str(o, "verdict"));
            web_esc(out, json_str(o, "verdict"));
            fprintf(out, "</tr>");
        }
        fprintf(out, "</table>");
        i++;
    }
}

static void jobs(FILE *out, const cJSON *view) {
    fprintf(out, "<h2>Jobs</h2><table><tr><th>job<th>cell<th>state<th>machine<th>attempt"
                 "<th>progress or failure</tr>");
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(view, "jobs")) {
        fprintf(out, "<tr><td>%.0f<td>", json_num(j, "job", 0));
        web_esc(out, json_str(j, "cell_id"));
        fprintf(out, "<td>");
        web_esc(out, json_str(j, "state"));
        fprintf(out, "<td>");
        web_esc(out, json_str(j, "agent"));
        fprintf(out, "<td>%.0f<td class=small>", json_num(j, "attempt", 0));
        web_esc(out, json_str(j, "failure") ? json_str(j, "failure") : json_str(j, "progress"));
        fprintf(out, "</tr>");
    }
    fprintf(out, "</table>");
}

void web_run(Server *s, Request *q, Reply *r) {
    long id = web_run_id(q->arg);
    cJSON *view = NULL, *report = id ? report_run(s, id, &view) : NULL;
    if (!report) {
        reply_error(r, PROTO_E_NOT_FOUND, "no run %s", q->arg);
        return;
    }
    char title[64], *html = NULL;
    size_t len = 0;
    snprintf(title, sizeof title, "run %ld", id);
    FILE *out = web_page_open(&html, &len, title, 10);
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(report, "counts");
    fprintf(out,
            "<p>%s: %.0f identical, %.0f within-bound, %.0f no-evidence (proves nothing), "
            "%.0f violates-contract, %.0f differs-where-fixed.</p>",
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(report, "ok"))
                ? "No case breaks a promise"
                : "FAILED: a case breaks a promise",
            json_num(counts, "identical", 0), json_num(counts, "within-bound", 0),
            json_num(counts, "no-evidence", 0), json_num(counts, "violates-contract", 0),
            json_num(counts, "differs-where-fixed", 0));
    if (json_str(report, "refused")) {
        fprintf(out, "<p class=no-evidence>");
        web_esc(out, json_str(report, "refused"));
        fprintf(out, "</p>");
    }
    matrix(out, report);
    fprintf(out,
            "<h2>Error over bound</h2><p class=small>Each cell's worst measured error "
            "as a fraction of its contract's bound (<a href=\"/runs/%ld/plot.svg\">the plot "
            "alone</a>); cases without a measurement have no point.</p>",
            id);
    web_plot_svg(out, report);
    details(out, report);
    jobs(out, view);
    cJSON_Delete(view);
    cJSON_Delete(report);
    web_page_close(out, &html, &len, r);
}

void web_plot(Server *s, Request *q, Reply *r) {
    long id = web_run_id(q->arg);
    cJSON *report = id ? report_run(s, id, NULL) : NULL;
    if (!report) {
        reply_error(r, PROTO_E_NOT_FOUND, "no run %s", q->arg);
        return;
    }
    char *svg = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&svg, &len);
    web_plot_svg(out, report);
    fclose(out);
    cJSON_Delete(report);
    reply_raw(r, svg, len, "image/svg+xml");
}

/* --- a case across runs ----------------------------------------------------------------- */

/* What the case gave in a run: its verdict and every cell's value, as one string. */
static char *fingerprint(const cJSON *row) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    fprintf(f, "%s", json_str(row, "verdict") ? json_str(row, "verdict") : "");
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(row, "cells"))
        fprintf(f, "|%s=%s", c->string, json_str(c, "value") ? json_str(c, "value") : "");
    fclose(f);
    return text;
}

/* From the stored history rows (report.c): a run appears once all its jobs finished. */
void web_history(Server *s, Request *q, Reply *r) {
    cJSON *history = db_case_history(s->db, q->arg);
    char *html = NULL, *last = NULL, title[400];
    size_t len = 0;
    snprintf(title, sizeof title, "history of %s", q->arg);
    FILE *out = web_page_open(&html, &len, title, 0);
    fprintf(out, "<table id=history><tr><th>run<th>verdict<th>error/bound<th>cells<th>change</tr>");
    const cJSON *entry, *c;
    long changed = 0;
    int found = 0;
    cJSON_ArrayForEach(entry, history) {
        long id = (long)json_num(entry, "run", 0);
        const cJSON *row = cJSON_GetObjectItemCaseSensitive(entry, "row");
        char *now = fingerprint(row);
        int differs = !last || strcmp(now, last) != 0;
        changed = differs ? id : changed;
        found++;
        fprintf(out, "<tr><td><a href=\"/runs/%ld\">run %ld</a><td class=\"", id, id);
        web_esc(out, json_str(row, "verdict"));
        fprintf(out, "\">");
        web_esc(out, json_str(row, "verdict"));
        fprintf(out, "<td>%.4g<td class=small>", json_num(row, "error_over_bound", -1));
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(row, "cells")) {
            web_esc(out, c->string);
            fprintf(out, ": <code>");
            web_esc(out, json_str(c, "value"));
            fprintf(out, "</code><br>");
        }
        fprintf(out, "<td>%s</tr>", !last ? "first seen" : differs ? "changed" : "");
        free(last);
        last = now;
    }
    free(last);
    fprintf(out, "</table>");
    if (found)
        fprintf(out,
                "<p id=last-change>Last changed in <a href=\"/runs/%ld\">run %ld</a> "
                "(a change: another verdict, or another value in some cell; -1 in "
                "error/bound: none measured). Runs still in progress appear once they "
                "finish.</p>",
                changed, changed);
    else fprintf(out, "<p id=last-change>No finished run has this case.</p>");
    cJSON_Delete(history);
    web_page_close(out, &html, &len, r);
}
