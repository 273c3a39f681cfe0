/* cr_vec_plant.c: cr_vec_check built with a planted wrong rounding in the vector path
 * (CAIRN_CR_PLANT: one unit in the last place on the vector lanes' results whose low 12
 * bits are 0x123), linked with its own copy of the array forms in place of the
 * runtime's. tests/runtime/test_cr_vec.py runs it to show that the comparison catches a
 * wrong rounding, and that a lane forced to the scalar fallback gives the scalar bits. */
#define CAIRN_CR_PLANT 1
#include "cairn_cr_array.c"
#include "cr_vec_check.c"
