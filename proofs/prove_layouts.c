/* prove_layouts.c: the layout facts the language relies on, each proved by Z3 over
 * 32-bit bit-vectors (docs/memory.md, "Layouts"; the PTX ISA's m16n8k16 fragments).
 *
 *   prove_layouts                 prove every fact; exit 0 when all hold
 *   prove_layouts FACT            prove one fact
 *   prove_layouts --wrong FACT    the same fact over a deliberately wrong formula, which
 *                                 must give a counterexample (exit 10): the proof can fail
 *   prove_layouts --list          the facts' names
 *
 * Verdicts follow CBMC: 0 proved, 10 counterexample (printed), 5 inconclusive.
 *
 * Each fact is a claim "for all variables: pre -> post". Z3 is asked for variables that
 * satisfy pre and not post; none (unsat) proves the claim. The layouts are encoded here
 * from their definitions (runtime/cairn_layout.h; the PTX ISA's m16n8k16 fragment tables as docs/numerics.md
 * gives them), independently of
 * the compiler's enumeration, which proves the same layouts the other way. Domains are
 * small, so 32-bit arithmetic never wraps. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <z3.h>

static Z3_context z;

static Z3_ast num(unsigned v) { return Z3_mk_unsigned_int(z, v, Z3_mk_bv_sort(z, 32)); }
static Z3_ast var(const char *name) {
    return Z3_mk_const(z, Z3_mk_string_symbol(z, name), Z3_mk_bv_sort(z, 32));
}
static Z3_ast add(Z3_ast a, Z3_ast b) { return Z3_mk_bvadd(z, a, b); }
static Z3_ast mul(Z3_ast a, Z3_ast b) { return Z3_mk_bvmul(z, a, b); }
static Z3_ast dv(Z3_ast a, Z3_ast b) { return Z3_mk_bvudiv(z, a, b); }
static Z3_ast rem(Z3_ast a, Z3_ast b) { return Z3_mk_bvurem(z, a, b); }
static Z3_ast lt(Z3_ast a, unsigned b) { return Z3_mk_bvult(z, a, num(b)); }
static Z3_ast eq(Z3_ast a, Z3_ast b) { return Z3_mk_eq(z, a, b); }
static Z3_ast ne(Z3_ast a, Z3_ast b) { return Z3_mk_not(z, eq(a, b)); }
static Z3_ast and2(Z3_ast a, Z3_ast b) {
    Z3_ast x[2] = {a, b};
    return Z3_mk_and(z, 2, x);
}
static Z3_ast or2(Z3_ast a, Z3_ast b) {
    Z3_ast x[2] = {a, b};
    return Z3_mk_or(z, 2, x);
}
static Z3_ast ite(Z3_ast c, Z3_ast a, Z3_ast b) { return Z3_mk_ite(z, c, a, b); }

/* ---- the layouts, from their definitions ---- */

typedef struct Lay {
    unsigned rows, cols, row_stride, col_stride;
    unsigned b, m, s;        /* swizzle; b == 0: none */
    unsigned tr, tc, vr, vc; /* spread; tr == 0: none */
} Lay;

/* CuTe's Swizzle<B, M, S>: o ^ ((o & (((1 << B) - 1) << (M + S))) >> S). */
static Z3_ast swizzle(Z3_ast o, unsigned b, unsigned m, unsigned s) {
    Z3_ast yyy = num(((1u << b) - 1) << (m + s));
    return Z3_mk_bvxor(z, o, Z3_mk_bvlshr(z, Z3_mk_bvand(z, o, yyy), num(s)));
}

static Z3_ast lower_at(const Lay *l, Z3_ast i, Z3_ast j) {
    Z3_ast o = add(mul(i, num(l->row_stride)), mul(j, num(l->col_stride)));
    return l->b ? swizzle(o, l->b, l->m, l->s) : o;
}

