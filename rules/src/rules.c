/* bw_rules set: creation, names of enums, lookups (also the loader's, which
 * see the rules of the load under way), iteration, categories.
 *
 * Invariants: the lookup and iteration functions here only read the set
 * (no allocation, no locking, no output), so the shim may call them from
 * wrapped functions once loading is over.
 */
#include "rules_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ---- */

static const char *const category_names[] = {
#define CAT_NAME(e, name, desc) name,
    BW_RULE_CATEGORIES(CAT_NAME)
#undef CAT_NAME
};

static const char *const category_ids[] = {
#define CAT_ID(e, name, desc) "blocking-" name,
    BW_RULE_CATEGORIES(CAT_ID)
#undef CAT_ID
};

static const char *const category_descriptions[] = {
#define CAT_DESC(e, name, desc) desc,
    BW_RULE_CATEGORIES(CAT_DESC)
#undef CAT_DESC
};

/* Default fix hints, one per category, in BW_RULE_CATEGORIES order; a
 * _Static_assert below keeps the two lists the same length. */
static const char *const category_hints[] = {
    "use bw_delay() and continue in bw_then() instead of sleeping",
    "continue from a completion source (bw_then) instead of waiting",
    "continue when the work completes (bw_then, bw_when_all) instead of "
    "joining",
    "keep critical sections short, or hand the work off instead of waiting "
    "for the lock",
    "use non-blocking descriptors driven by an event loop, or run the I/O "
    "on a dedicated thread",
    "reap children from an event loop (SIGCHLD, pidfd) instead of waiting",
    "chain a continuation with bw_then() instead of waiting for the result",
    "return to the outer loop instead of running a nested one",
    "resolve asynchronously (getaddrinfo_a, uv_getaddrinfo) or off the pool",
    "wait on a completion source instead of spinning",
    "wait for a signal instead of polling: a condition variable, a semaphore, "
    "uv_async_send, or a completion source (bw_event_wait)",
};
_Static_assert(sizeof(category_hints) / sizeof(category_hints[0]) ==
                   BW_CATEGORY_COUNT,
               "one default hint per category");

static const char *const cond_names[] = {
#define COND_NAME(e, spelling, desc) spelling,
    BW_COND_KINDS(COND_NAME)
#undef COND_NAME
};

static int category_valid(bw_rule_category cat) {
  return (unsigned)cat < (unsigned)BW_CATEGORY_COUNT;
}

const char *bw_rule_category_name(bw_rule_category cat) {
  return category_valid(cat) ? category_names[cat] : NULL;
}

const char *bw_rule_category_id(bw_rule_category cat) {
  return category_valid(cat) ? category_ids[cat] : NULL;
}

const char *bw_rule_category_description(bw_rule_category cat) {
  return category_valid(cat) ? category_descriptions[cat] : NULL;
}

const char *bw_rule_category_hint(bw_rule_category cat) {
  return category_valid(cat) ? category_hints[cat] : NULL;
}

int bw_rule_category_parse(const char *name, bw_rule_category *out) {
  if (name == NULL || out == NULL)
    return -EINVAL;
  for (int i = 0; i < BW_CATEGORY_COUNT; i++) {
    if (strcmp(category_names[i], name) == 0) {
      *out = (bw_rule_category)i;
      return 0;
    }
  }
  return -EINVAL;
}

const char *bw_rule_severity_name(bw_rule_severity sev) {
  switch (sev) {
  case BW_SEVERITY_NOTE:
    return "note";
  case BW_SEVERITY_WARNING:
    return "warning";
  case BW_SEVERITY_ERROR:
    return "error";
  }
  return NULL;
}

const char *bw_cond_kind_name(bw_cond_kind kind) {
  return (unsigned)kind < (unsigned)BW_COND_COUNT ? cond_names[kind] : NULL;
}

const char *bw_runs_on_name(bw_runs_on where) {
  switch (where) {
  case BW_RUNS_ON_POOL:
    return "pool";
  case BW_RUNS_ON_LOOP:
    return "loop";
  }
  return NULL;
}

static const char *const pool_kind_names[] = {"general", "offload", "blocking"};

const char *bw_pool_kind_name(bw_pool_kind kind) {
  return (unsigned)kind <= (unsigned)BW_POOL_BLOCKING ? pool_kind_names[kind]
                                                      : NULL;
}

