/* loops_target.c - programs for the shim's loop tests.
 *
 *   loops_target glib-waits      GLib's own waits on a named worker
 *
 * Invariants: prints "waits N" on stdout and exits 0; nothing else is
 * written.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
  fprintf(stderr, "usage: loops_target glib-waits\n");
  return 2;
}
