/* verify_cex.c: a counterexample's inputs, printed and written as a replay program.
 *
 * The replay is the program's own source with its main function blanked out (spaces,
 * newlines kept, so every line and column stays where it was and a trap names the same
 * place in either file), then a new main that builds the inputs the solver found and
 * calls the function: `cairn run REPLAY` traps where the property said. For an
 * implementation, main calls the reference and the implementation on copies of the same
 * inputs and returns 10 when the results differ (11 when a written view differs), or
 * traps where one of them does. Floats are written as from_bits[T](0x...), exactly, a
 * NaN with its own payload. A view of any length is written whole: a buffer of its
 * length, a loop storing the model's default element when it is not zero, and one line
 * per element the model gives another value; a @device view is filled through a host
 * buffer and `copy` (a replay runs device work emulated), a @unified one directly.
 *
 * The replay's own names cannot meet the program's: every one starts with a prefix no
 * identifier of the source starts with (`cex_`, else `cex1_`, ...), then a role: an
 * input `in_NAME` (`ref_NAME`, `impl_NAME` for an implementation's two calls), a host
 * copy `host_...`, `back_...`, and the fixed `k`, `result`, `want`, `got`, `a`, `b`,
 * which hold no underscore and so differ from every role's name. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "lib/fs.h"
#include "verify/verify_internal.h"

#define CEX_SHOWN 8 /* elements of a view printed */

static bool ident_char(char ch, bool first) {
    return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (!first && ch >= '0' && ch <= '9');
}

/* Whether an identifier of the program's source starts with prefix (or, whole, is it):
 * every word of the text counts, comments too, which only errs towards another prefix. */
static bool in_source(Verifier *V, const char *prefix, bool whole) {
    const char *t = V->prog->src.text;
    size_t n = strlen(prefix);
    for (size_t i = 0; t[i];) {
        if (!ident_char(t[i], true) || (i > 0 && ident_char(t[i - 1], false))) {
            i++;
            continue;
        }
        size_t j = i;
        while (ident_char(t[j], false)) j++;
        if (j - i >= n && memcmp(t + i, prefix, n) == 0 && (!whole || j - i == n)) return true;
        i = j;
    }
    return false;
}

/* The replay's prefix (the header's rule), and its name role + name. */
static const char *pick_prefix(Verifier *V) {
    const char *p = "cex_";
    for (int k = 1; in_source(V, p, false); k++) p = arena_printf(V->prog->arena, "cex%d_", k);
    return p;
}

static const char *cex_name(Verifier *V, const char *role, const char *name) {
    return arena_printf(V->prog->arena, "%s%s%s", V->cex_prefix, role, name);
}

static Z3_ast eval(Verifier *V, Z3_model m, Z3_ast t) {
    Z3_ast out = NULL;
    if (!Z3_model_eval(V->z, m, t, true, &out)) return NULL;
    return out;
}

static uint64_t numeral(Verifier *V, Z3_ast v) {
    uint64_t u = 0;
    if (v && Z3_get_ast_kind(V->z, v) == Z3_NUMERAL_AST && !Z3_get_numeral_uint64(V->z, v, &u))
        u = 0;
    if (v && Z3_get_sort_kind(V->z, Z3_get_sort(V->z, v)) == Z3_BOOL_SORT)
        u = Z3_get_bool_value(V->z, v) == Z3_L_TRUE;
    return u;
}

/* A stored value of type ty (its bits, for floats) as CAIRN source, and as shown. */
static char *value_text(Verifier *V, uint64_t u, const Type *ty, char **shown) {
    Arena *a = V->prog->arena;
    if (ty->kind == TY_BOOL) {
        *shown = arena_strdup(a, u ? "true" : "false");
        return *shown;
    }
    if (type_is_int(ty)) {
        int bits = type_bits(ty);
        if (type_is_signed(ty) && bits < 64 && (u >> (bits - 1)) & 1) u |= ~(uint64_t)0 << bits;
        char *s = type_is_signed(ty) ? arena_printf(a, "%" PRId64, (int64_t)u)
                                     : arena_printf(a, "%" PRIu64, u);
        *shown = s;
        return s;
    }
    if (type_is_storage_float(ty)) {
        *shown = arena_printf(a, "bits 0x%" PRIx64, u);
        return arena_printf(a, "from_bits[%s](0x%" PRIx64 ")", type_kind_keyword(ty->kind), u);
    }
    *shown = arena_printf(a, "%.17g (bits 0x%" PRIx64 ")", verify_bits_value(ty, u), u);
    return arena_printf(a, "from_bits[%s](0x%" PRIx64 ")", type_kind_keyword(ty->kind), u);
}

