/* test_fd_ready.c - bw_fd_ready: a wait completes with the ready events,
 * a thousand pipes at once on one poller thread, timeouts and bw_task_cancel
 * end a wait canceled, a closed descriptor is an error at once, one pending
 * wait per descriptor, and pool destroy cancels what still waits.
 * Bounds are generous: the box is a noisy 2-core machine.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "blockwatch/runtime.h"
#include "rt_fixed_pool.h"
#include "rt_helpers.h"

static bw_pool *make_pool(unsigned workers) {
  return rt_fixed_pool("fdr", workers);
}

static void pipe_close(int p[2]) {
  close(p[0]);
  close(p[1]);
}

/* The fixture of most tests: a one-worker pool and a pipe. */
typedef struct pooled_pipe {
  bw_pool *pool;
  int p[2];
} pooled_pipe;

static int pooled_pipe_setup(void **state) {
  pooled_pipe *pp = calloc(1, sizeof(*pp));
  if (pp == NULL || pipe(pp->p) != 0)
    return -1;
  pp->pool = make_pool(1);
  *state = pp;
  return 0;
}

/* Closes what the test left open (it sets a closed end to -1). */
static int pooled_pipe_teardown(void **state) {
  pooled_pipe *pp = *state;
  for (int i = 0; i < 2; i++)
    if (pp->p[i] >= 0)
      close(pp->p[i]);
  int rc = bw_pool_destroy(pp->pool);
  free(pp);
  return rc;
}

static int revents_of(bw_task *t) {
  return (int)(intptr_t)bw_task_result(t);
}

/* Waits for t, which must complete; releases it, returns its events. */
static int completed_events(bw_task *t) {
  assert_non_null(t);
  assert_int_equal(bw_wait(t, 20000), 0);
  int revents = revents_of(t);
  bw_task_release(t);
  return revents;
}

/* A wait that must fail at once with errno `err`. */
static void expect_error(bw_pool *pool, int fd, int events, int err) {
  errno = 0;
  assert_null(bw_fd_ready(pool, fd, events, -1));
  assert_int_equal(errno, err);
}

/* The threads of this process, from /proc. */
static int thread_count(void) {
  FILE *f = fopen("/proc/self/status", "r");
  assert_non_null(f);
  char line[256];
  int n = -1;
  while (fgets(line, sizeof(line), f) != NULL)
    if (sscanf(line, "Threads: %d", &n) == 1)
      break;
  fclose(f);
  return n;
}

static void test_fd_ready_completes_with_the_ready_events(void **state) {
  pooled_pipe *pp = *state;
  bw_pool *pool = pp->pool;
  int *p = pp->p;
  bw_task *t = bw_fd_ready(pool, p[0], POLLIN, -1);
  assert_non_null(t);
  rt_sleep_ms(20);
  assert_int_equal(bw_task_state_get(t), BW_TASK_PENDING);
  assert_int_equal(write(p[1], "x", 1), 1);
  assert_int_equal(bw_wait(t, 20000), 0);
  assert_int_equal(revents_of(t), POLLIN);
  bw_task_release(t);

  /* The same descriptor again, once the first wait is over. */
  assert_int_equal(completed_events(bw_fd_ready(pool, p[0], POLLIN, -1)),
                   POLLIN);

  /* A pipe's write end is writable at once. */
  assert_int_equal(completed_events(bw_fd_ready(pool, p[1], POLLOUT, 10000)),
                   POLLOUT);

  /* The other end closed: POLLHUP (with the unread byte, POLLIN too). */
  char c;
  assert_int_equal(read(p[0], &c, 1), 1);
  t = bw_fd_ready(pool, p[0], POLLIN, -1);
  close(p[1]);
  p[1] = -1;
  assert_int_equal(bw_wait(t, 20000), 0);
  assert_true(revents_of(t) & POLLHUP);
  bw_task_release(t);
}

