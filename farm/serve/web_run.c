/* web_run.c: a run's page (who ran what when, the matrix of verdicts with filters, the
 * plot, each case's digests with the values where cells differ, the jobs and their
 * times), the plot alone, and a case's history across runs. */
#include "serve/web_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* --- values and distances (shared with web_case.c) --------------------------------------- */

static void value(FILE *out, const cJSON *v) {
    fprintf(out, "<code title=\"");
    web_esc(out, json_str(v, "bits"));
    fprintf(out, "\">");
    web_esc(out, json_str(v, "value"));
    fprintf(out, "</code>");
}

void web_diff(FILE *out, const cJSON *diff) {
    if (cJSON_IsString(diff)) {
        web_esc(out, diff->valuestring);
        return;
    }
    double n = json_num(diff, "count", 0), differing = json_num(diff, "differing", 0);
    const char *first = json_str(diff, "first_ulp"), *largest = json_str(diff, "largest_ulp");
    if (n == 1) fprintf(out, "differs: ");
    else
        fprintf(out, "%.0f of %.0f differ; first [%.0f]: ", differing, n,
                json_num(diff, "first", 0));
    value(out, cJSON_GetObjectItemCaseSensitive(diff, "a"));
    fprintf(out, " vs ");
    value(out, cJSON_GetObjectItemCaseSensitive(diff, "b"));
    if (first) fprintf(out, ", %s ULP", first);
    else fprintf(out, ", no ULP distance (a NaN and a number)");
    if (differing > 1) {
        if (largest) fprintf(out, "; largest %s ULP", largest);
        else fprintf(out, "; largest: a NaN against a number");
        fprintf(out, " at [%.0f]", json_num(diff, "largest_at", 0));
    }
}

void web_decoded(FILE *out, const cJSON *d) {
    if (!d) {
        fprintf(out, "<span class=small>(raw bits not filed)</span>");
        return;
    }
    double n = json_num(d, "count", 0);
    const cJSON *v;
    fprintf(out, "<span class=small>%s[%.0f]: ", json_str(d, "type"), n);
    int i = 0;
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(d, "head")) {
        fprintf(out, "%s", i++ ? ", " : "");
        value(out, v);
    }
    if (n > i) fprintf(out, ", ...");
    if (n > 1 && cJSON_GetObjectItemCaseSensitive(d, "min")) {
        fprintf(out, "; min ");
        value(out, cJSON_GetObjectItemCaseSensitive(d, "min"));
        fprintf(out, " max ");
        value(out, cJSON_GetObjectItemCaseSensitive(d, "max"));
    }
    if (json_num(d, "nan", 0) + json_num(d, "inf", 0) > 0)
        fprintf(out, "; NaN %.0f, inf %.0f", json_num(d, "nan", 0), json_num(d, "inf", 0));
    fprintf(out, "</span>");
}

/* The largest distance in ULPs any observation of ROW has in column COL from the
 * reference: its text into OUT (CAP bytes), or "" when none differs there. */
static void largest_ulp(const cJSON *row, const char *col, char *out, size_t cap) {
    const cJSON *o;
    uint64_t most = 0;
    int any = 0, nan = 0;
    out[0] = '\0';
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(row, "observations")) {
        const cJSON *d =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "diffs"), col);
        if (!cJSON_IsObject(d)) continue;
        const char *u = json_str(d, "largest_ulp");
        nan |= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "largest_nan"));
        uint64_t v = u ? strtoull(u, NULL, 10) : 0;
        if (!any || v > most) most = v;
        any = 1;
    }
    if (nan) snprintf(out, cap, "differs: a NaN against a number");
    else if (any) snprintf(out, cap, "differs by up to %" PRIu64 " ULP", most);
}

/* --- the run page -------------------------------------------------------------------------- */

/* A link to case CASE of run RUN (its side-by-side page), with TEXT. */
void web_case_link(FILE *out, long run, const char *case_path, const char *text) {
    fprintf(out, "<a href=\"/cases/%ld/", run);
    web_url(out, case_path);
    fprintf(out, "\">");
    web_esc(out, text);
    fprintf(out, "</a>");
}

