/* sections.h - the four measurements of the runtime benchmark, (a) to (d),
 * each filling one table: a row per case, a column per contender.
 *
 * Every section interleaves the contenders (each repetition visits them in
 * a rotated order, so none always runs right after the same neighbour) and
 * keeps every repetition's sample; the tables print medians.
 */
#ifndef BW_BENCH_RUNTIME_SECTIONS_H
#define BW_BENCH_RUNTIME_SECTIONS_H

#include "table.h"

#include <stddef.h>

typedef struct bench_options {
  unsigned reps;          /* (a) and (d) repetitions */
  unsigned settle_ms;     /* pause before each measurement (spinners park) */
  size_t sizes[2];        /* (a) items per round */
  unsigned workers[2];    /* (a) and (d) pool sizes */
  size_t items_per_run;   /* (a) rounds repeat until this many items ran */
  unsigned delay_reps;    /* (b) */
  size_t delay_counts[2]; /* (b) delays per run */
  unsigned delay_ms;      /* (b) */
  unsigned sleep_workers; /* (b) and (c) pool size */
  size_t sleepers;        /* (c) items per run */
  unsigned sleep_ms;      /* (c) each item's sleep */
  unsigned comp_reps;     /* (c) runs with compensation */
  unsigned ref_reps;      /* (c) runs without (sleep-bound, so few) */
  size_t chain_links;     /* (d) */
  const char *peers;      /* comma list of peers to run; NULL: all (and
                             blockwatch always, ratios need it) */
} bench_options;

/* (a) ns per tiny item. */
void bench_section_tiny(const bench_options *o, table *t);
/* (b) delay makespan in ms. */
void bench_section_delays(const bench_options *o, table *t);
/* (c) rows = contender and mode; column 0 makespan (ms), 1 probe wait (ms).
 * Row 0 is blockwatch with compensation, row 1 with starvation injection
 * only, then every pool at a fixed size. */
void bench_section_sleepers(const bench_options *o, table *t);
/* (d) ns per chain link. */
void bench_section_chain(const bench_options *o, table *t);
/* (h) ns per semaphore / event hand-off between two tasks, against a
 * pthread_cond_signal hand-off between two threads (section_handoff.c). */
void bench_section_handoff(const bench_options *o, table *t);
void bench_print_handoff(const bench_options *o, const table *t);

#endif /* BW_BENCH_RUNTIME_SECTIONS_H */
