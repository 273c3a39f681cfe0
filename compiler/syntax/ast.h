/* ast.h: the CAIRN syntax tree, shared by every pass of the compiler.
 *
 * Ownership. Everything a parse creates (nodes, strings, types, symbols) lives in the
 * Program's arena and dies with ast_program_free(). No pass frees a node; a pass that makes
 * new nodes (derive grad, lowering temporaries) allocates them from the same arena with
 * ast_new_*() below or arena_alloc(), so one free releases all.
 *
 * Shape. A Program is a list of Items (fn, const, layout, derive). A function's body is
 * a Block of Stmts; an expression-bodied function `fn f() -> T = e;` also gets a body
 * holding the single statement `return e;` (with expr_body set so the printer writes it
 * back as written). Statements hold Exprs; Exprs hold Exprs. Types written in the source
 * (parameter types, let annotations, buffer elements, conversions, generic arguments) are
 * Type nodes parsed straight into the semantic representation of types.h.
 *
 * Passes. parse (parser.c) -> check (check.c: names resolved, every Expr's `type` set,
 * every Name's `sym` set, every Call's `builtin`/`fn` set) -> derive grad (grad*.c, adds
 * fn Items) -> lower (lower_c.c). A later pass walks the checked tree with plain switch
 * statements over the kinds below; it may rely on: no Expr has type NULL or TY_ERROR in
 * a program the checker accepted; every Name resolves; every Call's arity matches.
 * Typing details a lowering needs: a Name of a scalar rw<T> parameter has type T, and
 * its Symbol's type is the view (kind TY_VIEW, extent NULL), so it lowers as a deref;
 * a Name of an array has its view type (buffers: origin VIEW_BUFFER); a literal's type
 * is the type its exact value rounds into once; a scan's type is TY_VOID.
 *
 * Spans. Every node carries the span of its source text (file, 1-based line and column,
 * byte offset and length), which diagnostics underline and traps name.
 *
 * Stability: kinds and fields are only ever added, never renamed (other passes build
 * on this header).
 */
#ifndef CAIRN_AST_H
#define CAIRN_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "syntax/types.h"

typedef struct Span {
    const char *file; /* the path as given on the command line */
    int line, col;    /* 1-based */
    int off, len;     /* byte offset into the source text, and length in bytes */
} Span;

typedef struct Expr Expr;
typedef struct Stmt Stmt;
typedef struct Block Block;
typedef struct Item Item;
typedef struct Param Param;
typedef struct Symbol Symbol;

/* ---- symbols: what a name resolves to (filled by the checker) ---- */

typedef enum SymKind {
    SYM_LOCAL,  /* let / let mut; decl is the Stmt */
    SYM_PARAM,  /* function parameter; decl is the Param */
    SYM_LOOP,   /* for / parallel / reduce / blocks / threads binder (immutable) */
    SYM_BUFFER, /* buffer or shared array; decl is the Stmt */
    SYM_CONST,  /* top-level const; decl is the Item */
    SYM_LAYOUT, /* top-level layout; decl is the Item */
    SYM_FN,     /* a user function; decl is the Item */
    SYM_POISON  /* a name that failed to declare; uses are silent */
} SymKind;

struct Symbol {
    SymKind kind;
    const char *name;
    const Type *type;
    bool mut;           /* let mut, or a scalar rw<T> parameter */
    Span span;          /* where it was declared */
    int id;             /* unique within its function (locals), for lowering */
    bool lane_varying;  /* checker: in a cooperative region, may differ within a warp */
    bool block_varying; /* checker: in a cooperative region, may differ within a block */
    union {
        Stmt *stmt;
        Param *param;
        Item *item;
        Expr *expr;
    } decl;
};

/* ---- expressions ---- */

