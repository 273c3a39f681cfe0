/* report_values.c: what the cells of a run hold, added to its comparison when it is
 * computed (report.c), so that pages show values, not only digests: each observation's
 * elements decoded from its raw bits (lib/obs.h, the decoding `cairn show` and `cairn
 * diff` use: the shortest decimal that reads back, the bits in hex), its least and
 * greatest value and its NaNs and infinities; and for each cell whose bits differ from
 * the first cell's, how many elements differ, the first of them with both values and
 * their distance in units in the last place, and the largest distance. Each cell's log is
 * named too, and whether it is empty.
 *
 * An observation's raw bits are the blob named by its digest, read only when that cell's
 * own bundle filed it (its manifest names the digest) and only when its size, looked at
 * before reading, is the type's size times the count; every read is charged to the
 * comparison's max_decode_bytes, and once they are spent the report says what was left
 * undecoded. */
#include "serve/serve_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "lib/obs.h"

#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define HEAD         4 /* elements of an array shown from its start */

/* One column of the report: its cell's evidence (core/results.h) and what its bundle
 * filed. */
typedef struct {
    const char *name;
    const Evidence *ev;
    cJSON *manifest; /* owned; NULL when the bundle has none (not filed by content) */
    NameSet filed;   /* digests its bundle filed (pointers into manifest) */
} Column;

typedef struct {
    Server *s;
    long long budget; /* bytes of raw bits still to read */
    int over;         /* something went undecoded: the budget ran out */
} Decoder;

/* The raw bits of observation O (type and count) of column C: NULL when its bundle did
 * not file them, they are not the size they should be, or the budget is spent. */
static unsigned char *load(Decoder *d, const Column *c, const Observation *o, ObsType *t,
                           size_t *n) {
    const char *sha = o->sha256;
    double count = o->count; /* an integer in [0, 10^12], or nothing is read */
    if (!sha || obs_type_parse(o->type, t) != 0 || !(count >= 0 && count <= 1e12) ||
        count != floor(count) || !util_nameset_get(&c->filed, sha, NULL))
        return NULL;
    size_t want = (size_t)count * obs_type_size(*t), len = 0, size = 0;
    /* The size first, from the file: a blob of another size is never read. Before, it
     * was read whole, found the wrong size and charged nothing (one 8 MiB blob named by
     * 4,096 observations each one element longer made a comparison read 32 GiB). */
    int fd = store_open_blob(d->s, sha, &size);
    if (fd < 0) return NULL;
    close(fd);
    if (size != want) return NULL;
    if ((long long)want > d->budget) {
        d->over = 1;
        return NULL;
    }
    d->budget -= (long long)want; /* charged before the read, whatever comes of it */
    unsigned char *bytes = (unsigned char *)store_read_blob(d->s, sha, want, &len);
    if (bytes && len != want) {
        free(bytes);
        return NULL;
    }
    *n = (size_t)count;
    return bytes;
}

static void add_value(cJSON *to, const char *key, ObsType t, uint64_t bits) {
    char text[OBS_TEXT_MAX], hex[OBS_TEXT_MAX];
    obs_format(t, bits, text);
    obs_format_bits(t, bits, hex);
    cJSON *v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "value", text);
    cJSON_AddStringToObject(v, "bits", hex);
    if (key) cJSON_AddItemToObject(to, key, v);
    else cJSON_AddItemToArray(to, v);
}

static void add_u64(cJSON *to, const char *key, uint64_t v) {
    char text[24];
    snprintf(text, sizeof text, "%" PRIu64, v); /* a ULP count may pass 2^53 */
    cJSON_AddStringToObject(to, key, text);
}

/* An array at a glance: its first elements, least and greatest, NaNs and infinities. */
static cJSON *decoded(ObsType t, const unsigned char *bytes, size_t n) {
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "type", obs_type_name(t));
    cJSON_AddNumberToObject(out, "count", (double)n);
    cJSON *head = cJSON_AddArrayToObject(out, "head");
    for (size_t i = 0; i < n && i < HEAD; i++) add_value(head, NULL, t, obs_element(t, bytes, i));
    ObsSummary sum;
    obs_summarize(t, bytes, n, &sum);
    if (sum.has_range) {
        add_value(out, "min", t, sum.min);
        add_value(out, "max", t, sum.max);
    }
    cJSON_AddNumberToObject(out, "nan", (double)sum.nan);
    cJSON_AddNumberToObject(out, "inf", (double)sum.inf);
    return out;
}

/* How B differs from A (one type and count), as `cairn diff` says it. */
static cJSON *difference(ObsType t, const unsigned char *a, const unsigned char *b, size_t n) {
    ObsComparison c;
    obs_compare(t, a, b, n, &c);
    cJSON *out = cJSON_CreateObject();
    cJSON_AddNumberToObject(out, "differing", (double)c.differing);
    cJSON_AddNumberToObject(out, "count", (double)n);
    if (c.differing == 0) return out; /* the same bits under another digest: cannot be */
    cJSON_AddNumberToObject(out, "first", (double)c.first);
    add_value(out, "a", t, c.first_a);
    add_value(out, "b", t, c.first_b);
    if (c.first_nan) cJSON_AddBoolToObject(out, "first_nan", 1);
    else add_u64(out, "first_ulp", c.first_ulp);
    cJSON_AddNumberToObject(out, "largest_at", (double)c.largest_at);
    if (c.largest_nan) cJSON_AddBoolToObject(out, "largest_nan", 1);
    else add_u64(out, "largest_ulp", c.largest_ulp);
    return out;
}

