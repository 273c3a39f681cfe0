/* check_internal.h: the checker's state, shared by check.c (items, statements, regions)
 * and check_expr.c (expressions and builtins). Not for other passes: they read the
 * checked tree (ast.h). */
#ifndef CAIRN_CHECK_INTERNAL_H
#define CAIRN_CHECK_INTERNAL_H

#include "check/check.h"
#include "grad/grad.h"

/* Constructs a later stage gives meaning to: refused with a deferred E-UNSUPPORTED,
 * once per function and kind. */
typedef enum Later {
    LATER_DEVICE,
    LATER_COOP,
    LATER_FRAGMENT,
    LATER_LAYOUT,
    LATER_MMA,
    LATER_WARP,
    LATER_WIDE,
    LATER_COUNT
} Later;

/* An access to an array inside a lane, for the race rule (checked at the region's end). */
typedef struct LaneAccess {
    Symbol *array;
    bool write;
    bool at_lane_index; /* index is exactly the lane's variable */
    bool whole;         /* passed to a function that may write any element */
    Span span;
    bool atomic; /* the target of an atomic */
} LaneAccess;

typedef struct Region {
    struct Region *outer;
    bool lane;           /* parallel body or reduce/scan parallel yield */
    bool coop;           /* blocks ... threads ... */
    Symbol *lane_var;    /* parallel index / threads variable */
    const Expr *lane_lo; /* coop: the first thread (NULL: 0), for warp positions */
    int scope_base;      /* locals below this index are declared outside the region */
    Placement place;     /* placement of the arrays it touches so far */
    bool place_known;
    int nonuniform_depth;    /* coop: enclosing conditions that differ within a warp */
    int block_varying_depth; /* coop: enclosing conditions that differ within a block */
    const char **assigned;   /* coop: names the body assigns (or passes by reference) */
    int nassigned;
    LaneAccess *acc;
    int nacc, capacc;
} Region;

typedef struct Checker {
    Program *prog;
    Arena *arena;
    Diags *d;
    Symbol **globals;
    int nglobals, capglobals;
    Symbol **global_index; /* open-addressing hash of globals by name (power-of-two size) */
    int index_cap;
    Symbol **locals; /* a stack; scopes are marks into it */
    int nlocals, caplocals;
    Item *fn;       /* the function being checked */
    Region *region; /* innermost region, NULL on the host outside any */
    bool later_reported[LATER_COUNT];
    bool in_const;
    bool no_record;        /* checking an atomic's target: not a plain access */
    bool recording_atomic; /* region_record is noting an atomic's target */
    int expr_depth;
    int nitems_written; /* items in the source; derive appends after them */
} Checker;

/* check.c */
Symbol *check_lookup(Checker *c, const char *name);
Symbol *check_new_symbol(Checker *c, SymKind kind, const char *name, const Type *t, Span span);
void check_declare_local(Checker *c, Symbol *s);
void check_defer_later(Checker *c, Later what, Span span, const char *construct);
/* How a region uses an array: REC_WRITE a write (else a read), REC_WHOLE all of it (a view
 * passed on, else the element at index or a scalar). */
enum { REC_WRITE = 1u, REC_WHOLE = 2u };
void check_region_record(Checker *c, Symbol *array, unsigned how, Expr *index, Span span);
/* Records an atomic's target element and the reads in its index. */
void check_region_record_atomic(Checker *c, Expr *target);
void check_note_placement(Checker *c, const Type *view, Span span);
bool check_region_on_device(const Region *r);
bool check_in_lane(const Checker *c);
bool check_in_coop(const Checker *c);
bool check_warp_uniform(const Checker *c, const Expr *e);
bool check_block_uniform(const Checker *c, const Expr *e);
const Type *check_type_ok(Checker *c, const Type *t, Span span, bool param);
Region *check_push_region(Checker *c, Region *r, bool lane, bool coop, Symbol *var);
void check_pop_region(Checker *c, Region *r);
bool check_const_int(Checker *c, const Expr *e, int64_t *out, int depth);

/* check_expr.c */
const Type *check_expr(Checker *c, Expr *e, const Type *expected);
/* check_expr, then E-TYPE-MISMATCH unless the type is `want`; returns the expr's type. */
const Type *check_expr_as(Checker *c, Expr *e, const Type *want, const char *what);
bool check_untyped_literal(const Expr *e);
void check_binder(Checker *c, Binder *b);
void check_call_args_against(Checker *c, Expr *call, Item *fn);
const char *check_type_text(const Type *t); /* a type's spelling for messages (rotating buffers) */
const Type *check_set_type(Expr *e, const Type *t);
const Type *check_operator_error(Checker *c, Expr *e, const Type *t, const char *op);
const Type *check_args_loosely(Checker *c, Expr *e);
/* Checks two operands that must share a type, an untyped literal taking the other's. */
typedef struct CheckTypes {
    const Type *l, *r;
} CheckTypes;
CheckTypes check_pair(Checker *c, Expr *l, Expr *r, const Type *hint);

/* check_summary.c */
/* Sets every function's lane_effects (what it does, directly or through calls). */
void check_lane_effects(Checker *c);
/* The kinds of rounding a checked function performs, through its calls, as a sorted
 * comma-separated list (malloc'ed), for E-IMPL-NUMERICS. */
char *check_rounding_signature(const Item *fn);

/* check_facts.c */
/* Records every function's facts (check.h) once its body is checked without errors. */
void check_record_facts(Checker *c);

/* check_phase.c */
/* The phase rule of a checked cooperative region (E-COOP-PHASE, see the file's top). */
void check_phases(Checker *c, Stmt *blocks);

/* check_builtin.c */
const Type *check_builtin(Checker *c, Expr *e, Builtin b, Expr *receiver, const Type *expected);
/* E-TARGET-FEATURE / E-FRAGMENT for a written fragment type; TY_ERROR after an error. */
const Type *check_fragment_type(Checker *c, const Type *t, Span span);

#endif
