/* cairn.h: the CAIRN runtime's public C API, one include for C users and generated code.
 * Each part is documented in its own header. */
#ifndef CAIRN_H
#define CAIRN_H

#include "cairn_trap.h"
#include "cairn_pool.h"
#include "cairn_sum.h"
#include "cairn_reduce.h"
#include "cairn_dsum.h"
#include "cairn_float.h"
#include "cairn_observe.h"
#include "cairn_enclose.h"
#include "cairn_mm_enclose.h"
#include "cairn_layout.h"
#include "cairn_mma.h"
#include "cairn_fragment.h"
#include "cairn_device.h"
#include "cairn_npy.h"
#include "cairn_args.h"

#endif
