/* unversioned_target.c - waits on condition variables through unversioned
 * references to pthread_cond_wait/timedwait (linked against
 * unversioned_stub.c), while the signals go to glibc's current version.
 * Prints "woken N" (N = waits that a signal ended) and exits 0 when both
 * waits were woken by their signal, 1 when one ran into its 5 s deadline:
 * what happens when the wait reaches glibc's old condition variables
 * (GLIBC_2.2.5), which the signal never reaches.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int posted, timed_out;

static void *wait_twice(void *arg) {
  (void)arg;
  pthread_mutex_lock(&mu);
  /* First an untimed wait, then a timed one, each for its own post. */
  while (posted < 1)
    pthread_cond_wait(&cv, &mu);
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 5;
  while (posted < 2 && !timed_out)
    timed_out = pthread_cond_timedwait(&cv, &mu, &deadline) != 0;
  pthread_mutex_unlock(&mu);
  return NULL;
}

static void post(void) {
  usleep(50 * 1000); /* let the waiter block first */
  pthread_mutex_lock(&mu);
  posted++;
  pthread_cond_signal(&cv);
  pthread_mutex_unlock(&mu);
}

int main(void) {
  pthread_t th;
  if (pthread_create(&th, NULL, wait_twice, NULL) != 0)
    return 2;
  post();
  post();
  pthread_join(th, NULL);
  printf("woken %d\n", timed_out ? 1 : 2);
  return timed_out ? 1 : 0;
}
