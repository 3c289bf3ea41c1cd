/* shim_run.h - helpers for the shim's integration tests: run a program
 * under LD_PRELOAD with BLOCKWATCH_OPTIONS, capture its output, read its
 * JSON report.
 *
 * Invariants: a child that outlives its timeout is killed (its own pid
 * only) and reported as timed out; every captured buffer is NUL-terminated
 * and owned by the caller; scratch files live in one mkdtemp directory.
 */
#ifndef BW_TEST_SHIM_RUN_H
#define BW_TEST_SHIM_RUN_H

#include <jansson.h>
#include <stddef.h>

typedef struct shim_result {
  int exited;   /* 1 when it exited, 0 when killed by a signal / timeout */
  int status;   /* exit status, or the signal number */
  int timedout; /* 1 when the timeout killed it */
  char *out;    /* stdout (caller frees) */
  char *err;    /* stderr (caller frees) */
} shim_result;

/* Runs argv with env_extra ("NAME=value", NULL-terminated, may be NULL)
 * added to the environment; preload = 1 sets LD_PRELOAD to the shim.
 * Returns 0 when the child ran (whatever its status). */
int shim_run(char *const argv[], char *const env_extra[], int preload,
             int timeout_s, shim_result *res);
void shim_result_free(shim_result *res);

/* The per-test scratch directory (created on first use). */
const char *shim_tmpdir(void);
/* Joins the scratch directory and name into buf. */
const char *shim_tmpfile(char *buf, size_t size, const char *name);

/* printf into one of 8 rotating static buffers (2 KiB each): a string that
 * lives until the eighth call after it, enough for one assertion's parts. */
char *shim_fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

/* Loads a JSON file, NULL (with a message) when it is missing or bad. */
json_t *shim_load_json(const char *path);
/* report.blocking_calls.<key> as an integer (-1 when missing). */
long long shim_calls(json_t *report, const char *key);
/* Sum of call_sites[].count whose function is `fn` (all when NULL). */
long long shim_site_count(json_t *report, const char *fn);
/* Reads a "key value" line from a child's stdout (-1 when missing). */
long long shim_out_value(const char *out, const char *key);

#endif /* BW_TEST_SHIM_RUN_H */
