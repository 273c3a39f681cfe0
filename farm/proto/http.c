/* http.c: libcurl client for the coordinator's API (see http.h). */
#include "proto/http.h"

#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

struct Http {
    CURL *curl;
    char base[1024];
    char auth[600];
};

Http *http_new(const char *base_url, const char *token) {
    static int initialised;
    if (!initialised) { /* first use happens before any thread starts */
        curl_global_init(CURL_GLOBAL_DEFAULT);
        initialised = 1;
    }
    Http *h = calloc(1, sizeof *h);
    h->curl = curl_easy_init();
    snprintf(h->base, sizeof h->base, "%s", base_url);
    size_t n = strlen(h->base);
    if (n && h->base[n - 1] == '/') h->base[n - 1] = '\0';
    http_set_token(h, token);
    return h;
}

void http_set_token(Http *h, const char *token) {
    h->auth[0] = '\0';
    if (token && *token) snprintf(h->auth, sizeof h->auth, "Authorization: Bearer %s", token);
}

void http_free(Http *h) {
    if (!h) return;
    curl_easy_cleanup(h->curl);
    free(h);
}

static size_t collect(char *data, size_t size, size_t n, void *user) {
    HttpResponse *r = user;
    size_t add = size * n;
    char *bigger = realloc(r->body, r->len + add + 1);
    if (!bigger) return 0;
    memcpy(bigger + r->len, data, add);
    r->body = bigger;
    r->len += add;
    r->body[r->len] = '\0';
    return add;
}

int http_request(Http *h, const HttpRequest *req, HttpResponse *out, Err *e) {
    const char *method = req->method, *content_type = req->content_type;
    const void *body = req->body;
    char url[2048], ctype[128];
    snprintf(url, sizeof url, "%s%s", h->base, req->path);
    snprintf(ctype, sizeof ctype, "Content-Type: %s",
             content_type ? content_type : "application/json");
    memset(out, 0, sizeof *out);
    CURL *c = h->curl;
    curl_easy_reset(c);
    struct curl_slist *headers = curl_slist_append(NULL, ctype);
    headers = curl_slist_append(headers, "Expect:");
    if (h->auth[0]) headers = curl_slist_append(headers, h->auth);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, req->timeout_s);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->len);
    }
    CURLcode rc = curl_easy_perform(c);
    curl_slist_free_all(headers);
    if (rc != CURLE_OK) {
        http_response_free(out);
        return err_set(e, "%s %s: %s", method, url, curl_easy_strerror(rc));
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
    if (!out->body) out->body = calloc(1, 1);
    return 0;
}

void http_response_free(HttpResponse *r) {
    free(r->body);
    r->body = NULL;
    r->len = 0;
}
