/* libFuzzer target for the rules parser: any byte string is loaded as a rule
 * file and must give either a consistent rule set or well-formed errors,
 * with no crash, leak or undefined behaviour.
 *
 * Invariants checked on every input:
 *  - a failed load leaves the set empty (loads are all-or-nothing);
 *  - every error is "file:line:column: error: message" on one line;
 *  - every loaded rule is found again by name, with its strings set.
 */
#include "blockwatch/rules.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(void *ctx, const bw_rules_error *err) {
  (void)ctx;
  /* Errors of included files name those files, so only the shape is
   * checked: "<file>: error: ..." or "<file>:<line>:<col>: error: ...". */
  if (strstr(err->formatted, ": error: ") == NULL)
    abort();
  if (strchr(err->formatted, '\n') != NULL || err->message[0] == '\0')
    abort();
}

static void check_rules(const bw_rules *rs) {
  for (size_t i = 0; i < bw_rules_blocking_count(rs); i++) {
    const bw_blocking_rule *r = bw_rules_blocking_at(rs, i);
    if (bw_rules_lookup_blocking(rs, r->function) != r || !r->message ||
        !r->hint || !r->api || !r->id || r->n_unless > BW_RULE_MAX_CONDS)
      abort();
    for (size_t c = 0; c < r->n_unless; c++) {
      if (!bw_cond_kind_name(r->unless[c].kind) || r->unless[c].arg < 0)
        abort();
    }
  }
  for (size_t i = 0; i < bw_rules_entry_count(rs); i++) {
    const bw_entry_rule *e = bw_rules_entry_at(rs, i);
    if (bw_rules_find_entry(rs, e->function) != e || e->n_callbacks == 0 ||
        e->n_callbacks > BW_ENTRY_MAX_CALLBACKS)
      abort();
  }
  for (size_t i = 0; i < bw_rules_allow_count(rs); i++) {
    const bw_allow_rule *a = bw_rules_allow_at(rs, i);
    /* A pattern matches itself when it has no '?' or '*' to read as glob;
     * either way the lookup must not crash. */
    (void)bw_rules_is_allowed(rs, a->pattern);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bw_rules *rs = bw_rules_create();
  if (rs == NULL)
    return 0;
  bw_rules_set_error_callback(rs, check_error, NULL);
  int rc = bw_rules_load_string(rs, "fuzz.rules", (const char *)data, size);
  if (rc != 0 && (bw_rules_blocking_count(rs) || bw_rules_entry_count(rs) ||
                  bw_rules_allow_count(rs)))
    abort();
  if (rc != 0 && bw_rules_error_count(rs) == 0)
    abort();
  check_rules(rs);
  bw_rules_free(rs);
  return 0;
}
