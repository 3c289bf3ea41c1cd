/* finding.h - one reported blocking call and the list of them (the output
 * of the analysis, the input of the filters and the writers).
 *
 * Invariants: strings and locations are borrowed from the program / TU facts
 * except `chain` and `message`, which the finding owns; a finding list is
 * sorted by bw__findings_sort before it is written.
 */
#ifndef BLOCKSCAN_FINDING_H
#define BLOCKSCAN_FINDING_H

#include "facts.h"

#include <blockwatch/rules.h>

/* One step of the chain: `function` and the call it makes towards the
 * blocking call (for the last step: the blocking call itself). */
typedef struct bw__step {
  const char *function;
  const char *usr;
  bw__loc loc;
} bw__step;

typedef struct bw__finding {
  const bw_blocking_rule *rule;
  const char *callee;   /* the blocking function */
  bw__loc loc;          /* the blocking call */
  const char *function; /* the function making the call */
  const char *callback; /* the root */
  const char *callback_usr;
  bw__loc callback_loc;
  const char *entry; /* bw_submit, a wrapper, or "annotate" */
  bw__loc submit_loc;
  bw_runs_on runs_on;
  bw__step *chain;
  size_t nchain;
  char *message;
  char fingerprint[17];
} bw__finding;

typedef struct bw__findings {
  bw__finding *items;
  size_t count, cap;
} bw__findings;

/* Sorts by file, line, column, rule, callback; drops exact duplicates. */
void bw__findings_sort(bw__findings *list);

/* Removes items[i] (freeing what it owns), keeping order. */
void bw__findings_remove(bw__findings *list, size_t i);

void bw__findings_free(bw__findings *list);

/* A file-level error: a TU that failed, a bad input. */
typedef struct bw__error {
  char *file;
  unsigned line, col;
  char *message;
} bw__error;

typedef struct bw__errors {
  bw__error *items;
  size_t count, cap;
} bw__errors;

/* Appends an error (copies the strings; file may be NULL). */
void bw__errors_add(bw__errors *list, const char *file, unsigned line,
                    unsigned col, const char *message);
void bw__errors_free(bw__errors *list);

#endif /* BLOCKSCAN_FINDING_H */
