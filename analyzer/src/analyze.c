/* analyze.c - roots, reachability and findings over the merged program.
 *
 * Invariants:
 *  - An entry call site contributes roots through its callback argument(s);
 *    when that argument is the enclosing function's own parameter, the
 *    enclosing function is a wrapper (an entry itself) and its call sites
 *    contribute the roots instead.
 *  - Each callback is one root, handed over at its first submit site in
 *    (file, line, column) order, so output does not depend on TU order.
 *  - The walk from a root is a BFS with parent links: it gives the shortest
 *    chain and terminates on recursion. It does not enter blocking
 *    functions, the rules' entry functions (they hand work off, they do not
 *    run it) or allowed functions; it does enter the program's wrappers.
 *  - Threads the program starts itself (pthread_create) are neither roots
 *    nor edges: a start routine only becomes reachable by being submitted.
 */
#include "analyze.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One way a call hands a callback over: its argument `arg`. */
typedef struct handoff {
  int arg;
  bw_runs_on runs_on;
  const char *field; /* BW_CALLBACK_FIELD: the member holding it */
} handoff;

/* The parameters a wrapper forwards to an entry's callback argument. */
#define MAX_WRAPPED 4
typedef struct wrapping {
  int count;
  int param[MAX_WRAPPED];
  bw_runs_on runs_on[MAX_WRAPPED];
} wrapping;

static int wraps_param(const wrapping *w, int param) {
  for (int i = 0; i < w->count; i++)
    if (w->param[i] == param)
      return 1;
  return 0;
}

typedef struct root {
  int set;
  bwsc__loc loc;     /* the submit site */
  const char *entry; /* what it was handed to */
  bw_runs_on runs_on;
} root;

typedef struct analysis {
  bwsc__program *prog;
  const bw_rules *rules;
  wrapping *wraps; /* per node: the parameters it forwards to an entry */
  root *roots;     /* per node */
  bwsc__findings *out;
} analysis;

void bwsc__stable_name(const bwsc__node *node, char *buf, size_t size) {
  const bwsc__func_fact *fact = node->def ? node->def : node->decl;
  if (fact && fact->is_static && fact->loc.file) {
    const char *base = strrchr(fact->loc.file, '/');
    base = base ? base + 1 : fact->loc.file;
    snprintf(buf, size, "%s:%s", base, node->name);
  } else {
    snprintf(buf, size, "%s", node->name);
  }
}

static size_t node_index(const analysis *an, const bwsc__node *node) {
  return (size_t)(node - an->prog->nodes);
}

/* The ways a call to `callee` hands callbacks over (rules first, then the
 * program's own wrappers); returns how many were written to out. */
static size_t handoffs_of(const analysis *an, const bwsc__node *callee,
                          handoff *out, size_t max) {
  size_t count = 0;
  const bw_entry_rule *entry = bw_rules_find_entry(an->rules, callee->name);
  for (size_t i = 0; entry && i < entry->n_callbacks && count < max; i++) {
    const bw_entry_callback *cb = &entry->callbacks[i];
    if (cb->kind == BW_CALLBACK_SETTER)
      continue; /* found at the setter's call instead, see below */
    out[count].arg = cb->arg;
    out[count].runs_on = cb->runs_on;
    out[count].field = cb->kind == BW_CALLBACK_FIELD ? cb->field : NULL;
    count++;
  }
  /* A setter (g_source_set_callback) hands its callback to whatever the
   * object is attached to later: treat the setter call as the hand-off. */
  size_t nentries = bw_rules_entry_count(an->rules);
  for (size_t e = 0; e < nentries && count < max; e++) {
    const bw_entry_rule *rule = bw_rules_entry_at(an->rules, e);
    for (size_t i = 0; i < rule->n_callbacks && count < max; i++) {
      const bw_entry_callback *cb = &rule->callbacks[i];
      if (cb->kind == BW_CALLBACK_SETTER && cb->setter &&
          strcmp(cb->setter, callee->name) == 0) {
        out[count].arg = cb->arg;
        out[count].runs_on = cb->runs_on;
        out[count].field = NULL;
        count++;
      }
    }
  }
  const wrapping *wrap = &an->wraps[node_index(an, callee)];
  for (int i = 0; i < wrap->count && count < max; i++) {
    out[count].arg = wrap->param[i];
    out[count].runs_on = wrap->runs_on[i];
    out[count].field = NULL;
    count++;
  }
  return count;
}

