/* store.c: the coordinator's files, stored once by content (docs/farm.md, "Evidence by
 * content"). Every file the farm keeps (a source archive, a receipt, a log, raw observed
 * bits, an agent's public key) is a blob named by its SHA-256 at blobs/<2 hex>/<2 hex>/
 * <sha256>: a file many bundles name (identical receipts, outputs and logs are common)
 * is written once. A filed bundle is its manifest in the database (db_job_done): its
 * DSSE envelope and the digests of its files, so filing writes no folder and, for files
 * already there, no file at all.
 *
 * A blob is written under a random name in tmp/ (O_EXCL), fsynced (sync "full"), then
 * renamed into place and its folder fsynced, so a blob's name only ever holds all of its
 * bytes, also after a power loss, before the commit that names it acknowledges anything.
 * Every path is opened from the state folder's descriptor without following links
 * (statedir.c): nothing outside the state folder is read, written or served.
 *
 * Blobs are shared, so a filing never removes one: a filing that fails leaves what it
 * wrote to the collector (gc.c), which keeps every blob a filed manifest, a filing's
 * reservation or a source archive's row names. */
#include "serve/serve_internal.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void store_blob_path(const char *sha, char *out, size_t cap) {
    snprintf(out, cap, "blobs/%.2s/%.2s/%s", sha, sha + 2, sha);
}

/* The folder NAME in DIR, made when missing (and, with SYNC, its making made durable by
 * an fsync of DIR); -1 with errno. */
static int sub_dir(int dir, const char *name, int sync) {
    int fd = statedir_open_dir(dir, name, 0);
    if (fd >= 0 || errno != ENOENT) return fd;
    if (mkdirat(dir, name, 0755) != 0 && errno != EEXIST) return -1;
    if (sync && fsync(dir) != 0) return -1;
    return statedir_open_dir(dir, name, 0);
}

/* Blob SHA's folder, blobs/aa/bb (made when MAKE); -1 with errno. */
static int fanout(const Server *s, const char *sha, int make) {
    char a[3] = {sha[0], sha[1], 0}, b[3] = {sha[2], sha[3], 0};
    int sync = make && s->cfg.sync_full;
    int top = make ? sub_dir(s->blobs_fd, a, sync) : statedir_open_dir(s->blobs_fd, a, 0);
    if (top < 0) return -1;
    int leaf = make ? sub_dir(top, b, sync) : statedir_open_dir(top, b, 0);
    int saved = errno;
    close(top);
    errno = saved;
    return leaf;
}

/* 1 when blob SHA in DIR holds exactly the LEN bytes of DATA; 0 when it is missing, and
 * -1 when it is there but damaged (another size, other bytes, not a plain file). */
