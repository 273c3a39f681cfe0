/* export.c: `cairn-farm export RUN DIR` (docs/farm.md, "Exporting a run"): a run's filed
 * bundles written out in the folder layout the coordinator used before it stored files
 * by content, DIR/evidence/<version>/<run>/<machine>/<cell>/ with bundle.dsse.json,
 * agent.pub.pem and every subject's file, so that `cairn-farm verify`,
 * farm/verify_openssl.sh and the plain openssl command line check them with no
 * coordinator. Every file is fetched through the dashboard's /files route, its digest
 * checked against the bundle's signed statement (the envelope's against the filed
 * bundle's SHA-256), and each bundle written is verified again from the disk. */
#include "export.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "lib/fs.h"
#include "proto/api.h"
#include "proto/dsse.h"

/* GET /files/EVIDENCE/NAME: the bytes (malloc'd) when they are DIGEST's (or, with DIGEST
 * NULL, any); NULL with E. */
static char *fetch(Http *h, const char *evidence, const char *name, const char *digest, size_t *len,
                   Err *e) {
    char path[2400];
    snprintf(path, sizeof path, "/files/%s/%s", evidence, name);
    HttpResponse r;
    ProtoError pe;
    long status = proto_send(h, &(HttpRequest){"GET", path, NULL, NULL, 0, 300}, &r, &pe);
    if (status != 200) {
        if (status >= 0) http_response_free(&r);
        proto_fail(e, path, &pe);
        return NULL;
    }
    char got[SHA256_HEX_LEN];
    sha256_hex(r.body, r.len, got);
    if (digest && strcmp(got, digest) != 0) {
        err_set(e, "%s: its SHA-256 is %.16s..., the bundle names %.16s...", path, got, digest);
        http_response_free(&r);
        return NULL;
    }
    *len = r.len;
    return r.body; /* NUL-terminated: the client's */
}

/* Writes LEN bytes of DATA to DIR/EVIDENCE/NAME as a new file (fs_create_beneath: no
 * link planted under DIR is followed, no file there overwritten); 0 or -1 with E. */
static int write_out(int dir, const char *evidence, const char *name, const char *data, size_t len,
                     Err *e) {
    char rel[4200];
    snprintf(rel, sizeof rel, "%s/%s", evidence, name);
    return fs_create_beneath(dir, rel, data, len, e); /* a copy: the coordinator keeps its own */
}

static char *read_beside(void *ctx, const char *name, size_t *len) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", (const char *)ctx, name);
    return fs_read(path, len, NULL);
}

/* Verifies the bundle written to FOLDER with the key written beside it. */
static int verify_written(const char *folder, Err *e) {
    char path[4300];
    snprintf(path, sizeof path, "%s/agent.pub.pem", folder);
    EVP_PKEY *key = dsse_key_load_public(path, e);
    snprintf(path, sizeof path, "%s/bundle.dsse.json", folder);
    cJSON *env = key ? json_parse_file(path, e) : NULL, *statement = NULL;
    BundleVerdict v =
        env ? bundle_check(env, key, &(BundleFiles){read_beside, (void *)folder, NULL, SIZE_MAX},
                           &statement, e)
            : BUNDLE_MALFORMED;
    cJSON_Delete(statement);
    cJSON_Delete(env);
    EVP_PKEY_free(key);
    return v == BUNDLE_OK ? 0 : err_set(e, "%s does not verify", folder);
}

/* The subjects of the statement in envelope ENV_TEXT (owned); NULL with E. */
static cJSON *statement_of(const char *env_text, size_t len, Err *e) {
    cJSON *env = cJSON_ParseWithLength(env_text, len);
    const char *payload = json_str(env, "payload");
    size_t n = 0;
    unsigned char *raw = payload ? util_b64_decode(payload, &n) : NULL;
    cJSON *st = raw ? dsse_statement_parse(raw, n, e) : NULL;
    if (!raw) err_set(e, "the filed bundle is not a DSSE envelope");
    free(raw);
    cJSON_Delete(env);
    return st;
}

