/* dsse.c: Ed25519 keys, DSSE envelopes and in-toto Statements (see dsse.h).
 * Every cryptographic step is OpenSSL's EVP interface; JSON is cJSON. */
#include "proto/dsse.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/pem.h>

EVP_PKEY *dsse_key_generate(Err *e) {
    EVP_PKEY *key = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
    if (!ctx || EVP_PKEY_keygen_init(ctx) <= 0 || EVP_PKEY_keygen(ctx, &key) <= 0)
        err_set(e, "Ed25519 key generation failed");
    EVP_PKEY_CTX_free(ctx);
    return key;
}

static EVP_PKEY *require_ed25519(EVP_PKEY *key, const char *what, Err *e) {
    if (key && EVP_PKEY_id(key) != EVP_PKEY_ED25519) {
        EVP_PKEY_free(key);
        key = NULL;
    }
    if (!key) err_set(e, "%s: not an Ed25519 key in PEM form", what);
    return key;
}

typedef EVP_PKEY *(*PemReader)(FILE *, EVP_PKEY **, pem_password_cb *, void *);

static EVP_PKEY *load_pem(const char *path, PemReader read, Err *e) {
    FILE *f = fopen(path, "r");
    if (!f) {
        err_set(e, "cannot open key %s", path);
        return NULL;
    }
    EVP_PKEY *key = read(f, NULL, NULL, NULL);
    fclose(f);
    return require_ed25519(key, path, e);
}

EVP_PKEY *dsse_key_load_private(const char *path, Err *e) {
    return load_pem(path, PEM_read_PrivateKey, e);
}

EVP_PKEY *dsse_key_load_public(const char *path, Err *e) {
    return load_pem(path, PEM_read_PUBKEY, e);
}

EVP_PKEY *dsse_key_from_raw_public(const unsigned char *raw, size_t len, Err *e) {
    EVP_PKEY *key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, raw, len);
    if (!key) err_set(e, "not a raw Ed25519 public key");
    return key;
}

EVP_PKEY *dsse_key_from_public_pem(const char *pem, Err *e) {
    BIO *bio = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *key = bio ? PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    return require_ed25519(key, "public_key", e);
}

int dsse_key_save_private(EVP_PKEY *key, const char *path, Err *e) {
    BIO *bio = BIO_new(BIO_s_mem());
    if (!bio || !PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL)) {
        BIO_free(bio);
        return err_set(e, "cannot encode the private key");
    }
    char *data;
    long len = BIO_get_mem_data(bio, &data);
    int rc = fs_write_atomic(path, data, (size_t)len, e);
    BIO_free(bio);
    return rc;
}

char *dsse_key_public_pem(EVP_PKEY *key) {
    BIO *bio = BIO_new(BIO_s_mem());
    if (!bio || !PEM_write_bio_PUBKEY(bio, key)) {
        BIO_free(bio);
        return NULL;
    }
    char *data;
    long len = BIO_get_mem_data(bio, &data);
    char *out = malloc((size_t)len + 1);
    if (out) {
        memcpy(out, data, (size_t)len);
        out[len] = '\0';
    }
    BIO_free(bio);
    return out;
}

int dsse_key_id(EVP_PKEY *key, char out[SHA256_HEX_LEN]) {
    unsigned char raw[64];
    size_t len = sizeof raw;
    if (EVP_PKEY_get_raw_public_key(key, raw, &len) <= 0) return -1;
    sha256_hex(raw, len, out);
    return 0;
}

unsigned char *dsse_pae(const char *type, const void *body, size_t len, size_t *out_len) {
    char head[512];
    int n = snprintf(head, sizeof head, "DSSEv1 %zu %s %zu ", strlen(type), type, len);
    if (n < 0 || (size_t)n >= sizeof head) return NULL;
    unsigned char *out = malloc((size_t)n + len + 1);
    if (!out) return NULL;
    memcpy(out, head, (size_t)n);
    memcpy(out + n, body, len);
    *out_len = (size_t)n + len;
    return out;
}

