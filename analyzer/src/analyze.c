/* analyze.c - roots, reachability and findings over the merged program.
 *
 * Invariants:
 *  - An entry call site contributes roots through its callback argument(s);
 *    when that argument is the enclosing function's own parameter, the
 *    enclosing function is a wrapper (an entry itself) and its call sites
 *    contribute the roots instead.
 *  - Each callback is one root, handed over at its first submit site in
 *    (file, line, column) order, so output does not depend on TU order.
 *  - The walk from a root is a BFS over states with parent links: it gives
 *    the shortest chain and terminates on recursion. It does not enter
 *    blocking functions, the rules' entry and posts functions (they hand
 *    work off, they do not run it: a callback they queue is a root of its
 *    own) or allowed functions; it does enter the program's wrappers.
 *  - A root keeps the kind of pool it was handed to (the strictest of its
 *    submissions): on an offload pool the categories that are its point
 *    are not findings, on a blocking pool nothing is walked.
 *  - A state is a function, plus, when the function calls through a
 *    function-pointer parameter (or passes one on), what the chain's call
 *    sites passed for it: such a call reaches those functions only. A call
 *    through a variable or field reaches what flows into that slot (fields
 *    are keyed by their struct type's USR). Likewise an integer parameter,
 *    never written in its body, that reaches an argument a rule's
 *    condition reads, or that a branch's test reads (`if (flags &
 *    WATCH_MOUNTS)`), holds the constant the chain passed, when it did;
 *    a call in a branch whose test fails for it is not followed.
 *  - On an offload pool a wait on descriptors (a rule's fds=) whose count
 *    is not provably 0 is the pool's I/O (the io category decides).
 *  - An edge is low confidence when it goes through a pointer with more
 *    than BWSC__WIDE_TARGETS targets, is written in an assertion's failure
 *    branch or a once-only initialisation, or calls a noreturn function.
 *    Every high-confidence state is visited before any low one, so a site
 *    reachable with high confidence is reported so; everything past a low
 *    edge is low.
 *  - Each (call site, root) is reported at most once, from its best state.
 *  - Threads the program starts itself (pthread_create) are neither roots
 *    nor edges: a start routine only becomes reachable by being submitted.
 */
#include "analyze.h"

#include "cancelled.h"
#include "nonblock.h"
#include "vtables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One way a call hands a callback over: its argument `arg`. */
typedef struct handoff {
  int arg;
  bw_runs_on runs_on;
  bw_pool_kind pool_kind;
  const char *field; /* BW_CALLBACK_FIELD: the member holding it */
  const char *api;   /* the entry rule's api, for hint rules */
  int ready; /* the callback's parameter that is ready (ready: rules), -1 */
  /* The index of the argument holding the source whose callback this is
   * (a ready: rule's source=M, or a wrapper's parameter forwarded there),
   * -1; after call_handoffs, the caller's parameter holding it, when the
   * callers decide (g_task_attach_source(task, source, cb)). */
  int source;
} handoff;

/* handoff.ready before call_handoffs settles it: the call's ready: rule
 * decides (a rules entry's or setter's hand-off). */
#define READY_OF_CALL (-2)

/* The parameters a wrapper forwards to an entry's callback argument. */
#define MAX_WRAPPED 4
typedef struct wrapping {
  int count;
  int param[MAX_WRAPPED];
  bw_runs_on runs_on[MAX_WRAPPED];
  bw_pool_kind pool_kind[MAX_WRAPPED];
  const char *api[MAX_WRAPPED];
  int ready[MAX_WRAPPED];
  int source[MAX_WRAPPED]; /* the parameter holding its source, or -1 */
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
  bw_pool_kind pool_kind;
  const char *api; /* the entry's api (NULL: annotated) */
  int ready;       /* the submission's handoff.ready */
} root;

/* What the rules say of one function, looked up once per node: the walk
 * asks for every call it expands, and a name lookup (hash, probe, compare)
 * each time was most of the analysis of a large program. */
typedef struct node_rules {
  const bw_blocking_rule *blocking; /* an enabled blocking rule */
  const bw_entry_rule *entry;
  unsigned char is_entry;  /* an entry or posts rule names it */
  unsigned char allowed;   /* an allow rule names it */
  unsigned char is_setter; /* some entry's callback setter */
} node_rules;

/* The objects a `made-by` condition's functions make (`makers`, "f|g"),
 * and the slots every store into which is one: the set a nonblocking:
 * rule "f fd=result" per maker would give, built once per list. */
#define MAX_MADE_BY 8
typedef struct made_by_set {
  const char *makers;
  bw_rules *rules; /* those rules */
  bwsc__nonblock set;
} made_by_set;

/* The functions a dispatch wrapper's call reaches from one caller. */
typedef struct only_set {
  size_t *nodes;
  size_t count;
} only_set;

typedef struct kept_entry {
  const char *usr, *from, *also;
  int param;
} kept_entry;

typedef struct analysis {
  bwsc__program *prog;
  const bw_rules *rules;
  node_rules *nr;         /* per node */
  wrapping *wraps;        /* per node: the parameters it forwards to an entry */
  root *roots;            /* per node */
  uint64_t *bound_params; /* per node: see find_bound_params */
  uint64_t *int_params;   /* per node: see find_int_params */
  int *callee_param;      /* per call: the caller's parameter it calls
                             through, or -1 */
  /* per call: what its callee resolves to when nothing is bound, kept
   * after the first time (the program's lookup hashes a USR string) */
  const size_t **callee_targets;
  size_t *callee_ntargets;
  unsigned char *callee_done;
  bwsc__findings *out;
  bwsc__nonblock nonblock; /* descriptors made non-blocking */
  bwsc__vtables vtables;   /* defaults every implementation overrides */
  /* per call through a slot: 0 not asked yet, else 1 + what
   * bwsc__vtables_field answered (so 0 for a field without defaults) */
  long *vt_field;
  /* per node: 0 not asked yet, 1 none, else 2 + the index in prog->calls
   * of its one call through a struct field on its own object (a dispatch
   * wrapper: g_proxy_resolver_lookup calls iface->lookup (resolver, ...)) */
  size_t *dispatch;
  /* per direct call on the caller's own object: 0 not asked yet, 1 as
   * any call, else 2 + the index in `onlys` of what the callee's dispatch
   * reaches from there (self_dispatch) */
  size_t *self_call;
  only_set *onlys;
  size_t nonlys, caponlys;
  unsigned *probe_seen; /* per node: visited by the probe when == stamp */
  unsigned probe_stamp;
  size_t *probe_stack;
  size_t nprobe, capprobe;
  made_by_set made_by[MAX_MADE_BY];
  size_t nmade_by;
  /* What registrations pass their callbacks' user data and first
   * parameters (find_entered), for the made-by sets too. */
  kept_entry *kept;
  size_t nkept, capkept;
  bwsc__cancelled cancelled; /* `is cancelled` (cancelled.h) */
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
  const node_rules *nr = &an->nr[node_index(an, callee)];
  const bw_entry_rule *entry = nr->entry;
  for (size_t i = 0; entry && i < entry->n_callbacks && count < max; i++) {
    const bw_entry_callback *cb = &entry->callbacks[i];
    if (cb->kind == BW_CALLBACK_SETTER)
      continue; /* found at the setter's call instead, see below */
    out[count].arg = cb->arg;
    out[count].runs_on = cb->runs_on;
    out[count].pool_kind = cb->pool_kind;
    out[count].field = cb->kind == BW_CALLBACK_FIELD ? cb->field : NULL;
    out[count].api = entry->api;
    out[count].ready = READY_OF_CALL;
    out[count].source = -1;
    count++;
  }
  /* A setter (g_source_set_callback) hands its callback to whatever the
   * object is attached to later: treat the setter call as the hand-off. */
  size_t nentries = nr->is_setter ? bw_rules_entry_count(an->rules) : 0;
  for (size_t e = 0; e < nentries && count < max; e++) {
    const bw_entry_rule *rule = bw_rules_entry_at(an->rules, e);
    for (size_t i = 0; i < rule->n_callbacks && count < max; i++) {
      const bw_entry_callback *cb = &rule->callbacks[i];
      if (cb->kind == BW_CALLBACK_SETTER && cb->setter &&
          strcmp(cb->setter, callee->name) == 0) {
        out[count].arg = cb->arg;
        out[count].runs_on = cb->runs_on;
        out[count].pool_kind = cb->pool_kind;
        out[count].field = NULL;
        out[count].api = rule->api;
        out[count].ready = READY_OF_CALL;
        out[count].source = -1;
        count++;
      }
    }
  }
  const wrapping *wrap = &an->wraps[node_index(an, callee)];
  for (int i = 0; i < wrap->count && count < max; i++) {
    out[count].arg = wrap->param[i];
    out[count].runs_on = wrap->runs_on[i];
    out[count].pool_kind = wrap->pool_kind[i];
    out[count].field = NULL;
    out[count].api = wrap->api[i];
    out[count].ready = wrap->ready[i];
    out[count].source = wrap->source[i];
    count++;
  }
  return count;
}

/* The most hand-offs one call can have: every callback of its entry rule
 * and every parameter it forwards as a wrapper. */
