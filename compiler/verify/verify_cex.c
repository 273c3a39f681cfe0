/* verify_cex.c: a counterexample's inputs, printed and written as a replay program.
 *
 * The replay is the program's own source with its main function blanked out (spaces,
 * newlines kept, so every line and column stays where it was and a trap names the same
 * place in either file), then a new main that builds the inputs the solver found and
 * calls the function: `cairn run REPLAY` traps where the property said. For an
 * implementation, main calls the reference and the implementation on copies of the same
 * inputs and returns 10 when the results differ (11 when a written view differs), or
 * traps where one of them does. Floats are written as from_bits[T](0x...), exactly. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/base.h"
#include "verify/verify.h"

#define CEX_MAX_ELEMENTS 4096 /* elements of a view written into a replay */
#define CEX_SHOWN        8    /* elements of a view printed */

static Z3_ast eval(Verifier *V, Z3_model m, Z3_ast t) {
    Z3_ast out = NULL;
    if (!Z3_model_eval(V->z, m, t, true, &out)) return NULL;
    return out;
}

static uint64_t numeral(Verifier *V, Z3_ast v) {
    uint64_t u = 0;
    if (v && !Z3_get_numeral_uint64(V->z, v, &u)) u = 0;
    return u;
}

/* The value of term t of type ty in model m, as CAIRN source (and as JSON-friendly text). */
static char *value_source(Verifier *V, Z3_model m, Z3_ast t, const Type *ty, char **shown) {
    Z3_context z = V->z;
    Arena *a = V->prog->arena;
    if (ty->kind == TY_BOOL) {
        Z3_ast v = eval(V, m, t);
        const char *s = v && Z3_get_bool_value(z, v) == Z3_L_TRUE ? "true" : "false";
        *shown = arena_strdup(a, s);
        return arena_strdup(a, s);
    }
    if (type_is_int(ty)) {
        uint64_t u = numeral(V, eval(V, m, t));
        int bits = type_bits(ty);
        if (type_is_signed(ty) && bits < 64 && (u >> (bits - 1)) & 1) u |= ~(uint64_t)0 << bits;
        char *s = type_is_signed(ty) ? arena_printf(a, "%" PRId64, (int64_t)u)
                                     : arena_printf(a, "%" PRIu64, u);
        *shown = s;
        return s;
    }
    if (type_is_storage_float(ty)) {
        uint64_t u = numeral(V, eval(V, m, t));
        *shown = arena_printf(a, "bits 0x%" PRIx64, u);
        return arena_printf(a, "from_bits[%s](0x%" PRIx64 ")", type_kind_keyword(ty->kind), u);
    }
    bool f32 = ty->kind == TY_F32;
    Z3_ast v = eval(V, m, t);
    uint64_t u;
    if (v && Z3_fpa_is_numeral_nan(z, v)) u = f32 ? 0x7fc00000u : 0x7ff8000000000000u;
    else u = numeral(V, eval(V, m, Z3_mk_fpa_to_ieee_bv(z, t)));
    double d;
    if (f32) {
        uint32_t w = (uint32_t)u;
        float f;
        memcpy(&f, &w, 4);
        d = f;
    } else {
        memcpy(&d, &u, 8);
    }
    *shown = arena_printf(a, "%.17g (bits 0x%" PRIx64 ")", d, u);
    return arena_printf(a, "from_bits[%s](0x%" PRIx64 ")", f32 ? "f32" : "f64", u);
}

