/* util.c: base64 (OpenSSL's), safe path names and the name set, shared by the
 * coordinator and the agent (see util.h). */
#include "proto/util.h"

#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/evp.h>

char *util_b64_encode(const void *data, size_t len) {
    assert(len <= (size_t)INT_MAX / 4 * 3); /* EVP_EncodeBlock counts in int */
    char *out = malloc(4 * ((len + 2) / 3) + 1);
    if (out) {
        int n = EVP_EncodeBlock((unsigned char *)out, data, (int)len);
        assert((size_t)n == 4 * ((len + 2) / 3)); /* every 3 bytes 4 characters, padded */
        (void)n;
    }
    return out;
}

unsigned char *util_b64_decode(const char *text, size_t *len) {
    size_t n = strlen(text);
    if (n % 4 != 0 || n > INT_MAX) return NULL;
    unsigned char *out = malloc(n / 4 * 3 + 1);
    if (!out) return NULL;
    int got = n ? EVP_DecodeBlock(out, (const unsigned char *)text, (int)n) : 0;
    if (got < 0) {
        free(out);
        return NULL;
    }
    /* EVP_DecodeBlock counts padding as data: take it back off. */
    if (n >= 1 && text[n - 1] == '=') got--;
    if (n >= 2 && text[n - 2] == '=') got--;
    /* It is also lenient (blanks, stray bits after the last byte): only the canonical
     * spelling of the bytes is accepted, so one bundle has one encoding. */
    char *again = got >= 0 ? util_b64_encode(out, (size_t)got) : NULL;
    int canonical = again && !strcmp(again, text);
    free(again);
    if (!canonical) {
        free(out);
        return NULL;
    }
    *len = (size_t)got;
    out[got] = 0;
    return out;
}

int util_is_safe_component(const char *s) {
    if (!s || !*s || !strcmp(s, ".") || !strcmp(s, "..") || strlen(s) > 128) return 0;
    for (const char *p = s; *p; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-' || c == '+';
        if (!ok) return 0;
    }
    return 1;
}

int util_is_safe_relpath(const char *s) {
    if (!s || !*s || strlen(s) > 1024) return 0;
    char buf[1100];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    int parts = 0;
    for (char *tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        if (!util_is_safe_component(tok)) return 0;
        parts++;
    }
    return parts > 0 && s[0] != '/' && s[strlen(s) - 1] != '/' && !strstr(s, "//");
}

static size_t name_hash(const char *s) {
    size_t h = 14695981039346656037u; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* The slot holding NAME, or the empty slot where it would go. */
static size_t name_slot(const NameSet *set, const char *name) {
    assert(set->cap > 0 && (set->cap & (set->cap - 1)) == 0 && set->n < set->cap);
    size_t i = name_hash(name) & (set->cap - 1);
    while (set->names[i] && strcmp(set->names[i], name) != 0) i = (i + 1) & (set->cap - 1);
    return i;
}

int util_nameset_add(NameSet *set, const char *name, size_t value) {
    if (2 * (set->n + 1) > set->cap) { /* at most half full: probes stay short */
        NameSet bigger = {calloc(set->cap ? 2 * set->cap : 64, sizeof(char *)),
                          calloc(set->cap ? 2 * set->cap : 64, sizeof(size_t)),
                          set->cap ? 2 * set->cap : 64, 0};
        for (size_t i = 0; i < set->cap; i++)
            if (set->names[i]) util_nameset_add(&bigger, set->names[i], set->values[i]);
        util_nameset_free(set);
        *set = bigger;
    }
    assert(2 * (set->n + 1) <= set->cap); /* at most half full after growing */
    size_t i = name_slot(set, name);
    if (set->names[i]) return 1;
    set->names[i] = name;
    set->values[i] = value;
    set->n++;
    return 0;
}

int util_nameset_get(const NameSet *set, const char *name, size_t *value) {
    if (!set->cap) return 0;
    size_t i = name_slot(set, name);
    if (!set->names[i]) return 0;
    if (value) *value = set->values[i];
    return 1;
}

void util_nameset_free(NameSet *set) {
    free(set->names);
    free(set->values);
    *set = (NameSet){0};
}

void util_warn_if_readable(const char *who, const char *path, const char *what) {
    struct stat st;
    if (stat(path, &st) == 0 && (st.st_mode & S_IROTH))
        fprintf(stderr,
                "%s: warning: %s may be read by others (mode %03o): it holds %s; "
                "chmod 600 %s\n",
                who, path, (unsigned)(st.st_mode & 0777), what, path);
}

int util_read_token_file(const char *who, const char *path, char *out, size_t cap, Err *e) {
    size_t len = 0;
    char *text = fs_read(path, &len, e);
    if (!text) return -1;
    util_warn_if_readable(who, path, "a token");
    char *start = text + strspn(text, " \t\r\n");
    size_t n = strcspn(start, "\r\n");
    while (n > 0 && (start[n - 1] == ' ' || start[n - 1] == '\t')) n--;
    int ok = n > 0 && n < cap;
    if (ok) snprintf(out, cap, "%.*s", (int)n, start);
    free(text);
    return ok ? 0
              : err_set(e, "%s: no token on its first line (or longer than %zu bytes)", path,
                        cap - 1);
}
