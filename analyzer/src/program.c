/* program.c - merging TU facts into one call graph and the slot flows.
 *
 * Invariant: a call argument that names a function or slot also flows into
 * the callee's parameter slot "<callee USR>#<i>", so a call through a
 * parameter reaches whatever callers pass in (context-insensitive).
 */
#include "program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bwsc__node *bwsc__program_node(const bwsc__program *prog, const char *usr) {
  size_t index;
  if (!usr || !bwsc__strmap_get(&prog->node_by_usr, usr, &index))
    return NULL;
  return &prog->nodes[index];
}

static bwsc__node *node_for(bwsc__program *prog, const char *usr,
                            const char *name) {
  bwsc__node *node = bwsc__program_node(prog, usr);
  if (node)
    return node;
  node = BWSC__PUSH(prog->nodes, prog->nnodes, prog->capnodes);
  node->usr = usr;
  node->name = name;
  bwsc__strmap_put(&prog->node_by_usr, usr, prog->nnodes - 1);
  return node;
}

static bwsc__slot *slot_for(bwsc__program *prog, const char *key) {
  size_t index;
  if (bwsc__strmap_get(&prog->slot_by_key, key, &index))
    return &prog->slots[index];
  bwsc__slot *slot = BWSC__PUSH(prog->slots, prog->nslots, prog->capslots);
  slot->key = key;
  bwsc__strmap_put(&prog->slot_by_key, key, prog->nslots - 1);
  return slot;
}

static void add_value(bwsc__program *prog, const char *key,
                      const bwsc__value *value) {
  bwsc__slot *slot = slot_for(prog, key);
  *BWSC__PUSH(slot->values, slot->nvalues, slot->capvalues) = value;
}

static int same_place(const bwsc__func_fact *a, const bwsc__func_fact *b) {
  return a->loc.line == b->loc.line && a->loc.col == b->loc.col &&
         strcmp(a->loc.file ? a->loc.file : "",
                b->loc.file ? b->loc.file : "") == 0;
}

/* Is the body of `node` from TU t one to merge? */
static int body_from(const bwsc__node *node, size_t t) {
  for (size_t i = 0; i < node->nbody_tus; i++)
    if (node->body_tus[i] == t)
      return 1;
  return 0;
}

/* The node (the USR's first, or a variant) whose body TU t holds. */
static bwsc__node *body_node(bwsc__program *prog, const char *usr, size_t t) {
  bwsc__node *node = bwsc__program_node(prog, usr);
  if (!node || body_from(node, t))
    return node;
  for (size_t v = 0; v < node->nvariants; v++)
    if (body_from(&prog->nodes[node->variants[v]], t))
      return &prog->nodes[node->variants[v]];
  return NULL;
}

/* Is `fact` a body already merged under `node` (or one of its variants)? */
static int merged(const bwsc__program *prog, const bwsc__node *node,
                  const bwsc__func_fact *fact) {
  if (same_place(node->def, fact))
    return 1;
  for (size_t v = 0; v < node->nvariants; v++)
    if (same_place(prog->nodes[node->variants[v]].def, fact))
      return 1;
  return 0;
}

/* Function facts copied into blocks of this many: a block never moves, so
 * nodes point into it. */
#define KEPT_BLOCK 4096

/* The program's own copy of a function fact: a node outlives the TU's
 * array of functions, freed once they are merged. */
static const bwsc__func_fact *keep_fact(bwsc__program *prog,
                                        const bwsc__func_fact *fact) {
  if (prog->nkept % KEPT_BLOCK == 0)
    *BWSC__PUSH(prog->kept, prog->nkept_blocks, prog->capkept) =
        bwsc__xmalloc(KEPT_BLOCK * sizeof(bwsc__func_fact));
  bwsc__func_fact *copy =
      &prog->kept[prog->nkept_blocks - 1][prog->nkept++ % KEPT_BLOCK];
  *copy = *fact;
  return copy;
}

/* The functions of TU t (facts). Only a node's first declaration and its
 * definitions are kept: a header's declaration repeated by every TU that
 * includes it adds nothing after the first. */
