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
}

void lower_main_entry(Lower *L, const Item *fn) {
    assert(fn->kind == ITEM_FN && strcmp(fn->name, "main") == 0);
    L->item = NULL; /* the entry's own checks of its command line belong to no function */
    if (fn->u.fn.nparams == 0) {
        sb_puts(&L->defs, "int main(void) {\n    return (int)cairn_fn_main();\n}\n");
        return;
    }
    main_with_params(L, fn);
}

/* ---- a library's entries ---------------------------------------------------------- */

/* A C spelling of a scalar for the header, which includes no CAIRN header: storage
 * floats are their bits. */
static const char *header_scalar(const Type *t) {
    switch (t->kind) {
    case TY_F16:
    case TY_BF16: return "uint16_t";
    case TY_F8E4M3:
    case TY_F8E5M2: return "uint8_t";
    default: return lower_c_scalar(t);
    }
}

/* C and C++ words a parameter's name in the header may not be (it gets a '_'). */
static bool c_reserved(const char *name) {
    static const char *const words[] = {
        "auto",     "bool",     "break",    "case",     "char",     "class", "const",
        "continue", "default",  "delete",   "do",       "double",   "else",  "enum",
        "extern",   "float",    "goto",     "int",      "long",     "new",   "operator",
        "private",  "public",   "register", "restrict", "result",   "short", "signed",
        "sizeof",   "static",   "struct",   "switch",   "template", "this",  "typedef",
        "union",    "unsigned", "virtual",  "void",     "volatile", "while", "inline"};
    for (size_t k = 0; k < sizeof words / sizeof *words; k++)
        if (strcmp(words[k], name) == 0) return true;
    return false;
}

/* The header's name of parameter p (and "_len" for a view's count). */
static const char *header_name(Lower *L, const Param *p) {
    return c_reserved(p->name) || strstr(p->name, "_len") ? arena_printf(L->arena, "%s_", p->name)
                                                          : p->name;
}

/* The entry's C parameter list: in the header (pretty names) or in the C (internal
 * names), then the result's pointer. */
static void entry_params(Lower *L, const Item *fn, StrBuf *sb, bool header) {
    int n = fn->u.fn.nparams;
    for (int k = 0; k < n; k++) {
        const Param *p = fn->u.fn.params[k];
        const Type *t = p->type;
        const char *name = header ? header_name(L, p) : lower_sym_c(L, p->sym);
        const char *sep = k ? ", " : "";
        if (lower_is_view(t))
            sb_printf(sb, "%s%s%s *%s, uint64_t %s%s", sep,
                      t->u.view.access == ACCESS_RO ? "const " : "", header_scalar(t->u.view.elem),
                      name, name, header ? "_len" : "_n");
        else if (lower_is_scalar_ref(t))
            sb_printf(sb, "%s%s *%s", sep, header_scalar(t->u.view.elem), name);
        else sb_printf(sb, "%s%s %s", sep, header_scalar(t), name);
    }
    if (fn->u.fn.ret->kind != TY_VOID)
        sb_printf(sb, "%s%s *%s", n ? ", " : "", header_scalar(fn->u.fn.ret),
                  header ? "result" : "cairn_result");
    else if (n == 0) sb_puts(sb, "void");
}

/* "dot(n:usize, x:ro<f64>[n]) -> f64" */
static char *source_signature(const Item *fn) {
    StrBuf sb = {0};
    sb_printf(&sb, "%s(", fn->name);
    for (int k = 0; k < fn->u.fn.nparams; k++) {
        char *t = cairn_print_type(fn->u.fn.params[k]->type);
        sb_printf(&sb, "%s%s:%s", k ? ", " : "", fn->u.fn.params[k]->name, t);
        free(t);
    }
    sb_puts(&sb, ")");
    if (fn->u.fn.ret->kind != TY_VOID) sb_printf(&sb, " -> %s", lower_type_word(fn->u.fn.ret));
    return sb.data;
}

/* What the receipt says of entry fn, for callers that build calls from it (the Python
 * package): its symbol, where it is, each parameter's kind, type and extent. */
