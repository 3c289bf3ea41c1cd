/* uv_blocking - the two ways to block with libuv (the `libuv` rule pack).
 *
 * What it shows: uv_queue_work runs work_cb on libuv's small threadpool (4
 * threads by default), so a work_cb that sleeps holds one of them; a timer
 * callback runs on the loop thread, so one that sleeps stalls every other
 * callback of the loop. A 10 ms heartbeat timer measures the stall.
 *
 * What to expect: 8 sleeping work items of 100 ms take about 200 ms on the
 * 4 pool threads; the heartbeat's worst lateness is about 140 ms (the 150 ms
 * the timer slept, less one period). Two blocking calls: uv_sleep in
 * sleepy_work and usleep in blocking_timer_cb; the other callbacks block none.
 */
#include <stdio.h>
#include <unistd.h>
#include <uv.h>

#define WORK_ITEMS 8

static uv_timer_t heartbeat, blocker;
static uv_work_t work[WORK_ITEMS];
static int works_done;
static uint64_t last_beat_ms, worst_late_ms;

/* On a libuv threadpool thread: holds it for 100 ms. */
static void sleepy_work(uv_work_t *req) {
  (void)req;
  uv_sleep(100);
}

/* Back on the loop thread. */
static void after_work_cb(uv_work_t *req, int status) {
  (void)req;
  (void)status;
  if (++works_done == WORK_ITEMS) {
    uv_timer_stop(&heartbeat);
  }
}

/* Every 10 ms on the loop: how late is this tick? */
static void heartbeat_cb(uv_timer_t *timer) {
  uint64_t now = uv_now(timer->loop);
  if (last_beat_ms != 0 && now - last_beat_ms > 10 &&
      now - last_beat_ms - 10 > worst_late_ms)
    worst_late_ms = now - last_beat_ms - 10;
  last_beat_ms = now;
}

/* On the loop thread: nothing else on the loop runs for 150 ms. */
static void blocking_timer_cb(uv_timer_t *timer) {
  (void)timer;
  usleep(150 * 1000);
}

int main(void) {
  uv_loop_t *loop = uv_default_loop();
  uint64_t t0 = uv_hrtime();
  uv_timer_init(loop, &heartbeat);
  uv_timer_start(&heartbeat, heartbeat_cb, 10, 10);
  uv_timer_init(loop, &blocker);
  uv_timer_start(&blocker, blocking_timer_cb, 30, 0);
  for (int i = 0; i < WORK_ITEMS; i++)
    uv_queue_work(loop, &work[i], sleepy_work, after_work_cb);
  uv_run(loop, UV_RUN_DEFAULT);
  double elapsed_ms = (double)(uv_hrtime() - t0) / 1e6;
  printf("uv_queue_work: %d x uv_sleep(100) in %.1f ms\n", WORK_ITEMS,
         elapsed_ms);
  printf("loop heartbeat (10 ms): worst lateness %llu ms\n",
         (unsigned long long)worst_late_ms);
  uv_close((uv_handle_t *)&heartbeat, NULL);
  uv_close((uv_handle_t *)&blocker, NULL);
  uv_run(loop, UV_RUN_DEFAULT);
  return uv_loop_close(loop) == 0 ? 0 : 1;
}
