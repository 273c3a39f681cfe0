/* gc.c: the collector (`cairn-farm gc`, POST /api/v1/gc; docs/farm.md, "Collecting
 * blobs"). A blob is kept while anything names it: a filed bundle's manifest, a source
 * archive's row, or a filing in progress (its reservation pins the digests it writes or
 * finds, db_filing_reserve, before it looks whether they are there). Everything else in
 * blobs/ goes, safely while agents upload, at this coordinator or another:
 *
 *   1. the blobs that no reference names are moved (renamed) into trash/: from then on
 *      no filing can find them there, so a filing that pins one afterwards writes it
 *      again;
 *   2. the references are read again, in one statement: a filing that found a blob
 *      before step 1 pinned it before looking, so its pin (or, once committed, its
 *      manifest) is in this second reading;
 *   3. a trashed blob named now goes back; the rest are removed.
 *
 * The argument holds for one collector. Two at once do not: B, settling trash/ with
 * references it read before a filing pinned a blob, removes that blob after A trashed
 * it (an acknowledged bundle lost files). So one collection runs at a time across the
 * farm: every collection, and the settling of trash/ at start, holds the collector's
 * lock (db_collector_lock: a PostgreSQL advisory lock, an flock beside SQLite's file),
 * and a collection that finds it held is refused (gc_running). And step 3 reads the
 * references of each blob once more, just before removing it.
 *
 * A collector stopped between 1 and 3 (a crash) leaves blobs in trash/: gc_recover puts
 * back the named ones before the coordinator serves anything and before every
 * collection, and removes the rest. Temp files of dead writes older than ten minutes go
 * too. */
#include "serve/serve_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The digests the store names, each held once (the set keeps pointers into OWNED). */
typedef struct {
    NameSet names;
    char **owned;
    size_t n, cap;
    int unreadable;  /* a reference that does not parse: nothing may be collected */
    long mismatched; /* manifests that are not their signed bundle's: nor then */
    char why[256];   /* the first one's */
} Refs;

static void refs_add(Refs *r, const char *sha) {
    if (!sha256_is_hex(sha)) {
        r->unreadable = 1;
        return;
    }
    if (util_nameset_get(&r->names, sha, NULL)) return;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 256;
        char **bigger = realloc(r->owned, cap * sizeof *r->owned);
        if (!bigger) {
            r->unreadable = 1; /* out of memory: a reference unread, nothing collected */
            return;
        }
        r->owned = bigger, r->cap = cap;
    }
    char *copy = strdup(sha);
    if (!copy || util_nameset_add(&r->names, copy, 0) < 0) {
        free(copy);
        r->unreadable = 1;
        return;
    }
    r->owned[r->n++] = copy;
}

static void refs_free(Refs *r) {
    util_nameset_free(&r->names);
    for (size_t i = 0; i < r->n; i++) free(r->owned[i]);
    free(r->owned);
}

static void add_ref(void *ctx, char kind, const char *text) {
    Refs *r = ctx;
    if (kind == 'b') {
        refs_add(r, text);
        return;
    }
    cJSON *j = cJSON_Parse(text); /* NULL also when out of memory: then unreadable */
    const cJSON *list = kind == 'm' ? cJSON_GetObjectItemCaseSensitive(j, "files") : j, *x;
    r->unreadable |= !list;
    /* A manifest's digests are what the collector keeps: one changed in the database
     * (not its signed statement's) made it delete the real blob. */
    Err e = {{0}};
    cJSON *st = kind == 'm' && list ? evidence_manifest_statement(j, NULL, &e) : NULL;
    if (kind == 'm' && list && !st && r->mismatched++ == 0)
        snprintf(r->why, sizeof r->why, "%.200s", e.msg);
    cJSON_Delete(st);
    cJSON_ArrayForEach(x, list) refs_add(r, cJSON_IsString(x) ? x->valuestring : NULL);
    cJSON_Delete(j);
}

/* Every digest the store names now, into R; -1 (R empty) with E when they cannot all be
 * read, or a manifest is not its signed bundle's. */
static int load_refs(Server *s, Refs *r, Err *e) {
    *r = (Refs){0};
    if (db_blob_refs(s->db, add_ref, r) == 0 && !r->unreadable && !r->mismatched) return 0;
    if (r->mismatched)
        err_set(e,
                "%ld filed manifest(s) do not match their signed bundles (the first: %s):"
                " nothing collected",
                r->mismatched, r->why);
    else err_set(e, "cannot read the store's references: nothing collected");
    fprintf(stderr, "farm: gc: %s\n", e->msg);
    refs_free(r);
    *r = (Refs){0};
    return -1;
}

