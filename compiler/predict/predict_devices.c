/* predict_devices.c: the device tables `cairn predict` prices with.
 *
 * The tables are configs/devices/NAME.json, carried inside the binary (compiler/build.mk
 * runs scripts/embed_runtime.py over them into cairn_device_tables[]), so predict finds
 * them from any folder. A path to a JSON file of the same form is the user's own table.
 * `--device host` measures this machine now (about a quarter of a second): the memory
 * bandwidth of a streaming sum over 64 MiB, and the rate of independent multiply and add
 * chains in f32, f64 and integers, each timed in CPU time (the machine may be shared); the host has no tensor cores, so the tensor kinds are
 * priced at the f32 rate (mma_unordered's host form is the f32 loop). Host views are
 * priced at the host's bandwidth: a table's optional host_memory_bandwidth, else this
 * machine's, measured when a function first needs it. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "syntax/syntax.h"
#include "predict/predict.h"
#include "lib/fs.h"
#include "lib/timing.h"

extern const EmbeddedFile cairn_device_tables[];
extern const size_t cairn_device_table_count;

const char *predict_device_names(void) {
    static char names[512];
    if (names[0]) return names;
    size_t used = 0;
    for (size_t i = 0; i < cairn_device_table_count; i++) {
        const char *n = cairn_device_tables[i].name;
        int len = (int)(strlen(n) - strlen(".json"));
        used += (size_t)snprintf(names + used, sizeof names - used, "%.*s, ", len, n);
        if (used >= sizeof names) break;
    }
    snprintf(names + (used < sizeof names ? used : sizeof names - 1),
             sizeof names - (used < sizeof names ? used : sizeof names - 1),
             "host, or a path to a table");
    return names;
}

static bool figure(const cJSON *obj, const char *key, PFigure *out) {
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(obj, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(f, "value");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(f, "source");
    if (!cJSON_IsNumber(v) || !cJSON_IsString(s) || v->valuedouble < 0) return false;
    out->value = v->valuedouble;
    out->source = strdup(s->valuestring);
    return true;
}

/* A device table's JSON text (f: its name in messages, its bytes) into d. */
static bool parse_table(const EmbeddedFile *f, PDevice *d, char *err, size_t errlen) {
    cJSON *j = cJSON_ParseWithLength((const char *)f->data, f->size);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
    const cJSON *desc = cJSON_GetObjectItemCaseSensitive(j, "description");
    const cJSON *peak = cJSON_GetObjectItemCaseSensitive(j, "peak");
    bool ok = cJSON_IsString(name) && cJSON_IsString(desc) && cJSON_IsObject(peak) &&
              figure(j, "memory_bandwidth", &d->bandwidth) && d->bandwidth.value > 0;
    for (int k = 0; ok && k < OP_COUNT; k++) ok = figure(peak, predict_op_names[k], &d->peak[k]);
    if (ok) {
        figure(j, "host_memory_bandwidth", &d->host_bandwidth); /* optional */
        d->name = strdup(name->valuestring);
        d->description = strdup(desc->valuestring);
        if (!figure(j, "sms", &d->sms)) d->sms = (PFigure){0, strdup("not given")};
    } else {
        snprintf(
            err, errlen,
            "%s is not a device table: it needs name, description, memory_bandwidth "
            "{value, source} and peak {f32, f64, int, tensor_f16, tensor_bf16, tensor_fp8}, each "
            "{value, source} (see configs/devices/h200.json)",
            f->name);
    }
    cJSON_Delete(j);
    return ok;
}

/* ---- the host, measured ---- */

static volatile double sink;

/* CPU time of this thread: on a shared machine the wall clock also counts the time
 * spent waiting for a core, which is not the machine's speed. */
