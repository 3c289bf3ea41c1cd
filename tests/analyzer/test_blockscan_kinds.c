/* test_blockscan_kinds.c - blockscan on tests/analyzer/fixtures/kinds: pools
 * made for blocking work (offload and blocking kinds) and deferred
 * completion (posts: rules, continuations), and hints that follow the
 * pool (hint: rules).
 *
 * Each test names the fixture file it reads; each file's header says what
 * it shows.
 */
#include "run.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#define KINDS FIXTURES "/kinds"
#define TIMEOUT 120

/* Runs blockscan on one fixture file (plus `extra`, or NULL), text or
 * JSON. */
static run_result scan(const char *file, const char *extra) {
  const char *argv[] = {BLOCKSCAN_EXE,       file,
                        "--color=never",     extra ? extra : "--",
                        extra ? "--" : NULL, NULL};
  return run_tool(KINDS, argv, TIMEOUT);
}

static void test_offload_pool_reports_waits_not_io(void **state) {
  (void)state;
  run_result r = scan("offload.c", NULL);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "offload.c:34:3: warning: 'uv_sem_wait' blocks "
                              "an offload pool worker: reached from callback "
                              "'offload_work'"));
  assert_true(contains(r.out, "offload.c:40:3: warning: 'g_usleep' blocks an "
                              "offload pool worker: reached from callback "
                              "'pool_func'"));
  /* io, process, dns: the point of an offload pool. */
  assert_false(contains(r.out, "'system'"));
  assert_false(contains(r.out, "'getaddrinfo'"));
  assert_false(contains(r.out, "offload.c:39:"));
  assert_false(contains(r.out, "task_func"));
  run_free(&r);
}

static void test_bundled_pool_is_not_an_offload_pool(void **state) {
  (void)state;
  run_result r = scan("offload.c", NULL);
  /* The read in fetch() is reached from both: only the general pool's
   * callback reports it. */
  assert_true(contains(r.out, "offload.c:27:3: warning: 'read' blocks a pool "
                              "worker: reached from callback 'general_cb' "
                              "[blocking-io]"));
  /* Handed to an offload pool and to the bundled one: reported. */
  assert_true(contains(r.out, "offload.c:64:3: warning: 'write' blocks a pool "
                              "worker: reached from callback 'both_cb'"));
  run_free(&r);
}

static void test_nothing_is_reported_inside_bw_run_blocking(void **state) {
  (void)state;
  run_result r = scan("offload.c", NULL);
  assert_false(contains(r.out, "blocking_fn"));
  assert_false(contains(r.out, "offload.c:56:"));
  assert_false(contains(r.out, "offload.c:57:"));
  run_free(&r);
}

static void test_json_names_the_pool_kind(void **state) {
  (void)state;
  run_result r = scan("offload.c", "--format=json");
  assert_int_equal(r.status, 1);
  const char *wait = strstr(r.out, "\"function\": \"uv_sem_wait\"");
  assert_non_null(wait);
  const char *kind = strstr(wait, "\"pool_kind\": \"offload\"");
  const char *next = strstr(wait, "\"function\": \"g_usleep\"");
  assert_non_null(kind);
  assert_true(next == NULL || kind < next);
  /* A general pool's finding has no pool_kind. */
  const char *read = strstr(r.out, "\"function\": \"read\"");
  assert_non_null(read);
  const char *after = strstr(read, "\"function\": ");
  after = after ? strstr(after + 1, "\"function\": ") : NULL;
  const char *read_kind = strstr(read, "\"pool_kind\"");
  assert_true(read_kind == NULL || (after && read_kind > after));
  run_free(&r);
}

static void test_posted_callbacks_are_not_called_by_the_poster(void **state) {
  (void)state;
  run_result r = scan("posts.c", NULL);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "posts.c:75:3: warning: 'usleep' blocks the "
                              "event loop: reached from callback 'task_done'"));
  assert_true(contains(r.out, "callback 'task_done' handed to 'g_task_new'"));
  assert_true(contains(r.out, "posts.c:80:3: warning: 'sleep' blocks the "
                              "event loop: reached from callback 'on_async'"));
  assert_true(contains(r.out, "posts.c:85:3: warning: 'sleep' blocks the "
                              "event loop: reached from callback 'on_event'"));
  /* No chain runs from a worker through the posting call. */
  assert_false(contains(r.out, "calls 'g_task_return_pointer'"));
  assert_false(contains(r.out, "calls 'uv_async_send'"));
  assert_false(contains(r.out, "calls 'event_active'"));
  assert_false(contains(r.out, "pool worker"));
  run_free(&r);
}

