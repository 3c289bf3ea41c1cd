/* run_child.h - runs a program for the samples' integration tests and
 * captures its standard output.
 *
 * Invariants: the child gets the caller's environment plus the given
 * NAME=value overrides, runs in `cwd` when one is given, and is killed (its
 * pid only) when it outlives the timeout; the captured text is always
 * NUL-terminated and owned by the caller.
 */
#ifndef BW_TEST_RUN_CHILD_H
#define BW_TEST_RUN_CHILD_H

#include <stddef.h>

typedef struct child_result {
  int status; /* exit status, or -1 when it died of a signal or timed out */
  char *out;  /* everything it wrote to stdout (caller frees) */
  size_t len;
} child_result;

/* Runs argv[0] (a path) with argv; env is a NULL-terminated list of
 * "NAME=value" strings set in the child (may be NULL). Returns 0 when the
 * child could be started and waited for, -1 otherwise. */
int run_child(char *const argv[], char *const env[], const char *cwd,
              int timeout_s, child_result *res);

#endif /* BW_TEST_RUN_CHILD_H */
