/* junit.h: a run's comparison as JUnit XML (`cairn-farm compare RUN --junit FILE`, `submit
 * --wait --junit FILE`), the file every CI system reads: one <testsuite> per cell, one
 * <testcase> per case that cell ran, the verdict as a pass, a <failure> or a <skipped>.
 * It keeps to the Jenkins/Ant schema (tests/farm/junit-jenkins.xsd) and escapes every
 * string an agent or a submitter sent (docs/farm.md, "CI and monitoring"). */
#ifndef CAIRN_FARM_JUNIT_H
#define CAIRN_FARM_JUNIT_H

#include <stdio.h>
#include <cjson/cJSON.h>

#include "proto/util.h"

/* What the file is written from: REPORT (compare_results' report, with the
 * coordinator's "diffs" when it has them: values and ULP distances in the failure
 * messages), RESULTS (the run's results: durations, traps, digests), and for the
 * links the coordinator's URL and the run's id (NULL and 0 offline). */
typedef struct {
    const cJSON *report, *results;
    const char *dashboard; /* the coordinator's URL, or NULL */
    long run;
} JunitInput;

/* Writes the XML to OUT. */
void junit_print(FILE *out, const JunitInput *in);
/* Writes it to the file PATH (replaced whole): 0, or -1 with E. */
int junit_write(const char *path, const JunitInput *in, Err *e);
/* TEXT (LEN bytes) as XML character data or an attribute value: & < > " ' escaped, and
 * what XML 1.0 cannot hold at all (control characters, invalid UTF-8, U+FFFE/U+FFFF)
 * written as U+FFFD, so that no string breaks the document. */
void junit_escape(FILE *out, const char *text, size_t len);

#endif
