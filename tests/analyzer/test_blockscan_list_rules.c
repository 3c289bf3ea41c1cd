/* test_blockscan_list_rules.c - blockscan --list-rules: every kind of rule
 * the loaded packs and files hold, one line each, as a rule file spells
 * its conditions.
 *
 * The rule file is written to a scratch directory (no fixture tree: there
 * is no code to scan) that the test removes.
 */
#include "run.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define TIMEOUT 60

/* Every shape of a nonblocking: rule: a descriptor argument or the
 * result, no condition, named and bare values of both kinds,
 * otherwise=blocking, an api of its own. */
static const char nonblock_rules[] =
    "nonblocking:my_set_nb   fd=0 when=\"arg1 is 0\" otherwise=blocking\n"
    "nonblocking:my_open_nb  fd=result when=\"arg1 has MY_NONBLOCK=0x800\" "
    "when=\"arg2 is NULL\"\n"
    "nonblocking:my_nb_ioctl fd=1 when=\"arg0 is MY_FIONBIO=0x5421\" "
    "when=\"arg2 has 1\" otherwise=blocking api=myio\n"
    "nonblocking:my_watch    fd=2\n";

typedef struct scratch {
  char dir[64];
  char rules[96];
} scratch;

static int make_scratch(void **state) {
  scratch *s = calloc(1, sizeof(*s));
  if (!s)
    return -1;
  snprintf(s->dir, sizeof(s->dir), "/tmp/bw_list_rules_XXXXXX");
  if (!mkdtemp(s->dir)) {
    free(s);
    return -1;
  }
  snprintf(s->rules, sizeof(s->rules), "%s/nonblock.rules", s->dir);
  FILE *f = fopen(s->rules, "w");
  if (!f || fputs(nonblock_rules, f) < 0 || fclose(f) != 0) {
    free(s);
    return -1;
  }
  *state = s;
  return 0;
}

static int remove_scratch(void **state) {
  scratch *s = *state;
  unlink(s->rules);
  rmdir(s->dir);
  free(s);
  return 0;
}

static void test_nonblocking_rules_of_a_file_are_listed(void **state) {
  scratch *s = *state;
  const char *argv[] = {BLOCKSCAN_EXE, "--list-rules", "--no-default-rules",
                        "--no-config", "--rules",      "nonblock.rules",
                        NULL};
  run_result r = run_tool(s->dir, argv, TIMEOUT);
  assert_int_equal(r.status, 0);
  assert_string_equal(
      r.out,
      "nonblocking my_set_nb fd=0 when=\"arg1 is 0\" otherwise=blocking "
      "(nonblock)\n"
      "nonblocking my_open_nb fd=result when=\"arg1 has MY_NONBLOCK=0x800\" "
      "when=\"arg2 is NULL\" (nonblock)\n"
      "nonblocking my_nb_ioctl fd=1 when=\"arg0 is MY_FIONBIO=0x5421\" "
      "when=\"arg2 has 1\" otherwise=blocking (myio)\n"
      "nonblocking my_watch fd=2 (nonblock)\n");
  assert_string_equal(r.err, "");
  run_free(&r);
}

static void test_nonblocking_rules_of_the_packs_are_listed(void **state) {
  scratch *s = *state;
  const char *argv[] = {BLOCKSCAN_EXE, "--list-rules", "--no-config", NULL};
  run_result r = run_tool(s->dir, argv, TIMEOUT);
  assert_int_equal(r.status, 0);
  assert_true(contains(r.out, "\nnonblocking fcntl fd=0 when=\"arg1 is "
                              "F_SETFL=4\" when=\"arg2 has O_NONBLOCK=0x800\" "
                              "otherwise=blocking (libc)\n"));
  assert_true(contains(r.out, "\nnonblocking uv_poll_init fd=2 (libuv)\n"));
  /* The other kinds are still there. */
  assert_true(contains(r.out, "\nblocking sleep blocking-sleep (libc)\n"));
  run_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(
          test_nonblocking_rules_of_a_file_are_listed, make_scratch,
          remove_scratch),
      cmocka_unit_test_setup_teardown(
          test_nonblocking_rules_of_the_packs_are_listed, make_scratch,
          remove_scratch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
