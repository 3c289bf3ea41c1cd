/* test_uv_setup - libuv's one-time setup is libuv's own on a thread that
 * blocked before it ran: a main thread that makes one blocking call and
 * then starts libuv's default loop has only its own calls counted.
 *
 * Invariants: the program runs with no options beyond the report's own;
 * its only blocking calls are two usleep()s on the main thread.
 */
#include "shim_run.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* The count of each row of on_other_threads_by_function, as "fn=N ..."
 * into buf (sorted as the report sorts them). */
static const char *other_rows(json_t *j, char *buf, size_t size) {
  json_t *rows = json_object_get(json_object_get(j, "blocking_calls"),
                                 "on_other_threads_by_function");
  json_t *row;
  size_t i, used = 0;
  buf[0] = '\0';
  json_array_foreach(rows, i, row) {
    int n =
        snprintf(buf + used, size - used, "%s%s=%lld", used ? " " : "",
                 json_string_value(json_object_get(row, "function")),
                 (long long)json_integer_value(json_object_get(row, "count")));
    if (n < 0 || (size_t)n >= size - used)
      break;
    used += (size_t)n;
  }
  return buf;
}

static void test_libuv_setup_after_a_blocking_call_counts_nothing(void **st) {
  (void)st;
  char path[512], rows[512];
  shim_tmpfile(path, sizeof path, "uv_setup.json");
  unlink(path);
  char *argv[] = {(char *)UV_SETUP_TARGET, NULL};
  char *env[] = {
      shim_fmt("BLOCKWATCH_OPTIONS=report=json:report_path=%s", path), NULL};
  shim_result r;
  assert_int_equal(shim_run(argv, env, 1, 60, &r), 0);
  assert_false(r.timedout);
  assert_int_equal(r.status, 0);
  assert_int_equal(shim_out_value(r.out, "done"), 1);
  json_t *j = shim_load_json(path);
  assert_non_null(j);
  /* Both of the program's usleep()s, the one after libuv's setup too, and
   * none of libuv's writes to its signal lock. */
  assert_string_equal(other_rows(j, rows, sizeof rows), "usleep=2");
  assert_int_equal(shim_calls(j, "on_other_threads"), 2);
  assert_int_equal(shim_calls(j, "on_workers"), 0);
  json_decref(j);
  shim_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_libuv_setup_after_a_blocking_call_counts_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
