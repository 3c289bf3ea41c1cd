/* glib_starve_target - GLib's GThreadPool and GIO's GTask pool as programs
 * use them, for the shim's foreign-pool tests (test_pools.c).
 *
 * Invariants: "starve" pushes SLEEPERS items that each sleep 200 ms (one
 * g_usleep: one blocking call per item) onto a pool of 2 threads, then a
 * probe item that does not block, and prints the probe's queue wait as the
 * program measures it ("probe_wait_us N", from its g_thread_pool_push to
 * the start of its func); "task" runs TASKS g_task_run_in_thread tasks that
 * each sleep 50 ms. Both print "items N" once every item ran.
 */
#include <gio/gio.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>

#define SLEEPERS 6
#define TASKS 3

static gint done;
static gint64 probe_pushed_us, probe_started_us;
static gint probe_data; /* its address marks the probe item */

static void item(gpointer data, gpointer user_data) {
  (void)user_data;
  if (data == &probe_data) /* atomic: GLib's futexes are no sync to TSan */
    __atomic_store_n(&probe_started_us, g_get_monotonic_time(),
                     __ATOMIC_RELEASE);
  else
    g_usleep(200 * 1000);
  g_atomic_int_inc(&done);
}

static void task_body(GTask *task, gpointer source, gpointer data,
                      GCancellable *cancel) {
  (void)source;
  (void)data;
  (void)cancel;
  g_usleep(50 * 1000);
  g_atomic_int_inc(&done);
  g_task_return_boolean(task, TRUE);
}

static void task_done(GObject *source, GAsyncResult *res, gpointer loop) {
  (void)source;
  (void)res;
  static int finished;
  if (++finished == TASKS)
    g_main_loop_quit(loop);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "starve";
  int want;
  if (strcmp(mode, "task") == 0) {
    GMainLoop *loop = g_main_loop_new(NULL, FALSE);
    for (int i = 0; i < TASKS; i++) {
      GTask *task = g_task_new(NULL, NULL, task_done, loop);
      g_task_run_in_thread(task, task_body);
      g_object_unref(task);
    }
    g_main_loop_run(loop);
    g_main_loop_unref(loop);
    want = TASKS;
  } else {
    GThreadPool *pool = g_thread_pool_new(item, NULL, 2, TRUE, NULL);
    for (int i = 0; i < SLEEPERS; i++)
      g_thread_pool_push(pool, GINT_TO_POINTER(i + 1), NULL);
    probe_pushed_us = g_get_monotonic_time();
    g_thread_pool_push(pool, &probe_data, NULL);
    g_thread_pool_free(pool, FALSE, TRUE);
    printf("probe_wait_us %lld\n",
           (long long)(__atomic_load_n(&probe_started_us, __ATOMIC_ACQUIRE) -
                       probe_pushed_us));
    want = SLEEPERS + 1;
  }
  printf("items %d\n", g_atomic_int_get(&done));
  return g_atomic_int_get(&done) == want ? 0 : 1;
}
