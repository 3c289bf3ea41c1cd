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

typedef struct bw__inputs {
  bw__tu_input *items;
  size_t count, cap;
} bw__inputs;

/* Builds the input list from the options. Problems (a missing file, an
 * unreadable or malformed database) are appended to *errors, naming the
 * thing; the inputs that could be resolved are still returned. */
void bw__inputs_collect(const bw__options *opts, bw__inputs *out,
                        bw__errors *errors);

/* Loads one compile_commands.json into *out (appending). Returns 0, or -1
 * after adding an error. Exposed for tests. */
int bw__compdb_load(const char *path, bw__inputs *out, bw__errors *errors);

/* Splits a shell-quoted command line into words (malloc'd array of malloc'd
 * strings, *count set). Exposed for tests. */
char **bw__split_command(const char *command, size_t *count);

void bw__inputs_free(bw__inputs *inputs);

#endif /* BLOCKSCAN_INPUTS_H */
