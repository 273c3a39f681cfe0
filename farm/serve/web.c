/* web.c: the dashboard's shared pieces and its index (see web_internal.h). Each page is
 * built into one memory stream from the same views the API answers (db_status_view,
 * db_run_view) and the same comparison `cairn-farm compare` prints (compare.c), kept per
 * run by report.c. Case paths, machine names and cell ids are checked at submission,
 * enrolment and upload, but everything an agent or a submitter sent (capabilities,
 * promises, details, digests, branch names) is escaped here all the same. */
#include "serve/web_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"

/* --- small pieces --------------------------------------------------------------------- */

void web_esc(FILE *out, const char *s) {
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default: fputc(*s, out);
        }
    }
}

/* A URL path piece: safe characters as they are, anything else percent-encoded. */
void web_url(FILE *out, const char *s) {
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            strchr("/._+-", c))
            fputc(c, out);
        else fprintf(out, "%%%02X", c);
    }
}

static const char STYLE[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse}"
    "td,th{border:1px solid #bbb;padding:3px 7px;vertical-align:top;font-size:14px}"
    "th{background:#eee}code{font-size:12px}a{color:#0645ad}.small{font-size:12px}"
    ".identical{background:#c8efc8}.within-bound{background:#e3f4b0}"
    ".no-evidence{background:#e4e4e4}.violates-contract{background:#f7b6b6}"
    ".differs-where-fixed{background:#f29a9a;font-weight:bold}.pending{background:#fff}"
    "nav a{margin-right:1em}.flaky{outline:3px dashed #b15c00;outline-offset:-3px}"
    "dl{display:grid;grid-template-columns:max-content auto;gap:2px 12px}dt{font-weight:bold}"
    "dd{margin:0}.diff{font-size:12px;color:#7a1010}.same{font-size:12px;color:#555}"
    "form{margin:0.5em 0}.grid td{font-size:11px;text-align:center;min-width:1.6em}"
    ".kind{background:#f5f5f5}";

/* The page's head: no script may run, nothing is fetched from elsewhere. */
FILE *web_page_open(char **html, size_t *len, const char *title, int refresh) {
    FILE *out = open_memstream(html, len);
    fprintf(out, "<!doctype html><html lang=en><head><meta charset=utf-8>"
                 "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; "
                 "style-src 'unsafe-inline'; img-src 'self'\">");
    if (refresh) fprintf(out, "<meta http-equiv=refresh content=%d>", refresh);
    fprintf(out, "<title>");
    web_esc(out, title);
    fprintf(out,
            "</title><style>%s</style></head><body><nav><a href=\"/\">runs</a>"
            "<a href=\"/grid\">cases by run</a><a href=\"/#machines\">machines</a></nav><h1>",
            STYLE);
    web_esc(out, title);
    fprintf(out, "</h1>");
    return out;
}

void web_page_close(FILE *out, char **html, size_t *len, Reply *r) {
    fprintf(out, "</body></html>\n");
    fclose(out); /* sets *html and *len */
    reply_raw(r, *html, *len, "text/html; charset=utf-8");
}

long web_run_id(const char *arg) {
    char *end = NULL;
    long id = arg ? strtol(arg, &end, 10) : 0;
    return end && *end == '\0' && id > 0 ? id : 0;
}

const char *web_arg(const Request *q, const char *key) {
    for (const char *at = q->query; at && *at;) {
        const char *value = at + strlen(at) + 1;
        if (!strcmp(at, key)) return *value ? value : NULL;
        at = value + strlen(value) + 1;
    }
    return NULL;
}

void web_duration(FILE *out, double seconds) {
    if (!(seconds >= 0) || !isfinite(seconds)) fputs("-", out);
    else if (seconds < 10) fprintf(out, "%.2f s", seconds);
    else if (seconds < 120) fprintf(out, "%.0f s", seconds);
    else if (seconds < 7200)
        fprintf(out, "%.0f min %.0f s", floor(seconds / 60), fmod(seconds, 60));
    else fprintf(out, "%.0f h %.0f min", floor(seconds / 3600), fmod(seconds, 3600) / 60);
}

void web_span(FILE *out, const cJSON *row, const char *from, const char *to) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(row, from);
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(row, to);
    web_duration(out,
                 cJSON_IsNumber(a) && cJSON_IsNumber(b) ? b->valuedouble - a->valuedouble : -1);
}