typedef enum ExprKind {
    EXPR_INT,     /* 42, 0x3555: exact integer constant, typed by context */
    EXPR_FLOAT,   /* 0.125, 1e16: exact decimal constant, rounded once into its type */
    EXPR_BOOL,    /* true, false */
    EXPR_STRING,  /* "name" (observe's first argument) */
    EXPR_NAME,    /* x; `std` of std.math.exp is a NAME under MEMBERs */
    EXPR_UNARY,   /* -x, !b */
    EXPR_BINARY,  /* a + b ... a || b */
    EXPR_CALL,    /* f(a), quantize[f16](x, s), std.math.exp(x), L.col(t, v) */
    EXPR_INDEX,   /* v[i] */
    EXPR_MEMBER,  /* a.b (a layout's .row, a path std.math) */
    EXPR_CONVERT, /* T(x): f32(h), u8(i), WmmaAcc[f32, 16, 16, 16](0.0) (fill) */
    EXPR_REDUCE,  /* reduce OP MODE i in n yield e; scan OP MODE i in n yield e into v */
    EXPR_ZEROED   /* the `zeroed` initialiser of buffer and shared */
} ExprKind;

/* What an operation means, in one table (syntax/ops.def): each row's columns, for the
 * passes that read them. */
typedef enum OpFamily {
    FAM_STORAGE, /* quantize */
    FAM_BITS,    /* to_bits, from_bits */
    FAM_EXACT,   /* sqrt, abs, floor, ceil, trunc, min, max */
    FAM_MATH,    /* std.math */
    FAM_CR,      /* std.cr */
    FAM_OBSERVE,
    FAM_COPY,
    FAM_ATOMIC,
    FAM_MMA,     /* mma_unordered and the fragment accesses */
    FAM_ENCLOSE, /* mm_enclose */
    FAM_WIDE,    /* load_wide, store_wide */
    FAM_SHUFFLE,
    FAM_LAYOUT, /* layout constructors */
    FAM_METHOD, /* layout methods */
    FAM_FN      /* another float function, with no family of its own */
} OpFamily;

typedef enum OpRule {
    RULE_QUANTIZE,
    RULE_BITS,
    RULE_FLOAT1,
    RULE_FLOAT2,
    RULE_CR,
    RULE_OBSERVE,
    RULE_COPY,
    RULE_ATOMIC,
    RULE_MMA,
    RULE_MMA_ACCESS,
    RULE_ENCLOSE,
    RULE_WIDE,
    RULE_SHUFFLE,
    RULE_LAYOUT
} OpRule;

typedef enum OpRounding {
#define ROUNDING(id, receipt, wording) RND_##id,
#include "syntax/ops.def"
    RND_COUNT
} OpRounding;

enum { W_HOST = 1u, W_LANE = 2u, W_DEVICE = 4u, W_REGION = 8u, W_SPAWNS = 16u };
#define W_ANY (W_HOST | W_LANE | W_DEVICE | W_REGION)

/* The trap kinds of guards (GUARD rows); GB(KIND) is a kind's bit in a guards column. */
typedef enum GuardKind {
#define GUARD(kind, wording) GK_##kind,
#include "syntax/ops.def"
    GK_COUNT
} GuardKind;
#define GB(kind) (1u << GK_##kind)

typedef enum OpGrad { GRAD_NONE, GRAD_ZERO, GRAD_RULE } OpGrad;
typedef enum OpCost { COST_NONE, COST_RESULT, COST_F32, COST_MATMUL, COST_GEMM } OpCost;
typedef enum OpClass { OPC_ARITH, OPC_COMPARE, OPC_LOGIC, OPC_BITS, OPC_SHIFT } OpClass;

typedef enum UnaryOp {
#define UNOP(id, spelling, rounding, guards, grad, cost) id,
#include "syntax/ops.def"
    UN_COUNT
} UnaryOp;

typedef enum BinaryOp {
#define BINOP(id, spelling, opclass, rounding, guards, grad, cost) id,
#include "syntax/ops.def"
    BIN_COUNT
} BinaryOp;

/* The forms besides calls and operators that round or guard (FORM rows). */
typedef enum OpForm {
#define FORM(id, spelling, rounding, guards, cost) id,
#include "syntax/ops.def"
    FORM_COUNT
} OpForm;

typedef enum ReduceOp {
    RED_ADD,
    RED_MUL,
    RED_MIN,
    RED_MAX,
    RED_BITAND,
    RED_BITOR,
    RED_BITXOR
} ReduceOp;

/* How a reduction or scan runs: in written order, on the pool (exact for float +), or
 * across a warp's lanes inside a cooperative region (fixed butterfly). */
typedef enum ReduceMode { MODE_FOR, MODE_PARALLEL, MODE_WARP } ReduceMode;

/* Builtin functions a Call may resolve to; BI_NONE is a user function (Call.fn). The
 * table is ops.def (OP rows). */
