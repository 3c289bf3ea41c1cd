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

/* What makes a step of a chain unlikely to run, when anything does. */
typedef enum bwsc__cold {
  BWSC__WARM = 0,
  BWSC__COLD_ASSERT,   /* written in an assertion macro's failure branch */
  BWSC__COLD_NORETURN, /* calls a function that never returns */
  BWSC__COLD_ONCE      /* written where a once-only initialisation runs */
} bwsc__cold;

/* One step of the chain: `function` and the call it makes towards the
 * blocking call (for the last step: the blocking call itself). */
typedef struct bwsc__step {
  const char *function;
  const char *usr;
  bwsc__loc loc;
  const char *through; /* the call goes through this pointer ("ops->run") */
  size_t ntargets;     /* when `through`: how many functions it may reach */
  bwsc__cold cold;
} bwsc__step;

/* One callback that reaches a finding's blocking call (a finding is one
 * blocking call site and rule, reached from one or more callbacks). */
typedef struct bwsc__via {
  const char *callback;
  bwsc__loc callback_loc;
  const char *entry;
  bwsc__loc submit_loc;
  bw_runs_on runs_on;
  bw_pool_kind pool_kind;
  int low;       /* its chain is low confidence */
  size_t nchain; /* its chain's length */
  char fingerprint[17];
} bwsc__via;

typedef struct bwsc__finding {
  const bw_blocking_rule *rule;
  const char *hint;     /* the rule's, or a hint rule's for the root's api */
  const char *callee;   /* the blocking function */
  bwsc__loc loc;        /* the blocking call */
  const char *function; /* the function making the call */
  const char *callback; /* the root */
  const char *callback_usr;
  bwsc__loc callback_loc;
  const char *entry; /* bw_submit, a wrapper, or "annotate" */
  bwsc__loc submit_loc;
  bw_runs_on runs_on;
  bw_pool_kind pool_kind; /* of the root's pool (GENERAL on a loop) */
  bwsc__step *chain;
  size_t nchain;
  /* Low confidence: the chain crosses a call through a pointer with more
   * than BWSC__WIDE_TARGETS targets, or a cold step. */
  int low;
  char *message; /* set by bwsc__findings_group */
  char fingerprint[17];
  /* After bwsc__findings_group: every callback reaching this site (this
   * finding's own first), and a fingerprint of the site alone. */
  bwsc__via *vias;
  size_t nvias;
  char site_fingerprint[17];
} bwsc__finding;

typedef struct bwsc__findings {
  bwsc__finding *items;
  size_t count, cap;
} bwsc__findings;

/* The rule of a spin-wait finding when `call` is part of a polling loop
 * (its bwsc__spin): a yield, or a brief sleep (`brief`: one its own rule's
 * conditions excuse, uv_sleep(0)), that is a loop's whole body (`rule`,
 * the callee's, whether its category is on or not) waits for another
 * thread however short each call is, and is reported once, as a spin wait
 * instead of by its own rule; a bare busy loop is one too (rule NULL). A
 * longer sleep in such a loop stays a sleep finding. NULL: not a spin
 * wait, or the category is off. The rule is built on first use (the
 * analysis runs on one thread) and lives as long as the process. */
const bw_blocking_rule *bwsc__spin_rule_of(const bw_rules *rules,
                                           const bwsc__call_fact *call,
                                           const bw_blocking_rule *rule,
                                           int brief);

/* Sorts by file, line, column, rule, callback; drops exact duplicates. */
void bwsc__findings_sort(bwsc__findings *list);

/* Keeps one finding per blocking call site, rule and blocking function
 * (the list must be sorted): the one with the best chain (high confidence
 * first, then the shortest), listing every callback in `vias`. Writes every
 * finding's message. */
void bwsc__findings_group(bwsc__findings *list);

/* Drops the low-confidence findings (sorted, before grouping); returns how
 * many sites were reached with low confidence only (now not shown). */
size_t bwsc__findings_drop_low(bwsc__findings *list);

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
