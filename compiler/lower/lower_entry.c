/* lower_entry.c: the C entry points of a lowered program.
 *
 * An executable's C `main`: for a CAIRN main without parameters it calls cairn_fn_main
 * and returns its status; for one with parameters it describes them in a table of
 * cairn_param (runtime/cairn_args.h), lets the runtime read the command line, evaluates
 * each view's declared extent from the scalars (the checked expression of the source,
 * with its own guards), hands the views over, calls cairn_fn_main and lets --out write
 * the rw views back. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "lower/lower_c_internal.h"
#include "lower/target_internal.h" /* lower_c_string */

/* The index of the parameter a view's extent names, when it is exactly a parameter's
 * name (`x:ro<f32>[n]`), else -1. */
static int extent_param(const Item *fn, const Type *view) {
    const Expr *e = view->u.view.extent;
    const Symbol *s = lower_expr_sym(e);
    for (int k = 0; s && k < fn->u.fn.nparams; k++)
        if (fn->u.fn.params[k]->sym == s) return k;
    return -1;
}

/* The C field of cairn_arg.value that holds a scalar of type t. */
static const char *value_field(const Type *t) {
    if (t->kind == TY_F32) return "f32";
    if (t->kind == TY_F64) return "f64";
    if (t->kind == TY_BOOL) return "b";
    return type_is_signed(t) ? "i" : "u";
}

/* static const cairn_param cairn_main_params[] = {...}; */
static void param_table(Lower *L, const Item *fn) {
    sb_puts(&L->defs, "static const cairn_param cairn_main_params[] = {\n");
    for (int k = 0; k < fn->u.fn.nparams; k++) {
        const Param *p = fn->u.fn.params[k];
        const Type *t = p->type;
        bool view = t->kind == TY_VIEW;
        char *decl = cairn_print_type(t);
        sb_printf(&L->defs, "    {\"%s\", \"%s\", %d, %d, ", p->name,
                  lower_type_word(view ? t->u.view.elem : t),
                  !view                           ? 0
                  : t->u.view.access == ACCESS_RO ? 1
                                                  : 2,
                  view ? extent_param(fn, t) : -1);
        lower_c_string(&L->defs, decl);
        sb_puts(&L->defs, "},\n");
        free(decl);
    }
    sb_puts(&L->defs, "};\n\n");
}

/* int main(int argc, char **argv) for a main with parameters. */
static void main_with_params(Lower *L, const Item *fn) {
    int n = fn->u.fn.nparams;
    lower_use_runtime(L, LOWER_MODULE_ARGS);
    param_table(L, fn);
    L->out = &L->defs;
    L->fn = fn;
    L->nlive = L->live_base = 0;
    cJSON *scratch = cJSON_CreateArray(); /* extents round nothing; main listed its own */
    L->entries = scratch;
    lower_emit(L, "int main(int argc, char **argv) {");
    L->indent = 1;
    lower_emit(L, "cairn_arg cairn_argv[%d];", n);
    lower_emit(L, "cairn_args cairn_a = {cairn_main_params, %d, cairn_argv, 0, 0};", n);
    lower_emit(L, "cairn_args_read(&cairn_a, argc, argv);");
    StrBuf call = {0};
    for (int k = 0; k < n; k++) { /* the scalars first: the extents are made of them */
        const Param *p = fn->u.fn.params[k];
        if (p->type->kind == TY_VIEW) continue;
        lower_emit(L, "const %s %s = (%s)cairn_argv[%d].value.%s;", lower_c_scalar(p->type),
                   lower_sym_c(L, p->sym), lower_c_scalar(p->type), k, value_field(p->type));
    }
    for (int k = 0; k < n; k++) {
        const Param *p = fn->u.fn.params[k];
        const char *name = lower_sym_c(L, p->sym);
        sb_printf(&call, "%s%s", k ? ", " : "", name);
        if (p->type->kind != TY_VIEW) continue;
        const char *extent = lower_expr(L, p->type->u.view.extent);
        const char *ct = lower_c_scalar(p->type->u.view.elem);
        const char *q = p->type->u.view.access == ACCESS_RO ? "const " : "";
        lower_emit(L, "cairn_args_view(&cairn_a, %d, (uint64_t)%s);", k, extent);
        lower_emit(L, "%s%s *%s = (%s%s *)cairn_argv[%d].data;", q, ct, name, q, ct, k);
        lower_emit(L, "const uint64_t %s = cairn_argv[%d].count;", lower_sym_len(L, p->sym), k);
        sb_printf(&call, ", %s", lower_sym_len(L, p->sym));
    }
    if (lower_fn_takes_loc(fn)) sb_printf(&call, ", %s", lower_at(L, fn->name_span));
    lower_emit(L, "const int32_t cairn_status = cairn_fn_main(%s);", call.data);
    lower_emit(L, "cairn_args_finish(&cairn_a);");
    lower_emit(L, "return (int)cairn_status;");
    L->indent = 0;
    lower_emit(L, "}");
    sb_free(&call);
    cJSON_Delete(scratch);
}

void lower_main_entry(Lower *L, const Item *fn) {
    assert(fn->kind == ITEM_FN && strcmp(fn->name, "main") == 0);
    if (fn->u.fn.nparams == 0) {
        sb_puts(&L->defs, "int main(void) {\n    return (int)cairn_fn_main();\n}\n");
        return;
    }
    main_with_params(L, fn);
}