#define MAX_HANDOFFS (BW_ENTRY_MAX_CALLBACKS + MAX_WRAPPED)

/* The hand-offs of one call (none when it is not a direct call of a known
 * function); *callee_out, when asked for, is the callee. A hand-off of the
 * rules (the entry's or a setter's) is a readiness one when the call's
 * ready: rule says so; a wrapper's, when the call inside it was. */
static size_t call_handoffs(analysis *an, const bwsc__call_fact *call,
                            const bwsc__node **callee_out,
                            handoff ways[MAX_HANDOFFS]) {
  const bwsc__node *callee = bwsc__program_node(an->prog, call->callee.ref);
  if (callee_out)
    *callee_out = callee;
  if (call->callee.kind != BWSC__VAL_FUNC || !callee)
    return 0;
  size_t count = handoffs_of(an, callee, ways, MAX_HANDOFFS);
  const bw_ready_rule *rule = bw_rules_find_ready(an->rules, callee->name);
  for (size_t w = 0; w < count; w++) {
    handoff *way = &ways[w];
    if (way->ready == READY_OF_CALL) {
      way->ready = -1;
      if (rule && rule->source == BW_READY_NO_SOURCE)
        way->ready = rule->param;
      else if (rule && rule->source >= 0)
        way->source = rule->source;
    }
    if (way->source < 0)
      continue;
    /* The source is the caller's own parameter (a wrapper's), or a slot
     * its maker's ready: rule says is a readiness source. */
    const char *key = bwsc__nonblock_arg(call, (size_t)way->source);
    int param;
    way->source = -1;
    if (bwsc__nonblock_param_of(key, call->caller, &param))
      way->source = param;
    else
      way->ready = bwsc__nonblock_source(&an->nonblock, key);
  }
  return count;
}

/* A pool or loop API named by the rules: its body (when the program has
 * it, e.g. the bundled runtime) queues work rather than running it. The
 * program's own wrappers are walked: they may block besides forwarding. */
static int is_rules_entry(const analysis *an, const bwsc__node *node) {
  return an->nr[node_index(an, node)].is_entry;
}

static int is_setter_name(const bw_rules *rules, const char *name) {
  size_t nentries = bw_rules_entry_count(rules);
  for (size_t e = 0; e < nentries; e++) {
    const bw_entry_rule *rule = bw_rules_entry_at(rules, e);
    for (size_t i = 0; i < rule->n_callbacks; i++) {
      const bw_entry_callback *cb = &rule->callbacks[i];
      if (cb->kind == BW_CALLBACK_SETTER && cb->setter &&
          strcmp(cb->setter, name) == 0)
        return 1;
    }
  }
  return 0;
}

/* Fills an->nr: one set of lookups per function instead of one per walk
 * step. Setters are few, so the scan over entries per name is cheap here
 * and skipped for every other call later. */
