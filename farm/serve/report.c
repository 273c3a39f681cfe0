/* report.c: each run's comparison (farm/core/compare.c) with every cell's worst
 * error/bound, as the dashboard shows it. While any of a run's jobs is queued or running
 * its comparison may change, and a page about that run compares it on request (one run,
 * within max_compare_observations), kept (Interims) until the run's jobs change: views
 * take turns and compare it once per change, not once each. Once all have finished it never changes again: the
 * reporter thread computes it once and stores it (db_report_put) with a summary and a
 * history row per case, so that no page compares across runs on request. The index
 * reads the summaries, a case's history its rows, a finished run's page its report. */
#include "serve/serve_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"

/* Runs compared and stored per round of the reporter (it goes on while rounds fill). */
#define REPORT_BATCH 16
/* The least time between two rounds of the reporter. */
#define REPORT_GAP_US 100000

/* The worst measured error/bound of each case in each column, from the cells' bounds:
 * {column: {case: ratio}}. A case's first entry in a column is the one kept. */
static cJSON *cell_ratios(const cJSON *results) {
    cJSON *all = cJSON_CreateObject();
    Results r;
    results_parse(results, &r);
    for (size_t i = 0; i < r.n; i++) {
        const Evidence *cell = &r.cells[i];
        cJSON *mine = cJSON_AddObjectToObject(all, cell->column);
        NameSet seen = {0};
        for (size_t k = 0; k < cell->n_cases; k++) {
            const CaseResult *c = &cell->cases[k];
            double worst = -1;
            for (size_t b = 0; b < c->n_bounds; b++)
                worst = c->bounds[b].ratio > worst ? c->bounds[b].ratio : worst;
            if (worst >= 0 && c->path && !util_nameset_add(&seen, c->path, 0))
                cJSON_AddNumberToObject(mine, c->path, isfinite(worst) ? worst : 1e308);
        }
        util_nameset_free(&seen);
    }
    results_free(&r);
    return all;
}

/* Compares run RUN, whose view is VIEW, now; NULL when it could not be made whole (out
 * of memory: compared again later, never stored half made). */
static cJSON *report_compare(Server *s, long run, const cJSON *view) {
    unsigned long failures = util_json_failures();
    cJSON *results = db_run_results(s->db, run);
    cJSON *report = compare_results(results, cJSON_GetObjectItemCaseSensitive(view, "cases"),
                                    (double)s->cfg.max_compare_observations);
    if (report) cJSON_AddItemToObject(report, "ratios", cell_ratios(results));
    if (report && util_json_failures() == failures && !json_str(report, "refused"))
        report_values(s, report, results);
    cJSON_Delete(results);
    if (report && util_json_failures() == failures) return report;
    cJSON_Delete(report);
    return NULL;
}

/* Compares run RUN now (its view into *RUN_VIEW when not NULL); NULL when there is none. */
static cJSON *report_compute(Server *s, long run, cJSON **run_view) {
    cJSON *view = db_run_view(s->db, run);
    cJSON *report = view ? report_compare(s, run, view) : NULL;
    if (run_view) *run_view = view;
    else cJSON_Delete(view);
    return report;
}

/* What an unfinished run's comparison is made of: its jobs' states and filed bundles
 * (not their progress lines or lease times, which each heartbeat moves). */
static void interim_stamp(const cJSON *view, char out[SHA256_HEX_LEN]) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) { /* out of memory: a stamp no kept comparison has, so it is compared anew */
        snprintf(out, SHA256_HEX_LEN, "-");
        return;
    }
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(view, "jobs")) {
        const char *state = json_str(j, "state"), *evidence = json_str(j, "evidence");
        fprintf(f, "%.0f %s %s\n", json_num(j, "job", 0), state ? state : "",
                evidence ? evidence : "");
    }
    fclose(f);
    sha256_hex(text, len, out);
    free(text);
}

/* Run RUN's comparison while it is not stored: the one kept (Interims) when its jobs have
 * not changed since, else compared now and kept. */
static cJSON *report_interim(Server *s, long run, cJSON **run_view) {
    cJSON *view = db_run_view(s->db, run), *report = NULL;
    if (!view) return NULL;
    char stamp[SHA256_HEX_LEN];
    interim_stamp(view, stamp);
    Interims *c = &s->interims;
    pthread_mutex_lock(&c->lock);
    int keep = stamp[0] != '-'; /* a stamp that could not be made matches nothing */
    for (int i = 0; keep && i < INTERIM_RUNS && !report; i++)
        if (c->slot[i].report && c->slot[i].run == run && !strcmp(c->slot[i].stamp, stamp))
            report = cJSON_Duplicate(c->slot[i].report, 1);
    if (!report && (report = report_compare(s, run, view)) != NULL) {
        fprintf(stderr, "farm: compared unfinished run %ld for a page\n", run);
        unsigned at = c->next++ % INTERIM_RUNS;
        cJSON_Delete(c->slot[at].report);
        c->slot[at].run = run;
        memcpy(c->slot[at].stamp, stamp, sizeof stamp);
        c->slot[at].report = cJSON_Duplicate(report, 1);
    }
    pthread_mutex_unlock(&c->lock);
    if (run_view) *run_view = view;
    else cJSON_Delete(view);
    return report;
}