typedef enum Builtin {
    BI_NONE = 0,
#define OP(id, spelling, amin, amax, generics, family, rule, rounding, where, guards, grad, cost,  \
           module)                                                                                 \
    id,
#include "syntax/ops.def"
    BI_COUNT
} Builtin;

/* One row of ops.def, its columns but the module (lower/ reads that one) and the
 * per-target ones. */
typedef struct OpInfo {
    const char *spelling;
    int min_args, max_args, generics;
    OpFamily family;
    OpRule rule;
    OpRounding rounding;
    unsigned where;  /* W_* bits */
    unsigned guards; /* GB(...) bits */
    OpGrad grad;
    OpCost cost;
} OpInfo;

typedef struct OperatorInfo {
    const char *spelling;
    OpClass opclass; /* binary operators */
    OpRounding rounding;
    unsigned guards;
    OpGrad grad;
    OpCost cost;
} OperatorInfo;

/* The row of builtin b (BI_NONE: an empty row), of an operator, of a form. */
const OpInfo *ast_op(Builtin b);
const OperatorInfo *ast_binop(BinaryOp op);
const OperatorInfo *ast_unop(UnaryOp op);
OpRounding ast_form_rounding(OpForm f);
unsigned ast_form_guards(OpForm f);
OpCost ast_form_cost(OpForm f);
/* A rounding class's ROUNDING row: the receipt's name (NULL: none of its own), and how
 * cairn verify says a value it does not know was rounded ("the C library's rounding"). */
const char *ast_rounding_receipt(OpRounding r);
const char *ast_rounding_text(OpRounding r);
/* The builtin spelt SPELLING ("sqrt", "std.math.exp", ".col"), or BI_NONE. */
Builtin ast_builtin_lookup(const char *spelling);
/* How the guards of kind k trap ("integer overflow"). */
const char *ast_guard_text(GuardKind k);

static inline bool ast_builtin_is_atomic(Builtin b) { return ast_op(b)->family == FAM_ATOMIC; }
static inline bool ast_builtin_is_cr(Builtin b) { return ast_op(b)->family == FAM_CR; }
/* The exact float functions (sqrt, abs, floor, ceil, trunc, min, max). */
static inline bool ast_builtin_is_exact(Builtin b) { return ast_op(b)->family == FAM_EXACT; }
/* std.math, host only. */
static inline bool ast_builtin_is_math(Builtin b) { return ast_op(b)->family == FAM_MATH; }
/* Whether a call's compute-float value is made by the machine's float arithmetic: a
 * function of numbers by the rule column (the exact functions, std.math), so a device
 * lane's NaN from it has the device's bits ("NaN bits" in docs/devices.md); moves
 * (to_bits, std.cr, atomics, fragments) keep theirs. The lowering and verify read it. */
static inline bool ast_builtin_makes_float(Builtin b) {
    return ast_op(b)->rule == RULE_FLOAT1 || ast_op(b)->rule == RULE_FLOAT2;
}
/* A layout's method (.cosize, .row, ...), whose callee holds its receiver. */
static inline bool ast_builtin_is_method(Builtin b) { return ast_op(b)->family == FAM_METHOD; }
/* An arithmetic operator (+ - * / %), a comparison (== ... >=). */
static inline bool ast_binop_is_arith(BinaryOp op) { return ast_binop(op)->opclass == OPC_ARITH; }
static inline bool ast_binop_is_compare(BinaryOp op) {
    return ast_binop(op)->opclass == OPC_COMPARE;
}

