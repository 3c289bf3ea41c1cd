/* section_handoff.c - (h) wake-up hand-offs: a semaphore or auto-reset
 * event released in one task completes the acquire that another task left
 * pending, whose continuation runs next, against two threads handing a
 * turn to each other with pthread_cond_signal. Both ping-pong, so a sample
 * is the time of `chain_links` hand-offs; the table prints ns per hand-off.
 *
 * Invariants: pools, primitives and threads are made before and freed
 * after the clock; the contenders alternate within every repetition (the
 * first repetition is a warm-up whose samples are dropped); column 0 is
 * blockwatch, column 1 the pthread hand-off measured in the same run.
 */
#include "sections.h"

#include "bench.h"

#include <blockwatch/runtime.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

enum { ROW_SEMAPHORE, ROW_EVENT, ROWS };

/* ---- blockwatch: two tasks that wake each other ------------------------- */

typedef struct side side;
typedef struct pingpong {
  int event;        /* the row: auto-reset events or semaphores */
  atomic_long left; /* hand-offs still to make */
  bench_latch *done;
} pingpong;

struct side {
  pingpong *game;
  bw_semaphore *sem;
  bw_event *ev;
  side *other;
};

static void *woken(bw_task *done, void *arg);

/* Leaves a pending acquire whose continuation is `woken`. */
static void wait_turn(side *s) {
  bw_task *t = s->game->event ? bw_event_wait(s->ev, NULL)
                              : bw_semaphore_acquire(s->sem, NULL);
  bw_task_release(bw_then_consume(t, woken, s));
}

static void give_turn(side *s) {
  if (s->game->event)
    bw_event_set(s->ev);
  else
    bw_semaphore_release(s->sem, 1);
}

static void *woken(bw_task *done, void *arg) {
  side *s = arg;
  if (bw_task_error(done) != 0) /* destroyed at the end of a sample */
    return NULL;
  if (atomic_fetch_sub_explicit(&s->game->left, 1, memory_order_relaxed) == 1) {
    bench_latch_open(s->game->done);
    return NULL;
  }
  wait_turn(s);
  give_turn(s->other);
  return NULL;
}

static void *start_sides(void *arg) {
  side *sides = arg;
  wait_turn(&sides[0]);
  wait_turn(&sides[1]);
  return NULL;
}

static int bw_handoffs(bw_pool *pool, int event, size_t n, uint64_t *ns) {
  pingpong game = {.event = event, .done = bench_latch_create()};
  atomic_init(&game.left, (long)n);
  side sides[2] = {{.game = &game}, {.game = &game}};
  int rc = game.done != NULL ? 0 : -ENOMEM;
  for (int i = 0; i < 2 && rc == 0; i++) {
    sides[i].other = &sides[1 - i];
    sides[i].sem = event ? NULL : bw_semaphore_create(0);
    sides[i].ev = event ? bw_event_create(0) : NULL;
    if (sides[i].sem == NULL && sides[i].ev == NULL)
      rc = -ENOMEM;
  }
  bw_task *start = rc == 0 ? bw_run(pool, start_sides, sides) : NULL;
  if (start != NULL && bw_wait(start, -1) == 0) {
    uint64_t t0 = bench_now_ns();
    give_turn(&sides[0]);
    bench_latch_wait(game.done);
    *ns = bench_now_ns() - t0;
  } else if (rc == 0) {
    rc = -EIO;
  }
  bw_task_release(start);
  for (int i = 0; i < 2; i++) {
    if (sides[i].sem != NULL)
      bw_semaphore_destroy(sides[i].sem);
    if (sides[i].ev != NULL)
      bw_event_destroy(sides[i].ev);
  }
  /* The pending acquire left over ended with -ESHUTDOWN; its
   * continuation touches nothing of this frame. */
  if (game.done != NULL)
    bench_latch_destroy(game.done);
  return rc;
}

/* ---- two threads and a condition variable ------------------------------- */

typedef struct turns {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int turn;    /* whose turn: 0 or 1 */
  long left;   /* hand-offs still to make, under mu */
  int started; /* threads ready, under mu */
} turns;

typedef struct player {
  turns *game;
  int me;
} player;

