/* fs.c: files and folders (see fs.h). */
#include "lib/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *fs_read(const char *path, size_t *len, Err *e) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        err_set(e, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n < cap) continue;
        char *bigger = realloc(buf, 2 * cap + 1);
        if (!bigger) free(buf);
        buf = bigger;
        cap *= 2;
    }
    int bad = !buf ? ENOMEM : ferror(f) ? EIO : 0;
    fclose(f);
    if (bad) {
        free(buf);
        errno = bad;
        err_set(e, "cannot read %s: %s", path, strerror(errno));
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
            int saved = errno;
            close(fd);
            errno = saved;
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
    static atomic_ulong counter; /* threads of one process each get their own name */
    char tmp[PATH_MAX], dir[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%lu", path, (long)getpid(), counter++) >=
        (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return err_set(e, "cannot write %s: %s", path, strerror(errno));
    }
    if (fs_write_synced(tmp, data, len, e) != 0) {
        int saved = errno;
        unlink(tmp);
        errno = saved;
        return -1;
    }
    if (rename(tmp, path) != 0) {
        int saved = errno;
        unlink(tmp);
        errno = saved;
        return err_set(e, "cannot rename %s: %s", tmp, strerror(errno));
    }
    parent_of(path, dir, sizeof dir);
    fs_sync_dir(dir);
    return 0;
}

int fs_mkdirs(const char *path, Err *e) {
    if (mkdir(path, 0755) == 0 || errno == EEXIST) return 0; /* the common case: one call */
    if (errno != ENOENT) return err_set(e, "cannot create %s: %s", path, strerror(errno));
    char parent[PATH_MAX];
    if (snprintf(parent, sizeof parent, "%s", path) >= (int)sizeof parent) {
        errno = ENAMETOOLONG;
        return err_set(e, "cannot create %s: %s", path, strerror(errno));
    }
    char *slash = strrchr(parent, '/');
    while (slash && slash > parent && slash[-1] == '/') slash--; /* "a//b" */
    if (!slash || slash == parent) {
        errno = ENOENT;
        return err_set(e, "cannot create %s: %s", path, strerror(errno));
    }
    *slash = '\0';
    if (fs_mkdirs(parent, e) != 0) return -1;
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return err_set(e, "cannot create %s: %s", path, strerror(errno));
    return 0;
}

int fs_create_beneath(int dir, const char *rel, const void *data, size_t len, Err *e) {
    char part[PATH_MAX];
    if (snprintf(part, sizeof part, "%s", rel) >= (int)sizeof part || rel[0] == '/')
        return err_set(e, "cannot create %s: not a short relative path", rel);
    int at = fcntl(dir, F_DUPFD_CLOEXEC, 0);
    char *name = part, *slash;
    while (at >= 0 && (slash = strchr(name, '/')) != NULL) {
        *slash = '\0';
        int next = mkdirat(at, name, 0755) != 0 && errno != EEXIST
                       ? -1
                       : openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int saved = errno;
        close(at);
        errno = saved;
        at = next;
        name = slash + 1;
    }
    int fd =
        at >= 0 ? openat(at, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644) : -1;
    int saved = errno;
    if (at >= 0) close(at);
    size_t done = 0;
    while (fd >= 0 && done < len) {
        ssize_t n = write(fd, (const char *)data + done, len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += (size_t)n;
    }
    if (fd >= 0) saved = done == len ? saved : errno;
    int ok = fd >= 0 && done == len;
    if (fd >= 0 && close(fd) != 0) ok = 0;
    errno = saved;
    return ok ? 0 : err_set(e, "cannot create %s: %s", rel, strerror(saved));
}

static _Thread_local int remove_failed;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    if (remove(path) != 0 && errno != ENOENT) remove_failed = 1;
    return 0; /* go on: remove what can be removed */
}

int fs_remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
    remove_failed = 0;
    if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) return -1;
    return remove_failed ? -1 : 0;
}

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
    size_t n = strlen(resolved) + strlen(base) + 2;
    char *out = malloc(n);
    if (out) snprintf(out, n, "%s/%s", strcmp(resolved, "/") == 0 ? "" : resolved, base);
    return out;
}

char *fs_which(const char *name) {
    if (strchr(name, '/')) return access(name, X_OK) == 0 ? strdup(name) : NULL;
    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    char full[PATH_MAX];
    while (*path) {
        const char *end = strchr(path, ':');
        size_t n = end ? (size_t)(end - path) : strlen(path);
        struct stat st;
        if (snprintf(full, sizeof full, "%.*s/%s", (int)n, n ? path : ".", name) <
                (int)sizeof full &&
            stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0)
            return strdup(full);
        path += n + (end != NULL);
    }
    return NULL;
}