struct Expr {
    ExprKind kind;
    Span span;
    const Type *type;                  /* set by the checker; TY_ERROR after a reported error */
    const struct cairn_layout *layout; /* checker: the folded value of a layout-typed
                                         * expression (compiler/syntax/layout.h), else NULL */
    union {
        struct {
            const char *text;
            uint64_t value;
            bool overflow;
        } int_lit; /* value: magnitude */
        struct {
            const char *text;
        } float_lit; /* exact decimal text as written */
        bool bool_lit;
        struct {
            const char *text;
            int len;
        } str; /* unescaped bytes */
        struct {
            const char *name;
            Symbol *sym;
        } name;
        struct {
            UnaryOp op;
            Expr *operand;
        } unary;
        struct {
            BinaryOp op;
            Expr *lhs, *rhs;
        } binary;
        struct {
            Expr *callee;          /* NAME, or MEMBER chain (std.math.exp, L.col) */
            const Type **generics; /* quantize[f16] -> {f16}; NULL when none */
            int ngenerics;
            Expr **args;
            int nargs;
            Builtin builtin; /* checker: which builtin, or BI_NONE */
            Item *fn;        /* checker: the user function when BI_NONE */
        } call;
        struct {
            Expr *base;
            Expr *index;
        } index;
        struct {
            Expr *base;
            const char *field;
            Span field_span;
        } member;
        struct {
            const Type *to;
            Expr *arg;
        } convert;
        struct {
            bool scan; /* scan ... into `into` (statement use only) */
            ReduceOp op;
            ReduceMode mode;
            const char *var; /* binder; "_" when unused; NULL for warp without one */
            Span var_span;
            Symbol *var_sym; /* checker */
            Expr *lo;        /* `i in a..b`: lo = a; `i in n`: lo = NULL (0) */
            Expr *count;     /* n, or b of a..b */
            Expr *body;      /* the yield */
            Expr *into;      /* scan target view; NULL for reduce */
            bool on_device;  /* checker: a pooled reduce/scan whose yield indexes a
                                         * @device view runs on the device */
        } reduce;
    } u;
};

/* ---- statements ---- */

typedef enum StmtKind {
    STMT_LET,      /* let [mut] x[:T] = e; */
    STMT_ASSIGN,   /* target = e;  target += e; ... */
    STMT_EXPR,     /* f(x);  scan ... ; */
    STMT_IF,       /* if c { } [else { } | else if ...] */
    STMT_FOR,      /* for i in a..b { } / for i in n { } */
    STMT_RETURN,   /* return [e]; */
    STMT_PARALLEL, /* parallel i in n { } : a lane per index */
    STMT_BLOCKS,   /* blocks g in G threads t in T { } : cooperative region */
    STMT_BUFFER,   /* buffer x:T[n][@place] = zeroed; */
    STMT_SHARED,   /* shared s:T[N] = zeroed;  (inside a blocks region) */
    STMT_BARRIER,  /* barrier; */
    STMT_BLOCK     /* { ... } */
} StmtKind;

typedef enum AssignOp { ASSIGN_SET, ASSIGN_ADD, ASSIGN_SUB, ASSIGN_MUL, ASSIGN_DIV } AssignOp;

struct Block {
    Span span;
    Stmt **stmts;
    int nstmts;
};

/* A loop-like binder: `i in n` or `i in a..b`. */
typedef struct Binder {
    const char *var; /* "_" when unused */
    Span var_span;
    Symbol *sym; /* checker */
    Expr *lo;    /* NULL means 0 */
    Expr *count; /* upper bound (exclusive) */
} Binder;

struct Stmt {
    StmtKind kind;
    Span span;
    union {
        struct {
            const char *name;
            Span name_span;
            bool mut;
            const Type *declared; /* NULL when inferred */
            Expr *init;
            Symbol *sym; /* checker */
        } let;
        struct {
            AssignOp op;
            Expr *target;
            Expr *value;
        } assign;
        Expr *expr;
        struct {
            Expr *cond;
            Block *then;
            Stmt *els;
        } if_; /* els: STMT_BLOCK or STMT_IF or NULL */
        struct {
            Binder b;
            Block *body;
        } for_;
        struct {
            Expr *value;
        } ret; /* NULL for `return;` */
        /* on_device (checker): the region runs on the device (a parallel region whose
         * body indexes a @device view; a blocks region always); otherwise a host pool
         * region. The lowering reads it and never recomputes placement. */
        struct {
            Binder b;
            Block *body;
            bool on_device;
        } parallel;
        struct {
            Binder grid;
            Binder threads;
            Block *body;
            bool on_device;
        } blocks;
        struct { /* buffer and shared */
            const char *name;
            Span name_span;
            const Type *elem;
            Expr *count;
            Placement place; /* PLACE_HOST unless @... */
            Expr *init;      /* EXPR_ZEROED */
            Symbol *sym;     /* checker */
        } alloc;
        Block *block;
    } u;
};

/* ---- items ---- */

