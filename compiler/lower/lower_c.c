/* lower_c.c: checked CAIRN programs to C11 for the host (see lower.h).
 *
 * The C file: includes, the source path for traps, prototypes of every function, the
 * lane functions of parallel regions (each with its context struct), then the
 * functions. Names: a local, parameter or loop variable x numbered 3 by the checker is
 * v_x_3 (a view adds v_x_3_n, its element count); function f is cairn_fn_f; constant
 * K is cairn_const_K(). A function with view parameters takes one more argument, the
 * call's location, where it checks each view's extent once on entry. Buffers are
 * calloc'ed and freed at the end of their block and at every return. */
#include "lower/lower.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower/lower_c_internal.h"
#include "lower/lower_mma.h"
#include "lower/target_internal.h"

/* ---- emitting ---- */

void lower_use_runtime(Lower *L, unsigned module) { L->modules |= module; }

void lower_emit(Lower *L, const char *fmt, ...) {
    for (int i = 0; i < L->indent; i++) sb_puts(L->out, "    ");
    va_list ap;
    va_start(ap, fmt);
    char small[512];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof small) {
        char *big = malloc((size_t)n + 1);
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        sb_puts(L->out, big);
        free(big);
    } else if (n > 0) {
        sb_puts(L->out, small);
    }
    sb_puts(L->out, "\n");
}

const char *lower_new_tmp(Lower *L) { return arena_printf(L->arena, "t%d", ++L->tmp); }

/* Every trap the generated code can raise names its place through here, so the places
 * recorded are the program's trap sites (LowerOutput.sites). */
const char *lower_at(Lower *L, Span s) {
    if (L->nsites == L->capsites) {
        int cap = L->capsites ? 2 * L->capsites : 64;
        LowerSite *more = arena_alloc(L->arena, sizeof *more * (size_t)cap);
        if (L->nsites) memcpy(more, L->sites, sizeof *more * (size_t)L->nsites);
        L->sites = more, L->capsites = cap;
    }
    L->sites[L->nsites++] = (LowerSite){s, L->item};
    lower_guard_kept(L, s);
    return lower_at_unguarded(L, s);
}

/* The place of a trap that is no guard of the language: the machine's (the pool's own
 * scratch memory not allocated), or one the checker rules out (the end of a function
 * with a result, E-MISSING-RETURN): no trap site. */
const char *lower_at_unguarded(Lower *L, Span s) {
    return arena_printf(L->arena, "CAIRN_AT(%d, %d)", s.line, s.col);
}

void lower_unsupported(Lower *L, Span s, const char *what) {
    if (L->fallback) return; /* a loop's checked copy: its first copy said so */
    diag_error(L->diags, s, E_UNSUPPORTED, L->target->unsupported_hint,
               "%s: not lowered for %s yet", what, L->target->unsupported_where);
}

/* ---- names and types ---- */

const char *lower_c_scalar(const Type *t) {
    assert(t && "the checker typed every expression and symbol it passed");
    switch (t->kind) {
    case TY_BOOL: return "bool";
    case TY_I8: return "int8_t";
    case TY_I16: return "int16_t";
    case TY_I32: return "int32_t";
    case TY_I64: return "int64_t";
    case TY_U8: return "uint8_t";
    case TY_U16: return "uint16_t";
    case TY_U32: return "uint32_t";
    case TY_U64:
    case TY_USIZE: return "uint64_t";
    case TY_F32: return "float";
    case TY_F64: return "double";
    case TY_F16: return "cairn_f16";
    case TY_BF16: return "cairn_bf16";
    case TY_F8E4M3: return "cairn_f8e4m3";
    case TY_F8E5M2: return "cairn_f8e5m2";
    case TY_VOID: return "void";
    case TY_FRAGMENT: return lower_fragment_ctype(t); /* lower_mma.c */
    default: return "int";
    }
}

const char *lower_type_word(const Type *t) {
    const char *k = type_kind_keyword(t->kind);
    return k ? k : "?";
}

const char *lower_helper_suffix(const Type *t) {
    return t->kind == TY_USIZE ? "u64" : lower_type_word(t);
}

