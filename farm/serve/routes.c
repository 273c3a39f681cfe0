/* routes.c: the coordinator's routes in one table (each documented in docs/farm.md, "The
 * API"; tests/farm/test_protocol.py reads this table and checks the two agree): the
 * method and path, who may call it (auth.c), the handler (handlers.c, web*.c) and
 * where it runs (server.c, hub.c). serve_route runs one request through them without
 * a socket, as a connection's request runs. */
#include "serve/serve_internal.h"
#include "serve/web_internal.h"

#include <string.h>

static const Route ROUTES[] = {
    {"GET", "/healthz", AUTH_NONE, handlers_health, POOL_HTTP, BODY_NONE},
    {"GET", "/metrics", AUTH_NONE, metrics_route, POOL_HTTP, BODY_NONE},
    {"GET", "/", AUTH_NONE, web_index, POOL_PAGE, BODY_NONE},
    {"GET", "/runs/*", AUTH_NONE, web_run, POOL_PAGE, BODY_NONE},
    {"GET", "/runs/*/plot.svg", AUTH_NONE, web_plot, POOL_PAGE, BODY_NONE},
    {"GET", "/history/**", AUTH_NONE, web_history, POOL_PAGE, BODY_NONE},
    {"GET", "/files/**", AUTH_NONE, web_file, POOL_PAGE, BODY_NONE},
    {"GET", "/cases/**", AUTH_NONE, web_case, POOL_PAGE, BODY_NONE},
    {"GET", "/grid", AUTH_NONE, web_grid, POOL_PAGE, BODY_NONE},
    {"GET", "/machines/*", AUTH_NONE, web_machine, POOL_PAGE, BODY_NONE},
    {"GET", "/badge/*", AUTH_NONE, web_badge, POOL_PAGE, BODY_NONE},
    {"GET", "/favicon.ico", AUTH_NONE, web_icon, POOL_HTTP, BODY_NONE},
    {"POST", "/api/v1/agents/challenge", AUTH_ENROL, handlers_challenge, POOL_HTTP, BODY_SMALL},
    {"POST", "/api/v1/agents/enrol", AUTH_ENROL, handlers_enrol, POOL_WORK, BODY_ENROL},
    {"POST", "/api/v1/agents/*/revoke", AUTH_ADMIN, handlers_revoke, POOL_WORK, BODY_SMALL},
    {"POST", "/api/v1/claim", AUTH_AGENT, handlers_claim, POOL_HTTP, BODY_SMALL},
    {"POST", "/api/v1/jobs/*/heartbeat", AUTH_AGENT, handlers_heartbeat, POOL_HTTP, BODY_SMALL},
    {"POST", "/api/v1/jobs/*/bundle", AUTH_AGENT, handlers_upload, POOL_WORK, BODY_TAKEN},
    {"PUT", "/api/v1/blobs/*", AUTH_ADMIN, handlers_blob_put, POOL_WORK, BODY_TAKEN},
    {"GET", "/api/v1/blobs/*", AUTH_AGENT_OR_ADMIN, handlers_blob_get, POOL_HTTP, BODY_NONE},
    {"POST", "/api/v1/runs", AUTH_ADMIN, handlers_run_create, POOL_WORK, BODY_TAKEN},
    {"GET", "/api/v1/runs/*", AUTH_ADMIN, handlers_run_get, POOL_WORK, BODY_NONE},
    {"GET", "/api/v1/runs/*/results", AUTH_ADMIN, handlers_run_results, POOL_WORK, BODY_NONE},
    {"GET", "/api/v1/runs/*/report", AUTH_ADMIN, handlers_run_report, POOL_WORK, BODY_NONE},
    {"POST", "/api/v1/runs/*/cancel", AUTH_ADMIN, handlers_run_cancel, POOL_WORK, BODY_SMALL},
    {"GET", "/api/v1/status", AUTH_ADMIN, handlers_status, POOL_WORK, BODY_NONE},
    {"POST", "/api/v1/gc", AUTH_ADMIN, handlers_gc, POOL_WORK, BODY_SMALL},
};

long route_body_limit(const Server *s, const Route *route, const char **setting) {
    if (route->body == BODY_SMALL)
        return *setting = "max_small_body_bytes", s->cfg.max_small_body_bytes;
    if (route->body == BODY_ENROL)
        return *setting = "max_enrol_body_bytes", s->cfg.max_enrol_body_bytes;
    *setting = route->body == BODY_NONE ? "no body" : "max_body_bytes";
    return route->body == BODY_NONE ? 0 : s->cfg.max_body_bytes;
}

/* Matches PATH against PATTERN; on a match, the "*" segment is copied into ARG. */
static int match(const char *pattern, const char *path, char *arg, size_t cap) {
    arg[0] = '\0';
    while (*pattern && *path) {
        if (!strcmp(pattern, "**")) {
            size_t n = strlen(path);
            if (n >= cap) return 0;
            memcpy(arg, path, n + 1);
            return 1;
        }
        if (*pattern == '*') {
            size_t n = strcspn(path, "/");
            if (n == 0 || n >= cap) return 0;
            memcpy(arg, path, n);
            arg[n] = '\0';
            pattern++;
            path += n;
        } else if (*pattern++ != *path++) {
            return 0;
        }
    }
    return *pattern == '\0' && *path == '\0';
}

int route_count(void) { return (int)(sizeof ROUTES / sizeof ROUTES[0]); }

const Route *route_at(int i) { return i >= 0 && i < route_count() ? &ROUTES[i] : NULL; }

int route_index(const Route *r) { return (int)(r - ROUTES); }

const Route *route_find(Request *q, char *arg, size_t cap, Reply *r) {
    int path_known = 0;
    for (size_t i = 0; i < sizeof ROUTES / sizeof ROUTES[0]; i++) {
        const Route *route = &ROUTES[i];
        if (!match(route->pattern, q->path, arg, cap)) continue;
        path_known = 1;
        if (strcmp(route->method, q->method) != 0) continue;
        q->arg = arg;
        return route;
    }
    if (path_known)
        reply_error(r, PROTO_E_METHOD_NOT_ALLOWED, "method %s not allowed on %s", q->method,
                    q->path);
    else reply_error(r, PROTO_E_NO_ROUTE, "no route %s %s", q->method, q->path);
    return NULL;
}

void serve_route(Server *s, Request *q, Reply *r) {
    char arg[1100];
    const Route *route = route_find(q, arg, sizeof arg, r);
    if (!route) return;
    if (route->body == BODY_NONE && q->len > 0) {
        reply_error(r, PROTO_E_TOO_LARGE, "%s %s takes no body", q->method, route->pattern);
        return;
    }
    if (auth_check(s, route->auth, q, r) != 0) return;
    const char *setting;
    long limit = route_body_limit(s, route, &setting);
    if (q->len > (size_t)limit)
        reply_error(r, PROTO_E_TOO_LARGE, "body larger than %s (%ld)", setting, limit);
    else route->handle(s, q, r);
    if (r->park) r->park = 0, r->status = 204; /* nothing waits here: an empty long poll */
}
