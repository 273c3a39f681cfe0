/* sha256.c: SHA-256 as hex (see sha256.h). OpenSSL's EVP does the hashing. */
#include "lib/sha256.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
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

int sha256_file_hex(const char *path, char out[SHA256_HEX_LEN], size_t *size, Err *e) {
    FILE *f = fopen(path, "rb");
    if (!f) return err_set(e, "cannot open %s: %s", path, strerror(errno));
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int bad = !ctx || EVP_DigestInit_ex(ctx, sha256(), NULL) != 1;
    unsigned char buf[65536];
    size_t n, total = 0;
    while (!bad && (n = fread(buf, 1, sizeof buf, f)) > 0) {
        bad = EVP_DigestUpdate(ctx, buf, n) != 1;
        total += n;
    }
    bad = bad || ferror(f);
    fclose(f);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    bad = bad || EVP_DigestFinal_ex(ctx, md, &mdlen) != 1;
    EVP_MD_CTX_free(ctx);
    if (bad) {
        errno = EIO;
        return err_set(e, "cannot read %s", path);
    }
    hex_encode(md, mdlen, out);
    if (size) *size = total;
    return 0;
}

int sha256_is_hex(const char *s) {
    if (!s || strlen(s) != 64) return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return 0;
    return 1;
}