bool lower_is_view(const Type *t) { return t && t->kind == TY_VIEW && t->u.view.extent; }
bool lower_is_scalar_ref(const Type *t) { return t && t->kind == TY_VIEW && !t->u.view.extent; }

const Symbol *lower_expr_sym(const Expr *e) {
    return e && e->kind == EXPR_NAME ? e->u.name.sym : NULL;
}

bool lower_is_thread_sym(const Lower *L, const Symbol *s) {
    assert(L->nthread_syms >= 0 && L->nthread_syms <= LOWER_MAX_LIVE);
    for (int i = 0; i < L->nthread_syms; i++)
        if (L->thread_syms[i] == s) return true;
    return false;
}

const char *lower_thread_array(Lower *L, const Symbol *s) {
    return arena_printf(L->arena, "pt_%s_%d", s->name, s->id);
}

/* The C name of function or constant `name` (kind "fn" or "const"): in a device lane
 * its device copy's, named by the target (LowerTarget.device_prefix). */
const char *lower_item_name(Lower *L, const char *kind, const char *name) {
    return arena_printf(L->arena, "%s%s_%s", L->in_device ? L->target->device_prefix : "cairn_",
                        kind, name);
}

const char *lower_sym_c(Lower *L, const Symbol *s) {
    assert(s && "the checker resolved every name");
    if (lower_is_thread_sym(L, s))
        return arena_printf(L->arena, "%s[cairn_t]", lower_thread_array(L, s));
    switch (s->kind) {
    case SYM_CONST: return arena_printf(L->arena, "%s()", lower_item_name(L, "const", s->name));
    case SYM_FN: return lower_item_name(L, "fn", s->name);
    default: return arena_printf(L->arena, "v_%s_%d", s->name, s->id);
    }
}

const char *lower_sym_len(Lower *L, const Symbol *s) {
    return arena_printf(L->arena, "v_%s_%d_n", s->name, s->id);
}

void lower_c_string(StrBuf *sb, const char *text) {
    sb_puts(sb, "\"");
    for (size_t i = 0, len = strlen(text); i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '"' || c == '\\') sb_printf(sb, "\\%c", c);
        else if (c < 32 || c > 126) sb_printf(sb, "\\%03o", c);
        else sb_append(sb, (const char *)&c, 1);
    }
    sb_puts(sb, "\"");
}

/* ---- statements ---- */

/* Frees the buffers live[from..] (innermost first). */
static void free_live(Lower *L, int from) {
    assert(from >= 0 && from <= L->nlive && L->nlive <= LOWER_MAX_LIVE);
    for (int k = L->nlive - 1; k >= from; k--) L->target->buffer_free(L, L->live[k]);
}

void lower_block(Lower *L, const Block *b) {
    int mark = L->nlive;
    for (int i = 0; i < b->nstmts; i++) lower_stmt(L, b->stmts[i]);
    assert(L->nlive >= mark && "a statement frees only the buffers it allocated");
    free_live(L, mark);
    L->nlive = mark;
}

/* A nested block in braces. */
static void lower_braced(Lower *L, const Block *b) {
    lower_emit(L, "{");
    L->indent++;
    lower_block(L, b);
    L->indent--;
    lower_emit(L, "}");
}

static void lower_let(Lower *L, const Stmt *s) {
    const Symbol *sym = s->u.let.sym;
    if (!type_is_scalar(sym->type) && !type_is_storage_float(sym->type) &&
        sym->type->kind != TY_FRAGMENT) {
        lower_unsupported(L, s->span, "a let of this type");
        return;
    }
    const char *v = lower_expr_out(L, s->u.let.init);
    const char *name = lower_sym_c(L, sym);
    if (lower_is_thread_sym(L, sym)) { /* an emulated block's per-thread slot, declared before */
        lower_emit(L, "%s = %s;", name, v ? v : "0");
        return;
    }
    lower_emit(L, "%s %s = %s;", lower_c_scalar(sym->type), name, v ? v : "0");
    lower_emit(L, "(void)%s;", name);
}