/* The most hand-offs one call can have: every callback of its entry rule
 * and every parameter it forwards as a wrapper. */
#define MAX_HANDOFFS (BW_ENTRY_MAX_CALLBACKS + MAX_WRAPPED)

/* The hand-offs of one call (none when it is not a direct call of a known
 * function); *callee_out, when asked for, is the callee. */
static size_t call_handoffs(const analysis *an, const bwsc__call_fact *call,
                            const bwsc__node **callee_out,
                            handoff ways[MAX_HANDOFFS]) {
  const bwsc__node *callee = bwsc__program_node(an->prog, call->callee.ref);
  if (callee_out)
    *callee_out = callee;
  if (call->callee.kind != BWSC__VAL_FUNC || !callee)
    return 0;
  return handoffs_of(an, callee, ways, MAX_HANDOFFS);
}

/* A pool or loop API named by the rules: its body (when the program has
 * it, e.g. the bundled runtime) queues work rather than running it. The
 * program's own wrappers are walked: they may block besides forwarding. */
static int is_rules_entry(const analysis *an, const bwsc__node *node) {
  return bw_rules_find_entry(an->rules, node->name) != NULL;
}

/* A function whose parameter reaches an entry's callback argument becomes
 * an entry itself; repeat until nothing changes (wrappers of wrappers). */
static void find_wrappers(analysis *an) {
  bwsc__program *prog = an->prog;
  for (int changed = 1; changed;) {
    changed = 0;
    for (size_t n = 0; n < prog->nnodes; n++) {
      const bwsc__node *node = &prog->nodes[n];
      wrapping *wrap = &an->wraps[n];
      for (size_t c = 0; c < node->ncalls && wrap->count < MAX_WRAPPED; c++) {
        const bwsc__call_fact *call = prog->calls[node->calls[c]];
        handoff ways[MAX_HANDOFFS];
        size_t nways = call_handoffs(an, call, NULL, ways);
        for (size_t w = 0; w < nways && wrap->count < MAX_WRAPPED; w++) {
          int param;
          if (ways[w].field || ways[w].arg < 0 ||
              (size_t)ways[w].arg >= call->nargs)
            continue;
          if (bwsc__program_param_of(prog, &call->args[ways[w].arg], node->usr,
                                     &param) &&
              !wraps_param(wrap, param)) {
            wrap->param[wrap->count] = param;
            wrap->runs_on[wrap->count] = ways[w].runs_on;
            wrap->count++;
            changed = 1;
          }
        }
      }
    }
  }
}

static int loc_before(const bwsc__loc *a, const bwsc__loc *b) {
  int c = strcmp(a->file ? a->file : "", b->file ? b->file : "");
  if (c)
    return c < 0;
  if (a->line != b->line)
    return a->line < b->line;
  return a->col < b->col;
}

static void add_root(analysis *an, size_t node, const bwsc__loc *loc,
                     const char *entry, bw_runs_on runs_on) {
  root *r = &an->roots[node];
  if (r->set && !loc_before(loc, &r->loc))
    return;
  r->set = 1;
  r->loc = *loc;
  r->entry = entry;
  r->runs_on = runs_on;
}

/* Every slot that is a member named `field` of some struct: the callback of
 * a BW_CALLBACK_FIELD entry (field-insensitive about which struct). */
static void roots_from_field(analysis *an, const char *field,
                             const bwsc__call_fact *call, const char *entry,
                             bw_runs_on runs_on) {
  bwsc__program *prog = an->prog;
  char suffix[256];
  snprintf(suffix, sizeof(suffix), "@FI@%s", field);
  size_t slen = strlen(suffix);
  for (size_t s = 0; s < prog->nslots; s++) {
    const char *key = prog->slots[s].key;
    size_t klen = strlen(key);
    if (klen < slen || strcmp(key + klen - slen, suffix) != 0)
      continue;
    bwsc__value value = {BWSC__VAL_SLOT, (char *)key, NULL, 0};
    const size_t *targets = NULL;
    size_t count = bwsc__program_targets(prog, &value, &targets);
    for (size_t t = 0; t < count; t++)
      add_root(an, targets[t], &call->loc, entry, runs_on);
  }
}

