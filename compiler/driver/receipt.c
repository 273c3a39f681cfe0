/* receipt.c: renders the build receipt with cJSON (see receipt.h). */
#include "driver/receipt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cJSON *path_and_digest(const char *path, const char *sha256) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", path);
    cJSON_AddStringToObject(o, "sha256", sha256);
    return o;
}

static cJSON *string_array(const StrVec *sv) {
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; sv && i < sv->len; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(sv->items[i]));
    return a;
}

/* "address,undefined" -> ["address", "undefined"]. */
static cJSON *sanitizer_list(const char *sanitize) {
    cJSON *a = cJSON_CreateArray();
    while (sanitize && *sanitize) {
        size_t n = strcspn(sanitize, ",");
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)n, sanitize);
        cJSON_AddItemToArray(a, cJSON_CreateString(name));
        sanitize += n + (sanitize[n] == ',');
    }
    return a;
}

char *receipt_render(const ReceiptInfo *info) {
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "cairn", CAIRN_VERSION);
    cJSON_AddItemToObject(r, "source", path_and_digest(info->source_path, info->source_sha256));
    cJSON_AddItemToObject(r, "output", path_and_digest(info->output_path, info->output_sha256));
    if (info->library) cJSON_AddItemToObject(r, "library", cJSON_Duplicate(info->library, 1));
    cJSON_AddStringToObject(r, "target", info->target ? info->target : "host");
    cJSON_AddBoolToObject(r, "emulate", info->emulate);
    cJSON *cc = cJSON_AddObjectToObject(r, "compiler");
    cJSON_AddStringToObject(cc, "name", info->cc_name);
    cJSON_AddStringToObject(cc, "version", info->cc_version);
    cJSON_AddItemToObject(cc, "flags", string_array(info->flags));
    cJSON_AddItemToObject(cc, "link", string_array(info->link));
    if (info->nvcc_version) {
        cJSON *nv = cJSON_AddObjectToObject(r, "nvcc");
        cJSON_AddStringToObject(nv, "version", info->nvcc_version);
        cJSON_AddItemToObject(nv, "flags", string_array(info->nvcc_flags));
    }
    cJSON_AddItemToObject(r, "sanitizers", sanitizer_list(info->sanitize));
    cJSON_AddStringToObject(r, "runtime_sha256", info->runtime_sha256);
    const char *epoch = getenv("SOURCE_DATE_EPOCH");
    if (epoch && *epoch) cJSON_AddStringToObject(r, "source_date_epoch", epoch);
    cJSON_AddItemToObject(r, "numerics", cJSON_Duplicate(info->numerics, 1));
    if (info->guards) cJSON_AddItemToObject(r, "guards", cJSON_Duplicate(info->guards, 1));
    char *text = cJSON_Print(r);
    cJSON_Delete(r);
    size_t n = strlen(text);
    char *out = malloc(n + 2);
    memcpy(out, text, n);
    memcpy(out + n, "\n", 2);
    cJSON_free(text);
    return out;
}

void receipt_print_guards(FILE *f, const char *source, const cJSON *guards) {
    const cJSON *fn, *g;
    cJSON_ArrayForEach(fn, guards) {
        const cJSON *proved = cJSON_GetObjectItemCaseSensitive(fn, "proved");
        const cJSON *kept = cJSON_GetObjectItemCaseSensitive(fn, "kept");
        fprintf(f, "%s: %s: %d guard%s proved, %d kept\n", source, fn->string,
                cJSON_GetArraySize(proved), cJSON_GetArraySize(proved) == 1 ? "" : "s",
                cJSON_GetArraySize(kept));
        cJSON_ArrayForEach(g, proved) {
            fprintf(f, "  %s  proved  %s (%s)\n",
                    cJSON_GetObjectItemCaseSensitive(g, "at")->valuestring,
                    cJSON_GetObjectItemCaseSensitive(g, "guard")->valuestring,
                    cJSON_GetObjectItemCaseSensitive(g, "by")->valuestring);
        }
        cJSON_ArrayForEach(g, kept)
            fprintf(f, "  %s  kept    (checked where it runs)\n", g->valuestring);
    }
}
