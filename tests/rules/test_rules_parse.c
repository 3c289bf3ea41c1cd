/* cmocka tests of the rules loader: the format, every error path (with its
 * exact file:line:column text), conditions, entries, includes, categories,
 * lookups and the all-or-nothing rollback of a failed load.
 *
 * BW_TEST_DATA_DIR (set by CMake) holds the include fixtures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blockwatch/rules.h"

/* ---- fixture: a fresh set whose callback copies every error ---- */

typedef struct seen {
  bw_rules *rs;
  char errors[16][512];
  unsigned lines[16], columns[16];
  size_t n;
} seen;

static void on_error(void *ctx, const bw_rules_error *err) {
  seen *s = ctx;
  if (s->n < 16) {
    snprintf(s->errors[s->n], sizeof(s->errors[0]), "%s", err->formatted);
    s->lines[s->n] = err->line;
    s->columns[s->n] = err->column;
  }
  s->n++;
}

static int setup(void **state) {
  seen *s = calloc(1, sizeof(*s));
  if (s == NULL)
    return -1;
  s->rs = bw_rules_create();
  if (s->rs == NULL) {
    free(s);
    return -1;
  }
  bw_rules_set_error_callback(s->rs, on_error, s);
  *state = s;
  return 0;
}

static int teardown(void **state) {
  seen *s = *state;
  bw_rules_free(s->rs);
  free(s);
  return 0;
}

static int load(seen *s, const char *text) {
  return bw_rules_load_string(s->rs, "t.rules", text, strlen(text));
}

/* Loads `text`, which must fail with exactly one error, `expected`, and
 * leave the set empty. */
static void expect_error(seen *s, const char *text, const char *expected) {
  size_t before = s->n;
  assert_int_equal(load(s, text), -EINVAL);
  assert_int_equal(s->n - before, 1);
  assert_string_equal(s->errors[before], expected);
  assert_int_equal(bw_rules_blocking_count(s->rs), 0);
  assert_int_equal(bw_rules_entry_count(s->rs), 0);
  assert_int_equal(bw_rules_allow_count(s->rs), 0);
}

#define SEEN seen *s = *state

/* ---- the happy path ---- */

static void test_blocking_rule_fields_are_parsed(void **state) {
  SEEN;
  assert_int_equal(
      load(s, "# a comment\n"
              "\n"
              "  blocking:  my_sleep category=sleep severity=error "
              "message=\"my_sleep() \\\"naps\\\" \\\\ here\" hint=use_bw_delay "
              "api=mine # trailing comment\n"),
      0);
  assert_int_equal(s->n, 0);
  const bw_blocking_rule *r = bw_rules_find_blocking(s->rs, "my_sleep");
  assert_non_null(r);
  assert_string_equal(r->function, "my_sleep");
  assert_string_equal(r->id, "blocking-sleep");
  assert_int_equal(r->category, BW_CATEGORY_SLEEP);
  assert_int_equal(r->severity, BW_SEVERITY_ERROR);
  assert_string_equal(r->message, "my_sleep() \"naps\" \\ here");
  assert_string_equal(r->hint, "use_bw_delay");
  assert_string_equal(r->api, "mine");
  assert_string_equal(r->origin.file, "t.rules");
  assert_int_equal(r->origin.line, 3);
  assert_int_equal(r->n_unless, 0);
}

static void test_blocking_rule_defaults(void **state) {
  SEEN;
  assert_int_equal(load(s, "blocking:zz_wait category=sync-over-async\n"), 0);
  const bw_blocking_rule *r = bw_rules_find_blocking(s->rs, "zz_wait");
  assert_non_null(r);
  assert_int_equal(r->severity, BW_SEVERITY_WARNING);
  assert_string_equal(r->message,
                      "zz_wait() waits synchronously for asynchronous work");
  assert_non_null(strstr(r->hint, "bw_then"));
  /* The api defaults to the file name without ".rules". */
  assert_string_equal(r->api, "t");
  assert_string_equal(r->id, "blocking-sync-over-async");
}

static void test_crlf_and_missing_final_newline(void **state) {
  SEEN;
  assert_int_equal(load(s, "blocking:a category=io\r\nblocking:b category=io"),
                   0);
  assert_non_null(bw_rules_find_blocking(s->rs, "a"));
  assert_non_null(bw_rules_find_blocking(s->rs, "b"));
}

static void test_text_need_not_be_nul_terminated(void **state) {
  SEEN;
  const char *text = "blocking:a category=io\nblocking:b category=BROKEN";
  /* Only the first line is inside len. */
  assert_int_equal(bw_rules_load_string(s->rs, "t.rules", text, 23), 0);
  assert_int_equal(bw_rules_blocking_count(s->rs), 1);
}

static void test_entry_callbacks_merge_across_lines(void **state) {
  SEEN;
  assert_int_equal(load(s, "entry:q_work arg=2 on=pool\n"
                           "entry:q_work arg=3 on=loop\n"
                           "entry:q_spawn arg=2 field=exit_cb on=loop api=x\n"
                           "entry:q_attach object=0 setter=q_set_cb arg=1 "
                           "on=loop\n"),
                   0);
  const bw_entry_rule *e = bw_rules_find_entry(s->rs, "q_work");
  assert_non_null(e);
  assert_string_equal(e->api, "t");
  assert_int_equal(e->n_callbacks, 2);
  assert_int_equal(e->callbacks[0].kind, BW_CALLBACK_ARG);
  assert_int_equal(e->callbacks[0].arg, 2);
  assert_int_equal(e->callbacks[0].runs_on, BW_RUNS_ON_POOL);
  assert_int_equal(e->callbacks[0].object, -1);
  assert_null(e->callbacks[0].field);
  assert_int_equal(e->callbacks[1].arg, 3);
  assert_int_equal(e->callbacks[1].runs_on, BW_RUNS_ON_LOOP);
  assert_int_equal(e->callbacks[1].origin.line, 2);

  e = bw_rules_find_entry(s->rs, "q_spawn");
  assert_non_null(e);
  assert_string_equal(e->api, "x");
  assert_int_equal(e->callbacks[0].kind, BW_CALLBACK_FIELD);
  assert_int_equal(e->callbacks[0].arg, 2);
  assert_string_equal(e->callbacks[0].field, "exit_cb");

  e = bw_rules_find_entry(s->rs, "q_attach");
  assert_non_null(e);
  assert_int_equal(e->callbacks[0].kind, BW_CALLBACK_SETTER);
  assert_int_equal(e->callbacks[0].arg, 1);
  assert_int_equal(e->callbacks[0].object, 0);
  assert_string_equal(e->callbacks[0].setter, "q_set_cb");
  assert_null(bw_rules_find_entry(s->rs, "q_set_cb"));
  assert_int_equal(bw_rules_entry_count(s->rs), 3);
}