/* ---- a view's elements in the model ---- */

typedef struct Elem {
    uint64_t index, value;
} Elem;

typedef struct ArrayModel {
    uint64_t dflt;
    Elem *e;
    int n, cap;
} ArrayModel;

static void add_elem(ArrayModel *am, uint64_t i, uint64_t v) {
    for (int k = 0; k < am->n; k++)
        if (am->e[k].index == i) return; /* a later store already gave it */
    if (am->n == am->cap) {
        am->cap = am->cap ? 2 * am->cap : 16;
        am->e = realloc(am->e, sizeof *am->e * (size_t)am->cap);
        if (!am->e) abort();
    }
    am->e[am->n++] = (Elem){i, v};
}

/* Reads the model's array value: stores over a constant array, or a function's table. */
static bool array_model(Verifier *V, Z3_model m, Z3_ast arr, ArrayModel *am) {
    Z3_context z = V->z;
    Z3_ast v = eval(V, m, arr);
    while (v && Z3_get_ast_kind(z, v) == Z3_APP_AST) {
        Z3_func_decl d = Z3_get_app_decl(z, Z3_to_app(z, v));
        Z3_decl_kind k = Z3_get_decl_kind(z, d);
        if (k == Z3_OP_STORE) {
            Z3_app app = Z3_to_app(z, v);
            add_elem(am, numeral(V, Z3_get_app_arg(z, app, 1)),
                     numeral(V, Z3_get_app_arg(z, app, 2)));
            v = Z3_get_app_arg(z, app, 0);
        } else if (k == Z3_OP_CONST_ARRAY) {
            am->dflt = numeral(V, Z3_get_app_arg(z, Z3_to_app(z, v), 0));
            return true;
        } else if (k == Z3_OP_AS_ARRAY) {
            Z3_func_interp fi = Z3_model_get_func_interp(z, m, Z3_get_as_array_func_decl(z, v));
            if (!fi) return false;
            Z3_func_interp_inc_ref(z, fi);
            for (unsigned i = 0; i < Z3_func_interp_get_num_entries(z, fi); i++) {
                Z3_func_entry en = Z3_func_interp_get_entry(z, fi, i);
                Z3_func_entry_inc_ref(z, en);
                add_elem(am, numeral(V, Z3_func_entry_get_arg(z, en, 0)),
                         numeral(V, Z3_func_entry_get_value(z, en)));
                Z3_func_entry_dec_ref(z, en);
            }
            am->dflt = numeral(V, Z3_func_interp_get_else(z, fi));
            Z3_func_interp_dec_ref(z, fi);
            return true;
        } else {
            return false;
        }
    }
    return false;
}

/* One element, read through the model (for what is printed, and a fallback). */
static uint64_t element(Verifier *V, Z3_model m, const VCell *c, uint64_t k) {
    return numeral(V, eval(V, m, Z3_mk_select(V->z, c->val, verify_u64(V, k))));
}

/* A replay being written: the model its inputs come from, the source text it adds to,
 * and where its inputs are printed (out) and recorded (json); either may be NULL. */
typedef struct Replay {
    Verifier *V;
    Z3_model m;
    StrBuf *src;
    FILE *out;
    cJSON *json;
} Replay;

/* A view input: buffer NAME:T[len] (on the host for a @device view, copied over). */
static void emit_view(const Replay *r, const VCell *c, const char *role, const char *pname) {
    Verifier *V = r->V;
    Z3_model m = r->m;
    StrBuf *src = r->src;
    const char *ty = type_kind_keyword(c->elem->kind), *name = cex_name(V, role, pname),
               *fill = name;
    uint64_t len = numeral(V, eval(V, m, c->len));
    char *shown;
    if (c->place == PLACE_DEVICE) {
        sb_printf(src, "  buffer %s:%s[%" PRIu64 "] @device = zeroed;\n", name, ty, len);
        fill = cex_name(V, arena_printf(V->prog->arena, "host_%s", role), pname);
    }
    sb_printf(src, "  buffer %s:%s[%" PRIu64 "]%s = zeroed;\n", fill, ty, len,
              c->place == PLACE_UNIFIED ? " @unified" : "");
    ArrayModel am = {0};
    if (!array_model(V, m, c->val, &am)) { /* element by element, as the model evaluates */
        am.n = 0;
        for (uint64_t k = 0; k < len && k < 4096; k++) add_elem(&am, k, element(V, m, c, k));
    }
    if (am.dflt && len)
        sb_printf(src, "  for %sk in 0..%" PRIu64 " { %s[%sk] = %s; }\n", V->cex_prefix, len, fill,
                  V->cex_prefix, value_text(V, am.dflt, c->elem, &shown));
    for (int k = am.n - 1; k >= 0; k--)
        if (am.e[k].index < len && am.e[k].value != am.dflt)
            sb_printf(src, "  %s[%" PRIu64 "] = %s;\n", fill, am.e[k].index,
                      value_text(V, am.e[k].value, c->elem, &shown));
    free(am.e);
    if (c->place == PLACE_DEVICE) sb_printf(src, "  copy(%s, %s);\n", name, fill);
}

