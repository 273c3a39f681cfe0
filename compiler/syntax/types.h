/* types.h: CAIRN's types, as written in source and as the checker assigns them.
 *
 * Scalar types are static singletons (type_scalar(TY_F32) == type_scalar(TY_F32)), so a
 * pass may compare scalar types by pointer; views and fragments are arena nodes and are
 * compared with type_equal(). TY_ERROR marks an expression whose error was already
 * reported: checks that meet it stay silent, so one mistake gives one diagnostic.
 */
#ifndef CAIRN_TYPES_H
#define CAIRN_TYPES_H

#include <stdbool.h>
#include <stddef.h>

#include "base/base.h"

typedef struct Expr Expr;

typedef enum TypeKind {
    TY_ERROR,
    TY_VOID,
    TY_BOOL,
    /* integers, in this order (type_is_int relies on it) */
    TY_I8,
    TY_I16,
    TY_I32,
    TY_I64,
    TY_U8,
    TY_U16,
    TY_U32,
    TY_U64,
    TY_USIZE,
    /* compute floats */
    TY_F32,
    TY_F64,
    /* storage floats: convert only */
    TY_F16,
    TY_BF16,
    TY_F8E4M3,
    TY_F8E5M2,
    TY_STRING,   /* observe's name */
    TY_VIEW,     /* ro<T>[n], rw<T>[n], rw<T>, and buffer/shared arrays */
    TY_FRAGMENT, /* WmmaA[f16, 16, 16, 16] ... */
    TY_LAYOUT    /* rows(16, 16) ... */
} TypeKind;

typedef enum Access { ACCESS_RO, ACCESS_RW } Access;

typedef enum Placement { PLACE_HOST, PLACE_DEVICE, PLACE_UNIFIED } Placement;

typedef enum FragFamily { FRAG_WMMA, FRAG_MMA, FRAG_TMEM } FragFamily;
typedef enum FragRole { FRAG_A, FRAG_B, FRAG_ACC } FragRole;

/* Where an array came from: a parameter view, a `buffer` or a `shared` array. */
typedef enum ViewOrigin { VIEW_PARAM, VIEW_BUFFER, VIEW_SHARED } ViewOrigin;

typedef struct Type Type;
typedef struct TypeView {
    Access access;
    const Type *elem; /* a scalar type */
    Expr *extent;     /* n of [n]; NULL for a scalar reference rw<T> */
    Placement place;
    ViewOrigin origin;
} TypeView;
typedef struct TypeFrag {
    FragFamily family;
    FragRole role;
    const Type *elem;
    int m, n, k;
} TypeFrag;
struct Type {
    TypeKind kind;
    union {
        TypeView view;
        TypeFrag frag;
    } u;
};

const Type *type_scalar(TypeKind k); /* TY_ERROR .. TY_STRING, and TY_LAYOUT */
Type *type_new_view(Arena *a, TypeView v);
Type *type_new_fragment(Arena *a, TypeFrag f);

bool type_is_int(const Type *t);
bool type_is_signed(const Type *t);
bool type_is_compute_float(const Type *t); /* f32 f64 */
bool type_is_storage_float(const Type *t); /* f16 bf16 f8e4m3 f8e5m2 */
bool type_is_float(const Type *t);         /* either */
bool type_is_scalar(const Type *t);        /* bool, int, float */
bool type_is_error(const Type *t);
int type_bits(const Type *t); /* width of a scalar in bits (usize: 64) */
/* Structural equality; view extents are not compared (they are checked at calls). */
bool type_equal(const Type *a, const Type *b);
/* Source spelling: "f32", "ro<f64>[n]", "WmmaA[f16, 16, 16, 16]". Returns buf. Extent
 * expressions print as "[..]" unless print.c supplies them (type_to_source). */
const char *type_name(const Type *t, char *buf, size_t size);
/* Keyword spelling of a scalar kind ("f32"), or NULL. */
const char *type_kind_keyword(TypeKind k);
/* The scalar kind a keyword spells, or TY_ERROR. */
TypeKind type_kind_from_keyword(const char *s, size_t len);
const char *type_frag_family_name(FragFamily f, FragRole r); /* "WmmaA" ... */

#endif
