/* fields.c: every field of an uploaded predicate held to the bounds in fields.h. Two
 * passes: a walk over the whole tree (sizes, depth, finite numbers), then the fields
 * whose meaning the coordinator relies on (statuses, counts, digests, names). */
#include "core/fields.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Any value anywhere: strings, keys and containers bounded, numbers finite. PATH names
 * the value for the error (truncated when deep; the first bad field is what counts). */
static int check_tree(const cJSON *j, const char *path, int depth, Err *e) {
    if (cJSON_IsString(j) && strlen(j->valuestring) > FIELD_MAX_TEXT)
        return err_set(e, "%s: a string longer than %d bytes", path, FIELD_MAX_TEXT);
    if (cJSON_IsNumber(j) && !isfinite(j->valuedouble))
        return err_set(e, "%s: a number that is not finite", path);
    if (!cJSON_IsArray(j) && !cJSON_IsObject(j)) return 0;
    if (depth >= FIELD_MAX_DEPTH)
        return err_set(e, "%s: nested deeper than %d", path, FIELD_MAX_DEPTH);
    if (cJSON_GetArraySize(j) > FIELD_MAX_ITEMS)
        return err_set(e, "%s: more than %d elements", path, FIELD_MAX_ITEMS);
    const cJSON *x;
    int i = 0;
    cJSON_ArrayForEach(x, j) {
        char sub[200];
        if (x->string && strlen(x->string) > FIELD_MAX_NAME)
            return err_set(e, "%s: a key longer than %d bytes", path, FIELD_MAX_NAME);
        if (x->string) snprintf(sub, sizeof sub, "%.150s.%.40s", path, x->string);
        else snprintf(sub, sizeof sub, "%.150s[%d]", path, i);
        i++;
        if (check_tree(x, sub, depth + 1, e) != 0) return -1;
    }
    return 0;
}

/* KEY of OBJ, when present (or when REQUIRED), is a string of 1..MAX bytes. */
static int check_str(const cJSON *obj, const char *key, size_t max, int required, const char *path,
                     Err *e) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v && !required) return 0;
    if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) > max)
        return err_set(e, "%s.%s must be a string of 1 to %zu bytes", path, key, max);
    return 0;
}

static int check_status(const cJSON *obj, const char *key, const char *path, Err *e) {
    long v;
    if (json_int(obj, key, FIELD_STATUS_MIN, FIELD_STATUS_MAX, &v) < 0)
        return err_set(e, "%s.%s must be an integer in [%d, %d]", path, key, FIELD_STATUS_MIN,
                       FIELD_STATUS_MAX);
    return 0;
}

static int check_bool(const cJSON *obj, const char *key, const char *path, Err *e) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v && !cJSON_IsBool(v)) return err_set(e, "%s.%s must be true or false", path, key);
    return 0;
}

static int check_observation(const cJSON *o, const char *path, Err *e) {
    long count;
    if (!cJSON_IsObject(o)) return err_set(e, "%s must be an object", path);
    if (check_str(o, "name", FIELD_MAX_NAME, 1, path, e) != 0 ||
        check_str(o, "type", FIELD_MAX_NAME, 1, path, e) != 0)
        return -1;
    if (json_int(o, "count", 0, FIELD_COUNT_MAX, &count) != 1)
        return err_set(e, "%s.count must be an integer in [0, 2^53]", path);
    if (!sha256_is_hex(json_str(o, "sha256")))
        return err_set(e, "%s.sha256 must be 64 lowercase hex digits", path);
    return 0;
}

static int check_check(const cJSON *c, const char *path, Err *e) {
    if (!cJSON_IsObject(c)) return err_set(e, "%s must be an object", path);
    if (check_str(c, "name", FIELD_MAX_NAME, 1, path, e) != 0 || check_bool(c, "ok", path, e))
        return -1;
    return 0;
}

/* An array of objects under KEY (absent is empty), each held to CHECK. */
static int check_each(const cJSON *obj, const char *key, const char *path, Err *e,
                      int (*check)(const cJSON *, const char *, Err *)) {
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(obj, key), *x;
    if (list && !cJSON_IsArray(list)) return err_set(e, "%s.%s must be an array", path, key);
    int i = 0;
    cJSON_ArrayForEach(x, list) {
        char sub[200];
        snprintf(sub, sizeof sub, "%.150s.%.20s[%d]", path, key, i++);
        if (check(x, sub, e) != 0) return -1;
    }
    return 0;
}

static int check_case(const cJSON *c, const char *path, Err *e) {
    const cJSON *receipt = cJSON_GetObjectItemCaseSensitive(c, "receipt");
    if (!cJSON_IsObject(c)) return err_set(e, "%s must be an object", path);
    if (check_str(c, "case", FIELD_MAX_PATH, 1, path, e) != 0 ||
        check_status(c, "build_status", path, e) != 0 ||
        check_status(c, "exit_status", path, e) != 0 || check_bool(c, "unordered", path, e) != 0)
        return -1;
    if (!cJSON_IsNull(receipt) && check_str(c, "receipt", FIELD_MAX_PATH, 0, path, e) != 0)
        return -1;
    return check_each(c, "observations", path, e, check_observation) ||
                   check_each(c, "checks", path, e, check_check)
               ? -1
               : 0;
}

int fields_check_value(const cJSON *j, const char *path, Err *e) {
    return check_tree(j, path, 0, e);
}

int fields_check_predicate(const cJSON *pred, Err *e) {
    long n;
    if (check_tree(pred, "predicate", 0, e) != 0) return -1;
    if (json_int(pred, "attempt", 0, 1e9, &n) < 0)
        return err_set(e, "predicate.attempt must be an integer in [0, 1e9]");
    if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(pred, "cases")))
        return err_set(e, "predicate.cases must be an array");
    return check_each(pred, "cases", "predicate", e, check_case);
}

size_t fields_json_values(const char *text, size_t len) {
    size_t n = 1;
    int in_string = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\') i++;
            else if (c == '"') in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else {
            n += c == ',' || c == '[' || c == '{';
        }
    }
    return n;
}

int fields_has_nul(const char *text, size_t len) {
    for (size_t i = 0; i + 1 < len; i++) {
        if (text[i] == '\0') return 1;
        if (text[i] != '\\') continue;
        if (text[i + 1] == 'u' && i + 5 < len && !strncmp(text + i + 2, "0000", 4)) return 1;
        i++; /* the escaped character is not itself an escape */
    }
    return len > 0 && text[len - 1] == '\0';
}
