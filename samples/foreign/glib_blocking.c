/* glib_blocking - the two ways to block with GLib (the `glib` rule pack).
 *
 * What it shows: g_thread_pool_push hands data to the pool's func on one of
 * its threads, so a func that sleeps holds that thread; g_timeout_add runs
 * its callback on the main loop, so one that sleeps stalls the loop. A
 * 10 ms heartbeat timeout measures the stall.
 *
 * What to expect: 8 sleeping items of 100 ms take about 400 ms on a 2-thread
 * pool; the heartbeat's worst lateness is about 140 ms (the 150 ms the
 * timeout slept, less one period). Two blocking calls: g_usleep in
 * sleepy_func and in blocking_timeout; heartbeat and check_done block none.
 */
#include <glib.h>
#include <stdio.h>

#define ITEMS 8

static gint items_done;
static gint64 last_beat_us, worst_late_us;

/* On a GThreadPool thread: holds it for 100 ms. */
static void sleepy_func(gpointer data, gpointer user_data) {
  (void)data;
  (void)user_data;
  g_usleep(100 * 1000);
  g_atomic_int_inc(&items_done);
}

/* On the main loop: nothing else on it runs for 150 ms. */
static gboolean blocking_timeout(gpointer data) {
  (void)data;
  g_usleep(150 * 1000);
  return G_SOURCE_REMOVE;
}

/* Every 10 ms on the main loop: how late is this tick? */
static gboolean heartbeat(gpointer data) {
  (void)data;
  gint64 now = g_get_monotonic_time();
  if (last_beat_us != 0 && now - last_beat_us - 10000 > worst_late_us)
    worst_late_us = now - last_beat_us - 10000;
  last_beat_us = now;
  return G_SOURCE_CONTINUE;
}

static gboolean check_done(gpointer data) {
  if (g_atomic_int_get(&items_done) < ITEMS)
    return G_SOURCE_CONTINUE;
  g_main_loop_quit(data);
  return G_SOURCE_REMOVE;
}

int main(void) {
  GMainLoop *loop = g_main_loop_new(NULL, FALSE);
  GThreadPool *pool = g_thread_pool_new(sleepy_func, NULL, 2, FALSE, NULL);
  gint64 t0 = g_get_monotonic_time();
  guint beat = g_timeout_add(10, heartbeat, NULL);
  g_timeout_add(30, blocking_timeout, NULL);
  g_timeout_add(5, check_done, loop);
  for (int i = 0; i < ITEMS; i++)
    g_thread_pool_push(pool, GINT_TO_POINTER(i + 1), NULL);
  g_main_loop_run(loop);
  printf("g_thread_pool_push: %d x g_usleep(100 ms) in %.1f ms\n", ITEMS,
         (double)(g_get_monotonic_time() - t0) / 1e3);
  printf("main loop heartbeat (10 ms): worst lateness %.1f ms\n",
         (double)worst_late_us / 1e3);
  g_source_remove(beat);
  g_thread_pool_free(pool, FALSE, TRUE);
  g_main_loop_unref(loop);
  return 0;
}