/* A name in trash/: the blob's digest, a dash and 16 random hex digits. */
static int trash_digest(const char *name, char sha[SHA256_HEX_LEN]) {
    if (strlen(name) != 64 + 1 + 16 || name[64] != '-') return -1;
    memcpy(sha, name, 64);
    sha[64] = '\0';
    return sha256_is_hex(sha) ? 0 : -1;
}

/* Puts trash/NAME back as blob SHA: 1 put back, 0 when a blob of that name is there
 * already (written again meanwhile: the trashed copy goes) or when the trashed copy does
 * not hash to SHA (damaged: it goes), -1 on failure. */
static int put_back(Server *s, int trash, const char *name, const char *sha) {
    char rel[128];
    store_blob_path(sha, rel, sizeof rel);
    char *slash = strrchr(rel, '/');
    *slash = '\0';
    if (!store_digest_is(trash, name, sha)) { /* damaged in trash/: never put back */
        fprintf(stderr, "farm: gc: trash/%s does not hash to its name: removed\n", name);
        return unlinkat(trash, name, 0) == 0 ? 0 : -1;
    }
    int dir = statedir_open_dir(s->state_fd, rel, 1);
    int rc = dir >= 0 ? renameat2(trash, name, dir, sha, RENAME_NOREPLACE) : -1;
    if (rc != 0 && errno == EEXIST) rc = unlinkat(trash, name, 0) == 0 ? 0 : -1;
    else if (rc == 0) rc = 1;
    if (rc == 1 && s->cfg.sync_full) fsync(dir);
    if (dir >= 0) close(dir);
    return rc;
}

/* Settles what is in trash/ against the references now: the named go back, the rest
 * are removed (adding to *REMOVED and *BYTES, when not NULL). 0, or -1 with E. */
static int settle_trash(Server *s, int trash, long *restored, long *removed, long long *bytes,
                        Err *e) {
    int fd = openat(trash, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return err_set(e, "cannot read %s/trash: %s", s->state, strerror(errno));
    }
    Refs refs;
    int rc = load_refs(s, &refs, e);
    struct dirent *ent;
    while (rc == 0 && (ent = readdir(d)) != NULL) {
        char sha[SHA256_HEX_LEN];
        struct stat st;
        if (ent->d_name[0] == '.') continue;
        int digest = trash_digest(ent->d_name, sha) == 0;
        /* named in the reading, or (read again just before removing it) named now; a
         * reading that fails keeps the blob in trash/ for the next settling */
        int named = !digest                                    ? 0
                    : util_nameset_get(&refs.names, sha, NULL) ? 1
                                                               : db_blob_named(s->db, sha);
        if (named < 0) continue;
        if (named) {
            if (put_back(s, trash, ent->d_name, sha) == 1 && restored) (*restored)++;
            continue;
        }
        long long size =
            fstatat(trash, ent->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? st.st_size : 0;
        if (statedir_remove(trash, ent->d_name) == 0 && removed) {
            (*removed)++;
            *bytes += size;
        }
    }
    closedir(d);
    refs_free(&refs);
    return rc;
}

static void put_back_all(Server *s, int trash);

/* Takes the collector's lock: 1, or 0 with E (and *BUSY set when another holds it). */
static int lock_collector(Server *s, int *busy, Err *e) {
    int got = db_collector_lock(s->db);
    *busy = got == 0;
    if (got == 0) err_set(e, "another collection is running in this farm: try again later");
    if (got < 0) err_set(e, "cannot take the collector's lock: the store failed");
    return got == 1;
}

int gc_recover(Server *s, Err *e) {
    int busy = 0;
    pthread_mutex_lock(&s->gc_lock);
    if (!lock_collector(s, &busy, e)) {
        pthread_mutex_unlock(&s->gc_lock);
        /* the collection running settles its own trash/, or (killed) the next one does */
        fprintf(stderr, "farm: gc: trash/ not settled at start: %s\n", e->msg);
        return 0;
    }
    int trash = statedir_open_dir(s->state_fd, "trash", 1);
    long restored = 0;
    int rc = trash < 0 ? err_set(e, "cannot open %s/trash: %s", s->state, strerror(errno))
                       : settle_trash(s, trash, &restored, NULL, NULL, e);
    if (rc != 0 && trash >= 0) { /* the references unread, or a manifest damaged: keep all */
        fprintf(stderr, "farm: gc: trash/ put back whole at start: %s\n", e->msg);
        put_back_all(s, trash);
        rc = 0;
    }
    if (trash >= 0) close(trash);
    db_collector_unlock(s->db);
    pthread_mutex_unlock(&s->gc_lock);
    if (restored)
        fprintf(stderr, "farm: gc: put back %ld blob(s) a stopped collection had taken\n",
                restored);
    return rc;
}

/* Puts every blob in trash/ back (the references could not be read a second time). */
static void put_back_all(Server *s, int trash) {
    int fd = openat(trash, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return;
    }
    struct dirent *ent;
    char sha[SHA256_HEX_LEN];
    while ((ent = readdir(d)) != NULL) {
        if (trash_digest(ent->d_name, sha) == 0) put_back(s, trash, ent->d_name, sha);
    }
    closedir(d);
}

/* Moves every blob in the fan-out folder DIR (blobs/AA/BB) that REFS does not name into
 * TRASH; counts the blobs seen into *SEEN and the moved into *MOVED. */
static void trash_unnamed(int dir, int trash, const Refs *refs, long *seen, long *moved) {
    DIR *d = fdopendir(dir);
    if (!d) {
        close(dir);
        return;
    }
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (!sha256_is_hex(ent->d_name)) continue; /* not a blob: left alone */
        (*seen)++;
        if (util_nameset_get(&refs->names, ent->d_name, NULL)) continue;
        char name[128], prefix[80];
        snprintf(prefix, sizeof prefix, "%.64s-", ent->d_name);
        statedir_random_name(prefix, name, sizeof name);
        *moved += renameat(dirfd(d), ent->d_name, trash, name) == 0;
    }
    closedir(d);
}

