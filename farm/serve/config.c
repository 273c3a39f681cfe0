/* config.c: the coordinator's config file (`cairn-farm serve --config FILE`, JSON; see
 * SERVE_HELP in serve.c and docs/farm.md). Every count and span of seconds is one row of
 * BOUNDS: its key, its field, its default and the range it must lie in, so that a new
 * limit is one row here and one field in FarmConfig. A value outside its range is
 * refused by name, never cast or clamped. */
#include "serve/serve_internal.h"

#include <assert.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef enum {
    BOUND_COUNT,  /* a long: an integer in [lo, hi] */
    BOUND_SECONDS /* a double: a number of seconds in [lo, hi] */
} BoundKind;

/* A config key read into a FarmConfig field, with its default and its range. */
typedef struct {
    const char *key;
    size_t at;
    BoundKind kind;
    double fallback, lo, hi;
} ConfigBound;

#define COUNT(key, fallback, lo, hi)                                                               \
    { #key, offsetof(FarmConfig, key), BOUND_COUNT, fallback, lo, hi }
#define SECONDS(key, fallback, lo, hi)                                                             \
    { #key, offsetof(FarmConfig, key), BOUND_SECONDS, fallback, lo, hi }

static const ConfigBound BOUNDS[] = {
    COUNT(max_body_bytes, 64L << 20, 1024, 1e12),
    COUNT(max_small_body_bytes, 65536, 1024, 1e12),
    COUNT(max_enrol_body_bytes, 256L << 10, 4096, 1e12),
    COUNT(max_json_values, 200000, 1000, 1e9),
    COUNT(max_agents, 10000, 1, 1e7),
    COUNT(index_page_rows, 100, 1, 10000),
    COUNT(max_subjects, 10000, 1, 1e7),
    COUNT(max_path_depth, 32, 2, 512),
    COUNT(max_bundle_inodes, 30000, 16, 1e7),
    COUNT(max_capabilities_bytes, 65536, 1024, 16L << 20),
    COUNT(max_challenges, 1024, 16, 1e6),
    COUNT(max_challenges_per_address, 16, 1, 1e6),
    COUNT(max_connections, 1000, 16, 1e5),
    COUNT(max_connections_per_address, 750, 1, 1e5),
    COUNT(max_anonymous, 256, 1, 1e5),
    COUNT(max_anonymous_per_address, 64, 1, 1e5),
    COUNT(max_connections_per_agent, 64, 1, 1e5),
    COUNT(max_claims_per_agent, 8, 1, 1e5),
    COUNT(max_queued_bytes, 256L << 20, 1L << 20, 1e12),
    COUNT(max_queued_bytes_per_address, 32L << 20, 65536, 1e12),
    COUNT(http_threads, 4, 1, 256),
    COUNT(work_threads, 8, 1, 256),
    COUNT(page_threads, 2, 1, 256),
    COUNT(max_queued_pages, 64, 1, 1e5),
    COUNT(max_pages_per_address, 4, 1, 1e5),
    COUNT(max_compare_observations, 1000000, 1000, 1e9),
    COUNT(max_decode_bytes, 64L << 20, 0, 1e12),
    COUNT(max_attempts, 3, 1, 1000),
    COUNT(wal_pages, 1000, 16, 1e7),
    SECONDS(header_timeout_seconds, 10, 0.001, 86400),
    SECONDS(body_timeout_seconds, 300, 0.001, 86400),
    SECONDS(anonymous_timeout_seconds, 120, 0.001, 86400),
    SECONDS(idle_timeout_seconds, 120, 0.001, 86400),
    SECONDS(agent_cache_seconds, 2, 0.001, 3600),
    SECONDS(lease_seconds, 60, 0.001, 1e6),
    SECONDS(claim_wait_max_seconds, 30, 0, 3600),
};
#define NBOUNDS (sizeof BOUNDS / sizeof BOUNDS[0])

void serve_config_defaults(FarmConfig *c) {
    *c = (FarmConfig){.sync_full = 1};
    snprintf(c->listen, sizeof c->listen, "127.0.0.1:8470");
    for (size_t i = 0; i < NBOUNDS; i++) {
        const ConfigBound *b = &BOUNDS[i];
        assert(b->lo <= b->fallback && b->fallback <= b->hi); /* a default within its range */
        if (b->kind == BOUND_COUNT) *(long *)((char *)c + b->at) = (long)b->fallback;
        else *(double *)((char *)c + b->at) = b->fallback;
    }
}

/* Reads every bounded setting J gives; the message for the last one out of its range
 * goes into RANGE (left empty when all are in range). */
static void read_bounds(const cJSON *j, FarmConfig *c, char *range, size_t cap) {
    for (size_t i = 0; i < NBOUNDS; i++) {
        const ConfigBound *b = &BOUNDS[i];
        if (b->kind == BOUND_COUNT) {
            if (json_int(j, b->key, b->lo, b->hi, (long *)((char *)c + b->at)) < 0)
                snprintf(range, cap, "\"%s\" must be an integer in [%.0f, %.0f]", b->key, b->lo,
                         b->hi);
            continue;
        }
        double *v = (double *)((char *)c + b->at);
        *v = json_num(j, b->key, *v); /* a number past its range: refused, never cast */
        if (!(*v >= b->lo && *v <= b->hi))
            snprintf(range, cap, "\"%s\" must be a number of seconds in [%g, %g]", b->key, b->lo,
                     b->hi);
    }
}

/* KEY of J, one of two words: *SECOND set when it is the second (FIRST when absent);
 * 0, or -1 for any other value. */
static int either(const cJSON *j, const char *key, const char *first, const char *second,
                  int *is_second) {
    const char *v = json_str(j, key);
    *is_second = v && !strcmp(v, second);
    int absent = !cJSON_GetObjectItemCaseSensitive(j, key);
    return absent || (v && (!strcmp(v, first) || *is_second)) ? 0 : -1;
}

/* The settings that are words: listen, the tokens, sync, store, metrics and log_format.
 * The message for what is wrong, or NULL. */
static const char *read_words(const cJSON *j, FarmConfig *c) {
    const char *listen = json_str(j, "listen"), *enrol = json_str(j, "enrol_token");
    const char *admin = json_str(j, "admin_token");
    const char *store = json_str(j, "store"), *bad = NULL;
    if (listen) snprintf(c->listen, sizeof c->listen, "%s", listen);
    snprintf(c->enrol_token, sizeof c->enrol_token, "%s", enrol ? enrol : "");
    snprintf(c->admin_token, sizeof c->admin_token, "%s", admin ? admin : "");
    int process;
    if (either(j, "log_format", "text", "json", &c->log_json) != 0)
        bad = "\"log_format\" must be \"text\" or \"json\"";
    if (either(j, "metrics", "open", "admin", &c->metrics_admin) != 0)
        bad = "\"metrics\" must be \"open\" or \"admin\"";
    if (either(j, "sync", "full", "process", &process) != 0)
        bad = "\"sync\" must be \"full\" or \"process\"";
    c->sync_full = !process;
    if (store && strcmp(store, "sqlite") != 0 && strncmp(store, "postgresql://", 13) != 0 &&
        strncmp(store, "postgres://", 11) != 0)
        bad = "\"store\" must be \"sqlite\" or a postgresql:// URI";
    snprintf(c->store, sizeof c->store, "%s", store && strcmp(store, "sqlite") ? store : "");
    return bad;
}

int config_load(const char *path, FarmConfig *c, Err *e) {
    serve_config_defaults(c);
    if (!path)
        return err_set(e, "--config FILE is required (it holds the tokens; see configs/farm.json)");
    cJSON *j = json_parse_file(path, e);
    if (!j) return -1;
    char range[160] = "";
    read_bounds(j, c, range, sizeof range);
    const char *bad = read_words(j, c);
    if (!bad && range[0]) bad = range; /* a word's message wins over a range's */
    if (bad) {
        err_set(e, "%s: %s", path, bad);
        cJSON_Delete(j);
        return -1;
    }
    cJSON_Delete(j);
    if (strlen(c->enrol_token) < 16 || strlen(c->admin_token) < 16)
        return err_set(e, "%s: enrol_token and admin_token must be at least 16 characters", path);
    return 0;
}
