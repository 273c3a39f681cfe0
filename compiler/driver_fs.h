/* driver_fs.h: files, digests and child processes for the back end's driver.
 * Every function reports failure as a value (and errno), never by printing. */
#ifndef CAIRN_DRIVER_FS_H
#define CAIRN_DRIVER_FS_H

#include <stddef.h>
#include <sys/types.h>

/* A growable byte string, always NUL-terminated. */
typedef struct strbuf {
    char *data;
    size_t len, cap;
} strbuf;

void sb_append(strbuf *sb, const char *bytes, size_t len);
void sb_puts(strbuf *sb, const char *text);
void sb_printf(strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_free(strbuf *sb);

/* A NULL-terminated list of owned strings, e.g. an argv. */
typedef struct strvec {
    char **items;
    size_t len, cap;
} strvec;

void sv_push(strvec *sv, const char *text);
void sv_free(strvec *sv);

/* Reads a whole file; NULL with errno on failure. The result is NUL-terminated. */
char *fs_read(const char *path, size_t *len);
/* Writes a file through a temporary in the same folder and rename(2); 0 or -1. */
int fs_write_atomic(const char *path, const void *data, size_t len);
/* mkdir -p; 0 or -1. */
int fs_mkdirs(const char *path);
/* rm -r; best effort. */
void fs_remove_tree(const char *path);
/* An absolute path for a file that need not exist yet (its folder must); NULL if not. */
char *fs_absolute(const char *path);
/* The full path of an executable: `name` itself when it holds a '/', else found on
 * PATH. NULL when there is none. */
char *fs_which(const char *name);

/* SHA-256 (OpenSSL EVP) as 64 lowercase hex digits. */
void sha256_hex(const void *data, size_t len, char hex[65]);
/* SHA-256 of a file; -1 with errno when it cannot be read. */
int sha256_file(const char *path, char hex[65]);

/* Starts argv[0] (a full path) in folder `cwd` (NULL: here) with stdout and stderr
 * going to `log_path` (NULL: inherited); returns the pid or -1. */
pid_t proc_start(char *const argv[], const char *cwd, const char *log_path);
/* Waits for pid; its exit status, 128+signal when killed, -1 on error. */
int proc_wait(pid_t pid);
/* proc_start + proc_wait. */
int proc_run(char *const argv[], const char *cwd, const char *log_path);

#endif
