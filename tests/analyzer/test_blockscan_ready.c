/* test_blockscan_ready.c - readiness callbacks declared by ready: rules: a
 * program's own registration function that a rule file declares
 * (fixtures/ready: own.c, own.rules) silences one read of the descriptor
 * its callback is called for, not a read of another descriptor; GSocket
 * objects in non-blocking mode (gsocket.c) and the callbacks of GSocket
 * sources, through every way GLib sets a source's callback and a
 * program's wrappers of them (gsource.c), also when the program calls
 * such a callback itself with a non-blocking socket (gforward.c), and
 * `is ready` apart from `is nonblocking-object` (gready.c), calls right
 * after a readiness test (gpoll.c); a readiness callback's parameter
 * when every registration watches a non-blocking socket (gwatched.c),
 * and a field read through a callback's user data that its registering
 * function set to a non-blocking socket (guserdata.c), and a cancellable
 * cancelled before the registration of such a callback (gcancel.c,
 * gcancelreset.c); memory streams, which
 * never wait, also behind an equality guard (gstream.c); the closes of streams
 * on a descriptor, through fields GLib clears (gunix.c), and through the
 * user data and source object GIO's *_async calls hand their callbacks
 * (gasync.c); and --list-rules shows the ready: rules of each shape and the
 * pack's passes: rules.
 *
 * Invariant: the fixtures say what they expect on the line itself (see
 * marked.h): "expect" must be a warning, "not reported" must not.
 */
#include "marked.h"
#include "run.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define READY FIXTURES "/ready"
#define TIMEOUT 120

static void
test_own_registration_function_declared_ready_by_rule(void **state) {
  (void)state;
  const char *files[] = {"own.c", NULL};
  const char *extra[] = {"--rules", "own.rules", NULL};
  int status;
  assert_int_equal(
      marked_mismatches(BLOCKSCAN_EXE, READY, files, extra, &status), 0);
  assert_int_equal(status, 1);
}

static void test_gsocket_in_nonblocking_mode(void **state) {
  (void)state;
  const char *files[] = {"gsocket.c", NULL};
  int status;
  assert_int_equal(
      marked_mismatches(BLOCKSCAN_EXE, READY, files, NULL, &status), 0);
  assert_int_equal(status, 1);
}

static void
test_gsocket_source_callbacks_are_readiness_callbacks(void **state) {
  (void)state;
  const char *files[] = {"gsource.c", NULL};
  int status;
  assert_int_equal(
      marked_mismatches(BLOCKSCAN_EXE, READY, files, NULL, &status), 0);
  assert_int_equal(status, 1);
}

/* A readiness callback the program also calls itself with a non-blocking
 * socket (GLib's gdbusprivate.c), through a function tagged with its own
 * address as data. */
static void test_readiness_callback_called_directly(void **state) {
  (void)state;
  const char *files[] = {"gforward.c", NULL};
  int status;
  assert_int_equal(
      marked_mismatches(BLOCKSCAN_EXE, READY, files, NULL, &status), 0);
  assert_int_equal(status, 1);
}

/* A receive that takes the mode as an argument: not on the socket a
 * readiness callback was called for, still on a non-blocking one. */
static void test_ready_socket_apart_from_nonblocking_mode(void **state) {
  (void)state;
  const char *files[] = {"gready.c", NULL};
  int status;
  assert_int_equal(
      marked_mismatches(BLOCKSCAN_EXE, READY, files, NULL, &status), 0);
  assert_int_equal(status, 1);
}

/* A readiness callback's watched parameter, called directly from another
 * readiness callback whose source watched a non-blocking socket (GLib's
 * gio/tests/socket.c); the same shapes on a blocking socket reported. */
static void test_watched_parameter_of_nonblocking_sources(void **state) {
  (void)state;
  const char *files[] = {"gwatched.c", NULL};
  int status;
  assert_int_equal(
      marked_mismatches(BLOCKSCAN_EXE, READY, files, NULL, &status), 0);
  assert_int_equal(status, 1);
}

/* `data->client` in an idle callback, whose registration's user data had
 * its client set to a non-blocking socket by the registering function,
 * while another function stores a blocking one into the same field. */
static void test_user_data_fields_of_the_registration(void **state) {
  (void)state;
  const char *files[] = {"guserdata.c", NULL};
  int status;
  assert_int_equal(
      marked_mismatches(BLOCKSCAN_EXE, READY, files, NULL, &status), 0);
  assert_int_equal(status, 1);
}

/* A cancellable the registering function cancelled before registering
 * the callback that reads it from its `&data` user data; not after, not
 * a fresh one, not in a branch only, not one stored again later. */
