/* util.c: errors, hashing, base64, crash-safe files and JSON access shared by the
 * coordinator and the agent. Hashing and base64 are OpenSSL's, JSON is cJSON's. */
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

int err_set(Err *e, const char *fmt, ...) {
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static void hex_of(const unsigned char *md, unsigned n, char *out) {
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = 0; i < n; i++) {
        out[2 * i] = digits[md[i] >> 4];
        out[2 * i + 1] = digits[md[i] & 15];
    }
    out[2 * n] = '\0';
}

/* SHA-256 fetched once: OpenSSL 3's implicit fetch per digest takes global locks. */
static EVP_MD *sha256_md;
static void fetch_sha256(void) { sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL); }

static const EVP_MD *sha256(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, fetch_sha256);
    return sha256_md;
}

void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN]) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    EVP_Digest(data, len, md, &n, sha256(), NULL);
    hex_of(md, n, out);
}

int sha256_file_hex(const char *path, char out[SHA256_HEX_LEN], size_t *size, Err *e) {
    FILE *f = fopen(path, "rb");
    if (!f) return err_set(e, "cannot open %s: %s", path, strerror(errno));
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    EVP_DigestInit_ex(ctx, sha256(), NULL);
    unsigned char buf[65536];
    size_t n, total = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        EVP_DigestUpdate(ctx, buf, n);
        total += n;
    }
    int bad = ferror(f);
    fclose(f);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    EVP_DigestFinal_ex(ctx, md, &mdlen);
    EVP_MD_CTX_free(ctx);
    if (bad) return err_set(e, "cannot read %s", path);
    hex_of(md, mdlen, out);
    if (size) *size = total;
    return 0;
}

int sha256_is_hex(const char *s) {
    if (!s || strlen(s) != 64) return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return 0;
    return 1;
}

char *util_b64_encode(const void *data, size_t len) {
    char *out = malloc(4 * ((len + 2) / 3) + 1);
    if (out) EVP_EncodeBlock((unsigned char *)out, data, (int)len);
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

char *fs_read(const char *path, size_t *len, Err *e) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        err_set(e, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *bigger = realloc(buf, 2 * cap + 1);
            if (!bigger) {
                free(buf);
                buf = NULL;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        err_set(e, "cannot read %s", path);
        return NULL;
    }
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

int fs_write_synced(const char *path, const void *data, size_t len, Err *e) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return err_set(e, "cannot create %s: %s", path, strerror(errno));
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            close(fd);
            return err_set(e, "cannot write %s: %s", path, strerror(errno));
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0)
        return err_set(e, "cannot sync %s: %s", path, strerror(errno));
    return 0;
}

int fs_sync_dir(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

static void parent_of(const char *path, char *out, size_t cap) {
    snprintf(out, cap, "%s", path);
    char *slash = strrchr(out, '/');
    if (!slash) snprintf(out, cap, ".");
    else if (slash == out) out[1] = '\0';
    else *slash = '\0';
}

int fs_write_atomic(const char *path, const void *data, size_t len, Err *e) {
    static _Atomic unsigned long counter;
    char tmp[4096], dir[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%lu", path, (long)getpid(), counter++);
    if (fs_write_synced(tmp, data, len, e) != 0) return -1;
    if (rename(tmp, path) != 0) {
        unlink(tmp);
        return err_set(e, "cannot rename %s: %s", tmp, strerror(errno));
    }
    parent_of(path, dir, sizeof dir);
    fs_sync_dir(dir);
    return 0;
}

int fs_mkdirs(const char *path, Err *e) {
    if (mkdir(path, 0755) == 0 || errno == EEXIST) return 0; /* the common case: one system call */
    if (errno != ENOENT) return err_set(e, "cannot create %s: %s", path, strerror(errno));
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", path);
    char *slash = strrchr(parent, '/');
    if (!slash || slash == parent)
        return err_set(e, "cannot create %s: %s", path, strerror(ENOENT));
    *slash = '\0';
    if (fs_mkdirs(parent, e) != 0) return -1;
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return err_set(e, "cannot create %s: %s", path, strerror(errno));
    return 0;
}

int fs_remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode)) return unlink(path);
    DIR *d = opendir(path);
    if (!d) return -1;
    struct dirent *ent;
    char child[4096];
    while ((ent = readdir(d)) != NULL) {
        if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, "..")) continue;
        snprintf(child, sizeof child, "%s/%s", path, ent->d_name);
        fs_remove_tree(child);
    }
    closedir(d);
    return rmdir(path);
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

double timing_now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void timing_sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

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
    if (!(v >= lo && v <= hi) || v != floor(v))
        return -1; /* NaN, infinities and 1e300 all end here */
    *out = (long)v;
    return 1;
}

cJSON *json_parse_file(const char *path, Err *e) {
    char *text = fs_read(path, NULL, e);
    if (!text) return NULL;
    cJSON *json = cJSON_Parse(text);
    free(text);
    if (!json) err_set(e, "%s: not valid JSON", path);
    return json;
}
