/* store.c: the coordinator's files. Blobs live at blobs/<first two hex>/<sha256>;
 * evidence at evidence/<cairn version>/<run>/<machine>/<cell>/. Both are written under
 * tmp/ first and renamed into place before the database row that points to them
 * commits, so after a kill -9 a folder either is complete or gets dropped.
 *
 * Blobs are fsynced. Evidence folders are not, one by one: with "sync": "full" their
 * files are also committed, in the same fsynced SQLite commit as the job's row, to the
 * `unsettled` journal; store_settle syncs the file system in the background (one
 * syncfs for every folder written meanwhile) and drops those rows, and after a power
 * loss store_reconcile writes any folder still in the journal again. A bundle costs
 * one share of a group commit's fsync instead of an fsync per file and folder. */
#include "serve/serve_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void store_blob_path(const Server *s, const char *sha, char *out, size_t cap) {
    snprintf(out, cap, "%s/blobs/%.2s/%s", s->state, sha, sha);
}

int store_open(const Server *s, const char *rel, size_t *len) {
    char path[PROTO_MAX_PATH + 64];
    if (!util_is_safe_relpath(rel) || snprintf(path, sizeof path, "%s", rel) >= (int)sizeof path)
        return -1;
    int dir = openat(AT_FDCWD, s->state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char *at = path, *slash;
    while (dir >= 0 && (slash = strchr(at, '/')) != NULL) {
        *slash = '\0';
        int next = openat(dir, at, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(dir);
        dir = next;
        at = slash + 1;
    }
    if (dir < 0) return -1;
    /* O_NONBLOCK: a FIFO planted here must not hold the thread that opens it */
    int fd = openat(dir, at, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    close(dir);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1) {
        *len = (size_t)st.st_size;
        return fd;
    }
    if (fd >= 0) close(fd);
    return -1;
}

int store_blob(Server *s, const char *sha, const void *data, size_t len, Err *e) {
    char path[1400], dir[1400];
    snprintf(dir, sizeof dir, "%s/blobs/%.2s", s->state, sha);
    store_blob_path(s, sha, path, sizeof path);
    if (fs_mkdirs(dir, e) != 0 || fs_write_atomic(path, data, len, e) != 0) return -1;
    return db_blob_add(s->db, sha, (long)len) == 0 ? 0 : err_set(e, "blob row not stored");
}

/* Writes F under ROOT (folders made as needed) without syncing (see store_evidence). */
static int write_item(const char *root, const FileItem *f, Err *e) {
    char path[4096], dir[4096];
    snprintf(path, sizeof path, "%s/%s", root, f->name);
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    if (fs_mkdirs(dir, e) != 0) return -1;
    FILE *out = fopen(path, "wb");
    if (!out || fwrite(f->data, 1, f->len, out) != f->len) {
        if (out) fclose(out);
        return err_set(e, "cannot write %s", path);
    }
    return fclose(out) == 0 ? 0 : err_set(e, "cannot write %s", path);
}

/* Temp and evidence folders younger than this may be another live coordinator's filing
 * in progress (a shared store): reconciling leaves them alone. */
#define FILING_GRACE_SECONDS 600

/* Whether the entry at PATH may be dropped: always when no other coordinator is alive,
 * else once older than the grace (by its change time, which a rename renews). */
static int droppable(const char *path, int peers) {
    struct stat st;
    return !peers || (lstat(path, &st) == 0 &&
                      timing_now_seconds() - (double)st.st_ctime > FILING_GRACE_SECONDS);
}

/* On a shared store, a folder already at REL that no filed job points to was renamed
 * into place by a coordinator that died before its row committed: the agent's retry at
 * another coordinator replaces it once that coordinator is gone (or after the grace).
 * Uploads of one job file one at a time in each coordinator, so it is not this one's. */
static int orphaned(Server *s, const char *rel, const char *final) {
    if ((errno != ENOTEMPTY && errno != EEXIST) || !db_shared(s->db) ||
        db_evidence_filed(s->db, rel) || !droppable(final, db_peers_alive(s->db)))
        return 0;
    fprintf(stderr, "farm: %s was left unacknowledged by a coordinator that is gone: replaced\n",
            rel);
    return fs_remove_tree(final) == 0;
}

int store_evidence(Server *s, const char *rel, const FileItem *files, size_t n, int replace,
                   Err *e) {
    static atomic_ulong counter;
    char tmp[1400], final[2400], parent[2400];
    snprintf(tmp, sizeof tmp, "%s/tmp/ev-%s-%lu", s->state, db_coordinator(s->db), counter++);
    snprintf(final, sizeof final, "%s/%s", s->state, rel);
    snprintf(parent, sizeof parent, "%s", final);
    *strrchr(parent, '/') = '\0';
    fs_remove_tree(tmp);
    int rc = fs_mkdirs(tmp, e);
    for (size_t i = 0; rc == 0 && i < n; i++) rc = write_item(tmp, &files[i], e);
    if (rc == 0) rc = fs_mkdirs(parent, e);
    /* An upload never lands on an existing folder: it may be acknowledged evidence
     * (leftovers of a crash before their row committed are dropped at start). Only the
     * journal's rewrite of the very same files after a power loss replaces one. */
    if (rc == 0 && replace) fs_remove_tree(final);
    if (rc == 0 && rename(tmp, final) != 0 && !(orphaned(s, rel, final) && rename(tmp, final) == 0))
        rc = err_set(e, "cannot rename %s: %s", tmp, strerror(errno));
    if (rc != 0) fs_remove_tree(tmp);
    return rc;
}

static int listed(const cJSON *paths, const char *rel) {
    const cJSON *row;
    cJSON_ArrayForEach(row, paths) {
        const char *p = json_str(row, "evidence");
        if (p && !strcmp(p, rel)) return 1;
    }
    return 0;
}

/* Walks evidence/<version>/<run>/<machine>/<cell> (depth 4) and drops cell folders that
 * no filed job points to: they were renamed into place but never acknowledged. With
 * PEERS (other live coordinators) only those older than the grace. */
static void prune(const char *state, const char *rel, int depth, const cJSON *paths, int peers,
                  int *dropped) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", state, rel);
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (ent->d_name[0] == '.') continue;
        char child[4096];
        snprintf(child, sizeof child, "%s/%s", rel, ent->d_name);
        if (depth < 4) {
            prune(state, child, depth + 1, paths, peers, dropped);
            continue;
        }
        char full[8192];
        snprintf(full, sizeof full, "%s/%s", state, child);
        if (!listed(paths, child) && droppable(full, peers)) {
            fs_remove_tree(full);
            (*dropped)++;
        }
    }
    closedir(d);
}

