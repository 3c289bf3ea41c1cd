/* glib_threads_target - GLib and GIO programs that block nowhere but in
 * GLib's own threads, for the pool-thread tests (test_pool_threads.c).
 *
 * Invariants: "pool" pushes ITEMS computing items onto a GThreadPool (not
 * exclusive: its threads come from the pool-spawner); "task" runs ITEMS
 * computing g_task_run_in_thread tasks (GIO's pool; GIO's callbacks come
 * back through GLib's worker thread, "gmain") under a main loop; "own"
 * starts a thread of its own with g_thread_new that makes one blocking
 * call (usleep), joins it, and runs the "pool" items too. Each prints
 * "done N" and exits 0 when every item ran.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <gio/gio.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define ITEMS 8

static gint done;
static gulong sink; /* atomic: items run on several threads */

static void compute(void) {
  gulong v = 0;
  for (gulong i = 0; i < 100000; i++)
    v += i * i;
  __atomic_store_n(&sink, v, __ATOMIC_RELAXED);
  g_atomic_int_inc(&done);
}

static void item(gpointer data, gpointer user_data) {
  (void)data;
  (void)user_data;
  compute();
}

static void run_pool(void) {
  GThreadPool *pool = g_thread_pool_new(item, NULL, 2, FALSE, NULL);
  for (int i = 0; i < ITEMS; i++)
    g_thread_pool_push(pool, GINT_TO_POINTER(i + 1), NULL);
  g_thread_pool_free(pool, FALSE, TRUE);
}

static void task_body(GTask *task, gpointer source, gpointer data,
                      GCancellable *cancel) {
  (void)source;
  (void)data;
  (void)cancel;
  compute();
  g_task_return_boolean(task, TRUE);
}

static void task_done(GObject *source, GAsyncResult *res, gpointer loop) {
  (void)source;
  (void)res;
  static int finished;
  if (++finished == ITEMS)
    g_main_loop_quit(loop);
}

static gpointer own_thread(gpointer data) {
  (void)data;
  usleep(20 * 1000);
  return NULL;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "pool";
  if (strcmp(mode, "task") == 0) {
    GMainLoop *loop = g_main_loop_new(NULL, FALSE);
    for (int i = 0; i < ITEMS; i++) {
      GTask *task = g_task_new(NULL, NULL, task_done, loop);
      g_task_run_in_thread(task, task_body);
      g_object_unref(task);
    }
    g_main_loop_run(loop);
    g_main_loop_unref(loop);
  } else if (strcmp(mode, "own") == 0) {
    GThread *t = g_thread_new("own", own_thread, NULL);
    run_pool();
    g_thread_join(t);
  } else {
    run_pool();
  }
  printf("done %d\n", g_atomic_int_get(&done));
  return g_atomic_int_get(&done) == ITEMS ? 0 : 1;
}