static void find_roots(analysis *an) {
  bwsc__program *prog = an->prog;
  for (size_t n = 0; n < prog->nnodes; n++) {
    const bwsc__node *node = &prog->nodes[n];
    if (node->annotated) {
      const bwsc__func_fact *fact = node->def ? node->def : node->decl;
      add_root(an, n, &fact->loc, "annotate", BW_RUNS_ON_POOL);
    }
    for (size_t c = 0; c < node->ncalls; c++) {
      const bwsc__call_fact *call = prog->calls[node->calls[c]];
      const bwsc__node *callee;
      handoff ways[MAX_HANDOFFS];
      size_t nways = call_handoffs(an, call, &callee, ways);
      for (size_t w = 0; w < nways; w++) {
        if (ways[w].field) {
          roots_from_field(an, ways[w].field, call, callee->name,
                           ways[w].runs_on);
          continue;
        }
        if (ways[w].arg < 0 || (size_t)ways[w].arg >= call->nargs)
          continue;
        const bwsc__value *arg = &call->args[ways[w].arg];
        int param;
        if (an->wraps[n].count &&
            bwsc__program_param_of(prog, arg, node->usr, &param) &&
            wraps_param(&an->wraps[n], param))
          continue; /* forwarded: the wrapper's callers are the roots */
        const size_t *targets = NULL;
        size_t count = bwsc__program_targets(prog, arg, &targets);
        for (size_t t = 0; t < count; t++)
          add_root(an, targets[t], &call->loc, callee->name, ways[w].runs_on);
      }
    }
  }
}

/* ---- non-blocking argument conditions ---------------------------------- */

static int cond_holds(const analysis *an, const bw_rule_cond *cond,
                      const bwsc__call_fact *call) {
  if (cond->arg < 0 || (size_t)cond->arg >= call->nargs)
    return 0;
  const bwsc__value *arg = &call->args[cond->arg];
  const size_t *targets = NULL;
  size_t count;
  switch (cond->kind) {
  case BW_COND_EQUALS:
    return arg->kind == BWSC__VAL_INT && arg->ival == cond->value;
  case BW_COND_HAS_FLAG:
    return arg->kind == BWSC__VAL_INT && cond->value &&
           (arg->ival & cond->value) == cond->value;
  case BW_COND_IS_NULL:
    return arg->kind == BWSC__VAL_INT && arg->ival == 0;
  case BW_COND_NOT_NULL:
    if (arg->kind == BWSC__VAL_FUNC)
      return 1;
    if (arg->kind == BWSC__VAL_INT)
      return arg->ival != 0;
    if (arg->kind != BWSC__VAL_SLOT)
      return 0;
    /* A callback variable counts when something is known to flow in. */
    count = bwsc__program_targets(an->prog, arg, &targets);
    return count > 0;
  default:
    /* Descriptor flags and timeout contents are unknown statically:
     * the call counts as blocking. */
    return 0;
  }
}

static int nonblocking(const analysis *an, const bw_blocking_rule *rule,
                       const bwsc__call_fact *call) {
  for (size_t i = 0; i < rule->n_unless; i++)
    if (cond_holds(an, &rule->unless[i], call))
      return 1;
  return 0;
}

/* ---- reachability -------------------------------------------------------- */

typedef struct link {
  size_t parent;  /* node index, or SIZE_MAX for the root */
  size_t call;    /* index in prog->calls of parent's call to this node */
  unsigned stamp; /* == current root's stamp when visited */
} link;

