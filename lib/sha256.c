/* sha256.c: SHA-256 as hex (see sha256.h). OpenSSL's EVP does the hashing. */
#include "lib/sha256.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "lib/hex.h"

/* SHA-256 fetched once: OpenSSL 3's implicit fetch per digest takes global locks, which
 * the coordinator's threads would queue on. */
static EVP_MD *sha256_md;
static void fetch_sha256(void) { sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL); }

static const EVP_MD *sha256(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, fetch_sha256);
    return sha256_md;
}

void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN]) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    EVP_Digest(data, len, md, &n, sha256(), NULL);
    hex_encode(md, n, out);
}

struct Sha256 {
    EVP_MD_CTX *ctx;
    int bad;
};

Sha256 *sha256_begin(void) {
    Sha256 *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->ctx = EVP_MD_CTX_new();
    h->bad = !h->ctx || EVP_DigestInit_ex(h->ctx, sha256(), NULL) != 1;
    return h;
}

int sha256_add(Sha256 *h, const void *data, size_t len) {
    h->bad = h->bad || EVP_DigestUpdate(h->ctx, data, len) != 1;
    return h->bad ? -1 : 0;
}

int sha256_end(Sha256 *h, char out[SHA256_HEX_LEN]) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    int bad = !h || h->bad || EVP_DigestFinal_ex(h->ctx, md, &mdlen) != 1;
    if (h) EVP_MD_CTX_free(h->ctx);
    free(h);
    if (!bad) hex_encode(md, mdlen, out);
    return bad ? -1 : 0;
}

int sha256_file_hex(const char *path, char out[SHA256_HEX_LEN], size_t *size, Err *e) {
    FILE *f = fopen(path, "rb");
    if (!f) return err_set(e, "cannot open %s: %s", path, strerror(errno));
    Sha256 *h = sha256_begin();
    int bad = !h;
    unsigned char buf[65536];
    size_t n, total = 0;
    while (!bad && (n = fread(buf, 1, sizeof buf, f)) > 0) {
        bad = sha256_add(h, buf, n) != 0;
        total += n;
    }
    bad = bad || ferror(f);
    fclose(f);
    if (sha256_end(h, out) != 0 || bad) {
        errno = EIO;
        return err_set(e, "cannot read %s", path);
    }
    if (size) *size = total;
    return 0;
}

int sha256_is_hex(const char *s) {
    if (!s || strlen(s) != 64) return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return 0;
    return 1;
}
