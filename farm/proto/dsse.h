/* dsse.h: evidence signing shared by cairn-agent (signs) and cairn-farm (verifies):
 * Ed25519 keys through OpenSSL EVP, DSSE's pre-authentication encoding (PAE) and the
 * DSSE envelope around an in-toto Statement v1. */
#ifndef CAIRN_FARM_DSSE_H
#define CAIRN_FARM_DSSE_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include <openssl/evp.h>

#include "proto/util.h"

#define INTOTO_PAYLOAD_TYPE   "application/vnd.in-toto+json"
#define INTOTO_STATEMENT_TYPE "https://in-toto.io/Statement/v1"
#define CAIRN_PREDICATE_TYPE  "https://cairn.dev/evidence/suite-cell/v1"

/* Keys: private keys live in PKCS#8 PEM files, public keys in SubjectPublicKeyInfo PEM
 * (what `openssl pkey -pubout` prints). The key id is the SHA-256 of the 32 raw bytes. */
EVP_PKEY *dsse_key_generate(Err *e);
EVP_PKEY *dsse_key_load_private(const char *path, Err *e);
EVP_PKEY *dsse_key_load_public(const char *path, Err *e);
EVP_PKEY *dsse_key_from_raw_public(const unsigned char *raw, size_t len, Err *e);
int dsse_key_save_private(EVP_PKEY *key, const char *path, Err *e);
char *dsse_key_public_pem(EVP_PKEY *key); /* malloc'd */
EVP_PKEY *dsse_key_from_public_pem(const char *pem, Err *e);
int dsse_key_id(EVP_PKEY *key, char out[SHA256_HEX_LEN]);

/* PAE(type, body) = "DSSEv1" SP len(type) SP type SP len(body) SP body. malloc'd. */
unsigned char *dsse_pae(const char *type, const void *body, size_t len, size_t *out_len);

/* Envelope {payloadType, payload (base64), signatures: [{keyid, sig (base64)}]}. */
cJSON *dsse_sign(EVP_PKEY *key, const char *payload_type, const void *payload, size_t len, Err *e);
/* Checks that a signature by KEY (matched by keyid) verifies over the PAE, and returns
 * the decoded payload (malloc'd) and its length. */
unsigned char *dsse_verify(const cJSON *envelope, EVP_PKEY *key, size_t *len, Err *e);
/* The same for an envelope whose payloadType must be WANT. */
unsigned char *dsse_verify_type(const cJSON *envelope, const char *want, EVP_PKEY *key, size_t *len,
                                Err *e);

/* Enrolment's proof of key possession (docs/farm.md, "Enrolment"): a DSSE envelope of
 * type ENROL_PROOF_TYPE, signed by the agent's key, whose payload is
 * {"purpose": "cairn-farm enrol", "nonce": the coordinator's challenge, "name": NAME}. */
#define ENROL_PROOF_TYPE    "application/vnd.cairn.enrol-proof+json"
#define ENROL_PROOF_PURPOSE "cairn-farm enrol"
cJSON *dsse_enrol_proof_sign(EVP_PKEY *key, const char *nonce, const char *name, Err *e);
/* 0 when PROOF is signed by KEY and names NAME; the nonce it answers goes to NONCE
 * (the caller checks that it issued it). */
int dsse_enrol_proof_check(const cJSON *proof, EVP_PKEY *key, const char *name,
                           char nonce[SHA256_HEX_LEN], Err *e);

/* The in-toto Statement inside a verified envelope, checked for its _type and
 * predicateType; every subject must have a name and a sha256 digest. */
cJSON *dsse_statement_parse(const unsigned char *payload, size_t len, Err *e);
/* A new Statement with the cairn predicate type and an empty subject list. */
cJSON *dsse_statement_new(cJSON *predicate);
void dsse_statement_add_subject(cJSON *statement, const char *name, const char *sha256);

#endif
