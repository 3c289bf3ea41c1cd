/* bw_bench_shim - what libblockwatch.so costs per intercepted call.
 *
 * bench/shim/run.sh runs it several times natively and under LD_PRELOAD,
 * alternating, and prints medians. Within one process every measurement
 * also has a baseline of its own: the same call made straight to libc's
 * definition (looked up in the already-loaded libc.so.6 with RTLD_NOLOAD),
 * which bypasses the shim even when it is preloaded. Batches through the
 * symbol ("via") and straight to libc ("direct") alternate, ROUNDS of each,
 * and the medians are printed, so a change of machine load hits both alike.
 *
 * Invariants: the same calls run on the main thread (never a worker), on
 * a thread named "work-0" (a worker when the shim runs with
 * worker_name=work-*) and inside an item of a bundled-runtime pool of two
 * workers (a worker the runtime announces; the other one idles, so a
 * counted call leaves the pool a free worker, as in most pools); output
 * is "name via_ns direct_ns" lines, one per measurement, in ns per call
 * (per lock/unlock pair for the mutex).
 * `bw_bench_shim N whole` instead times one run of a small program (threads
 * sharing a mutex, computing, polling) and prints "whole.ms MS";
 * `bw_bench_shim N fork` forks N children that each try to exec a program
 * that does not exist and _exit (libuv's uv_spawn of a missing file, run
 * 100 times by one of its tests) and prints "fork.ms MS", per child;
 * `bw_bench_shim N sites` makes one 100 us usleep from each of N (at most
 * 20) distinct call sites on the "work-0" thread and prints nothing: the
 * report's cost at exit is what the bench times;
 * `bw_bench_shim N itemfn` makes the same calls on a thread named "itemw-0"
 * inside bench_item_run (an item of a hand-written pool when the shim runs
 * with worker_name=itemw-*:item_fn=bench_item_*, which tells items apart by
 * their call chain) and prints the "itemfn.*" lines only.
 * Exit status 1 when libc cannot be found (nothing is printed then) or the
 * runtime's pool could not be made.
 */
#include <blockwatch/runtime.h>

#include <dlfcn.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ROUNDS = 9 };
static long iters = 20000;

/* libc's own definitions, bypassing any interposer. */
static int (*libc_poll)(struct pollfd *, nfds_t, int);
static int (*libc_yield)(void);
static int (*libc_lock)(pthread_mutex_t *);
static int (*libc_unlock)(pthread_mutex_t *);

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ns per call of one batch of fn(iters). */
static double batch(void (*fn)(long)) {
  double t0 = now_ns();
  fn(iters);
  return (now_ns() - t0) / (double)iters;
}

/* Alternates batches of via and direct, ROUNDS each (which goes first
 * alternates too), after one warm-up batch of each; prints both medians. */
static void measure(const char *name, void (*via)(long), void (*direct)(long)) {
  double v[ROUNDS], d[ROUNDS];
  batch(via);
  batch(direct);
  for (int r = 0; r < ROUNDS; r++) {
    if (r % 2) {
      d[r] = batch(direct);
      v[r] = batch(via);
    } else {
      v[r] = batch(via);
      d[r] = batch(direct);
    }
  }
  printf("%s %.1f %.1f\n", name, median(v, ROUNDS), median(d, ROUNDS));
}

/* poll with a zero timeout: wrapped, but the gate says it cannot block. */
static void poll_via(long n) {
  for (long i = 0; i < n; i++)
    poll(NULL, 0, 0);
}
static void poll_direct(long n) {
  for (long i = 0; i < n; i++)
    libc_poll(NULL, 0, 0);
}

/* sched_yield: wrapped and counted (category yield). */
static void yield_via(long n) {
  for (long i = 0; i < n; i++)
    sched_yield();
}
static void yield_direct(long n) {
  for (long i = 0; i < n; i++)
    libc_yield();
}

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;

/* An uncontended pair: with lock=1 the shim tries first and counts nothing. */
static void mutex_via(long n) {
  for (long i = 0; i < n; i++) {
    pthread_mutex_lock(&mtx);
    pthread_mutex_unlock(&mtx);
  }
}
static void mutex_direct(long n) {
  for (long i = 0; i < n; i++) {
    libc_lock(&mtx);
    libc_unlock(&mtx);
  }
}

static void run_all(const char *where) {
  char name[64];
  snprintf(name, sizeof name, "%s.poll_zero", where);
  measure(name, poll_via, poll_direct);
  snprintf(name, sizeof name, "%s.sched_yield", where);
  measure(name, yield_via, yield_direct);
  snprintf(name, sizeof name, "%s.mutex_pair", where);
  measure(name, mutex_via, mutex_direct);
}

static void *worker(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "work-0");
  run_all("worker");
  return NULL;
}

/* A hand-written pool's item: the shim finds bench_item_run in the chain
 * of each call (item_fn=bench_item_*). */
static __attribute__((noinline)) void bench_item_run(void) {
  run_all("itemfn");
  __asm__ volatile("" ::: "memory"); /* not a tail call */
}

static void *item_worker(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "itemw-0");
  bench_item_run();
  return NULL;
}

/* The bundled runtime's worker: the same calls inside one item of a pool
 * whose two workers the runtime names "bench-<n>". */
