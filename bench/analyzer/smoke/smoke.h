/* smoke.h - the two declarations the bench's smoke corpus shares: a pool
 * entry as the blockwatch rules name it, and the blocking helper. */
#ifndef BENCH_SMOKE_H
#define BENCH_SMOKE_H
typedef struct bw_pool bw_pool;
int bw_submit(bw_pool *pool, void (*fn)(void *arg), void *arg);
void store_flush(int fd);
#endif
