/* fields.h: the bounds on what an agent may say in an upload (docs/farm.md, "Limits and
 * security"). Everything an agent sends is checked against them before anything is
 * filed, so no later reader (compare, the pages) meets a field it did not expect. */
#ifndef CAIRN_FARM_FIELDS_H
#define CAIRN_FARM_FIELDS_H

#include <cjson/cJSON.h>
#include "proto/evidence.h"
#include "proto/util.h"

#define FIELD_MAX_NAME   EVIDENCE_MAX_NAME /* bytes: observation names, types, check names, keys */
#define FIELD_MAX_PATH   1024              /* bytes: case paths, receipts, subject and file names */
#define FIELD_MAX_TEXT   4096              /* bytes: any other string (trap lines, details) */
#define FIELD_MAX_ITEMS  EVIDENCE_MAX_ITEMS /* elements of any one array or object */
#define FIELD_MAX_DEPTH  8                  /* nesting of arrays and objects in the predicate */
#define FIELD_STATUS_MIN (-65536)           /* build and exit statuses are integers in this range */
#define FIELD_STATUS_MAX 65535
#define FIELD_COUNT_MAX  9007199254740992.0 /* 2^53: counts stay exact integers */

/* 0 when J (named PATH in messages) keeps the bounds every value an agent sends keeps
 * (strings, keys, elements, nesting, finite numbers); else -1 with E naming the field. */
int fields_check_value(const cJSON *j, const char *path, Err *e);
/* 0 when PRED keeps every bound; otherwise -1 and E names the field and its bound. */
int fields_check_predicate(const cJSON *pred, Err *e);

/* 1 when TEXT (LEN bytes of JSON) spells a NUL (\u0000) anywhere: cJSON would cut the
 * string there, and another reader would see a different name. */
int fields_has_nul(const char *text, size_t len);
/* At least how many values cJSON would make of TEXT (LEN bytes of JSON), counted without
 * parsing: one per comma and bracket outside strings, plus one. What a parse costs (a
 * node of 64 bytes per value: `[0,0,...]` is one per 2 bytes) is known before it runs. */
size_t fields_json_values(const char *text, size_t len);

#endif