static void pool_item(void *arg) {
  (void)arg;
  run_all("pool");
}

static int pool_rows(void) {
  bw_pool_config cfg = {.name = "bench",
                        .min_workers = 2,
                        .max_workers = 2,
                        .flags = BW_POOL_NO_INJECTION};
  bw_pool *pool = bw_pool_create(&cfg);
  if (!pool)
    return -1;
  int rc = bw_submit(pool, pool_item, NULL);
  return bw_pool_destroy(pool) == 0 && rc == 0 ? 0 : -1;
}

/* Finds libc's definitions in the libc.so.6 the program already loaded. */
static int find_libc(void) {
  void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  if (!h)
    return -1;
  /* POSIX allows converting dlsym's object pointer to a function pointer. */
  *(void **)&libc_poll = dlsym(h, "poll");
  *(void **)&libc_yield = dlsym(h, "sched_yield");
  *(void **)&libc_lock = dlsym(h, "pthread_mutex_lock");
  *(void **)&libc_unlock = dlsym(h, "pthread_mutex_unlock");
  return libc_poll && libc_yield && libc_lock && libc_unlock ? 0 : -1;
}

/* ---- whole run: threads mixing locks, arithmetic and polls -------------- */

enum { WHOLE_THREADS = 4 };
static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;

static void *whole_thread(void *arg) {
  (void)arg;
  unsigned long local = 0;
  for (long i = 0; i < iters; i++) {
    pthread_mutex_lock(&shared);
    sink++;
    pthread_mutex_unlock(&shared);
    for (int k = 0; k < 50; k++)
      local = local * 6364136223846793005u + 1442695040888963407u;
    if (i % 256 == 0)
      poll(NULL, 0, 0);
  }
  sink += local;
  return NULL;
}

/* Wall time of one run of WHOLE_THREADS threads doing `iters` iterations
 * (run.sh repeats the process and takes the median). */
static void whole(void) {
  pthread_t th[WHOLE_THREADS];
  double t0 = now_ns();
  for (int i = 0; i < WHOLE_THREADS; i++)
    pthread_create(&th[i], NULL, whole_thread, NULL);
  for (int i = 0; i < WHOLE_THREADS; i++)
    pthread_join(th[i], NULL);
  printf("whole.ms %.1f\n", (now_ns() - t0) / 1e6);
}

/* ms per child of `iters` fork + failed exec + _exit + waitpid. */
static void forks(void) {
  double t0 = now_ns();
  for (long i = 0; i < iters; i++) {
    pid_t pid = fork();
    if (pid == 0) {
      execlp("bw-bench-shim-no-such-program", "x", (char *)NULL);
      _exit(127);
    }
    int status;
    if (pid > 0)
      waitpid(pid, &status, 0);
  }
  printf("fork.ms %.3f\n", (now_ns() - t0) / 1e6 / (double)iters);
}

/* ---- call sites: one blocking call from each of SITES functions --------- */

/* The call sites, by number: X(n) for each (laid out by hand: clang-format 14
 * moves a list of macro calls by one more on every run). */
// clang-format off
#define BENCH_SITES(X) \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) \
  X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17) X(18) X(19)
// clang-format on

/* One call site per function (site_calls[n] after the call keeps it from
 * being a tail call). */
static volatile int site_calls[32];
#define SITE_FN(n)                                                             \
  static __attribute__((noinline)) void site_##n(void) {                       \
    usleep(100);                                                               \
    site_calls[n]++;                                                           \
  }
BENCH_SITES(SITE_FN)
#undef SITE_FN

#define SITE_ENTRY(n) site_##n,
static void (*const site_fns[])(void) = {BENCH_SITES(SITE_ENTRY)};
#undef SITE_ENTRY
enum { SITES = sizeof site_fns / sizeof site_fns[0] };

static void *sites_thread(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "work-0");
  for (long i = 0; i < iters && i < SITES; i++)
    site_fns[i]();
  return NULL;
}

static void sites(void) {
  pthread_t th;
  pthread_create(&th, NULL, sites_thread, NULL);
  pthread_join(th, NULL);
}

int main(int argc, char **argv) {
  if (argc > 1)
    iters = strtol(argv[1], NULL, 10);
  if (iters < 1)
    iters = 1;
  if (argc > 2 && strcmp(argv[2], "whole") == 0) {
    whole();
    return 0;
  }
  if (argc > 2 && strcmp(argv[2], "fork") == 0) {
    forks();
    return 0;
  }
  if (argc > 2 && strcmp(argv[2], "sites") == 0) {
    sites();
    return 0;
  }
  if (find_libc() != 0) {
    fprintf(stderr, "bw_bench_shim: libc.so.6 or a symbol in it not found\n");
    return 1;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc > 2 && strcmp(argv[2], "itemfn") == 0) {
    pthread_t th;
    pthread_create(&th, NULL, item_worker, NULL);
    pthread_join(th, NULL);
    return 0;
  }
  run_all("other");
  pthread_t th;
  pthread_create(&th, NULL, worker, NULL);
  pthread_join(th, NULL);
  if (pool_rows() != 0) {
    fprintf(stderr, "bw_bench_shim: the runtime pool failed\n");
    return 1;
  }
  return 0;
}
