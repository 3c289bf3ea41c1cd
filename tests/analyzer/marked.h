/* marked.h - runs blockscan on fixtures whose lines say what they expect:
 * a line holding "expect" in a comment must be reported as a warning, one
 * holding "not reported" must not (fixtures/recall, nonblock, conds).
 *
 * Invariant: only the first file's lines are checked; every mismatch is
 * printed (file:line and which way it is wrong) with the tool's output.
 */
#ifndef BLOCKSCAN_TEST_MARKED_H
#define BLOCKSCAN_TEST_MARKED_H

/* Scans `files` (NULL-terminated, at most 8) together from directory
 * `dir`, with `extra` (NULL-terminated, may be NULL) before "--"; returns
 * how many marked lines of files[0] disagree, and the exit status. */
int marked_mismatches(const char *exe, const char *dir,
                      const char *const *files, const char *const *extra,
                      int *status);

#endif /* BLOCKSCAN_TEST_MARKED_H */
