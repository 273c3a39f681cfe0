/* cmd_show.c: `cairn show [--all] SET...`: the observations of a raw folder or an
 * observation file, decoded (lib/obs.h), one a line; `cairn run --show` prints with the
 * same cmd_show_print. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "lib/obs_set.h"
#include "npy_set.h"

const char cmd_show_help[] =
    "usage: cairn show [--all] SET...\n"
    "\n"
    "Prints the observations of SET, a raw folder (cairn run --observe-raw DIR) or an\n"
    "observation file (cairn run --observe-file FILE), in the order they were made, or the\n"
    "array of a NumPy .npy file (named by its stem; little-endian, C order):\n"
    "\n"
    "  a scalar     name, type, value and, for a float type, its bits in hex:\n"
    "                 exact    f64  0.0  (0x0000000000000000)\n"
    "  an array     name, type[count], min, max, NaN and inf counts (float types), and\n"
    "               its first and last three elements:\n"
    "                 x        f32[1000]  min -2.5  max 7.0  NaN 0  inf 0\n"
    "                          first 1.0, 0.5, -2.5\n"
    "                          last  3.0, 7.0, 6.5\n"
    "\n"
    "Floats print as the shortest decimal that reads back as the same value in their own\n"
    "type (f16, bf16 and the f8 formats included), as Python's repr() does.\n"
    "\n"
    "  --all    also every element of every array, one a line: [index] value (bits)\n"
    "\n"
    "exit status: 0 shown, 2 usage, or a SET that cannot be read or does not check\n"
    "(an unknown type, bits that do not match their sha256)\n";

/* Up to N elements of R from index FROM, comma-separated, after LABEL. */
static void print_run(FILE *out, const ObsRecord *r, size_t from, size_t n, const char *label) {
    fprintf(out, "%s", label);
    for (size_t i = from; i < from + n; i++) {
        char text[OBS_TEXT_MAX];
        obs_format(r->type, obs_element(r->type, r->bytes, i), text);
        fprintf(out, "%s%s", i > from ? ", " : " ", text);
    }
}

static void print_array(FILE *out, const ObsRecord *r, int width) {
    ObsSummary s;
    obs_summarize(r->type, r->bytes, r->count, &s);
    char lo[OBS_TEXT_MAX] = "-", hi[OBS_TEXT_MAX] = "-";
    if (s.has_range) {
        obs_format(r->type, s.min, lo);
        obs_format(r->type, s.max, hi);
    }
    fprintf(out, "%-*s  %s[%zu]  min %s  max %s", width, r->name, obs_type_name(r->type), r->count,
            lo, hi);
    if (obs_type_is_float(r->type)) fprintf(out, "  NaN %zu  inf %zu", s.nan, s.inf);
    fprintf(out, "\n%*s  ", width, "");
    if (r->count <= 6) {
        print_run(out, r, 0, r->count, "elements");
    } else {
        print_run(out, r, 0, 3, "first");
        fprintf(out, "\n%*s  ", width, "");
        print_run(out, r, r->count - 3, 3, "last ");
    }
    fputc('\n', out);
}

static void print_every_element(FILE *out, const ObsRecord *r, int width) {
    for (size_t i = 0; i < r->count; i++) {
        char text[OBS_TEXT_MAX], bits[OBS_TEXT_MAX];
        uint64_t v = obs_element(r->type, r->bytes, i);
        obs_format(r->type, v, text);
        obs_format_bits(r->type, v, bits);
        fprintf(out, "%*s  [%zu] %s  (%s)\n", width, "", i, text, bits);
    }
}

void cmd_show_print(FILE *out, const ObsSet *set, int all) {
    int width = 1;
    for (size_t i = 0; i < set->len; i++) {
        int n = (int)strlen(set->items[i].name);
        width = n > width ? (n < 24 ? n : 24) : width;
    }
    if (set->len == 0) fprintf(out, "(no observations)\n");
    for (size_t i = 0; i < set->len; i++) {
        const ObsRecord *r = &set->items[i];
        if (r->count == 1) {
            char text[OBS_TEXT_MAX], bits[OBS_TEXT_MAX];
            uint64_t v = obs_element(r->type, r->bytes, 0);
            obs_format(r->type, v, text);
            obs_format_bits(r->type, v, bits);
            fprintf(out, "%-*s  %s  %s", width, r->name, obs_type_name(r->type), text);
            if (obs_type_is_float(r->type)) fprintf(out, "  (%s)", bits);
            fputc('\n', out);
        } else if (r->count == 0) {
            fprintf(out, "%-*s  %s[0]  (no elements)\n", width, r->name, obs_type_name(r->type));
        } else {
            print_array(out, r, width);
            if (all) print_every_element(out, r, width);
        }
    }
}

int cmd_show(int argc, char **argv) {
    int all = 0, first = 0, sets = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--all") == 0) all = 1;
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "cairn show: error: unknown flag '%s' (see cairn show --help)\n",
                    argv[i]);
            return 2;
        } else if (!first) first = i;
        sets += argv[i][0] != '-' || !argv[i][1];
    }
    if (!first) {
        fprintf(stderr, "cairn show: error: no observation set given (see cairn show --help)\n");
        return 2;
    }
    for (int i = first; i < argc; i++) {
        if (strcmp(argv[i], "--all") == 0) continue;
        ObsSet set;
        Err err = {{0}};
        if (npy_set_read_any(argv[i], &set, &err) != 0) {
            npy_set_report("cairn show", &err);
            return 2;
        }
        if (sets > 1) printf("%s%s:\n", i > first ? "\n" : "", argv[i]);
        cmd_show_print(stdout, &set, all);
        obs_set_free(&set);
    }
    return 0;
}