/* ---- conditions ---- */

static const bw_rule_cond *only_cond(seen *s, const char *unless) {
  char text[256];
  snprintf(text, sizeof(text), "blocking:f category=io unless=\"%s\"\n",
           unless);
  assert_int_equal(load(s, text), 0);
  const bw_blocking_rule *r = bw_rules_lookup_blocking(s->rs, "f");
  assert_non_null(r);
  assert_int_equal(r->n_unless, 1);
  return &r->unless[0];
}

static void test_cond_equals_number(void **state) {
  SEEN;
  const bw_rule_cond *c = only_cond(s, "arg3 is 0");
  assert_int_equal(c->kind, BW_COND_EQUALS);
  assert_int_equal(c->arg, 3);
  assert_int_equal(c->value, 0);
  assert_null(c->name);
}

static void test_cond_equals_named_constant(void **state) {
  SEEN;
  const bw_rule_cond *c = only_cond(s, "arg2 is FALSE=0");
  assert_int_equal(c->kind, BW_COND_EQUALS);
  assert_int_equal(c->arg, 2);
  assert_string_equal(c->name, "FALSE");
  assert_int_equal(c->value, 0);
}

static void test_cond_equals_negative_and_hex(void **state) {
  SEEN;
  assert_int_equal(load(s, "blocking:f category=io unless=\"arg0 is -1\" "
                           "unless=\"arg1 is MASK=0x7F\"\n"),
                   0);
  const bw_blocking_rule *r = bw_rules_lookup_blocking(s->rs, "f");
  assert_int_equal(r->n_unless, 2);
  assert_int_equal(r->unless[0].value, -1);
  assert_int_equal(r->unless[1].value, 0x7f);
  assert_string_equal(r->unless[1].name, "MASK");
}

static void test_cond_has_flag(void **state) {
  SEEN;
  const bw_rule_cond *c = only_cond(s, "arg2 has WNOHANG=1");
  assert_int_equal(c->kind, BW_COND_HAS_FLAG);
  assert_int_equal(c->arg, 2);
  assert_string_equal(c->name, "WNOHANG");
  assert_int_equal(c->value, 1);
}

static void test_cond_is_null(void **state) {
  SEEN;
  const bw_rule_cond *c = only_cond(s, "arg1 is NULL");
  assert_int_equal(c->kind, BW_COND_IS_NULL);
  assert_int_equal(c->arg, 1);
}

static void test_cond_not_null(void **state) {
  SEEN;
  const bw_rule_cond *c = only_cond(s, "arg6  is  not  NULL");
  assert_int_equal(c->kind, BW_COND_NOT_NULL);
  assert_int_equal(c->arg, 6);
}

static void test_cond_nonblocking_fd(void **state) {
  SEEN;
  const bw_rule_cond *c = only_cond(s, "arg0 is nonblocking-fd");
  assert_int_equal(c->kind, BW_COND_NONBLOCKING_FD);
  assert_int_equal(c->arg, 0);
}

static void test_cond_nonblocking_file(void **state) {
  SEEN;
  const bw_rule_cond *c = only_cond(s, "arg2 is nonblocking-file");
  assert_int_equal(c->kind, BW_COND_NONBLOCKING_FILE);
}

static void test_cond_nonblocking_object(void **state) {
  SEEN;
  const bw_rule_cond *c = only_cond(s, "arg0 is nonblocking-object");
  assert_int_equal(c->kind, BW_COND_NONBLOCKING_OBJECT);
  assert_int_equal(c->arg, 0);
  assert_string_equal(bw_cond_kind_name(BW_COND_NONBLOCKING_OBJECT),
                      "is nonblocking-object");
}

static void test_cond_path_under(void **state) {
  SEEN;
  const bw_rule_cond *c = only_cond(s, "arg0 is under /proc/");
  assert_int_equal(c->kind, BW_COND_PATH_UNDER);
  assert_int_equal(c->arg, 0);
  assert_string_equal(c->name, "/proc/");
}

static void test_cond_made_by(void **state) {
  SEEN;
  const bw_rule_cond *c = only_cond(s, "arg0 is made-by f_new|g_new");
  assert_int_equal(c->kind, BW_COND_MADE_BY);
  assert_int_equal(c->arg, 0);
  assert_string_equal(c->name, "f_new|g_new");
  assert_string_equal(bw_cond_kind_name(BW_COND_MADE_BY),
                      "is made-by <function>");
}

static void test_cond_cancelled(void **state) {
  SEEN;
  const bw_rule_cond *c = only_cond(s, "arg2 is cancelled");
  assert_int_equal(c->kind, BW_COND_CANCELLED);
  assert_int_equal(c->arg, 2);
  assert_string_equal(bw_cond_kind_name(BW_COND_CANCELLED), "is cancelled");
}

static void test_cond_made_by_needs_function_names(void **state) {
  SEEN;
  expect_error(s,
               "blocking:f category=io unless=\"arg0 is made-by f_new|2x\"\n",
               "t.rules:1:54: error: bad function name '2x' in condition");
}

static void test_cond_on_a_field(void **state) {
  SEEN;
  const bw_rule_cond *c =
      only_cond(s, "arg2->ai_flags has AI_NUMERICHOST=4|AI_NUMERICSERV=0x400");
  assert_int_equal(c->kind, BW_COND_HAS_FLAG);
  assert_int_equal(c->arg, 2);
  assert_string_equal(c->field, "ai_flags");
  assert_int_equal(c->value, 0x404);
  assert_string_equal(c->name, "AI_NUMERICHOST|AI_NUMERICSERV");
}

static void test_cond_on_a_field_is_a_constant_or_a_flag(void **state) {
  SEEN;
  expect_error(s,
               "blocking:f category=io unless=\"arg0->fd is nonblocking-fd\"\n",
               "t.rules:1:31: error: a field condition takes 'is <constant>' "
               "or 'has <flag>': 'arg0->fd is nonblocking-fd'");
  expect_error(s, "blocking:f category=io unless=\"arg0->2x is 0\"\n",
               "t.rules:1:31: error: bad field name '2x' in condition");
  expect_error(s, "nonblocking:f fd=0 when=\"arg1->flags has 1\"\n",
               "t.rules:1:25: error: a field condition is only valid in "
               "'unless', not 'when'");
}

