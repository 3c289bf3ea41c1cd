/* scratch.h - one private temporary directory per test binary, for the
 * samples' integration tests (cmocka group setup / teardown).
 *
 * Invariants: scratch_dir holds the directory's path between
 * scratch_create() and scratch_remove(); removal deletes everything the
 * tests left in it and never follows a symlink out of it.
 */
#ifndef BW_TEST_SCRATCH_H
#define BW_TEST_SCRATCH_H

extern char scratch_dir[64];

/* Group setup: creates /tmp/bw-test-XXXXXX into scratch_dir; 0 or -1. */
int scratch_create(void **state);

/* Group teardown: removes scratch_dir and its contents; 0 or -1. */
int scratch_remove(void **state);

#endif /* BW_TEST_SCRATCH_H */
