/* auth.c: who may call a route (routes.c says who must): the enrolment and admin tokens
 * from the config, compared as fixed-length digests in constant time, and agents'
 * tokens, which the store keeps only as their SHA-256, looked up through a cache so that
 * most requests authenticate without the database. And the farm these tokens are for:
 * a store remembers the fingerprint of its farm's tokens, and a coordinator configured
 * with others does not join it. */
#include "serve/serve_internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

/* Tokens are compared as their SHA-256 digests, of one fixed length, in constant time:
 * comparing the tokens themselves compared their lengths first, and a wrong length was
 * answered sooner (the length leaked). EXPECTED is a digest made at start. Never
 * inlined: tests/farm/test_security_anonymous.py counts its instructions (valgrind). */
__attribute__((noinline)) static int token_equals(const char given[SHA256_HEX_LEN],
                                                  const char *expected) {
    return CRYPTO_memcmp(given, expected, SHA256_HEX_LEN) == 0;
}

/* The fingerprint of the config's enrolment and admin tokens under SALT: PBKDF2 (SHA-256,
 * FINGERPRINT_ROUNDS) over both, so that the store keeps no token, nor anything fast to
 * guess one from. */
#define FINGERPRINT_ROUNDS 20000
static int tokens_fingerprint(const FarmConfig *cfg, const char *salt, char out[SHA256_HEX_LEN]) {
    char both[sizeof cfg->enrol_token + sizeof cfg->admin_token + 2];
    unsigned char raw[32];
    snprintf(both, sizeof both, "%s\n%s", cfg->enrol_token, cfg->admin_token);
    int ok =
        PKCS5_PBKDF2_HMAC(both, (int)strlen(both), (const unsigned char *)salt, (int)strlen(salt),
                          FINGERPRINT_ROUNDS, EVP_sha256(), sizeof raw, raw) == 1;
    OPENSSL_cleanse(both, sizeof both);
    if (ok) hex_encode(raw, sizeof raw, out);
    return ok ? 0 : -1;
}

static int random_hex(char *out, size_t bytes) {
    unsigned char raw[32];
    assert(bytes <= sizeof raw);
    if (RAND_bytes(raw, (int)bytes) != 1) return -1;
    hex_encode(raw, bytes, out);
    return 0;
}

int auth_open(Server *s, Err *e) {
    sha256_hex(s->cfg.enrol_token, strlen(s->cfg.enrol_token), s->enrol_digest);
    sha256_hex(s->cfg.admin_token, strlen(s->cfg.admin_token), s->admin_digest);
    FarmIdentity fresh = {0}, stored = {0};
    char mine[SHA256_HEX_LEN];
    if (random_hex(fresh.id, 16) != 0 || random_hex(fresh.salt, 16) != 0 ||
        tokens_fingerprint(&s->cfg, fresh.salt, fresh.tokens) != 0 ||
        db_farm_identity(s->db, &fresh, &stored) != 0 ||
        tokens_fingerprint(&s->cfg, stored.salt, mine) != 0)
        return err_set(e, "cannot read or make the farm's identity in its store");
    snprintf(s->farm_id, sizeof s->farm_id, "%s", stored.id);
    if (!strcmp(mine, stored.tokens)) return 0;
    if (!s->cfg.accept_new_tokens)
        return err_set(e,
                       "this store belongs to another farm (farm %s), whose enrolment and admin "
                       "tokens are not this config's: point the config and the store at one "
                       "farm, or, if that farm's tokens changed on purpose, start once with "
                       "--accept-new-tokens",
                       stored.id);
    log_event(s, &(LogFields){"warn", "new_tokens", .duration_ms = -1},
              "farm %s takes this config's tokens (--accept-new-tokens)", stored.id);
    return db_farm_tokens(s->db, mine) == 0 ? 0 : err_set(e, "cannot store the farm's tokens");
}

/* Agents by token hash, so that most requests authenticate without the database. A
 * revocation here empties it; an enrolment forgets the agent it enrolled (a key enrolled
 * again gets a new token, and its old one must mean nothing at once), and only that
 * one: emptying it for every enrolment sent every request of a fleet to the database
 * while 1,000 agents enrolled, and on PostgreSQL each such read is a round trip on the
 * HTTP thread, ahead of the claim it admits. One at another coordinator sharing the
 * store reaches this cache when its entry gets older than agent_cache_seconds (2 s), so
 * a revoked token works nowhere for longer than that. */

static size_t cache_slot(const char *hash) {
    return (size_t)strtoul(
               (char[9]){hash[0], hash[1], hash[2], hash[3], hash[4], hash[5], hash[6], hash[7], 0},
               NULL, 16) %
           AUTH_CACHE;
}

