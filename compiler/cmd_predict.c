/* cmd_predict.c: `cairn predict FILE --device NAME [--size n=4096 ...] [--json]`: per
 * function, bytes read and written per memory space, operations by kind, and the
 * roofline time max(bytes / bandwidth, ops / peak) with the roof that binds (counting:
 * predict.c, device tables: predict_devices.c). Exit 0, 1 refused program, 2 usage, I/O
 * or an unknown device. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "check/check.h"
#include "predict/predict.h"

const char cmd_predict_help[] =
    "usage: cairn predict FILE --device NAME [--size NAME=VALUE ...] [--function NAME] [--json]\n"
    "\n"
    "For each function: the bytes it reads and writes in each memory space (host, device,\n"
    "unified, shared), its operations by kind (f32, f64, int, tensor_f16, tensor_bf16,\n"
    "tensor_fp8: tensor-core products with f32 accumulation), and the roofline time\n"
    "max(global bytes / bandwidth, sum of ops / peak per kind), with the roof that binds.\n"
    "Counts are formulas in the function's parameters until --size binds them.\n"
    "\n"
    "  --device NAME     h200, h100, a100, rtx5070ti (tables carried in the binary, from\n"
    "                    configs/devices), host (measured now), or a path to a JSON table\n"
    "  --size N=V        bind a parameter (repeat, or N=V,M=W)\n"
    "  --function NAME   only this function\n"
    "  --json            one JSON document instead of the table\n"
    "\n"
    "exit status: 0 predicted, 1 refused program, 2 usage, I/O error or unknown device\n";

typedef struct Options {
    const char *path, *device, *only;
    bool json;
    PSizes sizes;
} Options;

static int usage(const char *fmt, const char *arg) {
    fprintf(stderr, "cairn predict: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (cairn predict --help)\n");
    return 2;
}

static int parse(int argc, char **argv, Options *o) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool valued =
            strcmp(a, "--device") == 0 || strcmp(a, "--size") == 0 || strcmp(a, "--function") == 0;
        if (valued && i + 1 >= argc) return usage("%s needs a value", a);
        if (strcmp(a, "--json") == 0) o->json = true;
        else if (strcmp(a, "--device") == 0) o->device = argv[++i];
        else if (strcmp(a, "--function") == 0) o->only = argv[++i];
        else if (strcmp(a, "--size") == 0) {
            char err[160];
            if (!predict_parse_sizes(argv[++i], &o->sizes, true, err, sizeof err))
                return usage("%s", err);
        } else if (a[0] == '-' && a[1]) return usage("unknown option '%s'", a);
        else if (o->path) return usage("one file at a time ('%s')", a);
        else o->path = a;
    }
    if (!o->path) return usage("%s", "no file given");
    if (!o->device) {
        fprintf(stderr, "cairn predict: error: --device NAME is required (known devices: %s)\n",
                predict_device_names());
        return 2;
    }
    return 0;
}

/* One formula, and its value when every atom is bound. */
typedef struct Figure {
    char *formula;
    double value;
    bool bound;
} Figure;

static Figure figure_of(const Poly *p, const PAtoms *atoms, const double *values) {
    Figure f = {predict_poly_text(p, atoms), 0, false};
    f.bound = predict_poly_eval(p, values, &f.value);
    return f;
}

typedef struct Roof {
    Figure bytes, ops[OP_COUNT];
    double memory_s, host_memory_s, compute_s, time_s;
    bool bound, missing_unit;
    const char *binds;
} Roof;

/* Bytes in the given spaces. */
static Poly bytes_in(const PCounts *c, bool host) {
    Poly bytes = {0};
    for (int s = 0; s < SP_COUNT; s++)
        if (s != SP_SHARED && (s == SP_HOST) == host) { /* shared memory: on-chip, no roof */
            predict_poly_add(&bytes, &c->read[s], 1);
            predict_poly_add(&bytes, &c->written[s], 1);
        }
    return bytes;
}

/* The seconds `p` bytes take at `bandwidth`, or 0 when p is zero; false when unbound. */
static bool seconds_of(const Poly *p, const double *values, double bandwidth, double *out) {
    double v = 0;
    bool ok = predict_poly_is_zero(p) || predict_poly_eval(p, values, &v);
    *out = v / bandwidth;
    return ok;
}

/* The roofline, when the sizes bind everything: host views at the host's bandwidth,
 * device and unified ones at the device's (on the host, one memory), operations at the
 * peaks; the largest term names the binding roof. */
