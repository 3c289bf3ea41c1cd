/* test_blockscan_list_rules.c - blockscan --list-rules: every kind of rule
 * the loaded packs and files hold, one line each, as a rule file spells
 * its fields and conditions.
 *
 * The rule files are written to a scratch directory (no fixture tree: there
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

/* One rule of every other kind, with the fields each can carry. */
static const char kinds_rules[] =
    "entry:my_submit   arg=1 on=pool kind=offload\n"
    "entry:my_loop_add arg=2 on=loop\n"
    "entry:my_attach   object=0 setter=my_set_cb arg=1 on=loop\n"
    "blocking:my_wait  category=wait message=\"my_wait() waits\" "
    "hint=\"use my_wait_async()\" unless=\"arg0 is 0\"\n"
    "blocking:my_slurp category=io unless=\"arg1 is under /proc/\" "
    "hint=\"read it async\"\n"
    "hint:wait         api=myapi hint=\"continue in my_then()\"\n"
    "allow:my_init_*   reason=\"start-up code\"\n"
    "nonblocking:my_open fd=result path=0 under=/proc/\n";

typedef struct scratch {
  char dir[64];
  char rules[96];
  char kinds[96];
} scratch;

static int write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  int bad = fputs(text, f) < 0;
  return fclose(f) != 0 || bad ? -1 : 0;
}

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
  snprintf(s->kinds, sizeof(s->kinds), "%s/kinds.rules", s->dir);
  if (write_file(s->rules, nonblock_rules) != 0 ||
      write_file(s->kinds, kinds_rules) != 0) {
    free(s);
    return -1;
  }
  *state = s;
  return 0;
}

static int remove_scratch(void **state) {
  scratch *s = *state;
  unlink(s->rules);
  unlink(s->kinds);
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
  assert_true(contains(r.out, "\nblocking sleep blocking-sleep (libc) "
                              "category=sleep severity=warning "
                              "unless=\"arg0 is 0\" hint=\""));
  /* A condition on a field of the struct an argument points to. */
  assert_true(contains(r.out, "\nblocking getaddrinfo blocking-dns (libc) "
                              "category=dns severity=warning "
                              "unless=\"arg2->ai_flags has "
                              "AI_NUMERICHOST=4\" hint=\""));
  /* A descriptor wait's count (fds=), after its conditions. */
  assert_true(contains(r.out, "\nblocking poll blocking-wait (libc) "
                              "category=wait severity=warning "
                              "unless=\"arg2 is 0\" fds=1 hint=\""));
  assert_true(contains(r.out, "\nentry uv_queue_work (libuv) arg=2 on=pool "
                              "kind=offload, arg=3 on=loop\n"));
  assert_true(contains(r.out, "\nhint io api=blockwatch hint=\""));
  run_free(&r);
}

static void test_every_other_kind_is_listed_with_its_fields(void **state) {
  scratch *s = *state;
  const char *argv[] = {BLOCKSCAN_EXE, "--list-rules", "--no-default-rules",
                        "--no-config", "--rules",      "kinds.rules",
                        NULL};
  run_result r = run_tool(s->dir, argv, TIMEOUT);
  assert_int_equal(r.status, 0);
  assert_string_equal(
      r.out,
      "entry my_submit (kinds) arg=1 on=pool kind=offload\n"
      "entry my_loop_add (kinds) arg=2 on=loop\n"
      "entry my_attach (kinds) object=0 setter=my_set_cb arg=1 on=loop\n"
      "blocking my_wait blocking-wait (kinds) category=wait "
      "severity=warning unless=\"arg0 is 0\" hint=\"use my_wait_async()\"\n"
      "blocking my_slurp blocking-io (kinds) category=io severity=warning "
      "unless=\"arg1 is under /proc/\" hint=\"read it async\"\n"
      "nonblocking my_open fd=result path=0 under=/proc/ (kinds)\n"
      "hint wait api=myapi hint=\"continue in my_then()\"\n"
      "allow my_init_* reason=\"start-up code\"\n");
  assert_string_equal(r.err, "");
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
      cmocka_unit_test_setup_teardown(
          test_every_other_kind_is_listed_with_its_fields, make_scratch,
          remove_scratch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