/* A cell's links to what its agent filed: receipt, log (said so when empty), bundle. */
static void cell_links(FILE *out, const cJSON *v, const char *case_path) {
    const char *evidence = json_str(v, "evidence"), *log = json_str(v, "log");
    if (evidence && json_str(v, "receipt")) {
        fprintf(out, "<a href=\"/files/");
        web_url(out, evidence);
        fprintf(out, "/");
        web_url(out, json_str(v, "receipt"));
        fprintf(out, "\">receipt</a> ");
    }
    if (evidence && log) {
        fprintf(out, "<a href=\"/files/");
        web_url(out, evidence);
        fprintf(out, "/");
        web_url(out, case_path);
        fprintf(out, "/%s\">%s</a>%s ", log, !strcmp(log, "run.log") ? "log" : "build log",
                cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "log_empty")) ? " (empty)" : "");
    }
    if (evidence) {
        fprintf(out, "<a href=\"/files/");
        web_url(out, evidence);
        fprintf(out, "/bundle.dsse.json\">bundle</a>");
    }
}

/* A cell of the matrix: its value, coloured by the case's verdict (a cell whose own checks
 * failed by violates-contract), how far it is from the first cell, its links. */
static void matrix_cell(FILE *out, const cJSON *row, const char *col, long run, int index) {
    const char *case_path = json_str(row, "case"), *verdict = json_str(row, "verdict");
    const cJSON *v =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(row, "cells"), col);
    if (!v) {
        fprintf(out, "<td class=pending>-");
        return;
    }
    int checks_ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "checks_ok"));
    fprintf(out, "<td class=%s><code>",
            checks_ok ? verdict : results_verdict_name(VERDICT_VIOLATES_CONTRACT));
    web_esc(out, json_str(v, "value"));
    char ulp[96];
    largest_ulp(row, col, ulp, sizeof ulp);
    fprintf(out, "</code>");
    if (ulp[0]) fprintf(out, "<br><span class=diff>%s</span>", ulp);
    fprintf(out, "<br><span class=small>");
    web_case_link(out, run, case_path, "values");
    fprintf(out, " <a href=\"#case-%d\">digests</a> ", index);
    cell_links(out, v, case_path);
    fprintf(out, "</span>");
}

/* The filters a page was asked for: a case (part of its path), a machine, a verdict. */
typedef struct {
    const char *case_part, *machine, *verdict;
} Filters;

static Filters filters_of(const Request *q) {
    return (Filters){web_arg(q, "case"), web_arg(q, "machine"), web_arg(q, "verdict")};
}

/* Whether column COL ("machine/cell") is one machine FILTER shows. */
int web_column_shown(const char *col, const char *machine) {
    size_t n = machine ? strlen(machine) : 0;
    return !machine || (!strncmp(col, machine, n) && col[n] == '/');
}

static int row_shown(const cJSON *row, const Filters *f) {
    return (!f->case_part || strstr(json_str(row, "case"), f->case_part)) &&
           (!f->verdict || !strcmp(json_str(row, "verdict"), f->verdict));
}

void web_filter_form(FILE *out, const char *action, const Request *q, const cJSON *machines) {
    Filters f = filters_of(q);
    fprintf(out, "<form method=get action=\"%s\"><label>case <input name=case value=\"", action);
    web_esc(out, f.case_part);
    fprintf(out, "\"></label> <label>machine <select name=machine><option value=\"\">any");
    const cJSON *m;
    cJSON_ArrayForEach(m, machines) {
        fprintf(out, "<option%s>",
                f.machine && !strcmp(f.machine, m->valuestring) ? " selected" : "");
        web_esc(out, m->valuestring);
    }
    fprintf(out, "</select></label> <label>verdict <select name=verdict><option value=\"\">any");
    for (int i = 0; i < VERDICT_COUNT; i++) {
        const char *name = results_verdict_name((Verdict)i);
        fprintf(out, "<option%s>%s", f.verdict && !strcmp(f.verdict, name) ? " selected" : "",
                name);
    }
    fprintf(out, "</select></label> <button>show</button> <a href=\"%s\">all</a></form>", action);
}

/* The machines of a report's columns ("machine/cell"), each once (owned). */
static cJSON *machines_of(const cJSON *columns) {
    cJSON *out = cJSON_CreateArray();
    NameSet seen = {0};
    char **names = calloc((size_t)cJSON_GetArraySize(columns) + 1, sizeof *names);
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, columns) {
        const char *slash = strchr(c->valuestring, '/');
        names[n] = strndup(c->valuestring, slash ? (size_t)(slash - c->valuestring) : 0);
        if (!util_nameset_add(&seen, names[n], 0))
            cJSON_AddItemToArray(out, cJSON_CreateString(names[n]));
        n++;
    }
    util_nameset_free(&seen);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    return out;
}