static void *play(void *arg) {
  player *p = arg;
  turns *g = p->game;
  pthread_mutex_lock(&g->mu);
  g->started++;
  pthread_cond_broadcast(&g->cv);
  for (;;) {
    while (g->turn != p->me && g->left > 0)
      pthread_cond_wait(&g->cv, &g->mu);
    if (g->left <= 0)
      break;
    g->left--;
    g->turn = 1 - p->me;
    pthread_cond_signal(&g->cv);
  }
  pthread_cond_broadcast(&g->cv);
  pthread_mutex_unlock(&g->mu);
  return NULL;
}

static int cond_handoffs(size_t n, uint64_t *ns) {
  turns g = {.turn = -1, .left = (long)n};
  pthread_mutex_init(&g.mu, NULL);
  pthread_cond_init(&g.cv, NULL);
  player players[2] = {{&g, 0}, {&g, 1}};
  pthread_t threads[2];
  int made = 0;
  while (made < 2 &&
         pthread_create(&threads[made], NULL, play, &players[made]) == 0)
    made++;
  pthread_mutex_lock(&g.mu);
  while (g.started < made)
    pthread_cond_wait(&g.cv, &g.mu);
  pthread_mutex_unlock(&g.mu);
  bench_sleep_ms(1); /* both park in their wait */
  uint64_t t0 = bench_now_ns();
  pthread_mutex_lock(&g.mu);
  g.turn = made == 2 ? 0 : -1;
  if (made < 2)
    g.left = 0;
  pthread_cond_broadcast(&g.cv);
  pthread_mutex_unlock(&g.mu);
  for (int i = 0; i < made; i++)
    pthread_join(threads[i], NULL);
  *ns = bench_now_ns() - t0;
  pthread_cond_destroy(&g.cv);
  pthread_mutex_destroy(&g.mu);
  return made == 2 ? 0 : -EAGAIN;
}

void bench_section_handoff(const bench_options *o, table *t) {
  unsigned workers = o->workers[0];
  size_t n = o->chain_links;
  t->corner = "ns per hand-off";
  t->rows = ROWS;
  t->cols = 2;
  t->col_names[0] = "blockwatch";
  t->col_names[1] = "pthread_cond";
  snprintf(t->row_names[ROW_SEMAPHORE], sizeof t->row_names[0],
           "semaphore, %u workers", workers);
  snprintf(t->row_names[ROW_EVENT], sizeof t->row_names[0],
           "auto-reset event, %u workers", workers);
  fprintf(stderr, "bench: (h) hand-offs on %u workers\n", workers);
  bw_pool_config cfg = {
      .name = "bench-h", .min_workers = workers, .max_workers = workers};
  bw_pool *pool = bw_pool_create(&cfg);
  for (unsigned rep = 0; rep <= o->reps; rep++) { /* rep 0: warm-up */
    for (size_t row = 0; row < ROWS; row++) {
      for (size_t j = 0; j < 2; j++) {
        size_t col = (rep + row + j) % 2;
        uint64_t ns = 0;
        int rc = -ENOMEM;
        bench_sleep_ms(o->settle_ms);
        if (col == 1)
          rc = cond_handoffs(n, &ns);
        else if (pool != NULL)
          rc = bw_handoffs(pool, row == ROW_EVENT, n, &ns);
        if (rc != 0)
          fprintf(stderr, "bench: (h) %s failed: %s\n", t->col_names[col],
                  bw_strerror(rc));
        if (rep > 0 || rc != 0)
          table_add(t, row, col, rc, (double)ns / (double)n);
      }
    }
  }
  if (pool != NULL)
    bw_pool_destroy(pool);
}

void bench_print_handoff(const bench_options *o, const table *t) {
  printf("(h) wake-up hand-off, a ping-pong of %zu: blockwatch releases a "
         "semaphore (sets an\n    auto-reset event) in one task, and the "
         "pending acquire's continuation runs as\n    another; "
         "pthread_cond: two threads hand a turn over with "
         "pthread_cond_signal\n",
         o->chain_links);
  table_print(t, 1.0, "%.1f");
  printf("    ratio to blockwatch (>1: blockwatch is faster)\n");
  table_print_ratio(t, 0);
  putchar('\n');
}