static void test_cond_path_under_needs_a_path(void **state) {
  SEEN;
  expect_error(s, "blocking:f category=io unless=\"arg0 is under proc/\"\n",
               "t.rules:1:31: error: bad path prefix 'proc/' (expected an "
               "absolute path)");
}

static void test_cond_ready(void **state) {
  SEEN;
  const bw_rule_cond *c = only_cond(s, "arg0 is ready");
  assert_int_equal(c->kind, BW_COND_READY);
  assert_int_equal(c->arg, 0);
  assert_string_equal(bw_cond_kind_name(BW_COND_READY), "is ready");
}

static void test_cond_has_room(void **state) {
  SEEN;
  const bw_rule_cond *c = only_cond(s, "arg0 has room for arg2");
  assert_int_equal(c->kind, BW_COND_HAS_ROOM);
  assert_int_equal(c->arg, 0);
  assert_int_equal(c->value, 2);
  assert_string_equal(bw_cond_kind_name(BW_COND_HAS_ROOM),
                      "has room for <argM>");
}

static void test_cond_has_room_errors(void **state) {
  SEEN;
  expect_error(s, "blocking:f category=io unless=\"arg0 has room for 2\"\n",
               "t.rules:1:31: error: bad condition 'arg0 has room for 2': "
               "expected 'argN has room for argM'");
  expect_error(s, "blocking:f category=io unless=\"arg0 is room for arg2\"\n",
               "t.rules:1:31: error: bad condition 'arg0 is room for arg2'");
  expect_error(s, "blocking:f category=io unless=\"arg0 has room\"\n",
               "t.rules:1:31: error: bad condition 'arg0 has room': "
               "expected 'argN has room for argM'");
}

static void test_cond_zero_timeout(void **state) {
  SEEN;
  const bw_rule_cond *c = only_cond(s, "arg4 is zero-timeout");
  assert_int_equal(c->kind, BW_COND_ZERO_TIMEOUT);
  assert_int_equal(c->arg, 4);
}

static void test_cond_max_four(void **state) {
  SEEN;
  assert_int_equal(load(s, "blocking:f category=io unless=\"arg0 is 0\" "
                           "unless=\"arg1 is 0\" unless=\"arg2 is 0\" "
                           "unless=\"arg31 is 0\"\n"),
                   0);
  const bw_blocking_rule *r = bw_rules_lookup_blocking(s->rs, "f");
  assert_int_equal(r->n_unless, BW_RULE_MAX_CONDS);
  assert_int_equal(r->unless[3].arg, 31);
}

/* ---- error paths: one line each, exact text ---- */

static void test_err_unknown_kind(void **state) {
  expect_error(*state, "blockin:sleep category=sleep\n",
               "t.rules:1:1: error: unknown rule kind 'blockin' (expected "
               "blocking, entry, posts, passes, nonblocking, ready, hint, "
               "allow, include, enable or disable)");
}

static void test_err_missing_colon(void **state) {
  expect_error(*state, "blocking sleep category=sleep\n",
               "t.rules:1:9: error: expected ':' after 'blocking'");
}

static void test_err_missing_subject(void **state) {
  expect_error(*state, "blocking:   # nothing\n",
               "t.rules:1:13: error: missing function name after "
               "'blocking:'");
}

static void test_err_empty_quoted_subject(void **state) {
  expect_error(*state, "include: \"\"\n",
               "t.rules:1:10: error: empty file name after 'include:'");
}

static void test_err_invalid_function_name(void **state) {
  expect_error(*state, "blocking:1sleep category=sleep\n",
               "t.rules:1:10: error: invalid function name '1sleep'");
}

static void test_err_unknown_key(void **state) {
  expect_error(*state, "blocking:sleep category=sleep colour=red\n",
               "t.rules:1:31: error: unknown key 'colour' in blocking rule");
}

static void test_err_expected_key_value(void **state) {
  expect_error(*state, "blocking:sleep category\n",
               "t.rules:1:16: error: expected key=value, got 'category'");
}

static void test_err_duplicate_key(void **state) {
  expect_error(*state, "blocking:sleep category=sleep category=wait\n",
               "t.rules:1:31: error: duplicate key 'category'");
}

static void test_err_empty_value(void **state) {
  expect_error(*state, "blocking:sleep category= severity=note\n",
               "t.rules:1:25: error: empty value for key 'category'");
}

static void test_err_unterminated_string(void **state) {
  expect_error(*state, "blocking:sleep category=sleep message=\"never closed\n",
               "t.rules:1:39: error: unterminated string '\"never closed'");
}

static void test_err_unterminated_string_after_escape(void **state) {
  expect_error(*state, "blocking:sleep category=sleep message=\"x\\\"\n",
               "t.rules:1:39: error: unterminated string '\"x\\\"'");
}

static void test_err_bad_escape(void **state) {
  expect_error(*state, "blocking:sleep category=sleep message=\"a\\qb\"\n",
               "t.rules:1:41: error: bad escape '\\q' in string (only \\\" "
               "and \\\\ are allowed)");
}

static void test_err_text_glued_to_string(void **state) {
  expect_error(*state, "blocking:sleep category=sleep message=\"a\"b\n",
               "t.rules:1:42: error: expected a space after the string, got "
               "'b'");
}

static void test_err_quote_inside_bare_value(void **state) {
  expect_error(*state, "blocking:sleep category=sleep message=a\"b\"\n",
               "t.rules:1:39: error: unexpected '\"' inside value 'a\"b\"' "
               "(quote the whole value)");
}

static void test_err_missing_category(void **state) {
  expect_error(*state, "  blocking:sleep severity=note\n",
               "t.rules:1:3: error: missing required key 'category' in "
               "blocking rule for 'sleep'");
}

static void test_err_unknown_category(void **state) {
  expect_error(*state, "blocking:sleep category=slep\n",
               "t.rules:1:25: error: unknown category 'slep'");
}

static void test_err_unknown_severity(void **state) {
  expect_error(*state, "blocking:sleep category=sleep severity=fatal\n",
               "t.rules:1:40: error: unknown severity 'fatal' (expected note, "
               "warning or error)");
}

static void test_err_bad_condition(void **state) {
  expect_error(*state, "blocking:f category=io unless=\"arg1 maybe 0\"\n",
               "t.rules:1:31: error: bad condition 'arg1 maybe 0': expected "
               "'argN is ...' or 'argN has ...'");
}