cJSON *report_run(Server *s, long run, cJSON **run_view) {
    cJSON *stored = db_report_get(s->db, run);
    if (!stored) return report_interim(s, run, run_view);
    if (run_view && !(*run_view = db_run_view(s->db, run))) {
        cJSON_Delete(stored); /* cannot happen: runs are never deleted */
        return NULL;
    }
    return stored;
}

/* What the index shows of a run: its verdict counts, ok, and a refusal if any. */
static cJSON *summary_of(const cJSON *report) {
    cJSON *summary = cJSON_CreateObject();
    static const char *const keys[] = {"counts", "ok", "refused", NULL};
    for (int i = 0; keys[i]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(report, keys[i]);
        if (v) cJSON_AddItemToObject(summary, keys[i], cJSON_Duplicate(v, 1));
    }
    return summary;
}

/* A case's row as its history shows it: verdict, worst error/bound and each cell's value. */
static cJSON *history_rows(const cJSON *report) {
    cJSON *rows = cJSON_CreateArray();
    const cJSON *row, *cell;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(report, "cases")) {
        cJSON *h = cJSON_CreateObject(), *cells = cJSON_CreateObject();
        static const char *const keys[] = {"case", "verdict", "error_over_bound", NULL};
        for (int i = 0; keys[i]; i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, keys[i]);
            if (v) cJSON_AddItemToObject(h, keys[i], cJSON_Duplicate(v, 1));
        }
        cJSON_ArrayForEach(cell, cJSON_GetObjectItemCaseSensitive(row, "cells")) {
            cJSON_AddStringToObject(cJSON_AddObjectToObject(cells, cell->string), "value",
                                    json_str(cell, "value") ? json_str(cell, "value") : "");
        }
        cJSON_AddItemToObject(h, "cells", cells);
        cJSON_AddItemToArray(rows, h);
    }
    return rows;
}

/* Compares and stores each finished run that has no stored comparison, a batch at a
 * time; returns how many it stored. */
static int report_settle(Server *s) {
    cJSON *ids = db_runs_unreported(s->db, REPORT_BATCH);
    const cJSON *id;
    int stored = 0;
    cJSON_ArrayForEach(id, ids) {
        cJSON *report = report_compute(s, (long)id->valuedouble, NULL);
        if (!report) continue;
        cJSON *summary = summary_of(report), *rows = history_rows(report);
        char *summary_text = cJSON_PrintUnformatted(summary);
        char *report_text = cJSON_PrintUnformatted(report);
        stored += db_report_put(s->db, (long)id->valuedouble, summary_text, report_text, rows) == 0;
        free(summary_text);
        free(report_text);
        cJSON_Delete(rows);
        cJSON_Delete(summary);
        cJSON_Delete(report);
    }
    int batch = cJSON_GetArraySize(ids);
    cJSON_Delete(ids);
    return batch == REPORT_BATCH && stored == batch ? -1 : stored; /* -1: more may wait */
}

/* The reporter: stores the comparisons of runs that finished, when woken (a job filed,
 * failed or cancelled) and once a second (another coordinator's runs, a restart). */
static void *reporter(void *arg) {
    Server *s = arg;
    pthread_mutex_lock(&s->report_lock);
    for (;;) {
        if (!s->report_due) {
            struct timespec until = timing_cond_deadline(1);
            pthread_cond_timedwait(&s->report_cond, &s->report_lock, &until);
        }
        s->report_due = 0;
        pthread_mutex_unlock(&s->report_lock);
        while (report_settle(s) < 0) {}
        /* Every filing wakes the reporter, and looking for finished runs costs a query
         * over the runs' jobs: the wakes of the next REPORT_GAP_US are answered together
         * (a finished run's comparison is stored at most that much later). */
        usleep(REPORT_GAP_US);
        pthread_mutex_lock(&s->report_lock);
    }
    return NULL;
}

void report_wake(Server *s) {
    pthread_mutex_lock(&s->report_lock);
    s->report_due = 1;
    pthread_cond_signal(&s->report_cond);
    pthread_mutex_unlock(&s->report_lock);
}

void report_start(Server *s) {
    pthread_t t;
    pthread_create(&t, NULL, reporter, s);
    pthread_detach(t);
}