static void test_cancellable_cancelled_before_registration(void **state) {
  (void)state;
  const char *files[] = {"gcancel.c", NULL};
  int status;
  assert_int_equal(
      marked_mismatches(BLOCKSCAN_EXE, READY, files, NULL, &status), 0);
  assert_int_equal(status, 1);
}

/* The same shape where a reset may reach the cancellable (the field
 * elsewhere, a helper given it), next to a reset of another one. */
static void test_cancellable_reset_that_may_reach_counts(void **state) {
  (void)state;
  const char *files[] = {"gcancelreset.c", NULL};
  int status;
  assert_int_equal(
      marked_mismatches(BLOCKSCAN_EXE, READY, files, NULL, &status), 0);
  assert_int_equal(status, 1);
}

/* A call right after a readiness test of its object (an assertion, or
 * the if it is the first statement of): one read, a small write. */
static void test_calls_right_after_a_readiness_test(void **state) {
  (void)state;
  const char *files[] = {"gpoll.c", NULL};
  int status;
  assert_int_equal(
      marked_mismatches(BLOCKSCAN_EXE, READY, files, NULL, &status), 0);
  assert_int_equal(status, 1);
}

/* A memory stream's calls, on the variable its constructor's result is
 * stored in or on one an if tests equal to such streams. */
static void test_memory_streams_never_wait(void **state) {
  (void)state;
  const char *files[] = {"gstream.c", NULL};
  int status;
  assert_int_equal(
      marked_mismatches(BLOCKSCAN_EXE, READY, files, NULL, &status), 0);
  assert_int_equal(status, 1);
}

/* A close of a stream a made-by condition's constructor made. */
static void test_descriptor_streams_close_without_waiting(void **state) {
  (void)state;
  const char *files[] = {"gunix.c", NULL};
  int status;
  assert_int_equal(
      marked_mismatches(BLOCKSCAN_EXE, READY, files, NULL, &status), 0);
  assert_int_equal(status, 1);
}

/* A close of a stream made by the made-by condition's constructor, in a
 * GAsyncReadyCallback that the *_async calls' passes: rules hand it to,
 * as user data and as the source object; not when a registration hands
 * a stream made otherwise, nor when the callback is also kept. */
static void test_async_callbacks_get_their_calls_streams(void **state) {
  (void)state;
  const char *files[] = {"gasync.c", NULL};
  int status;
  assert_int_equal(
      marked_mismatches(BLOCKSCAN_EXE, READY, files, NULL, &status), 0);
  assert_int_equal(status, 1);
}

static void test_list_rules_shows_ready_rules(void **state) {
  (void)state;
  const char *argv[] = {BLOCKSCAN_EXE, "--rules", "own.rules", "--list-rules",
                        NULL};
  run_result r = run_tool(READY, argv, TIMEOUT);
  assert_int_equal(r.status, 0);
  static const char *const lines[] = {
      "ready event_new param=0 (libevent)\n",
      "ready g_unix_fd_add param=0 (glib)\n",
      "ready my_watch_fd param=1 (own)\n",
      "ready g_socket_create_source param=0 source=result (glib)\n",
      "ready g_source_set_callback source=0 (glib)\n",
      "ready g_task_attach_source source=1 (glib)\n",
      "ready my_fd_source_new param=0 source=result (own)\n",
      "ready g_pollable_output_stream_is_writable test=0 for=write (glib)\n",
      "passes g_input_stream_read_async arg=5 object=0 data=6 (glib)\n",
      NULL,
  };
  for (size_t i = 0; lines[i]; i++)
    if (!contains(r.out, lines[i]))
      fail_msg("no line '%s' in:\n%s", lines[i], r.out);
  assert_false(contains(r.out, "ready my_call_later"));
  run_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_own_registration_function_declared_ready_by_rule),
      cmocka_unit_test(test_gsocket_in_nonblocking_mode),
      cmocka_unit_test(test_gsocket_source_callbacks_are_readiness_callbacks),
      cmocka_unit_test(test_readiness_callback_called_directly),
      cmocka_unit_test(test_ready_socket_apart_from_nonblocking_mode),
      cmocka_unit_test(test_watched_parameter_of_nonblocking_sources),
      cmocka_unit_test(test_user_data_fields_of_the_registration),
      cmocka_unit_test(test_cancellable_cancelled_before_registration),
      cmocka_unit_test(test_cancellable_reset_that_may_reach_counts),
      cmocka_unit_test(test_calls_right_after_a_readiness_test),
      cmocka_unit_test(test_memory_streams_never_wait),
      cmocka_unit_test(test_descriptor_streams_close_without_waiting),
      cmocka_unit_test(test_async_callbacks_get_their_calls_streams),
      cmocka_unit_test(test_list_rules_shows_ready_rules),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
