/* migrate.c: a state folder filed in the layout before issue 28 is migrated when a
 * coordinator starts (docs/farm.md, "Evidence by content"), before it serves anything:
 *
 *   - source archives at blobs/<2 hex>/<sha256> move to blobs/<2 hex>/<2 hex>/<sha256>;
 *   - each bundle of the journal (`unsettled`: sync "full" kept a filed folder's files
 *     there until the file system had synced them) and each folder
 *     evidence/<version>/<run>/<machine>/<cell>/ of a done job is verified again with a
 *     live upload's checks (its envelope the one the job's row filed, jobs.bundle_sha;
 *     the key beside it the one its agent enrolled, which verifies the signature; every
 *     subject's digest; the predicate's fields, job and run), its files are
 *     stored as blobs and its manifest committed with the job, under the evidence path's
 *     reservation like any filing;
 *   - then the folders go: the migrated ones, and those no filed job points to (renamed
 *     into place and never acknowledged, as reconciling always dropped them; with other
 *     coordinators alive only those older than ten minutes).
 *
 * A bundle that does not verify, or whose folder is missing, stays as it is and is named
 * in the log; starting again tries again. Every step can be repeated after a crash: blobs
 * are written whole or not at all, a manifest once, and a folder is removed only once its
 * job's manifest is committed. */
#include "serve/serve_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "proto/dsse.h"

/* Files of a bundle read from a legacy folder (open at DIR), at most MAX bytes each. */
typedef struct {
    int dir;
    size_t max;
} Folder;

static char *read_folder(void *ctx, const char *name, size_t *len) {
    const Folder *f = ctx;
    return util_is_safe_relpath(name) ? statedir_read(f->dir, name, f->max, len) : NULL;
}

/* Files of a bundle from a journal row: {name: base64}. */
static char *read_journal(void *ctx, const char *name, size_t *len) {
    const cJSON *files = ctx, *f = cJSON_GetObjectItemCaseSensitive(files, name);
    unsigned char *data = cJSON_IsString(f) ? util_b64_decode(f->valuestring, len) : NULL;
    char *text = data ? realloc(data, *len + 1) : NULL;
    if (text) text[*len] = '\0';
    else free(data);
    return text;
}

/* The bundle's files as FileItems (subjects, then its key), read with READ. */
static FileItem *bundle_items(const cJSON *statement, SubjectReader read, void *ctx,
                              const char *pem, size_t *n) {
    const cJSON *subjects = cJSON_GetObjectItemCaseSensitive(statement, "subject"), *x;
    FileItem *items = calloc((size_t)cJSON_GetArraySize(subjects) + 1, sizeof *items);
    *n = 0;
    cJSON_ArrayForEach(x, subjects) {
        FileItem *it = &items[*n];
        it->name = json_str(x, "name");
        it->data = (unsigned char *)read(ctx, it->name, &it->len);
        snprintf(it->sha, sizeof it->sha, "%s",
                 json_str(cJSON_GetObjectItemCaseSensitive(x, "digest"), "sha256"));
        if (it->data) (*n)++;
    }
    items[*n] =
        (FileItem){.name = "agent.pub.pem", .data = (const unsigned char *)pem, .len = strlen(pem)};
    sha256_hex(pem, strlen(pem), items[*n].sha);
    (*n)++;
    return items;
}

/* The key JOB's agent enrolled (the one filed beside the bundle, PEM, must be it), when
 * the envelope ENV_TEXT is the one JOB's row filed; NULL with E. A key planted beside a
 * bundle, or a bundle swapped for another, was trusted by the migration. */
static EVP_PKEY *enrolled_key(Server *s, long job, const char *env_text, const char *pem, Err *e) {
    Job j = {0};
    char sha[SHA256_HEX_LEN] = "";
    sha256_hex(env_text, strlen(env_text), sha);
    if (db_job_get(s->db, job, &j) != 1) {
        err_set(e, "job %ld could not be read", job);
        return NULL;
    }
    char *enrolled = strcmp(sha, j.bundle_sha) == 0 ? db_agent_pem(s->db, j.agent_id) : NULL;
    EVP_PKEY *key = enrolled ? dsse_key_from_public_pem(enrolled, e) : NULL;
    EVP_PKEY *beside = key ? dsse_key_from_public_pem(pem, e) : NULL;
    if (strcmp(sha, j.bundle_sha) != 0)
        err_set(e, "the bundle is not the one job %ld filed (SHA-256 %.16s..., filed %.16s...)",
                job, sha, j.bundle_sha);
    else if (!enrolled) err_set(e, "job %ld's agent %ld has no enrolled key", job, j.agent_id);
    else if (key && (!beside || EVP_PKEY_eq(key, beside) != 1)) {
        err_set(e, "agent.pub.pem is not the key agent %ld enrolled", j.agent_id);
        EVP_PKEY_free(key);
        key = NULL;
    }
    EVP_PKEY_free(beside);
    free(enrolled);
    db_job_free(&j);
    return key;
}