/* One observation row: each column's values once per digest (into DECODED), and each
 * column's difference from the first column that has it (cases: each column's result of
 * the row's case, or NULL). */
static void observation(Decoder *d, Column *cols, int n, const CaseResult *const *cases, cJSON *row,
                        cJSON *decoded_by_sha) {
    const char *key = json_str(row, "observation");
    unsigned char *ref = NULL;
    size_t ref_n = 0;
    ObsType ref_t = OBS_BOOL;
    const char *ref_col = NULL, *ref_sha = NULL;
    cJSON *diffs = NULL;
    for (int i = 0; i < n; i++) {
        const Observation *o = cases[i] && key ? results_observation(cases[i], key) : NULL;
        const char *sha = o ? o->sha256 : NULL;
        if (!sha) continue;
        int known = cJSON_GetObjectItemCaseSensitive(decoded_by_sha, sha) != NULL;
        int differs = ref_sha && strcmp(sha, ref_sha) != 0;
        if (ref_sha && !differs) continue; /* the reference's bits again */
        ObsType t;
        size_t count = 0;
        unsigned char *bytes = load(d, &cols[i], o, &t, &count);
        if (bytes && !known) cJSON_AddItemToObject(decoded_by_sha, sha, decoded(t, bytes, count));
        if (!ref_sha) {
            ref = bytes, ref_n = count, ref_t = t, ref_col = cols[i].name, ref_sha = sha;
            continue;
        }
        if (differs && ref && bytes) {
            if (!diffs) diffs = cJSON_AddObjectToObject(row, "diffs");
            cJSON *diff = ref_t == t && ref_n == count
                              ? difference(t, ref, bytes, count)
                              : cJSON_CreateString("another type or count than the reference");
            cJSON_AddItemToObject(diffs, cols[i].name, diff);
        }
        free(bytes);
    }
    if (diffs) cJSON_AddStringToObject(row, "reference", ref_col);
    free(ref);
}

/* Each cell of ROW: its log's name in the bundle, and whether it is empty. */
static void logs(Column *cols, int n, const char *name, cJSON *row) {
    cJSON *cells = cJSON_GetObjectItemCaseSensitive(row, "cells");
    for (int i = 0; i < n; i++) {
        cJSON *cell = cJSON_GetObjectItemCaseSensitive(cells, cols[i].name);
        const cJSON *files = cJSON_GetObjectItemCaseSensitive(cols[i].manifest, "files");
        if (!cell || !files) continue;
        static const char *const kinds[] = {"run.log", "build.log", NULL};
        for (int k = 0; kinds[k]; k++) {
            char path[1200];
            snprintf(path, sizeof path, "%s/%s", name, kinds[k]);
            const char *sha = json_str(files, path);
            if (!sha) continue;
            cJSON_AddStringToObject(cell, "log", kinds[k]);
            cJSON_AddBoolToObject(cell, "log_empty", !strcmp(sha, EMPTY_SHA256));
            break;
        }
    }
}

/* A column of the report: cell EV's evidence, its manifest and what it filed. */
static void column_open(Server *s, Column *c, const char *name, const Evidence *ev) {
    *c = (Column){.name = name, .ev = ev};
    c->manifest = ev->evidence ? db_evidence_manifest(s->db, ev->evidence) : NULL;
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(c->manifest, "files")) {
        if (cJSON_IsString(f)) util_nameset_add(&c->filed, f->valuestring, 0);
    }
}

void report_values(Server *s, cJSON *report, const cJSON *results) {
    const cJSON *columns = cJSON_GetObjectItemCaseSensitive(report, "columns"), *col;
    int n = cJSON_GetArraySize(columns), i = 0;
    Results r;
    results_parse(results, &r);
    Column *cols = calloc((size_t)n + 1, sizeof *cols);
    const CaseResult **keys = calloc((size_t)n + 1, sizeof *keys);
    if (!cols || !keys || r.incomplete) { /* out of memory: digests only, said so */
        free(cols);
        free(keys);
        results_free(&r);
        cJSON_AddStringToObject(report, "values_note", "values were not decoded: out of memory");
        return;
    }
    col = columns->child;
    for (size_t k = 0; col && k < r.n; col = col->next, k++)
        column_open(s, &cols[i++], col->valuestring, &r.cells[k]);
    Decoder d = {s, s->cfg.max_decode_bytes, 0};
    cJSON *row, *o;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(report, "cases")) {
        const char *name = json_str(row, "case");
        for (int k = 0; k < i; k++) keys[k] = name ? results_case(cols[k].ev, name) : NULL;
        cJSON *decoded_by_sha = cJSON_CreateObject();
        cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(row, "observations")) {
            observation(&d, cols, i, keys, o, decoded_by_sha);
        }
        cJSON_AddItemToObject(row, "decoded", decoded_by_sha);
        logs(cols, i, name, row);
    }
    if (d.over)
        cJSON_AddStringToObject(report, "values_note",
                                "some values were not decoded: the comparison read "
                                "max_decode_bytes of raw bits");
    for (int k = 0; k < i; k++) {
        util_nameset_free(&cols[k].filed);
        cJSON_Delete(cols[k].manifest);
    }
    free(keys);
    free(cols);
    results_free(&r);
}
