/* store.c - smoke corpus of bw_bench_analyzer: the blocking side. */
#include "smoke.h"

#include <unistd.h>

void store_flush(int fd) {
  fsync(fd);
  usleep(1000);
}
