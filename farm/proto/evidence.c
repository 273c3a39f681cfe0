/* evidence.c: cells and receipts as both the agent and the coordinator read them. */
#include "proto/evidence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/sha256.h"

static int one_of(const char *s, const char *const *allowed) {
    for (; s && *allowed; allowed++)
        if (!strcmp(s, *allowed)) return 1;
    return 0;
}

int evidence_cell_from_json(const cJSON *j, Cell *c, Err *e) {
    static const char *const compilers[] = {"gcc", "clang", NULL};
    static const char *const sanitizers[] = {"none", "asan", "tsan", NULL};
    static const char *const modes[] = {"emulated", "device", NULL};
    const char *cc = json_str(j, "compiler"), *san = json_str(j, "sanitizer");
    const char *mode = json_str(j, "mode");
    if (!one_of(cc, compilers)) return err_set(e, "cell compiler must be gcc or clang");
    if (!one_of(san ? san : "none", sanitizers))
        return err_set(e, "cell sanitizer must be none, asan or tsan");
    if (!one_of(mode ? mode : "emulated", modes))
        return err_set(e, "cell mode must be emulated or device");
    long repeat = 0;
    if (json_int(j, "repeat", 0, EVIDENCE_MAX_REPEAT, &repeat) < 0)
        return err_set(e, "cell repeat must be an integer in [0, %d]", EVIDENCE_MAX_REPEAT);
    memset(c, 0, sizeof *c);
    snprintf(c->compiler, sizeof c->compiler, "%s", cc);
    snprintf(c->sanitizer, sizeof c->sanitizer, "%s", san ? san : "none");
    snprintf(c->mode, sizeof c->mode, "%s", mode ? mode : "emulated");
    c->repeat = (int)repeat;
    return 0;
}

cJSON *evidence_cell_to_json(const Cell *c) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "compiler", c->compiler);
    cJSON_AddStringToObject(j, "sanitizer", c->sanitizer);
    cJSON_AddStringToObject(j, "mode", c->mode);
    if (c->repeat) cJSON_AddNumberToObject(j, "repeat", c->repeat);
    return j;
}

void evidence_cell_id(const Cell *c, char *out, size_t cap) {
    if (c->repeat)
        snprintf(out, cap, "%s-%s-%s-r%d", c->compiler, c->sanitizer, c->mode, c->repeat);
    else snprintf(out, cap, "%s-%s-%s", c->compiler, c->sanitizer, c->mode);
}

const char *evidence_cell_sanitize_flag(const Cell *c) {
    if (!strcmp(c->sanitizer, "asan")) return "address,undefined";
    if (!strcmp(c->sanitizer, "tsan")) return "thread";
    return NULL;
}

int evidence_receipt_is_unordered(const cJSON *receipt) {
    const cJSON *numerics = cJSON_GetObjectItemCaseSensitive(receipt, "numerics");
    const cJSON *fn, *entry;
    cJSON_ArrayForEach(fn, numerics) {
        cJSON_ArrayForEach(entry, fn) {
            const char *order = json_str(entry, "order");
            if (order && !strcmp(order, "unordered")) return 1;
        }
    }
    return 0;
}

void evidence_gpu_target(const char *compute_cap, char *out, size_t cap) {
    int major = 0, minor = 0;
    if (!compute_cap || sscanf(compute_cap, "%d.%d", &major, &minor) < 1) major = minor = 0;
    snprintf(out, cap, "sm_%d%d", major, minor);
}

/* A case's test result: FAILED when a check failed, WARNED when it observed nothing (no
 * evidence), PASSED otherwise. */
static const char *case_result(const cJSON *c) {
    const cJSON *chk;
    cJSON_ArrayForEach(chk, cJSON_GetObjectItemCaseSensitive(c, "checks")) {
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(chk, "ok"))) return "failedTests";
    }
    return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(c, "observations")) ? "passedTests"
                                                                                   : "warnedTests";
}

void evidence_add_test_result(cJSON *statement) {
    cJSON *pred = cJSON_GetObjectItemCaseSensitive(statement, "predicate");
    static const char *const lists[] = {"passedTests", "warnedTests", "failedTests"};
    for (int i = 0; i < 3; i++) cJSON_AddArrayToObject(pred, lists[i]);
    cJSON *config = cJSON_AddArrayToObject(pred, "configuration");
    const cJSON *c, *s;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(pred, "cases")) {
        cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(pred, case_result(c)),
                             cJSON_CreateString(json_str(c, "case") ? json_str(c, "case") : ""));
        const char *receipt = json_str(c, "receipt");
        cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(statement, "subject")) {
            if (!receipt || !json_str(s, "name") || strcmp(json_str(s, "name"), receipt) != 0)
                continue;
            cJSON *d = cJSON_CreateObject();
            cJSON_AddStringToObject(d, "name", receipt);
            cJSON_AddItemToObject(
                d, "digest", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(s, "digest"), 1));
            cJSON_AddItemToArray(config, d);
            break;
        }
    }
    cJSON_AddStringToObject(
        pred, "result",
        cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(pred, "failedTests"))   ? "FAILED"
        : cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(pred, "warnedTests")) ? "WARNED"
                                                                                    : "PASSED");
}

/* 0 when FILES is exactly the SUBJECTS' names with their sha256 digests plus
 * agent.pub.pem, else -1 with E. */
static int files_are_subjects(const cJSON *files, const cJSON *subjects, Err *e) {
    const cJSON *s;
    int n = 0;
    cJSON_ArrayForEach(s, subjects) {
        const char *name = json_str(s, "name");
        const char *want = json_str(cJSON_GetObjectItemCaseSensitive(s, "digest"), "sha256");
        const char *got = name ? json_str(files, name) : NULL;
        if (!want || !got || strcmp(want, got) != 0)
            return err_set(e, "its file %.200s is not the signed one", name ? name : "(unnamed)");
        n++;
    }
    if (!json_str(files, "agent.pub.pem") || cJSON_GetArraySize(files) != n + 1)
        return err_set(e, "it names files the signed statement does not");
    return 0;
}

cJSON *evidence_manifest_statement(const cJSON *manifest, const char *bundle_sha, Err *e) {
    const char *env_text = json_str(manifest, "envelope");
    char sha[SHA256_HEX_LEN] = "";
    if (env_text) sha256_hex(env_text, strlen(env_text), sha);
    if (!env_text || (bundle_sha && strcmp(sha, bundle_sha) != 0)) {
        err_set(e, "its envelope is not the filed bundle's");
        return NULL;
    }
    cJSON *env = cJSON_Parse(env_text);
    const char *payload = json_str(env, "payload");
    size_t len = 0;
    unsigned char *raw = payload ? util_b64_decode(payload, &len) : NULL;
    cJSON *st = raw ? cJSON_ParseWithLength((const char *)raw, len) : NULL;
    free(raw);
    cJSON_Delete(env);
    if (!st) err_set(e, "its envelope's statement does not parse");
    else if (files_are_subjects(cJSON_GetObjectItemCaseSensitive(manifest, "files"),
                                cJSON_GetObjectItemCaseSensitive(st, "subject"), e) != 0) {
        cJSON_Delete(st);
        st = NULL;
    }
    return st;
}
