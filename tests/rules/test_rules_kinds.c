/* cmocka tests of pool kinds (entry "kind="), posts: and hint: rules: what they
 * parse into, their errors (exact text), the rollback of a failed load and
 * what the default packs say with them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "blockwatch/rules.h"

static char last_error[512];
static size_t n_errors;

static void on_error(void *ctx, const bw_rules_error *err) {
  (void)ctx;
  snprintf(last_error, sizeof(last_error), "%s", err->formatted);
  n_errors++;
}

static bw_rules *fresh(void) {
  bw_rules *rs = bw_rules_create();
  assert_non_null(rs);
  bw_rules_set_error_callback(rs, on_error, NULL);
  n_errors = 0;
  last_error[0] = '\0';
  return rs;
}

static int load(bw_rules *rs, const char *text) {
  return bw_rules_load_string(rs, "t.rules", text, strlen(text));
}

/* `text` fails to load with one error, `expected`, and adds nothing. */
static void expect_error(const char *text, const char *expected) {
  bw_rules *rs = fresh();
  assert_int_equal(load(rs, text), -EINVAL);
  assert_int_equal(n_errors, 1);
  assert_string_equal(last_error, expected);
  assert_int_equal(bw_rules_entry_count(rs), 0);
  assert_int_equal(bw_rules_post_count(rs), 0);
  assert_int_equal(bw_rules_hint_count(rs), 0);
  bw_rules_free(rs);
}

static void test_entry_kind_is_parsed(void **state) {
  (void)state;
  bw_rules *rs = fresh();
  assert_int_equal(load(rs, "entry:q arg=1 on=pool kind=offload\n"
                            "entry:q arg=2 on=loop\n"
                            "entry:r arg=0 on=pool kind=blocking\n"
                            "entry:s arg=0 on=pool kind=general\n"
                            "entry:t arg=0 on=pool\n"),
                   0);
  const bw_entry_rule *q = bw_rules_find_entry(rs, "q");
  assert_non_null(q);
  assert_int_equal(q->n_callbacks, 2);
  assert_int_equal(q->callbacks[0].pool_kind, BW_POOL_OFFLOAD);
  assert_int_equal(q->callbacks[1].pool_kind, BW_POOL_GENERAL);
  assert_int_equal(bw_rules_find_entry(rs, "r")->callbacks[0].pool_kind,
                   BW_POOL_BLOCKING);
  assert_int_equal(bw_rules_find_entry(rs, "s")->callbacks[0].pool_kind,
                   BW_POOL_GENERAL);
  assert_int_equal(bw_rules_find_entry(rs, "t")->callbacks[0].pool_kind,
                   BW_POOL_GENERAL);
  bw_rules_free(rs);
}

static void test_pool_kind_names_and_categories(void **state) {
  (void)state;
  assert_string_equal(bw_pool_kind_name(BW_POOL_GENERAL), "general");
  assert_string_equal(bw_pool_kind_name(BW_POOL_OFFLOAD), "offload");
  assert_string_equal(bw_pool_kind_name(BW_POOL_BLOCKING), "blocking");
  assert_null(bw_pool_kind_name((bw_pool_kind)7));
  bw_pool_kind kind;
  assert_int_equal(bw_pool_kind_parse("offload", &kind), 0);
  assert_int_equal(kind, BW_POOL_OFFLOAD);
  assert_int_equal(bw_pool_kind_parse("worker", &kind), -EINVAL);
  for (int c = 0; c < BW_CATEGORY_COUNT; c++) {
    bw_rule_category cat = (bw_rule_category)c;
    int point = cat == BW_CATEGORY_IO || cat == BW_CATEGORY_PROCESS ||
                cat == BW_CATEGORY_DNS;
    assert_int_equal(bw_pool_kind_reports(BW_POOL_GENERAL, cat), 1);
    assert_int_equal(bw_pool_kind_reports(BW_POOL_OFFLOAD, cat), !point);
    assert_int_equal(bw_pool_kind_reports(BW_POOL_BLOCKING, cat), 0);
  }
}

