/* test_stress.c - millions of items from several submitting threads, half of
 * them fanning out from inside the pool (local deques, stealing); every item
 * must run exactly once. Also a task/continuation/wait stress.
 *
 * BW_STRESS_ITEMS (default 2,000,000) scales it; the sanitizer builds set it
 * lower so the binary stays well under a minute under TSan on 2 cores.
 * BW_STRESS_OBSERVER runs it all with an observer registered: "null" (every
 * callback NULL: must cost next to nothing; docs/runtime.md has the
 * timings) or "items" (item callbacks that count: every item is
 * seen started and finished exactly once). BW_STRESS_ONLY=<pattern> runs
 * only the tests whose names match (for timing one of them).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "blockwatch/observer.h"
#include "blockwatch/runtime.h"
#include "rt_helpers.h"

#define SUBMITTERS 4

static long stress_items(void) {
  const char *s = getenv("BW_STRESS_ITEMS");
  if (s == NULL || *s == '\0')
    return 2000000;
  char *end = NULL;
  long v = strtol(s, &end, 10);
  if (*end != '\0' || v < SUBMITTERS * 2) {
    fprintf(stderr, "test_stress: ignoring BW_STRESS_ITEMS=\"%s\"\n", s);
    return 2000000;
  }
  return v;
}

/* ---- the optional observer ---------------------------------------------- */

static atomic_long g_obs_started, g_obs_finished;
static int g_obs_items; /* "items" mode: the counters are meaningful */

static void obs_started(void *user, uint64_t pool_id, uint64_t item_id,
                        uint64_t enqueue_ns, uint64_t start_ns) {
  (void)user;
  (void)pool_id;
  (void)enqueue_ns;
  (void)start_ns;
  if (item_id != 0)
    atomic_fetch_add_explicit(&g_obs_started, 1, memory_order_relaxed);
}

static void obs_finished(void *user, uint64_t pool_id, uint64_t item_id,
                         uint64_t end_ns) {
  (void)user;
  (void)pool_id;
  (void)end_ns;
  if (item_id != 0)
    atomic_fetch_add_explicit(&g_obs_finished, 1, memory_order_relaxed);
}

/* Registers the observer BW_STRESS_OBSERVER asks for; 0 = ok. */
static int register_observer(void) {
  const char *mode = getenv("BW_STRESS_OBSERVER");
  if (mode == NULL || *mode == '\0')
    return 0;
  bw_observer o = {.version = BW_OBSERVER_VERSION, .size = sizeof(o)};
  if (strcmp(mode, "items") == 0) {
    o.item_started = obs_started;
    o.item_finished = obs_finished;
    g_obs_items = 1;
  } else if (strcmp(mode, "null") != 0) {
    fprintf(stderr, "test_stress: unknown BW_STRESS_OBSERVER=\"%s\"\n", mode);
    return -1;
  }
  return bw_observer_register(&o);
}

typedef struct stress {
  bw_pool *pool;
  long n;               /* items in all */
  atomic_uchar *runs;   /* runs[i]: how many times item i ran */
  atomic_long ran;      /* items run */
  atomic_long failures; /* submit errors */
} stress;

/* Item ids are packed into the arg with the context kept global: a pointer
 * per item would cost more memory than the test is worth. */
static stress *g_stress;

static void leaf(void *arg) {
  long id = (long)(intptr_t)arg;
  atomic_fetch_add_explicit(&g_stress->runs[id], 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&g_stress->ran, 1, memory_order_relaxed);
}

/* An odd id fans out: it queues id+1 from inside the pool, then runs. */
static void fan(void *arg) {
  long id = (long)(intptr_t)arg;
  if (bw_submit(g_stress->pool, leaf, (void *)(intptr_t)(id + 1)) != 0)
    atomic_fetch_add(&g_stress->failures, 1);
  leaf(arg);
}

typedef struct submitter {
  long first, last; /* ids [first, last), first even */
} submitter;

static void *submit_range(void *arg) {
  submitter *s = arg;
  for (long id = s->first; id < s->last; id += 2) {
    int rc;
    if (id + 1 < s->last)
      rc = bw_submit(g_stress->pool, fan, (void *)(intptr_t)id);
    else
      rc = bw_submit(g_stress->pool, leaf, (void *)(intptr_t)id);
    if (rc != 0)
      atomic_fetch_add(&g_stress->failures, 1);
  }
  return NULL;
}