static void lower_assign(Lower *L, const Stmt *s) {
    const Expr *target = s->u.assign.target;
    assert(s->u.assign.op >= ASSIGN_SET && s->u.assign.op <= ASSIGN_DIV);
    const char *v = lower_expr_out(L, s->u.assign.value);
    const char *place = lower_place(L, s->u.assign.target);
    if (!v || !place) return;
    if (s->u.assign.op != ASSIGN_SET) /* an operation: its NaN is a device lane's */
        v = lower_bind(L, target->type,
                       lower_dnan(L, target->type,
                                  lower_arith(L, ast_assign_binop(s->u.assign.op), place, v,
                                              target->type, s->span)));
    lower_emit(L, "%s = %s;", place, v);
}

static void lower_if(Lower *L, const Stmt *s) {
#ifdef CAIRN_PLANT_GUARD /* tests/verify/test_coverage.py: a guard cairn verify cannot know */
    lower_emit(L, "if (0) cairn_trap_at(\"planted\", %s);", lower_at(L, s->span));
#endif
    const char *cond = lower_expr(L, s->u.if_.cond);
    lower_emit(L, "if (%s) {", cond);
    L->indent++;
    lower_block(L, s->u.if_.then);
    L->indent--;
    const Stmt *els = s->u.if_.els;
    if (els) {
        lower_emit(L, "} else {");
        L->indent++;
        if (els->kind == STMT_BLOCK) lower_block(L, els->u.block);
        else lower_stmt(L, els);
        L->indent--;
    }
    lower_emit(L, "}");
}

/* A `for` loop's C, its bounds evaluated before (lower_for). */
typedef struct ForLoop {
    const Stmt *s;
    const Type *t;
    const char *lo, *hi;
} ForLoop;

static void emit_for(Lower *L, void *ctx) {
    const ForLoop *f = ctx;
    const Binder *b = &f->s->u.for_.b;
    const char *i = b->sym ? lower_sym_c(L, b->sym) : lower_new_tmp(L);
    lower_loop_head(L, lower_c_scalar(f->t), i, f->lo, f->hi);
    L->indent++;
    lower_block(L, f->s->u.for_.body);
    L->indent--;
    lower_emit(L, "}");
}

static void lower_for(Lower *L, const Stmt *s) {
    const Binder *b = &s->u.for_.b;
    const Type *t = b->sym ? b->sym->type : b->count->type;
    const char *lo = b->lo ? lower_expr(L, b->lo) : "0";
    const char *hi = lower_opaque(L, t, lower_expr(L, b->count)); /* `for i in 0..0` */
    ForLoop f = {s, t, lo, hi};
    GuardLoop g = {
        .var = b->sym, .type = t, .lo = lo, .hi = hi, .body = s->u.for_.body, .span = s->span};
    lower_guarded_loop(L, &g, emit_for, &f);
}

static void lower_return(Lower *L, const Stmt *s) {
    const char *v = s->u.ret.value ? lower_expr_out(L, s->u.ret.value) : NULL;
    free_live(L, L->live_base);
    if (v) lower_emit(L, "return %s;", v);
    else lower_emit(L, "return;");
}

static void lower_buffer(Lower *L, const Stmt *s) {
    const Symbol *sym = s->u.alloc.sym;
    if (L->nlive == LOWER_MAX_LIVE) {
        lower_unsupported(L, s->span, "this many nested buffers");
        return;
    }
    assert(L->nlive < LOWER_MAX_LIVE);
    const char *n = lower_expr(L, s->u.alloc.count);
    const char *t = lower_c_scalar(s->u.alloc.elem), *name = lower_sym_c(L, sym),
               *len = lower_sym_len(L, sym);
    L->target->buffer_alloc(L, s, t, name, n);
    lower_emit(L, "const uint64_t %s = %s;", len, n);
    lower_emit(L, "(void)%s;", len);
    L->live[L->nlive++] = sym;
}

static void lower_expr_stmt(Lower *L, const Stmt *s) {
    const char *v = lower_expr(L, s->u.expr);
    if (v) lower_emit(L, "(void)%s;", v);
}