/* fds=N: the argument counting the descriptors a wait is on (1 + N). */
static void test_fds_is_parsed(void **state) {
  (void)state;
  bw_rules *rs = fresh();
  assert_int_equal(load(rs, "blocking:w category=wait fds=1 unless=\"arg2 is "
                            "0\"\n"
                            "blocking:v category=wait\n"),
                   0);
  assert_int_equal(bw_rules_find_blocking(rs, "w")->fds, 2);
  assert_int_equal(bw_rules_find_blocking(rs, "v")->fds, 0);
  bw_rules_free(rs);
  expect_error("blocking:w category=wait fds=arg1\n",
               "t.rules:1:30: error: bad value 'arg1' for 'fds' (expected 0 "
               "to 31)");
  /* The libc pack: descriptor waits that have a count. */
  rs = fresh();
  assert_int_equal(bw_rules_load_default(rs, "libc"), 0);
  static const struct {
    const char *fn;
    int fds;
  } waits[] = {{"poll", 2},    {"__poll_chk", 2}, {"ppoll", 2}, {"select", 1},
               {"pselect", 1}, {"epoll_wait", 0}, {"usleep", 0}};
  for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++)
    assert_int_equal(bw_rules_lookup_blocking(rs, waits[i].fn)->fds,
                     waits[i].fds);
  bw_rules_free(rs);
}

static void test_err_unknown_pool_kind(void **state) {
  (void)state;
  expect_error("entry:q arg=1 on=pool kind=io\n",
               "t.rules:1:28: error: unknown pool kind 'io' (expected "
               "general, offload or blocking)");
}

static void test_err_kind_on_a_loop(void **state) {
  (void)state;
  expect_error("entry:q arg=1 on=loop kind=offload\n",
               "t.rules:1:23: error: 'kind' is only valid with on=pool");
}

static void test_posts_is_parsed(void **state) {
  (void)state;
  bw_rules *rs = fresh();
  assert_int_equal(load(rs, "posts:uv_async_send from=uv_async_init\n"
                            "posts: kick from=arm api=mine # a comment\n"),
                   0);
  assert_int_equal(bw_rules_post_count(rs), 2);
  const bw_post_rule *p = bw_rules_find_post(rs, "uv_async_send");
  assert_non_null(p);
  assert_ptr_equal(p, bw_rules_post_at(rs, 0));
  assert_string_equal(p->from, "uv_async_init");
  assert_string_equal(p->api, "t");
  assert_string_equal(p->origin.file, "t.rules");
  assert_int_equal(p->origin.line, 1);
  p = bw_rules_find_post(rs, "kick");
  assert_non_null(p);
  assert_string_equal(p->from, "arm");
  assert_string_equal(p->api, "mine");
  assert_null(bw_rules_find_post(rs, "uv_async_init"));
  assert_null(bw_rules_post_at(rs, 2));
  assert_null(bw_rules_find_post(NULL, "kick"));
  bw_rules_free(rs);
}

static void test_passes_is_parsed(void **state) {
  (void)state;
  bw_rules *rs = fresh();
  assert_int_equal(load(rs, "passes:read_async arg=5 object=0 data=6\n"
                            "passes: later arg=1 data=2 api=mine\n"),
                   0);
  assert_int_equal(bw_rules_pass_count(rs), 2);
  const bw_pass_rule *p = bw_rules_find_pass(rs, "read_async");
  assert_non_null(p);
  assert_ptr_equal(p, bw_rules_pass_at(rs, 0));
  assert_int_equal(p->callback, 5);
  assert_int_equal(p->object, 0);
  assert_int_equal(p->data, 6);
  assert_string_equal(p->api, "t");
  assert_int_equal(p->origin.line, 1);
  p = bw_rules_find_pass(rs, "later");
  assert_non_null(p);
  assert_int_equal(p->object, -1);
  assert_int_equal(p->data, 2);
  assert_string_equal(p->api, "mine");
  assert_null(bw_rules_pass_at(rs, 2));
  assert_null(bw_rules_find_pass(NULL, "later"));
  assert_null(bw_rules_find_post(rs, "later")); /* not an entry or a post */
  assert_null(bw_rules_find_entry(rs, "later"));
  bw_rules_free(rs);
}

static void test_err_passes_bad_lines(void **state) {
  (void)state;
  expect_error("passes:f object=0\n", "t.rules:1:1: error: missing required "
                                      "key 'arg' in passes rule for 'f'");
  expect_error("passes:f arg=1\n",
               "t.rules:1:1: error: passes rule for 'f' needs 'object' or "
               "'data'");
  expect_error("passes:f arg=1 data=1\n",
               "t.rules:1:21: error: 'data' is the callback argument 1 "
               "itself");
  expect_error("passes:f arg=1 data=x\n",
               "t.rules:1:21: error: bad value 'x' for 'data' (expected 0 to "
               "31)");
  expect_error("passes:f arg=1 data=2\npasses:f arg=1 object=0\n",
               "t.rules:2:8: error: duplicate passes rule for 'f' (first "
               "defined at t.rules:1)");
}