static void test_err_bad_condition_not(void **state) {
  expect_error(*state, "blocking:f category=io unless=\"arg1 is not 0\"\n",
               "t.rules:1:31: error: bad condition 'arg1 is not 0'");
}

static void test_err_bad_argument_index_in_condition(void **state) {
  expect_error(*state, "blocking:f category=io unless=\"arg32 is 0\"\n",
               "t.rules:1:31: error: bad argument index 'arg32' (expected "
               "arg0 to arg31)");
  expect_error(*state, "blocking:f category=io unless=\"argx is 0\"\n",
               "t.rules:1:31: error: bad argument index 'argx' (expected "
               "arg0 to arg31)");
}

static void test_err_bad_number(void **state) {
  expect_error(*state, "blocking:f category=io unless=\"arg0 is 12abc\"\n",
               "t.rules:1:31: error: bad number '12abc' in condition");
  expect_error(*state, "blocking:f category=io unless=\"arg0 is X=0x\"\n",
               "t.rules:1:31: error: bad number '0x' in condition");
}

static void test_err_number_out_of_range(void **state) {
  expect_error(
      *state, "blocking:f category=io unless=\"arg0 is 9223372036854775808\"\n",
      "t.rules:1:31: error: bad number '9223372036854775808' in "
      "condition");
}

static void test_most_negative_number_is_accepted(void **state) {
  SEEN;
  assert_int_equal(
      load(s, "blocking:f category=io unless=\"arg0 is -9223372036854775808\""),
      0);
  assert_true(bw_rules_lookup_blocking(s->rs, "f")->unless[0].value ==
              INT64_MIN);
}

static void test_err_constant_without_value(void **state) {
  expect_error(*state, "blocking:f category=io unless=\"arg2 has WNOHANG\"\n",
               "t.rules:1:31: error: constant 'WNOHANG' needs its value for "
               "the shim: write WNOHANG=<number>");
}

static void test_err_bad_constant_name(void **state) {
  expect_error(*state, "blocking:f category=io unless=\"arg2 has 9X=1\"\n",
               "t.rules:1:31: error: bad constant name '9X' in condition");
}

static void test_err_flag_without_bits(void **state) {
  expect_error(*state, "blocking:f category=io unless=\"arg2 has NONE=0\"\n",
               "t.rules:1:31: error: flag 'NONE=0' has no bits set");
}

static void test_err_too_many_conditions(void **state) {
  expect_error(*state,
               "blocking:f category=io unless=\"arg0 is 0\" unless=\"arg1 is "
               "0\" unless=\"arg2 is 0\" unless=\"arg3 is 0\" unless=\"arg4 "
               "is 0\"\n",
               "t.rules:1:100: error: too many 'unless' conditions (at most "
               "4)");
}

static void test_err_condition_too_long(void **state) {
  char text[600];
  char cond[300];
  memset(cond, 'x', sizeof(cond) - 1);
  cond[sizeof(cond) - 1] = '\0';
  snprintf(text, sizeof(text), "blocking:f category=io unless=%s\n", cond);
  expect_error(*state, text,
               "t.rules:1:31: error: condition too long "
               "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx."
               "..'");
}

static void test_err_too_many_fields(void **state) {
  char text[1024] = "blocking:f category=io";
  for (int i = 0; i < 16; i++)
    strcat(text, " unless=\"arg0 is 0\"");
  expect_error(*state, text,
               "t.rules:1:309: error: too many fields (at most 16)");
}

static void test_err_duplicate_blocking_rule(void **state) {
  expect_error(*state,
               "blocking:sleep category=sleep\n"
               "# again\n"
               "blocking:sleep category=wait\n",
               "t.rules:3:10: error: duplicate blocking rule for 'sleep' "
               "(first defined at t.rules:1)");
}

static void test_err_duplicate_rule_across_loads(void **state) {
  SEEN;
  assert_int_equal(
      bw_rules_load_string(s->rs, "first.rules", "blocking:f category=io", 22),
      0);
  assert_int_equal(load(s, "blocking:f category=io\n"), -EINVAL);
  assert_string_equal(s->errors[0], "t.rules:1:10: error: duplicate blocking "
                                    "rule for 'f' (first defined at "
                                    "first.rules:1)");
}

static void test_err_entry_missing_arg(void **state) {
  expect_error(*state, "entry:q on=pool\n",
               "t.rules:1:1: error: missing required key 'arg' in entry rule "
               "for 'q'");
}

static void test_err_entry_missing_on(void **state) {
  expect_error(*state, "entry:q arg=1\n",
               "t.rules:1:1: error: missing required key 'on' in entry rule "
               "for 'q'");
}

static void test_err_entry_bad_arg_index(void **state) {
  expect_error(*state, "entry:q arg=-1 on=pool\n",
               "t.rules:1:13: error: bad argument index '-1' for 'arg' "
               "(expected 0 to 31)");
  expect_error(*state, "entry:q arg=32 on=pool\n",
               "t.rules:1:13: error: bad argument index '32' for 'arg' "
               "(expected 0 to 31)");
  expect_error(*state, "entry:q arg=1x on=pool\n",
               "t.rules:1:13: error: bad argument index '1x' for 'arg' "
               "(expected 0 to 31)");
}

static void test_err_entry_bad_on(void **state) {
  expect_error(*state, "entry:q arg=1 on=worker\n",
               "t.rules:1:18: error: unknown value 'worker' for 'on' "
               "(expected pool or loop)");
}

static void test_err_entry_field_and_setter(void **state) {
  expect_error(*state, "entry:q arg=1 on=pool field=cb setter=s object=0\n",
               "t.rules:1:32: error: 'field' and 'setter' cannot be combined");
}

static void test_err_entry_bad_field_name(void **state) {
  expect_error(*state, "entry:q arg=1 on=pool field=a.b\n",
               "t.rules:1:29: error: invalid field name 'a.b'");
}

static void test_err_entry_setter_without_object(void **state) {
  expect_error(*state, "entry:q arg=1 on=loop setter=set_cb\n",
               "t.rules:1:23: error: 'setter' needs 'object' (the argument "
               "the callback was set on)");
}

static void test_err_entry_object_without_setter(void **state) {
  expect_error(*state, "entry:q arg=1 on=loop object=0\n",
               "t.rules:1:23: error: 'object' is only valid with 'setter'");
}

static void test_err_entry_bad_object_index(void **state) {
  expect_error(*state, "entry:q arg=1 on=loop setter=s object=x\n",
               "t.rules:1:39: error: bad argument index 'x' for 'object' "
               "(expected 0 to 31)");
}