/* One filed bundle (a result row of the run) into DIR; its files counted into *FILES. */
static int export_bundle(Http *h, const cJSON *res, const char *dir, int dir_fd, long *files,
                         Err *e) {
    const char *evidence = json_str(res, "evidence"), *sha = json_str(res, "bundle_sha256");
    if (!evidence || strncmp(evidence, "evidence/", 9) != 0 || !util_is_safe_relpath(evidence) ||
        !sha256_is_hex(sha))
        return err_set(e, "job %.0f: no evidence path or bundle digest", json_num(res, "job", 0));
    size_t len = 0;
    char *env = fetch(h, evidence, "bundle.dsse.json", sha, &len, e);
    cJSON *st = env ? statement_of(env, len, e) : NULL;
    int rc = st && write_out(dir_fd, evidence, "bundle.dsse.json", env, len, e) == 0 ? 0 : -1;
    free(env);
    const cJSON *x;
    const cJSON *subjects = rc == 0 ? cJSON_GetObjectItemCaseSensitive(st, "subject") : NULL;
    cJSON_ArrayForEach(x, subjects) {
        const char *name = json_str(x, "name");
        const char *want = json_str(cJSON_GetObjectItemCaseSensitive(x, "digest"), "sha256");
        if (!util_is_safe_relpath(name)) {
            rc = err_set(e, "%s: subject \"%.100s\" is not a safe relative path", evidence, name);
            break;
        }
        char *data = fetch(h, evidence, name, want, &len, e);
        rc = data && write_out(dir_fd, evidence, name, data, len, e) == 0 ? 0 : -1;
        free(data);
        if (rc != 0) break;
        (*files)++;
    }
    char *pem = rc == 0 ? fetch(h, evidence, "agent.pub.pem", NULL, &len, e) : NULL;
    if (rc == 0 && (!pem || write_out(dir_fd, evidence, "agent.pub.pem", pem, len, e) != 0))
        rc = -1;
    free(pem);
    cJSON_Delete(st);
    if (rc == 0) {
        char folder[4200];
        snprintf(folder, sizeof folder, "%s/%s", dir, evidence);
        rc = verify_written(folder, e);
        *files += 2;
    }
    return rc;
}

int export_run(Http *h, const char *run, const char *dir, long *bundles, long *files, Err *e) {
    char path[128];
    snprintf(path, sizeof path, "/api/v1/runs/%s/results", run);
    cJSON *results = NULL;
    ProtoError pe;
    long status = proto_call(h, &(ProtoCall){"GET", path, NULL, 60}, &results, &pe);
    if (status != 200 || !cJSON_IsArray(results)) {
        cJSON_Delete(results);
        return status != 200 ? proto_fail(e, path, &pe) : err_set(e, "%s: not a list", path);
    }
    *bundles = *files = 0;
    int fd = fs_mkdirs(dir, e) == 0 ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    int rc = fd >= 0 ? 0 : err_set(e, "cannot open the folder %s", dir);
    /* Each bundle on its own: one that cannot be exported (a file name that is also
     * another's folder, filed before uploads refused them; a blob damaged) is reported
     * and the others are still written. Before, the first failure ended the export. */
    long failed = 0, tried = 0;
    const cJSON *res;
    cJSON_ArrayForEach(res, (rc == 0 ? results : NULL)) {
        Err why = {{0}};
        tried++;
        if (export_bundle(h, res, dir, fd, files, &why) == 0) {
            (*bundles)++;
            continue;
        }
        failed++;
        fprintf(stderr, "cairn-farm export: job %.0f not exported: %s\n", json_num(res, "job", 0),
                why.msg);
        if (failed == 1) *e = why;
    }
    if (rc == 0 && failed) {
        char first[300];
        snprintf(first, sizeof first, "%.299s", e->msg);
        rc = err_set(e, "%ld of %ld bundle(s) not exported (the first: %s)", failed, tried, first);
    }
    if (fd >= 0) close(fd);
    cJSON_Delete(results);
    return rc;
}
