/* rt_fixed_pool.h - the fixed-size pool the offloading tests run on: no
 * injection, so a test sees exactly the workers it asked for.
 *
 * Header-only (static inline) so each test binary stays one source file;
 * include it after <cmocka.h>.
 */
#ifndef BW_TESTS_RT_FIXED_POOL_H
#define BW_TESTS_RT_FIXED_POOL_H

#include "blockwatch/runtime.h"

static inline bw_pool *rt_fixed_pool(const char *name, unsigned workers) {
  const bw_pool_config cfg = {.name = name,
                              .min_workers = workers,
                              .max_workers = workers,
                              .flags = BW_POOL_NO_INJECTION};
  bw_pool *pool = bw_pool_create(&cfg);
  assert_non_null(pool);
  return pool;
}

#endif /* BW_TESTS_RT_FIXED_POOL_H */
