/* offload.c - bw_bench_offload: the runtime's parallel loop and descriptor
 * waits against their peers, in one run with the contenders alternated.
 *
 * (e) bw_parallel_for over 100 and 1,000,000 tiny iterations on 2 and 4
 *     workers, against OpenMP's `parallel for` and oneTBB's parallel_for;
 *     microseconds per loop.
 * (f) bw_fd_ready on 1,000 pipes with one write each, against libuv's
 *     uv_poll doing the same on its loop; ns per descriptor, from the first
 *     registration to the last completion.
 *
 * Invariants: every contender's loop body is the same (fold each index into
 * a local sum, add it to a shared one once per range); pools and pipes are
 * made outside the clock; column 0 is blockwatch (ratios are taken against
 * it); a peer that was not built prints n/a. Exit status: 0 when every
 * operation ran, 1 when one failed, 2 for bad usage.
 */
#include "bench.h"
#include "table.h"

#include "blockwatch/runtime.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#ifdef BENCH_HAVE_OPENMP
#include <omp.h>
#endif
#ifdef BENCH_HAVE_LIBUV
#include <uv.h>
#endif

/* The oneTBB loop (offload_tbb.cpp): 0 or -errno; -ENOTSUP when absent. */
int bench_tbb_parallel_for(unsigned workers, size_t n, size_t loops,
                           uint64_t *ns, uint64_t *sum);

/* What each index does: cheap, and not foldable by the compiler. */
static inline uint64_t tiny(size_t i) {
  return (uint64_t)i * 2654435761u;
}

static uint64_t expected_sum(size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i < n; i++)
    s += tiny(i);
  return s;
}

/* ---- (e) parallel loops ------------------------------------------------- */

static void bw_body(size_t b, size_t e, void *arg) {
  uint64_t s = 0;
  for (size_t i = b; i < e; i++)
    s += tiny(i);
  atomic_fetch_add_explicit((_Atomic uint64_t *)arg, s, memory_order_relaxed);
}

static int bw_loops(bw_pool *pool, size_t n, size_t loops, uint64_t *ns,
                    uint64_t *sum) {
  _Atomic uint64_t total = 0;
  uint64_t start = bench_now_ns();
  for (size_t r = 0; r < loops; r++) {
    int rc = bw_parallel_for(pool, 0, n, 0, bw_body, &total);
    if (rc != 0)
      return rc;
  }
  *ns = bench_now_ns() - start;
  *sum = atomic_load(&total);
  return 0;
}

static int omp_loops(unsigned workers, size_t n, size_t loops, uint64_t *ns,
                     uint64_t *sum) {
#ifdef BENCH_HAVE_OPENMP
  uint64_t total = 0;
  uint64_t start = bench_now_ns();
  for (size_t r = 0; r < loops; r++) {
    uint64_t s = 0;
#pragma omp parallel for num_threads(workers) reduction(+ : s)
    for (size_t i = 0; i < n; i++)
      s += tiny(i);
    total += s;
  }
  *ns = bench_now_ns() - start;
  *sum = total;
  return 0;
#else
  (void)workers, (void)n, (void)loops, (void)ns, (void)sum;
  return -ENOTSUP;
#endif
}

/* ---- (f) descriptor readiness ------------------------------------------- */

typedef struct pipes {
  int (*fds)[2];
  size_t n;
} pipes;

static int pipes_open(pipes *p, size_t n) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 2 * n + 64) {
    rl.rlim_cur = rl.rlim_max < 2 * n + 64 ? rl.rlim_max : 2 * n + 64;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  p->fds = calloc(n, sizeof(*p->fds));
  p->n = 0;
  if (p->fds == NULL)
    return -ENOMEM;
  for (; p->n < n; p->n++)
    if (pipe(p->fds[p->n]) != 0)
      return -errno;
  return 0;
}

static void pipes_close(pipes *p) {
  for (size_t i = 0; i < p->n; i++) {
    close(p->fds[i][0]);
    close(p->fds[i][1]);
  }
  free(p->fds);
}

/* Reads back the byte each pipe got (outside the clock). */
static int pipes_drain(pipes *p) {
  char c;
  for (size_t i = 0; i < p->n; i++)
    if (read(p->fds[i][0], &c, 1) != 1)
      return -EIO;
  return 0;
}

