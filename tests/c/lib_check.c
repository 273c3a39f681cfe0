/* lib_check.c: lib/'s functions from the command line, one per verb, for
 * tests/lib/test_lib.py to check against independent models (Python's hashlib, the
 * file system as Python sees it, subprocess). Prints results on stdout; exit 0 when the
 * function succeeded, 1 when it reported failure (its message on stderr), 2 on usage. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fs.h"
#include "lib/hex.h"
#include "lib/json.h"
#include "lib/proc.h"
#include "lib/sha256.h"

static int failed(const Err *e) {
    fprintf(stderr, "%s\n", e->msg);
    return 1;
}

static int do_sha256(const char *path) {
    Err e = {{0}};
    char file_hex[SHA256_HEX_LEN], mem_hex[SHA256_HEX_LEN];
    size_t size = 0, len = 0;
    if (sha256_file_hex(path, file_hex, &size, &e) != 0) return failed(&e);
    char *data = fs_read(path, &len, &e);
    if (!data) return failed(&e);
    sha256_hex(data, len, mem_hex);
    free(data);
    printf("%s %zu\n%s %zu\n%d\n", file_hex, size, mem_hex, len, sha256_is_hex(file_hex));
    return 0;
}

static int do_read(const char *path) {
    Err e = {{0}};
    size_t len = 0;
    char *data = fs_read(path, &len, &e);
    if (!data) return failed(&e);
    int ok = fwrite(data, 1, len, stdout) == len && data[len] == '\0';
    free(data);
    return ok ? 0 : 1;
}

/* N threads replace PATH at once, each with its own text: the file ends as one of them. */
typedef struct {
    const char *path;
    char text[64];
    int rc;
} Writer;

static void *write_one(void *arg) {
    Writer *w = arg;
    Err e = {{0}};
    for (int k = 0; k < 20 && w->rc == 0; k++)
        w->rc = fs_write_atomic(w->path, w->text, strlen(w->text), &e);
    return NULL;
}

static int do_race(const char *path, int n) {
    Writer w[16];
    pthread_t t[16];
    n = n < 1 ? 1 : n > 16 ? 16 : n;
    for (int i = 0; i < n; i++) {
        w[i] = (Writer){path, "", 0};
        snprintf(w[i].text, sizeof w[i].text, "writer %d\n", i);
        pthread_create(&t[i], NULL, write_one, &w[i]);
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(t[i], NULL);
        rc |= w[i].rc;
    }
    return rc ? 1 : 0;
}

static int do_json(char **argv) {
    Err e = {{0}};
    cJSON *j = json_parse_file(argv[0], &e);
    if (!j) return failed(&e);
    long v = 0;
    int got = json_int(j, argv[1], atof(argv[2]), atof(argv[3]), &v);
    printf("%d %ld\n", got, got == 1 ? v : 0L);
    cJSON_Delete(j);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    const char *verb = argv[1];
    Err e = {{0}};
    if (!strcmp(verb, "hex")) {
        char out[2 * 256 + 1];
        size_t n = strlen(argv[2]);
        if (n > 256) return 2;
        hex_encode(argv[2], n, out);
        puts(out);
        return 0;
    }
    if (!strcmp(verb, "sha256")) return do_sha256(argv[2]);
    if (!strcmp(verb, "read")) return do_read(argv[2]);
    if (!strcmp(verb, "write") && argc == 4)
        return fs_write_atomic(argv[2], argv[3], strlen(argv[3]), &e) ? failed(&e) : 0;
    if (!strcmp(verb, "race") && argc == 4) return do_race(argv[2], atoi(argv[3]));
    if (!strcmp(verb, "mkdirs")) return fs_mkdirs(argv[2], &e) ? failed(&e) : 0;
    if (!strcmp(verb, "rmtree")) return fs_remove_tree(argv[2]) ? 1 : 0;
    if (!strcmp(verb, "json") && argc == 6) return do_json(argv + 2);
    if (!strcmp(verb, "output")) {
        char *text = NULL;
        int status = proc_output(argv + 2, &text, NULL);
        printf("%d\n%s", status, text ? text : "");
        free(text);
        return 0;
    }
    if (!strcmp(verb, "watch") && argc > 3) { /* watch TIMEOUT ARGV... */
        ProcWatch w = {.timeout_s = atof(argv[2]), .tick_s = 0.05};
        printf("%d\n", proc_watch(argv + 3, &w));
        return 0;
    }
    return 2;
}
