/* web_case.c: one case of a run with its cells side by side (/cases/RUN/CASE), grouped by
 * where they ran: on the host (an emulated cell without a device target: the device's
 * work emulated in a host build), emulated for a device target (--target sm_XY
 * --emulate), and on the device. Per observation each cell's values (decoded from its
 * raw bits) and, where its bits differ from the first cell's, how many elements differ,
 * the first, and the distances in ULPs: all from the run's stored comparison
 * (report_run), nothing compared here. */
#include "serve/web_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const KINDS[] = {"host", "emulated", "device"};
#define NKINDS 3

/* Where column COL ("machine/cell_id") ran, from the run's jobs: 0 host, 1 emulated for
 * a device target, 2 the device. */
static int kind_of(const cJSON *view, const char *col) {
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(view, "jobs")) {
        const char *agent = json_str(j, "agent"), *cell_id = json_str(j, "cell_id");
        size_t n = agent ? strlen(agent) : 0;
        if (!agent || !cell_id || strncmp(col, agent, n) || col[n] != '/' ||
            strcmp(col + n + 1, cell_id))
            continue;
        const cJSON *cell = cJSON_GetObjectItemCaseSensitive(j, "cell");
        const char *mode = json_str(cell, "mode");
        if (mode && !strcmp(mode, "device")) return 2;
        return json_str(cell, "target") ? 1 : 0;
    }
    return 0;
}

/* The report's columns in the order shown: host ones, emulated ones, device ones. */
static int ordered_columns(const cJSON *report, const cJSON *view, const char **cols, int *kinds) {
    int n = 0;
    const cJSON *c;
    for (int k = 0; k < NKINDS; k++) {
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(report, "columns")) {
            if (kind_of(view, c->valuestring) == k) kinds[n] = k, cols[n++] = c->valuestring;
        }
    }
    return n;
}

static void header(FILE *out, const char **cols, const int *kinds, int n) {
    fprintf(out, "<table id=side><tr><th rowspan=2>");
    for (int k = 0; k < NKINDS; k++) {
        int span = 0;
        for (int i = 0; i < n; i++) span += kinds[i] == k;
        if (span)
            fprintf(out, "<th class=kind colspan=%d data-kind=%s>%s</th>", span, KINDS[k],
                    KINDS[k]);
    }
    fprintf(out, "</tr><tr>");
    for (int i = 0; i < n; i++) {
        fprintf(out, "<th data-kind=%s>", KINDS[kinds[i]]);
        web_esc(out, cols[i]);
    }
    fprintf(out, "</tr>");
}

/* The case's row of cells: each value, its checks, what its agent filed. */
static void values_row(FILE *out, const cJSON *row, const char **cols, int n) {
    const cJSON *cells = cJSON_GetObjectItemCaseSensitive(row, "cells");
    const char *verdict = json_str(row, "verdict"), *case_path = json_str(row, "case");
    fprintf(out, "<tr><td>outcome");
    for (int i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(cells, cols[i]);
        if (!v) {
            fprintf(out, "<td class=pending>-");
            continue;
        }
        int ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "checks_ok"));
        const char *evidence = json_str(v, "evidence"), *log = json_str(v, "log");
        fprintf(out, "<td class=%s><code>",
                ok ? verdict : results_verdict_name(VERDICT_VIOLATES_CONTRACT));
        web_esc(out, json_str(v, "value"));
        fprintf(out, "</code><br><span class=small>");
        if (evidence && log) {
            fprintf(out, "<a href=\"/files/");
            web_url(out, evidence);
            fprintf(out, "/");
            web_url(out, case_path);
            fprintf(out, "/%s\">%s</a>%s", log, log,
                    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "log_empty")) ? " (empty)"
                                                                                   : "");
        } else {
            fprintf(out, "no log filed");
        }
        fprintf(out, "</span>");
    }
    fprintf(out, "</tr>");
}