/* One input: declared in the replay's main as the prefix, role and its name, printed and
 * added to JSON. */
static void emit_input(const Replay *r, int i, const char *role) {
    Verifier *V = r->V;
    Z3_model m = r->m;
    StrBuf *src = r->src;
    FILE *out = r->out;
    cJSON *json = r->json;
    const Param *p = V->top->u.fn.params[i];
    const VCell *c = &V->inputs[i];
    const char *ty = type_kind_keyword(c->elem->kind);
    const char *name = cex_name(V, role, p->name);
    char *shown;
    if (!c->array) {
        char *v = value_text(V, numeral(V, eval(V, m, c->val)), c->elem, &shown);
        bool ref = p->type->kind == TY_VIEW;
        sb_printf(src, "  let %s%s:%s = %s;\n", ref ? "mut " : "", name, ty, v);
        if (out) fprintf(out, "    %s = %s\n", p->name, shown);
        if (json) cJSON_AddStringToObject(json, p->name, shown);
        return;
    }
    emit_view(r, c, role, p->name);
    uint64_t len = numeral(V, eval(V, m, c->len));
    if (out) fprintf(out, "    %s: %" PRIu64 " elements", p->name, len);
    cJSON *elems = json ? cJSON_CreateArray() : NULL;
    for (uint64_t k = 0; k < len && k < CEX_SHOWN; k++) {
        value_text(V, element(V, m, c, k), c->elem, &shown);
        if (out) fprintf(out, "%s%s", k ? ", " : " [", shown);
        if (elems) cJSON_AddItemToArray(elems, cJSON_CreateString(shown));
    }
    if (out) fprintf(out, "%s\n", len == 0 ? "" : len > CEX_SHOWN ? ", ...]" : "]");
    if (json) {
        cJSON *o = cJSON_AddObjectToObject(json, p->name);
        cJSON_AddNumberToObject(o, "length", (double)len);
        cJSON_AddItemToObject(o, "first", elems);
    }
}

/* A main that takes parameters is replayed as any function is: its replay keeps it under
 * a name as long as "main" (so lines and columns stay) that the source does not hold,
 * and calls it from a new main. */
static const char *renamed_main(Verifier *V) {
    static const char *const names[] = {"cexm", "cexn", "cxm0", "cxm1", "cxm2", "cxm3"};
    for (size_t i = 0; i + 1 < sizeof names / sizeof names[0]; i++)
        if (!in_source(V, names[i], true)) return names[i];
    return names[sizeof names / sizeof names[0] - 1];
}

static void call_text(Verifier *V, const Item *fn, const char *role, StrBuf *src) {
    sb_printf(src, "%s(", strcmp(fn->name, "main") == 0 ? renamed_main(V) : fn->name);
    for (int i = 0; i < fn->u.fn.nparams; i++)
        sb_printf(src, "%s%s", i ? ", " : "", cex_name(V, role, V->top->u.fn.params[i]->name));
    sb_puts(src, ")");
}

/* `if A and B differ { return code; }` with floats compared by bits, NaNs all one (the
 * caller writes the line's indent). */
static void compare_text(StrBuf *src, const Type *t, const char *a, const char *b, int code) {
    if (type_is_compute_float(t))
        sb_printf(src, "if !(%s != %s && %s != %s) && to_bits(%s) != to_bits(%s) { return %d; }\n",
                  a, a, b, b, a, b, code);
    else if (type_is_storage_float(t))
        sb_printf(src, "if to_bits(%s) != to_bits(%s) { return %d; }\n", a, b, code);
    else sb_printf(src, "if %s != %s { return %d; }\n", a, b, code);
}