static double cpu_seconds(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return timing_monotonic_seconds();
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A streaming sum over 64 MiB of 64-bit integers (integer adds vectorize without
 * reassociating floats, so the loop waits on memory, not on an add's latency). */
static double measure_bandwidth(void) {
    size_t n = (64u << 20) / sizeof(uint64_t);
    uint64_t *a = malloc(n * sizeof *a);
    double best = 0;
    if (!a) return 1e9;
    for (size_t i = 0; i < n; i++) a[i] = i & 7;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = cpu_seconds();
        uint64_t s = 0;
        for (size_t i = 0; i < n; i++) s += a[i];
        double dt = cpu_seconds() - t0;
        sink = (double)s;
        if (dt > 0 && n * sizeof(uint64_t) / dt > best) best = (double)(n * sizeof(uint64_t)) / dt;
    }
    free(a);
    return best;
}

/* Eight independent chains of x = x * m + c: two operations each, no fused multiply-add
 * (the build is -ffp-contract=off). */
#define RATE(NAME, T, M, C)                                                                        \
    static double NAME(void) {                                                                     \
        T x[8] = {1, 2, 3, 4, 5, 6, 7, 8};                                                         \
        volatile T vm = (M), vc = (C);                                                             \
        T m = vm, c = vc;                                                                          \
        long iters = 2000000;                                                                      \
        double t0 = cpu_seconds();                                                                 \
        for (long i = 0; i < iters; i++)                                                           \
            for (int k = 0; k < 8; k++) x[k] = x[k] * m + c;                                       \
        double dt = cpu_seconds() - t0;                                                            \
        double s = 0;                                                                              \
        for (int k = 0; k < 8; k++) s += (double)x[k];                                             \
        sink = s;                                                                                  \
        return dt > 0 ? 16.0 * (double)iters / dt : 1e9;                                           \
    }
RATE(rate_f32, float, 0.999f, 0.5f)
RATE(rate_f64, double, 0.999, 0.5)
RATE(rate_int, uint64_t, 3, 1)

static void measure_host(PDevice *d) {
    char buf[160];
    double bw = measure_bandwidth(), f32 = rate_f32(), f64 = rate_f64(), ints = rate_int();
    d->name = strdup("host");
    d->description = strdup("this machine, measured now on one core");
    snprintf(buf, sizeof buf,
             "measured: a streaming sum over 64 MiB, best of 3, CPU time (%.3g B/s)", bw);
    d->bandwidth = (PFigure){bw, strdup(buf)};
    double rates[OP_COUNT] = {f32, f64, ints, f32, f32, f32};
    for (int k = 0; k < OP_COUNT; k++) {
        snprintf(buf, sizeof buf,
                 k >= OP_TENSOR_F16 ? "measured: no tensor cores, the f32 rate (%.3g op/s)"
                                    : "measured: eight independent multiply-add chains (%.3g op/s)",
                 rates[k]);
        d->peak[k] = (PFigure){rates[k], strdup(buf)};
    }
    d->sms = (PFigure){1, strdup("one core")};
}

bool predict_device(const char *name, PDevice *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (strcmp(name, "host") == 0) {
        measure_host(out);
        return true;
    }
    if (strchr(name, '/') || strstr(name, ".json")) {
        size_t len;
        char *text = fs_read(name, &len, NULL);
        if (!text) {
            snprintf(err, errlen, "cannot read the device table %s", name);
            return false;
        }
        bool ok =
            parse_table(&(EmbeddedFile){name, (const unsigned char *)text, len}, out, err, errlen);
        free(text);
        return ok;
    }
    for (size_t i = 0; i < cairn_device_table_count; i++) {
        const EmbeddedFile *f = &cairn_device_tables[i];
        if (strncmp(f->name, name, strlen(name)) == 0 &&
            strcmp(f->name + strlen(name), ".json") == 0)
            return parse_table(f, out, err, errlen);
    }
    snprintf(err, errlen, "no device table '%s' (known devices: %s)", name, predict_device_names());
    return false;
}

void predict_host_bandwidth(PDevice *d) {
    if (d->host_bandwidth.value > 0) return;
    char buf[160];
    double bw = strcmp(d->name, "host") == 0 ? d->bandwidth.value : measure_bandwidth();
    snprintf(
        buf, sizeof buf,
        "measured on this machine: a streaming sum over 64 MiB, best of 3, CPU time (%.3g B/s)",
        bw);
    free(d->host_bandwidth.source);
    d->host_bandwidth = (PFigure){bw, strdup(buf)};
}

void predict_device_free(PDevice *d) {
    free(d->name);
    free(d->description);
    free(d->bandwidth.source);
    free(d->host_bandwidth.source);
    for (int k = 0; k < OP_COUNT; k++) free(d->peak[k].source);
    free(d->sms.source);
    memset(d, 0, sizeof *d);
}
