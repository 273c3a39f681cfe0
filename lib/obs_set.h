/* obs_set.h: observation sets, the observations of one run with their bits, read from
 * the two forms a run leaves and written in the one-file form (naming: see err.h).
 *
 * A raw folder: what CAIRN_OBSERVE_RAW=DIR (cairn run --observe-raw DIR) writes:
 * DIR/index.jsonl, one log line per observation naming the file with its bits,
 *     {"name":"x","type":"f64","count":3,"sha256":"...","file":"x.0.bin"}
 * and those files, DIR/NAME.SEQ.bin (runtime/cairn_observe.h).
 *
 * An observation file (cairn run --observe-file FILE): the line OBS_SET_MAGIC, then for
 * each observation in order its log line, the count * size bytes of its elements
 * (little-endian), and a newline:
 *     CAIRN-OBSERVATIONS 1\n
 *     {"name":"x","type":"f64","count":3,"sha256":"..."}\n  <24 bytes>  \n
 *     ...
 * so a reader needs no more than a JSON parser: the line says how many bytes follow.
 *
 * Reading trusts nothing: every type must be one obs.h knows, every count must fit the
 * bytes there are, every element's bits must hash to the line's sha256 and a raw
 * folder's file names stay inside it; anything else is an error naming the file and the
 * observation. */
#ifndef CAIRN_LIB_OBS_SET_H
#define CAIRN_LIB_OBS_SET_H

#include <stddef.h>

#include "lib/err.h"
#include "lib/obs.h"
#include "lib/sha256.h"

#define OBS_SET_MAGIC "CAIRN-OBSERVATIONS 1\n"

/* One observation: its name, type, element count, digest and bits (count * size bytes,
 * little-endian). */
typedef struct ObsRecord {
    char *name;
    ObsType type;
    size_t count;
    char sha256[SHA256_HEX_LEN];
    unsigned char *bytes;
} ObsRecord;

typedef struct ObsSet {
    ObsRecord *items;
    size_t len, cap;
} ObsSet;

/* Reads PATH, a raw folder or an observation file, into SET (zeroed first). 0, or -1
 * with E set and SET empty. */
int obs_set_read(const char *path, ObsSet *set, Err *e);
/* Writes SET to PATH as an observation file, crash-safely (lib/fs.h). 0 or -1. */
int obs_set_write(const char *path, const ObsSet *set, Err *e);
void obs_set_free(ObsSet *set);

#endif