/* A hit copies the agent into OUT; a miss returns the epoch to hand remember_agent. */
static int cached_agent(AuthCache *c, const char *hash, Agent *out, unsigned long *epoch) {
    size_t i = cache_slot(hash);
    pthread_mutex_lock(&c->lock);
    int hit = !strcmp(c->slot[i].hash, hash) &&
              timing_monotonic_seconds() - c->slot[i].read_at < c->lifetime;
    if (hit) hit = db_agent_copy(out, &c->slot[i].agent) == 0; /* else: read the store */
    *epoch = c->epoch;
    pthread_mutex_unlock(&c->lock);
    return hit;
}

/* Whether a flush since EPOCH forgot agent ID (or all); under C's lock. */
static int forgotten_since(const AuthCache *c, unsigned long epoch, long id) {
    if (c->epoch - epoch >= AUTH_CACHE_FORGOTTEN) return 1; /* too many to tell: assume so */
    for (unsigned long e = epoch + 1; e != c->epoch + 1; e++) {
        long gone = c->forgotten[e % AUTH_CACHE_FORGOTTEN];
        if (gone == 0 || gone == id) return 1;
    }
    return 0;
}

/* Caches what the database said, unless a flush of this agent came in between (the
 * answer may be from before a revocation or a new token). */
static void remember_agent(AuthCache *c, const char *hash, const Agent *a, unsigned long epoch) {
    assert(a->id > 0 && !a->revoked); /* db_agent_by_token finds no revoked agent */
    size_t i = cache_slot(hash);
    pthread_mutex_lock(&c->lock);
    if (!forgotten_since(c, epoch, a->id)) {
        if (c->slot[i].hash[0]) db_agent_free(&c->slot[i].agent);
        c->slot[i].hash[0] = '\0';
        if (db_agent_copy(&c->slot[i].agent, a) == 0) /* out of memory: not cached */
            snprintf(c->slot[i].hash, SHA256_HEX_LEN, "%s", hash);
        c->slot[i].read_at = timing_monotonic_seconds();
    }
    pthread_mutex_unlock(&c->lock);
}

/* Forgets agent ID's entries, or every entry when ID is 0. */
static void forget(AuthCache *c, long id) {
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < AUTH_CACHE; i++)
        if (c->slot[i].hash[0] && (id == 0 || c->slot[i].agent.id == id)) {
            db_agent_free(&c->slot[i].agent);
            c->slot[i].hash[0] = '\0';
        }
    c->forgotten[++c->epoch % AUTH_CACHE_FORGOTTEN] = id; /* nor a read from before its commit */
    pthread_mutex_unlock(&c->lock);
}

void auth_forget_agent(Server *s, long id) {
    assert(id > 0);
    forget(&s->agents, id);
}

void auth_forget_agents(Server *s) { forget(&s->agents, 0); }

int auth_check(Server *s, AuthKind need, Request *q, Reply *r) {
    if (need == AUTH_NONE) return 0;
    if (!q->bearer) return reply_error(r, PROTO_E_NO_TOKEN, "missing Authorization: Bearer token");
    char hash[SHA256_HEX_LEN];
    sha256_hex(q->bearer, strlen(q->bearer), hash);
    if (need == AUTH_ENROL)
        return token_equals(hash, s->enrol_digest)
                   ? 0
                   : reply_error(r, PROTO_E_WRONG_TOKEN, "wrong enrolment token");
    int admin = token_equals(hash, s->admin_digest);
    if (need == AUTH_ADMIN)
        return admin ? 0 : reply_error(r, PROTO_E_WRONG_TOKEN, "this route needs the admin token");
    if (admin && need == AUTH_AGENT_OR_ADMIN) return 0;
    unsigned long epoch;
    if (cached_agent(&s->agents, hash, &q->agent, &epoch)) return 0;
    int found = db_agent_by_token(s->db, hash, &q->agent);
    if (found == DB_UNAVAILABLE)
        return reply_error(r, PROTO_E_STORE_UNAVAILABLE, "the store failed: retry");
    if (found == DB_SUPERSEDED) /* two agents share a key: this one stops (issue 39) */
        return reply_error(r, PROTO_E_TOKEN_SUPERSEDED,
                           "this agent's key was enrolled again since: another agent has it");
    if (!found) return reply_error(r, PROTO_E_UNKNOWN_AGENT, "unknown or revoked agent token");
    remember_agent(&s->agents, hash, &q->agent, epoch);
    return 0;
}