void lower_stmt(Lower *L, const Stmt *s) {
    switch (s->kind) {
    case STMT_LET: lower_let(L, s); break;
    case STMT_ASSIGN: lower_assign(L, s); break;
    case STMT_EXPR: lower_expr_stmt(L, s); break;
    case STMT_IF: lower_if(L, s); break;
    case STMT_FOR: lower_for(L, s); break;
    case STMT_RETURN: lower_return(L, s); break;
    case STMT_PARALLEL: lower_parallel(L, s); break;
    case STMT_BUFFER: lower_buffer(L, s); break;
    case STMT_BLOCK: lower_braced(L, s->u.block); break;
    case STMT_BLOCKS: lower_blocks(L, s); break;
    case STMT_SHARED:
    case STMT_BARRIER: L->target->coop_stmt(L, s); break;
    }
}

/* ---- functions ---- */

bool lower_fn_takes_loc(const Item *fn) {
    if (fn->u.fn.requires) return true; /* its trap names the call */
    for (int i = 0; i < fn->u.fn.nparams; i++)
        if (lower_is_view(fn->u.fn.params[i]->type)) return true;
    return false;
}

/* "double cairn_fn_f(uint64_t v_n_0, const double *v_x_1, uint64_t v_x_1_n, ...)" */
/* `restrict` on a host function's views: E-ALIAS guarantees that a function's views
 * never overlap when one of them is written (docs/language.md), which is what C's
 * restrict asks, so gcc and clang may keep elements in registers and vectorize. Not in
 * a library, whose C callers nothing checks for overlapping arrays, nor in device copies
 * (C++, where restrict is no keyword). */
static const char *view_restrict(const Lower *L) {
    return L->in_device || L->opt->lib_prefix ? "" : "restrict ";
}

static const char *signature(Lower *L, const Item *fn) {
    StrBuf sb = {0};
    const char *ret = fn->u.fn.ret ? lower_c_scalar(fn->u.fn.ret) : "void";
    if (strcmp(fn->name, "main") == 0) ret = "int32_t";
    sb_printf(&sb, "%s %s(", ret, lower_item_name(L, "fn", fn->name));
    for (int i = 0; i < fn->u.fn.nparams; i++) {
        const Param *p = fn->u.fn.params[i];
        const Type *t = p->type;
        const char *name = lower_sym_c(L, p->sym), *sep = i ? ", " : "";
        if (lower_is_view(t))
            sb_printf(&sb, "%s%s%s *%s%s, uint64_t %s", sep,
                      t->u.view.access == ACCESS_RO ? "const " : "", lower_c_scalar(t->u.view.elem),
                      view_restrict(L), name, lower_sym_len(L, p->sym));
        else if (lower_is_scalar_ref(t))
            sb_printf(&sb, "%s%s *%s", sep, lower_c_scalar(t->u.view.elem), name);
        else sb_printf(&sb, "%s%s %s", sep, lower_c_scalar(t), name);
    }
    if (lower_fn_takes_loc(fn))
        sb_printf(&sb, "%scairn_loc cairn_call", fn->u.fn.nparams ? ", " : "");
    else if (fn->u.fn.nparams == 0) sb_puts(&sb, "void");
    sb_puts(&sb, ")");
    const char *text = arena_strdup(L->arena, sb.data);
    sb_free(&sb);
    return text;
}

/* `requires e` (docs/language.md): checked on entry, trapping at the call with the
 * clause's own line in the message. */
static void lower_requires(Lower *L, const Item *fn) {
    const Expr *r = fn->u.fn.requires;
    const char *ok = lower_expr(L, (Expr *)r);
    lower_emit(L, "if (!%s) cairn_trap_at(\"requires of %s (line %d) does not hold\", cairn_call);",
               ok, fn->name, r->span.line);
}