static void test_stress_every_item_runs_exactly_once(void **state) {
  (void)state;
  stress st = {.n = stress_items()};
  st.runs = calloc((size_t)st.n, sizeof(*st.runs));
  assert_non_null(st.runs);
  atomic_init(&st.ran, 0);
  atomic_init(&st.failures, 0);
  bw_pool_config cfg = {0};
  cfg.name = "stress";
  cfg.min_workers = 3;
  cfg.max_workers = 3;
  long obs_before = atomic_load(&g_obs_started);
  st.pool = bw_pool_create(&cfg);
  assert_non_null(st.pool);
  g_stress = &st;

  pthread_t th[SUBMITTERS];
  submitter sub[SUBMITTERS];
  long per = (st.n / SUBMITTERS) & ~1L;
  for (int i = 0; i < SUBMITTERS; i++) {
    sub[i].first = per * i;
    sub[i].last = i == SUBMITTERS - 1 ? st.n : per * (i + 1);
    assert_int_equal(pthread_create(&th[i], NULL, submit_range, &sub[i]), 0);
  }
  for (int i = 0; i < SUBMITTERS; i++)
    pthread_join(th[i], NULL);
  assert_int_equal(bw_pool_destroy(st.pool), 0);

  if (g_obs_items) {
    /* Destroy ran everything: each item was seen once, start and finish. */
    assert_int_equal(atomic_load(&g_obs_started), atomic_load(&g_obs_finished));
    assert_int_equal(atomic_load(&g_obs_started) - obs_before, st.n);
  }
  assert_int_equal(atomic_load(&st.failures), 0);
  assert_int_equal(atomic_load(&st.ran), st.n);
  long bad = 0;
  for (long i = 0; i < st.n; i++) {
    if (atomic_load_explicit(&st.runs[i], memory_order_relaxed) != 1)
      bad++;
  }
  assert_int_equal(bad, 0);
  free(st.runs);
  g_stress = NULL;
}

static void *inc(bw_task *done, void *arg) {
  (void)arg;
  return (void *)((uintptr_t)bw_task_result(done) + 1);
}

static void *one(void *arg) {
  (void)arg;
  return (void *)(uintptr_t)1;
}

typedef struct task_stress {
  bw_pool *pool;
  long chains;
  atomic_long wrong;
} task_stress;

/* Each chain: run -> 9 continuations, waited on from this thread. */
static void *task_submitter(void *arg) {
  task_stress *ts = arg;
  for (long c = 0; c < ts->chains; c++) {
    bw_task *t = bw_run(ts->pool, one, NULL);
    for (int k = 0; k < 9; k++) {
      bw_task *next = bw_then(t, inc, NULL);
      bw_task_release(t);
      t = next;
    }
    if (bw_wait(t, -1) != 0 || (uintptr_t)bw_task_result(t) != 10)
      atomic_fetch_add(&ts->wrong, 1);
    bw_task_release(t);
  }
  return NULL;
}

static void test_stress_task_chains_from_many_threads(void **state) {
  (void)state;
  bw_pool_config cfg = {0};
  cfg.name = "tstress";
  cfg.min_workers = 2;
  task_stress ts = {.pool = bw_pool_create(&cfg),
                    .chains = stress_items() / 200};
  atomic_init(&ts.wrong, 0);
  assert_non_null(ts.pool);
  pthread_t th[SUBMITTERS];
  for (int i = 0; i < SUBMITTERS; i++)
    assert_int_equal(pthread_create(&th[i], NULL, task_submitter, &ts), 0);
  for (int i = 0; i < SUBMITTERS; i++)
    pthread_join(th[i], NULL);
  assert_int_equal(atomic_load(&ts.wrong), 0);
  assert_int_equal(bw_pool_destroy(ts.pool), 0);
}

/* ---- a mix of every task operation from several threads ---------------- */

static bw_pool *g_mix_pool;

static void *mix_one(void *arg) {
  (void)arg;
  return (void *)(uintptr_t)1;
}

static void *mix_cont(bw_task *done, void *arg) {
  (void)arg;
  return bw_task_result(done);
}

static void mix_complete(void *arg) {
  bw_task *t = arg;
  bw_task_complete(t, NULL);
  bw_task_release(t);
}

