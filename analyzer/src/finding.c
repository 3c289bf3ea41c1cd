/* finding.c - sorting and freeing findings and errors.
 *
 * Invariant: the sort key is total over what is printed, so output is the
 * same whatever order the TUs were parsed in.
 */
#include "finding.h"

#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare_str(const char *a, const char *b) {
  return strcmp(a ? a : "", b ? b : "");
}

static int compare_loc(const bwsc__loc *a, const bwsc__loc *b) {
  int c = compare_str(a->file, b->file);
  if (c)
    return c;
  if (a->line != b->line)
    return a->line < b->line ? -1 : 1;
  if (a->col != b->col)
    return a->col < b->col ? -1 : 1;
  return 0;
}

static int compare_finding(const void *pa, const void *pb) {
  const bwsc__finding *a = pa, *b = pb;
  int c = compare_loc(&a->loc, &b->loc);
  if (!c)
    c = compare_str(a->rule->id, b->rule->id);
  if (!c)
    c = compare_str(a->callee, b->callee);
  if (!c)
    c = compare_str(a->callback, b->callback);
  if (!c)
    c = compare_loc(&a->callback_loc, &b->callback_loc);
  if (!c)
    c = compare_loc(&a->submit_loc, &b->submit_loc);
  if (!c)
    c = strcmp(a->fingerprint, b->fingerprint);
  return c;
}

/* The rule of spin-wait findings: no function names it, the loop does.
 * Filled on first use; the analysis runs on one thread. */
static const bw_blocking_rule *spin_rule(void) {
  static bw_blocking_rule rule;
  if (!rule.id) {
    rule.function = "";
    rule.category = BW_CATEGORY_SPIN_WAIT;
    rule.severity = BW_SEVERITY_WARNING;
    rule.message = bw_rule_category_description(BW_CATEGORY_SPIN_WAIT);
    rule.hint = bw_rule_category_hint(BW_CATEGORY_SPIN_WAIT);
    rule.api = "blockscan";
    rule.origin.file = "blockscan";
    rule.id = bw_rule_category_id(BW_CATEGORY_SPIN_WAIT);
  }
  return &rule;
}

const bw_blocking_rule *bwsc__spin_rule_of(const bw_rules *rules,
                                           const bwsc__call_fact *call,
                                           const bw_blocking_rule *rule,
                                           int brief) {
  if (!bw_rules_category_enabled(rules, BW_CATEGORY_SPIN_WAIT) ||
      call->spin == BWSC__SPIN_NONE)
    return NULL;
  if (call->spin == BWSC__SPIN_BARE ||
      (rule && rule->category == BW_CATEGORY_SLEEP && brief) ||
      (rule && rule->category == BW_CATEGORY_YIELD))
    return spin_rule();
  return NULL;
}

static void finding_free(bwsc__finding *finding) {
  free(finding->chain);
  free(finding->message);
  free(finding->vias);
}

void bwsc__findings_sort(bwsc__findings *list) {
  if (!list->count)
    return;
  qsort(list->items, list->count, sizeof(bwsc__finding), compare_finding);
  size_t out = 1;
  for (size_t i = 1; i < list->count; i++) {
    if (compare_finding(&list->items[out - 1], &list->items[i]) == 0)
      finding_free(&list->items[i]);
    else
      list->items[out++] = list->items[i];
  }
  list->count = out;
}

/* Is a's chain better than b's: high confidence first, then shorter. */
static int better(const bwsc__finding *a, const bwsc__finding *b) {
  if (a->low != b->low)
    return !a->low;
  return a->nchain < b->nchain;
}

static int compare_via(const void *pa, const void *pb) {
  const bwsc__via *a = pa, *b = pb;
  if (a->low != b->low)
    return a->low ? 1 : -1;
  if (a->nchain != b->nchain)
    return a->nchain < b->nchain ? -1 : 1;
  int c = compare_str(a->callback, b->callback);
  if (!c)
    c = compare_loc(&a->callback_loc, &b->callback_loc);
  return c ? c : strcmp(a->fingerprint, b->fingerprint);
}

static int same_site(const bwsc__finding *a, const bwsc__finding *b) {
  return compare_loc(&a->loc, &b->loc) == 0 &&
         strcmp(a->rule->id, b->rule->id) == 0 &&
         compare_str(a->callee, b->callee) == 0;
}

/* "'sleep' blocks a pool worker: reached from 12 callbacks: a, b, c (and 9
 * more)"; the kind of thread is that of the finding's own callback. */
