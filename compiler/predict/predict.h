/* predict.h: `cairn predict`: what each function should cost on a device (docs/tools.md).
 *
 * Counting (predict.c). A function's body is walked once, statically: every element of a
 * view read or written counts its bytes in the view's memory space, every arithmetic
 * operation counts one operation of its kind, and a loop, region or reduction multiplies
 * what its body counts by its trip count (hi - lo), which stays a polynomial in the
 * function's parameters (and in opaque atoms for what is not + - *) until --size binds
 * them. Both arms of an `if` count (an upper bound), calls count the callee with its
 * arguments substituted, a loop variable used in an inner bound counts as its own upper
 * bound. mma_unordered(m, n, k, ...) is 2mnk tensor operations of its operands' format;
 * an exact float sum (reduce + parallel) is 12 f64 additions a term (numerics.md).
 *
 * Pricing (predict_devices.c). A device table (configs/devices/NAME.json, embedded in the
 * binary at build time) gives the memory bandwidth and a peak per kind of operation,
 * each with its source; the roofline time is max(global bytes / bandwidth, sum over kinds
 * of ops / peak), and the larger term names the binding roof. */
#ifndef CAIRN_PREDICT_H
#define CAIRN_PREDICT_H

#include <stdbool.h>
#include <stdio.h>

#include "syntax/syntax.h"

#define PRED_MAX_ATOMS 24

/* coef * prod(atom_i ^ pow[i]) */
typedef struct PTerm {
    double coef;
    unsigned char pow[PRED_MAX_ATOMS];
} PTerm;

typedef struct Poly {
    PTerm *t;
    int n;
} Poly;

typedef enum PSpace { SP_HOST, SP_DEVICE, SP_UNIFIED, SP_SHARED, SP_COUNT } PSpace;
typedef enum POp {
    OP_F32,
    OP_F64,
    OP_INT,
    OP_TENSOR_F16,
    OP_TENSOR_BF16,
    OP_TENSOR_FP8,
    OP_COUNT
} POp;

extern const char *const predict_space_names[SP_COUNT];
extern const char *const predict_op_names[OP_COUNT];

typedef struct PCounts {
    Poly read[SP_COUNT], written[SP_COUNT], ops[OP_COUNT];
} PCounts;

/* The atoms (parameter names, opaque expressions) polynomials range over. */
typedef struct PAtoms {
    const char *name[PRED_MAX_ATOMS];
    int n;
    bool overflow; /* more atoms than fit: the rest count as 1 */
} PAtoms;

/* Counts fn's body; returns false (with a message in err) when it cannot. */
bool predict_function(Program *p, const Item *fn, PAtoms *atoms, PCounts *out);
void predict_counts_free(PCounts *c);

/* Polynomials. */
void predict_poly_free(Poly *p);
/* The polynomial's value with atoms bound (values[i] for atom i; NAN when unbound):
 * returns false if an atom it uses is unbound. */
bool predict_poly_eval(const Poly *p, const double *values, double *out);
/* "16*n + 8" (atoms by name), "0" for none. */
char *predict_poly_text(const Poly *p, const PAtoms *atoms);
bool predict_poly_is_zero(const Poly *p);
/* *acc += scale * a */
void predict_poly_add(Poly *acc, const Poly *a, double scale);

/* ---- device tables (predict_devices.c) ---- */

typedef struct PFigure {
    double value; /* per second; 0 when the device has none */
    char *source;
} PFigure;

typedef struct PDevice {
    char *name, *description;
    PFigure bandwidth; /* bytes per second, global memory */
    PFigure peak[OP_COUNT];
    PFigure sms;
} PDevice;

/* Loads NAME's table: an embedded configs/devices/NAME.json, a path to a JSON file, or
 * "host", measured now. Returns false with a message (which lists the known devices). */
bool predict_device(const char *name, PDevice *out, char *err, size_t errlen);
void predict_device_free(PDevice *d);
/* The embedded device names, comma separated (static storage). */
const char *predict_device_names(void);

#endif