void web_text(FILE *out, const char *s) {
    if (s && *s) web_esc(out, s);
    else fputs("-", out);
}

void web_machine_link(FILE *out, const char *name) {
    if (!name) {
        fputs("-", out);
        return;
    }
    fprintf(out, "<a href=\"/machines/");
    web_url(out, name);
    fprintf(out, "\">");
    web_esc(out, name);
    fprintf(out, "</a>");
}

/* --- when agents were last heard from -------------------------------------------------- */

void web_agent_seen(Server *s, long id) {
    WebSeen *w = &s->seen;
    size_t slot = (unsigned long)id % WEB_SEEN_SLOTS;
    pthread_mutex_lock(&w->lock);
    w->slot[slot].id = id;
    w->slot[slot].at = timing_now_seconds();
    pthread_mutex_unlock(&w->lock);
}

double web_last_heard(Server *s, const cJSON *agent) {
    WebSeen *w = &s->seen;
    long id = (long)json_num(agent, "id", 0);
    double fallback = json_num(agent, "last_seen", 0);
    size_t slot = (unsigned long)id % WEB_SEEN_SLOTS;
    pthread_mutex_lock(&w->lock);
    double at = w->slot[slot].id == id ? w->slot[slot].at : fallback;
    pthread_mutex_unlock(&w->lock);
    return at > fallback ? at : fallback;
}

void web_utc(FILE *out, double t) {
    if (!(t > 0)) {
        fputs("-", out);
        return;
    }
    char text[64];
    time_t secs = (time_t)t;
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
    fputs(text, out);
}

void web_time(FILE *out, double t) {
    web_utc(out, t);
    if (t > 0) fprintf(out, " UTC (%.0f s ago)", timing_now_seconds() - t);
}

void web_job_cells(FILE *out, const cJSON *job, const char *note) {
    fprintf(out, "<td>%.0f<td class=small>", json_num(job, "attempt", 0));
    web_utc(out, json_num(job, "claimed_at", 0));
    fprintf(out, "<td class=small>");
    web_span(out, job, "claimed_at", "finished_at");
    fprintf(out, "<td>");
    web_text(out, json_str(job, "result"));
    fprintf(out, "<td class=small>");
    web_text(out, note);
    fprintf(out, "</tr>");
}

/* --- / : runs and machines ------------------------------------------------------------ */

/* A run's result on the index: from its stored comparison once the run has finished
 * (the index compares nothing itself: report.c). */
static void run_result(FILE *out, const cJSON *summary, int busy) {
    const cJSON *c;
    fprintf(out, "<td class=small>");
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(summary, "counts")) {
        if (c->valuedouble > 0)
            fprintf(out, "<span class=%s>%.0f %s</span> ", c->string, c->valuedouble, c->string);
    }
    int ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(summary, "ok"));
    if (busy) fprintf(out, "<td class=pending>running</tr>");
    else if (!summary) fprintf(out, "<td class=pending>comparing</tr>");
    else if (json_str(summary, "refused")) fprintf(out, "<td class=no-evidence>not compared</tr>");
    else
        fprintf(out, "<td class=%s>%s</tr>",
                results_verdict_name(ok ? VERDICT_IDENTICAL : VERDICT_DIFFERS_WHERE_FIXED),
                ok ? "no promise broken" : "FAILED");
}

/* Who submitted run RUN and from which source: submitter, commit (12 digits), branch. */
static void run_origin(FILE *out, const cJSON *run) {
    const char *commit = json_str(run, "commit");
    fprintf(out, "<td class=small>");
    web_text(out, json_str(run, "submitter"));
    fprintf(out, "<td class=small><code title=\"");
    web_esc(out, commit);
    fprintf(out, "\">%.12s</code><td class=small>", commit ? commit : "-");
    web_text(out, json_str(run, "branch"));
}

