/* main.c - a pool callback that sleeps, and one handed to jobs.c. */
#include <scanned/scanned.h>

#include <unistd.h>

static void nap(void *arg) {
  (void)arg;
  usleep(APP_NAP_US);
}

int main(void) {
  int fd = 1;
  bw_submit(0, nap, 0);
  return jobs_queue_flush(0, &fd);
}
