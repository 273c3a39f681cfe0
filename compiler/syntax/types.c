/* types.c: scalar singletons, view and fragment types, predicates and spelling. */
#include "syntax/types.h"

#include <stdio.h>
#include <string.h>

static const Type scalars[] = {
#define S(k) [k] = {.kind = k}
    S(TY_ERROR),  S(TY_VOID), S(TY_BOOL),     S(TY_I8),     S(TY_I16),    S(TY_I32),
    S(TY_I64),    S(TY_U8),   S(TY_U16),      S(TY_U32),    S(TY_U64),    S(TY_USIZE),
    S(TY_F32),    S(TY_F64),  S(TY_F16),      S(TY_BF16),   S(TY_F8E4M3), S(TY_F8E5M2),
    S(TY_STRING), S(TY_VIEW), S(TY_FRAGMENT), S(TY_LAYOUT),
#undef S
};

static const char *const keywords[] = {
    [TY_VOID] = "void",     [TY_BOOL] = "bool", [TY_I8] = "i8",       [TY_I16] = "i16",
    [TY_I32] = "i32",       [TY_I64] = "i64",   [TY_U8] = "u8",       [TY_U16] = "u16",
    [TY_U32] = "u32",       [TY_U64] = "u64",   [TY_USIZE] = "usize", [TY_F32] = "f32",
    [TY_F64] = "f64",       [TY_F16] = "f16",   [TY_BF16] = "bf16",   [TY_F8E4M3] = "f8e4m3",
    [TY_F8E5M2] = "f8e5m2",
};

const Type *type_scalar(TypeKind k) {
    if ((unsigned)k >= sizeof scalars / sizeof scalars[0]) return &scalars[TY_ERROR];
    return &scalars[k];
}

Type *type_new_view(Arena *a, TypeView v) {
    Type *t = arena_alloc(a, sizeof *t);
    t->kind = TY_VIEW;
    t->u.view = v;
    return t;
}

Type *type_new_fragment(Arena *a, TypeFrag f) {
    Type *t = arena_alloc(a, sizeof *t);
    t->kind = TY_FRAGMENT;
    t->u.frag = f;
    return t;
}

bool type_is_int(const Type *t) { return t && t->kind >= TY_I8 && t->kind <= TY_USIZE; }
bool type_is_signed(const Type *t) { return t && t->kind >= TY_I8 && t->kind <= TY_I64; }
bool type_is_compute_float(const Type *t) { return t && (t->kind == TY_F32 || t->kind == TY_F64); }
bool type_is_storage_float(const Type *t) { return t && t->kind >= TY_F16 && t->kind <= TY_F8E5M2; }
bool type_is_float(const Type *t) { return type_is_compute_float(t) || type_is_storage_float(t); }
bool type_is_scalar(const Type *t) { return t && t->kind >= TY_BOOL && t->kind <= TY_F8E5M2; }
bool type_is_error(const Type *t) { return !t || t->kind == TY_ERROR; }

int type_bits(const Type *t) {
    switch (t->kind) {
    case TY_BOOL:
    case TY_I8:
    case TY_U8:
    case TY_F8E4M3:
    case TY_F8E5M2: return 8;
    case TY_I16:
    case TY_U16:
    case TY_F16:
    case TY_BF16: return 16;
    case TY_I32:
    case TY_U32:
    case TY_F32: return 32;
    case TY_I64:
    case TY_U64:
    case TY_USIZE:
    case TY_F64: return 64;
    default: return 0;
    }
}

bool type_equal(const Type *a, const Type *b) {
    if (a == b) return true;
    if (!a || !b || a->kind != b->kind) return false;
    if (a->kind == TY_VIEW)
        return a->u.view.access == b->u.view.access && a->u.view.place == b->u.view.place &&
               (a->u.view.extent == NULL) == (b->u.view.extent == NULL) &&
               type_equal(a->u.view.elem, b->u.view.elem);
    if (a->kind == TY_FRAGMENT)
        return a->u.frag.family == b->u.frag.family && a->u.frag.role == b->u.frag.role &&
               type_equal(a->u.frag.elem, b->u.frag.elem) && a->u.frag.m == b->u.frag.m &&
               a->u.frag.n == b->u.frag.n && a->u.frag.k == b->u.frag.k;
    return true; /* scalars of one kind */
}

const char *type_kind_keyword(TypeKind k) {
    if ((unsigned)k >= sizeof keywords / sizeof keywords[0]) return NULL;
    return keywords[k];
}

TypeKind type_kind_from_keyword(const char *s, size_t len) {
    for (int k = TY_BOOL; k <= TY_F8E5M2; k++)
        if (strlen(keywords[k]) == len && memcmp(keywords[k], s, len) == 0) return (TypeKind)k;
    return TY_ERROR;
}

const char *type_frag_family_name(FragFamily f, FragRole r) {
    static const char *const names[3][3] = {
        {"WmmaA", "WmmaB", "WmmaAcc"},
        {"MmaA", "MmaB", "MmaAcc"},
        {"TmemA", "TmemB", "TmemAcc"},
    };
    return names[f][r];
}

static const char *place_suffix(Placement p) {
    return p == PLACE_DEVICE ? "@device" : p == PLACE_UNIFIED ? "@unified" : "";
}

const char *type_name(const Type *t, char *buf, size_t size) {
    char elem[64];
    if (!t) {
        snprintf(buf, size, "?");
    } else if (t->kind == TY_VIEW) {
        type_name(t->u.view.elem, elem, sizeof elem);
        if (t->u.view.origin != VIEW_PARAM)
            snprintf(buf, size, "%s[..]%s", elem, place_suffix(t->u.view.place));
        else
            snprintf(buf, size, "%s<%s>%s%s", t->u.view.access == ACCESS_RO ? "ro" : "rw", elem,
                     t->u.view.extent ? "[..]" : "", place_suffix(t->u.view.place));
    } else if (t->kind == TY_FRAGMENT) {
        type_name(t->u.frag.elem, elem, sizeof elem);
        snprintf(buf, size, "%s[%s, %d, %d, %d]",
                 type_frag_family_name(t->u.frag.family, t->u.frag.role), elem, t->u.frag.m,
                 t->u.frag.n, t->u.frag.k);
    } else if (t->kind == TY_ERROR) {
        snprintf(buf, size, "{error}");
    } else if (t->kind == TY_STRING) {
        snprintf(buf, size, "string");
    } else if (t->kind == TY_LAYOUT) {
        snprintf(buf, size, "layout");
    } else {
        snprintf(buf, size, "%s", keywords[t->kind]);
    }
    return buf;
}