/* A live upload's checks of the verified STATEMENT of JOB: its predicate's fields, and
 * that it is about JOB. 0, or -1 with E. */
static int statement_fits(const cJSON *statement, long job, Err *e) {
    const cJSON *pred = cJSON_GetObjectItemCaseSensitive(statement, "predicate");
    if (fields_check_predicate(pred, e) != 0) return -1;
    if (json_num(pred, "job", -1) != (double)job)
        return err_set(e, "the statement is about job %.0f, not job %ld", json_num(pred, "job", -1),
                       job);
    return 0;
}

/* Stores the bundle READ gives (its bundle.dsse.json and agent.pub.pem among its files)
 * by content and commits its manifest for the done job filed under REL. 1 migrated, 0
 * left (a live coordinator holds REL's reservation), -1 with E. */
static int migrate_bundle(Server *s, const char *rel, long job, SubjectReader read, void *ctx,
                          Err *e) {
    size_t env_len = 0, pem_len = 0, n = 0;
    char *env_text = read(ctx, "bundle.dsse.json", &env_len);
    char *pem = read(ctx, "agent.pub.pem", &pem_len);
    cJSON *env = env_text ? cJSON_ParseWithLength(env_text, env_len) : NULL, *statement = NULL;
    Err why = {{0}};
    EVP_PKEY *key = env && pem ? enrolled_key(s, job, env_text, pem, &why) : NULL;
    int rc = -1;
    if (!env || !pem) err_set(e, "%s: no readable bundle.dsse.json and agent.pub.pem", rel);
    else if (!key) err_set(e, "%s: %s", rel, why.msg);
    else if (bundle_check(env, key, &(BundleFiles){read, ctx, NULL, SIZE_MAX}, &statement, e) !=
             BUNDLE_OK)
        err_set(e, "%s: the bundle does not verify", rel);
    else if (statement_fits(statement, job, &why) != 0) err_set(e, "%s: %s", rel, why.msg);
    else {
        FileItem *items = bundle_items(statement, read, ctx, pem, &n);
        char *digests = store_digests(items, n), *manifest = store_manifest(env_text, items, n);
        int held = db_filing_reserve(s->db, &(DbReserve){rel, job, digests}, e);
        rc = held <= 0 ? held
             : store_files(s, items, n, e) != 0 || db_legacy_migrate(s->db, rel, manifest) != 0 ? -1
                                                                                                : 1;
        if (rc < 0) db_filing_release(s->db, rel);
        for (size_t i = 0; i + 1 < n; i++) free((void *)items[i].data);
        free(items);
        free(digests);
        free(manifest);
    }
    EVP_PKEY_free(key);
    cJSON_Delete(statement);
    cJSON_Delete(env);
    free(env_text);
    free(pem);
    return rc;
}

/* Every journal row's bundle; returns how many were migrated, and how many rows named
 * no filed bundle (or one migrated already) and were dropped into *DROPPED. */
static int migrate_journal(Server *s, int *dropped) {
    cJSON *rows = db_legacy_journal(s->db);
    const cJSON *row;
    int migrated = 0;
    cJSON_ArrayForEach(row, rows) {
        Err e = {{0}};
        const char *rel = json_str(row, "evidence");
        if (rel && db_evidence_state(s->db, rel) != 0) {
            *dropped += db_legacy_migrate(s->db, rel, NULL) == 0; /* nothing to keep */
            continue;
        }
        int rc = rel ? migrate_bundle(s, rel, (long)json_num(row, "job", 0), read_journal,
                                      cJSON_GetObjectItemCaseSensitive(row, "files"), &e)
                     : -1;
        if (rc < 0) fprintf(stderr, "farm: migrate: journal row of %s: %s\n", rel, e.msg);
        migrated += rc > 0;
    }
    cJSON_Delete(rows);
    return migrated;
}