static void merge_functions(bwsc__program *prog, const bwsc__tu_facts *facts,
                            size_t t) {
  for (size_t i = 0; i < facts->nfuncs; i++) {
    const bwsc__func_fact *fact = &facts->funcs[i], *copy = NULL;
    bwsc__node *node = node_for(prog, fact->usr, fact->name);
    size_t index = (size_t)(node - prog->nodes);
    if (!node->decl)
      node->decl = copy = keep_fact(prog, fact);
    node->annotated |= fact->annotated;
    node->noreturn |= fact->noreturn;
    if (!fact->is_def || (node->def && merged(prog, node, fact)))
      continue;
    if (!copy)
      copy = keep_fact(prog, fact);
    if (node->def) {
      /* Another program's function of the same name: a node of its own
       * (pushing may move the nodes, so `node` is looked up again). */
      bwsc__node *variant =
          BWSC__PUSH(prog->nodes, prog->nnodes, prog->capnodes);
      variant->usr = fact->usr;
      variant->name = fact->name;
      variant->decl = copy;
      variant->annotated = fact->annotated;
      variant->noreturn = fact->noreturn;
      node = &prog->nodes[index];
      *BWSC__PUSH(node->variants, node->nvariants, node->capvariants) =
          prog->nnodes - 1;
      node = variant;
    }
    node->def = copy;
    *BWSC__PUSH(node->body_tus, node->nbody_tus, node->capbody_tus) = t;
  }
}

/* Which TUs define which functions with variants (see the header). */
static void index_programs(bwsc__program *prog, size_t ntus) {
  prog->ntus = ntus;
  prog->tu_multi = bwsc__xcalloc(ntus + 1, sizeof(size_t *));
  prog->tu_nmulti = bwsc__xcalloc(ntus + 1, sizeof(size_t));
  size_t *caps = bwsc__xcalloc(ntus + 1, sizeof(size_t));
  for (size_t n = 0; n < prog->nnodes; n++) {
    const bwsc__node *node = &prog->nodes[n];
    for (size_t v = 0; v <= node->nvariants && node->nvariants; v++) {
      const bwsc__node *def = v ? &prog->nodes[node->variants[v - 1]] : node;
      size_t t = def->body_tus[0];
      if (!def->def->is_static)
        *BWSC__PUSH(prog->tu_multi[t], prog->tu_nmulti[t], caps[t]) = n;
    }
  }
  free(caps);
}

/* Could TUs a and b be linked into one program? Not when both define an
 * external function of the same USR. */
static int linkable(const bwsc__program *prog, size_t a, size_t b) {
  size_t i = 0, j = 0;
  while (i < prog->tu_nmulti[a] && j < prog->tu_nmulti[b]) {
    if (prog->tu_multi[a][i] == prog->tu_multi[b][j])
      return 0;
    if (prog->tu_multi[a][i] < prog->tu_multi[b][j])
      i++;
    else
      j++;
  }
  return 1;
}

