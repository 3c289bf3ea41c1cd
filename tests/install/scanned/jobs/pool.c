/* pool.c - a stand-in for the pool, so that the program links. */
#include <scanned/scanned.h>

int bw_submit(bw_pool *pool, void (*fn)(void *arg), void *arg) {
  (void)pool;
  fn(arg);
  return 0;
}
