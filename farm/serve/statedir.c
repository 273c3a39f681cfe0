/* statedir.c: paths under the state folder, opened from a folder's descriptor one
 * component at a time with O_NOFOLLOW, so that a symbolic link anywhere under the state
 * folder (an evidence/ pointing at /etc, a planted temp name) is never followed: nothing
 * outside the state folder is read, written or removed through it. New files are made
 * with O_EXCL (never an existing file, nor a link's target), and at start the state
 * folder and its config are refused when anyone but their owner may write them. */
#include "serve/serve_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define NOFOLLOW_DIR (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

int statedir_open_dir(int dir, const char *rel, int make) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s", rel) >= (int)sizeof path) return -1;
    int fd = openat(dir, ".", NOFOLLOW_DIR);
    for (char *at = path, *next; fd >= 0 && at && *at; at = next) {
        next = strchr(at, '/');
        if (next) *next++ = '\0';
        if (!*at) continue; /* "a//b" */
        if (make && mkdirat(fd, at, 0755) != 0 && errno != EEXIST) {
            close(fd);
            return -1;
        }
        int sub = openat(fd, at, NOFOLLOW_DIR);
        close(fd);
        fd = sub;
    }
    return fd;
}

int statedir_open_file(int dir, const char *rel, int flags, mode_t mode, int make_dirs) {
    char parent[4096];
    const char *slash = strrchr(rel, '/');
    if (!slash) return openat(dir, rel, flags | O_NOFOLLOW | O_CLOEXEC, mode);
    if ((size_t)(slash - rel) >= sizeof parent) return -1;
    snprintf(parent, sizeof parent, "%.*s", (int)(slash - rel), rel);
    int at = statedir_open_dir(dir, parent, make_dirs);
    if (at < 0) return -1;
    int fd = openat(at, slash + 1, flags | O_NOFOLLOW | O_CLOEXEC, mode);
    int saved = errno;
    close(at);
    errno = saved;
    return fd;
}

int statedir_write_new(int dir, const char *rel, const void *data, size_t len, int sync) {
    int fd = statedir_open_file(dir, rel, O_WRONLY | O_CREAT | O_EXCL, 0644, 1);
    if (fd < 0) return -1;
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            int saved = n < 0 ? errno : EIO;
            close(fd);
            errno = saved;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    if (sync && fsync(fd) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return close(fd);
}

char *statedir_read(int dir, const char *rel, size_t max, size_t *len) {
    /* O_NONBLOCK: a FIFO planted here must not hold the thread that opens it */
    int fd = statedir_open_file(dir, rel, O_RDONLY | O_NONBLOCK, 0, 0);
    struct stat st;
    char *data = NULL;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size <= max &&
        (data = malloc((size_t)st.st_size + 1)) != NULL) {
        size_t got = 0, size = (size_t)st.st_size;
        for (ssize_t n = 1; got < size && n > 0;) {
            n = read(fd, data + got, size - got);
            if (n > 0) got += (size_t)n;
            else if (n < 0 && errno == EINTR) n = 1;
        }
        if (got == size) {
            data[size] = '\0';
            *len = size;
        } else {
            free(data);
            data = NULL;
        }
    }
    if (fd >= 0) close(fd);
    return data;
}

void statedir_random_name(const char *prefix, char *out, size_t cap) {
    unsigned char r[8] = {0};
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        double t = timing_now_seconds(); /* no entropy: at least not the same name twice */
        memcpy(r, &t, sizeof r < sizeof t ? sizeof r : sizeof t);
    }
    char hex[17];
    hex_encode(r, sizeof r, hex);
    snprintf(out, cap, "%s%s", prefix, hex);
}

int statedir_replace(int dir, const char *name, const void *data, size_t len, int sync) {
    char tmp[256], prefix[200];
    snprintf(prefix, sizeof prefix, ".%.150s.tmp-", name);
    statedir_random_name(prefix, tmp, sizeof tmp);
    if (statedir_write_new(dir, tmp, data, len, sync) != 0 || renameat(dir, tmp, dir, name) != 0) {
        int saved = errno;
        unlinkat(dir, tmp, 0);
        errno = saved;
        return -1;
    }
    return sync ? fsync(dir) : 0;
}

int statedir_remove(int dir, const char *name) {
    struct stat st;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode)) return unlinkat(dir, name, 0); /* a link itself, never its target */
    int fd = openat(dir, name, NOFOLLOW_DIR);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return -1;
    }
    int rc = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (strcmp(ent->d_name, ".") && strcmp(ent->d_name, ".."))
            rc |= statedir_remove(dirfd(d), ent->d_name);
    }
    closedir(d);
    return unlinkat(dir, name, AT_REMOVEDIR) == 0 ? rc : -1;
}

/* Warns that PATH (WHAT) may be written by its group (a shared group may be meant). */
static void group_writable(const char *what, const char *path, const struct stat *st) {
    if (st->st_mode & S_IWGRP)
        fprintf(stderr,
                "cairn-farm serve: warning: %s %s may be written by its group (mode %03o): "
                "chmod g-w %s unless the group is the farm's alone\n",
                what, path, (unsigned)(st->st_mode & 0777), path);
}

/* PATH must be a folder (not a symbolic link, when NOFOLLOW) that others may not write. */
static int private_folder(const char *path, int nofollow, const char *what, Err *e) {
    struct stat st;
    if ((nofollow ? lstat(path, &st) : stat(path, &st)) != 0)
        return errno == ENOENT ? 0 : err_set(e, "%s %s: %s", what, path, strerror(errno));
    if (S_ISLNK(st.st_mode))
        return err_set(e,
                       "%s %s is a symbolic link: make it a folder of the state folder's own"
                       " (nothing under the state folder is followed out of it)",
                       what, path);
    if (!S_ISDIR(st.st_mode)) return err_set(e, "%s %s is not a folder", what, path);
    if (st.st_mode & S_IWOTH)
        return err_set(e, "%s %s may be written by others (mode %03o): chmod go-w %s", what, path,
                       (unsigned)(st.st_mode & 0777), path);
    group_writable(what, path, &st);
    return 0;
}

int statedir_check(const char *state, const char *config, Err *e) {
    static const char *const subs[] = {"evidence", "tmp", "blobs", "trash", NULL};
    if (private_folder(state, 0, "the state folder", e) != 0) return -1;
    for (int i = 0; subs[i]; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", state, subs[i]);
        if (private_folder(path, 1, "the state folder's", e) != 0) return -1;
    }
    struct stat st;
    if (!config || stat(config, &st) != 0) return 0;
    if (st.st_mode & S_IWOTH)
        return err_set(e, "the config %s may be written by others (mode %03o): chmod go-w %s",
                       config, (unsigned)(st.st_mode & 0777), config);
    group_writable("the config", config, &st);
    if (st.st_mode & S_IROTH)
        fprintf(stderr,
                "cairn-farm serve: warning: the config %s holds the tokens and may be read by "
                "others (mode %03o): chmod 600 %s\n",
                config, (unsigned)(st.st_mode & 0777), config);
    return 0;
}