static void test_err_entry_duplicate_callback(void **state) {
  expect_error(*state, "entry:q arg=1 on=pool\nentry:q  arg=1 on=loop\n",
               "t.rules:2:10: error: duplicate callback arg=1 for entry 'q' "
               "(first defined at t.rules:1)");
}

static void test_err_entry_conflicting_api(void **state) {
  expect_error(*state,
               "entry:q arg=1 on=pool api=a\nentry:q arg=2 on=pool "
               "api=b\n",
               "t.rules:2:27: error: conflicting api 'b' for entry 'q' (first "
               "defined with api 'a' at t.rules:1)");
}

static void test_err_entry_too_many_callbacks(void **state) {
  expect_error(*state,
               "entry:q arg=0 on=pool\nentry:q arg=1 on=pool\n"
               "entry:q arg=2 on=pool\nentry:q arg=3 on=pool\n"
               "entry:q arg=4 on=pool\n",
               "t.rules:5:1: error: too many callbacks for entry 'q' (at most "
               "4)");
}

static void test_err_allow_bad_pattern(void **state) {
  expect_error(*state, "allow:foo/bar\n",
               "t.rules:1:7: error: invalid function pattern 'foo/bar'");
}

static void test_err_allow_duplicate(void **state) {
  expect_error(*state, "allow:init_*\nallow:  init_*\n",
               "t.rules:2:9: error: duplicate allow rule for 'init_*' (first "
               "defined at t.rules:1)");
}

static void test_err_allow_unknown_key(void **state) {
  expect_error(*state, "allow:f why=x\n",
               "t.rules:1:9: error: unknown key 'why' in allow rule");
}

static void test_err_enable_unknown_category(void **state) {
  expect_error(*state, "enable: locks\n",
               "t.rules:1:9: error: unknown category 'locks'");
}

static void test_err_disable_trailing_text(void **state) {
  expect_error(*state, "disable: io now\n",
               "t.rules:1:13: error: unexpected text 'now' after disable");
}

static void test_err_include_trailing_text(void **state) {
  expect_error(*state, "include: a.rules b.rules\n",
               "t.rules:1:18: error: unexpected text 'b.rules' after include");
}

static void test_err_nul_byte(void **state) {
  SEEN;
  const char text[] = "blocking:f category=io\nblocking:g\0 category=io\n";
  assert_int_equal(
      bw_rules_load_string(s->rs, "t.rules", text, sizeof(text) - 1), -EINVAL);
  assert_int_equal(s->n, 1);
  assert_string_equal(s->errors[0],
                      "t.rules:2:11: error: NUL byte in rule text");
}

static void test_long_offending_text_is_cut(void **state) {
  char text[300];
  char name[200];
  memset(name, 'a', sizeof(name) - 1);
  name[sizeof(name) - 1] = '\0';
  name[0] = '9';
  snprintf(text, sizeof(text), "blocking:%s category=io\n", name);
  expect_error(
      *state, text,
      "t.rules:1:10: error: invalid function name "
      "'9aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa..."
      "'");
}

/* ---- many errors, error records, rollback ---- */

static void test_every_bad_line_is_reported(void **state) {
  SEEN;
  assert_int_equal(load(s, "blocking:a category=nope\n"
                           "blocking:ok category=io\n"
                           "entry:e arg=1\n"
                           "bogus\n"),
                   -EINVAL);
  assert_int_equal(s->n, 3);
  assert_int_equal(s->lines[0], 1);
  assert_int_equal(s->lines[1], 3);
  assert_int_equal(s->lines[2], 4);
  assert_int_equal(s->columns[0], 21);
  /* The good line was rolled back with the rest. */
  assert_null(bw_rules_lookup_blocking(s->rs, "ok"));
  /* The set's own list holds the same errors, with their parts. */
  assert_int_equal(bw_rules_error_count(s->rs), 3);
  const bw_rules_error *e = bw_rules_error_at(s->rs, 0);
  assert_string_equal(e->file, "t.rules");
  assert_int_equal(e->line, 1);
  assert_int_equal(e->column, 21);
  assert_string_equal(e->message, "unknown category 'nope'");
  assert_string_equal(e->formatted, s->errors[0]);
  assert_null(bw_rules_error_at(s->rs, 3));
}

static void test_errors_are_listed_without_callback(void **state) {
  (void)state;
  bw_rules *rs = bw_rules_create();
  assert_non_null(rs);
  assert_int_equal(bw_rules_load_string(rs, NULL, "enable: x", 9), -EINVAL);
  assert_int_equal(bw_rules_error_count(rs), 1);
  assert_string_equal(bw_rules_error_at(rs, 0)->formatted,
                      "<string>:1:9: error: unknown category 'x'");
  bw_rules_free(rs);
}

static void test_failed_load_restores_previous_state(void **state) {
  SEEN;
  assert_int_equal(load(s, "entry:q arg=1 on=pool\nblocking:a category=io\n"
                           "allow:x\n"),
                   0);
  assert_int_equal(bw_rules_load_string(s->rs, "u.rules",
                                        "entry:q arg=2 on=loop\n"
                                        "blocking:b category=io\n"
                                        "allow:y\n"
                                        "disable: io\nenable: lock\n"
                                        "blocking:a category=io\n",
                                        strlen("entry:q arg=2 on=loop\n"
                                               "blocking:b category=io\n"
                                               "allow:y\n"
                                               "disable: io\nenable: lock\n"
                                               "blocking:a category=io\n")),
                   -EINVAL);
  assert_int_equal(bw_rules_find_entry(s->rs, "q")->n_callbacks, 1);
  assert_null(bw_rules_lookup_blocking(s->rs, "b"));
  assert_int_equal(bw_rules_blocking_count(s->rs), 1);
  assert_int_equal(bw_rules_allow_count(s->rs), 1);
  assert_false(bw_rules_is_allowed(s->rs, "y"));
  assert_true(bw_rules_category_enabled(s->rs, BW_CATEGORY_IO));
  assert_false(bw_rules_category_enabled(s->rs, BW_CATEGORY_LOCK));
  /* And the set still works for a later, good load. */
  assert_int_equal(load(s, "blocking:b category=io\n"), 0);
  assert_non_null(bw_rules_find_blocking(s->rs, "b"));
}

/* ---- includes ---- */

static void path_of(char *out, size_t size, const char *name) {
  snprintf(out, size, "%s/%s", BW_TEST_DATA_DIR, name);
}

