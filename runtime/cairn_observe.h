/* cairn_observe.h: observations, the values a CAIRN program publishes for comparison.
 *
 * Generated code lowers `observe("name", x)` to one cairn_observe call with the raw
 * little-endian bits of x (a scalar is a view of one element). What happens is decided
 * by two environment variables, read at each observation:
 *
 *   CAIRN_OBSERVE=PATH      append one JSON line per observation to PATH:
 *                           {"name":"NAME","type":"f64","count":N,"sha256":"HEX"}
 *                           where HEX is the SHA-256 of the count * elem_size raw bytes.
 *   CAIRN_OBSERVE_RAW=DIR   also write those bytes to DIR/NAME.SEQ.bin, SEQ being the
 *                           observation's number in this process, counting from 0.
 *
 * With neither set an observation costs nothing beyond the call. Calls may come from
 * any thread; each line is written whole with one write(2) on an O_APPEND descriptor,
 * so lines never interleave (also across processes sharing one log). `cairn run
 * --observe PATH --observe-raw DIR` sets both variables. A log or folder that cannot be
 * written traps. */
#ifndef CAIRN_OBSERVE_H
#define CAIRN_OBSERVE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Records `count` elements of `elem_size` bytes each, stored at `bits` in host order.
 * `type` is the CAIRN type name of an element ("f64", "f8e4m3", "i32", "bool", ...). */
void cairn_observe(const char *name, const char *type, const void *bits, size_t count,
                   size_t elem_size);

#ifdef __cplusplus
}
#endif

#endif