int bw_pool_kind_parse(const char *name, bw_pool_kind *out) {
  for (unsigned i = 0; name && i <= (unsigned)BW_POOL_BLOCKING; i++) {
    if (strcmp(name, pool_kind_names[i]) == 0) {
      *out = (bw_pool_kind)i;
      return 0;
    }
  }
  return -EINVAL;
}

int bw_pool_kind_reports(bw_pool_kind kind, bw_rule_category cat) {
  switch (kind) {
  case BW_POOL_GENERAL:
    return 1;
  case BW_POOL_OFFLOAD:
    /* The pool's threads exist to do this; a wait or a sleep there still
     * holds one of its few threads while doing nothing. */
    return cat != BW_CATEGORY_IO && cat != BW_CATEGORY_PROCESS &&
           cat != BW_CATEGORY_DNS;
  case BW_POOL_BLOCKING:
    return 0;
  }
  return 1;
}

/* ---- lifecycle ---- */

bw_rules *bw_rules_create(void) {
  bw_rules *rs = calloc(1, sizeof(*rs));
  if (rs == NULL)
    return NULL;
  for (int i = 0; i < BW_CATEGORY_COUNT; i++)
    rs->enabled[i] = 1;
  /* Short mutex holds are usually fine: lock is opt-in. */
  rs->enabled[BW_CATEGORY_LOCK] = 0;
  return rs;
}

static void free_vec_items(bwrl__vec *vec) {
  for (size_t i = 0; i < vec->n; i++)
    free(vec->items[i]);
  bwrl__vec_free(vec);
}

void bw_rules_free(bw_rules *rs) {
  if (rs == NULL)
    return;
  free_vec_items(&rs->blocking);
  free_vec_items(&rs->entries);
  free_vec_items(&rs->allows);
  free_vec_items(&rs->posts);
  free_vec_items(&rs->passes);
  free_vec_items(&rs->hints);
  free_vec_items(&rs->nonblocks);
  free_vec_items(&rs->readies);
  bwrl__index_clear(&rs->blocking_index);
  bwrl__index_clear(&rs->nonblock_index);
  bwrl__index_clear(&rs->ready_index);
  bwrl__index_clear(&rs->post_index);
  bwrl__index_clear(&rs->pass_index);
  bwrl__index_clear(&rs->entry_index);
  bwrl__index_clear(&rs->allow_index);
  bwrl__errors_free(rs);
  bwrl__arena_free(&rs->arena);
  free(rs);
}

/* ---- indexes ---- */

static int has_glob(const char *pattern) {
  return strpbrk(pattern, "*?") != NULL;
}

typedef struct indexes {
  bwrl__index blocking, entries, allows, posts, passes, nonblocks, readies;
  size_t n_glob_allows;
} indexes;

static void indexes_clear(indexes *ix) {
  bwrl__index_clear(&ix->blocking);
  bwrl__index_clear(&ix->entries);
  bwrl__index_clear(&ix->allows);
  bwrl__index_clear(&ix->posts);
  bwrl__index_clear(&ix->passes);
  bwrl__index_clear(&ix->nonblocks);
  bwrl__index_clear(&ix->readies);
}

static int build_indexes(const bw_rules *rs, indexes *ix) {
  for (size_t i = 0; i < rs->blocking.n; i++) {
    bw_blocking_rule *rule = rs->blocking.items[i];
    if (bwrl__index_put(&ix->blocking, rule->function, rule))
      return -ENOMEM;
  }
  for (size_t i = 0; i < rs->entries.n; i++) {
    bw_entry_rule *rule = rs->entries.items[i];
    if (bwrl__index_put(&ix->entries, rule->function, rule))
      return -ENOMEM;
  }
  for (size_t i = 0; i < rs->posts.n; i++) {
    bw_post_rule *rule = rs->posts.items[i];
    if (bwrl__index_put(&ix->posts, rule->function, rule))
      return -ENOMEM;
  }
  for (size_t i = 0; i < rs->passes.n; i++) {
    bw_pass_rule *rule = rs->passes.items[i];
    if (bwrl__index_put(&ix->passes, rule->function, rule))
      return -ENOMEM;
  }
  for (size_t i = 0; i < rs->nonblocks.n; i++) {
    bw_nonblock_rule *rule = rs->nonblocks.items[i];
    if (bwrl__index_put(&ix->nonblocks, rule->function, rule))
      return -ENOMEM;
  }
  for (size_t i = 0; i < rs->readies.n; i++) {
    bw_ready_rule *rule = rs->readies.items[i];
    if (bwrl__index_put(&ix->readies, rule->function, rule))
      return -ENOMEM;
  }
  for (size_t i = 0; i < rs->allows.n; i++) {
    bw_allow_rule *rule = rs->allows.items[i];
    if (has_glob(rule->pattern)) {
      ix->n_glob_allows++;
    } else if (bwrl__index_get(&ix->allows, rule->pattern) == NULL) {
      /* The first rule for a name wins, as in the glob scan. */
      if (bwrl__index_put(&ix->allows, rule->pattern, rule))
        return -ENOMEM;
    }
  }
  return 0;
}