cJSON *dsse_sign(EVP_PKEY *key, const char *payload_type, const void *payload, size_t len, Err *e) {
    size_t pae_len = 0, sig_len = 0;
    unsigned char *pae = dsse_pae(payload_type, payload, len, &pae_len);
    unsigned char sig[64];
    char kid[SHA256_HEX_LEN];
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = pae && ctx && dsse_key_id(key, kid) == 0 &&
             EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) > 0 &&
             (sig_len = sizeof sig, EVP_DigestSign(ctx, sig, &sig_len, pae, pae_len) > 0);
    EVP_MD_CTX_free(ctx);
    free(pae);
    if (!ok) {
        err_set(e, "signing failed");
        return NULL;
    }
    assert(sig_len == sizeof sig); /* an Ed25519 signature is 64 bytes */
    char *payload_b64 = util_b64_encode(payload, len);
    char *sig_b64 = util_b64_encode(sig, sig_len);
    cJSON *env = cJSON_CreateObject();
    cJSON_AddStringToObject(env, "payloadType", payload_type);
    cJSON_AddStringToObject(env, "payload", payload_b64);
    cJSON *sigs = cJSON_AddArrayToObject(env, "signatures");
    cJSON *one = cJSON_CreateObject();
    cJSON_AddStringToObject(one, "keyid", kid);
    cJSON_AddStringToObject(one, "sig", sig_b64);
    cJSON_AddItemToArray(sigs, one);
    free(payload_b64);
    free(sig_b64);
    return env;
}

static int verify_one(EVP_PKEY *key, const unsigned char *sig, size_t sig_len,
                      const unsigned char *msg, size_t msg_len) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key) > 0 &&
             EVP_DigestVerify(ctx, sig, sig_len, msg, msg_len) == 1;
    EVP_MD_CTX_free(ctx);
    return ok;
}

/* The signature entry whose keyid names KEY, or NULL. */
static const char *find_signature(const cJSON *envelope, EVP_PKEY *key) {
    char kid[SHA256_HEX_LEN];
    if (dsse_key_id(key, kid) != 0) return NULL;
    const cJSON *sigs = cJSON_GetObjectItemCaseSensitive(envelope, "signatures");
    const cJSON *one;
    cJSON_ArrayForEach(one, sigs) {
        const char *id = json_str(one, "keyid");
        if (id && !strcmp(id, kid)) return json_str(one, "sig");
    }
    return NULL;
}

unsigned char *dsse_verify(const cJSON *envelope, EVP_PKEY *key, size_t *len, Err *e) {
    return dsse_verify_type(envelope, INTOTO_PAYLOAD_TYPE, key, len, e);
}

unsigned char *dsse_verify_type(const cJSON *envelope, const char *want, EVP_PKEY *key, size_t *len,
                                Err *e) {
    const char *type = json_str(envelope, "payloadType");
    const char *payload_b64 = json_str(envelope, "payload");
    if (!type || !payload_b64 ||
        !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(envelope, "signatures"))) {
        err_set(e, "not a DSSE envelope (payloadType, payload, signatures)");
        return NULL;
    }
    if (strcmp(type, want) != 0) {
        err_set(e, "payloadType is %.80s, expected %s", type, want);
        return NULL;
    }
    const char *sig_b64 = find_signature(envelope, key);
    if (!sig_b64) {
        err_set(e, "no signature with the key id of the expected key");
        return NULL;
    }
    size_t payload_len = 0, sig_len = 0, pae_len = 0;
    unsigned char *payload = util_b64_decode(payload_b64, &payload_len);
    unsigned char *sig = util_b64_decode(sig_b64, &sig_len);
    unsigned char *pae = payload ? dsse_pae(type, payload, payload_len, &pae_len) : NULL;
    int ok = payload && sig && pae && verify_one(key, sig, sig_len, pae, pae_len);
    free(sig);
    free(pae);
    if (!ok) {
        free(payload);
        err_set(e, "signature does not verify");
        return NULL;
    }
    *len = payload_len;
    return payload;
}