/* The calls and flows of TU t (facts). */
static void merge_calls(bwsc__program *prog, const bwsc__tu_facts *facts,
                        size_t t) {
  for (size_t i = 0; i < facts->ncalls; i++) {
    const bwsc__call_fact *call = &facts->calls[i];
    bwsc__node *caller = body_node(prog, call->caller, t);
    if (!caller)
      continue; /* a second copy of a header function's body */
    size_t index = prog->ncalls;
    bwsc__grow((void **)&prog->call_tu, &prog->capcall_tu, index + 1,
               sizeof(size_t));
    prog->call_tu[index] = t;
    *BWSC__PUSH(prog->calls, prog->ncalls, prog->capcalls) = call;
    *BWSC__PUSH(caller->calls, caller->ncalls, caller->capcalls) = index;
    if (call->callee.kind == BWSC__VAL_FUNC)
      node_for(prog, call->callee.ref, call->callee.name);
    for (size_t a = 0; a < call->nargs; a++) {
      const bwsc__value *arg = &call->args[a];
      if (arg->kind == BWSC__VAL_FUNC)
        node_for(prog, arg->ref, arg->name);
      if (call->callee.kind != BWSC__VAL_FUNC ||
          (arg->kind != BWSC__VAL_FUNC && arg->kind != BWSC__VAL_SLOT))
        continue;
      /* Every call of a function names its parameter slots again: one
       * interned key each, not one allocation per call. */
      char *key = bwsc__xasprintf("%s#%zu", call->callee.ref, a);
      add_value(prog, bwsc__intern(key), arg);
      free(key);
    }
  }
  for (size_t i = 0; i < facts->nflows; i++) {
    const bwsc__flow_fact *flow = &facts->flows[i];
    add_value(prog, flow->slot, &flow->value);
    if (flow->value.kind == BWSC__VAL_FUNC)
      node_for(prog, flow->value.ref, flow->value.name);
    if (strstr(flow->slot, "@FI@"))
      *BWSC__PUSH(prog->field_flows, prog->nfield_flows, prog->capfield_flows) =
          flow;
  }
  for (size_t i = 0; i < facts->ndesc_flows; i++)
    *BWSC__PUSH(prog->desc_flows, prog->ndesc_flows, prog->capdesc_flows) =
        &facts->desc_flows[i];
}

void bwsc__program_init(bwsc__program *prog) {
  memset(prog, 0, sizeof(*prog));
}

/* Once TU t's functions are merged, its facts give back what the program
 * will not use: the function facts (nodes hold copies) and the calls
 * merge_calls would skip, those of a body another TU already gave (a
 * header's static inline function, repeated by every TU that includes the
 * header). Whether TU t's body of a function is merged is known now: only
 * TUs up to t decide it. */
static void shed(bwsc__program *prog, bwsc__tu_facts *facts, size_t t) {
  free(facts->funcs);
  facts->funcs = NULL;
  facts->nfuncs = facts->capfuncs = 0;
  size_t kept = 0;
  for (size_t i = 0; i < facts->ncalls; i++) {
    if (body_node(prog, facts->calls[i].caller, t))
      facts->calls[kept++] = facts->calls[i];
    else
      bwsc__call_free(facts, &facts->calls[i]);
  }
  facts->ncalls = kept;
  if (kept < facts->capcalls) {
    facts->calls =
        bwsc__xrealloc(facts->calls, (kept ? kept : 1) * sizeof(*facts->calls));
    facts->capcalls = kept ? kept : 1;
  }
}

void bwsc__program_add_functions(bwsc__program *prog, bwsc__tu_facts *facts) {
  size_t t = prog->nadded++;
  /* Interned first: the nodes borrow the strings of the facts shed frees. */
  bwsc__facts_intern(facts);
  if (facts->failed)
    return; /* a TU that failed to parse adds nothing */
  merge_functions(prog, facts, t);
  shed(prog, facts, t);
}

/* The second pass: every definition is known before the calls are merged. */
static void merge_all_calls(bwsc__program *prog, const bwsc__tu_facts *tus,
                            size_t ntus) {
  for (size_t t = 0; t < ntus; t++) {
    if (!tus[t].failed)
      merge_calls(prog, &tus[t], t);
  }
  index_programs(prog, ntus);
}

void bwsc__program_finish(bwsc__program *prog, bwsc__tu_facts *tus,
                          size_t ntus) {
  while (prog->nadded < ntus)
    bwsc__program_add_functions(prog, &tus[prog->nadded]);
  merge_all_calls(prog, tus, ntus);
}

void bwsc__program_build(bwsc__program *prog, const bwsc__tu_facts *tus,
                         size_t ntus) {
  bwsc__program_init(prog);
  for (size_t t = 0; t < ntus; t++) {
    if (!tus[t].failed)
      merge_functions(prog, &tus[t], t);
  }
  prog->nadded = ntus;
  merge_all_calls(prog, tus, ntus);
}

