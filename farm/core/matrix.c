/* matrix.c: matrix expansion and capability matching (see matrix.h). */
#include "core/matrix.h"

#include <stdio.h>
#include <string.h>

#include "proto/evidence.h"

static int string_array(const cJSON *a, int allow_empty) {
    if (!cJSON_IsArray(a) || (!allow_empty && cJSON_GetArraySize(a) == 0)) return 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, a) {
        if (!cJSON_IsString(x)) return 0;
    }
    return 1;
}

static int has_string(const cJSON *a, const char *s) {
    const cJSON *x;
    cJSON_ArrayForEach(x, a) {
        if (cJSON_IsString(x) && !strcmp(x->valuestring, s)) return 1;
    }
    return 0;
}

/* Axis of the matrix, or a one-element default when absent. */
static cJSON *axis(const cJSON *matrix, const char *key, const char *fallback, Err *e) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(matrix, key);
    if (!a) {
        cJSON *d = cJSON_CreateArray();
        cJSON_AddItemToArray(d, cJSON_CreateString(fallback));
        return d;
    }
    if (!string_array(a, 0)) {
        err_set(e, "matrix \"%s\" must be a non-empty array of strings", key);
        return NULL;
    }
    return cJSON_Duplicate(a, 1);
}

/* A device target: "sm_" and two or three digits (what nvcc takes), or NULL for none. */
static int valid_target(const char *t) {
    size_t n = t ? strlen(t) : 0;
    return t && (n == 5 || n == 6) && !strncmp(t, "sm_", 3) && strspn(t + 3, "0123456789") == n - 3;
}

/* One cell of a matrix before its repeats: compiler, sanitizer, mode, device target (or
 * NULL) and machine labels. */
typedef struct {
    const char *cc, *san, *mode, *target;
    const cJSON *labels;
} CellSpec;

static int add_jobs(cJSON *jobs, const CellSpec *spec, int repeats, Err *e) {
    const char *cc = spec->cc, *san = spec->san, *mode = spec->mode, *target = spec->target;
    const cJSON *labels = spec->labels;
    if (target && !valid_target(target))
        return err_set(e, "matrix target \"%.40s\" must be sm_ and two or three digits", target);
    for (int r = 0; r < repeats; r++) {
        cJSON *cj = cJSON_CreateObject();
        cJSON_AddStringToObject(cj, "compiler", cc);
        cJSON_AddStringToObject(cj, "sanitizer", san);
        cJSON_AddStringToObject(cj, "mode", mode);
        cJSON_AddNumberToObject(cj, "repeat", r);
        Cell cell;
        if (evidence_cell_from_json(cj, &cell, e) != 0) {
            cJSON_Delete(cj);
            return -1;
        }
        char id[160];
        evidence_cell_id(&cell, id, sizeof id);
        if (target) { /* a device target names the cell: gcc-none-device-sm_90 */
            size_t n = strlen(id);
            snprintf(id + n, sizeof id - n, "-%s", target);
            cJSON_AddStringToObject(cj, "target", target);
        }
        const cJSON *l;
        cJSON_ArrayForEach(l, labels) {
            if (!util_is_safe_component(l->valuestring)) {
                cJSON_Delete(cj);
                return err_set(e, "machine label \"%s\" has characters outside [A-Za-z0-9._+-]",
                               l->valuestring);
            }
            size_t n = strlen(id);
            snprintf(id + n, sizeof id - n, "+%s", l->valuestring);
        }
        cJSON_AddItemToObject(cj, "labels", cJSON_Duplicate(labels, 1));
        cJSON *job = cJSON_CreateObject();
        cJSON_AddStringToObject(job, "cell_id", id);
        cJSON_AddItemToObject(job, "cell", cj);
        cJSON_AddItemToArray(jobs, job);
    }
    return 0;
}

static int valid_machines(const cJSON *machines, Err *e) {
    if (!cJSON_IsArray(machines) || cJSON_GetArraySize(machines) == 0)
        return err_set(e, "matrix \"machines\" must be a non-empty array of label arrays");
    const cJSON *l;
    cJSON_ArrayForEach(l, machines) {
        if (!string_array(l, 1))
            return err_set(e, "matrix \"machines\" entries must be arrays of labels");
    }
    return 0;
}

/* The explicit form: "cells": [{"compiler", "sanitizer", "mode", "target", "labels"}, ...]. */
static cJSON *expand_cells(const cJSON *cells, int repeat, Err *e) {
    cJSON *jobs = cJSON_CreateArray();
    const cJSON *c;
    int ok = cJSON_IsArray(cells) && cJSON_GetArraySize(cells) > 0;
    if (!ok) err_set(e, "matrix \"cells\" must be a non-empty array of cell objects");
    for (c = ok ? cells->child : NULL; ok && c; c = c->next) {
        const cJSON *labels = cJSON_GetObjectItemCaseSensitive(c, "labels");
        cJSON *none = cJSON_CreateArray();
        const char *san = json_str(c, "sanitizer"), *mode = json_str(c, "mode");
        if (!cJSON_IsObject(c) || !json_str(c, "compiler"))
            ok = err_set(e, "each of matrix \"cells\" needs a \"compiler\"") == 0;
        else if (labels && !string_array(labels, 1))
            ok = err_set(e, "a cell's \"labels\" must be an array of strings") == 0;
        else
            ok = add_jobs(jobs,
                          &(CellSpec){json_str(c, "compiler"), san ? san : "none",
                                      mode ? mode : "emulated", json_str(c, "target"),
                                      labels ? labels : none},
                          repeat, e) == 0;
        cJSON_Delete(none);
    }
    if (!ok) {
        cJSON_Delete(jobs);
        jobs = NULL;
    }
    return jobs;
}