static void matrix(FILE *out, const cJSON *report, long run, const Filters *f) {
    const cJSON *columns = cJSON_GetObjectItemCaseSensitive(report, "columns"), *col, *row;
    fprintf(out,
            "<h2>Verdicts</h2><p class=small>"
            "<span class=identical>identical</span> <span class=within-bound>within-bound</span> "
            "<span class=no-evidence>no-evidence</span> "
            "<span class=violates-contract>violates-contract</span> "
            "<span class=differs-where-fixed>differs-where-fixed</span>; a cell's distance is "
            "from the first cell that has the case, in units in the last place</p>"
            "<table id=matrix><tr><th>#<th>case");
    cJSON_ArrayForEach(col, columns) {
        if (!web_column_shown(col->valuestring, f->machine)) continue;
        fprintf(out, "<th>");
        web_esc(out, col->valuestring);
    }
    fprintf(out, "<th>verdict<th>error/bound<th>promise checked<th>history</tr>");
    int i = 1;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(report, "cases")) {
        const char *verdict = json_str(row, "verdict"), *name = json_str(row, "case");
        if (row_shown(row, f)) {
            fprintf(out, "<tr data-case=\"");
            web_esc(out, name);
            fprintf(out, "\"><td>%d<td>", i);
            web_case_link(out, run, name, name);
            cJSON_ArrayForEach(col, columns) {
                if (web_column_shown(col->valuestring, f->machine))
                    matrix_cell(out, row, col->valuestring, run, i);
            }
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
        }
        i++;
    }
    fprintf(out, "</table>");
}

/* One observation's digest in column COL, and where it differs, its values and how. */
static void digest_cell(FILE *out, const cJSON *o, const cJSON *decoded, const char *col) {
    const char *d = json_str(cJSON_GetObjectItemCaseSensitive(o, "digests"), col);
    const cJSON *diff =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "diffs"), col);
    const char *reference = json_str(o, "reference");
    char shown[17];
    snprintf(shown, sizeof shown, "%s", d ? d : "-");
    fprintf(out, "<td><code title=\"");
    web_esc(out, d);
    fprintf(out, "\">");
    web_esc(out, shown);
    fprintf(out, "</code>");
    if (diff) {
        fprintf(out, "<div class=diff>");
        web_diff(out, diff);
        fprintf(out, "</div>");
    } else if (reference && !strcmp(reference, col)) {
        fprintf(out, "<div class=same>the reference: ");
        web_decoded(out, d ? cJSON_GetObjectItemCaseSensitive(decoded, d) : NULL);
        fprintf(out, "</div>");
    }
}

/* Per case: each observation's digest in each column, its own verdict, and where cells
 * differ, the values and their distance. */
static void details(FILE *out, const cJSON *report, const Filters *f) {
    const cJSON *columns = cJSON_GetObjectItemCaseSensitive(report, "columns"), *col, *row, *o;
    fprintf(out, "<h2>Digests and differences</h2>");
    if (json_str(report, "values_note")) {
        fprintf(out, "<p class=small>");
        web_esc(out, json_str(report, "values_note"));
        fprintf(out, "</p>");
    }
    int i = 1;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(report, "cases")) {
        if (!row_shown(row, f)) {
            i++;
            continue;
        }
        const cJSON *decoded = cJSON_GetObjectItemCaseSensitive(row, "decoded");
        fprintf(out, "<h3 id=case-%d>%d. ", i, i);
        web_esc(out, json_str(row, "case"));
        fprintf(out, "</h3><table><tr><th>observation");
        cJSON_ArrayForEach(col, columns) {
            if (!web_column_shown(col->valuestring, f->machine)) continue;
            fprintf(out, "<th>");
            web_esc(out, col->valuestring);
        }
        fprintf(out, "<th>verdict</tr>");
        cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(row, "observations")) {
            fprintf(out, "<tr><td>");
            web_esc(out, json_str(o, "observation"));
            cJSON_ArrayForEach(col, columns) {
                if (web_column_shown(col->valuestring, f->machine))
                    digest_cell(out, o, decoded, col->valuestring);
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
    fprintf(out, "<h2>Jobs</h2><table id=jobs><tr><th>job<th>cell<th>state<th>machine<th>attempt"
                 "<th>claimed (UTC)<th>took<th>result<th>progress or failure</tr>");
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(view, "jobs")) {
        fprintf(out, "<tr><td>%.0f<td>", json_num(j, "job", 0));
        web_esc(out, json_str(j, "cell_id"));
        fprintf(out, "<td>");
        web_esc(out, json_str(j, "state"));
        fprintf(out, "<td>");
        web_machine_link(out, json_str(j, "agent"));
        web_job_cells(out, j,
                      json_str(j, "failure") ? json_str(j, "failure") : json_str(j, "progress"));
    }
    fprintf(out, "</table>");
}