/* A spread's share: threads tr x tc row-major, vr x vc values each, repeated row-major. */
static void share(const Lay *l, Z3_ast t, Z3_ast v, Z3_ast *row, Z3_ast *col) {
    unsigned block = l->vr * l->vc, reps_c = l->cols / (l->tc * l->vc);
    Z3_ast rep = dv(v, num(block)), in = rem(v, num(block));
    *row =
        add(add(mul(dv(rep, num(reps_c)), num(l->tr * l->vr)), mul(dv(t, num(l->tc)), num(l->vr))),
            dv(in, num(l->vc)));
    *col = add(
        add(mul(rem(rep, num(reps_c)), num(l->tc * l->vc)), mul(rem(t, num(l->tc)), num(l->vc))),
        rem(in, num(l->vc)));
}

static Lay rows(unsigned r, unsigned c) { return (Lay){r, c, c, 1, 0, 0, 0, 0, 0, 0, 0}; }
static Lay padded(Lay l, unsigned p) {
    l.row_stride += p;
    return l;
}
static Lay swizzled(Lay l, unsigned b, unsigned m, unsigned s) {
    l.b = b;
    l.m = m;
    l.s = s;
    return l;
}
static Lay spread(Lay l, unsigned tr, unsigned tc, unsigned vr, unsigned vc) {
    l.tr = tr;
    l.tc = tc;
    l.vr = vr;
    l.vc = vc;
    return l;
}

/* The layouts the spec and examples/tensor use. */
static Lay share_c(void) { return spread(rows(16, 8), 8, 4, 1, 2); } /* mma_get's share */
static Lay tile32_a(bool wrong) { return swizzled(rows(64, 32), 2, wrong ? 2 : 3, 3); }
static Lay spec_swizzle(bool wrong) { return swizzled(rows(16, 16), 1, 3, wrong ? 0 : 3); }
static Lay tile32_a_bij(bool wrong) { return swizzled(rows(64, 32), 2, 3, wrong ? 0 : 3); }
static Lay tile32_b(bool wrong) { return padded(rows(32, 32), wrong ? 4 : 8); }
static Lay tile64_a(bool wrong) { return padded(rows(64, 32), wrong ? 4 : 8); }
static Lay tile64_b(bool wrong) { return padded(rows(32, 64), wrong ? 4 : 8); }
/* examples/tensor/tile64.cairn keeps its two stages in one array each, one above the other. */
static Lay tile64_stages_a(bool wrong) { return padded(rows(128, 32), wrong ? 4 : 8); }
static Lay tile64_stages_b(bool wrong) { return padded(rows(64, 64), wrong ? 4 : 8); }

/* ---- the facts ---- */

typedef struct Claim {
    Z3_ast pre, post;
} Claim;

/* spread(rows(16, 8), 8, 4, 1, 2) is the ISA's share: lane l's value v is element
 * (l / 4 + 8 * (v / 2), 2 * (l % 4) + v % 2). */
static Claim spread_is_isa(bool wrong) {
    Lay l = share_c();
    Z3_ast t = var("lane"), v = var("value"), r, c;
    share(&l, t, v, &r, &c);
    Z3_ast isa_r = add(dv(t, num(4)), mul(num(8), wrong ? rem(v, num(2)) : dv(v, num(2))));
    Z3_ast isa_c = add(mul(num(2), rem(t, num(4))), rem(v, num(2)));
    return (Claim){and2(lt(t, 32), lt(v, 4)), and2(eq(r, isa_r), eq(c, isa_c))};
}

/* The same share written as the PTX ISA gives the accumulator (docs/numerics.md): c_i is row g
 * for i < 2 else g + 8, column 2t + (i & 1), with g = lane >> 2, t = lane % 4. */
static Claim c_share_is_spread(bool wrong) {
    Lay l = share_c();
    Z3_ast lane = var("lane"), i = var("i"), r, c;
    share(&l, lane, i, &r, &c);
    Z3_ast g = Z3_mk_bvlshr(z, lane, num(2)), tq = rem(lane, num(4));
    Z3_ast isa_r = ite(lt(i, 2), wrong ? add(g, num(8)) : g, wrong ? g : add(g, num(8)));
    Z3_ast isa_c = add(mul(num(2), tq), Z3_mk_bvand(z, i, num(1)));
    return (Claim){and2(lt(lane, 32), lt(i, 4)), and2(eq(r, isa_r), eq(c, isa_c))};
}