/* Every cell once: a matrix naming a compiler (or any value) twice would make two jobs
 * with one cell id, which the database refuses. JOBS is freed when it fails. */
static cJSON *distinct_cells(cJSON *jobs, Err *e) {
    NameSet seen = {0};
    const cJSON *job;
    cJSON_ArrayForEach(job, jobs) {
        const char *id = json_str(job, "cell_id");
        int added = id ? util_nameset_add(&seen, id, 0) : -1;
        if (added != 0) {
            if (added < 0) err_set(e, "out of memory expanding the matrix");
            else
                err_set(e,
                        "matrix names cell %s twice (a value listed twice in an axis or in "
                        "\"cells\")",
                        id);
            cJSON_Delete(jobs);
            jobs = NULL;
            break;
        }
    }
    util_nameset_free(&seen);
    return jobs;
}

static cJSON *expand(const cJSON *matrix, Err *e);

cJSON *matrix_expand(const cJSON *matrix, Err *e) {
    cJSON *jobs = expand(matrix, e);
    return jobs ? distinct_cells(jobs, e) : NULL;
}

static cJSON *expand(const cJSON *matrix, Err *e) {
    if (!cJSON_IsObject(matrix)) {
        err_set(e, "matrix must be a JSON object");
        return NULL;
    }
    const cJSON *cells = cJSON_GetObjectItemCaseSensitive(matrix, "cells");
    if (cells) {
        double r = json_num(matrix, "repeat", 1);
        if (r < 1 || r > 100000) {
            err_set(e, "matrix \"repeat\" must be between 1 and 100000");
            return NULL;
        }
        return expand_cells(cells, (int)r, e);
    }
    cJSON *ccs = axis(matrix, "compilers", "gcc", e);
    cJSON *sans = ccs ? axis(matrix, "sanitizers", "none", e) : NULL;
    cJSON *modes = sans ? axis(matrix, "modes", "emulated", e) : NULL;
    /* Device targets: each mode's cells once per target ("" is the cell without one). */
    cJSON *targets = modes ? axis(matrix, "targets", "", e) : NULL;
    const cJSON *given = cJSON_GetObjectItemCaseSensitive(matrix, "machines");
    cJSON *machines = given ? cJSON_Duplicate(given, 1) : cJSON_Parse("[[]]");
    double repeat = json_num(matrix, "repeat", 1);
    int ok = targets && valid_machines(machines, e) == 0;
    if (ok && (repeat < 1 || repeat > 100000))
        ok = err_set(e, "matrix \"repeat\" must be between 1 and 100000") == 0;
    cJSON *jobs = cJSON_CreateArray();
    const cJSON *c, *s, *m, *t, *l;
    for (c = ok ? ccs->child : NULL; c; c = c->next)
        for (s = sans->child; s; s = s->next)
            for (m = modes->child; m; m = m->next)
                for (t = targets->child; t; t = t->next)
                    for (l = machines->child; ok && l; l = l->next)
                        ok = add_jobs(jobs,
                                      &(CellSpec){c->valuestring, s->valuestring, m->valuestring,
                                                  *t->valuestring ? t->valuestring : NULL, l},
                                      (int)repeat, e) == 0;
    if (!ok) {
        cJSON_Delete(jobs);
        jobs = NULL;
    }
    cJSON_Delete(machines);
    cJSON_Delete(ccs);
    cJSON_Delete(sans);
    cJSON_Delete(modes);
    cJSON_Delete(targets);
    return jobs;
}

/* Whether one of the agent's GPUs builds for TARGET (any GPU when TARGET is NULL). */
static int runs_target(const cJSON *caps, const char *target) {
    const cJSON *g;
    cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(caps, "gpus")) {
        char mine[32];
        evidence_gpu_target(json_str(g, "compute_cap"), mine, sizeof mine);
        if (!target || !strcmp(mine, target)) return 1;
    }
    return 0;
}

int matrix_cell_fits(const cJSON *caps, const cJSON *cell) {
    const char *cc = json_str(cell, "compiler"), *san = json_str(cell, "sanitizer");
    const char *mode = json_str(cell, "mode");
    const cJSON *compilers = cJSON_GetObjectItemCaseSensitive(caps, "compilers");
    const cJSON *have = cc ? cJSON_GetObjectItemCaseSensitive(compilers, cc) : NULL;
    if (!have) return 0;
    if (san && strcmp(san, "none") != 0 &&
        !has_string(cJSON_GetObjectItemCaseSensitive(have, "sanitizers"), san))
        return 0;
    if (mode && !strcmp(mode, "device") && !runs_target(caps, json_str(cell, "target"))) return 0;
    /* An emulated cell for a target checks the target's features: it needs --emulate. */
    if (json_str(cell, "target") && (!mode || strcmp(mode, "device") != 0) &&
        !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(caps, "cairn_emulate_flag")))
        return 0;
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(caps, "labels"), *l;
    cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(cell, "labels")) {
        if (!cJSON_IsString(l) || !has_string(labels, l->valuestring)) return 0;
    }
    return 1;
}