/* Every done job filed in a folder; returns how many were migrated. */
static int migrate_folders(Server *s) {
    int migrated = 0;
    long after = 0;
    for (;;) {
        cJSON *page = db_legacy_filed(s->db, after, 64);
        if (cJSON_GetArraySize(page) == 0) {
            cJSON_Delete(page); /* the last page, empty, is freed too */
            break;
        }
        const cJSON *row;
        cJSON_ArrayForEach(row, page) {
            const char *rel = json_str(row, "evidence");
            after = (long)json_num(row, "job", 0);
            Err e = {{0}};
            Folder f = {statedir_open_dir(s->state_fd, rel, 0), (size_t)s->cfg.max_body_bytes};
            int rc = f.dir >= 0 ? migrate_bundle(s, rel, after, read_folder, &f, &e)
                                : err_set(&e, "%s: no such folder", rel);
            if (f.dir >= 0) close(f.dir);
            if (rc < 0)
                fprintf(stderr, "farm: migrate: job %ld: %s: left as it is\n", after, e.msg);
            migrated += rc > 0;
        }
        cJSON_Delete(page);
    }
    return migrated;
}

/* Source archives at blobs/AA/SHA move to blobs/AA/BB/SHA; returns how many. */
static int move_sources(Server *s) {
    int moved = 0, top = openat(s->blobs_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = top >= 0 ? fdopendir(top) : NULL;
    struct dirent *a, *f;
    while (d && (a = readdir(d)) != NULL) {
        int aa = strlen(a->d_name) == 2 ? statedir_open_dir(dirfd(d), a->d_name, 0) : -1;
        DIR *m = aa >= 0 ? fdopendir(aa) : NULL;
        while (m && (f = readdir(m)) != NULL) {
            struct stat st;
            if (!sha256_is_hex(f->d_name) ||
                fstatat(dirfd(m), f->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
                continue;
            if (!store_digest_is(dirfd(m), f->d_name, f->d_name)) { /* not moved into its name */
                fprintf(stderr, "farm: migrate: blobs/%s/%s does not hash to its name: left\n",
                        a->d_name, f->d_name);
                continue;
            }
            char bb[3] = {f->d_name[2], f->d_name[3], 0};
            int leaf = statedir_open_dir(dirfd(m), bb, 1);
            moved += leaf >= 0 && renameat(dirfd(m), f->d_name, leaf, f->d_name) == 0;
            if (leaf >= 0) {
                if (s->cfg.sync_full) fsync(leaf);
                close(leaf);
            }
        }
        if (m) closedir(m);
        else if (aa >= 0) close(aa);
    }
    if (d) closedir(d);
    else if (top >= 0) close(top);
    return moved;
}

/* Walks evidence/<version>/<run>/<machine>/<cell> (depth 4) from DIR (REL its path) and
 * removes the cell folders whose job is migrated or which no filed job points to (with
 * PEERS only those older than the grace); then the folders left empty. Links are
 * neither followed nor counted as folders. */
static void prune(Server *s, int dir, const char *rel, int depth, int peers, int *dropped) {
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
            if (sub >= 0) prune(s, sub, child, depth + 1, peers, dropped);
            unlinkat(dirfd(d), ent->d_name, AT_REMOVEDIR); /* when empty now */
            continue;
        }
        int state = db_evidence_state(s->db, child);
        if (state > 0 || (state < 0 && store_droppable(dirfd(d), ent->d_name, peers)))
            *dropped += statedir_remove(dirfd(d), ent->d_name) == 0;
    }
    closedir(d);
}

int migrate_legacy(Server *s, int peers, Err *e) {
    (void)e; /* a bundle that cannot be migrated is logged and left: the rest go on */
    int rows = 0, sources = move_sources(s), journal = migrate_journal(s, &rows);
    int folders = migrate_folders(s);
    int dropped = 0, evidence = statedir_open_dir(s->state_fd, "evidence", 0);
    if (evidence >= 0) prune(s, evidence, "evidence", 1, peers, &dropped);
    int reports = db_reports_outdated_drop(s->db);
    if (reports)
        fprintf(stderr,
                "farm: migrate: %d stored comparison(s) from before values were decoded"
                " dropped: the reporter compares those runs again\n",
                reports);
    if (sources + journal + folders + dropped + rows)
        fprintf(stderr,
                "farm: migrate: %d source archive(s) moved, %d bundle(s) from the journal and"
                " %d from folders filed by content, %d folder(s) removed, %d journal row(s)"
                " of no filed bundle dropped\n",
                sources, journal, folders, dropped, rows);
    return 0;
}
