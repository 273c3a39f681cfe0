/* web_grid.c: /grid, the cases by recent runs (as a CI dashboard shows commits by jobs):
 * a row per case, a column per run newest first, each cell coloured by the case's verdict
 * in that run and linking to its side-by-side page. A case is flaky when its verdict
 * changes between runs of the same source archive and the same matrix: the cells where it
 * changed are marked, and so is the row. Filters: a part of the case's path, a machine
 * (only runs where it ran the case), a verdict (cases with it in some run shown), flaky
 * cases only. Everything comes from the runs' stored comparisons (db_history_rows): no
 * page compares anything across runs. */
#include "serve/web_internal.h"

#include <stdlib.h>
#include <string.h>

#define GRID_RUNS     30  /* runs shown when the page does not say */
#define GRID_RUNS_MAX 100 /* at most */
#define GRID_CASES    1000

/* One verdict as one mark in a small cell. */
static const char *mark(const char *verdict) {
    static const char *const marks[VERDICT_COUNT] = {"=", "~", "?", "!", "X"};
    Verdict v;
    return results_verdict_parse(verdict, &v) == 0 ? marks[v] : "-";
}

typedef struct {
    long id;
    const cJSON *run; /* its row of db_recent_reported */
} GridRun;

/* Whether the case's row ROW in a run involves MACHINE (one of its cells ran there). */
static int on_machine(const cJSON *row, const char *machine) {
    const cJSON *c;
    if (!machine) return 1;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(row, "cells")) {
        if (web_column_shown(c->string, machine)) return 1;
    }
    return 0;
}

/* Two runs are of one source and one matrix: a verdict that changes between them is not
 * explained by a change of source (or of what was asked for). */
static int same_source(const GridRun *a, const GridRun *b) {
    const char *sa = json_str(a->run, "source_sha"), *sb = json_str(b->run, "source_sha");
    const char *ma = json_str(a->run, "matrix_id"), *mb = json_str(b->run, "matrix_id");
    return sa && sb && ma && mb && !strcmp(sa, sb) && !strcmp(ma, mb);
}

/* One case's cells: ROWS[i] its row in RUNS[i] (NULL: none there); flaky[i] set where
 * its verdict differs from an older run of the same source and matrix. Returns whether
 * any is. */
static int flaky_cells(const GridRun *runs, const cJSON *const *rows, int n, int *flaky) {
    int any = 0;
    for (int i = 0; i < n; i++) {
        flaky[i] = 0;
        for (int j = i + 1; rows[i] && j < n; j++) { /* older runs are further right */
            if (!rows[j] || !same_source(&runs[i], &runs[j])) continue;
            flaky[i] = strcmp(json_str(rows[i], "verdict"), json_str(rows[j], "verdict")) != 0;
            break; /* against the nearest older run of the same source only */
        }
        any |= flaky[i];
    }
    return any;
}

static void grid_head(FILE *out, const GridRun *runs, int n) {
    fprintf(out, "<table class=grid id=grid><tr><th>case");
    for (int i = 0; i < n; i++) {
        const char *commit = json_str(runs[i].run, "commit");
        fprintf(out, "<th><a href=\"/runs/%ld\" title=\"", runs[i].id);
        web_esc(out, json_str(runs[i].run, "branch"));
        fprintf(out, " %s\">%ld</a><br><code>%.7s</code>", commit ? commit : "", runs[i].id,
                commit ? commit : "");
    }
    fprintf(out, "</tr>");
}

/* One case across the runs: its row in each (or NULL), which cells are flaky, and
 * whether any is. */
typedef struct {
    const char *path;
    const cJSON **rows;
    int *flaky;
    int any;
} GridCase;

/* One case's row: its cells in the N RUNS, the row marked when flaky. */
static void grid_row(FILE *out, const GridRun *runs, int n, const GridCase *g) {
    const char *case_path = g->path;
    const cJSON *const *rows = g->rows;
    const int *flaky = g->flaky;
    int any = g->any;
    fprintf(out, "<tr data-case=\"");
    web_esc(out, case_path);
    fprintf(out, "\"%s><td style=\"text-align:left\"><a href=\"/history/",
            any ? " data-flaky=1" : "");
    web_url(out, case_path);
    fprintf(out, "\">");
    web_esc(out, case_path);
    fprintf(out, "</a>%s", any ? " <b class=small>flaky</b>" : "");
    for (int i = 0; i < n; i++) {
        if (!rows[i]) {
            fprintf(out, "<td class=pending>");
            continue;
        }
        const char *verdict = json_str(rows[i], "verdict");
        fprintf(out, "<td class=\"%s%s\" title=\"", verdict, flaky[i] ? " flaky" : "");
        web_esc(out, verdict);
        fprintf(out, "%s\">", flaky[i] ? ": changed with the same source and matrix" : "");
        web_case_link(out, runs[i].id, case_path, mark(verdict));
    }
    fprintf(out, "</tr>");
}

