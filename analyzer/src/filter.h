/* filter.h - drops findings silenced by suppression comments.
 *
 * Invariant: a comment covers its own line and the line after it, and only
 * the rule it names (a rule id such as blocking-sleep, a category name such
 * as sleep, or "*"); a comment naming no rule covers them all.
 */
#ifndef BLOCKSCAN_FILTER_H
#define BLOCKSCAN_FILTER_H

#include "facts.h"
#include "finding.h"

/* Removes the findings covered by a suppression fact of any TU. */
void bwsc__suppress_apply(bwsc__findings *findings, const bwsc__tu_facts *tus,
                          size_t ntus);

#endif /* BLOCKSCAN_FILTER_H */