int bwrl__rules_reindex(bw_rules *rs) {
  indexes ix = {0};
  if (build_indexes(rs, &ix)) {
    indexes_clear(&ix);
    return -ENOMEM;
  }
  bwrl__index_clear(&rs->blocking_index);
  bwrl__index_clear(&rs->entry_index);
  bwrl__index_clear(&rs->allow_index);
  bwrl__index_clear(&rs->post_index);
  bwrl__index_clear(&rs->pass_index);
  bwrl__index_clear(&rs->nonblock_index);
  bwrl__index_clear(&rs->ready_index);
  rs->blocking_index = ix.blocking;
  rs->nonblock_index = ix.nonblocks;
  rs->ready_index = ix.readies;
  rs->post_index = ix.posts;
  rs->pass_index = ix.passes;
  rs->entry_index = ix.entries;
  rs->allow_index = ix.allows;
  rs->n_glob_allows = ix.n_glob_allows;
  return 0;
}

/* ---- lookups ---- */

const bw_blocking_rule *bw_rules_lookup_blocking(const bw_rules *rs,
                                                 const char *function) {
  if (rs == NULL || function == NULL)
    return NULL;
  return bwrl__index_get(&rs->blocking_index, function);
}

const bw_blocking_rule *bw_rules_find_blocking(const bw_rules *rs,
                                               const char *function) {
  const bw_blocking_rule *rule = bw_rules_lookup_blocking(rs, function);
  return rule && rs->enabled[rule->category] ? rule : NULL;
}

const bw_entry_rule *bw_rules_find_entry(const bw_rules *rs,
                                         const char *function) {
  if (rs == NULL || function == NULL)
    return NULL;
  return bwrl__index_get(&rs->entry_index, function);
}

const bw_post_rule *bw_rules_find_post(const bw_rules *rs,
                                       const char *function) {
  if (rs == NULL || function == NULL)
    return NULL;
  return bwrl__index_get(&rs->post_index, function);
}

const bw_hint_rule *bw_rules_find_hint(const bw_rules *rs, const char *api,
                                       bw_rule_category cat) {
  if (rs == NULL || api == NULL)
    return NULL;
  for (size_t i = 0; i < rs->hints.n; i++) {
    const bw_hint_rule *rule = rs->hints.items[i];
    if (rule->category == cat && strcmp(rule->api, api) == 0)
      return rule;
  }
  return NULL;
}

const bw_allow_rule *bw_rules_find_allow(const bw_rules *rs,
                                         const char *function) {
  if (rs == NULL || function == NULL)
    return NULL;
  const bw_allow_rule *exact = bwrl__index_get(&rs->allow_index, function);
  if (exact != NULL || rs->n_glob_allows == 0)
    return exact;
  for (size_t i = 0; i < rs->allows.n; i++) {
    const bw_allow_rule *rule = rs->allows.items[i];
    if (has_glob(rule->pattern) && bw_rules_glob_match(rule->pattern, function))
      return rule;
  }
  return NULL;
}

int bw_rules_is_allowed(const bw_rules *rs, const char *function) {
  return bw_rules_find_allow(rs, function) != NULL;
}

int bw_rules_is_active(const bw_rules *rs, const bw_blocking_rule *rule) {
  if (rs == NULL || rule == NULL || !category_valid(rule->category))
    return 0;
  return rs->enabled[rule->category];
}

