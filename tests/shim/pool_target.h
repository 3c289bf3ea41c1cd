/* pool_target.h - what the foreign-pool test programs share (uv_pool_target,
 * thpool_target): the monotonic clock they time their probe with, the
 * clock the shim reads too.
 */
#ifndef BW_TEST_POOL_TARGET_H
#define BW_TEST_POOL_TARGET_H

#include <time.h>

static inline unsigned long long pool_target_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull +
         (unsigned long long)ts.tv_nsec;
}

#endif /* BW_TEST_POOL_TARGET_H */