static void test_err_posts_needs_from(void **state) {
  (void)state;
  expect_error("posts:kick api=x\n", "t.rules:1:1: error: missing required "
                                     "key 'from' in posts rule for 'kick'");
}

static void test_err_posts_bad_from(void **state) {
  (void)state;
  expect_error("posts:kick from=1arm\n",
               "t.rules:1:17: error: invalid function name '1arm'");
}

static void test_err_posts_unknown_key(void **state) {
  (void)state;
  expect_error("posts:kick from=arm arg=1\n",
               "t.rules:1:21: error: unknown key 'arg' in posts rule");
}

static void test_err_duplicate_posts_across_loads(void **state) {
  (void)state;
  bw_rules *rs = fresh();
  assert_int_equal(load(rs, "posts:kick from=arm\n"), 0);
  assert_int_equal(load(rs, "entry:arm arg=0 on=loop\nposts:kick from=arm\n"),
                   -EINVAL);
  assert_string_equal(last_error, "t.rules:2:7: error: duplicate posts rule "
                                  "for 'kick' (first defined at t.rules:1)");
  /* The failed load kept nothing, the first one everything. */
  assert_int_equal(bw_rules_post_count(rs), 1);
  assert_int_equal(bw_rules_entry_count(rs), 0);
  assert_non_null(bw_rules_find_post(rs, "kick"));
  bw_rules_free(rs);
}

static void test_failed_load_drops_its_posts(void **state) {
  (void)state;
  bw_rules *rs = fresh();
  assert_int_equal(load(rs, "posts:kick from=arm\nblocking:x category=nap\n"),
                   -EINVAL);
  assert_int_equal(bw_rules_post_count(rs), 0);
  assert_int_equal(bw_rules_hint_count(rs), 0);
  assert_null(bw_rules_find_post(rs, "kick"));
  bw_rules_free(rs);
}

static void test_hint_is_parsed(void **state) {
  (void)state;
  bw_rules *rs = fresh();
  assert_int_equal(load(rs, "hint:io api=mypool hint=\"use my_io_thread()\"\n"
                            "hint:sync-over-async api=mypool hint=x\n"
                            "hint:io api=other hint=y\n"),
                   0);
  assert_int_equal(bw_rules_hint_count(rs), 3);
  const bw_hint_rule *h = bw_rules_find_hint(rs, "mypool", BW_CATEGORY_IO);
  assert_non_null(h);
  assert_ptr_equal(h, bw_rules_hint_at(rs, 0));
  assert_string_equal(h->hint, "use my_io_thread()");
  assert_string_equal(h->origin.file, "t.rules");
  assert_string_equal(
      bw_rules_find_hint(rs, "mypool", BW_CATEGORY_SYNC_OVER_ASYNC)->hint, "x");
  assert_string_equal(bw_rules_find_hint(rs, "other", BW_CATEGORY_IO)->hint,
                      "y");
  assert_null(bw_rules_find_hint(rs, "mypool", BW_CATEGORY_SLEEP));
  assert_null(bw_rules_find_hint(rs, NULL, BW_CATEGORY_IO));
  assert_null(bw_rules_hint_at(rs, 3));
  bw_rules_free(rs);
}

static void test_err_hint_unknown_category(void **state) {
  (void)state;
  expect_error("hint:disk api=x hint=y\n",
               "t.rules:1:6: error: unknown category 'disk'");
}

static void test_err_hint_needs_api_and_hint(void **state) {
  (void)state;
  expect_error("hint:io hint=y\n", "t.rules:1:1: error: missing required key "
                                   "'api' in hint rule for 'io'");
  expect_error("hint:io api=x\n", "t.rules:1:1: error: missing required key "
                                  "'hint' in hint rule for 'io'");
}

static void test_err_duplicate_hint_rolls_back(void **state) {
  (void)state;
  bw_rules *rs = fresh();
  assert_int_equal(load(rs, "hint:io api=x hint=a\n"), 0);
  assert_int_equal(load(rs, "hint:dns api=x hint=b\nhint:io api=x hint=c\n"),
                   -EINVAL);
  assert_string_equal(last_error, "t.rules:2:6: error: duplicate hint rule for "
                                  "'io' on api 'x' (first defined at "
                                  "t.rules:1)");
  assert_int_equal(bw_rules_hint_count(rs), 1);
  assert_null(bw_rules_find_hint(rs, "x", BW_CATEGORY_DNS));
  bw_rules_free(rs);
}

