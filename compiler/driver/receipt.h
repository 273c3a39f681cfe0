/* receipt.h: the build receipt, OUT.receipt.json, that `cairn build` writes beside OUT.
 * docs/tools.md describes every field. The same inputs give the same bytes: nothing in
 * it depends on time or the machine's state, except `source_date_epoch`, present only
 * when the SOURCE_DATE_EPOCH environment variable is set. */
#ifndef CAIRN_RECEIPT_H
#define CAIRN_RECEIPT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "base/base.h"

typedef struct ReceiptInfo {
    const char *source_path, *source_sha256;
    const char *output_path, *output_sha256;
    const char *runtime_sha256; /* digest of the runtime sources compiled in */
    const char *cc_name, *cc_version;
    const StrVec *flags;      /* exactly what the program was compiled with */
    const StrVec *link;       /* the libraries it was linked with */
    const char *sanitize;     /* "address,undefined", "thread" or NULL */
    const cJSON *numerics;    /* {"function": [entry, ...], ...} (lower/numerics.c) */
    const char *target;       /* "host" or "sm_NN" */
    int emulate;              /* device work ran on host threads */
    const char *nvcc_version; /* a CUDA build: nvcc's release ("13.0.48"), else NULL */
    const StrVec *nvcc_flags; /* what nvcc compiled the device half with */
    const cJSON *library;     /* a library (cairn build --lib): its files and entries */
    const cJSON *guards;      /* per function, the guards proved and kept (lower.h) */
} ReceiptInfo;

/* The receipt's text (malloc'd, ends in a newline). */
char *receipt_render(const ReceiptInfo *info);

/* cairn build --explain-guards: the guard list (LowerOutput.guards) of SOURCE, per
 * function, each guard by line:col, proved (and by what) or kept. */
void receipt_print_guards(FILE *f, const char *source, const cJSON *guards);

#endif
