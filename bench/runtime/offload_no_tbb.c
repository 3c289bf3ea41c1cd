/* offload_no_tbb.c - the oneTBB loop of bw_bench_offload when oneTBB was
 * not found: its cells print n/a.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

int bench_tbb_parallel_for(unsigned workers, size_t n, size_t loops,
                           uint64_t *ns, uint64_t *sum);

int bench_tbb_parallel_for(unsigned workers, size_t n, size_t loops,
                           uint64_t *ns, uint64_t *sum) {
  (void)workers;
  (void)n;
  (void)loops;
  (void)ns;
  (void)sum;
  return -ENOTSUP;
}