/* A map from (lane < 32, register < regs) into a rows x cols tile gives each element
 * exactly one (lane, register): it stays inside the tile and no two pairs meet. Since
 * 32 * regs == rows * cols, injective means onto. */
typedef void (*ShareFn)(Z3_ast lane, Z3_ast i, bool wrong, Z3_ast *row, Z3_ast *col);

static Claim one_owner(ShareFn f, unsigned regs, unsigned rows_, unsigned cols_, bool wrong) {
    Z3_ast l1 = var("lane1"), i1 = var("reg1"), l2 = var("lane2"), i2 = var("reg2"), r1, c1, r2, c2;
    f(l1, i1, wrong, &r1, &c1);
    f(l2, i2, wrong, &r2, &c2);
    Z3_ast pre = and2(and2(and2(lt(l1, 32), lt(i1, regs)), and2(lt(l2, 32), lt(i2, regs))),
                      or2(ne(l1, l2), ne(i1, i2)));
    Z3_ast inside = and2(lt(r1, rows_), lt(c1, cols_));
    Z3_ast apart = or2(ne(r1, r2), ne(c1, c2));
    return (Claim){pre, and2(inside, apart)};
}

static void spread_share(Z3_ast lane, Z3_ast i, bool wrong, Z3_ast *row, Z3_ast *col) {
    Lay l = share_c();
    share(&l, lane, i, row, col);
    if (wrong) *col = rem(*col, num(4)); /* forget the 2 * (l % 4) */
}

/* m16n8k16 A (16 x 16, f16/bf16): a_i is row g for i in {0, 1, 4, 5} else g + 8, column
 * 2t + (i & 1), + 8 when i >= 4. */
static void a_share(Z3_ast lane, Z3_ast i, bool wrong, Z3_ast *row, Z3_ast *col) {
    Z3_ast g = Z3_mk_bvlshr(z, lane, num(2)), tq = rem(lane, num(4));
    Z3_ast low_row = eq(Z3_mk_bvand(z, i, num(2)), num(0)); /* i in {0, 1, 4, 5} */
    *row = ite(low_row, g, add(g, num(8)));
    Z3_ast c = add(mul(num(2), tq), Z3_mk_bvand(z, i, num(1)));
    *col = wrong ? c : ite(lt(i, 4), c, add(c, num(8)));
}

/* m16n8k16 B (16 x 8): b_i is row 2t + (i & 1), + 8 when i >= 2, column g. */
static void b_share(Z3_ast lane, Z3_ast i, bool wrong, Z3_ast *row, Z3_ast *col) {
    Z3_ast g = Z3_mk_bvlshr(z, lane, num(2)), tq = rem(lane, num(4));
    Z3_ast r = add(mul(num(2), tq), Z3_mk_bvand(z, i, num(1)));
    *row = wrong ? r : ite(lt(i, 2), r, add(r, num(8)));
    *col = g;
}

static Claim spread_one_lane(bool wrong) { return one_owner(spread_share, 4, 16, 8, wrong); }
static Claim a_one_lane(bool wrong) { return one_owner(a_share, 8, 16, 16, wrong); }
static Claim b_one_lane(bool wrong) { return one_owner(b_share, 4, 16, 8, wrong); }

/* A swizzled layout is a bijection on its cosize (rows x cols): its offsets stay below
 * the cosize and no two coordinates meet. */