static void runs_table(Server *s, FILE *out, const cJSON *runs) {
    fprintf(out, "<h2 id=runs>Runs</h2><table><tr><th>run<th>submitted (UTC)<th>took"
                 "<th>submitter<th>commit<th>branch<th>source<th>jobs<th>queued"
                 "<th>running<th>done<th>failed<th>cancelled<th>verdicts<th>result</tr>");
    int n = cJSON_GetArraySize(runs);
    long first = (long)json_num(cJSON_GetArrayItem(runs, n > 100 ? n - 100 : 0), "id", 0);
    cJSON *summaries =
        db_report_summaries(s->db, first, (long)json_num(cJSON_GetArrayItem(runs, n - 1), "id", 0));
    for (int i = n - 1; i >= 0 && i >= n - 100; i--) { /* the newest hundred */
        const cJSON *run = cJSON_GetArrayItem(runs, i);
        long id = (long)json_num(run, "id", 0);
        char key[32];
        snprintf(key, sizeof key, "%ld", id);
        int busy = json_num(run, "queued", 0) + json_num(run, "running", 0) > 0;
        fprintf(out, "<tr><td><a href=\"/runs/%ld\">run %ld</a><td class=small>", id, id);
        web_utc(out, json_num(run, "created_at", 0));
        fprintf(out, "<td class=small>");
        web_span(out, run, "created_at", "finished");
        run_origin(out, run);
        fprintf(out, "<td><code>%.12s</code>",
                json_str(run, "source_sha") ? json_str(run, "source_sha") : "");
        static const char *const keys[] = {"jobs",   "queued",    "running", "done",
                                           "failed", "cancelled", NULL};
        for (int k = 0; keys[k]; k++) fprintf(out, "<td>%.0f", json_num(run, keys[k], 0));
        run_result(out, cJSON_GetObjectItemCaseSensitive(summaries, key), busy);
    }
    cJSON_Delete(summaries);
    fprintf(out, "</table>");
}

void web_gpus(FILE *out, const cJSON *caps) {
    const cJSON *g;
    int any = 0;
    cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(caps, "gpus")) {
        any = 1;
        web_esc(out, json_str(g, "name"));
        fprintf(out, " (compute capability ");
        web_esc(out, json_str(g, "compute_cap"));
        fprintf(out, ", %.0f MiB)<br>", json_num(g, "memory_mib", 0));
    }
    if (any) {
        fprintf(out, "driver ");
        web_esc(out, json_str(caps, "driver"));
        fprintf(out, ", CUDA ");
        web_esc(out, json_str(caps, "cuda"));
    } else {
        fprintf(out, "none");
    }
}

void web_compilers(FILE *out, const cJSON *caps) {
    const cJSON *c, *l;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(caps, "compilers")) {
        web_esc(out, c->string);
        fprintf(out, " ");
        web_esc(out, json_str(c, "version"));
        cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(c, "sanitizers")) {
            fprintf(out, " +");
            web_esc(out, cJSON_IsString(l) ? l->valuestring : "");
        }
        fprintf(out, "<br>");
    }
}

int web_labels(FILE *out, const cJSON *caps) {
    const cJSON *l;
    int n = 0;
    cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(caps, "labels")) {
        web_esc(out, cJSON_IsString(l) ? l->valuestring : "");
        fprintf(out, " ");
        n++;
    }
    return n;
}

static void machines_table(Server *s, FILE *out, const cJSON *agents) {
    fprintf(out, "<h2 id=machines>Machines</h2><table><tr><th>machine<th>GPUs<th>compilers"
                 "<th>CPU<th>labels<th>cairn<th>last heard from</tr>");
    const cJSON *a;
    cJSON_ArrayForEach(a, agents) {
        const cJSON *caps = cJSON_GetObjectItemCaseSensitive(a, "caps");
        fprintf(out, "<tr><td>");
        web_machine_link(out, json_str(a, "name"));
        if (json_num(a, "revoked", 0)) fprintf(out, " <b>(revoked)</b>");
        fprintf(out, "<td>");
        web_gpus(out, caps);
        fprintf(out, "<td>");
        web_compilers(out, caps);
        fprintf(out, "<td>");
        web_esc(out, json_str(caps, "cpu"));
        fprintf(out, " (%.0f cores)<td>", json_num(caps, "cores", 0));
        web_labels(out, caps);
        fprintf(out, "<td>");
        web_esc(out, json_str(caps, "cairn"));
        fprintf(out, "<td>");
        web_time(out, web_last_heard(s, a));
        fprintf(out, "</tr>");
    }
    fprintf(out, "</table>");
}

