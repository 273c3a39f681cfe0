/* grad_internal.h: derive grad's own declarations, shared by the files of grad/.
 *
 * For `derive grad[...] for f;` the checker calls cairn_derive_grad (grad/grad.h) once f
 * has checked. It builds f_grad as an ordinary function of fresh, unchecked nodes and
 * appends it to the program; the checker then checks it like any other, and lowering
 * and `cairn expand` see nothing special about it.
 *
 *   grad.c        the entry point: target and list (E-GRAD), the signature of f_grad,
 *                 and the walk that copies f and puts a backward sweep at each return
 *   grad_sweep.c  the backward sweep: statements in reverse, expressions' adjoints
 *                 (E-GRAD-FORM, E-GRAD-CALL, E-GRAD-RACE)
 *   grad_ast.c    fresh nodes, deep copies, growing statement lists, fresh names
 *   grad_cr.c     the derivatives of std.cr, in std.cr
 *
 * No tape: each return recomputes what its sweep needs (the lets on its path are in
 * scope; a loop's or region's backward twin recomputes its body's lets).
 */
#ifndef CAIRN_GRAD_INTERNAL_H
#define CAIRN_GRAD_INTERNAL_H

#include <stdbool.h>

#include "grad/grad.h"

/* A growing list of statements (malloc'ed; moved into the arena by stmts_block). */
typedef struct StmtList {
    Stmt **v;
    int n, cap;
} StmtList;

/* A value that carries an adjoint: a differentiated parameter, an active let, or a sum
 * (a float let mut one loop adds into). `adj` names where its adjoint is added. */
typedef struct Active {
    const Symbol *sym;
    const char *adj;
    const void *region; /* the parallel region whose body declares it, or NULL */
} Active;

typedef struct Grad {
    Program *prog;
    Arena *arena;
    Diags *diags;
    Item *derive;         /* the `derive grad` item */
    Item *fn;             /* f */
    bool has_seed;        /* f returns f32 or f64 */
    const char *seed;     /* name of the seed parameter */
    const char *result;   /* name of the let holding f's result at a return */
    bool *wrt;            /* per parameter of f: differentiated */
    const char **d_param; /* per parameter: its adjoint (d_x) or d_out name, or NULL */
    bool *writes;         /* per parameter: a float view f writes */
    Active *act;          /* what carries an adjoint */
    int nact, capact;
    const char **names; /* every name in use in f_grad (for fresh names); a name f
                             * declares twice (in sibling scopes) is listed twice */
    int nnames, capnames;
    /* Names f declares more than once, renamed where a backward twin recomputes them
     * (a twin runs after everything on its path, so a sibling's name is visible there). */
    const Symbol **ren_sym;
    const char **ren_name;
    int nren, capren;
    /* while sweeping a region: its statement and binder; adjoints declared outside it
     * may not be added into by a lane (E-GRAD-RACE). */
    const void *region; /* a STMT_PARALLEL or a reduce + parallel */
    const Symbol *lane;
    bool failed;
} Grad;

/* grad_ast.c */
/* Doubles *cap (from 0: 8) and reallocates v to it; out of memory aborts. */
void *grad_grow(void *v, int *cap, size_t elem);
void grad_stmts_push(StmtList *l, Stmt *s);
void grad_stmts_append(StmtList *l, const StmtList *more);
Block *grad_stmts_block(Grad *g, StmtList *l, Span span); /* frees l's array */
Expr *grad_mk_name(Grad *g, const char *name, Span sp);
Expr *grad_mk_float(Grad *g, const char *text, Span sp);
Expr *grad_mk_binary(Grad *g, BinaryOp op, Expr *lhs, Expr *rhs);
Expr *grad_mk_neg(Grad *g, Expr *x);
Expr *grad_mk_index(Grad *g, Expr *base, Expr *index);
Expr *grad_mk_convert(Grad *g, const Type *to, Expr *x);
Stmt *grad_mk_let(Grad *g, const char *name, bool mut, const Type *declared, Expr *init);
Stmt *grad_mk_assign(Grad *g, AssignOp op, Expr *target, Expr *value);
Stmt *grad_mk_expr_stmt(Grad *g, Expr *e);
Stmt *grad_mk_return(Grad *g, Expr *value, Span sp);
Expr *grad_clone_expr(Grad *g, const Expr *e);
/* adj times the derivative of the std.cr call e at its argument (grad_cr.c). */
Expr *grad_cr_adjoint(Grad *g, const Expr *e, Expr *adj);
/* Calls visit for every reduce in e, outermost first. */
void grad_each_reduce(Grad *g, const Expr *e, void (*visit)(Grad *g, const Expr *reduce));
Stmt *grad_clone_stmt(Grad *g, const Stmt *s);
Block *grad_clone_block(Grad *g, const Block *b);
const Type *grad_clone_type(Grad *g, const Type *t);
void grad_names_use(Grad *g, const char *name);
const char *grad_fresh_name(Grad *g, const char *base);
void grad_names_collect_fn(Grad *g, const Item *fn);
/* Gives sym a fresh name in every copy made from now on when f declares its name more
 * than once. */
void grad_rename_if_reused(Grad *g, const Symbol *sym);
/* The name copies use for sym (its own unless renamed). */
const char *grad_name_for(const Grad *g, const Symbol *sym, const char *name);

/* grad_sweep.c */
/* The backward sweep of a path (the statements before a return, outermost first) with
 * f's result adjoint: appends to out. ret is the returned expression or NULL. */
void grad_sweep_path(Grad *g, Stmt *const *path, int npath, const Expr *ret, StmtList *out);

/* grad_forms.c */
/* Marks the float views f writes (g->writes). */
void grad_find_writes(Grad *g);
/* Finds what carries an adjoint in f's body and refuses the statements derive grad
 * cannot differentiate. */
void grad_find_active(Grad *g);
const Active *grad_active_of(const Grad *g, const Symbol *sym);
bool grad_expr_active(const Grad *g, const Expr *e);
/* Whether s holds a return (an if that does is a fork of the path; one that does not is
 * a statement with a backward twin). */
bool grad_has_return(const Stmt *s);
/* The term a statement adds into the sum sym (s += e, s = s + e, ...), or NULL. */
const Expr *grad_sum_term(const Stmt *s, const Symbol *sym);
void grad_refuse(Grad *g, Span sp, Code code, const char *help, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* grad.c: which parameters of fn a derive item differentiates (mask of nparams). Reports
 * E-GRAD to d when d is not NULL. */
bool grad_wrt(Item *fn, const Item *derive, bool *mask, Diags *d);
/* The derive item targeting fn, or NULL. */
const Item *grad_derive_of(const Program *p, const Item *fn);
bool grad_param_is_float_view(const Param *p, Access acc);
bool grad_param_is_float_scalar(const Param *p);

#endif
