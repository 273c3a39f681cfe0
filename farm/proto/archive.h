/* archive.h: the source tree as one content-addressed blob. The format is JSON:
 * {"format": "cairn-src-1", "files": [{"path", "mode", "size", "sha256", "data"}]},
 * files sorted by path, data in base64, so the same tree always gives the same bytes
 * (and the same SHA-256). Unpacking checks every path and every file's digest. */
#ifndef CAIRN_FARM_ARCHIVE_H
#define CAIRN_FARM_ARCHIVE_H

#include <stddef.h>
#include "proto/util.h"

#define ARCHIVE_FORMAT "cairn-src-1"

/* Packs regular files under ROOT, skipping .git, build, bin and hidden folders.
 * Returns the archive text (malloc'd) and its length. */
char *archive_pack(const char *root, size_t *len, Err *e);
/* Unpacks an archive into DEST (created); returns the number of files or -1. */
int archive_unpack(const char *data, size_t len, const char *dest, Err *e);

#endif
