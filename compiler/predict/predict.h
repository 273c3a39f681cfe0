/* predict.h: `cairn predict`: what each function should cost on a device (docs/tools.md).
 *
 * Counting (predict.c). A function's body is walked once, statically: every element of a
 * view read or written counts its bytes in the view's memory space, every arithmetic
 * operation counts one operation of its kind, and a loop, region or reduction counts its
 * body summed over its index: the body's counts are polynomials in the loop variable
 * (and the function's parameters), summed exactly over lo..hi (predict_poly.c), so a
 * triangle `for j in i..n` inside `for i in 0..n` counts n(n+1)/2. A range that may be
 * empty is gated by the indicator [hi - lo > 0], so it counts 0, never a negative number,
 * under --size. Both arms of an `if` count (an upper bound), calls count the callee with
 * its arguments substituted, constants fold (`n / T` with `const T`, `1 << 16`), and
 * quotients, remainders, min and max of sizes are derived atoms that --size gives values
 * to. mma_unordered(m, n, k, ...) is 2mnk tensor operations of its operands' format; an
 * exact float sum (reduce + parallel) is 12 f64 additions a term (numerics.md).
 *
 * Pricing (predict_devices.c). A device table (configs/devices/NAME.json, embedded in the
 * binary at build time) gives the memory bandwidth and a peak per kind of operation,
 * each with its source; host views are priced at the host's bandwidth (the table's
 * host_memory_bandwidth, else measured on this machine). The roofline time is the largest
 * of host bytes / host bandwidth, device bytes / device bandwidth and the sum over kinds
 * of ops / peak, and the largest names the binding roof. */
#ifndef CAIRN_PREDICT_H
#define CAIRN_PREDICT_H

#include <stdbool.h>
#include <stdio.h>

#include "syntax/syntax.h"

#define PRED_MAX_ATOMS 48
#define PRED_MAX_DEPTH 16 /* calls deep: a longer chain (recursion) is cut there */

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
    bool cut; /* a call chain deeper than PRED_MAX_DEPTH calls: what lies past it is not counted */
} PCounts;

/* What an atom is: a parameter (bound by --size), a loop variable (summed out), derived
 * from its two operand polynomials (a quotient, remainder, min, max, or the indicator
 * [def[0] > 0]), or an expression not understood (never bound). */
typedef enum PAtomKind {
    PA_NAME,
    PA_LOOP,
    PA_DIV,
    PA_REM,
    PA_MIN,
    PA_MAX,
    PA_POS,
    PA_OPAQUE
} PAtomKind;

/* The atoms polynomials range over. */
typedef struct PAtoms {
    char *name[PRED_MAX_ATOMS];
    PAtomKind kind[PRED_MAX_ATOMS];
    Poly def[PRED_MAX_ATOMS][2];
    int n;
    bool overflow; /* more atoms than fit: the rest count as 1 */
} PAtoms;

/* Counts fn's body; returns false (with a message in err) when it cannot. */
bool predict_function(Program *p, const Item *fn, PAtoms *atoms, PCounts *out);
void predict_counts_free(PCounts *c);

/* ---- polynomials and atoms (predict_poly.c) ---- */
void predict_poly_free(Poly *p);
Poly predict_poly_const(double c);
Poly predict_poly_copy(const Poly *a);
Poly predict_poly_mul(const Poly *a, const Poly *b);
/* *acc += scale * a */
void predict_poly_add(Poly *acc, const Poly *a, double scale);
/* The value of a polynomial without atoms. */
bool predict_poly_const_value(const Poly *p, double *out);
bool predict_poly_uses(const Poly *p, int atom);
/* p with atom a replaced by v. */
Poly predict_poly_subst(const Poly *p, int a, const Poly *v);
/* The sum of p over atom a = lo .. hi - 1 (false when a's power passes 4). */
bool predict_poly_sum(const Poly *p, int a, const Poly *lo, const Poly *hi, Poly *out);
/* Every coefficient nonnegative (atoms are sizes, counts and indicators). */
bool predict_poly_surely_nonneg(const Poly *p, const PAtoms *atoms);
/* The polynomial's value with atoms bound (values[i] for atom i; NAN when unbound):
 * returns false if an atom it uses is unbound. */
bool predict_poly_eval(const Poly *p, const double *values, double *out);
/* "16*n + 8" (atoms by name), "0" for none. */
char *predict_poly_text(const Poly *p, const PAtoms *atoms);
bool predict_poly_is_zero(const Poly *p);
/* The atom named name (made with its kind and operands when new); -1 when full. */
int predict_atom(PAtoms *atoms, const char *name, PAtomKind kind, const Poly *a, const Poly *b);
/* The polynomial of atom k alone (1 for -1). */
Poly predict_atom_poly(int k);
/* Gives derived atoms their values from the bound ones (in place). */
void predict_atoms_eval(const PAtoms *atoms, double *values);
void predict_atoms_free(PAtoms *atoms);

/* --size NAME=VALUE[,NAME=VALUE...] (the arg is cut up in place): appends to names and
 * values (at most max); false with a message in err. nonneg: sizes, not any value. */
#define PRED_MAX_SIZES 32
typedef struct PSizes {
    const char *name[PRED_MAX_SIZES];
    double value[PRED_MAX_SIZES];
    int n;
} PSizes;
bool predict_parse_sizes(char *arg, PSizes *out, bool nonneg, char *err, size_t errlen);

/* ---- device tables (predict_devices.c) ---- */

typedef struct PFigure {
    double value; /* per second; 0 when the device has none */
    char *source;
} PFigure;

typedef struct PDevice {
    char *name, *description;
    PFigure bandwidth;      /* bytes per second, global memory */
    PFigure host_bandwidth; /* the host's memory, for host views (0: not known yet) */
    PFigure peak[OP_COUNT];
    PFigure sms;
} PDevice;

/* Loads NAME's table: an embedded configs/devices/NAME.json, a path to a JSON file, or
 * "host", measured now. Returns false with a message (which lists the known devices). */
bool predict_device(const char *name, PDevice *out, char *err, size_t errlen);
/* Fills d->host_bandwidth when the table gave none: measured on this machine now. */
void predict_host_bandwidth(PDevice *d);
void predict_device_free(PDevice *d);
/* The embedded device names, comma separated (static storage). */
const char *predict_device_names(void);

#endif