/* Compares a written view of the two calls element by element (a @device one through
 * host copies). */
static void compare_view(const Replay *r, const Param *p, int i) {
    Verifier *V = r->V;
    StrBuf *src = r->src;
    const Type *e = p->type->u.view.elem;
    uint64_t len = numeral(V, eval(V, r->m, V->inputs[i].len));
    const char *a = cex_name(V, "ref_", p->name), *b = cex_name(V, "impl_", p->name);
    if (V->inputs[i].place == PLACE_DEVICE) {
        const char *ty = type_kind_keyword(e->kind);
        const char *ab = cex_name(V, "back_ref_", p->name),
                   *bb = cex_name(V, "back_impl_", p->name);
        sb_printf(src, "  buffer %s:%s[%" PRIu64 "] = zeroed;\n  copy(%s, %s);\n", ab, ty, len, ab,
                  a);
        sb_printf(src, "  buffer %s:%s[%" PRIu64 "] = zeroed;\n  copy(%s, %s);\n", bb, ty, len, bb,
                  b);
        a = ab, b = bb;
    }
    const char *k = cex_name(V, "k", ""), *ea = cex_name(V, "a", ""), *eb = cex_name(V, "b", "");
    sb_printf(src, "  for %s in 0..%" PRIu64 " {\n", k, len);
    sb_printf(src, "    let %s = %s[%s];\n    let %s = %s[%s];\n", ea, a, k, eb, b, k);
    sb_puts(src, "    ");
    compare_text(src, e, ea, eb, 11);
    sb_puts(src, "  }\n");
}

static void implements_main(const Replay *r) {
    Verifier *V = r->V;
    StrBuf *src = r->src;
    const Item *g = V->top, *f = g->u.fn.implements_fn;
    Replay quiet = {V, r->m, src, NULL, NULL}; /* the second copy is not printed again */
    for (int i = 0; i < g->u.fn.nparams; i++) emit_input(r, i, "ref_");
    for (int i = 0; i < g->u.fn.nparams; i++) emit_input(&quiet, i, "impl_");
    bool value = g->u.fn.ret && g->u.fn.ret->kind != TY_VOID;
    const char *want = cex_name(V, "want", ""), *got = cex_name(V, "got", "");
    if (value) sb_printf(src, "  let %s = ", want);
    else sb_puts(src, "  ");
    call_text(V, f, "ref_", src);
    if (value) sb_printf(src, ";\n  let %s = ", got);
    else sb_puts(src, ";\n  ");
    call_text(V, g, "impl_", src);
    sb_puts(src, ";\n");
    if (value) {
        sb_puts(src, "  ");
        compare_text(src, g->u.fn.ret, want, got, 10);
    }
    for (int i = 0; i < g->u.fn.nparams; i++) {
        const Param *p = g->u.fn.params[i];
        if (p->type->kind != TY_VIEW || p->type->u.view.access != ACCESS_RW) continue;
        if (p->type->u.view.extent) {
            compare_view(r, p, i);
            continue;
        }
        sb_puts(src, "  ");
        compare_text(src, p->type->u.view.elem, cex_name(V, "ref_", p->name),
                     cex_name(V, "impl_", p->name), 11);
    }
}

/* The source with main's text blanked, keeping lines and columns (a main with
 * parameters under verification is renamed instead). */
static char *source_without_main(Verifier *V) {
    const SourceFile *s = &V->prog->src;
    char *text = malloc(s->len + 1);
    if (!text) abort();
    memcpy(text, s->text, s->len + 1);
    for (int i = 0; i < V->prog->nitems; i++) {
        const Item *it = V->prog->items[i];
        if (it->kind != ITEM_FN || strcmp(it->name, "main") != 0 || it->u.fn.derived_from) continue;
        if (it == V->top && (size_t)it->name_span.off + 4 <= s->len) {
            memcpy(text + it->name_span.off, renamed_main(V), 4);
            continue;
        }
        for (int k = it->span.off; k < it->span.off + it->span.len && (size_t)k < s->len; k++)
            if (text[k] != '\n') text[k] = ' ';
    }
    return text;
}

