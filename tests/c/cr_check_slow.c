/* cr_check_slow.c: cr_check with every rounding test of cairn_cr.h failing, so that each
 * input takes the accurate path (cairn_cr_mp.h): the same modes and checks, aimed at
 * the code the fast paths leave to it. */
#define CAIRN_CR_FORCE_SLOW 1
#include "cr_check.c"
