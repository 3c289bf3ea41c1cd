/* test_blockscan_nonblock.c - I/O that cannot wait is not reported: on a
 * descriptor the program made non-blocking (fixtures/nonblock/setters.c,
 * a wrapper in another TU: use.c + wrapper.c), and on the descriptor a
 * readiness callback was registered for (ready.c), and stored through
 * locals that also hold error codes, cycles of copies and masked flags
 * (flow.c); and reads of files on procfs, which never wait (procfs.c).
 *
 * Invariant: the fixtures say what they expect on the line itself (see
 * marked.h): "expect" must be a warning, "not reported" must not.
 */
#include "marked.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define NONBLOCK FIXTURES "/nonblock"

/* Scans `files` (NULL-terminated) together; checks the marked lines of
 * the first. */
static void check(const char *const *files) {
  int status;
  assert_int_equal(
      marked_mismatches(BLOCKSCAN_EXE, NONBLOCK, files, NULL, &status), 0);
  assert_int_equal(status, 1);
}

static void test_io_on_descriptors_made_nonblocking_is_quiet(void **state) {
  (void)state;
  const char *files[] = {"setters.c", NULL};
  check(files);
}

static void
test_wrapper_in_another_tu_makes_its_argument_nonblocking(void **state) {
  (void)state;
  const char *files[] = {"use.c", "wrapper.c", NULL};
  check(files);
}

static void
test_io_on_the_registered_descriptor_in_readiness_callback(void **state) {
  (void)state;
  const char *files[] = {"ready.c", NULL};
  check(files);
}

static void
test_descriptor_flows_through_locals_cycles_and_masks(void **state) {
  (void)state;
  const char *files[] = {"flow.c", NULL};
  check(files);
}

static void test_reads_of_procfs_files_are_quiet(void **state) {
  (void)state;
  const char *files[] = {"procfs.c", NULL};
  check(files);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_io_on_descriptors_made_nonblocking_is_quiet),
      cmocka_unit_test(
          test_wrapper_in_another_tu_makes_its_argument_nonblocking),
      cmocka_unit_test(
          test_io_on_the_registered_descriptor_in_readiness_callback),
      cmocka_unit_test(test_descriptor_flows_through_locals_cycles_and_masks),
      cmocka_unit_test(test_reads_of_procfs_files_are_quiet),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