cJSON *dsse_statement_parse(const unsigned char *payload, size_t len, Err *e) {
    cJSON *st = cJSON_ParseWithLength((const char *)payload, len);
    if (!st) {
        err_set(e, "payload is not JSON");
        return NULL;
    }
    const char *type = json_str(st, "_type");
    const char *ptype = json_str(st, "predicateType");
    const cJSON *subjects = cJSON_GetObjectItemCaseSensitive(st, "subject");
    const char *why = NULL;
    if (!type || strcmp(type, INTOTO_STATEMENT_TYPE) != 0)
        why = "_type is not in-toto Statement v1";
    else if (!ptype || strcmp(ptype, CAIRN_PREDICATE_TYPE) != 0)
        why = "predicateType is not the cairn suite-cell predicate";
    else if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(st, "predicate")))
        why = "predicate is not an object";
    else if (!cJSON_IsArray(subjects)) why = "subject is not an array";
    const cJSON *s;
    cJSON_ArrayForEach(s, subjects) {
        const cJSON *digest = cJSON_GetObjectItemCaseSensitive(s, "digest");
        if (!why && (!json_str(s, "name") || !sha256_is_hex(json_str(digest, "sha256"))))
            why = "a subject lacks a name or a sha256 digest";
    }
    if (why) {
        cJSON_Delete(st);
        err_set(e, "%s", why);
        return NULL;
    }
    return st;
}

cJSON *dsse_statement_new(cJSON *predicate) {
    cJSON *st = cJSON_CreateObject();
    cJSON_AddStringToObject(st, "_type", INTOTO_STATEMENT_TYPE);
    cJSON_AddArrayToObject(st, "subject");
    cJSON_AddStringToObject(st, "predicateType", CAIRN_PREDICATE_TYPE);
    cJSON_AddItemToObject(st, "predicate", predicate);
    return st;
}

void dsse_statement_add_subject(cJSON *statement, const char *name, const char *sha256) {
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "name", name);
    cJSON *digest = cJSON_AddObjectToObject(s, "digest");
    cJSON_AddStringToObject(digest, "sha256", sha256);
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(statement, "subject"), s);
}

/* The enrolment proof's payload: what it answers (the nonce) and for whom (the name). */
static cJSON *proof_payload(const char *nonce, const char *name) {
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "purpose", ENROL_PROOF_PURPOSE);
    cJSON_AddStringToObject(p, "nonce", nonce);
    cJSON_AddStringToObject(p, "name", name);
    return p;
}

cJSON *dsse_enrol_proof_sign(EVP_PKEY *key, const char *nonce, const char *name, Err *e) {
    cJSON *p = proof_payload(nonce, name);
    char *text = cJSON_PrintUnformatted(p);
    cJSON *env = dsse_sign(key, ENROL_PROOF_TYPE, text, strlen(text), e);
    free(text);
    cJSON_Delete(p);
    return env;
}

int dsse_enrol_proof_check(const cJSON *proof, EVP_PKEY *key, const char *name,
                           char nonce[SHA256_HEX_LEN], Err *e) {
    size_t len = 0;
    unsigned char *payload = dsse_verify_type(proof, ENROL_PROOF_TYPE, key, &len, e);
    cJSON *p = payload ? cJSON_ParseWithLength((const char *)payload, len) : NULL;
    free(payload);
    const char *purpose = json_str(p, "purpose"), *n = json_str(p, "nonce");
    const char *who = json_str(p, "name");
    int rc = 0;
    if (!p) rc = e->msg[0] ? -1 : err_set(e, "the proof's payload is not JSON");
    else if (!purpose || strcmp(purpose, ENROL_PROOF_PURPOSE) != 0 || !sha256_is_hex(n))
        rc = err_set(e, "the proof is not an enrolment proof with a nonce");
    else if (!who || strcmp(who, name) != 0) rc = err_set(e, "the proof is for another name");
    else snprintf(nonce, SHA256_HEX_LEN, "%s", n);
    cJSON_Delete(p);
    return rc;
}
