/* cmocka tests of the embedded default packs: they load cleanly, match the
 * files installed from rules/packs/, and hold every function they must
 * cover with the right category, callbacks and non-blocking conditions.
 *
 * BW_PACKS_DIR (set by CMake) is rules/packs/ in the source tree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockwatch/rules.h"

static void show_error(void *ctx, const bw_rules_error *err) {
  (void)ctx;
  /* Shown by cmocka's output on failure: which pack line is wrong. */
  fprintf(stderr, "%s\n", err->formatted);
}

static int setup(void **state) {
  bw_rules *rs = bw_rules_create();
  if (rs == NULL)
    return -1;
  bw_rules_set_error_callback(rs, show_error, NULL);
  if (bw_rules_load_default(rs, NULL) != 0) {
    bw_rules_free(rs);
    return -1;
  }
  *state = rs;
  return 0;
}

static int teardown(void **state) {
  bw_rules_free(*state);
  return 0;
}

static const char *const pack_names[] = {
    "libc", "blockwatch", "libuv", "glib", "cthreadpool", "libevent", NULL};

static void test_every_pack_loads_alone_without_errors(void **state) {
  (void)state;
  for (int i = 0; pack_names[i]; i++) {
    bw_rules *rs = bw_rules_create();
    assert_non_null(rs);
    assert_int_equal(bw_rules_load_default(rs, pack_names[i]), 0);
    assert_int_equal(bw_rules_error_count(rs), 0);
    assert_true(bw_rules_blocking_count(rs) + bw_rules_entry_count(rs) > 0);
    bw_rules_free(rs);
  }
}

static void test_all_packs_load_without_errors(void **state) {
  bw_rules *rs = *state;
  assert_int_equal(bw_rules_error_count(rs), 0);
  assert_true(bw_rules_blocking_count(rs) > 150);
  assert_true(bw_rules_entry_count(rs) > 60);
}

static void test_pack_names_and_order(void **state) {
  (void)state;
  assert_int_equal(bw_rules_pack_count(), 6);
  for (size_t i = 0; pack_names[i]; i++)
    assert_string_equal(bw_rules_pack_name(i), pack_names[i]);
  assert_null(bw_rules_pack_name(6));
  assert_null(bw_rules_pack_text("nope"));
  assert_null(bw_rules_pack_text(NULL));
}

static void test_unknown_pack_is_enoent(void **state) {
  (void)state;
  bw_rules *rs = bw_rules_create();
  assert_int_equal(bw_rules_load_default(rs, "libfoo"), -ENOENT);
  bw_rules_free(rs);
}

static void test_loading_a_pack_twice_fails_cleanly(void **state) {
  bw_rules *rs = *state;
  size_t n = bw_rules_blocking_count(rs);
  bw_rules_set_error_callback(rs, NULL, NULL);
  assert_int_equal(bw_rules_load_default(rs, "blockwatch"), -EINVAL);
  assert_int_equal(bw_rules_blocking_count(rs), n);
  /* The first error is the first rule of the pack (line numbers of the pack
   * may change, the shape of the message may not). */
  const char *first = bw_rules_error_at(rs, 0)->formatted;
  assert_true(strncmp(first, "blockwatch.rules:", 17) == 0);
  assert_non_null(strstr(first, ": error: duplicate callback arg=1 for entry "
                                "'bw_submit' (first defined at "
                                "blockwatch.rules:"));
}

/* The embedded text is the installed file, byte for byte. */
static void test_embedded_text_matches_pack_files(void **state) {
  (void)state;
  for (int i = 0; pack_names[i]; i++) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s.rules", BW_PACKS_DIR, pack_names[i]);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    assert_string_equal(bw_rules_pack_text(pack_names[i]), buf);
  }
}