static void test_continuation_is_not_run_by_its_attacher(void **state) {
  (void)state;
  run_result r = scan("then.c", NULL);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "then.c:15:3: warning: 'sleep' blocks a pool "
                              "worker: reached from callback 'continuation'"));
  assert_true(contains(r.out, "callback 'continuation' handed to 'bw_then'"));
  assert_false(contains(r.out, "first_step"));
  assert_false(contains(r.out, "'bw_then' calls"));
  run_free(&r);
}

static void test_hints_on_the_bundled_pool_name_its_toolbox(void **state) {
  (void)state;
  run_result r = scan("hints.c", NULL);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "hints.c:17:3: note: hint: call it inside "
                              "bw_run_blocking() (threads kept apart from the "
                              "workers) and continue in bw_then(); for a "
                              "socket or a pipe, make it O_NONBLOCK and wait "
                              "with bw_fd_ready()"));
  assert_true(contains(r.out, "hints.c:18:3: note: hint: resolve inside "
                              "bw_run_blocking()"));
  assert_true(contains(r.out, "hints.c:19:3: note: hint: run it inside "
                              "bw_run_blocking()"));
  assert_true(contains(r.out, "hints.c:20:3: note: hint: continue in bw_then() "
                              "on a task instead of waiting: bw_event_wait()"));
  assert_true(contains(r.out, "hints.c:21:3: note: hint: use bw_delay() and "
                              "continue in bw_then()"));
  /* On a libuv loop, libc's own hint. */
  assert_true(contains(r.out, "hints.c:26:3: note: hint: make the descriptor "
                              "O_NONBLOCK and write when an event loop says it "
                              "is ready"));
  run_free(&r);
  r = scan("hints.c", "--format=json");
  assert_true(contains(r.out, "\"hint\": \"resolve inside bw_run_blocking()"));
  run_free(&r);
  r = scan("hints.c", "--format=sarif");
  assert_true(contains(r.out, "resolve inside bw_run_blocking()"));
  run_free(&r);
}

static void test_timer_and_parallel_loop_callbacks_are_roots(void **state) {
  (void)state;
  run_result r = scan("toolbox.c", NULL);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "toolbox.c:16:3: warning: 'usleep' blocks a pool "
                              "worker: reached from callback 'tick'"));
  assert_true(contains(r.out, "callback 'tick' handed to 'bw_timer_start'"));
  assert_true(contains(r.out, "toolbox.c:21:3: warning: 'read' blocks a pool "
                              "worker: reached from callback 'body'"));
  assert_true(contains(r.out, "toolbox.c:21:3: note: hint: call it inside "
                              "bw_run_blocking()"));
  run_free(&r);
}

static void test_list_rules_shows_posts(void **state) {
  (void)state;
  const char *argv[] = {BLOCKSCAN_EXE, "--list-rules", NULL};
  run_result r = run_tool(KINDS, argv, TIMEOUT);
  assert_int_equal(r.status, 0);
  assert_true(contains(r.out, "posts uv_async_send from uv_async_init "
                              "(libuv)\n"));
  assert_true(contains(r.out, "posts g_task_return_pointer from g_task_new "
                              "(glib)\n"));
  run_free(&r);
}

static void test_gio_transport_calls_are_io_on_an_offload_pool(void **state) {
  (void)state;
  run_result r = scan("gio_offload.c", NULL);
  assert_int_equal(r.status, 1);
  /* Connecting a bus's stream is I/O: the GTask pool's point. */
  assert_false(contains(r.out, "gio_offload.c:30:"));
  assert_true(contains(r.out, "gio_offload.c:31:3: warning: "
                              "'g_dbus_connection_call_sync' blocks an "
                              "offload pool worker"));
  assert_true(contains(r.out, "gio_offload.c:35:3: warning: "
                              "'g_dbus_address_get_stream_sync' blocks the "
                              "event loop: reached from callback 'on_idle' "
                              "[blocking-io]"));
  run_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_offload_pool_reports_waits_not_io),
      cmocka_unit_test(test_bundled_pool_is_not_an_offload_pool),
      cmocka_unit_test(test_nothing_is_reported_inside_bw_run_blocking),
      cmocka_unit_test(test_json_names_the_pool_kind),
      cmocka_unit_test(test_posted_callbacks_are_not_called_by_the_poster),
      cmocka_unit_test(test_continuation_is_not_run_by_its_attacher),
      cmocka_unit_test(test_hints_on_the_bundled_pool_name_its_toolbox),
      cmocka_unit_test(test_timer_and_parallel_loop_callbacks_are_roots),
      cmocka_unit_test(test_list_rules_shows_posts),
      cmocka_unit_test(test_gio_transport_calls_are_io_on_an_offload_pool),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