static void lookup_node_rules(analysis *an) {
  for (size_t i = 0; i < an->prog->nnodes; i++) {
    const char *name = an->prog->nodes[i].name;
    node_rules *nr = &an->nr[i];
    nr->blocking = bw_rules_find_blocking(an->rules, name);
    nr->entry = bw_rules_find_entry(an->rules, name);
    nr->is_entry =
        nr->entry != NULL || bw_rules_find_post(an->rules, name) != NULL;
    nr->allowed = bw_rules_is_allowed(an->rules, name) != 0;
    nr->is_setter = name != NULL && is_setter_name(an->rules, name);
  }
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
      /* A rules entry's own body (the bundled runtime's) is what its rule
       * describes: how it forwards the callback is not a second hand-off. */
      if (is_rules_entry(an, node))
        continue;
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
            wrap->pool_kind[wrap->count] = ways[w].pool_kind;
            wrap->api[wrap->count] = ways[w].api;
            wrap->ready[wrap->count] = ways[w].ready;
            wrap->source[wrap->count] = ways[w].source;
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

/* The strictest submission wins (a general pool reports the most), then
 * the first in (file, line, column) order. */
static void add_root(analysis *an, size_t node, const bwsc__loc *loc,
                     const char *entry, const handoff *way) {
  root *r = &an->roots[node];
  if (r->set && (way->pool_kind > r->pool_kind ||
                 (way->pool_kind == r->pool_kind && !loc_before(loc, &r->loc))))
    return;
  r->set = 1;
  r->loc = *loc;
  r->entry = entry;
  r->runs_on = way->runs_on;
  r->pool_kind = way->pool_kind;
  r->api = way->api;
  r->ready = way->ready;
}

/* The slots holding a BW_CALLBACK_FIELD entry's callback: member `field`
 * of the struct type the entry receives (`record`, a USR), or of any
 * struct when that type is unknown (the argument is a void pointer). */
static void roots_from_field(analysis *an, const char *field,
                             const char *record, const bwsc__call_fact *call,
                             const char *entry, const handoff *way) {
  bwsc__program *prog = an->prog;
  char suffix[512];
  snprintf(suffix, sizeof(suffix), "%s@FI@%s", record ? record : "", field);
  size_t slen = strlen(suffix);
  for (size_t s = 0; s < prog->nslots; s++) {
    const char *key = prog->slots[s].key;
    size_t klen = strlen(key);
    if (record ? strcmp(key, suffix) != 0
               : klen < slen || strcmp(key + klen - slen, suffix) != 0)
      continue;
    bwsc__value value = {BWSC__VAL_SLOT, (char *)key, NULL, 0, NULL};
    const size_t *targets = NULL;
    size_t count = bwsc__program_targets(prog, &value, &targets);
    for (size_t t = 0; t < count; t++)
      add_root(an, targets[t], &call->loc, entry, way);
  }
}

static void find_roots(analysis *an) {
  bwsc__program *prog = an->prog;
  for (size_t n = 0; n < prog->nnodes; n++) {
    const bwsc__node *node = &prog->nodes[n];
    if (node->annotated) {
      const bwsc__func_fact *fact = node->def ? node->def : node->decl;
      const handoff annotated = {
          -1, BW_RUNS_ON_POOL, BW_POOL_GENERAL, NULL, NULL, -1, -1};
      add_root(an, n, &fact->loc, "annotate", &annotated);
    }
    for (size_t c = 0; c < node->ncalls; c++) {
      const bwsc__call_fact *call = prog->calls[node->calls[c]];
      const bwsc__node *callee;
      handoff ways[MAX_HANDOFFS];
      size_t nways = call_handoffs(an, call, &callee, ways);
      for (size_t w = 0; w < nways; w++) {
        if (ways[w].field) {
          const char *record =
              ways[w].arg >= 0 && (size_t)ways[w].arg < call->nargs
                  ? call->args[ways[w].arg].record
                  : NULL;
          roots_from_field(an, ways[w].field, record, call, callee->name,
                           &ways[w]);
          continue;
        }
        if (ways[w].arg < 0 || (size_t)ways[w].arg >= call->nargs)
          continue;
        const bwsc__value *arg = &call->args[ways[w].arg];
        int param;
        if ((an->wraps[n].count || is_rules_entry(an, node)) &&
            bwsc__program_param_of(prog, arg, node->usr, &param) &&
            (is_rules_entry(an, node) || wraps_param(&an->wraps[n], param)))
          continue; /* forwarded: the wrapper's callers are the roots */
        const size_t *targets = NULL;
        size_t count = bwsc__program_targets_in(
            prog, arg, prog->call_tu[node->calls[c]], &targets);
        for (size_t t = 0; t < count; t++)
          add_root(an, targets[t], &call->loc, callee->name, &ways[w]);
      }
    }
  }
}

/* ---- what registrations pass their callbacks ---------------------------- */

/* The one argument of `call` but `skip` with a descriptor or object key
 * (g_socket_create_source(sock, G_IO_IN, NULL): sock), or NULL. */
static const char *only_keyed_arg(const bwsc__call_fact *call, size_t skip) {
  const char *found = NULL;
  for (size_t a = 0; a < call->nargs; a++) {
    const char *key = a == skip ? NULL : bwsc__nonblock_arg(call, a);
    if (key && found)
      return NULL;
    found = key ? key : found;
  }
  return found;
}

/* The one argument of `call` but `skip` that is a struct pointer
 * variable ("*<USR>", bwsc__arg_desc.points), or NULL; *at: its index. */
static const char *only_pointer_arg(const bwsc__call_fact *call, size_t skip,
                                    size_t *at) {
  const char *found = NULL;
  for (size_t a = 0; call->descs && a < call->nargs; a++) {
    const char *points = a == skip ? NULL : call->descs[a].points;
    if (!points || points[0] != '*')
      continue;
    if (found)
      return NULL;
    found = points;
    *at = a;
  }
  return found;
}

/* What argument `a` of `call` hands a callback: its struct pointer key
 * ("*<USR>") with *also its own key, or its own key (*also NULL); NULL
 * when it is neither. */
static const char *handed(const bwsc__call_fact *call, int a,
                          const char **also) {
  *also = NULL;
  if (a < 0 || (size_t)a >= call->nargs || !call->descs)
    return NULL;
  const char *points = call->descs[a].points;
  const char *key = bwsc__nonblock_arg(call, (size_t)a);
  if (points && points[0] == '*') {
    *also = key;
    return points;
  }
  return key;
}

/* The objects the readiness hand-off `way` of `call` watches, into
 * out[0..max) (the registration's sources' makers' one keyed argument, or
 * the entry's own): how many, or -1 when one is not known. */
static int watched_by(analysis *an, const bwsc__call_fact *call,
                      const bwsc__node *callee, const handoff *way,
                      const char **out, int max) {
  const bw_ready_rule *rule = bw_rules_find_ready(an->rules, callee->name);
  if (!rule || way->ready < 0)
    return -1;
  if (rule->source == BW_READY_NO_SOURCE) {
    out[0] = only_keyed_arg(call, (size_t)way->arg);
    return out[0] ? 1 : -1;
  }
  const char *source =
      rule->source >= 0 ? bwsc__nonblock_arg(call, (size_t)rule->source) : NULL;
  const size_t *makers = NULL;
  size_t n = bwsc__nonblock_made_by(&an->nonblock, source, &makers);
  if (bwsc__nonblock_source(&an->nonblock, source) < 0 || !n || n > (size_t)max)
    return -1;
  for (size_t i = 0; i < n; i++) {
    const bwsc__call_fact *maker = an->prog->calls[makers[i]];
    out[i] = only_keyed_arg(maker, SIZE_MAX);
    if (!out[i])
      return -1;
  }
  return (int)n;
}

/* What one callback's registrations pass it: how many calls registered
 * it, the last one, its watched parameter (-1 none yet, MIXED_PARAM), and
 * whether every registration's watched objects and user data are known;
 * `first`: its first pending entry. */
#define MIXED_PARAM (-2)
#define MAX_WATCHED 8
typedef struct registered {
  size_t calls, last_call;
  int ready;
  int watched_known, data_known, object_known;
  size_t first;
} registered;

/* What a registration passes: the watched object, the user data (last
 * parameter), or the object a passes: rule hands as first parameter. */
enum { PASS_WATCHED, PASS_DATA, PASS_OBJECT };

typedef struct pending_entry {
  int param, what;
  const char *from, *also;
  size_t next; /* 1 + the callback's next entry, 0: none */
} pending_entry;

static void push_pending(pending_entry **entries, size_t *n, size_t *cap,
                         registered *r, int param, int what, const char *from,
                         const char *also) {
  pending_entry *e = BWSC__PUSH(*entries, *n, *cap);
  e->param = param;
  e->what = what;
  e->from = from;
  e->also = also;
  e->next = r->first;
  r->first = *n;
}

/* The callback `usr`'s entry in regs (made on first sight). */
static registered *registered_of(bwsc__strmap *index, registered **regs,
                                 size_t *nregs, size_t *capregs,
                                 const char *usr) {
  size_t at = 0;
  if (!bwsc__strmap_get(index, usr, &at)) {
    registered *r = BWSC__PUSH(*regs, *nregs, *capregs);
    memset(r, 0, sizeof(*r));
    r->ready = -1;
    r->watched_known = r->data_known = r->object_known = 1;
    r->last_call = SIZE_MAX;
    at = *nregs;
    bwsc__strmap_put(index, usr, at);
  }
  return &(*regs)[at - 1];
}

/* Its facts' parameter count for the function `usr`, or -1. */
static int params_of(const bwsc__program *prog, const char *usr) {
  const bwsc__node *node = bwsc__program_node(prog, usr);
  const bwsc__func_fact *fact =
      node ? (node->def ? node->def : node->decl) : NULL;
  return fact ? fact->nparams : -1;
}

/* A callback every code use of which is a registration by a rules entry
 * or setter (not a program's wrapper, which may call it too) or by a
 * passes: call receives what those registrations pass it
 * (bwsc__nonblock_enter): the objects its readiness sources watch, as its
 * ready parameter, when every registration is a readiness one for that
 * parameter; as its last parameter, the user data of callback APIs
 * (GLib's, libevent's, pthread_create's), each registration's one struct
 * pointer argument (an entry's) or data argument (a passes: call's), and
 * the argument's own key, when every registration has one; and as its
 * first, a passes: call's object argument, when every registration is
 * such a call. All but the watched objects also go to the made-by sets
 * (an->kept). */
static void find_entered(analysis *an) {
  bwsc__program *prog = an->prog;
  bwsc__strmap index; /* usr -> 1 + index in regs */
  memset(&index, 0, sizeof(index));
  registered *regs = NULL;
  size_t nregs = 0, capregs = 0;
  pending_entry *entries = NULL;
  size_t nentries = 0, capentries = 0;
  for (size_t i = 0; i < prog->ncalls; i++) {
    const bwsc__call_fact *call = prog->calls[i];
    const bwsc__node *callee = NULL;
    handoff ways[MAX_HANDOFFS];
    size_t nways = call_handoffs(an, call, &callee, ways);
    const bw_pass_rule *pass =
        callee ? bw_rules_find_pass(an->rules, callee->name) : NULL;
    if (pass && (size_t)pass->callback < call->nargs &&
        call->args[pass->callback].kind == BWSC__VAL_FUNC) {
      /* g_input_stream_read_async(stream, ..., cb, data): cb(stream, ...,
       * data), whatever else the function's body (a wrapper) does */
      const char *usr = call->args[pass->callback].ref;
      registered *r = registered_of(&index, &regs, &nregs, &capregs, usr);
      if (r->last_call == i)
        continue;
      r->last_call = i;
      r->calls++;
      r->watched_known = 0;
      int nparams = params_of(prog, usr);
      const char *also = NULL;
      const char *from =
          nparams >= 2 ? handed(call, pass->object, &also) : NULL;
      if (from)
        push_pending(&entries, &nentries, &capentries, r, 0, PASS_OBJECT, from,
                     also);
      else
        r->object_known = 0;
      from = nparams >= 2 ? handed(call, pass->data, &also) : NULL;
      if (from)
        push_pending(&entries, &nentries, &capentries, r, nparams - 1,
                     PASS_DATA, from, also);
      else
        r->data_known = 0;
      continue;
    }
    if (nways && !is_rules_entry(an, callee) &&
        !an->nr[node_index(an, callee)].is_setter)
      continue;
    for (size_t w = 0; w < nways; w++) {
      if (ways[w].field || ways[w].arg < 0 ||
          (size_t)ways[w].arg >= call->nargs ||
          call->args[ways[w].arg].kind != BWSC__VAL_FUNC)
        continue;
      const char *usr = call->args[ways[w].arg].ref;
      registered *r = registered_of(&index, &regs, &nregs, &capregs, usr);
      if (r->last_call == i)
        continue; /* the same registration as an entry and as a setter */
      r->last_call = i;
      r->calls++;
      r->object_known = 0; /* what an entry passes first is not said */
      const char *watched[MAX_WATCHED];
      int nwatched =
          watched_by(an, call, callee, &ways[w], watched, MAX_WATCHED);
      if (nwatched < 0 || (r->ready >= 0 && r->ready != ways[w].ready))
        r->watched_known = 0;
      r->ready = ways[w].ready;
      for (int k = 0; k < nwatched; k++)
        push_pending(&entries, &nentries, &capentries, r, ways[w].ready,
                     PASS_WATCHED, watched[k], NULL);
      int nparams = params_of(prog, usr);
      size_t data_at = 0;
      const char *data = only_pointer_arg(call, (size_t)ways[w].arg, &data_at);
      if (!data || nparams < 1 || nparams - 1 == ways[w].ready) {
        r->data_known = 0;
        continue;
      }
      push_pending(&entries, &nentries, &capentries, r, nparams - 1, PASS_DATA,
                   data, bwsc__nonblock_arg(call, data_at));
    }
  }
  for (size_t k = 0; k < index.cap; k++) {
    const char *usr = index.keys[k];
    const registered *r = usr ? &regs[index.values[k] - 1] : NULL;
    if (!r || r->calls != bwsc__nonblock_code_uses(&an->nonblock, usr))
      continue;
    for (size_t e = r->first; e; e = entries[e - 1].next) {
      const pending_entry *p = &entries[e - 1];
      int known = p->what == PASS_WATCHED ? r->watched_known
                  : p->what == PASS_DATA  ? r->data_known
                                          : r->object_known;
      if (!known)
        continue;
      bwsc__nonblock_enter(&an->nonblock, usr, p->param, p->from, p->also);
      if (p->what == PASS_WATCHED)
        continue; /* a socket being watched: not what a maker made */
      kept_entry *kept = BWSC__PUSH(an->kept, an->nkept, an->capkept);
      kept->usr = usr;
      kept->param = p->param;
      kept->from = p->from;
      kept->also = p->also;
    }
  }
  free(entries);
  free(regs);
  bwsc__strmap_free(&index);
}

/* A function registered only as a readiness callback (every code use of
 * it is a readiness hand-off, for one parameter) whose direct calls pass
 * non-blocking objects there: that parameter is ready wherever it runs
 * (bwsc__nonblock_add_ready_param). USR -> 1 + the parameter, or
 * MIXED_READY when two hand-offs name different ones; `counts`: how many
 * hand-offs. Only the rules' entries and setters count: a program's
 * wrapper may also call the callback it is given, with anything. */
#define MIXED_READY ((size_t)-1)
static void find_ready_params(analysis *an) {
  bwsc__program *prog = an->prog;
  bwsc__strmap params, counts;
  memset(&params, 0, sizeof(params));
  memset(&counts, 0, sizeof(counts));
  for (size_t i = 0; i < prog->ncalls; i++) {
    const bwsc__call_fact *call = prog->calls[i];
    const bwsc__node *callee = NULL;
    handoff ways[MAX_HANDOFFS];
    size_t nways = call_handoffs(an, call, &callee, ways);
    if (nways && !is_rules_entry(an, callee) &&
        !an->nr[node_index(an, callee)].is_setter)
      continue;
    for (size_t w = 0; w < nways; w++) {
      if (ways[w].field || ways[w].ready < 0 || ways[w].arg < 0 ||
          (size_t)ways[w].arg >= call->nargs ||
          call->args[ways[w].arg].kind != BWSC__VAL_FUNC)
        continue;
      const char *usr = call->args[ways[w].arg].ref;
      size_t param = 0, count = 0;
      size_t mine = 1 + (size_t)ways[w].ready;
      if (bwsc__strmap_get(&params, usr, &param) && param != mine)
        mine = MIXED_READY;
      bwsc__strmap_put(&params, usr, mine);
      bwsc__strmap_get(&counts, usr, &count);
      bwsc__strmap_put(&counts, usr, count + 1);
    }
  }
  for (size_t k = 0; k < params.cap; k++) {
    const char *usr = params.keys[k];
    size_t count = 0;
    if (!usr || params.values[k] == MIXED_READY ||
        !bwsc__strmap_get(&counts, usr, &count) ||
        count != bwsc__nonblock_code_uses(&an->nonblock, usr))
      continue;
    bwsc__nonblock_add_ready_param(&an->nonblock, usr,
                                   (int)(params.values[k] - 1));
  }
  bwsc__strmap_free(&params);
  bwsc__strmap_free(&counts);
}

/* ---- non-blocking argument conditions ---------------------------------- */

/* Parameter `param` of a state's function may hold node `target`, or,
 * with is_int, holds the integer `value`: the chain's call passed it. */
typedef struct binding {
  int param;
  int is_int;
  size_t target;
  long long value;
} binding;

/* What the walk's chain passed for the integer parameters of the function
 * a call is written in (find_int_params): its USR and bindings. */
typedef struct chain_ints {
  const char *usr;
  const binding *bound;
  size_t nbound;
} chain_ints;

/* The integer the chain bound for parameter `param` of the function. */
static int bound_int(const chain_ints *ints, int param, long long *out) {
  for (size_t i = 0; i < ints->nbound; i++) {
    if (ints->bound[i].is_int && ints->bound[i].param == param) {
      *out = ints->bound[i].value;
      return 1;
    }
  }
  return 0;
}

/* A constant converted to a parameter's type (bwsc__param_test.width). */
static long long as_param(long long v, int width) {
  int bits = width < 0 ? -width : width;
  if (bits == 1)
    return v != 0;
  if (bits >= 64)
    return v;
  uint64_t mask = (UINT64_C(1) << bits) - 1, u = (uint64_t)v & mask;
  if (width < 0 && (u >> (bits - 1) & 1))
    u |= ~mask;
  return (long long)u;
}

/* One of the tests the call's branches pass fails for a constant the
 * chain passed: the branch does not run on this chain. The test's own
 * constant is of the condition's type, at least as wide as the
 * parameter's: `==` compares the parameter's bits, `!=` holds unless the
 * values are equal (either way a doubt keeps the call). */
static int branch_skipped(const bwsc__call_fact *call, const chain_ints *ints) {
  for (size_t t = 0; t < call->ntests; t++) {
    const bwsc__param_test *test = &call->tests[t];
    long long v;
    if (!bound_int(ints, test->param, &v))
      continue;
    v = as_param(v, test->width);
    int bits = test->width < 0 ? -test->width : test->width;
    uint64_t mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    if ((test->kind == BWSC__TEST_SOME_BITS && !(v & test->value)) ||
        (test->kind == BWSC__TEST_NO_BITS && (v & test->value)) ||
        (test->kind == BWSC__TEST_EQ &&
         ((uint64_t)v ^ (uint64_t)test->value) & mask) ||
        (test->kind == BWSC__TEST_NE && v == test->value))
      return 1;
  }
  return 0;
}

/* The integer the chain bound for slot `key`, when it is one of the
 * function's parameters the walk tracks. */
static int chain_int(const chain_ints *ints, const char *key, long long *out) {
  int param;
  if (!ints->nbound || !bwsc__nonblock_param_of(key, ints->usr, &param))
    return 0;
  return bound_int(ints, param, out);
}

/* A call written in readiness callback `cb` itself, on the descriptor
 * the callback was registered for (its parameter the ready: rule names). */
static int on_ready_fd(const analysis *an, const char *desc, size_t cb) {
  return cb != SIZE_MAX &&
         bwsc__nonblock_ready_fd(an->roots[cb].ready, an->prog->nodes[cb].usr,
                                 desc);
}

/* The integer argument `a` of `call` is: a constant, a parameter the
 * walk's chain passed a constant for (`ints`), or a variable or parameter
 * that only ever holds one (a wrapper's caller passes it). */
static int int_arg(analysis *an, const bwsc__call_fact *call, size_t a,
                   const chain_ints *ints, long long *out) {
  if (call->args[a].kind == BWSC__VAL_INT) {
    *out = call->args[a].ival;
    return 1;
  }
  return call->descs && call->descs[a].plain &&
         (chain_int(ints, call->descs[a].key, out) ||
          bwsc__nonblock_const(&an->nonblock, call->descs[a].key, out));
}

/* Argument `a` of `call` was tested ready just before the call
 * (parse_ready.h) by a ready: test=N rule's function, for a write when
 * `write`, else for a read. */
static int tested_ready(const analysis *an, const bwsc__call_fact *call,
                        size_t a, int write) {
  const char *tested = call->descs ? call->descs[a].tested : NULL;
  const char *hash = tested ? strrchr(tested, '#') : NULL;
  char name[128];
  if (!hash || (size_t)(hash - tested) >= sizeof(name))
    return 0;
  memcpy(name, tested, (size_t)(hash - tested));
  name[hash - tested] = '\0';
  const bw_ready_rule *rule = bw_rules_find_ready(an->rules, name);
  return rule && rule->test >= 0 && rule->test == atoi(hash + 1) &&
         rule->test_write == write;
}

/* The slots holding only objects that `makers` ("f|g") made, or NULL
 * (more lists than MAX_MADE_BY: the condition does not hold). */
static const bwsc__nonblock *made_by(analysis *an, const char *makers) {
  for (size_t i = 0; i < an->nmade_by; i++)
    if (strcmp(an->made_by[i].makers, makers) == 0)
      return &an->made_by[i].set;
  if (an->nmade_by == MAX_MADE_BY)
    return NULL;
  size_t cap = 64, len = 0;
  char *text = bwsc__xcalloc(cap, 1);
  for (const char *p = makers;;) {
    const char *bar = strchr(p, '|');
    int n = bar ? (int)(bar - p) : (int)strlen(p);
    size_t need = len + (size_t)n + 32;
    if (need > cap) {
      text = bwsc__xrealloc(text, need);
      cap = need;
    }
    len += (size_t)snprintf(text + len, cap - len,
                            "nonblocking:%.*s fd=result\n", n, p);
    if (!bar)
      break;
    p = bar + 1;
  }
  made_by_set *k = &an->made_by[an->nmade_by];
  k->rules = bw_rules_create();
  if (!k->rules || bw_rules_load_string(k->rules, "made-by", text, len)) {
    bw_rules_free(k->rules);
    free(text);
    return NULL;
  }
  free(text);
  k->makers = makers;
  memset(&k->set, 0, sizeof(k->set));
  bwsc__nonblock_init(&k->set, an->prog, k->rules);
  for (size_t i = 0; i < an->nkept; i++)
    bwsc__nonblock_enter(&k->set, an->kept[i].usr, an->kept[i].param,
                         an->kept[i].from, an->kept[i].also);
  bwsc__nonblock_grow(&k->set);
  bwsc__nonblock_shrink(&k->set); /* only has() is asked of it */
  return &an->made_by[an->nmade_by++].set;
}

/* Every store into field `cond->field` of struct variable `var` (a USR)
 * is a constant meeting the condition, and there is one. */
static int var_field_holds(analysis *an, const char *var,
                           const bw_rule_cond *cond) {
  char key[512];
  const size_t *flows = NULL;
  int len = snprintf(key, sizeof(key), "%s.%s", var, cond->field);
  if (len <= 0 || (size_t)len >= sizeof(key))
    return 0;
  size_t n = bwsc__nonblock_flows_into(&an->nonblock, key, &flows);
  for (size_t i = 0; i < n; i++) {
    const bwsc__desc_flow *flow = an->prog->desc_flows[flows[i]];
    long long v = flow->ival;
    if (!flow->is_const ||
        (cond->kind == BW_COND_EQUALS
             ? v != cond->value
             : !cond->value || (v & cond->value) != cond->value))
      return 0;
  }
  return n > 0;
}

/* `argN->FIELD is|has ...`: the argument is `&v` of a struct variable, or
 * a pointer variable every store into which is `&v` of one, and each such
 * v's field holds the condition (var_field_holds). */
static int field_holds(analysis *an, const bw_rule_cond *cond,
                       const bwsc__call_fact *call, size_t a) {
  const char *points = call->descs ? call->descs[a].points : NULL;
  if (!points)
    return 0;
  if (points[0] == '&')
    return var_field_holds(an, points + 1, cond);
  const size_t *flows = NULL;
  size_t n = bwsc__nonblock_flows_into(&an->nonblock, points, &flows);
  for (size_t i = 0; i < n; i++) {
    const bwsc__desc_flow *flow = an->prog->desc_flows[flows[i]];
    if (!flow->from || flow->from[0] != '&' ||
        !var_field_holds(an, flow->from + 1, cond))
      return 0;
  }
  return n > 0;
}

/* `cb`: the readiness callback the call is written in, else SIZE_MAX. */
static int cond_holds(analysis *an, const bw_rule_cond *cond,
                      const bwsc__call_fact *call, size_t cb,
                      const chain_ints *ints) {
  if (cond->arg < 0 || (size_t)cond->arg >= call->nargs)
    return 0;
  size_t a = (size_t)cond->arg;
  const bwsc__value *arg = &call->args[a];
  const size_t *targets = NULL;
  const char *desc;
  size_t count;
  long long v;
  if (cond->field)
    return field_holds(an, cond, call, a);
  switch (cond->kind) {
  case BW_COND_EQUALS:
    return int_arg(an, call, a, ints, &v) && v == cond->value;
  case BW_COND_HAS_FLAG:
    /* `op | LOCK_NB` sets the flag whatever op holds. */
    if (!int_arg(an, call, a, ints, &v))
      v = call->descs ? call->descs[a].bits : 0;
    return cond->value && (v & cond->value) == cond->value;
  case BW_COND_IS_NULL:
    return int_arg(an, call, a, ints, &v) && v == 0;
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
  case BW_COND_NONBLOCKING_FD:
  case BW_COND_NONBLOCKING_OBJECT: /* a GSocket, tracked as descriptors are */
    desc = bwsc__nonblock_arg(call, (size_t)cond->arg);
    return bwsc__nonblock_has(&an->nonblock, desc) ||
           (desc && bwsc__nonblock_has(&an->nonblock, call->descs[a].via)) ||
           on_ready_fd(an, desc, cb) ||
           bwsc__nonblock_ready_param(&an->nonblock, desc);
  case BW_COND_READY: /* only readiness: a non-blocking object still waits */
    desc = bwsc__nonblock_arg(call, (size_t)cond->arg);
    return on_ready_fd(an, desc, cb) ||
           bwsc__nonblock_ready_param(&an->nonblock, desc) ||
           tested_ready(an, call, a, 0);
  case BW_COND_HAS_ROOM: /* tested writable, and a small constant size */
    return tested_ready(an, call, a, 1) && cond->value >= 0 &&
           (size_t)cond->value < call->nargs &&
           int_arg(an, call, (size_t)cond->value, ints, &v) && v >= 0 &&
           v <= BW_ROOM_BYTES;
  case BW_COND_MADE_BY: { /* a slot holding only what the makers made */
    const bwsc__nonblock *set = made_by(an, cond->name);
    desc = bwsc__nonblock_arg(call, (size_t)cond->arg);
    return set && bwsc__nonblock_has(set, desc);
  }
  case BW_COND_CANCELLED: /* cancelled before its callback's registrations */
    return bwsc__cancelled_arg(&an->cancelled, &an->nonblock, an->prog,
                               an->rules, call, a);
  case BW_COND_NONBLOCKING_FILE: /* a FILE the set holds: opened on /proc */
    desc = bwsc__nonblock_arg(call, (size_t)cond->arg);
    return bwsc__nonblock_has(&an->nonblock, desc);
  case BW_COND_PATH_UNDER: /* a literal, or a format printed into a local */
    desc = call->descs ? call->descs[a].text : NULL;
    return desc && cond->name &&
           strncmp(desc, cond->name, strlen(cond->name)) == 0;
  default:
    /* Other descriptor flags and timeout contents are unknown statically:
     * the call counts as blocking. */
    return 0;
  }
}

static int nonblocking(analysis *an, const bw_blocking_rule *rule,
                       const bwsc__call_fact *call, size_t cb,
                       const chain_ints *ints) {
  for (size_t i = 0; i < rule->n_unless; i++)
    if (cond_holds(an, &rule->unless[i], call, cb, ints))
      return 1;
  return 0;
}

/* Whether `rule`'s finding at `call` counts on the pool the root was
 * handed to. On an offload pool a wait on descriptors (a rule's fds=, a
 * count not provably 0: poll(fds, nfds, -1) in a read offloaded to GTask's
 * pool) is the pool's I/O; a count of 0 is a sleep and keeps its category. */
static int counts_on(analysis *an, size_t root_node,
                     const bw_blocking_rule *rule, const bwsc__call_fact *call,
                     const chain_ints *ints) {
  bw_pool_kind kind = an->roots[root_node].pool_kind;
  long long count;
  if (!bw_pool_kind_reports(kind, rule->category))
    return 0;
  if (kind != BW_POOL_OFFLOAD || !rule->fds || !call ||
      (size_t)rule->fds > call->nargs ||
      (int_arg(an, call, (size_t)rule->fds - 1, ints, &count) && count == 0))
    return 1;
  return bw_pool_kind_reports(kind, BW_CATEGORY_IO);
}

/* ---- reachability -------------------------------------------------------- */

/* A walk state: a function reached from the root, and how. A function that
 * calls through a parameter (or passes one on to such a function) is
 * reached once per distinct binding of those parameters, so a call through
 * a parameter resolves to what the call sites on the chain passed in. */
typedef struct state {
  size_t node;
  size_t parent;   /* index in walk.states, SIZE_MAX for the root */
  size_t call;     /* index in prog->calls of the parent's call to here */
  size_t ntargets; /* that call's targets when it goes through a pointer */
  bwsc__cold cold; /* that call's coldness */
  size_t bound;    /* first entry in walk.bound, SIZE_MAX: unbound */
  size_t nbound;
  int low;
  /* 1 + an index into analysis.onlys, 0 for none: the function is a
   * dispatch wrapper called on its caller's own object, and its dispatch
   * reaches those functions only (self_dispatch) */
  size_t only;
} state;

typedef struct scratch {
  size_t *items;
  size_t count, cap;
} scratch;

typedef struct walk {
  state *states; /* visited, in BFS order (the queue) */
  size_t nstates, capstates;
  state *later; /* reached over a low-confidence edge, visited after */
  size_t nlater, caplater;
  binding *bound;
  size_t nbound, capbound;
  scratch args;      /* what enter() resolves arguments into */
  scratch callees;   /* what expand() resolves callees into */
  bwsc__strmap seen; /* bound states already visited: key -> 1 */
  char **keys;
  size_t nkeys, capkeys;
  unsigned *node_stamp; /* unbound states: node visited when == stamp */
  unsigned *call_stamp; /* a call already reported for this root */
  unsigned stamp;
} walk;

/* Per node, a bit per parameter whose binding the walk tracks: the
 * function calls through it, or passes it to such a parameter. */
static void find_bound_params(analysis *an) {
  bwsc__program *prog = an->prog;
  an->callee_param = bwsc__xcalloc(prog->ncalls + 1, sizeof(int));
  for (size_t n = 0; n < prog->nnodes; n++) {
    const bwsc__node *node = &prog->nodes[n];
    for (size_t c = 0; c < node->ncalls; c++) {
      const bwsc__call_fact *call = prog->calls[node->calls[c]];
      int param = -1;
      if (!bwsc__program_param_of(prog, &call->callee, node->usr, &param) ||
          param >= 64)
        param = -1;
      an->callee_param[node->calls[c]] = param;
      if (param >= 0)
        an->bound_params[n] |= UINT64_C(1) << param;
    }
  }
  for (int changed = 1; changed;) {
    changed = 0;
    for (size_t n = 0; n < prog->nnodes; n++) {
      const bwsc__node *node = &prog->nodes[n];
      for (size_t c = 0; c < node->ncalls; c++) {
        const bwsc__call_fact *call = prog->calls[node->calls[c]];
        bwsc__node *callee = bwsc__program_node(prog, call->callee.ref);
        if (call->callee.kind != BWSC__VAL_FUNC || !callee)
          continue;
        uint64_t mask = an->bound_params[node_index(an, callee)];
        for (size_t a = 0; mask && a < call->nargs && a < 64; a++) {
          int param;
          if (!(mask >> a & 1) ||
              !bwsc__program_param_of(prog, &call->args[a], node->usr,
                                      &param) ||
              param >= 64 || an->bound_params[n] >> param & 1)
            continue;
          an->bound_params[n] |= UINT64_C(1) << param;
          changed = 1;
        }
      }
    }
  }
}

/* Whether a rule's `unless=` (or its fds=) reads argument `a` as an
 * integer. */
static int reads_int_arg(const bw_blocking_rule *rule, size_t a) {
  if (rule && rule->fds && (size_t)rule->fds - 1 == a)
    return 1;
  for (size_t i = 0; rule && i < rule->n_unless; i++) {
    const bw_rule_cond *cond = &rule->unless[i];
    if (cond->arg >= 0 && (size_t)cond->arg == a &&
        (cond->kind == BW_COND_EQUALS || cond->kind == BW_COND_HAS_FLAG ||
         cond->kind == BW_COND_IS_NULL))
      return 1;
  }
  return 0;
}

/* Argument `a` of a call written in `node` is `node`'s parameter *param
 * itself, never written in its body: it holds what the chain passed. */
static int plain_param(analysis *an, const bwsc__node *node,
                       const bwsc__call_fact *call, size_t a, int *param) {
  return call->descs && a < call->nargs && call->descs[a].plain &&
         bwsc__nonblock_param_of(call->descs[a].key, node->usr, param) &&
         *param < 64 &&
         bwsc__nonblock_unwritten(&an->nonblock, call->descs[a].key);
}

/* Per node, a bit per integer parameter whose value the walk tracks along
 * its chains: the function passes it, unchanged, as an argument a rule's
 * condition reads (`poll(fds, nfds, timeout)` in g_poll: "arg2 is 0"), or
 * to such a parameter of a function it calls directly, or a branch of its
 * body tests it (bwsc__param_test). A state then holds
 * the constant its chain's call passed (g_poll(&fd, 1, 0) in an
 * is_readable method, -1 in a read method). */
static void find_int_params(analysis *an) {
  bwsc__program *prog = an->prog;
  /* Each direct call's callee, looked up once (a USR hash each). */
  size_t *callee_of = bwsc__xcalloc(prog->ncalls + 1, sizeof(size_t));
  for (size_t i = 0; i < prog->ncalls; i++) {
    const bwsc__call_fact *call = prog->calls[i];
    bwsc__node *callee = call->callee.kind == BWSC__VAL_FUNC
                             ? bwsc__program_node(prog, call->callee.ref)
                             : NULL;
    callee_of[i] = callee ? node_index(an, callee) : SIZE_MAX;
  }
  /* A parameter a call's branch tests (`if (flags & WATCH_MOUNTS)`),
   * never written in the program, so what the chain passed is what the
   * test reads (branch_skipped); only where skipping the call can matter:
   * its callee has a rule or a body, or it calls through a pointer. */
  for (size_t n = 0; n < prog->nnodes; n++) {
    const bwsc__node *node = &prog->nodes[n];
    for (size_t c = 0; c < node->ncalls; c++) {
      const bwsc__call_fact *call = prog->calls[node->calls[c]];
      size_t m = callee_of[node->calls[c]];
      if (!call->ntests ||
          (m == SIZE_MAX ? call->callee.kind == BWSC__VAL_FUNC
                         : !an->nr[m].blocking && !prog->nodes[m].def))
        continue;
      for (size_t t = 0; t < call->ntests; t++) {
        int param = call->tests[t].param;
        char key[512];
        int len = snprintf(key, sizeof(key), "%s#%d", node->usr, param);
        if (an->int_params[n] >> param & 1 || len <= 0 ||
            (size_t)len >= sizeof(key) ||
            !bwsc__nonblock_unwritten(&an->nonblock, key))
          continue;
        an->int_params[n] |= UINT64_C(1) << param;
      }
    }
  }
  for (int changed = 1; changed;) {
    changed = 0;
    for (size_t n = 0; n < prog->nnodes; n++) {
      const bwsc__node *node = &prog->nodes[n];
      for (size_t c = 0; c < node->ncalls; c++) {
        size_t m = callee_of[node->calls[c]];
        if (m == SIZE_MAX)
          continue;
        const bw_blocking_rule *rule = an->nr[m].blocking;
        uint64_t mask = an->int_params[m];
        if (!rule && !mask)
          continue;
        const bwsc__call_fact *call = prog->calls[node->calls[c]];
        for (size_t a = 0; a < call->nargs && a < 64; a++) {
          int param;
          if ((!(mask >> a & 1) && !reads_int_arg(rule, a)) ||
              !plain_param(an, node, call, a, &param) ||
              an->int_params[n] >> param & 1)
            continue;
          an->int_params[n] |= UINT64_C(1) << param;
          changed = 1;
        }
      }
    }
  }
  free(callee_of);
}

/* What call `call`'s callee resolves to when nothing is bound. */
static size_t callee_targets(analysis *an, size_t call, const size_t **out) {
  if (!an->callee_done[call]) {
    an->callee_ntargets[call] = bwsc__program_targets_in(
        an->prog, &an->prog->calls[call]->callee, an->prog->call_tu[call],
        &an->callee_targets[call]);
    an->callee_done[call] = 1;
  }
  *out = an->callee_targets[call];
  return an->callee_ntargets[call];
}

/* Sets *out to what `value`, used by call `call` in state `from`, may
 * denote: its binding when the value is one of the function's bound
 * parameters, else every function that flows into it. */
static size_t resolve(analysis *an, const walk *w, const state *from,
                      size_t call, const bwsc__value *value, int param,
                      scratch *buf, const size_t **out) {
  if (param < 0 && from->bound != SIZE_MAX && value->kind == BWSC__VAL_SLOT &&
      !bwsc__program_param_of(an->prog, value, an->prog->nodes[from->node].usr,
                              &param))
    param = -1;
  if (param < 0 || from->bound == SIZE_MAX ||
      !(an->bound_params[from->node] >> param & 1)) {
    if (value != &an->prog->calls[call]->callee)
      return bwsc__program_targets_in(an->prog, value, an->prog->call_tu[call],
                                      out);
    return callee_targets(an, call, out);
  }
  buf->count = 0;
  for (size_t i = 0; i < from->nbound; i++)
    if (!w->bound[from->bound + i].is_int &&
        w->bound[from->bound + i].param == param)
      *BWSC__PUSH(buf->items, buf->count, buf->cap) =
          w->bound[from->bound + i].target;
  *out = buf->items;
  return buf->count;
}

/* The integers the chain bound for state `s`'s function. */
static chain_ints ints_of(const analysis *an, const walk *w, const state *s) {
  chain_ints ints = {an->prog->nodes[s->node].usr, NULL, 0};
  if (s->bound != SIZE_MAX) {
    ints.bound = w->bound + s->bound;
    ints.nbound = s->nbound;
  }
  return ints;
}

/* Visits an unbound state: once per function and root. */
static int enter_unbound(walk *w, const state *next) {
  if (w->node_stamp[next->node] == w->stamp)
    return 0;
  w->node_stamp[next->node] = w->stamp;
  *BWSC__PUSH(w->states, w->nstates, w->capstates) = *next;
  return 1;
}

/* Visits `next` (node, parent, call filled in) unless already visited;
 * computes its binding from the call's arguments. Returns 1 if new. */
static int enter(analysis *an, walk *w, state next) {
  uint64_t mask = an->bound_params[next.node];
  uint64_t ints = an->int_params[next.node];
  next.bound = SIZE_MAX;
  next.nbound = 0;
  if (!(mask | ints) && !next.only)
    return enter_unbound(w, &next);
  const bwsc__call_fact *call = an->prog->calls[next.call];
  const state *from = &w->states[next.parent];
  size_t first = w->nbound;
  char key[512];
  int len = snprintf(key, sizeof(key), "%zu/%zu", next.node, next.only);
  for (int p = 0; p < 64 && (size_t)p < call->nargs; p++) {
    long long value;
    if (ints >> p & 1) {
      chain_ints passed = ints_of(an, w, from);
      if (int_arg(an, call, (size_t)p, &passed, &value)) {
        binding *b = BWSC__PUSH(w->bound, w->nbound, w->capbound);
        b->param = p;
        b->is_int = 1;
        b->target = SIZE_MAX;
        b->value = value;
        if (len > 0 && (size_t)len < sizeof(key))
          len += snprintf(key + len, sizeof(key) - (size_t)len, " %d=%lld", p,
                          value);
      }
    }
    if (!(mask >> p & 1))
      continue;
    const size_t *targets = NULL;
    size_t count =
        resolve(an, w, from, next.call, &call->args[p], -1, &w->args, &targets);
    for (size_t t = 0; t < count; t++) {
      binding *b = BWSC__PUSH(w->bound, w->nbound, w->capbound);
      b->param = p;
      b->is_int = 0;
      b->target = targets[t];
      b->value = 0;
      if (len > 0 && (size_t)len < sizeof(key))
        len += snprintf(key + len, sizeof(key) - (size_t)len, " %d:%zu", p,
                        targets[t]);
    }
  }
  if ((size_t)len >= sizeof(key)) {
    /* A binding too wide to key (many targets): the state goes unbound,
     * and calls through its parameters reach what flows into them. */
    w->nbound = first;
    return enter_unbound(w, &next);
  }
  if (bwsc__strmap_get(&w->seen, key, NULL)) {
    w->nbound = first;
    return 0;
  }
  char **owned = BWSC__PUSH(w->keys, w->nkeys, w->capkeys);
  *owned = bwsc__xstrdup(key);
  bwsc__strmap_put(&w->seen, *owned, 1);
  next.bound = first;
  next.nbound = w->nbound - first;
  *BWSC__PUSH(w->states, w->nstates, w->capstates) = next;
  return 1;
}

static void add_finding(analysis *an, size_t root_node, const walk *w,
                        const state *at, const bwsc__call_fact *site,
                        const bwsc__loc *loc, const char *callee,
                        const bw_blocking_rule *rule, size_t ntargets,
                        bwsc__cold cold, int low) {
  bwsc__program *prog = an->prog;
  const bwsc__node *cb = &prog->nodes[root_node];
  const root *r = &an->roots[root_node];
  bwsc__finding *f = BWSC__PUSH(an->out->items, an->out->count, an->out->cap);
  f->rule = rule;
  const bw_hint_rule *better =
      bw_rules_find_hint(an->rules, r->api, rule->category);
  f->hint = better ? better->hint : rule->hint;
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
  f->pool_kind = r->pool_kind;

  uint64_t hash = bwsc__fnv1a(BWSC__FNV_INIT, rule->id);
  hash = bwsc__fnv1a(hash, callee);
  char stable[512];
  if (site) {
    size_t depth = 1;
    for (const state *s = at; s->parent != SIZE_MAX; s = &w->states[s->parent])
      depth++;
    f->nchain = depth;
    f->chain = bwsc__xcalloc(depth, sizeof(bwsc__step));
    size_t i = depth - 1;
    bwsc__step *step = &f->chain[i];
    step->loc = site->loc;
    step->through = ntargets ? site->callee.name : NULL;
    step->ntargets = ntargets;
    step->cold = cold;
    f->low = low || at->low || cold || ntargets > BWSC__WIDE_TARGETS;
    for (const state *s = at;; s = &w->states[s->parent]) {
      f->chain[i].function = prog->nodes[s->node].name;
      f->chain[i].usr = prog->nodes[s->node].usr;
      if (s->parent == SIZE_MAX)
        break;
      step = &f->chain[--i];
      const bwsc__call_fact *call = prog->calls[s->call];
      step->loc = call->loc;
      step->through = s->ntargets ? call->callee.name : NULL;
      step->ntargets = s->ntargets;
      step->cold = s->cold;
    }
    f->function = prog->nodes[at->node].name;
    for (size_t k = 0; k < f->nchain; k++) {
      bwsc__stable_name(bwsc__program_node(prog, f->chain[k].usr), stable,
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
}

static bwsc__cold coldness(const bwsc__call_fact *call,
                           const bwsc__node *callee) {
  if (call->cold)
    return BWSC__COLD_ASSERT;
  if (callee->noreturn)
    return BWSC__COLD_NORETURN;
  return call->once ? BWSC__COLD_ONCE : BWSC__WARM;
}

/* ---- a method calling a dispatch wrapper on its own object ------------- */

/* The one call of node `n` through a struct field on its own object (a
 * dispatch wrapper's: `(* klass->next) (enumerator, ...)`), or SIZE_MAX
 * when it has none or several. */
static size_t dispatch_of(analysis *an, size_t n) {
  if (!an->dispatch[n]) {
    const bwsc__node *node = &an->prog->nodes[n];
    size_t found = SIZE_MAX;
    int several = 0;
    for (size_t c = 0; c < node->ncalls; c++) {
      const bwsc__call_fact *call = an->prog->calls[node->calls[c]];
      if (!call->self || call->callee.kind != BWSC__VAL_SLOT ||
          !call->callee.ref || !strstr(call->callee.ref, "@FI@"))
        continue;
      several |= found != SIZE_MAX;
      found = node->calls[c];
    }
    an->dispatch[n] = several || found == SIZE_MAX ? 1 : 2 + found;
  }
  return an->dispatch[n] == 1 ? SIZE_MAX : an->dispatch[n] - 2;
}

/* May a walk through `wrapper`, its dispatch call `dc` reaching
 * only[0..nonly), report with high confidence what the wrapper's `rule`
 * says it does (a blocking call of that rule's category; any, when the
 * wrapper has no rule)? It follows every
 * call the walk follows over a high-confidence edge (not one written in an
 * assertion's failure branch or a once-only initialisation, nor to a
 * noreturn function, nor through a pointer of more than
 * BWSC__WIDE_TARGETS targets unless it is a parameter, which the chain
 * may bind to fewer), whatever is bound; any function a blocking rule of
 * that category names and any polling loop (a spin-wait or yield rule's)
 * count, whatever their conditions and the root's pool: a superset of the
 * walk's high findings of that category. */
static int probe_blocks(analysis *an, size_t wrapper, size_t dc,
                        const size_t *only, size_t nonly,
                        const bw_blocking_rule *rule) {
  bwsc__program *prog = an->prog;
  if (!++an->probe_stamp) {
    memset(an->probe_seen, 0, (prog->nnodes + 1) * sizeof(unsigned));
    an->probe_stamp = 1;
  }
  an->nprobe = 0;
  an->probe_seen[wrapper] = an->probe_stamp;
  *BWSC__PUSH(an->probe_stack, an->nprobe, an->capprobe) = wrapper;
  while (an->nprobe) {
    const bwsc__node *node = &prog->nodes[an->probe_stack[--an->nprobe]];
    for (size_t c = 0; c < node->ncalls; c++) {
      size_t ci = node->calls[c];
      const bwsc__call_fact *call = prog->calls[ci];
      if (call->forked || call->cold || call->once)
        continue;
      if (call->spin && (!rule || rule->category == BW_CATEGORY_SPIN_WAIT ||
                         rule->category == BW_CATEGORY_YIELD))
        return 1;
      const size_t *targets = only;
      size_t count = ci == dc ? nonly : callee_targets(an, ci, &targets);
      if (count > BWSC__WIDE_TARGETS && an->callee_param[ci] < 0)
        continue;
      for (size_t t = 0; t < count; t++) {
        size_t m = targets[t];
        if (prog->nodes[m].noreturn)
          continue;
        const bw_blocking_rule *found = an->nr[m].blocking;
        if (found && (!rule || found->category == rule->category))
          return 1;
        if (found || !prog->nodes[m].def || an->nr[m].is_entry ||
            an->nr[m].allowed || an->probe_seen[m] == an->probe_stamp)
          continue;
        an->probe_seen[m] = an->probe_stamp;
        *BWSC__PUSH(an->probe_stack, an->nprobe, an->capprobe) = m;
      }
    }
  }
  return 0;
}

/* Call `ci`, written in method `m` on its own object, to `target`: when
 * the target is a dispatch wrapper (dispatch_of) whose dispatch, on `m`'s
 * object, reaches the methods of the types that can run `m` only
 * (bwsc__vtables_self), each defined in the program and named by no
 * blocking or entry rule, and neither the wrapper's other calls nor those
 * methods do with high confidence what the wrapper's rule says
 * (probe_blocks): 1 + the index of those methods in an->onlys. Otherwise
 * 0: the call is what it is without this. */
static size_t self_dispatch(analysis *an, size_t ci, size_t m, size_t target) {
  bwsc__program *prog = an->prog;
  const bwsc__call_fact *call = prog->calls[ci];
  if (!call->self || call->spin || call->callee.kind != BWSC__VAL_FUNC)
    return 0;
  if (!an->self_call[ci]) {
    an->self_call[ci] = 1;
    size_t dc = prog->nodes[target].def ? dispatch_of(an, target) : SIZE_MAX;
    const char **fns = NULL;
    size_t n = dc == SIZE_MAX
                   ? 0
                   : bwsc__vtables_self(&an->vtables, prog->nodes[m].usr,
                                        prog->calls[dc]->callee.ref, &fns);
    size_t *only = bwsc__xcalloc(n + 1, sizeof(size_t));
    int known = n > 0;
    for (size_t i = 0; i < n && known; i++) {
      const bwsc__node *fn = bwsc__program_node(prog, fns[i]);
      only[i] = fn ? node_index(an, fn) : SIZE_MAX;
      known = fn && fn->def && !an->nr[only[i]].blocking &&
              !an->nr[only[i]].is_entry;
    }
    const bw_blocking_rule *rule = an->nr[target].blocking;
    if (known && !probe_blocks(an, target, dc, only, n, rule)) {
      an->self_call[ci] = 2 + an->nonlys;
      *BWSC__PUSH(an->onlys, an->nonlys, an->caponlys) = (only_set){only, n};
    } else {
      free(only);
    }
    free(fns);
  }
  return an->self_call[ci] - 1;
}

/* The calls of state `si`: blocking targets become findings, others are
 * entered (over a low-confidence edge: later, after every high state). */
static void expand(analysis *an, walk *w, size_t root_node, size_t si) {
  bwsc__program *prog = an->prog;
  const bwsc__node *node = &prog->nodes[w->states[si].node];
  for (size_t c = 0; c < node->ncalls; c++) {
    size_t call_index = node->calls[c];
    const bwsc__call_fact *call = prog->calls[call_index];
    if (call->forked)
      continue; /* another process runs it: not this thread */
    if (call->ntests) {
      chain_ints ints = ints_of(an, w, &w->states[si]);
      if (branch_skipped(call, &ints))
        continue; /* the chain's constants fail its branch's test */
    }
    const size_t *targets = NULL;
    size_t only = w->states[si].only, count;
    if (only && call_index == dispatch_of(an, w->states[si].node)) {
      /* The dispatch on the object of the method that called this
       * wrapper: the methods of the types that can run that method. */
      targets = an->onlys[only - 1].nodes;
      count = an->onlys[only - 1].count;
    } else {
      count = resolve(an, w, &w->states[si], call_index, &call->callee,
                      an->callee_param[call_index], &w->callees, &targets);
    }
    size_t ntargets = call->callee.kind == BWSC__VAL_FUNC ? 0 : count;
    int reported = 0;
    const bw_blocking_rule *bare =
        call->spin == BWSC__SPIN_BARE
            ? bwsc__spin_rule_of(an->rules, call, NULL, 0)
            : NULL;
    if (bare &&
        bw_pool_kind_reports(an->roots[root_node].pool_kind, bare->category) &&
        w->call_stamp[call_index] != w->stamp) {
      add_finding(an, root_node, w, &w->states[si], call, &call->loc,
                  call->callee.name, bare, 0,
                  call->cold   ? BWSC__COLD_ASSERT
                  : call->once ? BWSC__COLD_ONCE
                               : BWSC__WARM,
                  0);
      reported = 1;
    }
    for (size_t t = 0; t < count; t++) {
      size_t target = targets[t];
      const bwsc__node *callee = &prog->nodes[target];
      /* A method calling a dispatch wrapper on its own object, where its
       * own types' methods do not do what the wrapper's rule says
       * (self_dispatch): the rule is low confidence, and the wrapper is
       * walked with its dispatch reaching those methods only. */
      size_t self =
          count == 1 ? self_dispatch(an, call_index, w->states[si].node, target)
                     : 0;
      bwsc__cold cold = coldness(call, callee);
      const bw_blocking_rule *rule = an->nr[target].blocking;
      /* enter() below may move w->bound: taken afresh for each target */
      chain_ints ints = ints_of(an, w, &w->states[si]);
      const bw_blocking_rule *own =
          call->spin ? bw_rules_lookup_blocking(an->rules, callee->name) : NULL;
      const bw_blocking_rule *spin = bwsc__spin_rule_of(
          an->rules, call, own,
          own && nonblocking(an, own, call, si ? SIZE_MAX : root_node, &ints));
      if (spin)
        rule = spin;
      if (rule) {
        if (counts_on(an, root_node, rule, call, &ints) &&
            w->call_stamp[call_index] != w->stamp &&
            (spin ||
             !nonblocking(an, rule, call, si ? SIZE_MAX : root_node, &ints))) {
          add_finding(an, root_node, w, &w->states[si], call, &call->loc,
                      callee->name, rule, ntargets, cold, self != 0);
          reported = 1;
        }
        if (!self)
          continue;
      }
      if (!callee->def || an->nr[target].is_entry || an->nr[target].allowed)
        continue;
      state next = {target,   si, call_index,        ntargets, cold,
                    SIZE_MAX, 0,  w->states[si].low, self};
      if (self && !rule) {
        /* What a wrapper without a rule reached before: low. */
        state all = next;
        all.only = 0;
        if (all.low) {
          enter(an, w, all);
        } else {
          all.low = 1;
          *BWSC__PUSH(w->later, w->nlater, w->caplater) = all;
        }
      }
      /* A GObject default that every implementation replaces (vtables.h)
       * is reached only by an implementation that sets no method. */
      int overridden = 0;
      if (call->callee.kind == BWSC__VAL_SLOT) {
        if (!an->vt_field[call_index])
          an->vt_field[call_index] =
              1 + bwsc__vtables_field(&an->vtables, call->callee.ref);
        overridden = bwsc__vtables_overridden(
            &an->vtables, an->vt_field[call_index] - 1, callee->usr);
      }
      if (!next.low && (cold || overridden || ntargets > BWSC__WIDE_TARGETS)) {
        next.low = 1;
        *BWSC__PUSH(w->later, w->nlater, w->caplater) = next;
        continue;
      }
      enter(an, w, next);
    }
    if (reported)
      w->call_stamp[call_index] = w->stamp;
  }
}

static void walk_root(analysis *an, walk *w, size_t root_node) {
  bwsc__program *prog = an->prog;
  const bwsc__node *cb = &prog->nodes[root_node];
  const root *r = &an->roots[root_node];
  if (an->nr[root_node].allowed || r->pool_kind == BW_POOL_BLOCKING)
    return;
  if (!cb->def) {
    const bw_blocking_rule *rule = an->nr[root_node].blocking;
    if (rule && bw_pool_kind_reports(r->pool_kind, rule->category))
      add_finding(an, root_node, w, NULL, NULL, &r->loc, cb->name, rule, 0,
                  BWSC__WARM, 0);
    return;
  }
  w->nstates = w->nlater = w->nbound = 0;
  for (size_t i = 0; i < w->nkeys; i++)
    free(w->keys[i]);
  w->nkeys = 0;
  bwsc__strmap_free(&w->seen);
  w->stamp++;
  w->node_stamp[root_node] = w->stamp;
  state first = {root_node, SIZE_MAX, 0, 0, BWSC__WARM, SIZE_MAX, 0, 0, 0};
  *BWSC__PUSH(w->states, w->nstates, w->capstates) = first;
  /* Breadth first: every high-confidence state, then the low ones in the
   * order they were reached, so each site's chain is the best there is. */
  size_t head = 0, next_later = 0;
  for (;;) {
    while (head < w->nstates)
      expand(an, w, root_node, head++);
    if (next_later == w->nlater)
      break;
    enter(an, w, w->later[next_later++]);
  }
}

size_t bwsc__analyze(bwsc__program *prog, const bw_rules *rules,
                     bwsc__findings *out) {
  analysis an;
  memset(&an, 0, sizeof(an));
  an.prog = prog;
  an.rules = rules;
  an.out = out;
  size_t n = prog->nnodes;
  an.wraps = bwsc__xcalloc(n + 1, sizeof(wrapping));
  an.roots = bwsc__xcalloc(n + 1, sizeof(root));
  an.bound_params = bwsc__xcalloc(n + 1, sizeof(uint64_t));
  an.int_params = bwsc__xcalloc(n + 1, sizeof(uint64_t));
  an.nr = bwsc__xcalloc(n + 1, sizeof(node_rules));
  an.callee_targets = bwsc__xcalloc(prog->ncalls + 1, sizeof(size_t *));
  an.callee_ntargets = bwsc__xcalloc(prog->ncalls + 1, sizeof(size_t));
  an.callee_done = bwsc__xcalloc(prog->ncalls + 1, 1);
  lookup_node_rules(&an);
  /* First: which sources readiness callbacks are registered with, and
   * what the registrations pass the callbacks; then the set. */
  bwsc__nonblock_init(&an.nonblock, prog, rules);
  bwsc__vtables_build(&an.vtables, prog->field_flows, prog->nfield_flows);
  an.vt_field = bwsc__xcalloc(prog->ncalls + 1, sizeof(long));
  an.dispatch = bwsc__xcalloc(n + 1, sizeof(size_t));
  an.self_call = bwsc__xcalloc(prog->ncalls + 1, sizeof(size_t));
  an.probe_seen = bwsc__xcalloc(n + 1, sizeof(unsigned));
  find_wrappers(&an);
  find_entered(&an);
  bwsc__nonblock_grow(&an.nonblock);
  find_roots(&an);
  find_ready_params(&an);
  find_bound_params(&an);
  find_int_params(&an);

  walk w;
  memset(&w, 0, sizeof(w));
  w.node_stamp = bwsc__xcalloc(n + 1, sizeof(unsigned));
  w.call_stamp = bwsc__xcalloc(prog->ncalls + 1, sizeof(unsigned));
  size_t nroots = 0;
  for (size_t i = 0; i < n; i++) {
    if (an.roots[i].set) {
      walk_root(&an, &w, i);
      nroots++;
    }
  }
  for (size_t i = 0; i < w.nkeys; i++)
    free(w.keys[i]);
  free(w.keys);
  bwsc__strmap_free(&w.seen);
  free(w.states);
  free(w.later);
  free(w.bound);
  free(w.args.items);
  free(w.callees.items);
  free(w.node_stamp);
  free(w.call_stamp);
  free(an.callee_param);
  free(an.bound_params);
  free(an.int_params);
  free(an.nr);
  free(an.callee_targets);
  free(an.callee_ntargets);
  free(an.callee_done);
  free(an.wraps);
  free(an.roots);
  bwsc__nonblock_free(&an.nonblock);
  bwsc__vtables_free(&an.vtables);
  free(an.vt_field);
  free(an.dispatch);
  free(an.self_call);
  for (size_t i = 0; i < an.nonlys; i++)
    free(an.onlys[i].nodes);
  free(an.onlys);
  free(an.probe_seen);
  free(an.probe_stack);
  for (size_t i = 0; i < an.nmade_by; i++) {
    bwsc__nonblock_free(&an.made_by[i].set);
    bw_rules_free(an.made_by[i].rules);
  }
  free(an.kept);
  return nroots;
}