void web_index(Server *s, Request *q, Reply *r) {
    (void)q;
    cJSON *status = db_status_view(s->db);
    char *html = NULL;
    size_t len = 0;
    FILE *out = web_page_open(&html, &len, "cairn-farm", 10);
    fprintf(out, "<p class=small>Each run compares its cases across machines and cells; a "
                 "verdict names the promise it checked (docs/farm.md). Newest runs first; "
                 "<a href=\"/grid\">cases by run</a> shows each case across recent runs, "
                 "with the flaky ones marked.</p>");
    runs_table(s, out, cJSON_GetObjectItemCaseSensitive(status, "runs"));
    machines_table(s, out, cJSON_GetObjectItemCaseSensitive(status, "agents"));
    cJSON_Delete(status);
    web_page_close(out, &html, &len, r);
}

/* --- /files/evidence/... : what the agents filed, read-only ----------------------------- */

static const char *content_type(const char *path) {
    static const char *const types[][2] = {{".json", "application/json"},
                                           {".jsonl", "text/plain; charset=utf-8"},
                                           {".log", "text/plain; charset=utf-8"},
                                           {".pem", "text/plain; charset=utf-8"},
                                           {NULL, NULL}};
    size_t n = strlen(path);
    for (int i = 0; types[i][0]; i++) {
        size_t k = strlen(types[i][0]);
        if (n > k && !strcmp(path + n - k, types[i][0])) return types[i][1];
    }
    return "application/octet-stream"; /* raw observed bits and anything else */
}

/* Splits "evidence/V/R/M/C/NAME" into the evidence path (its first five components,
 * into REL) and the file's name in the bundle (*NAME); -1 when PATH is not of that form. */
static int evidence_split(const char *path, char *rel, size_t cap, const char **name) {
    const char *at = path;
    for (int i = 0; i < 5 && at; i++) at = strchr(at + (i > 0), '/');
    if (strncmp(path, "evidence/", 9) != 0 || !at || !util_is_safe_relpath(path) ||
        (size_t)(at - path) >= cap)
        return -1;
    snprintf(rel, cap, "%.*s", (int)(at - path), path);
    *name = at + 1;
    return 0;
}

/* A filed bundle's file: its envelope from the manifest, any other file streamed from
 * its blob as the client reads (never read into memory: 64 clients that never read a
 * 16 MiB file held a GiB), opened only under the state folder. */
void web_file(Server *s, Request *q, Reply *r) {
    char rel[1100];
    const char *name = NULL;
    cJSON *manifest = evidence_split(q->arg, rel, sizeof rel, &name) == 0
                          ? db_evidence_manifest(s->db, rel)
                          : NULL;
    const char *envelope = json_str(manifest, "envelope");
    const char *sha = json_str(cJSON_GetObjectItemCaseSensitive(manifest, "files"), name);
    size_t len = 0;
    int fd = -1;
    if (manifest && !strcmp(name, "bundle.dsse.json") && envelope)
        reply_raw(r, strdup(envelope), strlen(envelope), content_type(name));
    else if (sha && (fd = store_open_blob(s, sha, &len)) >= 0)
        reply_file(r, fd, len, sha, content_type(name));
    else if (sha)
        reply_error(r, PROTO_E_INTERNAL, "%s names blob %.16s..., missing from the store", q->arg,
                    sha);
    else reply_error(r, PROTO_E_NOT_FOUND, "no file %s (only evidence/... is served)", q->arg);
    cJSON_Delete(manifest);
}

/* /favicon.ico: browsers ask for it on every page; a small cairn (three stones) in SVG. */
void web_icon(Server *s, Request *q, Reply *r) {
    (void)s;
    (void)q;
    static const char icon[] =
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\">"
        "<ellipse cx=\"8\" cy=\"13\" rx=\"7\" ry=\"2.5\" fill=\"#777\"/>"
        "<ellipse cx=\"8\" cy=\"8.5\" rx=\"5\" ry=\"2.2\" fill=\"#999\"/>"
        "<ellipse cx=\"8\" cy=\"4.5\" rx=\"3\" ry=\"1.8\" fill=\"#bbb\"/></svg>";
    reply_raw(r, strdup(icon), strlen(icon), "image/svg+xml");
}
