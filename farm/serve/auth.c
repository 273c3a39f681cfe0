/* auth.c: who may call a route (routes.c says who must): the enrolment and admin tokens
 * from the config, compared in constant time, and agents' tokens, which the store keeps
 * only as their SHA-256, looked up through a cache so that most requests authenticate
 * without the database. */
#include "serve/serve_internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

static int token_equals(const char *given, const char *expected) {
    size_t n = strlen(expected);
    return n > 0 && strlen(given) == n && CRYPTO_memcmp(given, expected, n) == 0;
}

/* Agents by token hash, so that most requests authenticate without the database. Any
 * enrolment or revocation here empties it (both can change which token means whom); one
 * at another coordinator sharing the store reaches this cache when its entry gets older
 * than AGENT_CACHE_SECONDS, so a revoked token works nowhere for longer than that. */
#define AGENT_CACHE         4096 /* a slot per agent of a large fleet: a miss costs a database read */
#define AGENT_CACHE_SECONDS 2.0
static struct {
    char hash[SHA256_HEX_LEN];
    double read_at; /* timing_monotonic_seconds() when the database said so */
    Agent agent;
} agent_cache[AGENT_CACHE];
static pthread_mutex_t agent_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long agent_epoch; /* bumped by every flush, under agent_cache_lock */

static size_t cache_slot(const char *hash) {
    return (size_t)strtoul(
               (char[9]){hash[0], hash[1], hash[2], hash[3], hash[4], hash[5], hash[6], hash[7], 0},
               NULL, 16) %
           AGENT_CACHE;
}

/* A hit copies the agent into OUT; a miss returns the epoch to hand remember_agent. */
static int cached_agent(const char *hash, Agent *out, unsigned long *epoch) {
    size_t i = cache_slot(hash);
    pthread_mutex_lock(&agent_cache_lock);
    int hit = !strcmp(agent_cache[i].hash, hash) &&
              timing_monotonic_seconds() - agent_cache[i].read_at < AGENT_CACHE_SECONDS;
    if (hit) db_agent_copy(out, &agent_cache[i].agent);
    *epoch = agent_epoch;
    pthread_mutex_unlock(&agent_cache_lock);
    return hit;
}

/* Caches what the database said, unless a flush came in between (the answer may be
 * from before a revocation). */
static void remember_agent(const char *hash, const Agent *a, unsigned long epoch) {
    assert(a->id > 0 && !a->revoked); /* db_agent_by_token finds no revoked agent */
    size_t i = cache_slot(hash);
    pthread_mutex_lock(&agent_cache_lock);
    if (epoch == agent_epoch) {
        if (agent_cache[i].hash[0]) db_agent_free(&agent_cache[i].agent);
        snprintf(agent_cache[i].hash, SHA256_HEX_LEN, "%s", hash);
        agent_cache[i].read_at = timing_monotonic_seconds();
        db_agent_copy(&agent_cache[i].agent, a);
    }
    pthread_mutex_unlock(&agent_cache_lock);
}

void auth_forget_agents(void) {
    pthread_mutex_lock(&agent_cache_lock);
    for (size_t i = 0; i < AGENT_CACHE; i++) {
        if (agent_cache[i].hash[0]) db_agent_free(&agent_cache[i].agent);
        agent_cache[i].hash[0] = '\0';
    }
    agent_epoch++;
    pthread_mutex_unlock(&agent_cache_lock);
}

int auth_check(Server *s, AuthKind need, Request *q, Reply *r) {
    if (need == AUTH_NONE) return 0;
    if (!q->bearer) return reply_error(r, PROTO_E_NO_TOKEN, "missing Authorization: Bearer token");
    if (need == AUTH_ENROL)
        return token_equals(q->bearer, s->cfg.enrol_token)
                   ? 0
                   : reply_error(r, PROTO_E_WRONG_TOKEN, "wrong enrolment token");
    int admin = token_equals(q->bearer, s->cfg.admin_token);
    if (need == AUTH_ADMIN)
        return admin ? 0 : reply_error(r, PROTO_E_WRONG_TOKEN, "this route needs the admin token");
    if (admin && need == AUTH_AGENT_OR_ADMIN) return 0;
    char hash[SHA256_HEX_LEN];
    sha256_hex(q->bearer, strlen(q->bearer), hash);
    unsigned long epoch;
    if (cached_agent(hash, &q->agent, &epoch)) return 0;
    if (!db_agent_by_token(s->db, hash, &q->agent))
        return reply_error(r, PROTO_E_UNKNOWN_AGENT, "unknown or revoked agent token");
    remember_agent(hash, &q->agent, epoch);
    return 0;
}
