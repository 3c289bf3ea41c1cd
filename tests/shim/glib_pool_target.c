/* glib_pool_target - a real GThreadPool whose items sleep, for the
 * worker_name glob that docs/shim.md gives for GLib.
 *
 * Invariants: exactly ITEMS blocking calls (one g_usleep, a nanosleep, per
 * item), all on the pool's threads; the main thread's waits go through
 * GLib's own futex-based GCond, which no wrapper sees. argv[1], when given,
 * is the program name GLib names its threads after (g_set_prgname).
 */
#include <glib.h>
#include <stdio.h>

#define ITEMS 4

static gint done;

static void sleepy(gpointer data, gpointer user_data) {
  (void)data;
  (void)user_data;
  g_usleep(20 * 1000);
  g_atomic_int_inc(&done);
}

int main(int argc, char **argv) {
  if (argc > 1)
    g_set_prgname(argv[1]);
  GThreadPool *pool = g_thread_pool_new(sleepy, NULL, 2, FALSE, NULL);
  for (int i = 0; i < ITEMS; i++)
    g_thread_pool_push(pool, GINT_TO_POINTER(i + 1), NULL);
  g_thread_pool_free(pool, FALSE, TRUE);
  printf("items %d\n", g_atomic_int_get(&done));
  return 0;
}
