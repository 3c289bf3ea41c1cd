/* itemfn_target - a hand-written pthread pool for item_fn=GLOB: two
 * workers named "mypool-0" and "mypool-1" park in pthread_cond_wait in
 * their dequeue loop and run the jobs main queues.
 *
 * Invariants:
 *  - "serial": main waits until both workers are parked, then queues the
 *    jobs one at a time, each after the one before has finished: job_sleep
 *    (one usleep, through the helper nap), job_cond (one
 *    pthread_cond_timedwait that times out) and task_nap (one nanosleep;
 *    a static always-inline function, so at -O2 it is a frame only in the
 *    debug information), SERIAL_ROUNDS times each. So the items make
 *    exactly 3 * SERIAL_ROUNDS blocking calls on workers, never two at a
 *    time, and every other blocking call of a worker is its idle wait.
 *  - "meet": two job_meet items, one per worker, each waiting in
 *    pthread_cond_wait until main saw both inside it: exactly 2 calls, and
 *    both workers blocked in an item at once.
 *  - Prints "items N" (the items run) on stdout; main's own waits are on
 *    the main thread, not a worker.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { WORKERS = 2, SERIAL_ROUNDS = 3, NAP_US = 2000, QUEUE = 16 };
enum { JOB_SLEEP, JOB_COND, TASK_NAP, JOB_MEET };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER; /* idle workers */
static pthread_cond_t main_cv = PTHREAD_COND_INITIALIZER; /* main waits */
static int queue[QUEUE];
static int queued, parked, done_items, stopping;

/* job_meet's rendezvous (under mu). */
static pthread_cond_t meet_cv = PTHREAD_COND_INITIALIZER;
static int meeting, released;

static volatile int sink; /* keeps calls out of tail position */

static __attribute__((noinline)) void nap(void) {
  usleep(NAP_US);
  sink++;
}

static __attribute__((noinline)) void job_sleep(void) {
  nap();
  sink++;
}

static __attribute__((noinline)) void job_cond(void) {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t c = PTHREAD_COND_INITIALIZER;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_nsec += NAP_US * 1000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&m);
  pthread_cond_timedwait(&c, &m, &ts); /* nobody signals: times out */
  pthread_mutex_unlock(&m);
  sink++;
}

static inline __attribute__((always_inline)) void task_nap(void) {
  struct timespec ts = {0, NAP_US * 1000L};
  nanosleep(&ts, NULL);
  sink++;
}

/* Called with mu held; returns with it held. */
static __attribute__((noinline)) void job_meet(void) {
  meeting++;
  pthread_cond_broadcast(&main_cv);
  while (!released)
    pthread_cond_wait(&meet_cv, &mu);
  sink++;
}

static void run(int job) {
  switch (job) {
  case JOB_SLEEP:
    job_sleep();
    break;
  case JOB_COND:
    job_cond();
    break;
  case TASK_NAP:
    task_nap();
    break;
  case JOB_MEET:
    pthread_mutex_lock(&mu);
    job_meet();
    pthread_mutex_unlock(&mu);
    break;
  }
}

/* The dequeue loop: the workers' idle wait is the cond wait here. */
static void *worker(void *arg) {
  char name[16];
  snprintf(name, sizeof name, "mypool-%d", (int)(long)arg);
  pthread_setname_np(pthread_self(), name);
  pthread_mutex_lock(&mu);
  for (;;) {
    while (queued == 0 && !stopping) {
      parked++;
      pthread_cond_broadcast(&main_cv);
      pthread_cond_wait(&work_cv, &mu);
      parked--;
    }
    if (queued == 0)
      break;
    int job = queue[0];
    memmove(queue, queue + 1, (size_t)(--queued) * sizeof queue[0]);
    pthread_mutex_unlock(&mu);
    run(job);
    pthread_mutex_lock(&mu);
    done_items++;
    pthread_cond_broadcast(&main_cv);
  }
  pthread_mutex_unlock(&mu);
  return NULL;
}

/* Queues job and, with wait, returns once every queued item has run and
 * both workers are parked again (mu held). */
static void submit(int job, int wait) {
  queue[queued++] = job;
  int target = done_items + queued;
  pthread_cond_broadcast(&work_cv);
  while (wait && (done_items < target || parked < WORKERS))
    pthread_cond_wait(&main_cv, &mu);
}

int main(int argc, char **argv) {
  int serial = argc == 2 && strcmp(argv[1], "serial") == 0;
  int meet = argc == 2 && strcmp(argv[1], "meet") == 0;
  if (!serial && !meet) {
    fprintf(stderr, "usage: itemfn_target serial|meet\n");
    return 2;
  }
  pthread_t t[WORKERS];
  for (long i = 0; i < WORKERS; i++)
    if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
      return 1;
  pthread_mutex_lock(&mu);
  while (parked < WORKERS)
    pthread_cond_wait(&main_cv, &mu);
  if (serial) {
    for (int r = 0; r < SERIAL_ROUNDS; r++) {
      submit(JOB_SLEEP, 1);
      submit(JOB_COND, 1);
      submit(TASK_NAP, 1);
    }
  } else {
    submit(JOB_MEET, 0);
    submit(JOB_MEET, 0);
    /* Both are inside pthread_cond_wait once main holds mu with both
     * arrived: each released mu in that very call. */
    while (meeting < 2)
      pthread_cond_wait(&main_cv, &mu);
    released = 1;
    pthread_cond_broadcast(&meet_cv);
    while (done_items < 2)
      pthread_cond_wait(&main_cv, &mu);
  }
  stopping = 1;
  pthread_cond_broadcast(&work_cv);
  pthread_mutex_unlock(&mu);
  for (int i = 0; i < WORKERS; i++)
    pthread_join(t[i], NULL);
  printf("items %d\n", done_items);
  return 0;
}
