/* errors_seen.c - see errors_seen.h. */
#include "errors_seen.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

char seen_last_error[512];
size_t seen_errors;

static void on_error(void *ctx, const bw_rules_error *err) {
  (void)ctx;
  snprintf(seen_last_error, sizeof(seen_last_error), "%s", err->formatted);
  seen_errors++;
}

bw_rules *seen_rules(const char *text, int *rc) {
  bw_rules *rs = bw_rules_create();
  assert_non_null(rs);
  bw_rules_set_error_callback(rs, on_error, NULL);
  seen_errors = 0;
  seen_last_error[0] = '\0';
  *rc = bw_rules_load_string(rs, "t.rules", text, strlen(text));
  return rs;
}

bw_rules *seen_error(const char *text, const char *expected) {
  int rc;
  bw_rules *rs = seen_rules(text, &rc);
  assert_int_equal(rc, -EINVAL);
  assert_int_equal(seen_errors, 1);
  assert_string_equal(seen_last_error, expected);
  return rs;
}