static void test_include_is_relative_to_including_file(void **state) {
  SEEN;
  char path[1024];
  path_of(path, sizeof(path), "main.rules");
  assert_int_equal(bw_rules_load_file(s->rs, path), 0);
  assert_int_equal(s->n, 0);
  assert_non_null(bw_rules_find_blocking(s->rs, "main_block"));
  const bw_entry_rule *e = bw_rules_find_entry(s->rs, "child_entry");
  assert_non_null(e);
  assert_string_equal(e->api, "child");
  assert_true(bw_rules_is_allowed(s->rs, "sibling_allowed"));
  const bw_allow_rule *a = bw_rules_find_allow(s->rs, "sibling_allowed");
  char expect[1100];
  snprintf(expect, sizeof(expect), "%s/sub/sibling.rules", BW_TEST_DATA_DIR);
  assert_string_equal(a->origin.file, expect);
}

static void test_include_cycle_is_an_error(void **state) {
  SEEN;
  char path[1024], expect[1400];
  path_of(path, sizeof(path), "cycle_a.rules");
  assert_int_equal(bw_rules_load_file(s->rs, path), -EINVAL);
  assert_int_equal(s->n, 1);
  snprintf(expect, sizeof(expect),
           "%s/cycle_b.rules:2:10: error: include cycle: "
           "'%s/cycle_a.rules' is already being loaded",
           BW_TEST_DATA_DIR, BW_TEST_DATA_DIR);
  assert_string_equal(s->errors[0], expect);
  assert_null(bw_rules_lookup_blocking(s->rs, "in_b"));
}

static void test_self_include_is_a_cycle(void **state) {
  SEEN;
  char path[1024], expect[1400];
  path_of(path, sizeof(path), "self.rules");
  assert_int_equal(bw_rules_load_file(s->rs, path), -EINVAL);
  snprintf(expect, sizeof(expect),
           "%s/self.rules:1:10: error: include cycle: '%s/self.rules' is "
           "already being loaded",
           BW_TEST_DATA_DIR, BW_TEST_DATA_DIR);
  assert_string_equal(s->errors[0], expect);
}

static void test_error_in_included_file_names_that_file(void **state) {
  SEEN;
  char path[1024], expect[1400];
  path_of(path, sizeof(path), "bad_include.rules");
  assert_int_equal(bw_rules_load_file(s->rs, path), -EINVAL);
  assert_int_equal(s->n, 1);
  snprintf(expect, sizeof(expect),
           "%s/bad_child.rules:1:21: error: unknown category 'nope'",
           BW_TEST_DATA_DIR);
  assert_string_equal(s->errors[0], expect);
}

static void test_missing_include_is_an_error(void **state) {
  SEEN;
  assert_int_equal(load(s, "\n  include: no/such.rules\n"), -EINVAL);
  assert_int_equal(s->n, 1);
  assert_string_equal(s->errors[0],
                      "t.rules:2:12: error: cannot open include "
                      "'no/such.rules': No such file or directory");
}

static void test_missing_file_returns_enoent(void **state) {
  SEEN;
  assert_int_equal(bw_rules_load_file(s->rs, "/nonexistent/x.rules"), -ENOENT);
  assert_int_equal(s->n, 1);
  assert_string_equal(s->errors[0],
                      "/nonexistent/x.rules: error: cannot open "
                      "'/nonexistent/x.rules': No such file or directory");
  assert_int_equal(s->lines[0], 0);
}

static void test_directory_is_not_a_rule_file(void **state) {
  SEEN;
  assert_int_equal(bw_rules_load_file(s->rs, BW_TEST_DATA_DIR), -EISDIR);
  assert_int_equal(s->n, 1);
  assert_non_null(strstr(s->errors[0], "error: cannot read '"));
}

