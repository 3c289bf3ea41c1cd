/* sample_util.h - small helpers the samples share: a clock, flag parsing and
 * percentiles. Header-only so each sample stays one readable file.
 *
 * Invariants: nothing here blocks, allocates behind the caller's back or
 * touches the runtime; every function is static inline.
 */
#ifndef BW_SAMPLE_UTIL_H
#define BW_SAMPLE_UTIL_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Monotonic time in milliseconds, as a double so sub-millisecond latencies
 * survive. */
static inline double sample_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Nonzero when `flag` (e.g. "--full") is one of the program's arguments. */
static inline int sample_has_flag(int argc, char **argv, const char *flag) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], flag) == 0)
      return 1;
  }
  return 0;
}

/* Any argument that is not one of the `known` flags (NULL-terminated list):
 * returns it so the sample can print its usage, or NULL. */
static inline const char *sample_unknown_flag(int argc, char **argv,
                                              const char *const *known) {
  for (int i = 1; i < argc; i++) {
    int found = 0;
    for (const char *const *k = known; *k != NULL; k++) {
      if (strcmp(argv[i], *k) == 0)
        found = 1;
    }
    if (!found)
      return argv[i];
  }
  return NULL;
}

static inline int sample_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a;
  double y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The q-quantile (0..1, nearest rank) of n values; sorts them in place. */
static inline double sample_quantile(double *values, size_t n, double q) {
  if (n == 0)
    return 0.0;
  qsort(values, n, sizeof values[0], sample_cmp_double);
  size_t rank = (size_t)(q * (double)n + 0.999999);
  if (rank == 0)
    rank = 1;
  if (rank > n)
    rank = n;
  return values[rank - 1];
}

#endif /* BW_SAMPLE_UTIL_H */
