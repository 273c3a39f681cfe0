/* json.c: typed access to cJSON values and JSON files (see json.h). */
#include "lib/json.h"

#include <math.h>
#include <stdlib.h>

#include "lib/fs.h"

const char *json_str(const cJSON *obj, const char *key) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}

double json_num(const cJSON *obj, const char *key, double fallback) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(item) ? item->valuedouble : fallback;
}

int json_int(const cJSON *obj, const char *key, double lo, double hi, long *out) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!item) return 0;
    double v = cJSON_IsNumber(item) ? item->valuedouble : NAN;
    if (!(v >= lo && v <= hi) || v != floor(v)) return -1; /* NaN, infinities and 1e300 */
    *out = (long)v;
    return 1;
}

cJSON *json_parse_file(const char *path, Err *e) {
    size_t len = 0;
    char *text = fs_read(path, &len, e);
    if (!text) return NULL;
    cJSON *json = cJSON_ParseWithLength(text, len);
    free(text);
    if (!json) err_set(e, "%s: not valid JSON", path);
    return json;
}
