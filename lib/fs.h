/* fs.h: files and folders: whole-file reads, crash-safe writes, mkdir -p, rm -r, and the
 * paths of files and programs (naming: see err.h). Every function reports failure as a
 * value, with E's message when E is not NULL and errno kept for callers that word their
 * own message. */
#ifndef CAIRN_LIB_FS_H
#define CAIRN_LIB_FS_H

#include <stddef.h>

#include "lib/err.h"

/* The whole file at PATH, NUL-terminated (*len, when LEN is not NULL, excludes the NUL);
 * malloc'd, NULL on failure. */
char *fs_read(const char *path, size_t *len, Err *e);

/* Replaces PATH crash-safely: writes a private temporary beside it, fsyncs it, renames
 * it over PATH and fsyncs the folder, so PATH is always the old bytes or the new ones,
 * also after a power cut, and concurrent writers never see half a file. 0 or -1. */
int fs_write_atomic(const char *path, const void *data, size_t len, Err *e);
/* Writes and fsyncs PATH in place (no rename): for files inside a folder that is renamed
 * into place later. 0 or -1. */
int fs_write_synced(const char *path, const void *data, size_t len, Err *e);
/* fsyncs the folder DIR (its entries: a rename or a new file in it). 0 or -1. */
int fs_sync_dir(const char *dir);

/* mkdir -p PATH (mode 0755). 0 or -1. */
int fs_mkdirs(const char *path, Err *e);
/* Writes a new file REL (a relative path) under the folder open as DIR: its folders are
 * made where missing and opened without following links, and the file is created
 * O_EXCL|O_NOFOLLOW, so nothing planted in DIR (a link to a folder or a file outside
 * it, or a file already there) is followed or overwritten. 0 or -1. */
int fs_create_beneath(int dir, const char *rel, const void *data, size_t len, Err *e);
/* rm -r PATH, links not followed; a missing PATH is no error. Removes what it can; 0 when
 * all of it went, -1 otherwise. */
int fs_remove_tree(const char *path);

/* An absolute path for a file that need not exist yet (its folder must); malloc'd, NULL
 * if not. */
char *fs_absolute(const char *path);
/* The full path of an executable: NAME itself when it holds a '/', else found on PATH;
 * malloc'd, NULL when there is none. */
char *fs_which(const char *name);

#endif
