/* metrics.c: GET /metrics in Prometheus' text exposition format (version 0.0.4), for an
 * operator who runs the coordinator beside other services (docs/farm.md, "CI and
 * monitoring"). Counters are relaxed atomics bumped where things happen (answers,
 * claims, filings, refusals, blobs, collections), so counting costs a few instructions
 * on the paths that run thousands of times a second; the store's counts (jobs, runs,
 * agents, bundles) are read when the page is asked for (db_metrics). Every series is
 * named cairn_farm_*; rates are the scraper's to compute from the counters. */
#include "serve/serve_internal.h"
#include "serve/conns_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ADD(field, n) atomic_fetch_add_explicit(&(field), (n), memory_order_relaxed)
#define GET(field)    atomic_load_explicit(&(field), memory_order_relaxed)

static const int CODES[METRICS_CODES - 1] = {200, 201, 204, 400, 401, 403, 404, 405,
                                             409, 413, 415, 422, 429, 500, 503};
/* The claim latency histogram's upper bounds, in seconds. */
static const double BUCKETS[METRICS_BUCKETS] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                0.025,  0.05,    0.1,    0.25,  0.5,    1.0};
static const char *const BOUND_NAMES[REFUSED_COUNT] = {"max_body_bytes",
                                                       "max_connections_per_agent",
                                                       "max_claims_per_agent",
                                                       "max_queued_bytes",
                                                       "max_queued_bytes_per_address",
                                                       "max_queued_pages",
                                                       "max_pages_per_address",
                                                       "max_challenges",
                                                       "max_challenges_per_address",
                                                       "deadlines"};

void metrics_http(Server *s, const Route *route, int status) {
    int row = route ? route_index(route) : route_count();
    int col = METRICS_CODES - 1;
    for (int i = 0; i < METRICS_CODES - 1; i++)
        if (CODES[i] == status) col = i;
    if (row >= 0 && row < METRICS_ROUTES) ADD(s->metrics.http[row][col], 1);
}

void metrics_claim(Server *s, double seconds, int claimed) {
    int b = 0;
    while (b < METRICS_BUCKETS && seconds > BUCKETS[b]) b++;
    ADD(s->metrics.claim_buckets[b], 1);
    ADD(s->metrics.claim_us, seconds > 0 ? (unsigned long)(seconds * 1e6) : 0);
    if (claimed) ADD(s->metrics.claims_job, 1);
    else ADD(s->metrics.claims_none, 1);
}

void metrics_filing(Server *s, int filed) {
    if (filed) ADD(s->metrics.filed, 1);
    else ADD(s->metrics.filings_refused, 1);
}

void metrics_refused(Server *s, MetricsBound b, unsigned long n) {
    if (b >= 0 && b < REFUSED_COUNT && n) ADD(s->metrics.refused[b], n);
}

void metrics_blob_written(Server *s, size_t bytes) {
    ADD(s->metrics.blobs_written, 1);
    ADD(s->metrics.blob_bytes_written, bytes);
}

void metrics_gc(Server *s, const cJSON *done) {
    ADD(s->metrics.gc_runs, 1);
    ADD(s->metrics.gc_removed, (unsigned long)json_num(done, "removed", 0));
    ADD(s->metrics.gc_bytes_removed, (unsigned long)json_num(done, "bytes_removed", 0));
    atomic_store_explicit(&s->metrics.gc_kept, (long)json_num(done, "blobs", 0),
                          memory_order_relaxed);
}

/* A metric's HELP and TYPE lines. */
static void head(FILE *out, const char *name, const char *type, const char *help) {
    fprintf(out, "# HELP cairn_farm_%s %s\n# TYPE cairn_farm_%s %s\n", name, help, name, type);
}

/* A label value, escaped as the format says (backslash, quote, newline). */
static void label(FILE *out, const char *v) {
    for (; *v; v++) {
        if (*v == '\\' || *v == '"') fputc('\\', out), fputc(*v, out);
        else if (*v == '\n') fputs("\\n", out);
        else fputc(*v, out);
    }
}