/* Whether the case (its rows in the runs) passes the verdict and flaky filters. */
static int case_shown(const cJSON *const *rows, int n, const char *verdict, int only_flaky,
                      int any_flaky) {
    if (only_flaky && !any_flaky) return 0;
    int seen = 0, has = !verdict;
    for (int i = 0; i < n; i++) {
        seen |= rows[i] != NULL;
        has |= rows[i] && verdict && !strcmp(json_str(rows[i], "verdict"), verdict);
    }
    return seen && has;
}

/* The machines that ran any case of these history rows, each once (owned). */
static cJSON *machines_in(const cJSON *history) {
    cJSON *out = cJSON_CreateArray();
    const cJSON *e, *c;
    cJSON_ArrayForEach(e, history) {
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(
                                  cJSON_GetObjectItemCaseSensitive(e, "row"), "cells")) {
            const char *slash = strchr(c->string, '/');
            char name[200];
            snprintf(name, sizeof name, "%.*s", slash ? (int)(slash - c->string) : 0, c->string);
            const cJSON *m;
            int known = 0;
            cJSON_ArrayForEach(m, out) known |= !strcmp(m->valuestring, name);
            if (!known && cJSON_GetArraySize(out) < 200)
                cJSON_AddItemToArray(out, cJSON_CreateString(name));
        }
    }
    return out;
}

/* The rows of HISTORY (sorted by case, then run) case by case: calls grid_row for each
 * case the filters keep; returns how many it showed. */
static int grid_body(FILE *out, const cJSON *history, const GridRun *runs, int n,
                     const Request *q) {
    const char *part = web_arg(q, "case"), *machine = web_arg(q, "machine");
    const char *verdict = web_arg(q, "verdict"), *flaky_only = web_arg(q, "flaky");
    const cJSON **rows = calloc((size_t)n + 1, sizeof *rows);
    int *flaky = calloc((size_t)n + 1, sizeof *flaky), shown = 0;
    const cJSON *e = history->child;
    while (e && shown < GRID_CASES) {
        const char *case_path = json_str(e, "case");
        for (int i = 0; i < n; i++) rows[i] = NULL;
        for (; e && !strcmp(json_str(e, "case"), case_path); e = e->next) {
            long run = (long)json_num(e, "run", 0);
            const cJSON *row = cJSON_GetObjectItemCaseSensitive(e, "row");
            for (int i = 0; i < n; i++)
                if (runs[i].id == run && on_machine(row, machine)) rows[i] = row;
        }
        if (part && !strstr(case_path, part)) continue;
        int any = flaky_cells(runs, rows, n, flaky);
        if (!case_shown(rows, n, verdict, flaky_only != NULL, any)) continue;
        grid_row(out, runs, n, &(GridCase){case_path, rows, flaky, any});
        shown++;
    }
    free(rows);
    free(flaky);
    return shown;
}

void web_grid(Server *s, Request *q, Reply *r) {
    const char *asked = web_arg(q, "runs");
    long want = asked ? strtol(asked, NULL, 10) : GRID_RUNS;
    if (want < 1 || want > GRID_RUNS_MAX) want = GRID_RUNS;
    cJSON *recent = db_recent_reported(s->db, (int)want);
    int n = cJSON_GetArraySize(recent), i = 0;
    GridRun *runs = calloc((size_t)n + 1, sizeof *runs);
    const cJSON *run;
    cJSON_ArrayForEach(run, recent) runs[i++] = (GridRun){(long)json_num(run, "id", 0), run};
    cJSON *history = n ? db_history_rows(s->db, runs[n - 1].id, runs[0].id) : cJSON_CreateArray();
    char *html = NULL;
    size_t len = 0;
    FILE *out = web_page_open(&html, &len, "cases by run", 0);
    fprintf(out,
            "<p class=small>Each case's verdict in the %d newest runs whose comparison is "
            "stored, newest first: = identical, ~ within-bound, ? no-evidence, ! "
            "violates-contract, X differs-where-fixed. A case is <b>flaky</b> when its "
            "verdict changed between runs of the same source archive and matrix; "
            "the cells where it changed are outlined.</p>",
            n);
    cJSON *machines = machines_in(history);
    web_filter_form(out, "/grid", q, machines);
    cJSON_Delete(machines);
    fprintf(out, "<p class=small><a href=\"/grid?flaky=1\">flaky cases only</a></p>");
    grid_head(out, runs, n);
    int shown = grid_body(out, history, runs, n, q);
    fprintf(out, "</table><p id=shown class=small>%d case(s) shown%s.</p>", shown,
            shown >= GRID_CASES ? " (the first ones: filter by case for the others)" : "");
    free(runs);
    cJSON_Delete(history);
    cJSON_Delete(recent);
    web_page_close(out, &html, &len, r);
}