static void test_every_rule_has_message_hint_and_api(void **state) {
  bw_rules *rs = *state;
  for (size_t i = 0; i < bw_rules_blocking_count(rs); i++) {
    const bw_blocking_rule *r = bw_rules_blocking_at(rs, i);
    assert_true(strlen(r->message) > 10);
    assert_true(strlen(r->hint) > 10);
    assert_non_null(bw_rules_pack_text(r->api));
    assert_ptr_equal(bw_rules_lookup_blocking(rs, r->function), r);
  }
  for (size_t i = 0; i < bw_rules_entry_count(rs); i++) {
    const bw_entry_rule *e = bw_rules_entry_at(rs, i);
    assert_non_null(bw_rules_pack_text(e->api));
    assert_true(e->n_callbacks >= 1);
  }
}

typedef struct expect_blocking {
  const char *function;
  bw_rule_category category;
} expect_blocking;

#define B(fn, cat)                                                             \
  { #fn, BW_CATEGORY_##cat }

/* The blocking functions the packs must cover, grouped by pack: a rule
 * dropped from a pack fails here. */
static const expect_blocking required_blocking[] = {
    /* libc */
    B(sleep, SLEEP),
    B(usleep, SLEEP),
    B(nanosleep, SLEEP),
    B(clock_nanosleep, SLEEP),
    B(pause, WAIT),
    B(select, WAIT),
    B(poll, WAIT),
    B(ppoll, WAIT),
    B(epoll_wait, WAIT),
    B(pthread_join, JOIN),
    B(pthread_cond_wait, WAIT),
    B(pthread_cond_timedwait, WAIT),
    B(pthread_mutex_lock, LOCK),
    B(pthread_rwlock_rdlock, LOCK),
    B(pthread_rwlock_wrlock, LOCK),
    B(pthread_rwlock_timedrdlock, LOCK),
    B(pthread_rwlock_timedwrlock, LOCK),
    B(sem_wait, WAIT),
    B(sem_timedwait, WAIT),
    B(mq_receive, WAIT),
    B(mq_send, WAIT),
    B(msgrcv, WAIT),
    B(wait, PROCESS),
    B(waitpid, PROCESS),
    B(waitid, PROCESS),
    B(system, PROCESS),
    B(popen, PROCESS),
    B(read, IO),
    B(write, IO),
    B(recv, IO),
    B(send, IO),
    B(accept, IO),
    B(connect, IO),
    B(fsync, IO),
    B(fdatasync, IO),
    B(sync, IO),
    B(flock, IO),
    B(lockf, IO),
    B(getaddrinfo, DNS),
    B(gethostbyname, DNS),
    B(sched_yield, YIELD),
    B(fgets, IO),
    B(getc, IO),
    /* libc, fortified */
    B(__read_chk, IO),
    B(__pread_chk, IO),
    B(__recv_chk, IO),
    B(__recvfrom_chk, IO),
    B(__poll_chk, WAIT),
    B(__ppoll_chk, WAIT),
    B(__fgets_chk, IO),
    B(__fgets_unlocked_chk, IO),
    B(__fread_chk, IO),
    /* blockwatch */
    B(bw_wait, SYNC_OVER_ASYNC),
    B(bw_wait_cancelable, SYNC_OVER_ASYNC),
    /* libuv */
    B(uv_sleep, SLEEP),
    B(uv_sem_wait, WAIT),
    B(uv_cond_wait, WAIT),
    B(uv_cond_timedwait, WAIT),
    B(uv_thread_join, JOIN),
    B(uv_mutex_lock, LOCK),
    B(uv_rwlock_rdlock, LOCK),
    B(uv_rwlock_wrlock, LOCK),
    B(uv_fs_read, IO),
    B(uv_fs_write, IO),
    B(uv_fs_open, IO),
    B(uv_fs_close, IO),
    B(uv_fs_stat, IO),
    B(uv_fs_fsync, IO),
    B(uv_run, NESTED_LOOP),
    /* glib */
    B(g_usleep, SLEEP),
    B(g_cond_wait, WAIT),
    B(g_cond_wait_until, WAIT),
    B(g_mutex_lock, LOCK),
    B(g_rec_mutex_lock, LOCK),
    B(g_rw_lock_reader_lock, LOCK),
    B(g_rw_lock_writer_lock, LOCK),
    B(g_thread_join, JOIN),
    B(g_thread_pool_free, JOIN),
    B(g_main_loop_run, NESTED_LOOP),
    B(g_main_context_iteration, NESTED_LOOP),
    B(g_async_queue_pop, WAIT),
    B(g_file_get_contents, IO),
    B(g_file_read, IO),
    B(g_input_stream_read, IO),
    B(g_output_stream_write, IO),
    /* cthreadpool, libevent */
    B(thpool_wait, JOIN),
    B(event_base_dispatch, NESTED_LOOP),
    {NULL, BW_CATEGORY_COUNT}};

static void test_required_blocking_functions_are_present(void **state) {
  bw_rules *rs = *state;
  for (const expect_blocking *e = required_blocking; e->function; e++) {
    const bw_blocking_rule *r = bw_rules_lookup_blocking(rs, e->function);
    if (r == NULL)
      fail_msg("no blocking rule for %s", e->function);
    if (r->category != e->category)
      fail_msg("%s: category %s, expected %s", e->function,
               bw_rule_category_name(r->category),
               bw_rule_category_name(e->category));
  }
}

typedef struct expect_entry {
  const char *function;
  int arg;
  bw_runs_on runs_on;
} expect_entry;

#define E(fn, arg, on)                                                         \
  { #fn, arg, BW_RUNS_ON_##on }

/* The entries the packs must cover, with the callback's position, and
 * bw_then_consume, which the runtime added later. */
static const expect_entry required_entries[] = {
    E(bw_submit, 1, POOL),
    E(bw_run, 1, POOL),
    E(bw_then, 1, POOL),
    E(bw_then_consume, 1, POOL),
    E(uv_queue_work, 2, POOL),
    E(uv_queue_work, 3, LOOP),
    E(uv_timer_start, 1, LOOP),
    E(uv_idle_start, 1, LOOP),
    E(uv_prepare_start, 1, LOOP),
    E(uv_check_start, 1, LOOP),
    E(uv_async_init, 2, LOOP),
    E(uv_signal_start, 1, LOOP),
    E(uv_poll_start, 2, LOOP),
    E(uv_read_start, 2, LOOP),
    E(uv_listen, 2, LOOP),
    E(uv_tcp_connect, 3, LOOP),
    E(uv_write, 4, LOOP),
    E(uv_udp_send, 5, LOOP),
    E(uv_udp_recv_start, 2, LOOP),
    E(uv_fs_read, 6, LOOP),
    E(uv_getaddrinfo, 2, LOOP),
    E(g_thread_pool_new, 0, POOL),
    E(g_thread_pool_new_full, 0, POOL),
    E(g_task_run_in_thread, 1, POOL),
    E(g_idle_add, 0, LOOP),
    E(g_idle_add_full, 1, LOOP),
    E(g_timeout_add, 1, LOOP),
    E(g_timeout_add_full, 2, LOOP),
    E(g_timeout_add_seconds, 1, LOOP),
    E(g_source_set_callback, 1, LOOP),
    E(g_unix_fd_add, 2, LOOP),
    E(g_unix_fd_add_full, 3, LOOP),
    E(g_child_watch_add, 1, LOOP),
    E(g_child_watch_add_full, 2, LOOP),
    E(thpool_add_work, 1, POOL),
    E(event_new, 3, LOOP),
    E(event_assign, 4, LOOP),
    E(bufferevent_setcb, 1, LOOP),
    E(bufferevent_setcb, 3, LOOP),
    {NULL, 0, BW_RUNS_ON_POOL}};

static void test_required_entries_are_present(void **state) {
  bw_rules *rs = *state;
  for (const expect_entry *x = required_entries; x->function; x++) {
    const bw_entry_rule *e = bw_rules_find_entry(rs, x->function);
    if (e == NULL)
      fail_msg("no entry rule for %s", x->function);
    size_t i = 0;
    while (i < e->n_callbacks && !(e->callbacks[i].kind == BW_CALLBACK_ARG &&
                                   e->callbacks[i].arg == x->arg))
      i++;
    if (i == e->n_callbacks)
      fail_msg("%s: no callback at argument %d", x->function, x->arg);
    if (e->callbacks[i].runs_on != x->runs_on)
      fail_msg("%s: argument %d runs on %s", x->function, x->arg,
               bw_runs_on_name(e->callbacks[i].runs_on));
  }
}

static void test_struct_and_setter_entries(void **state) {
  bw_rules *rs = *state;
  const bw_entry_rule *e = bw_rules_find_entry(rs, "uv_spawn");
  assert_non_null(e);
  assert_int_equal(e->callbacks[0].kind, BW_CALLBACK_FIELD);
  assert_string_equal(e->callbacks[0].field, "exit_cb");
  e = bw_rules_find_entry(rs, "g_source_attach");
  assert_non_null(e);
  assert_int_equal(e->callbacks[0].kind, BW_CALLBACK_SETTER);
  assert_string_equal(e->callbacks[0].setter, "g_source_set_callback");
  assert_int_equal(e->callbacks[0].object, 0);
  assert_int_equal(e->callbacks[0].arg, 1);
}

/* Checks that `function` does not block when `kind` holds for `arg`. */
static void expect_unless(bw_rules *rs, const char *function, bw_cond_kind kind,
                          int arg, long long value, const char *name) {
  const bw_blocking_rule *r = bw_rules_lookup_blocking(rs, function);
  if (r == NULL)
    fail_msg("no blocking rule for %s", function);
  for (size_t i = 0; i < r->n_unless; i++) {
    const bw_rule_cond *c = &r->unless[i];
    if (c->kind == kind && c->arg == arg && c->value == value &&
        ((name == NULL && c->name == NULL) ||
         (name && c->name && strcmp(name, c->name) == 0)))
      return;
  }
  fail_msg("%s: no '%s' condition on argument %d", function,
           bw_cond_kind_name(kind), arg);
}

static void test_non_blocking_conditions(void **state) {
  bw_rules *rs = *state;
  expect_unless(rs, "waitpid", BW_COND_HAS_FLAG, 2, 1, "WNOHANG");
  expect_unless(rs, "msgrcv", BW_COND_HAS_FLAG, 4, 2048, "IPC_NOWAIT");
  expect_unless(rs, "recv", BW_COND_HAS_FLAG, 3, 64, "MSG_DONTWAIT");
  expect_unless(rs, "__recv_chk", BW_COND_HAS_FLAG, 4, 64, "MSG_DONTWAIT");
  expect_unless(rs, "flock", BW_COND_HAS_FLAG, 1, 4, "LOCK_NB");
  expect_unless(rs, "getnameinfo", BW_COND_HAS_FLAG, 6, 3,
                "NI_NUMERICHOST|NI_NUMERICSERV");
  expect_unless(rs, "read", BW_COND_NONBLOCKING_FD, 0, 0, NULL);
  expect_unless(rs, "accept", BW_COND_NONBLOCKING_FD, 0, 0, NULL);
  expect_unless(rs, "fgets", BW_COND_NONBLOCKING_FILE, 2, 0, NULL);
  expect_unless(rs, "__fgets_chk", BW_COND_NONBLOCKING_FILE, 3, 0, NULL);
  expect_unless(rs, "poll", BW_COND_EQUALS, 2, 0, NULL);
  expect_unless(rs, "epoll_wait", BW_COND_EQUALS, 3, 0, NULL);
  expect_unless(rs, "select", BW_COND_ZERO_TIMEOUT, 4, 0, NULL);
  expect_unless(rs, "ppoll", BW_COND_ZERO_TIMEOUT, 2, 0, NULL);
  expect_unless(rs, "uv_fs_read", BW_COND_NOT_NULL, 6, 0, NULL);
  expect_unless(rs, "uv_fs_open", BW_COND_NOT_NULL, 5, 0, NULL);
  expect_unless(rs, "g_thread_pool_free", BW_COND_EQUALS, 2, 0, "FALSE");
  expect_unless(rs, "g_main_context_iteration", BW_COND_EQUALS, 1, 0, "FALSE");
  expect_unless(rs, "uv_run", BW_COND_EQUALS, 1, 2, "UV_RUN_NOWAIT");
  expect_unless(rs, "lockf", BW_COND_EQUALS, 1, 2, "F_TLOCK");
  expect_unless(rs, "g_socket_receive_with_blocking", BW_COND_READY, 0, 0,
                NULL);
  expect_unless(rs, "g_socket_receive_with_blocking", BW_COND_EQUALS, 3, 0,
                "FALSE");
  expect_unless(rs, "g_input_stream_read", BW_COND_READY, 0, 0, NULL);
  expect_unless(rs, "g_output_stream_write", BW_COND_HAS_ROOM, 0, 2, NULL);
  expect_unless(rs, "g_output_stream_write_all", BW_COND_HAS_ROOM, 0, 2, NULL);
}

static void test_hints_name_the_alternative(void **state) {
  bw_rules *rs = *state;
  assert_non_null(
      strstr(bw_rules_find_blocking(rs, "sleep")->hint, "bw_delay"));
  assert_non_null(
      strstr(bw_rules_find_blocking(rs, "usleep")->hint, "bw_delay"));
  assert_non_null(
      strstr(bw_rules_find_blocking(rs, "bw_wait")->hint, "bw_then"));
  assert_non_null(strstr(bw_rules_find_blocking(rs, "sched_yield")->hint,
                         "completion source"));
  assert_string_equal(bw_rules_find_blocking(rs, "bw_wait")->id,
                      "blocking-sync-over-async");
}

static void test_lock_rules_are_off_by_default(void **state) {
  bw_rules *rs = *state;
  assert_null(bw_rules_find_blocking(rs, "pthread_mutex_lock"));
  assert_null(bw_rules_find_blocking(rs, "g_mutex_lock"));
  const bw_blocking_rule *r = bw_rules_lookup_blocking(rs, "uv_mutex_lock");
  assert_non_null(r);
  assert_false(bw_rules_is_active(rs, r));
  assert_non_null(bw_rules_find_blocking(rs, "sleep"));
}

/* Lookups only read the set: run under TSan (BLOCKWATCH_SANITIZE=thread)
 * this fails if a lookup ever writes shared state. */
static void *lookup_many(void *arg) {
  const bw_rules *rs = arg;
  static const char *const names[] = {"sleep",     "read",    "uv_queue_work",
                                      "startup_x", "nothing", NULL};
  size_t found = 0;
  for (int round = 0; round < 2000; round++) {
    for (int i = 0; names[i]; i++) {
      found += bw_rules_find_blocking(rs, names[i]) != NULL;
      found += bw_rules_find_entry(rs, names[i]) != NULL;
      found += (size_t)bw_rules_is_allowed(rs, names[i]);
    }
  }
  return (void *)found;
}

static void test_lookups_from_many_threads(void **state) {
  bw_rules *rs = *state;
  const char *allow = "allow:startup_*";
  assert_int_equal(bw_rules_load_string(rs, "a.rules", allow, strlen(allow)),
                   0);
  pthread_t threads[4];
  for (int i = 0; i < 4; i++)
    assert_int_equal(pthread_create(&threads[i], NULL, lookup_many, rs), 0);
  for (int i = 0; i < 4; i++) {
    void *found;
    assert_int_equal(pthread_join(threads[i], &found), 0);
    /* sleep, read (blocking), uv_queue_work (entry), startup_x (allowed). */
    assert_int_equal((size_t)found, 4 * 2000);
  }
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_pack_loads_alone_without_errors),
      T(test_all_packs_load_without_errors),
      cmocka_unit_test(test_pack_names_and_order),
      cmocka_unit_test(test_unknown_pack_is_enoent),
      T(test_loading_a_pack_twice_fails_cleanly),
      cmocka_unit_test(test_embedded_text_matches_pack_files),
      T(test_every_rule_has_message_hint_and_api),
      T(test_required_blocking_functions_are_present),
      T(test_required_entries_are_present),
      T(test_struct_and_setter_entries),
      T(test_non_blocking_conditions),
      T(test_hints_name_the_alternative),
      T(test_lock_rules_are_off_by_default),
      T(test_lookups_from_many_threads),
  };
  return cmocka_run_group_tests_name("rules_packs", tests, NULL, NULL);
}