/* One input: declared in the replay's main as PREFIXname, printed and added to JSON. */
static void emit_input(Verifier *V, Z3_model m, int i, const char *prefix, StrBuf *src, FILE *out,
                       cJSON *json) {
    const Param *p = V->top->u.fn.params[i];
    const VCell *c = &V->inputs[i];
    const char *ty = type_kind_keyword(c->elem->kind);
    char *shown;
    if (!c->array) {
        char *v = value_source(V, m, c->val, c->elem, &shown);
        bool ref = p->type->kind == TY_VIEW;
        sb_printf(src, "  let %s%s%s:%s = %s;\n", ref ? "mut " : "", prefix, p->name, ty, v);
        if (out) fprintf(out, "    %s = %s\n", p->name, shown);
        if (json) cJSON_AddStringToObject(json, p->name, shown);
        return;
    }
    uint64_t len = numeral(V, eval(V, m, c->len));
    sb_printf(src, "  buffer %s%s:%s[%" PRIu64 "] = zeroed;\n", prefix, p->name, ty, len);
    if (out) fprintf(out, "    %s: %" PRIu64 " elements", p->name, len);
    cJSON *elems = json ? cJSON_CreateArray() : NULL;
    for (uint64_t k = 0; k < len && k < CEX_MAX_ELEMENTS; k++) {
        Z3_ast e = Z3_mk_select(V->z, c->val, verify_u64(V, k));
        char *v = value_source(V, m, e, c->elem, &shown);
        if (out && k < CEX_SHOWN) fprintf(out, "%s%s", k ? ", " : " [", shown);
        if (elems && k < CEX_SHOWN) cJSON_AddItemToArray(elems, cJSON_CreateString(shown));
        sb_printf(src, "  %s%s[%" PRIu64 "] = %s;\n", prefix, p->name, k, v);
    }
    if (out) fprintf(out, "%s\n", len == 0 ? "" : len > CEX_SHOWN ? ", ...]" : "]");
    if (json) {
        cJSON *o = cJSON_AddObjectToObject(json, p->name);
        cJSON_AddNumberToObject(o, "length", (double)len);
        cJSON_AddItemToObject(o, "first", elems);
    }
}

/* A main that takes parameters is replayed as any function is: its replay keeps it under
 * this name (as long as "main", so lines and columns stay) and calls it from a new main. */
#define CEX_RENAMED_MAIN "cexm"

static void call_text(Verifier *V, const Item *fn, const char *prefix, StrBuf *src) {
    sb_printf(src, "%s(", strcmp(fn->name, "main") == 0 ? CEX_RENAMED_MAIN : fn->name);
    for (int i = 0; i < fn->u.fn.nparams; i++)
        sb_printf(src, "%s%s%s", i ? ", " : "", prefix, V->top->u.fn.params[i]->name);
    sb_puts(src, ")");
}

/* `if A and B differ { return code; }` with floats compared by bits, NaNs all one. */
static void compare_text(StrBuf *src, const Type *t, const char *a, const char *b, int code,
                         const char *indent) {
    if (type_is_compute_float(t))
        sb_printf(src,
                  "%sif !(%s != %s && %s != %s) && to_bits(%s) != to_bits(%s) { return %d; }\n",
                  indent, a, a, b, b, a, b, code);
    else if (type_is_storage_float(t))
        sb_printf(src, "%sif to_bits(%s) != to_bits(%s) { return %d; }\n", indent, a, b, code);
    else sb_printf(src, "%sif %s != %s { return %d; }\n", indent, a, b, code);
}

