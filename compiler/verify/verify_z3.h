/* verify_z3.h: libz3, loaded when cairn verify first needs it (issue 33). Linking it
 * made every cairn command load libz3 and libstdc++ at start, most of a cached
 * `cairn run`'s time. The verifier's files include this (through verify.h) and call
 * Z3_* as usual: each name below is redirected to the table verify_z3, which
 * verify_z3_load fills with dlopen and dlsym. Only verify_z3.c, which fills it, sees
 * the real names (it defines VERIFY_Z3_LOADER). */
#ifndef CAIRN_VERIFY_Z3_H
#define CAIRN_VERIFY_Z3_H

#include <stdbool.h>
#include <stddef.h>
#include <z3.h>

typedef struct VerifyZ3 {
#define VERIFY_Z3_FN(f) __typeof__(&f) f;
#include "verify/verify_z3_fns.def"
#undef VERIFY_Z3_FN
} VerifyZ3;
extern VerifyZ3 verify_z3;

/* Loads libz3 once (later calls answer at once): true when every function resolved;
 * false with the reason in why (e.g. "libz3.so.4: cannot open shared object file"). */
bool verify_z3_load(char *why, size_t size);

#ifndef VERIFY_Z3_LOADER
#define Z3_del_config                  verify_z3.Z3_del_config
#define Z3_del_context                 verify_z3.Z3_del_context
#define Z3_func_entry_dec_ref          verify_z3.Z3_func_entry_dec_ref
#define Z3_func_entry_get_arg          verify_z3.Z3_func_entry_get_arg
#define Z3_func_entry_get_value        verify_z3.Z3_func_entry_get_value
#define Z3_func_entry_inc_ref          verify_z3.Z3_func_entry_inc_ref
#define Z3_func_interp_dec_ref         verify_z3.Z3_func_interp_dec_ref
#define Z3_func_interp_get_else        verify_z3.Z3_func_interp_get_else
#define Z3_func_interp_get_entry       verify_z3.Z3_func_interp_get_entry
#define Z3_func_interp_get_num_entries verify_z3.Z3_func_interp_get_num_entries
#define Z3_func_interp_inc_ref         verify_z3.Z3_func_interp_inc_ref
#define Z3_get_app_arg                 verify_z3.Z3_get_app_arg
#define Z3_get_app_decl                verify_z3.Z3_get_app_decl
#define Z3_get_app_num_args            verify_z3.Z3_get_app_num_args
#define Z3_get_as_array_func_decl      verify_z3.Z3_get_as_array_func_decl
#define Z3_get_ast_id                  verify_z3.Z3_get_ast_id
#define Z3_get_ast_kind                verify_z3.Z3_get_ast_kind
#define Z3_get_bool_value              verify_z3.Z3_get_bool_value
#define Z3_get_bv_sort_size            verify_z3.Z3_get_bv_sort_size
#define Z3_get_decl_kind               verify_z3.Z3_get_decl_kind
#define Z3_get_numeral_int64           verify_z3.Z3_get_numeral_int64
#define Z3_get_numeral_uint64          verify_z3.Z3_get_numeral_uint64
#define Z3_get_sort                    verify_z3.Z3_get_sort
#define Z3_get_sort_kind               verify_z3.Z3_get_sort_kind
#define Z3_is_eq_ast                   verify_z3.Z3_is_eq_ast
#define Z3_is_numeral_ast              verify_z3.Z3_is_numeral_ast
#define Z3_mk_and                      verify_z3.Z3_mk_and
#define Z3_mk_app                      verify_z3.Z3_mk_app
#define Z3_mk_array_sort               verify_z3.Z3_mk_array_sort
#define Z3_mk_bool_sort                verify_z3.Z3_mk_bool_sort
#define Z3_mk_bv_sort                  verify_z3.Z3_mk_bv_sort
#define Z3_mk_bvadd                    verify_z3.Z3_mk_bvadd
#define Z3_mk_bvadd_no_overflow        verify_z3.Z3_mk_bvadd_no_overflow
#define Z3_mk_bvadd_no_underflow       verify_z3.Z3_mk_bvadd_no_underflow
#define Z3_mk_bvand                    verify_z3.Z3_mk_bvand
#define Z3_mk_bvashr                   verify_z3.Z3_mk_bvashr
#define Z3_mk_bvlshr                   verify_z3.Z3_mk_bvlshr
#define Z3_mk_bvmul                    verify_z3.Z3_mk_bvmul
#define Z3_mk_bvmul_no_overflow        verify_z3.Z3_mk_bvmul_no_overflow
#define Z3_mk_bvneg                    verify_z3.Z3_mk_bvneg
#define Z3_mk_bvnot                    verify_z3.Z3_mk_bvnot
#define Z3_mk_bvor                     verify_z3.Z3_mk_bvor
#define Z3_mk_bvsdiv                   verify_z3.Z3_mk_bvsdiv
#define Z3_mk_bvsge                    verify_z3.Z3_mk_bvsge
#define Z3_mk_bvsgt                    verify_z3.Z3_mk_bvsgt
#define Z3_mk_bvshl                    verify_z3.Z3_mk_bvshl
#define Z3_mk_bvsle                    verify_z3.Z3_mk_bvsle
#define Z3_mk_bvslt                    verify_z3.Z3_mk_bvslt
#define Z3_mk_bvsrem                   verify_z3.Z3_mk_bvsrem
#define Z3_mk_bvsub                    verify_z3.Z3_mk_bvsub
#define Z3_mk_bvsub_no_overflow        verify_z3.Z3_mk_bvsub_no_overflow
#define Z3_mk_bvsub_no_underflow       verify_z3.Z3_mk_bvsub_no_underflow
#define Z3_mk_bvudiv                   verify_z3.Z3_mk_bvudiv
#define Z3_mk_bvuge                    verify_z3.Z3_mk_bvuge
#define Z3_mk_bvugt                    verify_z3.Z3_mk_bvugt
#define Z3_mk_bvule                    verify_z3.Z3_mk_bvule
#define Z3_mk_bvult                    verify_z3.Z3_mk_bvult
#define Z3_mk_bvurem                   verify_z3.Z3_mk_bvurem
#define Z3_mk_bvxor                    verify_z3.Z3_mk_bvxor
#define Z3_mk_config                   verify_z3.Z3_mk_config
#define Z3_mk_const                    verify_z3.Z3_mk_const
#define Z3_mk_const_array              verify_z3.Z3_mk_const_array
#define Z3_mk_context                  verify_z3.Z3_mk_context
#define Z3_mk_eq                       verify_z3.Z3_mk_eq
#define Z3_mk_extract                  verify_z3.Z3_mk_extract
#define Z3_mk_false                    verify_z3.Z3_mk_false
#define Z3_mk_fpa_abs                  verify_z3.Z3_mk_fpa_abs
#define Z3_mk_fpa_add                  verify_z3.Z3_mk_fpa_add
#define Z3_mk_fpa_div                  verify_z3.Z3_mk_fpa_div
#define Z3_mk_fpa_eq                   verify_z3.Z3_mk_fpa_eq
#define Z3_mk_fpa_geq                  verify_z3.Z3_mk_fpa_geq
#define Z3_mk_fpa_gt                   verify_z3.Z3_mk_fpa_gt
#define Z3_mk_fpa_is_infinite          verify_z3.Z3_mk_fpa_is_infinite
#define Z3_mk_fpa_is_nan               verify_z3.Z3_mk_fpa_is_nan
#define Z3_mk_fpa_is_negative          verify_z3.Z3_mk_fpa_is_negative
#define Z3_mk_fpa_is_zero              verify_z3.Z3_mk_fpa_is_zero
#define Z3_mk_fpa_leq                  verify_z3.Z3_mk_fpa_leq
#define Z3_mk_fpa_lt                   verify_z3.Z3_mk_fpa_lt
#define Z3_mk_fpa_mul                  verify_z3.Z3_mk_fpa_mul
#define Z3_mk_fpa_neg                  verify_z3.Z3_mk_fpa_neg
#define Z3_mk_fpa_numeral_double       verify_z3.Z3_mk_fpa_numeral_double
#define Z3_mk_fpa_rne                  verify_z3.Z3_mk_fpa_rne
#define Z3_mk_fpa_round_to_integral    verify_z3.Z3_mk_fpa_round_to_integral
#define Z3_mk_fpa_rtn                  verify_z3.Z3_mk_fpa_rtn
#define Z3_mk_fpa_rtp                  verify_z3.Z3_mk_fpa_rtp
#define Z3_mk_fpa_rtz                  verify_z3.Z3_mk_fpa_rtz
#define Z3_mk_fpa_sort_32              verify_z3.Z3_mk_fpa_sort_32
#define Z3_mk_fpa_sort_64              verify_z3.Z3_mk_fpa_sort_64
#define Z3_mk_fpa_sqrt                 verify_z3.Z3_mk_fpa_sqrt
#define Z3_mk_fpa_sub                  verify_z3.Z3_mk_fpa_sub
#define Z3_mk_fpa_to_fp_bv             verify_z3.Z3_mk_fpa_to_fp_bv
#define Z3_mk_fpa_to_fp_float          verify_z3.Z3_mk_fpa_to_fp_float
#define Z3_mk_fpa_to_fp_signed         verify_z3.Z3_mk_fpa_to_fp_signed
#define Z3_mk_fpa_to_fp_unsigned       verify_z3.Z3_mk_fpa_to_fp_unsigned
#define Z3_mk_fpa_to_ieee_bv           verify_z3.Z3_mk_fpa_to_ieee_bv
#define Z3_mk_fpa_to_sbv               verify_z3.Z3_mk_fpa_to_sbv
#define Z3_mk_fpa_to_ubv               verify_z3.Z3_mk_fpa_to_ubv
#define Z3_mk_func_decl                verify_z3.Z3_mk_func_decl
#define Z3_mk_implies                  verify_z3.Z3_mk_implies
#define Z3_mk_int                      verify_z3.Z3_mk_int
#define Z3_mk_ite                      verify_z3.Z3_mk_ite
#define Z3_mk_not                      verify_z3.Z3_mk_not
#define Z3_mk_or                       verify_z3.Z3_mk_or
#define Z3_mk_params                   verify_z3.Z3_mk_params
#define Z3_mk_select                   verify_z3.Z3_mk_select
#define Z3_mk_sign_ext                 verify_z3.Z3_mk_sign_ext
#define Z3_mk_solver                   verify_z3.Z3_mk_solver
#define Z3_mk_solver_for_logic         verify_z3.Z3_mk_solver_for_logic
#define Z3_mk_store                    verify_z3.Z3_mk_store
#define Z3_mk_string_symbol            verify_z3.Z3_mk_string_symbol
#define Z3_mk_true                     verify_z3.Z3_mk_true
#define Z3_mk_unsigned_int64           verify_z3.Z3_mk_unsigned_int64
#define Z3_mk_xor                      verify_z3.Z3_mk_xor
#define Z3_mk_zero_ext                 verify_z3.Z3_mk_zero_ext
#define Z3_model_dec_ref               verify_z3.Z3_model_dec_ref
#define Z3_model_eval                  verify_z3.Z3_model_eval
#define Z3_model_get_func_interp       verify_z3.Z3_model_get_func_interp
#define Z3_model_inc_ref               verify_z3.Z3_model_inc_ref
#define Z3_params_dec_ref              verify_z3.Z3_params_dec_ref
#define Z3_params_inc_ref              verify_z3.Z3_params_inc_ref
#define Z3_params_set_uint             verify_z3.Z3_params_set_uint
#define Z3_set_error_handler           verify_z3.Z3_set_error_handler
#define Z3_solver_assert               verify_z3.Z3_solver_assert
#define Z3_solver_check                verify_z3.Z3_solver_check
#define Z3_solver_dec_ref              verify_z3.Z3_solver_dec_ref
#define Z3_solver_get_model            verify_z3.Z3_solver_get_model
#define Z3_solver_get_reason_unknown   verify_z3.Z3_solver_get_reason_unknown
#define Z3_solver_get_statistics       verify_z3.Z3_solver_get_statistics
#define Z3_solver_inc_ref              verify_z3.Z3_solver_inc_ref
#define Z3_solver_pop                  verify_z3.Z3_solver_pop
#define Z3_solver_push                 verify_z3.Z3_solver_push
#define Z3_solver_set_params           verify_z3.Z3_solver_set_params
#define Z3_solver_to_string            verify_z3.Z3_solver_to_string
#define Z3_stats_dec_ref               verify_z3.Z3_stats_dec_ref
#define Z3_stats_get_key               verify_z3.Z3_stats_get_key
#define Z3_stats_get_uint_value        verify_z3.Z3_stats_get_uint_value
#define Z3_stats_inc_ref               verify_z3.Z3_stats_inc_ref
#define Z3_stats_is_uint               verify_z3.Z3_stats_is_uint
#define Z3_stats_size                  verify_z3.Z3_stats_size
#define Z3_substitute                  verify_z3.Z3_substitute
#define Z3_to_app                      verify_z3.Z3_to_app
#endif

#endif