static void http_series(FILE *out, Server *s) {
    head(out, "http_requests_total", "counter", "HTTP requests answered, by route and status.");
    for (int row = 0; row <= route_count() && row < METRICS_ROUTES; row++) {
        const Route *r = route_at(row);
        for (int col = 0; col < METRICS_CODES; col++) {
            unsigned long n = GET(s->metrics.http[row][col]);
            if (!n) continue;
            fputs("cairn_farm_http_requests_total{route=\"", out);
            if (r) fprintf(out, "%s ", r->method), label(out, r->pattern);
            else fputs("none", out);
            if (col < METRICS_CODES - 1) fprintf(out, "\",status=\"%d\"} %lu\n", CODES[col], n);
            else fprintf(out, "\",status=\"other\"} %lu\n", n);
        }
    }
}

static void claim_series(FILE *out, Server *s) {
    head(out, "claim_duration_seconds", "histogram",
         "Time a claim's try took in its handler (the store's claim), not its long poll.");
    unsigned long total = 0;
    for (int b = 0; b <= METRICS_BUCKETS; b++) {
        total += GET(s->metrics.claim_buckets[b]);
        if (b < METRICS_BUCKETS)
            fprintf(out, "cairn_farm_claim_duration_seconds_bucket{le=\"%g\"} %lu\n", BUCKETS[b],
                    total);
    }
    fprintf(out, "cairn_farm_claim_duration_seconds_bucket{le=\"+Inf\"} %lu\n", total);
    fprintf(out, "cairn_farm_claim_duration_seconds_sum %.6f\n",
            (double)GET(s->metrics.claim_us) / 1e6);
    fprintf(out, "cairn_farm_claim_duration_seconds_count %lu\n", total);
    head(out, "claims_total", "counter", "Claims' tries, by whether they found a job.");
    fprintf(out, "cairn_farm_claims_total{result=\"job\"} %lu\n", GET(s->metrics.claims_job));
    fprintf(out, "cairn_farm_claims_total{result=\"none\"} %lu\n", GET(s->metrics.claims_none));
    head(out, "filings_total", "counter", "Bundle uploads, filed or refused.");
    fprintf(out, "cairn_farm_filings_total{result=\"filed\"} %lu\n", GET(s->metrics.filed));
    fprintf(out, "cairn_farm_filings_total{result=\"refused\"} %lu\n",
            GET(s->metrics.filings_refused));
}

static void bound_series(FILE *out, Server *s) {
    head(out, "refused_total", "counter",
         "Requests refused or connections closed, by the bound (config key) they met.");
    for (int b = 0; b < REFUSED_COUNT; b++)
        fprintf(out, "cairn_farm_refused_total{bound=\"%s\"} %lu\n", BOUND_NAMES[b],
                GET(s->metrics.refused[b]));
    unsigned long all, per_address;
    conns_closed_anonymous(s->conns, &all, &per_address);
    fprintf(out, "cairn_farm_refused_total{bound=\"max_anonymous\"} %lu\n", all);
    fprintf(out, "cairn_farm_refused_total{bound=\"max_anonymous_per_address\"} %lu\n",
            per_address);
    head(out, "blobs_written_total", "counter", "Blobs this coordinator wrote (new content).");
    fprintf(out, "cairn_farm_blobs_written_total %lu\n", GET(s->metrics.blobs_written));
    head(out, "blob_bytes_written_total", "counter", "Bytes of the blobs it wrote.");
    fprintf(out, "cairn_farm_blob_bytes_written_total %lu\n", GET(s->metrics.blob_bytes_written));
    head(out, "gc_runs_total", "counter", "Collections run here.");
    fprintf(out, "cairn_farm_gc_runs_total %lu\n", GET(s->metrics.gc_runs));
    head(out, "gc_removed_blobs_total", "counter", "Blobs collections removed.");
    fprintf(out, "cairn_farm_gc_removed_blobs_total %lu\n", GET(s->metrics.gc_removed));
    head(out, "gc_removed_bytes_total", "counter", "Bytes collections removed.");
    fprintf(out, "cairn_farm_gc_removed_bytes_total %lu\n", GET(s->metrics.gc_bytes_removed));
    long kept = GET(s->metrics.gc_kept);
    if (kept > 0) {
        head(out, "blobs", "gauge", "Blobs in the store, as the latest collection counted.");
        fprintf(out, "cairn_farm_blobs %ld\n", kept);
    }
}

