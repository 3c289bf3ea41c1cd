/* pool.c - smoke corpus of bw_bench_analyzer: a pool callback that reaches a
 * blocking call in another translation unit (store.c), so that blockscan
 * has one finding to report and both tools parse two TUs with flags. */
#include "smoke.h"

static void flush_job(void *arg) {
  store_flush(*(int *)arg);
}

int queue_flush(bw_pool *pool, int *fd) {
  return bw_submit(pool, flush_job, fd);
}
