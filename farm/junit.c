/* junit.c: a run's comparison as JUnit XML (junit.h). Every name, message and value in
 * it may come from an agent (case paths, observation names, traps, checks' names) or
 * a submitter, so each goes through junit_escape; numbers are ours. A case's testcase
 * in a cell fails when the case's verdict fails the run (violates-contract,
 * differs-where-fixed) or when that cell did not build it, it trapped or it exited
 * other than 0; it is skipped when the verdict is no-evidence; otherwise it passes. */
#include "junit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"

static const char REPLACEMENT[] = "\xef\xbf\xbd"; /* U+FFFD */

/* The length of the valid UTF-8 sequence XML may hold at P (N bytes left), or 0. */
static size_t xml_char(const unsigned char *p, size_t n) {
    unsigned c = p[0];
    if (c < 0x80) return c >= 0x20 || c == '\t' || c == '\n' || c == '\r';
    size_t len = c >= 0xc2 && c <= 0xdf   ? 2
                 : c >= 0xe0 && c <= 0xef ? 3
                 : c >= 0xf0 && c <= 0xf4 ? 4
                                          : 0;
    if (!len || len > n) return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) || /* overlong, surrogate */
        (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f))
        return 0;
    if (c == 0xef && p[1] == 0xbf && (p[2] == 0xbe || p[2] == 0xbf)) return 0; /* U+FFFE/F */
    return len;
}

void junit_escape(FILE *out, const char *text, size_t len) {
    const unsigned char *p = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        size_t n = xml_char(p + i, len - i);
        if (!n) {
            fputs(REPLACEMENT, out);
            i++;
            continue;
        }
        switch (p[i]) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&apos;", out); break;
        case '\t': fputs("&#9;", out); break;
        case '\n': fputs("&#10;", out); break;
        case '\r': fputs("&#13;", out); break;
        default: fwrite(p + i, 1, n, out);
        }
        i += n;
    }
}

static void esc(FILE *out, const char *s) {
    if (s) junit_escape(out, s, strlen(s));
}

/* A URL path segment or path, percent-encoded (everything but unreserved and '/'). */
static void url(FILE *out, const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-._~/", *p))
            fputc(*p, out);
        else fprintf(out, "%%%02X", *p);
    }
}

static void property(FILE *out, const char *name, const char *value) {
    if (!value) return;
    fprintf(out, "      <property name=\"%s\" value=\"", name);
    esc(out, value);
    fputs("\"/>\n", out);
}

/* One value of a diff ({"value", "bits"}) as "VALUE (BITS)". */
static void diff_value(FILE *out, const cJSON *v) {
    esc(out, json_str(v, "value"));
    fputs(" (", out);
    esc(out, json_str(v, "bits"));
    fputs(")", out);
}

/* The first observation of ROW whose bits differ in column COL: its name, both values
 * and their ULP distance when the report decoded them, else its verdict. */
static void first_difference(FILE *out, const cJSON *row, const char *col) {
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(row, "observations")) {
        Verdict v;
        if (results_verdict_parse(json_str(o, "verdict"), &v) != 0 || v == VERDICT_IDENTICAL)
            continue;
        const cJSON *diffs = cJSON_GetObjectItemCaseSensitive(o, "diffs");
        const char *ref = json_str(o, "reference");
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(diffs, col);
        int mine = d != NULL; /* this column against the reference, or the reference itself */
        if (!d && ref && !strcmp(ref, col) && diffs) d = diffs->child;
        fputs("; observation ", out);
        esc(out, json_str(o, "observation"));
        fputs(": ", out);
        esc(out, json_str(o, "verdict"));
        if (!cJSON_IsObject(d) || !cJSON_GetObjectItemCaseSensitive(d, "a")) return;
        const cJSON *here = cJSON_GetObjectItemCaseSensitive(d, mine ? "b" : "a");
        const cJSON *there = cJSON_GetObjectItemCaseSensitive(d, mine ? "a" : "b");
        fprintf(out, ", element %.0f: ", json_num(d, "first", 0));
        diff_value(out, here);
        fputs(" here, ", out);
        diff_value(out, there);
        fputs(" in ", out);
        esc(out, mine ? ref : d->string);
        if (json_str(d, "first_ulp")) {
            fputs(", ", out);
            esc(out, json_str(d, "first_ulp"));
            fputs(" ulp apart", out);
        } else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "first_nan"))) {
            fputs(", a NaN on one side", out);
        }
        return;
    }
}

/* How case C ran in its own cell, when it did not run cleanly: a failure's type. */
static const char *own_failure(const CaseResult *c) {
    if (!c) return NULL;
    if (c->build_status == -2) return "build-timeout";
    if (c->build_status != 0) return "build-failed";
    if (c->trap) return "trap";
    if (c->exit_status != 0) return "exit-status";
    return NULL;
}

