/* sanitized_target.c - a program test_sanitized builds with
 * -fsanitize=thread and -fsanitize=address: a worker thread named
 * "procs-worker" sleeps 3 times, each time taking a mutex main also takes,
 * then signals main through a condition variable.
 *
 * Invariants: exactly 3 usleep calls on the worker; every shared access
 * is under the mutex (a race or lock report is the tool's, not ours);
 * prints "shared 3" and exits 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static int shared, done;

static void *worker(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "procs-worker");
  for (int i = 0; i < 3; i++) {
    usleep(2000);
    pthread_mutex_lock(&lock);
    shared++;
    pthread_mutex_unlock(&lock);
  }
  pthread_mutex_lock(&lock);
  done = 1;
  pthread_cond_signal(&done_cond);
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL) != 0)
    return 1;
  pthread_mutex_lock(&lock);
  while (!done)
    pthread_cond_wait(&done_cond, &lock);
  int seen = shared;
  pthread_mutex_unlock(&lock);
  pthread_join(t, NULL);
  printf("shared %d\n", seen);
  return 0;
}
