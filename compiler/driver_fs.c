/* driver_fs.c: files, digests and child processes (see driver_fs.h). */
#include "driver_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void *xrealloc(void *p, size_t size) {
    void *q = realloc(p, size);
    if (!q) {
        fputs("cairn: out of memory\n", stderr);
        exit(3);
    }
    return q;
}

void sb_append(strbuf *sb, const char *bytes, size_t len) {
    if (sb->len + len + 1 > sb->cap) {
        sb->cap = (sb->len + len + 1) * 2;
        sb->data = xrealloc(sb->data, sb->cap);
    }
    memcpy(sb->data + sb->len, bytes, len);
    sb->len += len;
    sb->data[sb->len] = '\0';
}

void sb_puts(strbuf *sb, const char *text) { sb_append(sb, text, strlen(text)); }

void sb_printf(strbuf *sb, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0) return;
    char *tmp = xrealloc(NULL, (size_t)need + 1);
    va_start(ap, fmt);
    vsnprintf(tmp, (size_t)need + 1, fmt, ap);
    va_end(ap);
    sb_append(sb, tmp, (size_t)need);
    free(tmp);
}

void sb_free(strbuf *sb) {
    free(sb->data);
    *sb = (strbuf){0};
}

void sv_push(strvec *sv, const char *text) {
    if (sv->len + 2 > sv->cap) {
        sv->cap = (sv->len + 2) * 2;
        sv->items = xrealloc(sv->items, sv->cap * sizeof *sv->items);
    }
    sv->items[sv->len++] = text ? strdup(text) : NULL;
    sv->items[sv->len] = NULL;
}

void sv_free(strvec *sv) {
    for (size_t i = 0; i < sv->len; i++) free(sv->items[i]);
    free(sv->items);
    *sv = (strvec){0};
}

char *fs_read(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    strbuf sb = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sb_append(&sb, chunk, n);
    int failed = ferror(f);
    fclose(f);
    if (failed) {
        sb_free(&sb);
        errno = EIO;
        return NULL;
    }
    if (!sb.data) sb_append(&sb, "", 0);
    if (len) *len = sb.len;
    return sb.data;
}

int fs_write_atomic(const char *path, const void *data, size_t len) {
    size_t tmp_len = strlen(path) + 32;
    char *tmp = xrealloc(NULL, tmp_len);
    snprintf(tmp, tmp_len, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    int ok = f && fwrite(data, 1, len, f) == len;
    if (f && fclose(f) != 0) ok = 0;
    if (ok && rename(tmp, path) != 0) ok = 0;
    if (!ok) {
        int saved = errno;
        unlink(tmp);
        errno = saved;
    }
    free(tmp);
    return ok ? 0 : -1;
}

int fs_mkdirs(const char *path) {
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

void fs_remove_tree(const char *path) { nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

char *fs_absolute(const char *path) {
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX], resolved[PATH_MAX];
    const char *base = slash ? slash + 1 : path;
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if (!*base || !realpath(dir, resolved)) {
        if (!*base) errno = EISDIR;
        return NULL;
    }
    strbuf sb = {0};
    sb_printf(&sb, "%s/%s", strcmp(resolved, "/") == 0 ? "" : resolved, base);
    return sb.data;
}

char *fs_which(const char *name) {
    if (strchr(name, '/')) return access(name, X_OK) == 0 ? strdup(name) : NULL;
    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t n = end ? (size_t)(end - path) : strlen(path);
        strbuf sb = {0};
        sb_printf(&sb, "%.*s/%s", (int)n, n ? path : ".", name);
        struct stat st;
        if (stat(sb.data, &st) == 0 && S_ISREG(st.st_mode) && access(sb.data, X_OK) == 0)
            return sb.data;
        sb_free(&sb);
        path += n + (end != NULL);
    }
    return NULL;
}

void sha256_hex(const void *data, size_t len, char hex[65]) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_Digest(data, len, digest, &n, EVP_sha256(), NULL);
    for (unsigned int i = 0; i < n; i++) snprintf(hex + 2 * i, 3, "%02x", digest[i]);
}

int sha256_file(const char *path, char hex[65]) {
    size_t len;
    char *data = fs_read(path, &len);
    if (!data) return -1;
    sha256_hex(data, len, hex);
    free(data);
    return 0;
}

pid_t proc_start(char *const argv[], const char *cwd, const char *log_path) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0) return pid;
    if (cwd && chdir(cwd) != 0) _exit(127);
    if (log_path) {
        int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) _exit(127);
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    execv(argv[0], argv);
    _exit(127);
}

int proc_wait(pid_t pid) {
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

int proc_run(char *const argv[], const char *cwd, const char *log_path) {
    pid_t pid = proc_start(argv, cwd, log_path);
    return pid < 0 ? -1 : proc_wait(pid);
}