static cJSON *describe_entry(Lower *L, const Item *fn, const char *sig) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", fn->name);
    cJSON_AddStringToObject(e, "symbol",
                            arena_printf(L->arena, "%s_%s", L->opt->lib_prefix, fn->name));
    cJSON_AddStringToObject(e, "signature", sig);
    cJSON_AddStringToObject(e, "at",
                            arena_printf(L->arena, "%s:%d:%d", L->prog->src.path,
                                         fn->name_span.line, fn->name_span.col));
    cJSON *params = cJSON_AddArrayToObject(e, "params");
    for (int k = 0; k < fn->u.fn.nparams; k++) {
        const Param *p = fn->u.fn.params[k];
        const Type *t = p->type;
        cJSON *q = cJSON_CreateObject();
        cJSON_AddStringToObject(q, "name", p->name);
        const char *kind = lower_is_view(t) ? "view" : lower_is_scalar_ref(t) ? "ref" : "scalar";
        cJSON_AddStringToObject(q, "kind", kind);
        cJSON_AddStringToObject(q, "type",
                                lower_type_word(t->kind == TY_VIEW ? t->u.view.elem : t));
        if (t->kind == TY_VIEW)
            cJSON_AddStringToObject(q, "access", t->u.view.access == ACCESS_RO ? "ro" : "rw");
        if (lower_is_view(t) && t->u.view.place != PLACE_HOST)
            cJSON_AddStringToObject(q, "place",
                                    t->u.view.place == PLACE_DEVICE ? "device" : "unified");
        if (lower_is_view(t)) {
            char *extent = cairn_print_expr(t->u.view.extent);
            cJSON_AddStringToObject(q, "extent", extent);
            free(extent);
            int named = extent_param(fn, t);
            if (named >= 0)
                cJSON_AddStringToObject(q, "extent_param", fn->u.fn.params[named]->name);
        }
        cJSON_AddItemToArray(params, q);
    }
    if (fn->u.fn.ret->kind == TY_VOID) cJSON_AddNullToObject(e, "result");
    else cJSON_AddStringToObject(e, "result", lower_type_word(fn->u.fn.ret));
    return e;
}

/* The placement of parameter p's memory: PLACE_HOST unless a view placed off the host. */
static Placement param_place(const Param *p) {
    return lower_is_view(p->type) ? p->type->u.view.place : PLACE_HOST;
}

/* Whether fn takes a view placed @device or @unified: then it has a host entry too. */
static bool takes_device_views(const Item *fn) {
    for (int k = 0; k < fn->u.fn.nparams; k++)
        if (param_place(fn->u.fn.params[k]) != PLACE_HOST) return true;
    return false;
}

/* The work of entry fn: its pointers checked (a placed view's against its placement,
 * cairn_device.h), the call, the result stored. `copies`: the host entry, whose callers
 * give host memory for every view; each placed view is copied into a buffer of its
 * placement, the call gets the buffer, and an rw view is copied back. */
static void entry_body(Lower *L, const Item *fn, const char *at, bool copies) {
    StrBuf call = {0};
    for (int k = 0; k < fn->u.fn.nparams; k++) {
        const Param *p = fn->u.fn.params[k];
        const char *name = lower_sym_c(L, p->sym);
        Placement place = param_place(p);
        if (lower_is_view(p->type) && (copies || place == PLACE_HOST))
            lower_emit(L, "cairn_lib_check_pointer(%s, %s_n, \"%s\", %s);", name, name, p->name,
                       at);
        else if (lower_is_view(p->type))
            lower_emit(L, "cairn_device_check_place(%s, %s_n, %d, \"%s\", %s);", name, name,
                       (int)place, p->name, at);
        else if (lower_is_scalar_ref(p->type))
            lower_emit(L, "cairn_lib_check_pointer(%s, 1, \"%s\", %s);", name, p->name, at);
        if (copies && place != PLACE_HOST) {
            const char *ct = lower_c_scalar(p->type->u.view.elem);
            lower_emit(L,
                       "%s *cairn_d_%s = (%s *)cairn_device_copy_in(%s, %s_n, sizeof(%s), %d, %s);",
                       ct, name, ct, name, name, ct, (int)place, at);
            name = arena_printf(L->arena, "cairn_d_%s", name);
        }
        sb_printf(&call, "%s%s", k ? ", " : "", name);
        if (lower_is_view(p->type)) sb_printf(&call, ", %s_n", lower_sym_c(L, p->sym));
    }
    if (lower_fn_takes_loc(fn)) sb_printf(&call, "%s%s", fn->u.fn.nparams ? ", " : "", at);
    if (fn->u.fn.ret->kind == TY_VOID)
        lower_emit(L, "cairn_fn_%s(%s);", fn->name, call.data ? call.data : "");
    else
        lower_emit(L, "const %s cairn_r = cairn_fn_%s(%s);", lower_c_scalar(fn->u.fn.ret), fn->name,
                   call.data ? call.data : "");
    for (int k = 0; copies && k < fn->u.fn.nparams; k++) {
        const Param *p = fn->u.fn.params[k];
        const char *name = lower_sym_c(L, p->sym);
        if (param_place(p) == PLACE_HOST) continue;
        if (p->type->u.view.access != ACCESS_RO)
            lower_emit(L, "cairn_device_copy_out(%s, cairn_d_%s, %s_n, sizeof(*%s), %s);", name,
                       name, name, name, at);
        lower_emit(L, "cairn_device_drop(cairn_d_%s, %d);", name, (int)param_place(p));
    }
    if (fn->u.fn.ret->kind != TY_VOID) lower_emit(L, "if (cairn_result) *cairn_result = cairn_r;");
    sb_free(&call);
}

