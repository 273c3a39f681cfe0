/* http.h: the HTTP+JSON client both binaries use to talk to a coordinator (libcurl).
 * One Http per thread: it keeps its curl handle (and so its connection) alive. */
#ifndef CAIRN_FARM_HTTP_H
#define CAIRN_FARM_HTTP_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "proto/util.h"

typedef struct Http Http;

typedef struct {
    long status; /* HTTP status, 0 when no answer came back */
    char *body;  /* response body, NUL-terminated, malloc'd */
    size_t len;
} HttpResponse;

Http *http_new(const char *base_url, const char *token);
void http_set_token(Http *h, const char *token);
void http_free(Http *h);
/* One request: METHOD PATH with an optional body of LEN bytes (JSON unless content_type
 * says otherwise), given up after timeout_s seconds. */
typedef struct HttpRequest {
    const char *method, *path;
    const char *content_type; /* NULL: application/json */
    const void *body;         /* NULL: none */
    size_t len;
    long timeout_s;
} HttpRequest;
/* Sends REQ. Returns 0 when an HTTP answer arrived (any status), -1 on transport
 * failure. The API's calls go through proto_send (api.h), which reads its error
 * answers. */
int http_request(Http *h, const HttpRequest *req, HttpResponse *out, Err *e);
void http_response_free(HttpResponse *r);

#endif