static void test_fd_ready_a_thousand_pipes_on_one_thread(void **state) {
  (void)state;
  enum { N = 1000 };
  struct rlimit rl;
  assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
  if (rl.rlim_cur < 2 * N + 64) {
    rl.rlim_cur = rl.rlim_max < 2 * N + 64 ? rl.rlim_max : 2 * N + 64;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  if (rl.rlim_cur < 2 * N + 64)
    skip();
  bw_pool *pool = make_pool(2);
  int threads_before = thread_count();
  static int fds[N][2];
  static bw_task *ts[N];
  for (int i = 0; i < N; i++) {
    assert_int_equal(pipe(fds[i]), 0);
    assert_non_null(ts[i] = bw_fd_ready(pool, fds[i][0], POLLIN, 60000));
  }
  /* One poller thread, whatever the number of descriptors. */
  assert_true(thread_count() <= threads_before + 1);
  for (int i = 0; i < N; i++)
    assert_int_equal(write(fds[i][1], "x", 1), 1);
  bw_task *all = bw_when_all(ts, N);
  assert_int_equal(bw_wait(all, 60000), 0);
  bw_task_release(all);
  for (int i = 0; i < N; i++) {
    assert_int_equal(revents_of(ts[i]), POLLIN);
    bw_task_release(ts[i]);
    pipe_close(fds[i]);
  }
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void test_fd_ready_times_out_canceled(void **state) {
  pooled_pipe *pp = *state;
  bw_pool *pool = pp->pool;
  int *p = pp->p;
  uint64_t t0 = rt_now_ms();
  bw_task *t = bw_fd_ready(pool, p[0], POLLIN, 50);
  assert_non_null(t);
  assert_int_equal(bw_wait(t, 20000), -ECANCELED);
  uint64_t took = rt_now_ms() - t0;
  assert_true(took >= 49);
  assert_true(took < 10000);
  assert_null(bw_task_result(t));
  assert_int_equal(bw_task_error(t), -ETIMEDOUT); /* why it was canceled */
  bw_task_release(t);

  /* A timed-out wait left nothing behind: the descriptor waits again. */
  t = bw_fd_ready(pool, p[0], POLLIN, 0);
  assert_int_equal(bw_wait(t, 20000), -ECANCELED);
  bw_task_release(t);
  t = bw_fd_ready(pool, p[0], POLLIN, 10000);
  assert_int_equal(write(p[1], "x", 1), 1);
  assert_int_equal(bw_wait(t, 20000), 0);
  bw_task_release(t);
}

static void test_fd_ready_bad_descriptors_fail_at_once(void **state) {
  pooled_pipe *pp = *state;
  bw_pool *pool = pp->pool;
  int closed[2];
  assert_int_equal(pipe(closed), 0);
  pipe_close(closed);
  expect_error(pool, closed[0], POLLIN, EBADF);
  expect_error(pool, -1, POLLIN, EBADF);
  expect_error(pool, 1 << 20, POLLIN, EBADF);
  expect_error(pool, 0, 0, EINVAL);

  /* A regular file is always ready, as poll() has it. */
  char path[] = "/tmp/bw_fd_ready_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  unlink(path);
  assert_int_equal(completed_events(bw_fd_ready(pool, fd, POLLIN, -1)), POLLIN);
  close(fd);
}

static void test_fd_ready_cancel_and_one_wait_per_descriptor(void **state) {
  pooled_pipe *pp = *state;
  bw_pool *pool = pp->pool;
  int *p = pp->p;
  bw_task *t = bw_fd_ready(pool, p[0], POLLIN, -1);
  assert_non_null(t);
  expect_error(pool, p[0], POLLIN, EBUSY);
  assert_int_equal(bw_task_cancel(t), 0);
  assert_int_equal(bw_wait(t, 0), -ECANCELED);
  bw_task_release(t);

  /* The canceled wait gives way to the next one on the descriptor. */
  t = bw_fd_ready(pool, p[0], POLLIN, -1);
  assert_int_equal(write(p[1], "x", 1), 1);
  assert_int_equal(completed_events(t), POLLIN);

  /* A canceled wait whose descriptor becomes ready later stays canceled. */
  char c;
  assert_int_equal(read(p[0], &c, 1), 1);
  t = bw_fd_ready(pool, p[0], POLLIN, 100);
  assert_int_equal(bw_task_cancel(t), 0);
  assert_int_equal(write(p[1], "x", 1), 1);
  rt_sleep_ms(150);
  assert_int_equal(bw_task_state_get(t), BW_TASK_CANCELED);
  assert_int_equal(bw_task_error(t), -ECANCELED);
  bw_task_release(t);
}

static void test_fd_ready_destroy_cancels_pending_waits(void **state) {
  (void)state;
  bw_pool *pool = make_pool(1);
  int p[2], q[2];
  assert_int_equal(pipe(p), 0);
  assert_int_equal(pipe(q), 0);
  bw_task *forever = bw_fd_ready(pool, p[0], POLLIN, -1);
  bw_task *timed = bw_fd_ready(pool, q[0], POLLIN, 600000);
  assert_non_null(forever);
  assert_non_null(timed);
  uint64_t t0 = rt_now_ms();
  assert_int_equal(bw_pool_destroy(pool), 0);
  assert_true(rt_now_ms() - t0 < 10000);
  assert_int_equal(bw_task_state_get(forever), BW_TASK_CANCELED);
  assert_int_equal(bw_task_state_get(timed), BW_TASK_CANCELED);
  assert_int_equal(bw_task_error(forever), -ESHUTDOWN);
  assert_int_equal(bw_task_error(timed), -ESHUTDOWN);
  bw_task_release(forever);
  bw_task_release(timed);
  pipe_close(p);
  close(q[0]);
  close(q[1]);
}

/* An item still running while destroy stops the poller and the blocking
 * threads: its later calls fail cleanly (and read nothing freed). */
typedef struct late_calls {
  int fd;
  int fd_errno, blocking_errno;
} late_calls;

static void *nothing(void *arg) {
  return arg;
}

static void call_late(void *arg) {
  late_calls *lc = arg;
  rt_sleep_ms(200); /* destroy is waiting for this item by now */
  errno = 0;
  if (bw_fd_ready(bw_current_pool(), lc->fd, POLLIN, -1) == NULL)
    lc->fd_errno = errno;
  errno = 0;
  if (bw_run_blocking(bw_current_pool(), nothing, NULL) == NULL)
    lc->blocking_errno = errno;
}

static void
test_fd_ready_destroy_refuses_calls_from_draining_items(void **state) {
  pooled_pipe *pp = *state;
  bw_pool *pool = make_pool(1);
  /* The poller and the blocking threads exist before destroy. */
  bw_task *first = bw_fd_ready(pool, pp->p[0], POLLIN, -1);
  bw_task *job = bw_run_blocking(pool, nothing, NULL);
  assert_int_equal(bw_wait(job, 20000), 0);
  late_calls lc = {pp->p[1], 0, 0};
  assert_int_equal(bw_submit(pool, call_late, &lc), 0);
  rt_sleep_ms(20);
  assert_int_equal(bw_pool_destroy(pool), 0);
  assert_int_equal(lc.fd_errno, ESHUTDOWN);
  assert_int_equal(lc.blocking_errno, ESHUTDOWN);
  assert_int_equal(bw_task_state_get(first), BW_TASK_CANCELED);
  bw_task_release(first);
  bw_task_release(job);
}

/* Waits started from workers while others complete: nothing lost. */
typedef struct churn {
  bw_pool *pool;
  int fds[2];
} churn;

static void *wait_one(void *arg) {
  churn *c = arg;
  return bw_fd_ready(c->pool, c->fds[0], POLLIN, 30000);
}

static void test_fd_ready_from_workers_nothing_lost(void **state) {
  (void)state;
  enum { N = 200 };
  bw_pool *pool = make_pool(2);
  static churn cs[N];
  static bw_task *runs[N];
  for (int i = 0; i < N; i++) {
    cs[i].pool = pool;
    assert_int_equal(pipe(cs[i].fds), 0);
    assert_int_equal(write(cs[i].fds[1], "x", 1), 1);
    runs[i] = bw_run(pool, wait_one, &cs[i]);
  }
  for (int i = 0; i < N; i++) {
    assert_int_equal(bw_wait(runs[i], 30000), 0);
    bw_task *t = bw_task_result(runs[i]);
    assert_non_null(t);
    assert_int_equal(bw_wait(t, 30000), 0);
    assert_int_equal(revents_of(t), POLLIN);
    bw_task_release(t);
    bw_task_release(runs[i]);
    pipe_close(cs[i].fds);
  }
  assert_int_equal(bw_pool_destroy(pool), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(
          test_fd_ready_completes_with_the_ready_events, pooled_pipe_setup,
          pooled_pipe_teardown),
      cmocka_unit_test(test_fd_ready_a_thousand_pipes_on_one_thread),
      cmocka_unit_test_setup_teardown(test_fd_ready_times_out_canceled,
                                      pooled_pipe_setup, pooled_pipe_teardown),
      cmocka_unit_test_setup_teardown(
          test_fd_ready_bad_descriptors_fail_at_once, pooled_pipe_setup,
          pooled_pipe_teardown),
      cmocka_unit_test_setup_teardown(
          test_fd_ready_cancel_and_one_wait_per_descriptor, pooled_pipe_setup,
          pooled_pipe_teardown),
      cmocka_unit_test(test_fd_ready_destroy_cancels_pending_waits),
      cmocka_unit_test_setup_teardown(
          test_fd_ready_destroy_refuses_calls_from_draining_items,
          pooled_pipe_setup, pooled_pipe_teardown),
      cmocka_unit_test(test_fd_ready_from_workers_nothing_lost),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
