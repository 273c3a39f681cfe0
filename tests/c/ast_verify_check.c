/* ast_verify_check.c: breaks a checked tree on purpose, one way at a time, and prints
 * what ast_verify (compiler/syntax/ast_verify.c) says of it, for
 * tests/frontend/test_ast_verify.py. `ast_verify_check` prints "NAME: verdict" for the
 * intact tree and every break; `ast_verify_check die` breaks one tree and calls
 * ast_verify_or_die, which must abort. */
#include <stdio.h>
#include <string.h>

#include "check/check.h"

static const char SOURCE[] =
    "fn add(a:i32, b:i32) -> i32 = a + b;\n"
    "fn k(out:rw<i32>[64]@device) {\n"
    "  blocks g in 1 threads t in 64 { out[t] = i32(t); }\n"
    "}\n"
    "fn pre(n:usize, v:rw<i64>[n]) { scan + for i in n yield i64(i) into v; }\n"
    "fn sq(x:f64) -> f64 = x * x;\n"
    "derive grad for sq;\n"
    "fn main() -> i32 { let x = add(1, 2); return x - 3; }\n";

static Item *item(Program *p, const char *name) {
    for (int i = 0; i < p->nitems; i++)
        if (p->items[i]->name && strcmp(p->items[i]->name, name) == 0) return p->items[i];
    return NULL;
}

typedef struct Find {
    ExprKind kind;
    Expr *found;
} Find;

static void find_first(Expr *e, void *ctx) {
    Find *f = ctx;
    if (!f->found && e->kind == f->kind) f->found = e;
}

/* The first expression of KIND in fn NAME's body. */
static Expr *first(Program *p, const char *name, ExprKind kind) {
    Find f = {kind, NULL};
    ast_visit_exprs(item(p, name)->u.fn.body, find_first, &f);
    return f.found;
}

static Stmt *first_stmt(Program *p, const char *name) { return item(p, name)->u.fn.body->stmts[0]; }

/* Applies break number K to p; returns its name and the stage to verify (NULL: none). */
static const char *apply(Program *p, int k, AstStage *stage) {
    *stage = AST_CHECKED;
    switch (k) {
    case 0: return "intact";
    case 1: first(p, "add", EXPR_BINARY)->type = NULL; return "untyped";
    case 2: first(p, "add", EXPR_NAME)->u.name.sym = NULL; return "unresolved";
    case 3: first(p, "main", EXPR_CALL)->u.call.fn = NULL; return "call-target";
    case 4: first(p, "main", EXPR_CALL)->u.call.nargs = 1; return "arity";
    case 5:
        first(p, "pre", EXPR_REDUCE)->type = first(p, "add", EXPR_NAME)->type;
        return "scan-type";
    case 6:
        first_stmt(p, "main")->u.let.sym->id = item(p, "main")->u.fn.nlocals;
        return "local-number";
    case 7: first_stmt(p, "main")->u.let.sym = NULL; return "let-symbol";
    case 8: first_stmt(p, "k")->u.blocks.on_device = false; return "blocks-on-host";
    case 9:
        first(p, "sq_grad", EXPR_BINARY)->u.binary.rhs = NULL;
        *stage = AST_SHAPE; /* what derive grad made, before the checker sees it */
        return "derived-missing-child";
    case 10: item(p, "add")->u.fn.params[1]->type = NULL; return "param-type";
    default: return NULL;
    }
}

int main(int argc, char **argv) {
    bool die = argc > 1 && strcmp(argv[1], "die") == 0;
    for (int k = 0;; k++) {
        Diags d;
        diags_init(&d, NULL);
        Program *p = cairn_load_text("probe.cairn", SOURCE, strlen(SOURCE), &d);
        if (!p) {
            diags_print(&d, stderr);
            return 2;
        }
        AstStage stage;
        const char *name = apply(p, die ? 1 : k, &stage);
        if (!name) {
            ast_program_free(p);
            diags_free(&d);
            return 0;
        }
        if (die) ast_verify_or_die(p, stage, "a deliberate break");
        Span at = {0};
        const char *problem = ast_verify(p, stage, &at);
        printf("%s: %s", name, problem ? problem : "ok");
        if (problem) printf(" (line %d)", at.line);
        printf("\n");
        ast_program_free(p);
        diags_free(&d);
        if (die) return 0; /* not reached: ast_verify_or_die aborts */
    }
}