/* Who ran what, when: the run's times, submitter, commit, branch, source and matrix. */
static void run_facts(FILE *out, const cJSON *view) {
    const char *matrix = json_str(view, "matrix_id");
    fprintf(out, "<dl id=facts><dt>submitted<dd>");
    web_time(out, json_num(view, "created_at", 0));
    fprintf(out, "<dt>started<dd>");
    web_time(out, json_num(view, "started", 0));
    fprintf(out, " (waited ");
    web_span(out, view, "created_at", "started");
    fprintf(out, ")<dt>finished<dd>");
    web_time(out, json_num(view, "finished", 0));
    fprintf(out, "<dt>took<dd>");
    web_span(out, view, "started", "finished");
    fprintf(out, "<dt>submitter<dd>");
    web_text(out, json_str(view, "submitter"));
    fprintf(out, "<dt>commit<dd><code>");
    web_text(out, json_str(view, "commit"));
    fprintf(out, "</code><dt>branch<dd>");
    web_text(out, json_str(view, "branch"));
    fprintf(out, "<dt>source<dd><code>");
    web_text(out, json_str(view, "source_sha"));
    fprintf(out, "</code>");
    if (matrix) {
        fprintf(out, "<dt>matrix<dd><code>");
        web_esc(out, matrix);
        fprintf(out, "</code> <img src=\"/badge/");
        web_url(out, matrix);
        fprintf(out, "\" alt=\"badge of matrix ");
        web_esc(out, matrix);
        fprintf(out, "\"> <span class=small>in a README: <code>![cairn farm](FARM_URL/badge/");
        web_esc(out, matrix);
        fprintf(out, ")</code></span>");
    }
    fprintf(out, "</dl>");
}

void web_run(Server *s, Request *q, Reply *r) {
    long id = web_run_id(q->arg);
    cJSON *view = NULL, *report = id ? report_run(s, id, &view) : NULL;
    if (!report) {
        reply_error(r, PROTO_E_NOT_FOUND, "no run %s", q->arg);
        return;
    }
    char title[64], action[64], *html = NULL;
    size_t len = 0;
    snprintf(title, sizeof title, "run %ld", id);
    snprintf(action, sizeof action, "/runs/%ld", id);
    FILE *out = web_page_open(&html, &len, title, 10);
    run_facts(out, view);
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(report, "counts");
    fprintf(out, "<p>%s: ",
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(report, "ok"))
                ? "No case breaks a promise"
                : "FAILED: a case breaks a promise");
    compare_print_counts(out, counts, " (proves nothing)");
    fprintf(out, ".</p>");
    if (json_str(report, "refused")) {
        fprintf(out, "<p class=no-evidence>");
        web_esc(out, json_str(report, "refused"));
        fprintf(out, "</p>");
    }
    cJSON *machines = machines_of(cJSON_GetObjectItemCaseSensitive(report, "columns"));
    web_filter_form(out, action, q, machines);
    cJSON_Delete(machines);
    Filters f = filters_of(q);
    matrix(out, report, id, &f);
    fprintf(out,
            "<h2>Error over bound</h2><p class=small>Each cell's worst measured error "
            "as a fraction of its contract's bound (<a href=\"/runs/%ld/plot.svg\">the plot "
            "alone</a>); cases without a measurement have no point.</p>",
            id);
    web_plot_svg(out, report);
    details(out, report, &f);
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
        const cJSON *ratio = cJSON_GetObjectItemCaseSensitive(row, "error_over_bound");
        char *now = fingerprint(row);
        int differs = !last || strcmp(now, last) != 0;
        changed = differs ? id : changed;
        found++;
        fprintf(out, "<tr><td><a href=\"/runs/%ld\">run %ld</a><td class=\"", id, id);
        web_esc(out, json_str(row, "verdict"));
        fprintf(out, "\">");
        web_esc(out, json_str(row, "verdict"));
        if (cJSON_IsNumber(ratio)) fprintf(out, "<td>%.4g<td class=small>", ratio->valuedouble);
        else fprintf(out, "<td>-<td class=small>");
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
                "(a change: another verdict, or another value in some cell; - in "
                "error/bound: none measured). Runs still in progress appear once they "
                "finish.</p>",
                changed, changed);
    else fprintf(out, "<p id=last-change>No finished run has this case.</p>");
    cJSON_Delete(history);
    web_page_close(out, &html, &len, r);
}
