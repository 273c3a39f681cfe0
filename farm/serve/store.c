/* store.c: the coordinator's files. Blobs live at blobs/<first two hex>/<sha256>;
 * evidence at evidence/<cairn version>/<run>/<machine>/<cell>/. Both are written under
 * random names first (tmp/ for evidence) and renamed into place before the database row
 * that points to them commits, so after a kill -9 a folder either is complete or gets
 * dropped. Every path is opened from the state folder without following links
 * (statedir.c): nothing outside the state folder is read, written or removed.
 *
 * Blobs are fsynced. Evidence folders are not, one by one: with "sync": "full" their
 * files are also committed, in the same fsynced commit as the job's row, to the
 * `unsettled` journal; store_settle syncs the file system in the background (one
 * syncfs for every folder written meanwhile) and drops those rows, and after a power
 * loss store_reconcile writes any folder still in the journal again. A bundle costs
 * one share of a group commit's fsync instead of an fsync per file and folder.
 *
 * An evidence folder is renamed into place only under its path's reservation
 * (db_filing_reserve), which also makes its holder the only one that may remove a
 * folder found there unacknowledged: no upload removes a folder it does not own. */
#include "serve/serve_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int store_open(const Server *s, const char *rel, size_t *len) {
    if (!util_is_safe_relpath(rel)) return -1;
    /* O_NONBLOCK: a FIFO planted here must not hold the thread that opens it */
    int fd = statedir_open_file(s->state_fd, rel, O_RDONLY | O_NONBLOCK, 0, 0);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1) {
        *len = (size_t)st.st_size;
        return fd;
    }
    if (fd >= 0) close(fd);
    return -1;
}

int store_blob(Server *s, const char *sha, const void *data, size_t len, Err *e) {
    char rel[16];
    snprintf(rel, sizeof rel, "blobs/%.2s", sha);
    int dir = statedir_open_dir(s->state_fd, rel, 1);
    int rc =
        dir >= 0 && statedir_replace(dir, sha, data, len, 1) == 0
            ? 0
            : err_set(e, "cannot write blob %s/%s/%s: %s", s->state, rel, sha, strerror(errno));
    if (dir >= 0) close(dir);
    if (rc == 0 && db_blob_add(s->db, sha, (long)len) != 0) rc = err_set(e, "blob row not stored");
    return rc;
}

/* A new folder of its own under tmp/ (a random name: nobody can plant a link there in
 * advance) with FILES in it, each made anew; its name into NAME. -1 with E set. */
static int write_temp(Server *s, int tmp, const FileItem *files, size_t n, char *name, size_t cap,
                      Err *e) {
    char prefix[128];
    snprintf(prefix, sizeof prefix, "ev-%s-", db_coordinator(s->db));
    statedir_random_name(prefix, name, cap);
    int root = mkdirat(tmp, name, 0755) == 0 ? statedir_open_dir(tmp, name, 0) : -1;
    if (root < 0) return err_set(e, "cannot make %s/tmp/%s: %s", s->state, name, strerror(errno));
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (statedir_write_new(root, files[i].name, files[i].data, files[i].len, 0) != 0)
            rc = err_set(e, "cannot write %s/tmp/%s/%s: %s", s->state, name, files[i].name,
                         strerror(errno));
    close(root);
    return rc;
}

/* Clears the way for REL's folder at LEAF in PARENT. REPLACE: the journal's rewrite of
 * the very same files. Otherwise this filing holds REL's reservation, so a folder there
 * that no filed job points to is a filing that died before its row committed. */
