/* near.h: "did you mean": the edit distance of two short names, for the nearest name a
 * message proposes (unknown names in cairn check, unknown commands) (naming: see err.h). */
#ifndef CAIRN_LIB_NEAR_H
#define CAIRN_LIB_NEAR_H

/* The edit distance of a and b (an insertion, deletion, substitution or swap of two
 * neighbours per step: `LIMTI` is one step from `LIMIT`), or cap + 1 once it is known
 * to exceed cap (and for names over 64 bytes). */
int near_distance(const char *a, const char *b, int cap);
/* The cap a name of this length allows: a third of its letters, one at least. */
int near_cap(const char *name);

#endif