static void implements_main(Verifier *V, Z3_model m, StrBuf *src, FILE *out, cJSON *json) {
    const Item *g = V->top, *f = g->u.fn.implements_fn;
    for (int i = 0; i < g->u.fn.nparams; i++) emit_input(V, m, i, "ref_", src, out, json);
    for (int i = 0; i < g->u.fn.nparams; i++) emit_input(V, m, i, "impl_", src, NULL, NULL);
    bool value = g->u.fn.ret && g->u.fn.ret->kind != TY_VOID;
    sb_puts(src, value ? "  let cex_want = " : "  ");
    call_text(V, f, "ref_", src);
    sb_puts(src, value ? ";\n  let cex_got = " : ";\n  ");
    call_text(V, g, "impl_", src);
    sb_puts(src, ";\n");
    if (value) compare_text(src, g->u.fn.ret, "cex_want", "cex_got", 10, "  ");
    for (int i = 0; i < g->u.fn.nparams; i++) {
        const Param *p = g->u.fn.params[i];
        if (p->type->kind != TY_VIEW || p->type->u.view.access != ACCESS_RW) continue;
        const Type *e = p->type->u.view.elem;
        if (!p->type->u.view.extent) {
            char *a = arena_printf(V->prog->arena, "ref_%s", p->name),
                 *b = arena_printf(V->prog->arena, "impl_%s", p->name);
            compare_text(src, e, a, b, 11, "  ");
            continue;
        }
        uint64_t len = numeral(V, eval(V, m, V->inputs[i].len));
        sb_printf(src, "  for cex_k in 0..%" PRIu64 " {\n",
                  len < CEX_MAX_ELEMENTS ? len : CEX_MAX_ELEMENTS);
        sb_printf(src, "    let cex_a = ref_%s[cex_k];\n    let cex_b = impl_%s[cex_k];\n", p->name,
                  p->name);
        compare_text(src, e, "cex_a", "cex_b", 11, "    ");
        sb_puts(src, "  }\n");
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
            memcpy(text + it->name_span.off, CEX_RENAMED_MAIN, 4);
            continue;
        }
        for (int k = it->span.off; k < it->span.off + it->span.len && (size_t)k < s->len; k++)
            if (text[k] != '\n') text[k] = ' ';
    }
    return text;
}

static char *replay_path(Verifier *V, const VProp *p) {
    const char *dir = V->opt->cex_dir;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return NULL;
    if (p->kind == VK_IMPLEMENTS)
        return arena_printf(V->prog->arena, "%s/%s_implements.cairn", dir, V->top->name);
    static const char *const slug[VK_COUNT] = {
        [VK_OVERFLOW] = "overflow", [VK_DIVZERO] = "divzero",   [VK_SHIFT] = "shift",
        [VK_INDEX] = "index",       [VK_CONVERT] = "convert",   [VK_FLOAT_CONVERT] = "convert",
        [VK_EXTENT] = "extent",     [VK_QUANT_SCALE] = "scale", [VK_QUANT_NAN] = "nan",
        [VK_E4M3] = "e4m3",         [VK_REQUIRES] = "requires", [VK_UNMODELLED] = "unmodelled"};
    return arena_printf(V->prog->arena, "%s/%s_%d_%d_%s.cairn", dir, V->top->name, p->span.line,
                        p->span.col, slug[p->kind]);
}

char *verify_write_cex(Verifier *V, Z3_model m, const VProp *p, FILE *out, char **inputs_json) {
    StrBuf src = {0};
    cJSON *json = cJSON_CreateObject();
    bool is_main = strcmp(V->top->name, "main") == 0 && V->top->u.fn.nparams == 0;
    char *text = is_main ? strdup(V->prog->src.text) : source_without_main(V);
    sb_puts(&src, text);
    free(text);
    if (!is_main) {
        sb_printf(&src,
                  "\n// Replay written by cairn verify: %s at %s:%d:%d.\nfn main() -> i32 {\n",
                  V->top->name, p->span.file, p->span.line, p->span.col);
        if (p->kind == VK_IMPLEMENTS) {
            implements_main(V, m, &src, out, json);
        } else {
            for (int i = 0; i < V->top->u.fn.nparams; i++)
                emit_input(V, m, i, "cex_", &src, out, json);
            bool value = V->top->u.fn.ret && V->top->u.fn.ret->kind != TY_VOID;
            sb_puts(&src, value ? "  let cex_result = " : "  ");
            call_text(V, V->top, "cex_", &src);
            sb_puts(&src, ";\n");
        }
        sb_puts(&src, "  return 0;\n}\n");
    } else if (out) {
        fprintf(out, "    (main takes no inputs: the program itself is the replay)\n");
    }
    char *path = replay_path(V, p);
    if (path) {
        FILE *f = fopen(path, "w");
        if (f) {
            fputs(src.data, f);
            fclose(f);
            path = strdup(path);
        } else {
            path = NULL;
        }
    }
    sb_free(&src);
    *inputs_json = cJSON_PrintUnformatted(json);
    cJSON_Delete(json);
    return path;
}