static Roof roofline(const PCounts *c, const PAtoms *atoms, const double *values, PDevice *d) {
    Roof r = {.bound = true};
    bool one_memory = strcmp(d->name, "host") == 0;
    Poly host = bytes_in(c, true), dev = bytes_in(c, false), all = predict_poly_copy(&host);
    predict_poly_add(&all, &dev, 1);
    r.bytes = figure_of(&all, atoms, values);
    if (one_memory) r.bound &= seconds_of(&all, values, d->bandwidth.value, &r.memory_s);
    else {
        if (!predict_poly_is_zero(&host)) predict_host_bandwidth(d);
        r.bound &= seconds_of(&dev, values, d->bandwidth.value, &r.memory_s);
        r.bound &= seconds_of(&host, values, d->host_bandwidth.value, &r.host_memory_s);
    }
    predict_poly_free(&host), predict_poly_free(&dev), predict_poly_free(&all);
    double worst = 0;
    for (int k = 0; k < OP_COUNT; k++) {
        r.ops[k] = figure_of(&c->ops[k], atoms, values);
        r.bound &= r.ops[k].bound;
        if (!r.ops[k].bound || r.ops[k].value <= 0) continue;
        if (d->peak[k].value == 0) {
            r.missing_unit = true;
            continue;
        }
        double t = r.ops[k].value / d->peak[k].value;
        r.compute_s += t;
        if (t > worst) worst = t, r.binds = predict_op_names[k];
    }
    r.time_s = r.compute_s;
    if (!r.binds || r.memory_s >= r.time_s) r.time_s = r.memory_s, r.binds = "memory";
    if (r.host_memory_s > r.time_s) r.time_s = r.host_memory_s, r.binds = "host memory";
    return r;
}

static void free_roof(Roof *r) {
    free(r->bytes.formula);
    for (int k = 0; k < OP_COUNT; k++) free(r->ops[k].formula);
}

static void print_line(const char *label, const Poly *p, const PAtoms *atoms, const double *values,
                       const char *unit) {
    if (predict_poly_is_zero(p)) return;
    Figure f = figure_of(p, atoms, values);
    printf("    %-12s %s", label, f.formula);
    if (f.bound && f.formula[strspn(f.formula, "0123456789.e+- ")] != '\0')
        printf(" = %.6g", f.value);
    printf(" %s\n", unit);
    free(f.formula);
}

static void print_text(const Item *fn, const PCounts *c, const PAtoms *atoms, const double *values,
                       PDevice *d) {
    printf("%s\n", fn->name);
    for (int s = 0; s < SP_COUNT; s++) {
        char label[32];
        snprintf(label, sizeof label, "read %s", predict_space_names[s]);
        print_line(label, &c->read[s], atoms, values, "B");
        snprintf(label, sizeof label, "write %s", predict_space_names[s]);
        print_line(label, &c->written[s], atoms, values, "B");
    }
    for (int k = 0; k < OP_COUNT; k++)
        print_line(predict_op_names[k], &c->ops[k], atoms, values, "op");
    Roof r = roofline(c, atoms, values, d);
    if (c->cut)
        printf("    time         none: a call chain deeper than %d calls (recursion) is not "
               "counted past that depth\n",
               PRED_MAX_DEPTH);
    else if (r.missing_unit)
        printf("    time         none: %s has no unit for an operation this function needs\n",
               d->name);
    else if (r.bound && d->host_bandwidth.value > 0 && strcmp(d->name, "host") != 0)
        printf("    time         %.4g s, %s-bound (host memory %.4g s, memory %.4g s, compute "
               "%.4g s)\n",
               r.time_s, r.binds, r.host_memory_s, r.memory_s, r.compute_s);
    else if (r.bound)
        printf("    time         %.4g s, %s-bound (memory %.4g s, compute %.4g s)\n", r.time_s,
               r.binds, r.memory_s, r.compute_s);
    else {
        bool split = strcmp(d->name, "host") != 0 && d->host_bandwidth.value > 0;
        Poly host = bytes_in(c, true), dev = bytes_in(c, false);
        if (!split) predict_poly_add(&dev, &host, 1); /* one memory */
        char *tdev = predict_poly_text(&dev, atoms), *thost = predict_poly_text(&host, atoms);
        printf("    time         max(");
        const char *sep = "";
        if (split && !predict_poly_is_zero(&host)) {
            printf("(%s) B / %.4g B/s", thost, d->host_bandwidth.value);
            sep = ", ";
        }
        if (!split || !predict_poly_is_zero(&dev) || !*sep) {
            printf("%s(%s) B / %.4g B/s", sep, tdev, d->bandwidth.value);
            sep = ", ";
        }
        free(tdev), free(thost), predict_poly_free(&host), predict_poly_free(&dev);
        for (int k = 0; k < OP_COUNT; k++) {
            if (predict_poly_is_zero(&c->ops[k])) continue;
            printf("%s(%s) %s op / %.4g op/s", sep, r.ops[k].formula, predict_op_names[k],
                   d->peak[k].value);
            sep = " + ";
        }
        printf("): bind the sizes with --size for a number\n");
    }
    free_roof(&r);
}

static cJSON *json_poly(const Poly *p, const PAtoms *atoms, const double *values) {
    Figure f = figure_of(p, atoms, values);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "formula", f.formula);
    if (f.bound) cJSON_AddNumberToObject(o, "value", f.value);
    else cJSON_AddNullToObject(o, "value");
    free(f.formula);
    return o;
}