static void add_finding(analysis *an, size_t root_node, const link *links,
                        size_t node, const bwsc__call_fact *site,
                        const bwsc__loc *loc, const char *callee,
                        const bw_blocking_rule *rule) {
  bwsc__program *prog = an->prog;
  const bwsc__node *cb = &prog->nodes[root_node];
  const root *r = &an->roots[root_node];
  bwsc__finding *f = BWSC__PUSH(an->out->items, an->out->count, an->out->cap);
  f->rule = rule;
  f->callee = callee;
  f->loc = *loc;
  f->callback = cb->name;
  f->callback_usr = cb->usr;
  const bwsc__func_fact *cb_fact = cb->def ? cb->def : cb->decl;
  if (cb_fact)
    f->callback_loc = cb_fact->loc;
  else
    f->callback_loc = r->loc;
  f->entry = r->entry;
  f->submit_loc = r->loc;
  f->runs_on = r->runs_on;

  uint64_t hash = bwsc__fnv1a(BWSC__FNV_INIT, rule->id);
  hash = bwsc__fnv1a(hash, callee);
  char stable[512];
  if (site) {
    size_t depth = 1;
    for (size_t n = node; links[n].parent != SIZE_MAX; n = links[n].parent)
      depth++;
    f->nchain = depth;
    f->chain = bwsc__xcalloc(depth, sizeof(bwsc__step));
    size_t at = depth - 1;
    f->chain[at].loc = site->loc;
    for (size_t n = node;; n = links[n].parent) {
      f->chain[at].function = prog->nodes[n].name;
      f->chain[at].usr = prog->nodes[n].usr;
      if (links[n].parent == SIZE_MAX)
        break;
      f->chain[at - 1].loc = prog->calls[links[n].call]->loc;
      at--;
    }
    f->function = prog->nodes[node].name;
    for (size_t i = 0; i < f->nchain; i++) {
      bwsc__stable_name(bwsc__program_node(prog, f->chain[i].usr), stable,
                        sizeof(stable));
      hash = bwsc__fnv1a(hash, stable);
    }
  } else {
    /* A blocking function handed over directly: `(GFunc) g_usleep`. */
    f->function = cb->name;
    bwsc__stable_name(cb, stable, sizeof(stable));
    hash = bwsc__fnv1a(hash, stable);
  }
  snprintf(f->fingerprint, sizeof(f->fingerprint), "%016llx",
           (unsigned long long)hash);
  f->message = bwsc__xasprintf(
      "'%s' blocks %s: reached from callback '%s'", callee,
      r->runs_on == BW_RUNS_ON_LOOP ? "the event loop" : "a pool worker",
      cb->name);
}

static void visit(link *links, size_t *queue, size_t *tail, size_t node,
                  size_t parent, size_t call, unsigned stamp) {
  if (links[node].stamp == stamp)
    return;
  links[node].stamp = stamp;
  links[node].parent = parent;
  links[node].call = call;
  queue[(*tail)++] = node;
}

static void walk_root(analysis *an, size_t root_node, link *links,
                      size_t *queue, unsigned stamp) {
  bwsc__program *prog = an->prog;
  const bwsc__node *cb = &prog->nodes[root_node];
  if (bw_rules_is_allowed(an->rules, cb->name))
    return;
  if (!cb->def) {
    const bw_blocking_rule *rule = bw_rules_find_blocking(an->rules, cb->name);
    if (rule)
      add_finding(an, root_node, links, root_node, NULL,
                  &an->roots[root_node].loc, cb->name, rule);
    return;
  }
  size_t head = 0, tail = 0;
  visit(links, queue, &tail, root_node, SIZE_MAX, 0, stamp);
  while (head < tail) {
    size_t n = queue[head++];
    const bwsc__node *node = &prog->nodes[n];
    for (size_t c = 0; c < node->ncalls; c++) {
      size_t call_index = node->calls[c];
      const bwsc__call_fact *call = prog->calls[call_index];
      const size_t *targets = NULL;
      size_t count = bwsc__program_targets(prog, &call->callee, &targets);
      for (size_t t = 0; t < count; t++) {
        const bwsc__node *callee = &prog->nodes[targets[t]];
        const bw_blocking_rule *rule =
            bw_rules_find_blocking(an->rules, callee->name);
        if (rule) {
          if (!nonblocking(an, rule, call))
            add_finding(an, root_node, links, n, call, &call->loc, callee->name,
                        rule);
          continue;
        }
        if (!callee->def || is_rules_entry(an, callee) ||
            bw_rules_is_allowed(an->rules, callee->name))
          continue;
        visit(links, queue, &tail, targets[t], n, call_index, stamp);
      }
    }
  }
}

void bwsc__analyze(bwsc__program *prog, const bw_rules *rules,
                   bwsc__findings *out) {
  analysis an = {prog, rules, NULL, NULL, out};
  size_t n = prog->nnodes;
  an.wraps = bwsc__xcalloc(n + 1, sizeof(wrapping));
  an.roots = bwsc__xcalloc(n + 1, sizeof(root));
  find_wrappers(&an);
  find_roots(&an);

  link *links = bwsc__xcalloc(n + 1, sizeof(link));
  size_t *queue = bwsc__xcalloc(n + 1, sizeof(size_t));
  unsigned stamp = 0;
  for (size_t i = 0; i < n; i++)
    if (an.roots[i].set)
      walk_root(&an, i, links, queue, ++stamp);
  free(links);
  free(queue);
  free(an.wraps);
  free(an.roots);
}
