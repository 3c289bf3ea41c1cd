/* loops_target.c - event loops for the shim's loop tests: a libuv, a GLib
 * and a libevent loop on the main thread, each running a timer whose
 * callback sleeps 100 ms ("block") or does nothing ("idle"), three times,
 * 150 ms apart, so that the loop waits in its own poll between them.
 *
 *   loops_target uv|glib|event block|idle
 *   loops_target glib-waits      GLib's own waits on a named worker
 *
 * Invariants: prints "callbacks N" (and for glib-waits "waits N") on stdout
 * and exits 0; nothing else is written.
 */
#include <event2/event.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

enum { RUNS = 3, PERIOD_MS = 150, SLEEP_US = 100000 };

static int blocking;
static int callbacks;

/* One timer callback's work: a 100 ms sleep when the mode is "block". */
static void work(void) {
  callbacks++;
  if (blocking)
    usleep(SLEEP_US);
}

static void on_uv_timer(uv_timer_t *t) {
  work();
  if (callbacks == RUNS)
    uv_timer_stop(t);
}

static int run_uv(void) {
  uv_loop_t loop;
  uv_timer_t timer;
  uv_loop_init(&loop);
  uv_timer_init(&loop, &timer);
  uv_timer_start(&timer, on_uv_timer, PERIOD_MS, PERIOD_MS);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_close((uv_handle_t *)&timer, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  return uv_loop_close(&loop);
}

static gboolean on_glib_timeout(gpointer data) {
  work();
  if (callbacks < RUNS)
    return G_SOURCE_CONTINUE;
  g_main_loop_quit(data);
  return G_SOURCE_REMOVE;
}

static int run_glib(void) {
  GMainLoop *loop = g_main_loop_new(NULL, FALSE);
  g_timeout_add(PERIOD_MS, on_glib_timeout, loop);
  g_main_loop_run(loop);
  g_main_loop_unref(loop);
  return 0;
}

static void on_event_timer(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  work();
  if (callbacks == RUNS)
    event_base_loopbreak(arg);
}

static int run_event(void) {
  struct event_base *base = event_base_new();
  struct event *ev = event_new(base, -1, EV_PERSIST, on_event_timer, base);
  struct timeval period = {0, PERIOD_MS * 1000};
  event_add(ev, &period);
  event_base_dispatch(base);
  event_free(ev);
  event_base_free(base);
  return 0;
}

/* ---- GLib's own waits, on a thread the test names as a worker -------- */

static gpointer sleeper(gpointer data) {
  (void)data;
  usleep(50000);
  return NULL;
}

/* Held by the main thread for the waiter's first 50 ms. */
static GMutex held;

/* One g_mutex_lock of a held mutex, one g_cond_wait_until that times out,
 * one g_async_queue_timeout_pop that finds nothing, one g_thread_join of a
 * thread that sleeps: each a 50 ms wait. */
static gpointer waiter(gpointer data) {
  int *waits = data;
  g_mutex_lock(&held);
  g_mutex_unlock(&held);
  (*waits)++;
  GMutex mutex;
  GCond cond;
  g_mutex_init(&mutex);
  g_cond_init(&cond);
  g_mutex_lock(&mutex);
  gint64 end = g_get_monotonic_time() + 50 * G_TIME_SPAN_MILLISECOND;
  if (!g_cond_wait_until(&cond, &mutex, end))
    (*waits)++;
  g_mutex_unlock(&mutex);
  g_cond_clear(&cond);
  g_mutex_clear(&mutex);
  GAsyncQueue *q = g_async_queue_new();
  if (!g_async_queue_timeout_pop(q, 50000))
    (*waits)++;
  g_async_queue_unref(q);
  GThread *t = g_thread_new("bwsleeper", sleeper, NULL);
  g_thread_join(t);
  (*waits)++;
  return NULL;
}

static int run_glib_waits(void) {
  int waits = 0;
  g_mutex_lock(&held);
  GThread *t = g_thread_new("bwworker", waiter, &waits);
  usleep(50000);
  g_mutex_unlock(&held);
  g_thread_join(t);
  printf("waits %d\n", waits);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "glib-waits") == 0)
    return run_glib_waits();
  if (argc != 3) {
    fprintf(stderr, "usage: loops_target uv|glib|event block|idle\n");
    return 2;
  }
  blocking = strcmp(argv[2], "block") == 0;
  int rc = strcmp(argv[1], "uv") == 0     ? run_uv()
           : strcmp(argv[1], "glib") == 0 ? run_glib()
                                          : run_event();
  printf("callbacks %d\n", callbacks);
  return rc == 0 ? 0 : 1;
}