static char *message_of(const bwsc__finding *f) {
  const char *where = f->runs_on == BW_RUNS_ON_LOOP ? "the event loop"
                      : f->pool_kind == BW_POOL_OFFLOAD
                          ? "an offload pool worker"
                          : "a pool worker";
  char what[160];
  snprintf(what, sizeof(what),
           f->rule->category == BW_CATEGORY_SPIN_WAIT
               ? "a loop polling with '%s'"
               : "'%s'",
           f->callee);
  if (f->nvias <= 1)
    return bwsc__xasprintf("%s blocks %s: reached from callback '%s'", what,
                           where, f->callback);
  char names[256];
  size_t len = 0, shown = 0;
  for (; shown < f->nvias && shown < 3; shown++)
    len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
                            shown ? ", " : "", f->vias[shown].callback);
  if (len >= sizeof(names))
    names[sizeof(names) - 1] = '\0';
  if (shown < f->nvias)
    return bwsc__xasprintf(
        "%s blocks %s: reached from %zu callbacks: %s (and %zu more)", what,
        where, f->nvias, names, f->nvias - shown);
  return bwsc__xasprintf("%s blocks %s: reached from %zu callbacks: %s", what,
                         where, f->nvias, names);
}

static void via_of(bwsc__via *via, const bwsc__finding *f) {
  via->callback = f->callback;
  via->callback_loc = f->callback_loc;
  via->entry = f->entry;
  via->submit_loc = f->submit_loc;
  via->runs_on = f->runs_on;
  via->pool_kind = f->pool_kind;
  via->low = f->low;
  via->nchain = f->nchain;
  memcpy(via->fingerprint, f->fingerprint, sizeof(via->fingerprint));
}

void bwsc__findings_group(bwsc__findings *list) {
  size_t out = 0;
  for (size_t i = 0; i < list->count;) {
    size_t end = i + 1, best = i;
    while (end < list->count && same_site(&list->items[i], &list->items[end]))
      end++;
    for (size_t k = i + 1; k < end; k++)
      if (better(&list->items[k], &list->items[best]))
        best = k;
    bwsc__finding kept = list->items[best];
    kept.nvias = end - i;
    kept.vias = bwsc__xcalloc(kept.nvias, sizeof(bwsc__via));
    for (size_t k = i; k < end; k++)
      via_of(&kept.vias[k - i], &list->items[k]);
    qsort(kept.vias, kept.nvias, sizeof(bwsc__via), compare_via);
    /* This finding's own callback first, whatever the names' order. */
    for (size_t k = 0; k < kept.nvias; k++) {
      if (strcmp(kept.vias[k].fingerprint, kept.fingerprint) == 0) {
        bwsc__via own = kept.vias[k];
        memmove(&kept.vias[1], &kept.vias[0], k * sizeof(bwsc__via));
        kept.vias[0] = own;
        break;
      }
    }
    for (size_t k = 0; k < kept.nvias; k++)
      kept.low &= kept.vias[k].low;
    uint64_t hash = bwsc__fnv1a(BWSC__FNV_INIT, kept.rule->id);
    hash = bwsc__fnv1a(hash, kept.callee);
    hash = bwsc__fnv1a(hash, kept.function);
    snprintf(kept.site_fingerprint, sizeof(kept.site_fingerprint), "%016llx",
             (unsigned long long)hash);
    free(kept.message);
    kept.message = message_of(&kept);
    for (size_t k = i; k < end; k++)
      if (k != best)
        finding_free(&list->items[k]);
    list->items[out++] = kept;
    i = end;
  }
  list->count = out;
}

size_t bwsc__findings_drop_low(bwsc__findings *list) {
  size_t hidden = 0, out = 0;
  for (size_t i = 0; i < list->count;) {
    size_t end = i + 1;
    int high = !list->items[i].low;
    for (; end < list->count && same_site(&list->items[i], &list->items[end]);
         end++)
      high |= !list->items[end].low;
    hidden += !high;
    for (; i < end; i++) {
      if (list->items[i].low)
        finding_free(&list->items[i]);
      else
        list->items[out++] = list->items[i];
    }
  }
  list->count = out;
  return hidden;
}

void bwsc__findings_remove(bwsc__findings *list, size_t i) {
  finding_free(&list->items[i]);
  memmove(&list->items[i], &list->items[i + 1],
          (list->count - i - 1) * sizeof(bwsc__finding));
  list->count--;
}

void bwsc__findings_free(bwsc__findings *list) {
  for (size_t i = 0; i < list->count; i++)
    finding_free(&list->items[i]);
  free(list->items);
  memset(list, 0, sizeof(*list));
}

void bwsc__errors_add(bwsc__errors *list, const char *file, unsigned line,
                      unsigned col, const char *message) {
  bwsc__error *err = BWSC__PUSH(list->items, list->count, list->cap);
  err->file = file ? bwsc__xstrdup(file) : NULL;
  err->line = line;
  err->col = col;
  err->message = bwsc__xstrdup(message);
}

void bwsc__errors_free(bwsc__errors *list) {
  for (size_t i = 0; i < list->count; i++) {
    free(list->items[i].file);
    free(list->items[i].message);
  }
  free(list->items);
  memset(list, 0, sizeof(*list));
}