/* Marks every parameter used, and checks each view's extent against its argument. */
static void prologue(Lower *L, const Item *fn) {
    for (int i = 0; i < fn->u.fn.nparams; i++) {
        const Param *p = fn->u.fn.params[i];
        lower_emit(L, "(void)%s;", lower_sym_c(L, p->sym));
        if (!lower_is_view(p->type)) continue;
        const char *extent = lower_expr(L, p->type->u.view.extent);
        lower_emit(L, "cairn_check_extent(%s, (uint64_t)%s, \"%s\", cairn_call);",
                   lower_sym_len(L, p->sym), extent, p->name);
    }
    if (fn->u.fn.requires) lower_requires(L, fn);
}

/* A function, into the C file; or (`device`, the qualifier of a device copy) its copy
 * in L->dev that device lanes call, whose roundings the host copy already listed. */
static void lower_fn(Lower *L, const Item *fn, const char *device) {
    assert(fn->kind == ITEM_FN && L->indent == 0 && !L->in_device);
    L->in_device = device != NULL; /* a device copy: the device's names and numerics */
    const char *sig = signature(L, fn);
    const char *q = device ? device : "static";
    sb_printf(device ? &L->dev_protos : &L->protos, "%s %s __attribute__((unused));\n", q, sig);
    L->fn = fn;
    L->item = fn;
    if (!device) /* the receipt's entries: what the checker recorded (check/check.h) */
        numerics_serialize(cJSON_AddArrayToObject(L->numerics, fn->name), check_facts(fn));
    L->out = device ? &L->dev : &L->defs;
    L->nlive = L->live_base = 0;
    lower_emit(L, "%s %s {", q, sig);
    L->indent = 1;
    prologue(L, fn);
    lower_block(L, fn->u.fn.body);
    if (fn->u.fn.ret && fn->u.fn.ret->kind != TY_VOID)
        lower_emit(L, "cairn_trap_at(\"reached the end of a function without a return\", %s);",
                   lower_at_unguarded(L, fn->span)); /* E-MISSING-RETURN rules it out */
    assert(L->nlive == 0 && L->nthread_syms == 0 && L->nwarp == 0 && !L->coop_thread);
    L->indent = 0;
    lower_emit(L, "}\n");
    L->in_device = false;
}

/* A constant becomes a function computing it, so any checked expression may define it
 * (`device`: as lower_fn). */
static void lower_const(Lower *L, const Item *it, const char *device) {
    const char *t = lower_c_scalar(it->u.const_.type);
    const char *q = device ? device : "static";
    L->in_device = device != NULL;
    const char *name = lower_item_name(L, "const", it->name);
    L->item = it;
    sb_printf(device ? &L->dev_protos : &L->protos, "%s %s %s(void) __attribute__((unused));\n", q,
              t, name);
    if (!device)
        numerics_serialize(
            cJSON_AddArrayToObject(L->numerics, arena_printf(L->arena, "const %s", it->name)),
            check_facts(it));
    L->out = device ? &L->dev : &L->defs;
    lower_emit(L, "%s %s %s(void) {", q, t, name);
    L->indent = 1;
    lower_emit(L, "return %s;", lower_expr(L, it->u.const_.value));
    L->indent = 0;
    lower_emit(L, "}\n");
    L->in_device = false;
}

/* What device lanes may call (constants, and functions without regions or host-only
 * effects) gets a copy with qualifier q in L->dev (a target's items_end asks). The
 * checker computes lane_effects for derived functions too, so no copy holds a region. */
void lower_device_copies(Lower *L, const char *q) {
    for (int i = 0; i < L->prog->nitems; i++) {
        const Item *it = L->prog->items[i];
        if (it->kind == ITEM_CONST) lower_const(L, it, q);
        else if (it->kind == ITEM_FN && it->u.fn.lane_effects == 0 && strcmp(it->name, "main") != 0)
            lower_fn(L, it, q);
    }
}

