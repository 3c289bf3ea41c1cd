/* timeline_run.h - runs tests/shim/two_pools_target under the shim with
 * trace=FILE, for the timeline tests.
 *
 * Invariants: the trace lands in the shim_run scratch directory; the run
 * must exit 0 within its timeout, or the calling test fails.
 */
#ifndef BW_TEST_TIMELINE_RUN_H
#define BW_TEST_TIMELINE_RUN_H

/* The two pools' names, their items and the starved waits each must get. */
#define TIMELINE_POOLS "alpha,beta"
#define TIMELINE_SLEEPERS 3
#define TIMELINE_MIN_WAITS (TIMELINE_SLEEPERS - 1)

/* Runs the target; its trace's path goes to trace (size bytes), the line
 * of its usleep call to *sleep_line. Returns 0, or -1 with a message. */
int timeline_run(char *trace, size_t size, int *sleep_line);
/* The same with more options after report=none:trace=FILE (later keys
 * win). */
int timeline_run_with(char *trace, size_t size, int *sleep_line,
                      const char *more);

#endif /* BW_TEST_TIMELINE_RUN_H */
