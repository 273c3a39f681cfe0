/* cairn_enclose_digest.c: SHA-256 of bracket GEMM results, for comparing machines and
 * compilers. Kept apart from cairn_enclose.c so that the arithmetic needs no libcrypto;
 * a program that calls these links -lcrypto. */
#include "cairn_enclose.h"

#include <openssl/evp.h>
#include <string.h>

struct cairn_enclose_hasher {
    EVP_MD_CTX *md;
};

cairn_enclose_hasher *cairn_enclose_digest_begin(void) {
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    if (!md || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(md);
        return NULL;
    }
    cairn_enclose_hasher *h = OPENSSL_malloc(sizeof *h);
    if (!h) {
        EVP_MD_CTX_free(md);
        return NULL;
    }
    h->md = md;
    return h;
}

/* Feeds count elements of elem_size bytes as little-endian bytes. */
static int feed(EVP_MD_CTX *md, const void *bits, size_t count, size_t elem_size) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return count == 0 || EVP_DigestUpdate(md, bits, count * elem_size) == 1 ? 0 : -1;
#else
    const unsigned char *p = bits;
    for (size_t i = 0; i < count; i++, p += elem_size) {
        unsigned char le[8];
        for (size_t b = 0; b < elem_size; b++) le[b] = p[elem_size - 1 - b];
        if (EVP_DigestUpdate(md, le, elem_size) != 1) return -1;
    }
    return 0;
#endif
}

int cairn_enclose_digest_add(cairn_enclose_hasher *h, const void *lo, const void *hi, size_t count,
                             size_t elem_size) {
    if (!h || (elem_size != 4 && elem_size != 8)) return -1;
    return feed(h->md, lo, count, elem_size) || feed(h->md, hi, count, elem_size) ? -1 : 0;
}

int cairn_enclose_digest_end(cairn_enclose_hasher *h, unsigned char out[32]) {
    if (!h) return -1;
    unsigned int len = 0;
    int ok = EVP_DigestFinal_ex(h->md, out, &len) == 1 && len == 32;
    EVP_MD_CTX_free(h->md);
    OPENSSL_free(h);
    return ok ? 0 : -1;
}

int cairn_enclose_digest(const void *lo, const void *hi, size_t count, size_t elem_size,
                         unsigned char out[32]) {
    cairn_enclose_hasher *h = cairn_enclose_digest_begin();
    if (!h) return -1;
    if (cairn_enclose_digest_add(h, lo, hi, count, elem_size)) {
        unsigned char discard[32];
        cairn_enclose_digest_end(h, discard);
        return -1;
    }
    return cairn_enclose_digest_end(h, out);
}