static void prelude(StrBuf *out, const Program *p, unsigned modules, const char *lib_header) {
    sb_puts(out, "/* Generated by cairn from ");
    sb_puts(out, p->src.path);
    sb_puts(out, ": do not edit. */\n#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n"
                 "#include <stdlib.h>\n\n#include \"cairn.h\"\n#include \"cairn_checked.h\"\n");
    if (modules & LOWER_MODULE_CR) sb_puts(out, "#include \"cairn_cr.h\"\n");
    if (modules & LOWER_MODULE_CR_ARRAY) sb_puts(out, "#include \"cairn_cr_array.h\"\n");
    sb_puts(out, "\nstatic const char cairn_source[] = ");
    lower_c_string(out, p->src.path);
    sb_puts(out, ";\n#define CAIRN_AT(line, col) ((cairn_loc){cairn_source, (line), (col)})\n\n");
    if (lib_header) /* a library: its entries are checked against the header's prototypes */
        sb_printf(out, "#include \"%s\"\n\n", lib_header);
}

static void lower_program_items(Lower *L, LowerOutput *out) {
    const Item *main = NULL;
    for (int i = 0; i < L->prog->nitems; i++) {
        const Item *it = L->prog->items[i];
        if (it->kind == ITEM_FN) {
            lower_fn(L, it, NULL);
            if (strcmp(it->name, "main") == 0) main = it;
        } else if (it->kind == ITEM_CONST) {
            lower_const(L, it, NULL);
        }
    }
    L->target->items_end(L);
    if (L->opt->lib_prefix) {
        lower_library_entries(L, out);
        return;
    }
    if (main) {
        lower_main_entry(L, main);
        return;
    }
    Span start = {L->prog->src.path, 1, 1, 0, 0};
    diag_error(L->diags, start, E_MAIN,
               "add `fn main() -> i32 { ... }`: its return value is the exit status",
               "a program to build needs a main function");
}

/* The files: the host C's prelude, what the target adds (its own files too), then the
 * prototypes, the lane functions and the functions. */
static void assemble(Lower *L, LowerOutput *out) {
    prelude(&out->c, L->prog, L->modules, L->opt->lib_header);
    L->target->assemble(L, out);
    sb_append(&out->c, L->protos.data ? L->protos.data : "", L->protos.len);
    sb_puts(&out->c, "\n");
    sb_append(&out->c, L->lanes.data ? L->lanes.data : "", L->lanes.len);
    sb_append(&out->c, L->defs.data ? L->defs.data : "", L->defs.len);
}

/* Every entry of a target's table is there (target_internal.h: none may be NULL). */
static bool target_complete(const LowerTarget *t) {
    return t->unsupported_where && t->unsupported_hint && t->items_end && t->device_prefix &&
           t->assemble && t->buffer_alloc && t->buffer_free && t->observe_fn &&
           t->device_parallel && t->blocks && t->coop_stmt && t->warp_op && t->device_reduce &&
           t->device_scan && t->device_atomic && t->device_wide && t->matrix_mma_device &&
           t->enclose_device && t->frag_ready && t->frag_fill && t->frag_load && t->frag_store &&
           t->frag_mma && t->frag_index && t->frag_get && t->frag_set;
}

int lower_program(Program *p, Diags *d, const LowerOptions *opt, LowerOutput *out) {
    assert(p && p->checked && "lowering takes a program the checker accepted");
    /* The one place that chooses a target: everything after asks the table. */
    const LowerTarget *target = opt->cuda ? &lower_target_cuda : &lower_target_host;
    assert(target_complete(target));
    Lower L = {.prog = p,
               .diags = d,
               .arena = p->arena,
               .numerics = out->numerics,
               .target = target,
               .opt = opt,
               .device = lower_device_limits(opt->device)};
    L.guards = out->guards = cJSON_CreateObject();
    lower_use_runtime(&L, LOWER_MODULE_TRAP); /* guards are everywhere, in the headers too */
    lower_program_items(&L, out);
    int refused = diags_has_errors(d);
    if (!refused) assemble(&L, out);
    out->modules = L.modules;
    out->has_device = L.has_device;
    out->sites = L.sites;
    out->nsites = L.nsites;
    sb_free(&L.protos);
    sb_free(&L.lanes);
    sb_free(&L.defs);
    sb_free(&L.dev);
    sb_free(&L.dev_protos);
    sb_free(&L.shared_decls);
    return refused;
}