void bwsc__program_free(bwsc__program *prog) {
  for (size_t i = 0; i < prog->nnodes; i++) {
    free(prog->nodes[i].calls);
    free(prog->nodes[i].body_tus);
    free(prog->nodes[i].variants);
  }
  for (size_t t = 0; t < prog->ntus; t++)
    free(prog->tu_multi[t]);
  free(prog->tu_multi);
  free(prog->tu_nmulti);
  free(prog->call_tu);
  free(prog->desc_flows);
  for (size_t i = 0; i < prog->nresolved_lists; i++) {
    free(prog->resolved_keys[i]);
    free(prog->resolved[i]);
  }
  free(prog->resolved_keys);
  free(prog->resolved);
  free(prog->nresolved);
  bwsc__strmap_free(&prog->resolved_by_key);
  for (size_t i = 0; i < prog->nslots; i++)
    free(prog->slots[i].values);
  for (size_t i = 0; prog->slot_targets && i < prog->nslots; i++)
    free(prog->slot_targets[i]);
  free(prog->slot_targets);
  free(prog->slot_ntargets);
  free(prog->slot_done);
  free(prog->slot_stamp);
  free(prog->node_stamp);
  free(prog->identity);
  for (size_t i = 0; i < prog->nkept_blocks; i++)
    free(prog->kept[i]);
  free(prog->kept);
  free(prog->nodes);
  free(prog->calls);
  free(prog->slots);
  free(prog->field_flows);
  bwsc__strmap_free(&prog->node_by_usr);
  bwsc__strmap_free(&prog->slot_by_key);
  memset(prog, 0, sizeof(*prog));
}

/* Starts a new walk: every mark older than the new stamp is clear. */
static unsigned new_stamp(bwsc__program *prog) {
  if (!prog->slot_stamp) {
    prog->slot_stamp = bwsc__xcalloc(prog->nslots + 1, sizeof(unsigned));
    prog->node_stamp = bwsc__xcalloc(prog->nnodes + 1, sizeof(unsigned));
  }
  return ++prog->stamp;
}

typedef struct collect {
  size_t *items;
  size_t count, cap;
} collect;

/* Depth-first over slot flows; stamps end cycles and duplicates. */
static void walk_value(bwsc__program *prog, const bwsc__value *value,
                       unsigned stamp, collect *out) {
  size_t index;
  if (value->kind == BWSC__VAL_FUNC) {
    if (bwsc__strmap_get(&prog->node_by_usr, value->ref, &index) &&
        prog->node_stamp[index] != stamp) {
      prog->node_stamp[index] = stamp;
      *BWSC__PUSH(out->items, out->count, out->cap) = index;
    }
  } else if (value->kind == BWSC__VAL_SLOT) {
    if (!bwsc__strmap_get(&prog->slot_by_key, value->ref, &index) ||
        prog->slot_stamp[index] == stamp)
      return;
    prog->slot_stamp[index] = stamp;
    const bwsc__slot *slot = &prog->slots[index];
    for (size_t i = 0; i < slot->nvalues; i++)
      walk_value(prog, slot->values[i], stamp, out);
  }
}

static int compare_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}

size_t bwsc__program_targets(bwsc__program *prog, const bwsc__value *value,
                             const size_t **out) {
  size_t index;
  *out = NULL;
  if (value->kind == BWSC__VAL_FUNC) {
    if (!bwsc__strmap_get(&prog->node_by_usr, value->ref, &index))
      return 0;
    if (!prog->identity) {
      prog->identity = bwsc__xcalloc(prog->nnodes + 1, sizeof(size_t));
      for (size_t i = 0; i < prog->nnodes; i++)
        prog->identity[i] = i;
    }
    *out = &prog->identity[index];
    return 1;
  }
  if (value->kind != BWSC__VAL_SLOT ||
      !bwsc__strmap_get(&prog->slot_by_key, value->ref, &index))
    return 0;
  if (!prog->slot_done) {
    prog->slot_done = bwsc__xcalloc(prog->nslots + 1, 1);
    prog->slot_targets = bwsc__xcalloc(prog->nslots + 1, sizeof(size_t *));
    prog->slot_ntargets = bwsc__xcalloc(prog->nslots + 1, sizeof(size_t));
  }
  if (!prog->slot_done[index]) {
    collect found = {NULL, 0, 0};
    walk_value(prog, value, new_stamp(prog), &found);
    /* Node order, so everything downstream is deterministic. */
    if (found.count)
      qsort(found.items, found.count, sizeof(size_t), compare_size);
    prog->slot_targets[index] = found.items;
    prog->slot_ntargets[index] = found.count;
    prog->slot_done[index] = 1;
  }
  *out = prog->slot_targets[index];
  return prog->slot_ntargets[index];
}