static int bw_fds(bw_pool *pool, pipes *p, uint64_t *ns) {
  bw_task **ts = calloc(p->n, sizeof(*ts));
  if (ts == NULL)
    return -ENOMEM;
  int rc = 0;
  uint64_t start = bench_now_ns();
  for (size_t i = 0; i < p->n && rc == 0; i++)
    if ((ts[i] = bw_fd_ready(pool, p->fds[i][0], POLLIN, -1)) == NULL)
      rc = -errno;
  for (size_t i = 0; i < p->n && rc == 0; i++)
    if (write(p->fds[i][1], "x", 1) != 1)
      rc = -EIO;
  bw_task *all = rc == 0 ? bw_when_all(ts, p->n) : NULL;
  if (all != NULL) {
    rc = bw_wait(all, 60000);
    bw_task_release(all);
  }
  *ns = bench_now_ns() - start;
  for (size_t i = 0; i < p->n; i++) {
    if (ts[i] != NULL && rc == 0 &&
        bw_task_result(ts[i]) != (void *)(intptr_t)POLLIN)
      rc = -EPROTO;
    bw_task_release(ts[i]);
  }
  free(ts);
  return rc != 0 ? rc : pipes_drain(p);
}

#ifdef BENCH_HAVE_LIBUV
typedef struct uv_fds {
  uv_poll_t *polls;
  size_t left;
} uv_fds;

static void uv_ready(uv_poll_t *h, int status, int events) {
  uv_fds *u = h->loop->data;
  uv_poll_stop(h);
  if (status == 0 && (events & UV_READABLE))
    u->left--;
}

static void uv_closed(uv_handle_t *h) {
  (void)h;
}
#endif

static int uv_fds_run(pipes *p, uint64_t *ns) {
#ifdef BENCH_HAVE_LIBUV
  uv_loop_t loop;
  if (uv_loop_init(&loop) != 0)
    return -EIO;
  uv_fds u = {calloc(p->n, sizeof(uv_poll_t)), p->n};
  if (u.polls == NULL)
    return -ENOMEM;
  loop.data = &u;
  int rc = 0;
  uint64_t start = bench_now_ns();
  for (size_t i = 0; i < p->n && rc == 0; i++) {
    if (uv_poll_init(&loop, &u.polls[i], p->fds[i][0]) != 0 ||
        uv_poll_start(&u.polls[i], UV_READABLE, uv_ready) != 0)
      rc = -EIO;
  }
  for (size_t i = 0; i < p->n && rc == 0; i++)
    if (write(p->fds[i][1], "x", 1) != 1)
      rc = -EIO;
  while (rc == 0 && u.left > 0)
    uv_run(&loop, UV_RUN_ONCE);
  *ns = bench_now_ns() - start;
  for (size_t i = 0; i < p->n; i++)
    uv_close((uv_handle_t *)&u.polls[i], uv_closed);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  free(u.polls);
  return rc != 0 ? rc : pipes_drain(p);
#else
  (void)p, (void)ns;
  return -ENOTSUP;
#endif
}

/* ---- driver ------------------------------------------------------------- */

typedef struct options {
  unsigned reps;
  size_t sizes[2];
  unsigned workers[2];
  size_t pipes;
} options;

static bw_pool *pool_of(unsigned workers) {
  const bw_pool_config cfg = {.name = "bench",
                              .min_workers = workers,
                              .max_workers = workers,
                              .flags = BW_POOL_NO_INJECTION};
  return bw_pool_create(&cfg);
}