static int sync_state(void *ctx) {
    const Server *s = ctx;
    int fd = open(s->state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = syncfs(fd);
    close(fd);
    return rc;
}

int store_settle(Server *s) { return db_settle(s->db, sync_state, s); }

/* Writes every journalled folder again (it may have been lost with the page cache). */
static int restore_unsettled(Server *s, Err *e) {
    cJSON *rows = db_unsettled(s->db);
    const cJSON *row;
    int rc = 0, n = 0;
    cJSON_ArrayForEach(row, rows) {
        const cJSON *files = cJSON_GetObjectItemCaseSensitive(row, "files"), *f;
        FileItem *items = calloc((size_t)cJSON_GetArraySize(files) + 1, sizeof *items);
        size_t k = 0;
        cJSON_ArrayForEach(f, files) {
            size_t len = 0;
            unsigned char *data = cJSON_IsString(f) ? util_b64_decode(f->valuestring, &len) : NULL;
            if (data) items[k++] = (FileItem){f->string, data, len};
        }
        if (rc == 0) rc = store_evidence(s, json_str(row, "evidence"), items, k, 1, e);
        for (size_t i = 0; i < k; i++) free((void *)items[i].data);
        free(items);
        n++;
    }
    cJSON_Delete(rows);
    if (rc == 0 && n && store_settle(s) != n)
        rc = err_set(e, "cannot sync the %d evidence folder(s) restored from the journal", n);
    if (n)
        fprintf(stderr, "farm: reconcile: wrote %d evidence folder(s) again from the journal\n", n);
    return rc;
}

/* Drops temp folders: all of them, or with PEERS only those older than the grace (the
 * names carry the coordinator that made them, for whoever looks). */
static int drop_temps(const char *state, int peers, Err *e) {
    char tmp[1400];
    snprintf(tmp, sizeof tmp, "%s/tmp", state);
    DIR *d = peers ? opendir(tmp) : NULL;
    struct dirent *ent;
    while (d && (ent = readdir(d)) != NULL) {
        char full[2800];
        snprintf(full, sizeof full, "%s/%s", tmp, ent->d_name);
        if (ent->d_name[0] != '.' && droppable(full, peers)) fs_remove_tree(full);
    }
    if (d) closedir(d);
    if (!peers) fs_remove_tree(tmp);
    return fs_mkdirs(tmp, e);
}

int store_reconcile(Server *s, Err *e) {
    int peers = db_peers_alive(s->db);
    if (drop_temps(s->state, peers, e) != 0 || restore_unsettled(s, e) != 0) return -1;
    cJSON *paths = db_evidence_paths(s->db);
    int dropped = 0;
    prune(s->state, "evidence", 1, paths, peers, &dropped);
    cJSON_Delete(paths);
    if (dropped)
        fprintf(stderr, "farm: reconcile: dropped %d unacknowledged evidence folder(s)\n", dropped);
    return 0;
}
