/* scanned.h - the declarations the scanned project's targets share. */
#ifndef SCANNED_H
#define SCANNED_H
typedef struct bw_pool bw_pool;
int bw_submit(bw_pool *pool, void (*fn)(void *arg), void *arg);
void store_flush(int fd);
int jobs_queue_flush(bw_pool *pool, int *fd);
#endif