/* The header's note on each placed view: which memory its pointer must be. */
static void header_places(Lower *L, const Item *fn, StrBuf *h) {
    static const char *const memory[] = {[PLACE_DEVICE] =
                                             "device memory (cudaMalloc or cudaMallocManaged",
                                         [PLACE_UNIFIED] = "managed memory (cudaMallocManaged"};
    for (int k = 0; k < fn->u.fn.nparams; k++) {
        const Param *p = fn->u.fn.params[k];
        Placement place = param_place(p);
        if (place != PLACE_HOST)
            sb_printf(h, "\n * %s: %s; any host memory in an --emulate build)", header_name(L, p),
                      memory[place]);
    }
}

/* The exported entry SYMBOL(cparams): a trap caught (runtime/cairn_lib.h) returns 1. */
static void export_entry(Lower *L, const char *symbol, const char *work, const char *cparams,
                         const char *args) {
    lower_emit(L, "__attribute__((visibility(\"default\"))) int %s(%s) {", symbol, cparams);
    lower_emit(L, "    cairn_trap_frame cairn_frame;");
    lower_emit(L, "    cairn_lib_push(&cairn_frame, 1);");
    lower_emit(L, "    if (setjmp(cairn_frame.jump) != 0) return cairn_lib_caught(&cairn_frame);");
    lower_emit(L, "    %s(%s);", work, args);
    lower_emit(L, "    cairn_lib_leave(&cairn_frame);");
    lower_emit(L, "    return 0;");
    lower_emit(L, "}\n");
}

/* The work function cairn_WORK_NAME(cparams) and its exported entry. noinline: the
 * entry calls setjmp, and a function that does is compiled with its locals kept in
 * memory (returns_twice); -O3 would otherwise inline the kernel into it and run slower
 * than -O2 (issue 33). */
static void entry_pair(Lower *L, const Item *fn, const char *cparams, const char *args,
                       bool copies) {
    const char *at = lower_at(L, fn->name_span), *tail = copies ? "_host" : "";
    const char *work = arena_printf(L->arena, "cairn_entry_%s%s", fn->name, tail);
    lower_emit(L, "static __attribute__((noinline)) void %s(%s) {", work, cparams);
    L->indent = 1;
    entry_body(L, fn, at, copies);
    L->indent = 0;
    lower_emit(L, "}");
    export_entry(L, arena_printf(L->arena, "%s_%s%s", L->opt->lib_prefix, fn->name, tail), work,
                 cparams, args);
}

/* One pub fn: its header prototype, its work function and its exported entry, which
 * catches a trap and returns 1 for it; a function taking placed views has a second,
 * PREFIX_fn_host, whose caller gives host memory for them. */
static cJSON *library_entry(Lower *L, const Item *fn, StrBuf *h) {
    const char *prefix = L->opt->lib_prefix;
    bool placed = takes_device_views(fn);
    StrBuf hp = {0}, cp = {0}, args = {0};
    entry_params(L, fn, &hp, true);
    entry_params(L, fn, &cp, false);
    char *sig = source_signature(fn);
    sb_printf(h, "/* pub fn %s\n * at %s:%d:%d", sig, L->prog->src.path, fn->name_span.line,
              fn->name_span.col);
    header_places(L, fn, h);
    sb_printf(h, " */\nint %s_%s(%s);\n", prefix, fn->name, hp.data);
    if (placed)
        sb_printf(h,
                  "/* The same with host memory for every view: copied in, and back for rw. */\n"
                  "int %s_%s_host(%s);\n",
                  prefix, fn->name, hp.data);
    sb_puts(h, "\n");
    L->out = &L->defs;
    if (placed) lower_use_runtime(L, LOWER_MODULE_DEVICE);
    for (int k = 0; k < fn->u.fn.nparams; k++) {
        const Param *p = fn->u.fn.params[k];
        sb_printf(&args, "%s%s", k ? ", " : "", lower_sym_c(L, p->sym));
        if (lower_is_view(p->type)) sb_printf(&args, ", %s_n", lower_sym_c(L, p->sym));
    }
    if (fn->u.fn.ret->kind != TY_VOID)
        sb_printf(&args, "%scairn_result", fn->u.fn.nparams ? ", " : "");
    entry_pair(L, fn, cp.data, args.data ? args.data : "", false);
    if (placed) entry_pair(L, fn, cp.data, args.data ? args.data : "", true);
    cJSON *entry = describe_entry(L, fn, sig);
    if (placed)
        cJSON_AddStringToObject(entry, "host_symbol",
                                arena_printf(L->arena, "%s_%s_host", prefix, fn->name));
    sb_free(&hp);
    sb_free(&cp);
    sb_free(&args);
    free(sig);
    return entry;
}