static void section_loops(const options *o, table *t) {
  t->corner = "us per loop";
  t->cols = 3;
  t->col_names[0] = "blockwatch";
  t->col_names[1] = "OpenMP";
  t->col_names[2] = "oneTBB";
  t->rows = 4;
  for (size_t w = 0; w < 2; w++) {
    for (size_t s = 0; s < 2; s++)
      snprintf(t->row_names[w * 2 + s], sizeof t->row_names[0],
               "%zu iterations, %u workers", o->sizes[s], o->workers[w]);
    bw_pool *pool = pool_of(o->workers[w]);
    size_t prev = 3; /* the contender measured last: none yet */
    for (unsigned rep = 0; rep <= o->reps; rep++) { /* rep 0: warm-up */
      for (size_t s = 0; s < 2; s++) {
        size_t n = o->sizes[s], loops = n >= 100000 ? 20 : 20000;
        uint64_t want = expected_sum(n) * loops;
        for (size_t j = 0; j < 3; j++) {
          size_t k = (rep + j) % 3;
          uint64_t ns = 0, sum = 0;
          int rc;
          /* After OpenMP's sample, libgomp's threads spin for a while
           * before they park: the next contender waits them out rather
           * than share the CPUs with them. */
          bench_sleep_ms(prev == 1 ? 150 : 5);
          prev = k;
          if (k == 0)
            rc = pool != NULL ? bw_loops(pool, n, loops, &ns, &sum) : -errno;
          else if (k == 1)
            rc = omp_loops(o->workers[w], n, loops, &ns, &sum);
          else
            rc = bench_tbb_parallel_for(o->workers[w], n, loops, &ns, &sum);
          if (rc == 0 && sum != want)
            rc = -EPROTO;
          if (rc != 0 && rc != -ENOTSUP)
            fprintf(stderr, "bench: (e) %s: %s\n", t->col_names[k],
                    strerror(-rc));
          if (rep > 0 || rc != 0)
            table_add(t, w * 2 + s, k, rc, (double)ns / 1e3 / (double)loops);
        }
      }
    }
    if (pool != NULL)
      bw_pool_destroy(pool);
  }
}

static void section_fds(const options *o, table *t) {
  t->corner = "ns per descriptor";
  t->cols = 2;
  t->col_names[0] = "blockwatch";
  t->col_names[1] = "libuv";
  t->rows = 1;
  snprintf(t->row_names[0], sizeof t->row_names[0], "%zu pipes, one write each",
           o->pipes);
  pipes p;
  int open_rc = pipes_open(&p, o->pipes);
  bw_pool *pool = pool_of(2);
  for (unsigned rep = 0; rep <= o->reps; rep++) {
    for (size_t j = 0; j < 2; j++) {
      size_t k = (rep + j) % 2;
      uint64_t ns = 0;
      int rc = open_rc;
      bench_sleep_ms(5);
      if (rc == 0)
        rc = k == 0 ? (pool ? bw_fds(pool, &p, &ns) : -errno)
                    : uv_fds_run(&p, &ns);
      if (rc != 0 && rc != -ENOTSUP)
        fprintf(stderr, "bench: (f) %s: %s\n", t->col_names[k], strerror(-rc));
      if (rep > 0 || rc != 0)
        table_add(t, 0, k, rc, (double)ns / (double)o->pipes);
    }
  }
  if (pool != NULL)
    bw_pool_destroy(pool);
  pipes_close(&p);
}

static void print_section(const char *title, const table *t, const char *fmt) {
  printf("%s", title);
  table_print(t, 1.0, fmt);
  printf("    ratio to blockwatch (>1: blockwatch is faster)\n");
  table_print_ratio(t, 0);
  printf("\n");
}

static int failures(const table *t) {
  int count = 0;
  for (size_t r = 0; r < t->rows; r++)
    for (size_t c = 0; c < t->cols; c++)
      count += t->cells[r][c].rc != 0 && t->cells[r][c].rc != -ENOTSUP;
  return count;
}

int main(int argc, char **argv) {
  options o = {
      .reps = 9, .sizes = {100, 1000000}, .workers = {2, 4}, .pipes = 1000};
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) {
      o.reps = 2;
    } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      unsigned long v;
      if (bench_parse_count(argv[++i], 1, TABLE_MAX_SAMPLES - 1, &v) != 0) {
        fprintf(stderr, "bw_bench_offload: bad --reps '%s'\n", argv[i]);
        return 2;
      }
      o.reps = (unsigned)v;
    } else {
      fprintf(stderr, "usage: bw_bench_offload [--quick] [--reps N]\n");
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  static table te, tf;
  printf("blockwatch offload benchmark: medians of %u alternated runs, %ld "
         "CPUs\n\n",
         o.reps, sysconf(_SC_NPROCESSORS_ONLN));
  section_loops(&o, &te);
  section_fds(&o, &tf);
  print_section("(e) parallel loop over tiny iterations (blockwatch: "
                "bw_parallel_for, grain 0;\n    OpenMP: parallel for; oneTBB: "
                "parallel_for in a task_arena); us per loop\n",
                &te, "%.2f");
  print_section("(f) descriptor readiness, registration to last completion "
                "(blockwatch: bw_fd_ready\n    on a 2-worker pool; libuv: "
                "uv_poll on its loop, uv_close\n    after the clock); ns per "
                "descriptor\n",
                &tf, "%.1f");
  return failures(&te) + failures(&tf) ? 1 : 0;
}
