/* store.c: the coordinator's files. Blobs live at blobs/<first two hex>/<sha256>;
 * evidence at evidence/<cairn version>/<run>/<machine>/<cell>/. Both are written under
 * tmp/ first, fsynced, and renamed into place before the database row that points to
 * them commits, so after a kill -9 a folder either is complete or gets dropped. */
#include "server.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void blob_path(const Server *s, const char *sha, char *out, size_t cap)
{
    snprintf(out, cap, "%s/blobs/%.2s/%s", s->state, sha, sha);
}

int store_blob(Server *s, const char *sha, const void *data, size_t len, Err *e)
{
    char path[1400], dir[1400];
    snprintf(dir, sizeof dir, "%s/blobs/%.2s", s->state, sha);
    blob_path(s, sha, path, sizeof path);
    if (mkdir_p(dir, e) != 0 || write_file_atomic(path, data, len, e) != 0)
        return -1;
    return db_blob_add(s->db, sha, (long)len) == 0 ? 0 : err_set(e, "blob row not stored");
}

/* Writes F under ROOT (folders made as needed) without syncing: store_evidence syncs
 * everything once all is written, so one journal commit covers most of it. */
static int write_item(const char *root, const FileItem *f, Err *e)
{
    char path[4096], dir[4096];
    snprintf(path, sizeof path, "%s/%s", root, f->name);
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    if (mkdir_p(dir, e) != 0)
        return -1;
    FILE *out = fopen(path, "wb");
    if (!out || fwrite(f->data, 1, f->len, out) != f->len) {
        if (out)
            fclose(out);
        return err_set(e, "cannot write %s", path);
    }
    return fclose(out) == 0 ? 0 : err_set(e, "cannot write %s", path);
}

static int sync_path(const char *path, int flags)
{
    int fd = open(path, flags | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* fsyncs every file, then every folder from the deepest up to ROOT itself. */
static int sync_tree(const char *root, const FileItem *files, size_t n, Err *e)
{
    char path[4096];
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", root, files[i].name);
        if (sync_path(path, O_RDONLY) != 0)
            return err_set(e, "cannot sync %s", path);
    }
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", root, files[i].name);
        char *slash;
        while ((slash = strrchr(path, '/')) != NULL && strlen(path) > strlen(root)) {
            *slash = '\0';
            sync_path(path, O_RDONLY | O_DIRECTORY);
        }
    }
    return 0;
}

int store_evidence(Server *s, const char *rel, const FileItem *files, size_t n, Err *e)
{
    static atomic_ulong counter;
    char tmp[1400], final[2400], parent[2400];
    snprintf(tmp, sizeof tmp, "%s/tmp/ev-%ld-%lu", s->state, (long)getpid(), counter++);
    snprintf(final, sizeof final, "%s/%s", s->state, rel);
    snprintf(parent, sizeof parent, "%s", final);
    *strrchr(parent, '/') = '\0';
    rm_rf(tmp);
    int rc = mkdir_p(tmp, e);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = write_item(tmp, &files[i], e);
    if (rc == 0 && s->cfg.sync_full)
        rc = sync_tree(tmp, files, n, e);
    if (rc == 0)
        rc = mkdir_p(parent, e);
    if (rc == 0) {
        rm_rf(final);   /* a leftover from a crash before its row committed */
        if (rename(tmp, final) != 0)
            rc = err_set(e, "cannot rename %s: %s", tmp, strerror(errno));
        else if (s->cfg.sync_full)
            fsync_dir(parent);
    }
    if (rc != 0)
        rm_rf(tmp);
    return rc;
}

static int listed(const cJSON *paths, const char *rel)
{
    const cJSON *row;
    cJSON_ArrayForEach(row, paths) {
        const char *p = json_str(row, "evidence");
        if (p && !strcmp(p, rel))
            return 1;
    }
    return 0;
}

/* Walks evidence/<version>/<run>/<machine>/<cell> (depth 4) and drops cell folders that
 * no filed job points to: they were renamed into place but never acknowledged. */
static void prune(const char *state, const char *rel, int depth, const cJSON *paths, int *dropped)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", state, rel);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (ent->d_name[0] == '.')
            continue;
        char child[4096];
        snprintf(child, sizeof child, "%s/%s", rel, ent->d_name);
        if (depth < 4) {
            prune(state, child, depth + 1, paths, dropped);
        } else if (!listed(paths, child)) {
            char full[8192];
            snprintf(full, sizeof full, "%s/%s", state, child);
            rm_rf(full);
            (*dropped)++;
        }
    }
    closedir(d);
}

int store_reconcile(Server *s, Err *e)
{
    char tmp[1400];
    snprintf(tmp, sizeof tmp, "%s/tmp", s->state);
    rm_rf(tmp);
    if (mkdir_p(tmp, e) != 0)
        return -1;
    cJSON *paths = db_evidence_paths(s->db);
    int dropped = 0;
    prune(s->state, "evidence", 1, paths, &dropped);
    cJSON_Delete(paths);
    if (dropped)
        fprintf(stderr, "farm: reconcile: dropped %d unacknowledged evidence folder(s)\n",
                dropped);
    return 0;
}