static Claim bijection(Lay l) {
    Z3_ast i1 = var("i1"), j1 = var("j1"), i2 = var("i2"), j2 = var("j2");
    Z3_ast pre =
        and2(and2(and2(lt(i1, l.rows), lt(j1, l.cols)), and2(lt(i2, l.rows), lt(j2, l.cols))),
             or2(ne(i1, i2), ne(j1, j2)));
    Z3_ast o1 = lower_at(&l, i1, j1), o2 = lower_at(&l, i2, j2);
    return (Claim){pre, and2(lt(o1, l.rows * l.cols), ne(o1, o2))};
}
static Claim spec_swizzle_bijection(bool wrong) { return bijection(spec_swizzle(wrong)); }
static Claim tile32_swizzle_bijection(bool wrong) { return bijection(tile32_a_bij(wrong)); }

/* ldmatrix reads each 16-byte run of a row (8 f16 columns from a multiple of 8) from
 * one 16-byte aligned address: the run's offsets are consecutive and the first is a
 * multiple of 8. */
static Claim runs_intact(Lay l) {
    Z3_ast i = var("i"), j = var("j"), r = var("r");
    Z3_ast pre =
        and2(and2(lt(i, l.rows), lt(j, l.cols)), and2(eq(rem(j, num(8)), num(0)), lt(r, 8)));
    Z3_ast o = lower_at(&l, i, j);
    return (Claim){pre,
                   and2(eq(lower_at(&l, i, add(j, r)), add(o, r)), eq(rem(o, num(8)), num(0)))};
}
static Claim tile32_a_runs(bool wrong) { return runs_intact(tile32_a(wrong)); }
static Claim tile32_b_runs(bool wrong) { return runs_intact(tile32_b(wrong)); }

/* WMMA loads a 16 x 16 f16 fragment from a 32-byte aligned address with a leading
 * dimension of whole 16-byte runs: in tile64's padded stages (the runtime's, and the
 * example's stacked pairs) every fragment origin is a multiple of 16 elements and the
 * rows are a multiple of 8 elements apart. */
static Claim wmma_origins(Lay l) {
    Z3_ast fi = var("frag_row"), fj = var("frag_col");
    Z3_ast pre = and2(lt(fi, l.rows / 16), lt(fj, l.cols / 16));
    Z3_ast o = lower_at(&l, mul(fi, num(16)), mul(fj, num(16)));
    Z3_ast ld_ok = eq(rem(num(l.row_stride), num(8)), num(0));
    return (Claim){pre, and2(eq(rem(o, num(16)), num(0)), ld_ok)};
}
static Claim tile64_a_wmma(bool wrong) { return wmma_origins(tile64_a(wrong)); }
static Claim tile64_b_wmma(bool wrong) { return wmma_origins(tile64_b(wrong)); }
static Claim tile64_stages_a_wmma(bool wrong) { return wmma_origins(tile64_stages_a(wrong)); }
static Claim tile64_stages_b_wmma(bool wrong) { return wmma_origins(tile64_stages_b(wrong)); }

static const struct Fact {
    const char *name, *what;
    Claim (*claim)(bool wrong);
} facts[] = {
    {"spread-is-isa", "spread(rows(16, 8), 8, 4, 1, 2) is the ISA's accumulator share",
     spread_is_isa},
    {"c-share-is-spread", "the m16n8k16 C share of DESIGN.md section 8 is that spread",
     c_share_is_spread},
    {"spread-one-lane", "the spread gives each element of 16 x 8 exactly one lane and value",
     spread_one_lane},
    {"a-share-one-lane", "the m16n8k16 A share gives each element of 16 x 16 one lane and register",
     a_one_lane},
    {"b-share-one-lane", "the m16n8k16 B share gives each element of 16 x 8 one lane and register",
     b_one_lane},
    {"spec-swizzle-bijection", "swizzle(rows(16, 16), 1, 3, 3) is a bijection on its 256 offsets",
     spec_swizzle_bijection},
    {"tile32-swizzle-bijection",
     "tile32's swizzle(rows(64, 32), 2, 3, 3) is a bijection on its 2048 offsets",
     tile32_swizzle_bijection},
    {"tile32-a-runs", "tile32's swizzled A tile keeps ldmatrix's 16-byte runs together",
     tile32_a_runs},
    {"tile32-b-runs", "tile32's pad(rows(32, 32), 8) B tile keeps ldmatrix's 16-byte runs together",
     tile32_b_runs},
    {"tile64-a-wmma", "tile64's pad(rows(64, 32), 8) stage gives WMMA aligned fragments and rows",
     tile64_a_wmma},
    {"tile64-b-wmma", "tile64's pad(rows(32, 64), 8) stage gives WMMA aligned fragments and rows",
     tile64_b_wmma},
    {"tile64-stages-a-wmma",
     "tile64.cairn's two a stages, pad(rows(128, 32), 8), give WMMA aligned fragments",
     tile64_stages_a_wmma},
    {"tile64-stages-b-wmma",
     "tile64.cairn's two b stages, pad(rows(64, 64), 8), give WMMA aligned fragments",
     tile64_stages_b_wmma},
};
enum { NFACTS = sizeof facts / sizeof facts[0] };

