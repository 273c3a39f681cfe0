/* bundle.h: checking an evidence bundle (a DSSE envelope around an in-toto Statement)
 * against a key and the files its subjects name. The coordinator runs it on every
 * upload; `cairn-farm verify` runs it offline on a filed bundle. */
#ifndef CAIRN_FARM_BUNDLE_H
#define CAIRN_FARM_BUNDLE_H

#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include "proto/util.h"

/* Where a subject's bytes come from: returns them malloc'd, or NULL when absent. */
typedef char *(*SubjectReader)(void *ctx, const char *name, size_t *len);

typedef enum {
    BUNDLE_OK = 0,
    BUNDLE_MALFORMED,     /* not an envelope/statement of the expected shape */
    BUNDLE_WRONG_KEY,     /* no signature under the expected key's id */
    BUNDLE_BAD_SIGNATURE, /* signature present but does not verify */
    BUNDLE_BAD_SUBJECT,   /* a subject file missing, unsafe or with another digest */
    BUNDLE_BAD_CLAIM,     /* the predicate says something its receipts contradict */
} BundleVerdict;

/* Where a bundle's subject files come from: READ (with CTX) gives each one's bytes; when
 * EXTRAS is not NULL, every name in the object EXTRAS must be a subject; a statement with
 * more than MAX_SUBJECTS subjects is refused before any is read. */
typedef struct {
    SubjectReader read;
    void *ctx;
    const cJSON *extras;
    size_t max_subjects;
} BundleFiles;

/* Verifies ENVELOPE with KEY, then every subject through FILES. A statement with one
 * subject twice is refused before any is read. Linear in the subjects. On success
 * returns BUNDLE_OK and the statement (owned by the caller) in *statement. */
BundleVerdict bundle_check(const cJSON *envelope, EVP_PKEY *key, const BundleFiles *files,
                           cJSON **statement, Err *e);

#endif