/* One testcase: case ROW in column COL (whose result there is C). */
static void testcase(FILE *out, const JunitInput *in, const cJSON *row, const char *col,
                     const CaseResult *c) {
    const char *name = json_str(row, "case");
    Verdict v = VERDICT_NO_EVIDENCE;
    results_verdict_parse(json_str(row, "verdict"), &v);
    fputs("    <testcase name=\"", out);
    esc(out, name);
    fputs("\" classname=\"", out);
    esc(out, col);
    fprintf(out, "\" time=\"%.3f\">\n", c && c->duration_ms > 0 ? c->duration_ms / 1000 : 0.0);
    const char *own = own_failure(c);
    if (results_verdict_fails(v) || own) {
        fputs("      <failure type=\"", out);
        esc(out, results_verdict_fails(v) ? results_verdict_name(v) : own);
        fputs("\" message=\"", out);
        esc(out, results_verdict_name(v));
        fputs(": ", out);
        esc(out, json_str(row, "promise"));
        if (json_str(row, "detail")) fputs(" -- ", out), esc(out, json_str(row, "detail"));
        if (own) fputs("; in this cell: ", out), esc(out, own);
        if (own && c->trap) fputs(" -- ", out), esc(out, c->trap);
        first_difference(out, row, col);
        fputs("\">", out);
        const cJSON *cell =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(row, "cells"), col);
        esc(out, json_str(cell, "value"));
        fputs("</failure>\n", out);
    } else if (v == VERDICT_NO_EVIDENCE) {
        fputs("      <skipped>no-evidence: ", out);
        esc(out, json_str(row, "detail") ? json_str(row, "detail") : json_str(row, "promise"));
        fputs("</skipped>\n", out);
    }
    if (in->dashboard && in->run > 0) {
        fputs("      <system-out>", out);
        esc(out, in->dashboard);
        fprintf(out, "/cases/%ld/", in->run);
        url(out, name);
        fputs("</system-out>\n", out);
    }
    fputs("    </testcase>\n", out);
}

/* The testsuite of column COL, the Results cell E behind it (or NULL). */
static void testsuite(FILE *out, const JunitInput *in, const char *col, const Evidence *e) {
    int tests = 0, failures = 0, skipped = 0;
    double time = 0;
    const cJSON *row, *rows = cJSON_GetObjectItemCaseSensitive(in->report, "cases");
    cJSON_ArrayForEach(row, rows) {
        if (!cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(row, "cells"), col))
            continue;
        const CaseResult *c = e ? results_case(e, json_str(row, "case")) : NULL;
        Verdict v = VERDICT_NO_EVIDENCE;
        results_verdict_parse(json_str(row, "verdict"), &v);
        tests++;
        failures += results_verdict_fails(v) || own_failure(c);
        skipped += !results_verdict_fails(v) && !own_failure(c) && v == VERDICT_NO_EVIDENCE;
        time += c && c->duration_ms > 0 ? c->duration_ms / 1000 : 0;
    }
    fputs("  <testsuite name=\"", out);
    esc(out, col);
    fprintf(out, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.3f\">\n",
            tests, failures, skipped, time);
    fputs("    <properties>\n", out);
    property(out, "machine", e ? e->machine : NULL);
    property(out, "cell", e ? e->cell_id : NULL);
    property(out, "bundle_sha256", e ? e->bundle_sha256 : NULL);
    property(out, "evidence", e ? e->evidence : NULL);
    if (in->dashboard && in->run > 0) {
        fputs("      <property name=\"dashboard\" value=\"", out);
        esc(out, in->dashboard);
        fprintf(out, "/runs/%ld\"/>\n", in->run);
    } else {
        property(out, "dashboard", "none (compared offline)");
    }
    fputs("    </properties>\n", out);
    cJSON_ArrayForEach(row, rows) {
        if (cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(row, "cells"), col))
            testcase(out, in, row, col, e ? results_case(e, json_str(row, "case")) : NULL);
    }
    fputs("  </testsuite>\n", out);
}

void junit_print(FILE *out, const JunitInput *in) {
    Results r;
    results_parse(in->results, &r);
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"cairn-farm", out);
    if (in->run > 0) fprintf(out, " run %ld", in->run);
    fputs("\">\n", out);
    const cJSON *col;
    cJSON_ArrayForEach(col, cJSON_GetObjectItemCaseSensitive(in->report, "columns")) {
        if (!cJSON_IsString(col)) continue;
        const Evidence *e = NULL;
        for (size_t i = 0; i < r.n && !e; i++)
            if (!strcmp(r.cells[i].column, col->valuestring)) e = &r.cells[i];
        testsuite(out, in, col->valuestring, e);
    }
    fputs("</testsuites>\n", out);
    results_free(&r);
}

int junit_write(const char *path, const JunitInput *in, Err *e) {
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) return err_set(e, "out of memory");
    junit_print(mem, in);
    fclose(mem);
    int rc = fs_write_atomic(path, text, len, e);
    free(text);
    return rc;
}