/* The packs: pools made for blocking work and the functions that post. */
static void test_packs_mark_offload_pools_and_posts(void **state) {
  (void)state;
  bw_rules *rs = fresh();
  assert_int_equal(bw_rules_load_default(rs, NULL), 0);
  static const char *const offload[] = {
      "uv_queue_work", "g_thread_pool_new", "g_thread_pool_new_full",
      "g_task_run_in_thread", "g_task_run_in_thread_sync"};
  for (size_t i = 0; i < sizeof(offload) / sizeof(offload[0]); i++) {
    const bw_entry_rule *e = bw_rules_find_entry(rs, offload[i]);
    assert_non_null(e);
    assert_int_equal(e->callbacks[0].runs_on, BW_RUNS_ON_POOL);
    assert_int_equal(e->callbacks[0].pool_kind, BW_POOL_OFFLOAD);
  }
  /* uv_queue_work's after_work_cb runs on the loop. */
  assert_int_equal(bw_rules_find_entry(rs, "uv_queue_work")->n_callbacks, 2);
  assert_int_equal(bw_rules_find_entry(rs, "bw_submit")->callbacks[0].pool_kind,
                   BW_POOL_GENERAL);
  assert_int_equal(
      bw_rules_find_entry(rs, "bw_run_blocking")->callbacks[0].pool_kind,
      BW_POOL_BLOCKING);
  static const char *const posts[][2] = {
      {"uv_async_send", "uv_async_init"},
      {"g_task_return_pointer", "g_task_new"},
      {"g_task_return_error", "g_task_new"},
      {"event_active", "event_new"}};
  for (size_t i = 0; i < sizeof(posts) / sizeof(posts[0]); i++) {
    const bw_post_rule *p = bw_rules_find_post(rs, posts[i][0]);
    assert_non_null(p);
    assert_string_equal(p->from, posts[i][1]);
    /* What it posts was registered by an entry the packs know. */
    assert_non_null(bw_rules_find_entry(rs, p->from));
  }
  bw_rules_free(rs);
}

/* On the bundled pool the hints name the runtime's non-blocking toolbox. */
static void test_blockwatch_pack_hints_name_the_toolbox(void **state) {
  (void)state;
  bw_rules *rs = fresh();
  assert_int_equal(bw_rules_load_default(rs, NULL), 0);
  static const struct {
    bw_rule_category cat;
    const char *names;
  } hints[] = {{BW_CATEGORY_IO, "bw_run_blocking()"},
               {BW_CATEGORY_PROCESS, "bw_run_blocking()"},
               {BW_CATEGORY_DNS, "bw_run_blocking()"},
               {BW_CATEGORY_SLEEP, "bw_delay()"},
               {BW_CATEGORY_WAIT, "bw_event_wait()"},
               {BW_CATEGORY_WAIT, "bw_semaphore_acquire()"}};
  for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++) {
    const bw_hint_rule *h = bw_rules_find_hint(rs, "blockwatch", hints[i].cat);
    assert_non_null(h);
    assert_non_null(strstr(h->hint, hints[i].names));
  }
  bw_rules_free(rs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_entry_kind_is_parsed),
      cmocka_unit_test(test_pool_kind_names_and_categories),
      cmocka_unit_test(test_fds_is_parsed),
      cmocka_unit_test(test_err_unknown_pool_kind),
      cmocka_unit_test(test_err_kind_on_a_loop),
      cmocka_unit_test(test_posts_is_parsed),
      cmocka_unit_test(test_err_posts_needs_from),
      cmocka_unit_test(test_err_posts_bad_from),
      cmocka_unit_test(test_err_posts_unknown_key),
      cmocka_unit_test(test_err_duplicate_posts_across_loads),
      cmocka_unit_test(test_failed_load_drops_its_posts),
      cmocka_unit_test(test_packs_mark_offload_pools_and_posts),
      cmocka_unit_test(test_hint_is_parsed),
      cmocka_unit_test(test_err_hint_unknown_category),
      cmocka_unit_test(test_passes_is_parsed),
      cmocka_unit_test(test_err_passes_bad_lines),
      cmocka_unit_test(test_err_hint_needs_api_and_hint),
      cmocka_unit_test(test_err_duplicate_hint_rolls_back),
      cmocka_unit_test(test_blockwatch_pack_hints_name_the_toolbox),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
