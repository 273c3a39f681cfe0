/* compare.c: per case a row, per machine/cell a column of digests, and a verdict.
 * A case whose receipts hold only roundings the language fixes must give identical
 * digests (and exit statuses) everywhere; one with an unordered operation may differ
 * where every contract check held. */
#include "compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define V_IDENTICAL "identical"
#define V_ALLOWED "differs: unordered, contracts held"
#define V_DIFFERS "DIFFERS where it must not"
#define V_CHECKS "CHECKS FAILED"

/* One cell's value for a case: a digest over every observation plus the exit status. */
static cJSON *cell_value(const cJSON *c)
{
    cJSON *v = cJSON_CreateObject();
    const cJSON *obs = cJSON_GetObjectItemCaseSensitive(c, "observations"), *o;
    char *text = NULL;
    size_t len = 0;
    FILE *lines = open_memstream(&text, &len);   /* grows with every field, however long */
    cJSON_ArrayForEach(o, obs) {
        const char *name = json_str(o, "name"), *type = json_str(o, "type");
        const char *sha = json_str(o, "sha256");
        fprintf(lines, "%s %s %.0f %s\n", name ? name : "", type ? type : "",
                json_num(o, "count", 0), sha ? sha : "");
    }
    fclose(lines);
    char digest[SHA256_HEX_LEN], shown[64];
    sha256_hex(text, len, digest);
    free(text);
    int build = (int)json_num(c, "build_status", 0), status = (int)json_num(c, "exit_status", 0);
    if (build == -2)   /* the agent's mark for a build it stopped at the job's timeout */
        snprintf(shown, sizeof shown, "build-timeout");
    else if (build != 0)
        snprintf(shown, sizeof shown, "build-failed(%d)", build);
    else
        snprintf(shown, sizeof shown, "%.12s", cJSON_GetArraySize(obs) ? digest : "no-obs");
    if (build == 0 && status != 0) {
        size_t n = strlen(shown);
        snprintf(shown + n, sizeof shown - n, " exit=%d", status);
    }
    cJSON_AddStringToObject(v, "value", shown);
    cJSON_AddNumberToObject(v, "observations", cJSON_GetArraySize(obs));
    int checks_ok = build == 0;
    const cJSON *chk;
    cJSON_ArrayForEach(chk, cJSON_GetObjectItemCaseSensitive(c, "checks")) {
        checks_ok &= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(chk, "ok"));
    }
    cJSON_AddBoolToObject(v, "checks_ok", checks_ok);
    cJSON_AddBoolToObject(v, "unordered",
                          cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "unordered")));
    return v;
}

static const cJSON *find_case(const cJSON *pred, const char *name)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(pred, "cases")) {
        const char *n = json_str(c, "case");
        if (n && !strcmp(n, name))
            return c;
    }
    return NULL;
}

static const char *verdict(const cJSON *cells)
{
    const cJSON *first = NULL, *v;
    int same = 1, checks = 1, unordered = 1, any = 0;
    cJSON_ArrayForEach(v, cells) {
        any = 1;
        if (!first)
            first = v;
        same &= !strcmp(json_str(v, "value"), json_str(first, "value"));
        checks &= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "checks_ok"));
        unordered &= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "unordered"));
    }
    if (!any)
        return "no results";
    if (same)
        return checks ? V_IDENTICAL : V_CHECKS;
    return unordered && checks ? V_ALLOWED : V_DIFFERS;
}

cJSON *compare_results(const cJSON *results, const cJSON *cases)
{
    cJSON *report = cJSON_CreateObject();
    cJSON *columns = cJSON_AddArrayToObject(report, "columns");
    const cJSON *res;
    cJSON_ArrayForEach(res, results) {
        char col[400];
        snprintf(col, sizeof col, "%s/%s", json_str(res, "machine"), json_str(res, "cell_id"));
        cJSON_AddItemToArray(columns, cJSON_CreateString(col));
    }
    cJSON *rows = cJSON_AddArrayToObject(report, "cases");
    int ok = 1;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, "case", c->valuestring);
        cJSON *cells = cJSON_AddObjectToObject(row, "cells");
        const cJSON *col = columns->child;
        cJSON_ArrayForEach(res, results) {
            const cJSON *pc = find_case(cJSON_GetObjectItemCaseSensitive(res, "predicate"),
                                        c->valuestring);
            if (pc)
                cJSON_AddItemToObject(cells, col->valuestring, cell_value(pc));
            col = col->next;
        }
        const char *v = verdict(cells);
        ok &= strcmp(v, V_DIFFERS) != 0 && strcmp(v, V_CHECKS) != 0;
        cJSON_AddStringToObject(row, "verdict", v);
        cJSON_AddItemToArray(rows, row);
    }
    cJSON_AddBoolToObject(report, "ok", ok);
    return report;
}

void compare_print(FILE *out, const cJSON *report)
{
    const cJSON *columns = cJSON_GetObjectItemCaseSensitive(report, "columns"), *col, *row;
    int i = 1;
    fprintf(out, "columns (machine/cell):\n");
    cJSON_ArrayForEach(col, columns)
        fprintf(out, "  [%d] %s\n", i++, col->valuestring);
    fprintf(out, "\n%-36s", "case");
    for (int k = 1; k < i; k++) {
        char head[16];
        snprintf(head, sizeof head, "[%d]", k);
        fprintf(out, " %-19s", head);
    }
    fprintf(out, " verdict\n");
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(report, "cases")) {
        fprintf(out, "%-36s", json_str(row, "case"));
        const cJSON *cells = cJSON_GetObjectItemCaseSensitive(row, "cells");
        cJSON_ArrayForEach(col, columns) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(cells, col->valuestring);
            fprintf(out, " %-19s", v ? json_str(v, "value") : "-");
        }
        fprintf(out, " %s\n", json_str(row, "verdict"));
    }
    fprintf(out, "\n%s\n", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(report, "ok"))
                               ? "compare: every case agrees where the language fixes the bits"
                               : "compare: FAILED: a case differs where it must not, or a check failed");
}