/* ---- lookups during a load: committed rules, then this load's ---- */

bw_blocking_rule *bwrl__load_find_blocking(const bwrl__load *ld,
                                           const char *name) {
  bw_blocking_rule *rule = bwrl__index_get(&ld->rs->blocking_index, name);
  return rule ? rule : bwrl__index_get(&ld->new_blocking, name);
}

bw_entry_rule *bwrl__load_find_entry(const bwrl__load *ld, const char *name) {
  bw_entry_rule *rule = bwrl__index_get(&ld->rs->entry_index, name);
  return rule ? rule : bwrl__index_get(&ld->new_entries, name);
}

/* ---- categories ---- */

int bw_rules_set_category(bw_rules *rs, bw_rule_category cat, int on) {
  if (rs == NULL || !category_valid(cat))
    return -EINVAL;
  rs->enabled[cat] = on != 0;
  return 0;
}

int bw_rules_category_enabled(const bw_rules *rs, bw_rule_category cat) {
  if (rs == NULL || !category_valid(cat))
    return 0;
  return rs->enabled[cat];
}

/* ---- iteration ---- */

size_t bw_rules_blocking_count(const bw_rules *rs) {
  return rs ? rs->blocking.n : 0;
}

const bw_blocking_rule *bw_rules_blocking_at(const bw_rules *rs, size_t i) {
  return rs && i < rs->blocking.n ? rs->blocking.items[i] : NULL;
}

size_t bw_rules_entry_count(const bw_rules *rs) {
  return rs ? rs->entries.n : 0;
}

const bw_entry_rule *bw_rules_entry_at(const bw_rules *rs, size_t i) {
  return rs && i < rs->entries.n ? rs->entries.items[i] : NULL;
}

const bw_nonblock_rule *bw_rules_find_nonblock(const bw_rules *rs,
                                               const char *function) {
  if (rs == NULL || function == NULL)
    return NULL;
  return bwrl__index_get(&rs->nonblock_index, function);
}

size_t bw_rules_nonblock_count(const bw_rules *rs) {
  return rs ? rs->nonblocks.n : 0;
}

const bw_nonblock_rule *bw_rules_nonblock_at(const bw_rules *rs, size_t i) {
  return rs && i < rs->nonblocks.n ? rs->nonblocks.items[i] : NULL;
}

const bw_ready_rule *bw_rules_find_ready(const bw_rules *rs,
                                         const char *function) {
  if (rs == NULL || function == NULL)
    return NULL;
  return bwrl__index_get(&rs->ready_index, function);
}

size_t bw_rules_ready_count(const bw_rules *rs) {
  return rs ? rs->readies.n : 0;
}

const bw_pass_rule *bw_rules_find_pass(const bw_rules *rs,
                                       const char *function) {
  if (rs == NULL || function == NULL)
    return NULL;
  return bwrl__index_get(&rs->pass_index, function);
}

const bw_ready_rule *bw_rules_ready_at(const bw_rules *rs, size_t i) {
  return rs && i < rs->readies.n ? rs->readies.items[i] : NULL;
}

size_t bw_rules_post_count(const bw_rules *rs) {
  return rs ? rs->posts.n : 0;
}

const bw_post_rule *bw_rules_post_at(const bw_rules *rs, size_t i) {
  return rs && i < rs->posts.n ? rs->posts.items[i] : NULL;
}

size_t bw_rules_pass_count(const bw_rules *rs) {
  return rs ? rs->passes.n : 0;
}

const bw_pass_rule *bw_rules_pass_at(const bw_rules *rs, size_t i) {
  return rs && i < rs->passes.n ? rs->passes.items[i] : NULL;
}

size_t bw_rules_hint_count(const bw_rules *rs) {
  return rs ? rs->hints.n : 0;
}

const bw_hint_rule *bw_rules_hint_at(const bw_rules *rs, size_t i) {
  return rs && i < rs->hints.n ? rs->hints.items[i] : NULL;
}

size_t bw_rules_allow_count(const bw_rules *rs) {
  return rs ? rs->allows.n : 0;
}

const bw_allow_rule *bw_rules_allow_at(const bw_rules *rs, size_t i) {
  return rs && i < rs->allows.n ? rs->allows.items[i] : NULL;
}
