/* diff.h - the lines a change touches (from `git diff -U0 REV` or a unified
 * diff) and the filter that keeps the findings such a change touches.
 *
 * Invariants: files are keyed by their real path (symbolic links resolved,
 * or the path made absolute when the file does not exist), so a change
 * matches a finding however the compilation database spells the file; a
 * file's line ranges are sorted and disjoint after bwsc__changes_read;
 * only added lines count (a removal touches no line of the new file).
 */
#ifndef BLOCKSCAN_DIFF_H
#define BLOCKSCAN_DIFF_H

#include "finding.h"
#include "inputs.h"
#include "options.h"
#include "util.h"

#include <stdio.h>
#include <sys/types.h>

/* A git command running beside the analysis: its stdout and stderr go to
 * temporary files, so it never waits on a pipe nobody reads yet. */
typedef struct bwsc__git_job {
  pid_t pid; /* 0: none running */
  FILE *out, *err;
} bwsc__git_job;

typedef struct bwsc__line_range {
  unsigned first, last;
} bwsc__line_range;

typedef struct bwsc__changed_file {
  char *path; /* real path */
  bwsc__line_range *ranges;
  size_t count, cap;
} bwsc__changed_file;

typedef struct bwsc__changes {
  bwsc__changed_file *files;
  size_t count, cap;
  bwsc__strmap index; /* path -> files[] */
  bwsc__strmap real;  /* a finding's file -> 1 + index in files, 0: none */
  char **real_keys;   /* the keys of `real`, owned */
  size_t nreal_keys, capreal_keys;
  /* --diff REV between bwsc__changes_load and bwsc__changes_finish: git
   * diff and git ls-files running in the work tree `top`. */
  bwsc__git_job diff, untracked;
  char *top;
  const char *rev; /* the option's own string */
} bwsc__changes;

/* Reads the unified diff `in` (named `name` in errors); its paths are
 * relative to `root` (one leading "a/"/"b/" is taken off, as git writes
 * them). Returns 0, or -1 after adding an error naming name:line. */
int bwsc__changes_read(bwsc__changes *changes, FILE *in, const char *name,
                       const char *root, bwsc__errors *errors);

/* Marks lines first..last of `path` (relative to `root`) as changed. */
void bwsc__changes_add(bwsc__changes *changes, const char *root,
                       const char *path, unsigned first, unsigned last);

/* --diff REV / --diff-file PATCH: reads PATCH ("-" = stdin) at once; for
 * REV finds the work tree of the first input and checks the revision (one
 * git call), then starts git diff and git ls-files there, which run while
 * the TUs are read and analysed. Returns 0, or -1 after adding an error
 * (git's own message, or the patch's file:line). */
int bwsc__changes_load(bwsc__changes *changes, const bwsc__options *opts,
                       const bwsc__inputs *inputs, bwsc__errors *errors);

/* Reads what the git commands bwsc__changes_load started printed (nothing
 * to do for a patch); call before bwsc__changes_filter. Returns 0, or -1
 * after adding git's error. */
int bwsc__changes_finish(bwsc__changes *changes, bwsc__errors *errors);

/* Waits for a job still running and drops what it printed. */
void bwsc__git_job_drop(bwsc__git_job *job);

/* Keeps the findings whose blocking call, a call of whose chain, or whose
 * submit site the change touches (call before bwsc__findings_group). */
void bwsc__changes_filter(bwsc__changes *changes, bwsc__findings *findings);

void bwsc__changes_free(bwsc__changes *changes);

#endif /* BLOCKSCAN_DIFF_H */
