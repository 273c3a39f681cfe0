/* json.h: typed access to cJSON values and JSON files (naming: see err.h). A field of
 * the wrong type reads as absent: input from the network or a file is never trusted. */
#ifndef CAIRN_LIB_JSON_H
#define CAIRN_LIB_JSON_H

#include <cjson/cJSON.h>

#include "lib/err.h"

/* KEY's string, or NULL when absent or not a string. */
const char *json_str(const cJSON *obj, const char *key);
/* KEY's number, or FALLBACK when absent or not a number. */
double json_num(const cJSON *obj, const char *key, double fallback);
/* KEY as an integer in [LO, HI]: 1 (and *out) when it is one, 0 when absent, -1 when it
 * is anything else (another type, a fraction, out of range: never cast unchecked). */
int json_int(const cJSON *obj, const char *key, double lo, double hi, long *out);
/* The JSON file at PATH, parsed; NULL with E set when it cannot be read or parsed. */
cJSON *json_parse_file(const char *path, Err *e);

#endif
