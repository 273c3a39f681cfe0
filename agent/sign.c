/* sign.c: `cairn-agent sign`, the agent's signing for evidence made without a
 * coordinator (make gpu): every file under a folder becomes a subject of an in-toto
 * Statement around a given predicate, signed into a DSSE envelope exactly as the job
 * loop signs its uploads (dsse_sign over the PAE), and written beside the files as
 * bundle.dsse.json with the public key as agent.pub.pem: the layout the coordinator
 * files, so `cairn-farm verify` and farm/verify_openssl.sh check it unchanged. */
#include "agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/archive.h"
#include "proto/dsse.h"

static const char SIGN_HELP[] =
    "usage: cairn-agent sign --predicate PREDICATE.json --files DIR --key KEYFILE\n"
    "\n"
    "Signs every file under DIR (by path relative to DIR and SHA-256) as the subjects of\n"
    "an in-toto Statement v1 whose predicate is PREDICATE.json (the cairn predicate type),\n"
    "with the Ed25519 key KEYFILE, and writes DIR/bundle.dsse.json and DIR/agent.pub.pem.\n"
    "Check it with `cairn-farm verify DIR/bundle.dsse.json --key DIR/agent.pub.pem`.\n"
    "Exit: 0 signed, 1 a file or key could not be read or written, 2 a bad flag.\n";

/* The files under DIR as subjects, their digests taken by the archive packer. */
static int add_subjects(cJSON *statement, const char *dir, Err *e) {
    size_t len = 0;
    char *packed = archive_pack(dir, &len, e);
    cJSON *archive = packed ? cJSON_ParseWithLength(packed, len) : NULL;
    free(packed);
    if (!archive) return packed ? err_set(e, "cannot read the files under %s", dir) : -1;
    const cJSON *f;
    int n = 0;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(archive, "files")) {
        const char *path = json_str(f, "path");
        if (!path || !strcmp(path, "bundle.dsse.json") || !strcmp(path, "agent.pub.pem")) continue;
        dsse_statement_add_subject(statement, path, json_str(f, "sha256"));
        n++;
    }
    cJSON_Delete(archive);
    return n > 0 ? 0 : err_set(e, "no files to sign under %s", dir);
}

static int sign_folder(const char *predicate_path, const char *dir, const char *key_path, Err *e) {
    EVP_PKEY *key = dsse_key_load_private(key_path, e);
    cJSON *predicate = key ? json_parse_file(predicate_path, e) : NULL;
    if (!predicate) {
        EVP_PKEY_free(key);
        return -1;
    }
    cJSON *statement = dsse_statement_new(predicate);
    int rc = add_subjects(statement, dir, e);
    char *payload = rc == 0 ? cJSON_PrintUnformatted(statement) : NULL;
    cJSON *env = payload ? dsse_sign(key, INTOTO_PAYLOAD_TYPE, payload, strlen(payload), e) : NULL;
    char *text = env ? cJSON_Print(env) : NULL, *pem = env ? dsse_key_public_pem(key) : NULL;
    char path[4200];
    rc = text && pem ? 0 : -1;
    snprintf(path, sizeof path, "%s/bundle.dsse.json", dir);
    if (rc == 0) rc = fs_write_atomic(path, text, strlen(text), e);
    snprintf(path, sizeof path, "%s/agent.pub.pem", dir);
    if (rc == 0) rc = fs_write_atomic(path, pem, strlen(pem), e);
    free(pem);
    free(text);
    cJSON_Delete(env);
    free(payload);
    cJSON_Delete(statement);
    EVP_PKEY_free(key);
    return rc;
}

int sign_main(int argc, char **argv) {
    const char *predicate = NULL, *dir = NULL, *key = NULL;
    for (int i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(SIGN_HELP, stdout);
            return 0;
        } else if (!strcmp(argv[i], "--predicate") && next) {
            predicate = argv[++i];
        } else if (!strcmp(argv[i], "--files") && next) {
            dir = argv[++i];
        } else if (!strcmp(argv[i], "--key") && next) {
            key = argv[++i];
        } else {
            fprintf(stderr, "cairn-agent sign: unexpected \"%s\"\n%s", argv[i], SIGN_HELP);
            return 2;
        }
    }
    if (!predicate || !dir || !key) {
        fprintf(stderr, "cairn-agent sign: needs --predicate, --files and --key\n%s", SIGN_HELP);
        return 2;
    }
    Err e = {{0}};
    if (sign_folder(predicate, dir, key, &e) != 0) {
        fprintf(stderr, "cairn-agent sign: %s\n", e.msg);
        return 1;
    }
    printf("signed %s/bundle.dsse.json\n", dir);
    return 0;
}