static int clear_way(Server *s, int parent, const char *leaf, const char *rel, int replace,
                     Err *e) {
    struct stat st;
    if (fstatat(parent, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0) return 0;
    if (!replace && db_evidence_filed(s->db, rel))
        return err_set(e, "%s is the folder of a filed bundle", rel);
    if (!replace)
        fprintf(stderr, "farm: %s was left unacknowledged by a filing that died: replaced\n", rel);
    return statedir_remove(parent, leaf) == 0
               ? 0
               : err_set(e, "cannot remove %s: %s", rel, strerror(errno));
}

int store_evidence(Server *s, const char *rel, const FileItem *files, size_t n, int replace,
                   Err *e) {
    char name[200], parent_rel[1200];
    const char *slash = strrchr(rel, '/');
    if (!slash || (size_t)(slash - rel) >= sizeof parent_rel)
        return err_set(e, "evidence path %s has no folder", rel);
    snprintf(parent_rel, sizeof parent_rel, "%.*s", (int)(slash - rel), rel);
    int tmp = statedir_open_dir(s->state_fd, "tmp", 1);
    int parent = tmp >= 0 ? statedir_open_dir(s->state_fd, parent_rel, 1) : -1;
    int rc = parent >= 0
                 ? 0
                 : err_set(e, "cannot open %s/%s: %s", s->state, parent_rel, strerror(errno));
    int written = rc == 0 && write_temp(s, tmp, files, n, name, sizeof name, e) == 0;
    if (written) rc = clear_way(s, parent, slash + 1, rel, replace, e);
    else if (rc == 0) rc = -1;
    if (rc == 0 && renameat(tmp, name, parent, slash + 1) != 0) {
        int saved = errno; /* before anything else can overwrite it */
        rc = err_set(e, "cannot rename %s/tmp/%s to %s: %s", s->state, name, rel, strerror(saved));
    }
    if (rc != 0 && written) statedir_remove(tmp, name);
    if (parent >= 0) close(parent);
    if (tmp >= 0) close(tmp);
    return rc;
}

int store_unfile(Server *s, const char *rel) {
    const char *slash = strrchr(rel, '/');
    char parent_rel[1200];
    if (!slash || (size_t)(slash - rel) >= sizeof parent_rel) return -1;
    snprintf(parent_rel, sizeof parent_rel, "%.*s", (int)(slash - rel), rel);
    int parent = statedir_open_dir(s->state_fd, parent_rel, 0);
    int rc = parent >= 0 ? statedir_remove(parent, slash + 1) : -1;
    if (parent >= 0) close(parent);
    return rc;
}

/* Temp and evidence folders younger than this may be another live coordinator's filing
 * in progress (a shared store): reconciling leaves them alone. */
#define FILING_GRACE_SECONDS 600

/* Whether NAME in DIR may be dropped: always when no other coordinator is alive, else
 * once older than the grace (by its change time, which a rename renews). */
static int droppable(int dir, const char *name, int peers) {
    struct stat st;
    return !peers || (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                      timing_now_seconds() - (double)st.st_ctime > FILING_GRACE_SECONDS);
}

/* Walks evidence/<version>/<run>/<machine>/<cell> (depth 4) from DIR (REL its path)
 * and drops cell folders no filed job points to (FILED): they were renamed into place
 * but never acknowledged. With PEERS (other live coordinators) only those older than
 * the grace. Links are neither followed nor counted as folders. */
static void prune(int dir, const char *rel, int depth, const NameSet *filed, int peers,
                  int *dropped) {
    DIR *d = fdopendir(dir);
    if (!d) {
        close(dir);
        return;
    }
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (ent->d_name[0] == '.') continue;
        char child[4096];
        snprintf(child, sizeof child, "%s/%s", rel, ent->d_name);
        if (depth < 4) {
            int sub = statedir_open_dir(dirfd(d), ent->d_name, 0);
            if (sub >= 0) prune(sub, child, depth + 1, filed, peers, dropped);
        } else if (!util_nameset_get(filed, child, NULL) &&
                   droppable(dirfd(d), ent->d_name, peers)) {
            statedir_remove(dirfd(d), ent->d_name);
            (*dropped)++;
        }
    }
    closedir(d);
}

static int sync_state(void *ctx) {
    const Server *s = ctx;
    return syncfs(s->state_fd);
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
static int drop_temps(Server *s, int peers, Err *e) {
    int tmp = statedir_open_dir(s->state_fd, "tmp", 1);
    DIR *d = tmp >= 0 ? fdopendir(tmp) : NULL;
    if (!d) {
        if (tmp >= 0) close(tmp);
        return err_set(e, "cannot open %s/tmp: %s", s->state, strerror(errno));
    }
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (strcmp(ent->d_name, ".") && strcmp(ent->d_name, "..") &&
            droppable(dirfd(d), ent->d_name, peers))
            statedir_remove(dirfd(d), ent->d_name);
    }
    closedir(d);
    return 0;
}

int store_reconcile(Server *s, Err *e) {
    int peers = db_peers_alive(s->db);
    db_peers_forget_dead(s->db);
    if (drop_temps(s, peers, e) != 0 || restore_unsettled(s, e) != 0) return -1;
    cJSON *paths = db_evidence_paths(s->db);
    NameSet filed = {0};
    const cJSON *row;
    cJSON_ArrayForEach(row, paths) {
        if (json_str(row, "evidence")) util_nameset_add(&filed, json_str(row, "evidence"), 0);
    }
    int dropped = 0, evidence = statedir_open_dir(s->state_fd, "evidence", 0);
    if (evidence >= 0) prune(evidence, "evidence", 1, &filed, peers, &dropped);
    util_nameset_free(&filed);
    cJSON_Delete(paths);
    if (dropped)
        fprintf(stderr, "farm: reconcile: dropped %d unacknowledged evidence folder(s)\n", dropped);
    return 0;
}
