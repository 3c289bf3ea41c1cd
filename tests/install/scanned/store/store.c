/* store.c - the blocking side: reached from a pool callback in jobs.c. */
#include <scanned/scanned.h>

#include <unistd.h>

void store_flush(int fd) {
  fsync(fd);
}