static void test_device_is_not_a_rule_file(void **state) {
  SEEN;
  assert_int_equal(bw_rules_load_file(s->rs, "/dev/null"), -EINVAL);
  assert_string_equal(s->errors[0], "/dev/null: error: cannot read "
                                    "'/dev/null': not a regular file");
  /* Opening a FIFO with no writer would otherwise hang the loader. */
  char dir[] = "/tmp/bw_rules_test_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char fifo[64], text[128], expect[256];
  snprintf(fifo, sizeof(fifo), "%s/pipe.rules", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  snprintf(text, sizeof(text), "include: %s\n", fifo);
  int rc = load(s, text);
  unlink(fifo);
  rmdir(dir);
  assert_int_equal(rc, -EINVAL);
  snprintf(expect, sizeof(expect),
           "t.rules:1:10: error: cannot read include '%s': not a regular file",
           fifo);
  assert_string_equal(s->errors[1], expect);
}

static void test_include_depth_is_limited(void **state) {
  SEEN;
  char dir[] = "/tmp/bw_rules_depth_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[128], expect[512];
  /* d0 includes d1 ... includes d16: 17 levels, one too many. */
  for (int i = 0; i <= 16; i++) {
    snprintf(path, sizeof(path), "%s/d%d.rules", dir, i);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    if (i < 16)
      fprintf(fp, "include: d%d.rules\n", i + 1);
    fclose(fp);
  }
  snprintf(path, sizeof(path), "%s/d0.rules", dir);
  int rc = bw_rules_load_file(s->rs, path);
  assert_int_equal(rc, -EINVAL);
  assert_int_equal(s->n, 1);
  snprintf(expect, sizeof(expect),
           "%s/d15.rules:1:10: error: includes nested too deeply at "
           "'%s/d16.rules' (at most 16 levels)",
           dir, dir);
  assert_string_equal(s->errors[0], expect);
  /* 16 levels are fine. */
  snprintf(path, sizeof(path), "%s/d1.rules", dir);
  assert_int_equal(bw_rules_load_file(s->rs, path), 0);
  for (int i = 0; i <= 16; i++) {
    snprintf(path, sizeof(path), "%s/d%d.rules", dir, i);
    unlink(path);
  }
  rmdir(dir);
}

static void test_string_include_resolves_against_its_name(void **state) {
  SEEN;
  char name[1024];
  path_of(name, sizeof(name), "virtual.rules");
  const char *text = "include: sub/sibling.rules\n";
  assert_int_equal(bw_rules_load_string(s->rs, name, text, strlen(text)), 0);
  assert_true(bw_rules_is_allowed(s->rs, "sibling_allowed"));
}

/* ---- categories and lookups ---- */

static void test_default_categories(void **state) {
  SEEN;
  for (int c = 0; c < BW_CATEGORY_COUNT; c++)
    assert_int_equal(bw_rules_category_enabled(s->rs, (bw_rule_category)c),
                     c != BW_CATEGORY_LOCK);
  assert_int_equal(bw_rules_category_enabled(s->rs, BW_CATEGORY_COUNT), 0);
}

static void test_enable_disable_in_file(void **state) {
  SEEN;
  assert_int_equal(load(s, "blocking:m category=lock\nblocking:r category=io\n"
                           "enable: lock\ndisable:io # quiet\n"),
                   0);
  assert_true(bw_rules_category_enabled(s->rs, BW_CATEGORY_LOCK));
  assert_false(bw_rules_category_enabled(s->rs, BW_CATEGORY_IO));
  assert_non_null(bw_rules_find_blocking(s->rs, "m"));
  assert_null(bw_rules_find_blocking(s->rs, "r"));
  const bw_blocking_rule *r = bw_rules_lookup_blocking(s->rs, "r");
  assert_non_null(r);
  assert_false(bw_rules_is_active(s->rs, r));
}

static void test_set_category_api(void **state) {
  SEEN;
  assert_int_equal(load(s, "blocking:m category=lock\n"), 0);
  const bw_blocking_rule *m = bw_rules_lookup_blocking(s->rs, "m");
  assert_null(bw_rules_find_blocking(s->rs, "m"));
  assert_false(bw_rules_is_active(s->rs, m));
  assert_int_equal(bw_rules_set_category(s->rs, BW_CATEGORY_LOCK, 1), 0);
  assert_ptr_equal(bw_rules_find_blocking(s->rs, "m"), m);
  assert_true(bw_rules_is_active(s->rs, m));
  assert_int_equal(bw_rules_set_category(s->rs, BW_CATEGORY_COUNT, 1), -EINVAL);
  assert_int_equal(bw_rules_set_category(NULL, BW_CATEGORY_IO, 1), -EINVAL);
}

static void test_allow_exact_and_glob(void **state) {
  SEEN;
  assert_int_equal(load(s, "allow:main reason=\"startup code\"\n"
                           "allow:init_*\nallow:offload_?_sync\n"),
                   0);
  const bw_allow_rule *a = bw_rules_find_allow(s->rs, "main");
  assert_non_null(a);
  assert_string_equal(a->reason, "startup code");
  assert_true(bw_rules_is_allowed(s->rs, "init_"));
  assert_true(bw_rules_is_allowed(s->rs, "init_everything"));
  assert_true(bw_rules_is_allowed(s->rs, "offload_a_sync"));
  assert_false(bw_rules_is_allowed(s->rs, "offload_ab_sync"));
  assert_false(bw_rules_is_allowed(s->rs, "mainly"));
  assert_false(bw_rules_is_allowed(s->rs, "xinit_"));
  assert_string_equal(bw_rules_find_allow(s->rs, "init_x")->reason, "");
}

static void test_glob_patterns_backtrack(void **state) {
  SEEN;
  assert_int_equal(load(s, "allow:*_a*_b\nallow:???\n"), 0);
  assert_true(bw_rules_is_allowed(s->rs, "x_aa_a_b"));
  assert_true(bw_rules_is_allowed(s->rs, "_a_b"));
  assert_false(bw_rules_is_allowed(s->rs, "x_a_bc"));
  assert_true(bw_rules_is_allowed(s->rs, "abc"));
  assert_false(bw_rules_is_allowed(s->rs, "ab"));
}

/* The matcher behind allow rules, public for tools (the shim's worker_name). */
static void test_glob_match_directly(void **state) {
  (void)state;
  assert_true(bw_rules_glob_match("*_a*_b", "x_aa_a_b"));
  assert_false(bw_rules_glob_match("*_a*_b", "x_a_bc"));
  assert_true(bw_rules_glob_match("pool-*", "pool-12"));
  assert_true(bw_rules_glob_match("pool-*", "pool-"));
  assert_false(bw_rules_glob_match("pool-?", "pool-12"));
  assert_true(bw_rules_glob_match("", ""));
  assert_false(bw_rules_glob_match("", "x"));
  assert_true(bw_rules_glob_match("**", ""));
}

static void test_lookups_of_unknown_names(void **state) {
  SEEN;
  assert_null(bw_rules_find_blocking(s->rs, "nothing"));
  assert_null(bw_rules_find_entry(s->rs, "nothing"));
  assert_null(bw_rules_find_allow(s->rs, "nothing"));
  assert_int_equal(load(s, "blocking:a category=io\n"), 0);
  assert_null(bw_rules_find_blocking(s->rs, "b"));
  assert_null(bw_rules_find_blocking(s->rs, NULL));
  assert_null(bw_rules_find_blocking(NULL, "a"));
  assert_false(bw_rules_is_active(s->rs, NULL));
}

static void test_iteration_is_in_load_order(void **state) {
  SEEN;
  assert_int_equal(load(s, "blocking:c category=io\nblocking:a category=io\n"
                           "entry:e2 arg=0 on=pool\nentry:e1 arg=0 on=pool\n"
                           "allow:z\nallow:y\n"),
                   0);
  assert_int_equal(bw_rules_blocking_count(s->rs), 2);
  assert_string_equal(bw_rules_blocking_at(s->rs, 0)->function, "c");
  assert_string_equal(bw_rules_blocking_at(s->rs, 1)->function, "a");
  assert_null(bw_rules_blocking_at(s->rs, 2));
  assert_string_equal(bw_rules_entry_at(s->rs, 0)->function, "e2");
  assert_null(bw_rules_entry_at(s->rs, 2));
  assert_string_equal(bw_rules_allow_at(s->rs, 1)->pattern, "y");
  assert_null(bw_rules_allow_at(s->rs, 2));
}

static void test_many_rules_stay_findable(void **state) {
  SEEN;
  /* Enough rules to grow the hash index several times. */
  size_t cap = 1000 * 40;
  char *text = malloc(cap);
  assert_non_null(text);
  size_t len = 0;
  for (int i = 0; i < 1000; i++)
    len += (size_t)snprintf(text + len, cap - len,
                            "blocking:fn_%d category=io\n", i);
  assert_int_equal(bw_rules_load_string(s->rs, "t.rules", text, len), 0);
  free(text);
  char name[32];
  for (int i = 0; i < 1000; i++) {
    snprintf(name, sizeof(name), "fn_%d", i);
    const bw_blocking_rule *r = bw_rules_find_blocking(s->rs, name);
    assert_non_null(r);
    assert_string_equal(r->function, name);
  }
}

static void test_enum_names(void **state) {
  (void)state;
  bw_rule_category c;
  assert_string_equal(bw_rule_category_name(BW_CATEGORY_SYNC_OVER_ASYNC),
                      "sync-over-async");
  assert_string_equal(bw_rule_category_id(BW_CATEGORY_NESTED_LOOP),
                      "blocking-nested-loop");
  assert_non_null(bw_rule_category_description(BW_CATEGORY_DNS));
  assert_null(bw_rule_category_name(BW_CATEGORY_COUNT));
  assert_null(bw_rule_category_id((bw_rule_category)-1));
  assert_int_equal(bw_rule_category_parse("yield", &c), 0);
  assert_int_equal(c, BW_CATEGORY_YIELD);
  assert_int_equal(bw_rule_category_parse("Yield", &c), -EINVAL);
  assert_string_equal(bw_rule_severity_name(BW_SEVERITY_NOTE), "note");
  assert_null(bw_rule_severity_name((bw_rule_severity)7));
  assert_string_equal(bw_cond_kind_name(BW_COND_NONBLOCKING_FD),
                      "is nonblocking-fd");
  assert_null(bw_cond_kind_name(BW_COND_COUNT));
  assert_string_equal(bw_runs_on_name(BW_RUNS_ON_LOOP), "loop");
  for (int i = 0; i < BW_CATEGORY_COUNT; i++) {
    char id[64];
    snprintf(id, sizeof(id), "blocking-%s",
             bw_rule_category_name((bw_rule_category)i));
    assert_string_equal(bw_rule_category_id((bw_rule_category)i), id);
  }
}

static void test_null_arguments(void **state) {
  (void)state;
  assert_int_equal(bw_rules_load_string(NULL, "x", "", 0), -EINVAL);
  assert_int_equal(bw_rules_load_file(NULL, "x"), -EINVAL);
  assert_int_equal(bw_rules_load_default(NULL, NULL), -EINVAL);
  assert_int_equal(bw_rules_blocking_count(NULL), 0);
  assert_int_equal(bw_rules_error_count(NULL), 0);
  bw_rules_free(NULL);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      T(test_blocking_rule_fields_are_parsed),
      T(test_blocking_rule_defaults),
      T(test_crlf_and_missing_final_newline),
      T(test_text_need_not_be_nul_terminated),
      T(test_entry_callbacks_merge_across_lines),
      T(test_cond_equals_number),
      T(test_cond_equals_named_constant),
      T(test_cond_equals_negative_and_hex),
      T(test_cond_has_flag),
      T(test_cond_is_null),
      T(test_cond_not_null),
      T(test_cond_nonblocking_fd),
      T(test_cond_nonblocking_file),
      T(test_cond_nonblocking_object),
      T(test_cond_path_under),
      T(test_cond_made_by),
      T(test_cond_cancelled),
      T(test_cond_made_by_needs_function_names),
      T(test_cond_on_a_field),
      T(test_cond_on_a_field_is_a_constant_or_a_flag),
      T(test_cond_path_under_needs_a_path),
      T(test_cond_zero_timeout),
      T(test_cond_ready),
      T(test_cond_has_room),
      T(test_cond_has_room_errors),
      T(test_cond_max_four),
      T(test_err_unknown_kind),
      T(test_err_missing_colon),
      T(test_err_missing_subject),
      T(test_err_empty_quoted_subject),
      T(test_err_invalid_function_name),
      T(test_err_unknown_key),
      T(test_err_expected_key_value),
      T(test_err_duplicate_key),
      T(test_err_empty_value),
      T(test_err_unterminated_string),
      T(test_err_unterminated_string_after_escape),
      T(test_err_bad_escape),
      T(test_err_text_glued_to_string),
      T(test_err_quote_inside_bare_value),
      T(test_err_missing_category),
      T(test_err_unknown_category),
      T(test_err_unknown_severity),
      T(test_err_bad_condition),
      T(test_err_bad_condition_not),
      T(test_err_bad_argument_index_in_condition),
      T(test_err_bad_number),
      T(test_err_number_out_of_range),
      T(test_most_negative_number_is_accepted),
      T(test_err_constant_without_value),
      T(test_err_bad_constant_name),
      T(test_err_flag_without_bits),
      T(test_err_too_many_conditions),
      T(test_err_condition_too_long),
      T(test_err_too_many_fields),
      T(test_err_duplicate_blocking_rule),
      T(test_err_duplicate_rule_across_loads),
      T(test_err_entry_missing_arg),
      T(test_err_entry_missing_on),
      T(test_err_entry_bad_arg_index),
      T(test_err_entry_bad_on),
      T(test_err_entry_field_and_setter),
      T(test_err_entry_bad_field_name),
      T(test_err_entry_setter_without_object),
      T(test_err_entry_object_without_setter),
      T(test_err_entry_bad_object_index),
      T(test_err_entry_duplicate_callback),
      T(test_err_entry_conflicting_api),
      T(test_err_entry_too_many_callbacks),
      T(test_err_allow_bad_pattern),
      T(test_err_allow_duplicate),
      T(test_err_allow_unknown_key),
      T(test_err_enable_unknown_category),
      T(test_err_disable_trailing_text),
      T(test_err_include_trailing_text),
      T(test_err_nul_byte),
      T(test_long_offending_text_is_cut),
      T(test_every_bad_line_is_reported),
      T(test_errors_are_listed_without_callback),
      T(test_failed_load_restores_previous_state),
      T(test_include_is_relative_to_including_file),
      T(test_include_cycle_is_an_error),
      T(test_self_include_is_a_cycle),
      T(test_error_in_included_file_names_that_file),
      T(test_missing_include_is_an_error),
      T(test_missing_file_returns_enoent),
      T(test_directory_is_not_a_rule_file),
      T(test_device_is_not_a_rule_file),
      T(test_include_depth_is_limited),
      T(test_string_include_resolves_against_its_name),
      T(test_default_categories),
      T(test_enable_disable_in_file),
      T(test_set_category_api),
      T(test_allow_exact_and_glob),
      T(test_glob_patterns_backtrack),
      cmocka_unit_test(test_glob_match_directly),
      T(test_lookups_of_unknown_names),
      T(test_iteration_is_in_load_order),
      T(test_many_rules_stay_findable),
      T(test_enum_names),
      T(test_null_arguments),
  };
  return cmocka_run_group_tests_name("rules_parse", tests, NULL, NULL);
}