static void mix_cancel_token(void *arg) {
  bw_cancel_token *tok = arg;
  bw_cancel_token_cancel(tok);
  bw_cancel_token_release(tok);
}

static void *mix_wait_in_pool(void *arg) {
  bw_task *t = arg;
  bw_wait(t, 5);
  bw_task_release(t);
  return NULL;
}

typedef struct mix_thread {
  unsigned seed;
  long rounds;
  long bad;
} mix_thread;

/* Each round: four antecedents of mixed kinds (run, cancelable delay,
 * source completed by an item, canceled source), then a continuation,
 * when_all, when_any, a wait from inside the pool, maybe a token cancel
 * from the pool, waits from here, and fire-and-forget tasks released while
 * pending. Sanitizers do most of the checking. */
static void *mix_thread_main(void *arg) {
  mix_thread *mt = arg;
  bw_pool *pool = g_mix_pool;
  for (long i = 0; i < mt->rounds; i++) {
    bw_task *ts[4];
    bw_cancel_token *tok = bw_cancel_token_create();
    unsigned kind = (unsigned)rand_r(&mt->seed) % 4u;
    for (unsigned k = 0; k < 4; k++) {
      switch ((kind + k) % 4u) {
      case 0:
        ts[k] = bw_run(pool, mix_one, NULL);
        break;
      case 1:
        ts[k] =
            bw_delay_cancelable(pool, (uint64_t)(rand_r(&mt->seed) % 3), tok);
        break;
      case 2:
        ts[k] = bw_completion_create(pool);
        bw_submit(pool, mix_complete, bw_task_retain(ts[k]));
        break;
      default:
        ts[k] = bw_completion_create(pool);
        bw_task_cancel(ts[k]);
        break;
      }
    }
    bw_task *c = bw_then(ts[0], mix_cont, NULL);
    bw_task *all = bw_when_all(ts, 4);
    bw_task *any = bw_when_any(ts, 4);
    bw_task *w = bw_run(pool, mix_wait_in_pool, bw_task_retain(ts[1]));
    if (rand_r(&mt->seed) % 2)
      bw_submit(pool, mix_cancel_token, bw_cancel_token_retain(tok));
    int rc = bw_wait_cancelable(all, rand_r(&mt->seed) % 3, tok);
    if (rc != 0 && rc != -ETIMEDOUT && rc != -ECANCELED)
      mt->bad++;
    if (bw_wait(any, -1) != 0 || bw_wait(c, -1) != 0 || bw_wait(w, -1) != 0)
      mt->bad++;
    bw_cancel_token_release(tok);
    for (int k = 0; k < 4; k++)
      bw_task_release(ts[k]);
    bw_task_release(c);
    bw_task_release(all);
    bw_task_release(any);
    bw_task_release(w);

    bw_task *d = bw_delay(pool, (uint64_t)(rand_r(&mt->seed) % 4));
    bw_task *dc = bw_then(d, mix_cont, NULL);
    bw_task_release(d);
    bw_task_release(dc);
  }
  return NULL;
}

static void test_stress_mixed_task_operations(void **state) {
  (void)state;
  bw_pool_config cfg = {0};
  cfg.name = "mix";
  cfg.min_workers = 3;
  cfg.max_workers = 8;
  cfg.flags = BW_POOL_COMPENSATE;
  g_mix_pool = bw_pool_create(&cfg);
  assert_non_null(g_mix_pool);
  long rounds = stress_items() / 1000;
  mix_thread mt[3];
  pthread_t th[3];
  for (int i = 0; i < 3; i++) {
    mt[i] = (mix_thread){.seed = (unsigned)i + 1, .rounds = rounds, .bad = 0};
    assert_int_equal(pthread_create(&th[i], NULL, mix_thread_main, &mt[i]), 0);
  }
  for (int i = 0; i < 3; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(mt[i].bad, 0);
  }
  assert_int_equal(bw_pool_destroy(g_mix_pool), 0);
}

int main(void) {
  if (register_observer() != 0)
    return 1;
  /* BW_STRESS_ONLY=<pattern> runs only the matching tests (timing runs). */
  const char *only = getenv("BW_STRESS_ONLY");
  if (only != NULL && *only != '\0')
    cmocka_set_test_filter(only);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stress_every_item_runs_exactly_once),
      cmocka_unit_test(test_stress_task_chains_from_many_threads),
      cmocka_unit_test(test_stress_mixed_task_operations),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