/* Agents alive: heard from by this coordinator within twice the lease and the longest
 * long poll (WebSeen), the others enrolled and not revoked are lost. */
static long agents_alive(Server *s) {
    double since = timing_now_seconds() - 2 * s->cfg.lease_seconds - s->cfg.claim_wait_max_seconds;
    long alive = 0;
    pthread_mutex_lock(&s->seen.lock);
    for (int i = 0; i < WEB_SEEN_SLOTS; i++)
        alive += s->seen.slot[i].id > 0 && s->seen.slot[i].at >= since;
    pthread_mutex_unlock(&s->seen.lock);
    return alive;
}

static void store_series(FILE *out, Server *s, const DbMetrics *m) {
    head(out, "jobs", "gauge", "Jobs by state.");
    for (int i = 0; i < 5; i++)
        fprintf(out, "cairn_farm_jobs{state=\"%s\"} %ld\n", db_job_states[i], m->jobs[i]);
    head(out, "queue_depth", "gauge", "Jobs queued, waiting for an agent.");
    fprintf(out, "cairn_farm_queue_depth %ld\n", m->jobs[0]);
    head(out, "runs", "gauge", "Runs by state.");
    fprintf(out, "cairn_farm_runs{state=\"active\"} %ld\n", m->runs_active);
    fprintf(out, "cairn_farm_runs{state=\"finished\"} %ld\n", m->runs_finished);
    fprintf(out, "cairn_farm_runs{state=\"cancelled\"} %ld\n", m->runs_cancelled);
    long alive = agents_alive(s), live = m->agents - m->agents_revoked;
    alive = alive < live ? alive : live;
    head(out, "agents", "gauge", "Agents by state: alive (heard from lately), lost, revoked.");
    fprintf(out, "cairn_farm_agents{state=\"alive\"} %ld\n", alive);
    fprintf(out, "cairn_farm_agents{state=\"lost\"} %ld\n", live - alive);
    fprintf(out, "cairn_farm_agents{state=\"revoked\"} %ld\n", m->agents_revoked);
    head(out, "bundles", "gauge", "Evidence bundles filed.");
    fprintf(out, "cairn_farm_bundles %ld\n", m->bundles);
    head(out, "source_archives", "gauge", "Source archives stored.");
    fprintf(out, "cairn_farm_source_archives %ld\n", m->sources);
    head(out, "source_archive_bytes", "gauge", "Bytes of the source archives stored.");
    fprintf(out, "cairn_farm_source_archive_bytes %ld\n", m->source_bytes);
    head(out, "db_pool_waits_total", "counter", "Store connections waited for (none free).");
    fprintf(out, "cairn_farm_db_pool_waits_total %lu\n", m->pool_waits);
    head(out, "db_pool_wait_seconds_total", "counter", "Time spent waiting for them.");
    fprintf(out, "cairn_farm_db_pool_wait_seconds_total %.6f\n", m->pool_wait_seconds);
}

void metrics_route(Server *s, Request *q, Reply *r) {
    if (s->cfg.metrics_admin && auth_check(s, AUTH_ADMIN, q, r) != 0) return;
    DbMetrics m;
    if (db_metrics(s->db, &m) != 0) {
        reply_error(r, PROTO_E_INTERNAL, "the store did not answer");
        return;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    store_series(out, s, &m);
    claim_series(out, s);
    http_series(out, s);
    bound_series(out, s);
    fclose(out);
    reply_raw(r, text, len, "text/plain; version=0.0.4; charset=utf-8");
}