/* The operator or callee a property names, as a file name's part ("mul", "first_y"). */
static const char *detail_slug(Verifier *V, const VProp *p) {
    static const char *const ops[][2] = {
        {"+", "add"},  {"-", "sub"},  {"*", "mul"},        {"/", "div"},   {"%", "rem"},
        {"<<", "shl"}, {">>", "shr"}, {"negation", "neg"}, {"abs", "abs"}, {"reduce +", "reduce"}};
    if (!p->detail) return "";
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(p->detail, ops[i][0]) == 0)
            return arena_printf(V->prog->arena, "_%s", ops[i][1]);
    char *s = arena_printf(V->prog->arena, "_%s", p->detail);
    size_t w = 1;
    for (size_t r = 1; s[r]; r++) {
        char ch = s[r];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
        if (ok) s[w++] = ch;
        else if (s[w - 1] != '_') s[w++] = '_';
    }
    while (w > 1 && s[w - 1] == '_') w--;
    s[w] = '\0';
    return s;
}

const char *verify_replay_name(Verifier *V, const VProp *p) {
    if (p->kind == VK_IMPLEMENTS)
        return arena_printf(V->prog->arena, "%s_implements.cairn", V->top->name);
    static const char *const slug[VK_COUNT] = {
        [VK_OVERFLOW] = "overflow", [VK_DIVZERO] = "divzero",      [VK_SHIFT] = "shift",
        [VK_INDEX] = "index",       [VK_CONVERT] = "convert",      [VK_FLOAT_CONVERT] = "convert",
        [VK_EXTENT] = "extent",     [VK_QUANT_SCALE] = "scale",    [VK_QUANT_NAN] = "nan",
        [VK_E4M3] = "e4m3",         [VK_REQUIRES] = "requires",    [VK_ALLOC] = "alloc",
        [VK_LAUNCH] = "launch",     [VK_UNMODELLED] = "unmodelled"};
    const char *k = p->occurrences > 1 ? arena_printf(V->prog->arena, "_%d", p->occurrence) : "";
    return arena_printf(V->prog->arena, "%s_%d_%d_%s%s%s.cairn", V->top->name, p->span.line,
                        p->span.col, slug[p->kind], detail_slug(V, p), k);
}

static char *write_replay(Verifier *V, const VProp *p, const char *text, Err *e) {
    const char *dir = V->opt->cex_dir;
    if (fs_mkdirs(dir, e) != 0) return NULL;
    char *path = arena_printf(V->prog->arena, "%s/%s", dir, verify_replay_name(V, p));
    FILE *f = fopen(path, "w");
    if (!f) {
        err_set(e, "cannot write %s: %s", path, strerror(errno));
        return NULL;
    }
    bool ok = fputs(text, f) >= 0;
    if (fclose(f) != 0 || !ok) {
        err_set(e, "cannot write %s: %s", path, strerror(errno));
        return NULL;
    }
    return strdup(path);
}

VReplay verify_write_cex(Verifier *V, Z3_model m, const VProp *p, FILE *out, Err *e) {
    StrBuf src = {0};
    cJSON *json = cJSON_CreateObject();
    Replay r = {V, m, &src, out, json};
    V->cex_prefix = pick_prefix(V);
    bool is_main = strcmp(V->top->name, "main") == 0 && V->top->u.fn.nparams == 0;
    char *text = is_main ? strdup(V->prog->src.text) : source_without_main(V);
    sb_puts(&src, text);
    free(text);
    if (!is_main) {
        sb_printf(&src,
                  "\n// Replay written by cairn verify: %s at %s:%d:%d.\nfn main() -> i32 {\n",
                  V->top->name, p->span.file, p->span.line, p->span.col);
        if (p->kind == VK_IMPLEMENTS) {
            implements_main(&r);
        } else {
            for (int i = 0; i < V->top->u.fn.nparams; i++) emit_input(&r, i, "in_");
            bool value = V->top->u.fn.ret && V->top->u.fn.ret->kind != TY_VOID;
            if (value) sb_printf(&src, "  let %s = ", cex_name(V, "result", ""));
            else sb_puts(&src, "  ");
            call_text(V, V->top, "in_", &src);
            sb_puts(&src, ";\n");
        }
        sb_puts(&src, "  return 0;\n}\n");
    } else if (out) {
        fprintf(out, "    (main takes no inputs: the program itself is the replay)\n");
    }
    VReplay done = {write_replay(V, p, src.data, e), cJSON_PrintUnformatted(json)};
    sb_free(&src);
    cJSON_Delete(json);
    return done;
}
