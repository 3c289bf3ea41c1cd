/* The set's error list: formatting a load error, recording a copy of it
 * and handing it to the caller's callback.
 *
 * Invariants: nothing here writes to stdout or stderr; a recorded error
 * owns copies of its strings (the file name may be the caller's path, which
 * need not outlive the load), freed only by bwrl__errors_free().
 */
#include "rules_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *out = malloc(n);
  if (out != NULL)
    memcpy(out, s, n);
  return out;
}

/* Keeps a copy of the error in the set's list. */
static int record(bw_rules *rs, const bw_rules_error *err) {
  if (rs->n_errors == rs->cap_errors) {
    size_t cap = rs->cap_errors ? rs->cap_errors * 2 : 16;
    bw_rules_error *errors = realloc(rs->errors, cap * sizeof(*errors));
    if (errors == NULL)
      return -ENOMEM;
    rs->errors = errors;
    rs->cap_errors = cap;
  }
  bw_rules_error copy = *err;
  copy.file = dup_string(err->file);
  copy.message = dup_string(err->message);
  copy.formatted = dup_string(err->formatted);
  if (!copy.file || !copy.message || !copy.formatted) {
    free((char *)copy.file);
    free((char *)copy.message);
    free((char *)copy.formatted);
    return -ENOMEM;
  }
  rs->errors[rs->n_errors++] = copy;
  return 0;
}

void bwrl__vreport(bwrl__load *ld, const char *file, unsigned line,
                   unsigned column, const char *fmt, va_list ap) {
  char message[1024];
  char formatted[1400];
  vsnprintf(message, sizeof(message), fmt, ap);
  if (line == 0)
    snprintf(formatted, sizeof(formatted), "%s: error: %s", file, message);
  else
    snprintf(formatted, sizeof(formatted), "%s:%u:%u: error: %s", file, line,
             column, message);
  bw_rules_error err = {file, line, column, message, formatted};
  ld->n_errors++;
  if (record(ld->rs, &err))
    ld->oom = 1;
  if (ld->rs->error_fn != NULL)
    ld->rs->error_fn(ld->rs->error_ctx, &err);
}

void bwrl__report(bwrl__load *ld, const char *file, unsigned line,
                  unsigned column, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bwrl__vreport(ld, file, line, column, fmt, ap);
  va_end(ap);
}

void bwrl__errors_free(bw_rules *rs) {
  for (size_t i = 0; i < rs->n_errors; i++) {
    free((char *)rs->errors[i].file);
    free((char *)rs->errors[i].message);
    free((char *)rs->errors[i].formatted);
  }
  free(rs->errors);
}

void bw_rules_set_error_callback(bw_rules *rs, bw_rules_error_fn fn,
                                 void *ctx) {
  if (rs == NULL)
    return;
  rs->error_fn = fn;
  rs->error_ctx = ctx;
}

size_t bw_rules_error_count(const bw_rules *rs) {
  return rs ? rs->n_errors : 0;
}

const bw_rules_error *bw_rules_error_at(const bw_rules *rs, size_t i) {
  return rs && i < rs->n_errors ? &rs->errors[i] : NULL;
}