static int holds(int dir, const char *sha, const void *data, size_t len) {
    int fd = openat(dir, sha, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? 0 : -1;
    struct stat st;
    int same =
        fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 && (size_t)st.st_size == len;
    char buf[65536];
    for (size_t at = 0; same && at < len;) {
        size_t want = len - at < sizeof buf ? len - at : sizeof buf;
        ssize_t n = pread(fd, buf, want, (off_t)at);
        if (n < 0 && errno == EINTR) continue;
        same = n > 0 && memcmp(buf, (const char *)data + at, (size_t)n) == 0;
        at += n > 0 ? (size_t)n : 0;
    }
    close(fd);
    return same ? 1 : -1;
}

int store_digest_is(int dir, const char *name, const char *sha) {
    int fd = openat(dir, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    Sha256 *h = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? sha256_begin() : NULL;
    char buf[65536], got[SHA256_HEX_LEN] = "";
    int bad = !h;
    for (off_t at = 0; !bad;) {
        ssize_t n = pread(fd, buf, sizeof buf, at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            bad = n < 0;
            break;
        }
        bad = sha256_add(h, buf, (size_t)n) != 0;
        at += n;
    }
    if (h && sha256_end(h, got) != 0) bad = 1;
    if (fd >= 0) close(fd);
    return !bad && strcmp(got, sha) == 0;
}

int store_put(Server *s, const char *sha, const void *data, size_t len, Err *e) {
    if (!sha256_is_hex(sha)) /* a digest the caller computed: not one when hashing failed */
        return err_set(e, "blob digest not computed (out of memory?)");
    int dir = fanout(s, sha, 1);
    if (dir < 0)
        return err_set(e, "cannot make the folder of blob %.16s...: %s", sha, strerror(errno));
    /* The bytes there are compared, not only their size: a blob damaged in place (a bit
     * flipped, truncated and padded) was taken as stored, and a new bundle naming it was
     * acknowledged and did not verify. A damaged one is replaced by these bytes. */
    int there = holds(dir, sha, data, len);
    if (there == 1) {
        close(dir);
        return 0; /* stored once: a file of this content is there */
    }
    if (there < 0)
        fprintf(stderr, "farm: blob %s was damaged in the store: replaced by an upload's bytes\n",
                sha);
    char name[200], prefix[128];
    snprintf(prefix, sizeof prefix, "blob-%s-", db_coordinator(s->db));
    statedir_random_name(prefix, name, sizeof name);
    int rc = statedir_write_new(s->tmp_fd, name, data, len, s->cfg.sync_full);
    if (rc == 0 && renameat(s->tmp_fd, name, dir, sha) != 0) rc = -1;
    if (rc == 0 && s->cfg.sync_full && fsync(dir) != 0) rc = -1;
    int saved = errno;
    if (rc != 0) unlinkat(s->tmp_fd, name, 0);
    close(dir);
    if (rc == 0) metrics_blob_written(s, len);
    return rc == 0 ? 1
                   : err_set(e, "cannot store blob %s under %s/blobs: %s", sha, s->state,
                             strerror(saved));
}

int store_blob(Server *s, const char *sha, const void *data, size_t len, Err *e) {
    /* The row first: the collector keeps what a row names, so the file is never taken
     * between its writing and its row (a row left without its file, by a crash, is
     * written again by the next upload of the same archive). */
    if (db_blob_add(s->db, sha, (long)len) != 0) return err_set(e, "blob row not stored");
    return store_put(s, sha, data, len, e) < 0 ? -1 : 0;
}

int store_open_blob(const Server *s, const char *sha, size_t *len) {
    if (!sha256_is_hex(sha)) return -1;
    int dir = fanout(s, sha, 0);
    if (dir < 0) return -1;
    /* O_NONBLOCK: a FIFO planted here must not hold the thread that opens it */
    int fd = openat(dir, sha, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    close(dir);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1) {
        *len = (size_t)st.st_size;
        return fd;
    }
    if (fd >= 0) close(fd);
    return -1;
}

char *store_read_blob(const Server *s, const char *sha, size_t max, size_t *len) {
    size_t size = 0;
    int fd = store_open_blob(s, sha, &size);
    if (fd < 0 || size > max) {
        if (fd >= 0) close(fd);
        return NULL;
    }
    char *data = malloc(size + 1);
    size_t got = 0;
    while (data && got < size) {
        ssize_t n = pread(fd, data + got, size - got, (off_t)got);
        if (n <= 0 && !(n < 0 && errno == EINTR)) break;
        if (n > 0) got += (size_t)n;
    }
    close(fd);
    if (!data || got != size) {
        free(data);
        return NULL;
    }
    data[size] = '\0';
    *len = size;
    return data;
}

int store_files(Server *s, const FileItem *files, size_t n, Err *e) {
    for (size_t i = 0; i < n; i++)
        if (store_put(s, files[i].sha, files[i].data, files[i].len, e) < 0) return -1;
    return 0;
}

char *store_digests(const FileItem *files, size_t n) {
    cJSON *list = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(list, cJSON_CreateString(files[i].sha));
    char *text = cJSON_PrintUnformatted(list);
    cJSON_Delete(list);
    return text;
}

char *store_manifest(const char *envelope, const FileItem *files, size_t n) {
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "envelope", envelope);
    cJSON *names = cJSON_AddObjectToObject(m, "files");
    for (size_t i = 0; i < n; i++) cJSON_AddStringToObject(names, files[i].name, files[i].sha);
    char *text = cJSON_PrintUnformatted(m);
    cJSON_Delete(m);
    return text;
}

/* Temp files younger than this may be another live coordinator's write in progress (a
 * shared state folder): reconciling leaves them alone. */
#define TEMP_GRACE_SECONDS 600

int store_droppable(int dir, const char *name, int peers) {
    struct stat st;
    return !peers || (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                      timing_now_seconds() - (double)st.st_ctime > TEMP_GRACE_SECONDS);
}

int store_drop_temps(Server *s, int peers) {
    int tmp = openat(s->tmp_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* its own offset */
    DIR *d = tmp >= 0 ? fdopendir(tmp) : NULL;
    if (!d) {
        if (tmp >= 0) close(tmp);
        return -1;
    }
    int dropped = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (strcmp(ent->d_name, ".") && strcmp(ent->d_name, "..") &&
            store_droppable(dirfd(d), ent->d_name, peers))
            dropped += statedir_remove(dirfd(d), ent->d_name) == 0;
    }
    closedir(d);
    return dropped;
}

int store_reconcile(Server *s, Err *e) {
    int peers = db_peers_alive(s->db);
    db_peers_forget_dead(s->db);
    if (store_drop_temps(s, peers) < 0)
        return err_set(e, "cannot open %s/tmp: %s", s->state, strerror(errno));
    if (gc_recover(s, e) != 0) return -1;
    return migrate_legacy(s, peers, e);
}
