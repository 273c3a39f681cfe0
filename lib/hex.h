/* hex.h: bytes as lowercase hexadecimal, the spelling of every digest, key id and token
 * the three binaries write (naming: see err.h). */
#ifndef CAIRN_LIB_HEX_H
#define CAIRN_LIB_HEX_H

#include <stddef.h>

/* Writes 2*N lowercase hex digits and a NUL into OUT (2*N+1 bytes). */
void hex_encode(const void *bytes, size_t n, char *out);

#endif
