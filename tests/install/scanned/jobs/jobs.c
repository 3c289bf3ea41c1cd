/* jobs.c - a pool callback that blocks through another target's code. */
#include <scanned/scanned.h>

static void flush_job(void *arg) {
  for (int i = 0; i < JOBS_RETRIES; i++)
    store_flush(*(int *)arg);
}

int jobs_queue_flush(bw_pool *pool, int *fd) {
  return bw_submit(pool, flush_job, fd);
}
