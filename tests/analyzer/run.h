/* run.h - runs blockscan as a subprocess for the integration tests.
 *
 * Invariant: every run has a time limit (the child is killed after it), and
 * its stdout and stderr are captured whole into malloc'd strings.
 */
#ifndef BLOCKSCAN_TEST_RUN_H
#define BLOCKSCAN_TEST_RUN_H

#include <stddef.h>

typedef struct run_result {
  int status; /* exit status, or 128 + signal */
  char *out;
  char *err;
} run_result;

/* Runs argv[0] with argv in directory `cwd` (NULL: unchanged), at most
 * `seconds` long. argv ends with NULL. A blockscan run gets --no-cache
 * unless it names --cache itself: the tests check what parsing finds, and
 * the fixtures' databases sit in the source tree, where no cache belongs. */
run_result run_tool(const char *cwd, const char *const *argv, int seconds);

/* The same, with argv exactly as given. */
run_result run_tool_as_is(const char *cwd, const char *const *argv,
                          int seconds);

void run_free(run_result *result);

/* Reads a whole file (NULL if it cannot). */
char *read_file(const char *path);

/* 1 when `needle` occurs in `haystack`. */
int contains(const char *haystack, const char *needle);

#endif /* BLOCKSCAN_TEST_RUN_H */
