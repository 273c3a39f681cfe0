/* sha256.h: SHA-256 through OpenSSL, spelled as 64 lowercase hex digits: the digests of
 * build receipts, cache keys, evidence bundles and blobs (naming: see err.h). */
#ifndef CAIRN_LIB_SHA256_H
#define CAIRN_LIB_SHA256_H

#include <stddef.h>

#include "lib/err.h"

/* 64 hex characters plus NUL. */
#define SHA256_HEX_LEN 65

void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN]);
/* The digest of the file at PATH, read in pieces (any size); its byte count in *size
 * when SIZE is not NULL. 0, or -1 with E set (and errno). */
int sha256_file_hex(const char *path, char out[SHA256_HEX_LEN], size_t *size, Err *e);
/* A digest taken piece by piece: begin (NULL when out of memory), add each piece, end
 * (which frees it, and gives 0 with the digest in OUT, or -1). */
typedef struct Sha256 Sha256;
Sha256 *sha256_begin(void);
int sha256_add(Sha256 *h, const void *data, size_t len);
int sha256_end(Sha256 *h, char out[SHA256_HEX_LEN]);
/* 1 when S is 64 lowercase hex digits. */
int sha256_is_hex(const char *s);

#endif