size_t bwsc__program_targets_in(bwsc__program *prog, const bwsc__value *value,
                                size_t tu, const size_t **out) {
  size_t index;
  if (value->kind != BWSC__VAL_FUNC ||
      !bwsc__strmap_get(&prog->node_by_usr, value->ref, &index) ||
      !prog->nodes[index].nvariants || tu >= prog->ntus)
    return bwsc__program_targets(prog, value, out);
  char key[64];
  snprintf(key, sizeof(key), "%zu:%zu", index, tu);
  size_t list;
  if (!bwsc__strmap_get(&prog->resolved_by_key, key, &list)) {
    const bwsc__node *node = &prog->nodes[index];
    collect own = {NULL, 0, 0}, linked = {NULL, 0, 0}, all = {NULL, 0, 0};
    for (size_t v = 0; v <= node->nvariants; v++) {
      size_t n = v ? node->variants[v - 1] : index;
      size_t t = prog->nodes[n].body_tus[0];
      *BWSC__PUSH(all.items, all.count, all.cap) = n;
      if (t == tu)
        *BWSC__PUSH(own.items, own.count, own.cap) = n;
      else if (linkable(prog, t, tu))
        *BWSC__PUSH(linked.items, linked.count, linked.cap) = n;
    }
    collect *pick = own.count ? &own : linked.count ? &linked : &all;
    list = prog->nresolved_lists;
    char **owned = BWSC__PUSH(prog->resolved_keys, prog->nresolved_lists,
                              prog->capresolved_keys);
    *owned = bwsc__xstrdup(key);
    bwsc__grow((void **)&prog->resolved, &prog->capresolved, list + 1,
               sizeof(size_t *));
    bwsc__grow((void **)&prog->nresolved, &prog->capnresolved, list + 1,
               sizeof(size_t));
    prog->resolved[list] = pick->items;
    prog->nresolved[list] = pick->count;
    if (pick != &own)
      free(own.items);
    if (pick != &linked)
      free(linked.items);
    if (pick != &all)
      free(all.items);
    bwsc__strmap_put(&prog->resolved_by_key, *owned, list);
  }
  *out = prog->resolved[list];
  return prog->nresolved[list];
}

/* Is `key` the slot "<usr>#<n>"? */
static int param_key(const char *key, const char *usr, int *param) {
  size_t len = strlen(usr);
  if (strncmp(key, usr, len) != 0 || key[len] != '#')
    return 0;
  char *end = NULL;
  long n = strtol(key + len + 1, &end, 10);
  if (*end || n < 0)
    return 0;
  *param = (int)n;
  return 1;
}

/* Follows slot-to-slot flows only, looking for a parameter of usr. */
static int find_param(bwsc__program *prog, const char *key, const char *usr,
                      int *param, unsigned stamp) {
  if (param_key(key, usr, param))
    return 1;
  size_t index;
  if (!bwsc__strmap_get(&prog->slot_by_key, key, &index) ||
      prog->slot_stamp[index] == stamp)
    return 0;
  prog->slot_stamp[index] = stamp;
  const bwsc__slot *slot = &prog->slots[index];
  for (size_t i = 0; i < slot->nvalues; i++) {
    const bwsc__value *value = slot->values[i];
    if (value->kind == BWSC__VAL_SLOT &&
        find_param(prog, value->ref, usr, param, stamp))
      return 1;
  }
  return 0;
}

int bwsc__program_param_of(bwsc__program *prog, const bwsc__value *value,
                           const char *usr, int *param) {
  if (value->kind != BWSC__VAL_SLOT)
    return 0;
  return find_param(prog, value->ref, usr, param, new_stamp(prog));
}