/* The header's opening: what a caller needs to know, and PREFIX_error. */
static void header_open(Lower *L, StrBuf *h, const char *guard) {
    const char *pre = L->opt->lib_prefix;
    sb_printf(
        h,
        "/* %s: generated by cairn from %s: do not edit.\n"
        " *\n"
        " * One entry per pub fn. A view is a pointer and its element count (NAME_len), a\n"
        " * scalar rw<T> a pointer, the result is stored through the last pointer (NULL: not\n"
        " * stored); f16 and bf16 are their bits in uint16_t, f8e4m3 and f8e5m2 in uint8_t.\n"
        " * Each entry returns 0, or 1 when the call trapped: then %s_last_error() says\n"
        " * what failed and where, and the call's outputs may be partly written. Entries\n"
        " * may be called from any number of threads at once; each thread sees its own\n"
        " * last error. Link: -l<name> -lm -pthread -lcrypto -lcjson (the static archive),\n"
        " * or the shared library alone. */\n"
        "#ifndef %s\n#define %s\n\n#include <stdbool.h>\n#include <stdint.h>\n\n"
        "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
        L->opt->lib_header, L->prog->src.path, pre, guard, guard);
    sb_printf(
        h,
        "/* What the last entry called on this thread trapped on: message \"\" and line 0\n"
        " * when it returned 0. Valid until the thread calls an entry again. */\n"
        "typedef struct %s_error {\n"
        "    const char *message; /* \"index 7 out of bounds for extent 5\" */\n"
        "    const char *file;    /* the .cairn source as the build named it; NULL when unknown */\n"
        "    int line, col;       /* where in it; 0 when unknown */\n"
        "} %s_error;\n"
        "const %s_error *%s_last_error(void);\n\n",
        pre, pre, pre, pre);
}

/* PREFIX_last_error: this thread's record (runtime/cairn_lib.h), as the header says. */
static void last_error_entry(Lower *L) {
    const char *pre = L->opt->lib_prefix;
    L->out = &L->defs;
    lower_emit(L, "__attribute__((visibility(\"default\"))) const %s_error *%s_last_error(void) {",
               pre, pre);
    lower_emit(L, "    static _Thread_local %s_error cairn_e;", pre);
    lower_emit(L, "    const cairn_trap_record *r = cairn_lib_last();");
    lower_emit(L, "    cairn_e.message = r->message;");
    lower_emit(L, "    cairn_e.file = r->file;");
    lower_emit(L, "    cairn_e.line = r->line;");
    lower_emit(L, "    cairn_e.col = r->col;");
    lower_emit(L, "    return &cairn_e;");
    lower_emit(L, "}\n");
}

void lower_library_entries(Lower *L, LowerOutput *out) {
    assert(L->opt->lib_prefix && L->opt->lib_header);
    lower_use_runtime(L, LOWER_MODULE_LIB);
    L->item = NULL; /* the entries' checks of their callers' arguments: no function's */
    char *guard = arena_printf(L->arena, "CAIRN_LIB_%s_H", L->opt->lib_prefix);
    for (char *c = guard; *c; c++)
        if (*c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
    header_open(L, &out->h, guard);
    out->library = cJSON_CreateArray();
    for (int i = 0; i < L->prog->nitems; i++) {
        const Item *it = L->prog->items[i];
        if (it->kind != ITEM_FN || !it->pub) continue;
        L->fn = it;
        L->nlive = L->live_base = 0;
        cJSON_AddItemToArray(out->library, library_entry(L, it, &out->h));
    }
    last_error_entry(L);
    sb_printf(&out->h, "#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
    if (cJSON_GetArraySize(out->library) == 0) {
        Span start = {L->prog->src.path, 1, 1, 0, 0};
        diag_error(L->diags, start, E_PUB, "mark the functions C callers call with `pub fn`",
                   "a library exports its pub functions, and this program has none");
    }
}