static void print_model(Z3_solver s) {
    Z3_model m = Z3_solver_get_model(z, s);
    Z3_model_inc_ref(z, m);
    unsigned n = Z3_model_get_num_consts(z, m);
    for (unsigned k = 0; k < n; k++) {
        Z3_func_decl d = Z3_model_get_const_decl(z, m, k);
        Z3_ast v = Z3_model_get_const_interp(z, m, d);
        uint64_t value = 0;
        Z3_get_numeral_uint64(z, v, &value);
        printf("    %s = %llu\n", Z3_get_symbol_string(z, Z3_get_decl_name(z, d)),
               (unsigned long long)value);
    }
    Z3_model_dec_ref(z, m);
}

static int prove(const struct Fact *f, bool wrong) {
    Claim c = f->claim(wrong);
    Z3_solver s = Z3_mk_solver_for_logic(z, Z3_mk_string_symbol(z, "QF_BV"));
    Z3_solver_inc_ref(z, s);
    Z3_solver_assert(z, s, c.pre);
    Z3_solver_assert(z, s, Z3_mk_not(z, c.post));
    Z3_lbool r = Z3_solver_check(z, s);
    int verdict = r == Z3_L_FALSE ? 0 : r == Z3_L_TRUE ? 10 : 5;
    printf("%s %s%s: %s\n",
           verdict == 0    ? "proved"
           : verdict == 10 ? "REFUTED"
                           : "UNKNOWN",
           f->name, wrong ? " (wrong formula)" : "", f->what);
    if (verdict == 10) print_model(s);
    Z3_solver_dec_ref(z, s);
    return verdict;
}

static int usage(FILE *to, int status) {
    fprintf(to, "usage: prove_layouts [--wrong] [FACT] | --list | --help\n"
                "Proves the layout facts with Z3 (exit 0 proved, 10 counterexample, 5 unknown).\n"
                "--wrong proves FACT over a deliberately wrong formula, which must be refuted.\n");
    return status;
}

int main(int argc, char **argv) {
    bool wrong = false, list = false;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--wrong") == 0) wrong = true;
        else if (strcmp(argv[i], "--list") == 0) list = true;
        else if (strcmp(argv[i], "--help") == 0) return usage(stdout, 0);
        else if (argv[i][0] == '-' || only) return usage(stderr, 2);
        else only = argv[i];
    }
    if (list) {
        for (int i = 0; i < NFACTS; i++) printf("%s\n", facts[i].name);
        return 0;
    }
    Z3_config cfg = Z3_mk_config();
    z = Z3_mk_context(cfg);
    Z3_del_config(cfg);
    int worst = 0, matched = 0;
    for (int i = 0; i < NFACTS; i++) {
        if (only && strcmp(only, facts[i].name) != 0) continue;
        matched++;
        int v = prove(&facts[i], wrong);
        if (v > worst) worst = v;
    }
    Z3_del_context(z);
    if (!matched) {
        fprintf(stderr, "prove_layouts: no fact named '%s' (--list names them)\n",
                only ? only : "");
        return 2;
    }
    return worst;
}