static void observation_row(FILE *out, const cJSON *o, const cJSON *decoded, const char **cols,
                            int n) {
    const cJSON *digests = cJSON_GetObjectItemCaseSensitive(o, "digests");
    const cJSON *diffs = cJSON_GetObjectItemCaseSensitive(o, "diffs");
    const char *reference = json_str(o, "reference");
    fprintf(out, "<tr><td>");
    web_esc(out, json_str(o, "observation"));
    fprintf(out, "<br><span class=\"small %s\">", json_str(o, "verdict"));
    web_esc(out, json_str(o, "verdict"));
    fprintf(out, "</span>");
    for (int i = 0; i < n; i++) {
        const char *sha = json_str(digests, cols[i]);
        const cJSON *diff = cJSON_GetObjectItemCaseSensitive(diffs, cols[i]);
        fprintf(out, "<td>");
        if (!sha || !strcmp(sha, "-")) {
            fprintf(out, "-");
            continue;
        }
        fprintf(out, "<code title=\"");
        web_esc(out, sha);
        fprintf(out, "\">%.16s</code><br>", sha);
        web_decoded(out, cJSON_GetObjectItemCaseSensitive(decoded, sha));
        if (diff) {
            fprintf(out, "<div class=diff>");
            web_diff(out, diff);
            fprintf(out, "</div>");
        } else if (reference && !strcmp(reference, cols[i])) {
            fprintf(out, "<div class=same>the reference the others are measured from</div>");
        }
    }
    fprintf(out, "</tr>");
}

/* "RUN/CASE" into the run's id and the case path; 0 when it is not of that form. */
static long split(const char *arg, const char **case_path) {
    const char *slash = strchr(arg, '/');
    char id[24];
    if (!slash || slash - arg >= (long)sizeof id) return 0;
    snprintf(id, sizeof id, "%.*s", (int)(slash - arg), arg);
    *case_path = slash + 1;
    return util_is_safe_relpath(*case_path) ? web_run_id(id) : 0;
}

static const cJSON *find_row(const cJSON *report, const char *case_path) {
    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(report, "cases")) {
        if (!strcmp(json_str(row, "case"), case_path)) return row;
    }
    return NULL;
}

void web_case(Server *s, Request *q, Reply *r) {
    const char *case_path = NULL;
    long run = split(q->arg, &case_path);
    cJSON *view = NULL, *report = run ? report_run(s, run, &view) : NULL;
    const cJSON *row = report ? find_row(report, case_path) : NULL;
    if (!row) {
        reply_error(r, PROTO_E_NOT_FOUND, "no case %s in run %ld", case_path ? case_path : "", run);
        cJSON_Delete(view);
        cJSON_Delete(report);
        return;
    }
    int ncols = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(report, "columns"));
    const char **cols = calloc((size_t)ncols + 1, sizeof *cols);
    int *kinds = calloc((size_t)ncols + 1, sizeof *kinds);
    int n = ordered_columns(report, view, cols, kinds);
    char title[1200], *html = NULL;
    size_t len = 0;
    snprintf(title, sizeof title, "%s in run %ld", case_path, run);
    FILE *out = web_page_open(&html, &len, title, 0);
    fprintf(out, "<p><a href=\"/runs/%ld\">run %ld</a> &middot; <a href=\"/history/", run, run);
    web_url(out, case_path);
    fprintf(out, "\">its history</a></p><p>verdict <span class=\"%s\">", json_str(row, "verdict"));
    web_esc(out, json_str(row, "verdict"));
    fprintf(out, "</span>: ");
    web_esc(out, json_str(row, "promise"));
    if (json_str(row, "detail")) {
        fprintf(out, " (");
        web_esc(out, json_str(row, "detail"));
        fprintf(out, ")");
    }
    fprintf(out, "</p><p class=small>Each observation's values in each cell, decoded from "
                 "its raw bits; where a cell's bits differ from the reference (the first "
                 "cell that has it), how many elements differ, the first with both values "
                 "and their distance in units in the last place, and the largest.</p>");
    header(out, cols, kinds, n);
    values_row(out, row, cols, n);
    const cJSON *o, *decoded = cJSON_GetObjectItemCaseSensitive(row, "decoded");
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(row, "observations")) {
        observation_row(out, o, decoded, cols, n);
    }
    fprintf(out, "</table>");
    if (!cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(row, "observations")))
        fprintf(out, "<p>This case observes nothing.</p>");
    free(cols);
    free(kinds);
    cJSON_Delete(view);
    cJSON_Delete(report);
    web_page_close(out, &html, &len, r);
}
