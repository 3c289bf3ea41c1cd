/* facts.c - freeing and interning TU facts; suppression comments and cold
 * macros in text.
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

/* Frees one of the facts' strings, unless it is interned (shared). */
static void drop(const bwsc__tu_facts *facts, char *s) {
  if (!facts->interned)
    free(s);
}

static void drop_value(const bwsc__tu_facts *facts, bwsc__value *value) {
  drop(facts, value->ref);
  drop(facts, value->name);
  value->ref = value->name = NULL;
}

void bwsc__call_free(const bwsc__tu_facts *facts, bwsc__call_fact *call) {
  drop(facts, call->caller);
  drop_value(facts, &call->callee);
  drop(facts, call->loc.file);
  for (size_t a = 0; a < call->nargs; a++)
    drop_value(facts, &call->args[a]);
  free(call->args);
  for (size_t a = 0; call->descs && a < call->nargs; a++) {
    drop(facts, call->descs[a].key);
    drop(facts, call->descs[a].text);
    drop(facts, call->descs[a].tested);
    drop(facts, call->descs[a].points);
    drop(facts, call->descs[a].via);
    free(call->descs[a].flags);
  }
  free(call->descs);
  free(call->tests);
  drop(facts, call->result);
  drop(facts, call->cancelled);
  memset(call, 0, sizeof(*call));
}

void bwsc__facts_free(bwsc__tu_facts *facts) {
  for (size_t i = 0; i < facts->nfuncs; i++) {
    drop(facts, facts->funcs[i].usr);
    drop(facts, facts->funcs[i].name);
    drop(facts, facts->funcs[i].loc.file);
  }
  for (size_t i = 0; i < facts->ncalls; i++)
    bwsc__call_free(facts, &facts->calls[i]);
  for (size_t i = 0; i < facts->ndesc_flows; i++) {
    drop(facts, facts->desc_flows[i].to);
    drop(facts, facts->desc_flows[i].from);
    drop(facts, facts->desc_flows[i].alt);
  }
  free(facts->desc_flows);
  for (size_t i = 0; i < facts->nflows; i++) {
    drop(facts, facts->flows[i].slot);
    drop_value(facts, &facts->flows[i].value);
    drop(facts, facts->flows[i].in_fn);
  }
  for (size_t i = 0; i < facts->nsuppress; i++) {
    drop(facts, facts->suppress[i].file);
    drop(facts, facts->suppress[i].rule);
  }
  for (size_t i = 0; i < facts->ndiags; i++) {
    drop(facts, facts->diags[i].loc.file);
    drop(facts, facts->diags[i].message);
  }
  for (size_t i = 0; i < facts->nrecords; i++)
    drop(facts, facts->records[i]);
  free(facts->records);
  free(facts->funcs);
  free(facts->calls);
  free(facts->flows);
  free(facts->suppress);
  free(facts->diags);
  drop(facts, facts->file);
  memset(facts, 0, sizeof(*facts));
}

/* *s becomes its interned copy; the facts' own copy is freed. */
static void share(char **s) {
  if (!*s)
    return;
  char *own = *s;
  *s = (char *)bwsc__intern(own);
  free(own);
}

/* A value's `record` borrows one of facts->records, which are interned
 * last: the interned copy of its text is the one records[i] will get. */
static void share_value(bwsc__value *value) {
  share(&value->ref);
  share(&value->name);
  if (value->record)
    value->record = bwsc__intern(value->record);
}

/* Gives back an array's unused capacity: a parse grows each array by
 * doubling, a quarter of it empty on average, and the facts stay for the
 * whole run. */
static void fit(void **items, size_t count, size_t *cap, size_t elem) {
  if (*cap <= count || !*items)
    return;
  *items = bwsc__xrealloc(*items, (count ? count : 1) * elem);
  *cap = count ? count : 1;
}

#define FIT(items, count, cap)                                                 \
  fit((void **)&(items), (count), &(cap), sizeof(*(items)))

void bwsc__facts_intern(bwsc__tu_facts *facts) {
  if (facts->interned)
    return;
  FIT(facts->funcs, facts->nfuncs, facts->capfuncs);
  FIT(facts->calls, facts->ncalls, facts->capcalls);
  FIT(facts->flows, facts->nflows, facts->capflows);
  FIT(facts->desc_flows, facts->ndesc_flows, facts->capdesc_flows);
  FIT(facts->suppress, facts->nsuppress, facts->capsuppress);
  FIT(facts->diags, facts->ndiags, facts->capdiags);
  FIT(facts->records, facts->nrecords, facts->caprecords);
  for (size_t i = 0; i < facts->nfuncs; i++) {
    share(&facts->funcs[i].usr);
    share(&facts->funcs[i].name);
    share(&facts->funcs[i].loc.file);
  }
  for (size_t i = 0; i < facts->ncalls; i++) {
    bwsc__call_fact *call = &facts->calls[i];
    share(&call->caller);
    share_value(&call->callee);
    share(&call->loc.file);
    for (size_t a = 0; a < call->nargs; a++)
      share_value(&call->args[a]);
    for (size_t a = 0; call->descs && a < call->nargs; a++) {
      share(&call->descs[a].key);
      share(&call->descs[a].text);
      share(&call->descs[a].tested);
      share(&call->descs[a].points);
      share(&call->descs[a].via);
    }
    share(&call->result);
    share(&call->cancelled);
  }
  for (size_t i = 0; i < facts->ndesc_flows; i++) {
    share(&facts->desc_flows[i].to);
    share(&facts->desc_flows[i].from);
    share(&facts->desc_flows[i].alt);
  }
  for (size_t i = 0; i < facts->nflows; i++) {
    share(&facts->flows[i].slot);
    share_value(&facts->flows[i].value);
    share(&facts->flows[i].in_fn);
  }
  for (size_t i = 0; i < facts->nsuppress; i++) {
    share(&facts->suppress[i].file);
    share(&facts->suppress[i].rule);
  }
  for (size_t i = 0; i < facts->ndiags; i++) {
    share(&facts->diags[i].loc.file);
    share(&facts->diags[i].message);
  }
  for (size_t i = 0; i < facts->nrecords; i++)
    share(&facts->records[i]);
  share(&facts->file);
  facts->interned = 1;
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
