/* archive.c: pack a source tree into the cairn-src-1 JSON archive and unpack it again
 * (see archive.h). Paths are checked on the way in and on the way out. */
#include "proto/archive.h"

#include <assert.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

typedef struct {
    char **paths;
    size_t n, cap;
} PathList;

static int skip_dir(const char *name) {
    return name[0] == '.' || !strcmp(name, "build") || !strcmp(name, "bin") ||
           !strcmp(name, "__pycache__");
}

static int list_files(const char *root, const char *rel, PathList *out, Err *e) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s%s%s", root, *rel ? "/" : "", rel);
    DIR *d = opendir(dir);
    if (!d) return err_set(e, "cannot read folder %s", dir);
    struct dirent *ent;
    int rc = 0;
    while (rc == 0 && (ent = readdir(d)) != NULL) {
        if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, "..")) continue;
        char child_rel[4096], child[8192];
        snprintf(child_rel, sizeof child_rel, "%s%s%s", rel, *rel ? "/" : "", ent->d_name);
        snprintf(child, sizeof child, "%s/%s", root, child_rel);
        struct stat st;
        if (lstat(child, &st) != 0 || !util_is_safe_component(ent->d_name))
            continue; /* unreadable entries and odd names stay out of the archive */
        if (S_ISDIR(st.st_mode)) {
            if (!skip_dir(ent->d_name)) rc = list_files(root, child_rel, out, e);
        } else if (S_ISREG(st.st_mode)) {
            if (out->n == out->cap) {
                out->cap = out->cap ? 2 * out->cap : 64;
                out->paths = realloc(out->paths, out->cap * sizeof *out->paths);
            }
            out->paths[out->n++] = strdup(child_rel);
        }
    }
    closedir(d);
    return rc;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static cJSON *file_entry(const char *root, const char *rel, Err *e) {
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    size_t len = 0;
    char *data = fs_read(path, &len, e);
    if (!data) return NULL;
    struct stat st;
    int exec = stat(path, &st) == 0 && (st.st_mode & 0100);
    char digest[SHA256_HEX_LEN];
    sha256_hex(data, len, digest);
    char *b64 = util_b64_encode(data, len);
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "path", rel);
    cJSON_AddNumberToObject(f, "mode", exec ? 0755 : 0644);
    cJSON_AddNumberToObject(f, "size", (double)len);
    cJSON_AddStringToObject(f, "sha256", digest);
    cJSON_AddStringToObject(f, "data", b64);
    free(b64);
    free(data);
    return f;
}

char *archive_pack(const char *root, size_t *len, Err *e) {
    PathList list = {0};
    char *text = NULL;
    if (list_files(root, "", &list, e) == 0) {
        qsort(list.paths, list.n, sizeof *list.paths, cmp_str);
        for (size_t i = 1; i < list.n; i++) /* one entry a path: the archive is canonical */
            assert(strcmp(list.paths[i - 1], list.paths[i]) < 0);
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "format", ARCHIVE_FORMAT);
        cJSON *files = cJSON_AddArrayToObject(doc, "files");
        int ok = 1;
        for (size_t i = 0; ok && i < list.n; i++) {
            cJSON *f = file_entry(root, list.paths[i], e);
            ok = f != NULL;
            if (f) cJSON_AddItemToArray(files, f);
        }
        text = ok ? cJSON_PrintUnformatted(doc) : NULL;
        cJSON_Delete(doc);
    }
    for (size_t i = 0; i < list.n; i++) free(list.paths[i]);
    free(list.paths);
    if (text) *len = strlen(text);
    return text;
}

static int unpack_one(const cJSON *f, const char *dest, Err *e) {
    const char *rel = json_str(f, "path"), *want = json_str(f, "sha256");
    const char *b64 = json_str(f, "data");
    if (!rel || !want || !b64 || !util_is_safe_relpath(rel))
        return err_set(e, "archive entry with a missing or unsafe path");
    size_t len = 0;
    unsigned char *data = util_b64_decode(b64, &len);
    if (!data) return err_set(e, "archive entry %s: bad base64", rel);
    char got[SHA256_HEX_LEN];
    sha256_hex(data, len, got);
    char path[8192], dir[8192];
    snprintf(path, sizeof path, "%s/%s", dest, rel);
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    int rc = strcmp(got, want) != 0   ? err_set(e, "archive entry %s: sha256 mismatch", rel)
             : fs_mkdirs(dir, e) != 0 ? -1
                                      : fs_write_synced(path, data, len, e);
    free(data);
    if (rc == 0 && json_num(f, "mode", 0644) == 0755) chmod(path, 0755);
    return rc;
}

int archive_unpack(const char *data, size_t len, const char *dest, Err *e) {
    cJSON *doc = cJSON_ParseWithLength(data, len);
    const char *format = json_str(doc, "format");
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(doc, "files");
    if (!doc || !format || strcmp(format, ARCHIVE_FORMAT) != 0 || !cJSON_IsArray(files)) {
        cJSON_Delete(doc);
        return err_set(e, "not a %s archive", ARCHIVE_FORMAT);
    }
    int count = 0, rc = fs_mkdirs(dest, e);
    const cJSON *f;
    cJSON_ArrayForEach(f, files) {
        if (rc == 0) rc = unpack_one(f, dest, e);
        count++;
    }
    cJSON_Delete(doc);
    return rc == 0 ? count : -1;
}
