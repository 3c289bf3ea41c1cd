/* inputs.h - which translation units to parse, with which arguments: from a
 * compilation database (compile_commands.json) and/or the command line.
 *
 * Invariants: every input's file is an absolute, normalised path; a file
 * appears at most once (the first compile command wins); the list is
 * sorted by path, so parse order and output are deterministic.
 */
#ifndef BLOCKSCAN_INPUTS_H
#define BLOCKSCAN_INPUTS_H

#include "finding.h"
#include "options.h"
#include "parse.h"

typedef struct bwsc__inputs {
  bwsc__tu_input *items;
  size_t count, cap;
} bwsc__inputs;

/* Builds the input list from the options. Problems (a missing file, an
 * unreadable or malformed database) are appended to *errors, naming the
 * thing; the inputs that could be resolved are still returned. */
void bwsc__inputs_collect(const bwsc__options *opts, bwsc__inputs *out,
                          bwsc__errors *errors);

/* Loads one compile_commands.json into *out (appending). Returns 0, or -1
 * after adding an error. Exposed for tests. */
int bwsc__compdb_load(const char *path, bwsc__inputs *out,
                      bwsc__errors *errors);

/* Splits a shell-quoted command line into words (malloc'd array of malloc'd
 * strings, *count set). Exposed for tests. */
char **bwsc__split_command(const char *command, size_t *count);

void bwsc__inputs_free(bwsc__inputs *inputs);

#endif /* BLOCKSCAN_INPUTS_H */
