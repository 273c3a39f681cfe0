/* bundle.c: evidence bundle checks shared by upload and offline verification. */
#include "core/bundle.h"

#include <stdlib.h>
#include <string.h>

#include "proto/dsse.h"
#include "proto/evidence.h"
#include "core/fields.h"

/* The subjects' names, each once, into SUBJECTS (at most MAX of them). */
static BundleVerdict index_subjects(const cJSON *statement, size_t max, NameSet *subjects, Err *e) {
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(statement, "subject"), *s;
    if ((size_t)cJSON_GetArraySize(list) > max) {
        err_set(e, "%d subjects: at most %zu per bundle", cJSON_GetArraySize(list), max);
        return BUNDLE_BAD_SUBJECT;
    }
    size_t i = 0;
    cJSON_ArrayForEach(s, list) {
        const char *name = json_str(s, "name");
        if (!util_is_safe_relpath(name)) {
            err_set(e, "subject name \"%.200s\" is not a safe relative path", name);
            return BUNDLE_BAD_SUBJECT;
        }
        if (util_nameset_add(subjects, name, i++) != 0) {
            err_set(e, "subject %.200s is listed twice", name);
            return BUNDLE_BAD_SUBJECT;
        }
    }
    return BUNDLE_OK;
}

static BundleVerdict check_subjects(const cJSON *statement, const NameSet *subjects,
                                    const BundleFiles *files, Err *e) {
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(statement, "subject")) {
        const char *name = json_str(s, "name");
        const char *want = json_str(cJSON_GetObjectItemCaseSensitive(s, "digest"), "sha256");
        size_t len = 0;
        char *data = files->read(files->ctx, name, &len);
        if (!data) {
            err_set(e, "subject %s: no such file with the bundle", name);
            return BUNDLE_BAD_SUBJECT;
        }
        char got[SHA256_HEX_LEN];
        sha256_hex(data, len, got);
        free(data);
        if (strcmp(got, want) != 0) {
            err_set(e, "subject %s: sha256 is %.16s..., the statement says %.16s...", name, got,
                    want);
            return BUNDLE_BAD_SUBJECT;
        }
    }
    const cJSON *x;
    cJSON_ArrayForEach(x, files->extras) {
        if (!util_nameset_get(subjects, x->string, NULL)) {
            err_set(e, "file %.200s is not a subject of the signed statement", x->string);
            return BUNDLE_BAD_SUBJECT;
        }
    }
    return BUNDLE_OK;
}

/* Each case's "unordered" claim must be what its (signed) receipt says. */
static BundleVerdict check_claims(const cJSON *statement, const NameSet *subjects,
                                  const BundleFiles *files, Err *e) {
    const cJSON *pred = cJSON_GetObjectItemCaseSensitive(statement, "predicate");
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(pred, "cases")) {
        const char *receipt_name = json_str(c, "receipt");
        if (!receipt_name) continue; /* the build failed: no receipt to hold the case to */
        if (!util_nameset_get(subjects, receipt_name, NULL)) {
            err_set(e, "case %s: receipt %s is not a subject", json_str(c, "case"), receipt_name);
            return BUNDLE_BAD_CLAIM;
        }
        size_t len = 0;
        char *text = files->read(files->ctx, receipt_name, &len);
        cJSON *receipt = text ? cJSON_ParseWithLength(text, len) : NULL;
        free(text);
        int claimed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "unordered"));
        int actual = receipt ? evidence_receipt_is_unordered(receipt) : -1;
        cJSON_Delete(receipt);
        if (actual != claimed) {
            err_set(e, "case %s: \"unordered\" is %s but its receipt says %s", json_str(c, "case"),
                    claimed ? "true" : "false",
                    actual < 0 ? "nothing (not JSON)"
                    : actual   ? "true"
                               : "false");
            return BUNDLE_BAD_CLAIM;
        }
    }
    return BUNDLE_OK;
}

BundleVerdict bundle_check(const cJSON *envelope, EVP_PKEY *key, const BundleFiles *files,
                           cJSON **statement, Err *e) {
    *statement = NULL;
    if (!cJSON_IsObject(envelope) || !json_str(envelope, "payload") ||
        !json_str(envelope, "payloadType") ||
        !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(envelope, "signatures"))) {
        err_set(e, "not a DSSE envelope (payloadType, payload, signatures)");
        return BUNDLE_MALFORMED;
    }
    char kid[SHA256_HEX_LEN];
    dsse_key_id(key, kid);
    int has_kid = 0;
    const cJSON *sig;
    cJSON_ArrayForEach(sig, cJSON_GetObjectItemCaseSensitive(envelope, "signatures")) {
        const char *id = json_str(sig, "keyid");
        has_kid |= id && !strcmp(id, kid);
    }
    if (!has_kid) {
        err_set(e, "no signature by key %.16s... (signed by another key)", kid);
        return BUNDLE_WRONG_KEY;
    }
    size_t len = 0;
    unsigned char *payload = dsse_verify(envelope, key, &len, e);
    if (!payload) return BUNDLE_BAD_SIGNATURE;
    if (fields_has_nul((const char *)payload, len)) {
        free(payload); /* cJSON would file a name cut at the NUL */
        err_set(e, "the statement spells a NUL (\\u0000) inside a string");
        return BUNDLE_MALFORMED;
    }
    cJSON *st = dsse_statement_parse(payload, len, e);
    free(payload);
    if (!st) return BUNDLE_MALFORMED;
    NameSet subjects = {0};
    BundleVerdict v = index_subjects(st, files->max_subjects, &subjects, e);
    if (v == BUNDLE_OK) v = check_subjects(st, &subjects, files, e);
    if (v == BUNDLE_OK) v = check_claims(st, &subjects, files, e);
    util_nameset_free(&subjects);
    if (v != BUNDLE_OK) {
        cJSON_Delete(st);
        return v;
    }
    *statement = st;
    return BUNDLE_OK;
}