typedef enum ItemKind {
    ITEM_FN,     /* fn f(params) [-> T] [implements g] { } | = e; */
    ITEM_CONST,  /* const N:T = e; */
    ITEM_LAYOUT, /* layout L = rows(16, 16); */
    ITEM_DERIVE  /* derive grad[w, b] for f; */
} ItemKind;

struct Param {
    const char *name;
    Span span; /* the whole `name:T` */
    Span name_span;
    const Type *type;
    Symbol *sym; /* checker */
};

struct Item {
    ItemKind kind;
    Span span;
    const char *name; /* fn / const / layout name; derive: the kind ("grad") */
    Span name_span;
    Symbol *sym; /* checker (fn, const, layout) */
    bool pub;    /* `pub fn` / `pub derive`: an entry of a library (cairn build --lib) */
    union {
        struct {
            Param **params;
            int nparams;
            const Type *ret; /* TYPE_VOID when no arrow */
            Span ret_span;
            Block *body;
            bool expr_body;         /* written `= e;`: body is { return e; } */
            const char *implements; /* `implements ref`; NULL when none */
            Span implements_span;
            Item *implements_fn;      /* checker */
            Expr *requires;           /* `requires e`: what callers promise; NULL when none */
            Item *derived_from;       /* set on functions derive made (grad), else NULL */
            int nlocals;              /* checker: symbols numbered 0..nlocals-1 */
            unsigned lane_effects;    /* checker: LANE_EFFECT_* bits, through its calls */
            struct CheckFacts *facts; /* checker: its roundings and guards (check/check.h) */
        } fn;
        struct {
            const Type *type;
            Expr *value;
            struct CheckFacts *facts; /* checker: the roundings of its value (check/check.h) */
        } const_;
        struct {
            Expr *value;
        } layout;
        struct {
            const char **wrt;
            Span *wrt_spans;
            int nwrt;      /* NULL/0: every float param */
            bool has_list; /* `grad[...]` written */
            const char *target;
            Span target_span;
            Item *target_fn; /* checker */
        } derive;
    } u;
};

/* What a function does that a lane may not (Item.u.fn.lane_effects). */
enum {
    LANE_EFFECT_PARALLEL = 1u, /* parallel/blocks regions, pooled reductions, mma */
    LANE_EFFECT_HOST_ONLY = 2u /* std.math (not std.cr), observe, buffer allocation */
};

typedef struct SourceFile {
    const char *path;
    const char *text; /* NUL-terminated */
    size_t len;
} SourceFile;

typedef struct Program {
    Arena *arena;
    SourceFile src;
    Item **items;
    int nitems;
    bool checked; /* the checker accepted it */
} Program;

/* Node constructors: zeroed nodes from the program's arena. */
Expr *ast_new_expr(Arena *a, ExprKind kind, Span span);
Stmt *ast_new_stmt(Arena *a, StmtKind kind, Span span);
Block *ast_new_block(Arena *a, Span span, Stmt **stmts, int nstmts);
Item *ast_new_item(Arena *a, ItemKind kind, Span span);
/* Appends an item (e.g. a derived function) to the program. */
void ast_program_add_item(Program *p, Item *it);
void ast_program_free(Program *p);

/* Calls visit(e, ctx) on every expression under a block, parents before children, in
 * source order: statement expressions, conditions, bounds, initialisers, arguments,
 * reduction parts and allocation lengths. Call callees (names of functions, builtins
 * and std.math paths) are not values and are not visited, except a layout method's
 * receiver (L of L.cosize()). */
void ast_visit_exprs(Block *b, void (*visit)(Expr *e, void *ctx), void *ctx);
/* The same walk over one expression and everything under it (pre-order). */
void ast_visit_expr(Expr *e, void (*visit)(Expr *e, void *ctx), void *ctx);

/* Names of operators, as written in source. */
const char *ast_binary_op_text(BinaryOp op);
const char *ast_unary_op_text(UnaryOp op);
const char *ast_reduce_op_text(ReduceOp op);
const char *ast_reduce_mode_text(ReduceMode m);
const char *ast_assign_op_text(AssignOp op);
/* The operator a compound assignment applies (+= is +); not for ASSIGN_SET. */
BinaryOp ast_assign_binop(AssignOp op);
const char *ast_builtin_name(Builtin b); /* as written, e.g. "std.math.exp" */

#endif
