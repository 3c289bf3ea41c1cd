/* finding.h - one reported blocking call and the list of them (the output
 * of the analysis, the input of the filters and the writers).
 *
 * Invariants: strings and locations are borrowed from the program / TU facts
 * except `chain` and `message`, which the finding owns; a finding list is
 * sorted by bwsc__findings_sort before it is written.
 */
#ifndef BLOCKSCAN_FINDING_H
#define BLOCKSCAN_FINDING_H

#include "facts.h"

#include <blockwatch/rules.h>

/* One step of the chain: `function` and the call it makes towards the
 * blocking call (for the last step: the blocking call itself). */
typedef struct bwsc__step {
  const char *function;
  const char *usr;
  bwsc__loc loc;
} bwsc__step;

typedef struct bwsc__finding {
  const bw_blocking_rule *rule;
  const char *callee;   /* the blocking function */
  bwsc__loc loc;        /* the blocking call */
  const char *function; /* the function making the call */
  const char *callback; /* the root */
  const char *callback_usr;
  bwsc__loc callback_loc;
  const char *entry; /* bw_submit, a wrapper, or "annotate" */
  bwsc__loc submit_loc;
  bw_runs_on runs_on;
  bwsc__step *chain;
  size_t nchain;
  char *message;
  char fingerprint[17];
} bwsc__finding;

typedef struct bwsc__findings {
  bwsc__finding *items;
  size_t count, cap;
} bwsc__findings;

/* Sorts by file, line, column, rule, callback; drops exact duplicates. */
void bwsc__findings_sort(bwsc__findings *list);

/* Removes items[i] (freeing what it owns), keeping order. */
void bwsc__findings_remove(bwsc__findings *list, size_t i);

void bwsc__findings_free(bwsc__findings *list);

/* A file-level error: a TU that failed, a bad input. */
typedef struct bwsc__error {
  char *file;
  unsigned line, col;
  char *message;
} bwsc__error;

typedef struct bwsc__errors {
  bwsc__error *items;
  size_t count, cap;
} bwsc__errors;

/* Appends an error (copies the strings; file may be NULL). */
void bwsc__errors_add(bwsc__errors *list, const char *file, unsigned line,
                      unsigned col, const char *message);
void bwsc__errors_free(bwsc__errors *list);

#endif /* BLOCKSCAN_FINDING_H */
