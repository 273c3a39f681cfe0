/* fuzz_replay.h: the main of a fuzz target built to replay files instead of fuzzing (the
 * FUZZ_*_REPLAY builds, which `make test` runs over each target's kept corpus). Each FILE
 * given, and each file of each FOLDER given, goes to LLVMFuzzerTestOneInput once, whole;
 * then "TARGET: replayed N inputs". With print_names, each input's file name and ": "
 * come first on its line. Include it once, after LLVMFuzzerTestOneInput. */
#ifndef FUZZ_REPLAY_H
#define FUZZ_REPLAY_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One file through the target; 0 when it cannot be read. */
static int fuzz_replay_file(const char *path, int print_names) {
    FILE *f = fopen(path, "rb");
    long len = f && fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    uint8_t *data = len >= 0 ? malloc((size_t)len + 1) : NULL;
    int ok = data && fseek(f, 0, SEEK_SET) == 0 && fread(data, 1, (size_t)len, f) == (size_t)len;
    if (f) fclose(f);
    if (ok && print_names) printf("%s: ", strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
    if (ok) LLVMFuzzerTestOneInput(data, (size_t)len);
    free(data);
    return ok;
}

static int fuzz_replay_main(const char *target, int argc, char **argv, int print_names) {
    int n = 0;
    for (int i = 1; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        if (!d) {
            n += fuzz_replay_file(argv[i], print_names);
            continue;
        }
        struct dirent *ent;
        char path[4200];
        while ((ent = readdir(d)) != NULL) {
            if (ent->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/%s", argv[i], ent->d_name);
            n += fuzz_replay_file(path, print_names);
        }
        closedir(d);
    }
    printf("%s: replayed %d inputs\n", target, n);
    return 0;
}

#endif
