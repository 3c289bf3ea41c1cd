/* tus.h - every translation unit's facts, wherever they come from: a
 * parse, the facts cache, or facts files written by --emit-facts.
 *
 * Invariant: the facts come back in input order (inputs are sorted by
 * file; facts files are sorted by the file they describe), so the program
 * built from them, and the report, are the same whichever way they came.
 */
#ifndef BLOCKSCAN_TUS_H
#define BLOCKSCAN_TUS_H

#include "cache.h"
#include "finding.h"
#include "inputs.h"
#include "program.h"
#include "report.h"

/* How the facts were obtained, for --stats. */
typedef struct bwsc__tu_stats {
  size_t parsed, cached, loaded;
} bwsc__tu_stats;

/* Progress on stderr while TUs are gathered: none, one "[n/N] file" line
 * per TU (a CI log keeps them all), or one line rewritten in place (a
 * terminal). */
typedef enum bwsc__progress {
  BWSC__PROGRESS_OFF,
  BWSC__PROGRESS_LINES,
  BWSC__PROGRESS_IN_PLACE
} bwsc__progress;

/* Facts of every input into facts[i], on `jobs` threads; from `cache`
 * (may be NULL) when it has them, else parsed (and stored there). Paths
 * in the progress lines are printed as `where` prints them. With a `prog`
 * (bwsc__program_init'ed, nothing added), each TU's functions are merged
 * into it as soon as it and every TU before it are gathered
 * (bwsc__program_add_functions): bwsc__program_finish completes it. */
void bwsc__tus_gather(const bwsc__inputs *inputs, bwsc__tu_facts *facts,
                      unsigned jobs, bwsc__cache *cache, bwsc__tu_stats *stats,
                      bwsc__progress progress, const bwsc__report *where,
                      bwsc__program *prog);

/* --facts: reads every facts file named by paths (directories are searched
 * for *.bwfacts). Returns a malloc'd array (*count set); unreadable files
 * are errors naming them. Two files about one source: the first in path
 * order wins, as the first compile command of a file does in a database. */
bwsc__tu_facts *bwsc__tus_load(const char *const *paths, size_t npaths,
                               size_t *count, bwsc__errors *errors);

/* --emit-facts OUT -- COMMAND: parses the one source file COMMAND compiles
 * and writes its facts to OUT, and a make-style dependency file to OUT.d.
 * Returns the exit status (2 when the TU did not parse: its facts are
 * written all the same, so the analysis reports it as -p would). */
int bwsc__tus_emit(const char *out, const char *const *command, size_t nwords);

#endif /* BLOCKSCAN_TUS_H */