static cJSON *json_function(const Item *fn, const PCounts *c, const PAtoms *atoms,
                            const double *values, PDevice *d) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "function", fn->name);
    cJSON *rd = cJSON_AddObjectToObject(o, "read"), *wr = cJSON_AddObjectToObject(o, "written");
    for (int s = 0; s < SP_COUNT; s++) {
        cJSON_AddItemToObject(rd, predict_space_names[s], json_poly(&c->read[s], atoms, values));
        cJSON_AddItemToObject(wr, predict_space_names[s], json_poly(&c->written[s], atoms, values));
    }
    cJSON *ops = cJSON_AddObjectToObject(o, "ops");
    for (int k = 0; k < OP_COUNT; k++)
        cJSON_AddItemToObject(ops, predict_op_names[k], json_poly(&c->ops[k], atoms, values));
    Roof r = roofline(c, atoms, values, d);
    cJSON_AddStringToObject(o, "global_bytes", r.bytes.formula);
    if (r.bound && !r.missing_unit && !c->cut) {
        cJSON_AddNumberToObject(o, "memory_s", r.memory_s);
        if (strcmp(d->name, "host") != 0)
            cJSON_AddNumberToObject(o, "host_memory_s", r.host_memory_s);
        cJSON_AddNumberToObject(o, "compute_s", r.compute_s);
        cJSON_AddNumberToObject(o, "time_s", r.time_s);
        cJSON_AddStringToObject(o, "bound", r.binds);
    } else {
        cJSON_AddNullToObject(o, "time_s");
        cJSON_AddStringToObject(o, "bound",
                                c->cut           ? "recursion"
                                : r.missing_unit ? "unavailable"
                                                 : "unbound sizes");
    }
    free_roof(&r);
    return o;
}

static cJSON *json_device(const PDevice *d) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", d->name);
    cJSON_AddStringToObject(o, "description", d->description);
    cJSON *bw = cJSON_AddObjectToObject(o, "memory_bandwidth");
    cJSON_AddNumberToObject(bw, "value", d->bandwidth.value);
    cJSON_AddStringToObject(bw, "source", d->bandwidth.source);
    cJSON *pk = cJSON_AddObjectToObject(o, "peak");
    for (int k = 0; k < OP_COUNT; k++) {
        cJSON *f = cJSON_AddObjectToObject(pk, predict_op_names[k]);
        cJSON_AddNumberToObject(f, "value", d->peak[k].value);
        cJSON_AddStringToObject(f, "source", d->peak[k].source);
    }
    return o;
}

/* The host's bandwidth, once something was priced at it. */
static void json_host_bandwidth(cJSON *device, const PDevice *d) {
    if (d->host_bandwidth.value <= 0) return;
    cJSON *bw = cJSON_AddObjectToObject(device, "host_memory_bandwidth");
    cJSON_AddNumberToObject(bw, "value", d->host_bandwidth.value);
    cJSON_AddStringToObject(bw, "source", d->host_bandwidth.source);
}

static int predict_program(Program *p, const Options *o, PDevice *d) {
    PAtoms atoms = {0};
    cJSON *doc = o->json ? cJSON_CreateObject() : NULL, *list = NULL;
    if (doc) {
        cJSON_AddItemToObject(doc, "device", json_device(d));
        list = cJSON_AddArrayToObject(doc, "functions");
    } else {
        printf("device %s: %s; %.4g B/s (%s)\n\n", d->name, d->description, d->bandwidth.value,
               d->bandwidth.source);
    }
    int seen = 0;
    for (int i = 0; i < p->nitems; i++) {
        const Item *fn = p->items[i];
        if (fn->kind != ITEM_FN || (o->only && strcmp(o->only, fn->name) != 0)) continue;
        seen++;
        PCounts c;
        predict_function(p, fn, &atoms, &c);
        double values[PRED_MAX_ATOMS];
        for (int k = 0; k < PRED_MAX_ATOMS; k++) {
            values[k] = NAN;
            for (int s = 0; s < o->sizes.n && k < atoms.n; s++)
                if (atoms.kind[k] == PA_NAME && strcmp(o->sizes.name[s], atoms.name[k]) == 0)
                    values[k] = o->sizes.value[s];
        }
        predict_atoms_eval(&atoms, values);
        if (doc) cJSON_AddItemToArray(list, json_function(fn, &c, &atoms, values, d));
        else print_text(fn, &c, &atoms, values, d);
        predict_counts_free(&c);
    }
    predict_atoms_free(&atoms);
    if (doc) {
        json_host_bandwidth(cJSON_GetObjectItemCaseSensitive(doc, "device"), d);
        char *text = cJSON_Print(doc);
        printf("%s\n", text);
        free(text);
        cJSON_Delete(doc);
    }
    if (o->only && !seen) {
        fprintf(stderr, "cairn predict: error: no function '%s' in %s\n", o->only, o->path);
        return 2;
    }
    return 0;
}

int cmd_predict(int argc, char **argv) {
    Options o = {0};
    int rc = parse(argc, argv, &o);
    if (rc) return rc;
    PDevice d;
    char err[768];
    if (!predict_device(o.device, &d, err, sizeof err)) {
        fprintf(stderr, "cairn predict: error: %s\n", err);
        return 2;
    }
    Program *p = cmd_load_program("predict", o.path, &rc);
    if (p) rc = predict_program(p, &o, &d);
    ast_program_free(p);
    predict_device_free(&d);
    return rc;
}
