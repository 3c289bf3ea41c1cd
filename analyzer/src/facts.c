/* facts.c - freeing TU facts; suppression comments and cold macros in text.
 *
 * The suppression scanner only looks at text, never at libclang, so it is
 * testable alone and works on any buffer.
 */
#include "facts.h"

#include "util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void bwsc__value_free(bwsc__value *value) {
  free(value->ref);
  free(value->name);
  value->ref = value->name = NULL;
}

void bwsc__facts_free(bwsc__tu_facts *facts) {
  for (size_t i = 0; i < facts->nfuncs; i++) {
    free(facts->funcs[i].usr);
    free(facts->funcs[i].name);
    free(facts->funcs[i].loc.file);
  }
  for (size_t i = 0; i < facts->ncalls; i++) {
    bwsc__call_fact *call = &facts->calls[i];
    free(call->caller);
    bwsc__value_free(&call->callee);
    free(call->loc.file);
    for (size_t a = 0; a < call->nargs; a++)
      bwsc__value_free(&call->args[a]);
    free(call->args);
    for (size_t a = 0; call->descs && a < call->nargs; a++)
      free(call->descs[a].key);
    free(call->descs);
    free(call->result);
  }
  for (size_t i = 0; i < facts->ndesc_flows; i++) {
    free(facts->desc_flows[i].to);
    free(facts->desc_flows[i].from);
  }
  free(facts->desc_flows);
  for (size_t i = 0; i < facts->nflows; i++) {
    free(facts->flows[i].slot);
    bwsc__value_free(&facts->flows[i].value);
  }
  for (size_t i = 0; i < facts->nsuppress; i++) {
    free(facts->suppress[i].file);
    free(facts->suppress[i].rule);
  }
  for (size_t i = 0; i < facts->ndiags; i++) {
    free(facts->diags[i].loc.file);
    free(facts->diags[i].message);
  }
  for (size_t i = 0; i < facts->nrecords; i++)
    free(facts->records[i]);
  free(facts->records);
  free(facts->funcs);
  free(facts->calls);
  free(facts->flows);
  free(facts->suppress);
  free(facts->diags);
  free(facts->file);
  memset(facts, 0, sizeof(*facts));
}

/* Assertion and fatal-error macros: a reviewer does not want to hear about
 * what their failure branch calls (g_return_if_fail_warning -> g_log). */
static const char *const cold_macros[] = {"assert",
                                          "g_assert",
                                          "g_assert_not_reached",
                                          "g_assert_true",
                                          "g_assert_false",
                                          "g_assert_null",
                                          "g_assert_nonnull",
                                          "g_assert_cmpint",
                                          "g_assert_cmpuint",
                                          "g_assert_cmpstr",
                                          "g_assert_no_error",
                                          "g_return_if_fail",
                                          "g_return_val_if_fail",
                                          "g_return_if_reached",
                                          "g_return_val_if_reached",
                                          "g_warn_if_fail",
                                          "g_warn_if_reached",
                                          "g_error",
                                          NULL};

int bwsc__facts_cold_macro_at(const char *text, size_t len, size_t offset) {
  if (offset >= len)
    return 0;
  size_t n = 0;
  while (offset + n < len &&
         (isalnum((unsigned char)text[offset + n]) || text[offset + n] == '_'))
    n++;
  for (size_t i = 0; cold_macros[i]; i++)
    if (strlen(cold_macros[i]) == n &&
        memcmp(cold_macros[i], text + offset, n) == 0)
      return 1;
  return 0;
}

/* Adds one suppression; `rule` is the text inside (...), may be NULL. */
static void add_suppression(bwsc__tu_facts *facts, const char *file,
                            unsigned line, const char *rule, size_t rule_len) {
  bwsc__suppress_fact *fact =
      BWSC__PUSH(facts->suppress, facts->nsuppress, facts->capsuppress);
  fact->file = bwsc__xstrdup(file);
  fact->line = line;
  if (rule && rule_len) {
    fact->rule = bwsc__xmalloc(rule_len + 1);
    memcpy(fact->rule, rule, rule_len);
    fact->rule[rule_len] = '\0';
  }
}

/* Parses an optional "(rule)" at p; returns the rule span or len 0. */
static size_t paren_rule(const char *p, const char *end, const char **rule) {
  if (p >= end || *p != '(')
    return 0;
  const char *close = memchr(p, ')', (size_t)(end - p));
  const char *eol = memchr(p, '\n', (size_t)(end - p));
  if (!close || (eol && eol < close))
    return 0;
  *rule = p + 1;
  return (size_t)(close - p - 1);
}

/* Parses the rule list of a NOLINT-style comment at `after` (just past
 * "...(blockscan"); returns the closing parenthesis, or NULL if the comment
 * is not one of ours. */
static const char *nolint_rule(bwsc__tu_facts *facts, const char *file,
                               unsigned line, const char *after,
                               const char *end) {
  const char *close = memchr(after, ')', (size_t)(end - after));
  const char *eol = memchr(after, '\n', (size_t)(end - after));
  if (!close || (eol && eol < close))
    return NULL;
  if (*after == '-')
    add_suppression(facts, file, line, after + 1, (size_t)(close - after - 1));
  else if (after == close)
    add_suppression(facts, file, line, NULL, 0);
  else
    return NULL;
  return close;
}

/* Recognises `blockscan-ignore`, `blockscan-ignore(rule)`,
 * `NOLINT(blockscan-rule)`, `NOLINT(blockscan)` and the same with
 * NOLINTNEXTLINE. The NOLINT forms name rules the clang-tidy way,
 * "blockscan-" + rule id (or category). */
void bwsc__facts_scan_suppressions(bwsc__tu_facts *facts, const char *file,
                                   const char *text, size_t len) {
  static const char ignore[] = "blockscan-ignore";
  static const char *const nolints[] = {"NOLINT(blockscan",
                                        "NOLINTNEXTLINE(blockscan", NULL};
  const char *end = text + len;
  unsigned line = 1;
  for (const char *p = text; p < end; p++) {
    if (*p == '\n') {
      line++;
      continue;
    }
    if (*p == 'b' && (size_t)(end - p) >= sizeof(ignore) - 1 &&
        memcmp(p, ignore, sizeof(ignore) - 1) == 0) {
      const char *after = p + sizeof(ignore) - 1;
      if (after < end && (isalnum((unsigned char)*after) || *after == '-'))
        continue;
      const char *rule = NULL;
      size_t rule_len = paren_rule(after, end, &rule);
      add_suppression(facts, file, line, rule, rule_len);
      p = after - 1;
      continue;
    }
    if (*p != 'N')
      continue;
    for (size_t k = 0; nolints[k]; k++) {
      size_t n = strlen(nolints[k]);
      if ((size_t)(end - p) < n || memcmp(p, nolints[k], n) != 0)
        continue;
      const char *close = nolint_rule(facts, file, line, p + n, end);
      if (close)
        p = close;
      break;
    }
  }
}