/* Step 1 over every fan-out folder of blobs/. */
static void trash_all_unnamed(Server *s, int trash, const Refs *refs, long *seen, long *moved) {
    int top = openat(s->blobs_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = top >= 0 ? fdopendir(top) : NULL;
    if (!d) {
        if (top >= 0) close(top);
        return;
    }
    struct dirent *a, *b;
    while ((a = readdir(d)) != NULL) {
        if (strlen(a->d_name) != 2 || strspn(a->d_name, "0123456789abcdef") != 2) continue;
        int mid = statedir_open_dir(dirfd(d), a->d_name, 0);
        DIR *m = mid >= 0 ? fdopendir(mid) : NULL;
        if (!m) {
            if (mid >= 0) close(mid);
            continue;
        }
        while ((b = readdir(m)) != NULL) {
            if (strlen(b->d_name) != 2 || strspn(b->d_name, "0123456789abcdef") != 2) continue;
            int leaf = statedir_open_dir(dirfd(m), b->d_name, 0);
            if (leaf >= 0) trash_unnamed(leaf, trash, refs, seen, moved);
        }
        closedir(m);
    }
    closedir(d);
}

cJSON *gc_collect(Server *s, int *busy, Err *e) {
    pthread_mutex_lock(&s->gc_lock);
    if (!lock_collector(s, busy, e)) {
        pthread_mutex_unlock(&s->gc_lock);
        return NULL;
    }
    double t0 = timing_now_seconds();
    long seen = 0, moved = 0, restored = 0, removed = 0;
    long long bytes = 0;
    cJSON *out = NULL;
    Refs refs;
    int trash = statedir_open_dir(s->state_fd, "trash", 1);
    if (trash < 0) err_set(e, "cannot open %s/trash: %s", s->state, strerror(errno));
    else if (settle_trash(s, trash, &restored, NULL, NULL, e) != 0) {
    } else if (load_refs(s, &refs, e) != 0) {
    } else {
        pause_point("gc-read"); /* a test's filings commit between the readings */
        trash_all_unnamed(s, trash, &refs, &seen, &moved);
        refs_free(&refs);
        pause_point("gc-trashed"); /* a test's filings find their blobs gone */
        if (settle_trash(s, trash, &restored, &removed, &bytes, e) != 0) {
            put_back_all(s, trash);
        } else {
            out = cJSON_CreateObject();
            cJSON_AddNumberToObject(out, "blobs", (double)(seen - removed));
            cJSON_AddNumberToObject(out, "removed", (double)removed);
            cJSON_AddNumberToObject(out, "bytes_removed", (double)bytes);
            cJSON_AddNumberToObject(out, "put_back", (double)restored);
            cJSON_AddNumberToObject(out, "temps_removed", (double)store_drop_temps(s, 1));
            cJSON_AddNumberToObject(out, "seconds", timing_now_seconds() - t0);
        }
    }
    if (trash >= 0) close(trash);
    db_collector_unlock(s->db);
    pthread_mutex_unlock(&s->gc_lock);
    return out;
}
