/* program.c - merging TU facts into one call graph and the slot flows.
 *
 * Invariant: a call argument that names a function or slot also flows into
 * the callee's parameter slot "<callee USR>#<i>", so a call through a
 * parameter reaches whatever callers pass in (context-insensitive).
 */
#include "program.h"

#include <stdlib.h>
#include <string.h>

bw__node *bw__program_node(const bw__program *prog, const char *usr) {
  size_t index;
  if (!usr || !bw__strmap_get(&prog->node_by_usr, usr, &index))
    return NULL;
  return &prog->nodes[index];
}

static bw__node *node_for(bw__program *prog, const char *usr,
                          const char *name) {
  bw__node *node = bw__program_node(prog, usr);
  if (node)
    return node;
  node = BW__PUSH(prog->nodes, prog->nnodes, prog->capnodes);
  node->usr = usr;
  node->name = name;
  bw__strmap_put(&prog->node_by_usr, usr, prog->nnodes - 1);
  return node;
}

static bw__slot *slot_for(bw__program *prog, const char *key) {
  size_t index;
  if (bw__strmap_get(&prog->slot_by_key, key, &index))
    return &prog->slots[index];
  bw__slot *slot = BW__PUSH(prog->slots, prog->nslots, prog->capslots);
  slot->key = key;
  bw__strmap_put(&prog->slot_by_key, key, prog->nslots - 1);
  return slot;
}

static void add_value(bw__program *prog, const char *key,
                      const bw__value *value) {
  bw__slot *slot = slot_for(prog, key);
  *BW__PUSH(slot->values, slot->nvalues, slot->capvalues) = value;
}

static int same_place(const bw__func_fact *a, const bw__func_fact *b) {
  return a->loc.line == b->loc.line && a->loc.col == b->loc.col &&
         strcmp(a->loc.file ? a->loc.file : "",
                b->loc.file ? b->loc.file : "") == 0;
}

/* Is the body of `node` from TU t one to merge? */
static int body_from(const bw__node *node, size_t t) {
  for (size_t i = 0; i < node->nbody_tus; i++)
    if (node->body_tus[i] == t)
      return 1;
  return 0;
}

/* First pass: functions, so definitions are known before calls. */
static void merge_functions(bw__program *prog, const bw__tu_facts *tus,
                            size_t ntus) {
  for (size_t t = 0; t < ntus; t++) {
    if (tus[t].failed)
      continue;
    for (size_t i = 0; i < tus[t].nfuncs; i++) {
      const bw__func_fact *fact = &tus[t].funcs[i];
      bw__node *node = node_for(prog, fact->usr, fact->name);
      if (!node->decl)
        node->decl = fact;
      if (fact->is_def && (!node->def || !same_place(node->def, fact))) {
        if (!node->def)
          node->def = fact;
        *BW__PUSH(node->body_tus, node->nbody_tus, node->capbody_tus) = t;
      }
      node->annotated |= fact->annotated;
    }
  }
}

static void merge_calls(bw__program *prog, const bw__tu_facts *tus,
                        size_t ntus) {
  for (size_t t = 0; t < ntus; t++) {
    if (tus[t].failed)
      continue;
    for (size_t i = 0; i < tus[t].ncalls; i++) {
      const bw__call_fact *call = &tus[t].calls[i];
      bw__node *caller = bw__program_node(prog, call->caller);
      if (!caller || !body_from(caller, t))
        continue; /* a second copy of a header function's body */
      size_t index = prog->ncalls;
      *BW__PUSH(prog->calls, prog->ncalls, prog->capcalls) = call;
      *BW__PUSH(caller->calls, caller->ncalls, caller->capcalls) = index;
      if (call->callee.kind == BW__VAL_FUNC)
        node_for(prog, call->callee.ref, call->callee.name);
      for (size_t a = 0; a < call->nargs; a++) {
        const bw__value *arg = &call->args[a];
        if (arg->kind == BW__VAL_FUNC)
          node_for(prog, arg->ref, arg->name);
        if (call->callee.kind != BW__VAL_FUNC ||
            (arg->kind != BW__VAL_FUNC && arg->kind != BW__VAL_SLOT))
          continue;
        char *key = bw__xasprintf("%s#%zu", call->callee.ref, a);
        *BW__PUSH(prog->owned, prog->nowned, prog->capowned) = key;
        add_value(prog, key, arg);
      }
    }
    for (size_t i = 0; i < tus[t].nflows; i++) {
      const bw__flow_fact *flow = &tus[t].flows[i];
      add_value(prog, flow->slot, &flow->value);
      if (flow->value.kind == BW__VAL_FUNC)
        node_for(prog, flow->value.ref, flow->value.name);
    }
  }
}

void bw__program_build(bw__program *prog, const bw__tu_facts *tus,
                       size_t ntus) {
  memset(prog, 0, sizeof(*prog));
  merge_functions(prog, tus, ntus);
  merge_calls(prog, tus, ntus);
}

void bw__program_free(bw__program *prog) {
  for (size_t i = 0; i < prog->nnodes; i++) {
    free(prog->nodes[i].calls);
    free(prog->nodes[i].body_tus);
  }
  for (size_t i = 0; i < prog->nslots; i++)
    free(prog->slots[i].values);
  for (size_t i = 0; i < prog->nowned; i++)
    free(prog->owned[i]);
  for (size_t i = 0; prog->slot_targets && i < prog->nslots; i++)
    free(prog->slot_targets[i]);
  free(prog->slot_targets);
  free(prog->slot_ntargets);
  free(prog->slot_done);
  free(prog->slot_stamp);
  free(prog->node_stamp);
  free(prog->identity);
  free(prog->nodes);
  free(prog->calls);
  free(prog->slots);
  free(prog->owned);
  bw__strmap_free(&prog->node_by_usr);
  bw__strmap_free(&prog->slot_by_key);
  memset(prog, 0, sizeof(*prog));
}

/* Starts a new walk: every mark older than the new stamp is clear. */
static unsigned new_stamp(bw__program *prog) {
  if (!prog->slot_stamp) {
    prog->slot_stamp = bw__xcalloc(prog->nslots + 1, sizeof(unsigned));
    prog->node_stamp = bw__xcalloc(prog->nnodes + 1, sizeof(unsigned));
  }
  return ++prog->stamp;
}

typedef struct collect {
  size_t *items;
  size_t count, cap;
} collect;

/* Depth-first over slot flows; stamps end cycles and duplicates. */
static void walk_value(bw__program *prog, const bw__value *value,
                       unsigned stamp, collect *out) {
  size_t index;
  if (value->kind == BW__VAL_FUNC) {
    if (bw__strmap_get(&prog->node_by_usr, value->ref, &index) &&
        prog->node_stamp[index] != stamp) {
      prog->node_stamp[index] = stamp;
      *BW__PUSH(out->items, out->count, out->cap) = index;
    }
  } else if (value->kind == BW__VAL_SLOT) {
    if (!bw__strmap_get(&prog->slot_by_key, value->ref, &index) ||
        prog->slot_stamp[index] == stamp)
      return;
    prog->slot_stamp[index] = stamp;
    const bw__slot *slot = &prog->slots[index];
    for (size_t i = 0; i < slot->nvalues; i++)
      walk_value(prog, slot->values[i], stamp, out);
  }
}

static int compare_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}

size_t bw__program_targets(bw__program *prog, const bw__value *value,
                           const size_t **out) {
  size_t index;
  *out = NULL;
  if (value->kind == BW__VAL_FUNC) {
    if (!bw__strmap_get(&prog->node_by_usr, value->ref, &index))
      return 0;
    if (!prog->identity) {
      prog->identity = bw__xcalloc(prog->nnodes + 1, sizeof(size_t));
      for (size_t i = 0; i < prog->nnodes; i++)
        prog->identity[i] = i;
    }
    *out = &prog->identity[index];
    return 1;
  }
  if (value->kind != BW__VAL_SLOT ||
      !bw__strmap_get(&prog->slot_by_key, value->ref, &index))
    return 0;
  if (!prog->slot_done) {
    prog->slot_done = bw__xcalloc(prog->nslots + 1, 1);
    prog->slot_targets = bw__xcalloc(prog->nslots + 1, sizeof(size_t *));
    prog->slot_ntargets = bw__xcalloc(prog->nslots + 1, sizeof(size_t));
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
static int find_param(bw__program *prog, const char *key, const char *usr,
                      int *param, unsigned stamp) {
  if (param_key(key, usr, param))
    return 1;
  size_t index;
  if (!bw__strmap_get(&prog->slot_by_key, key, &index) ||
      prog->slot_stamp[index] == stamp)
    return 0;
  prog->slot_stamp[index] = stamp;
  const bw__slot *slot = &prog->slots[index];
  for (size_t i = 0; i < slot->nvalues; i++) {
    const bw__value *value = slot->values[i];
    if (value->kind == BW__VAL_SLOT &&
        find_param(prog, value->ref, usr, param, stamp))
      return 1;
  }
  return 0;
}

int bw__program_param_of(bw__program *prog, const bw__value *value,
                         const char *usr, int *param) {
  if (value->kind != BW__VAL_SLOT)
    return 0;
  return find_param(prog, value->ref, usr, param, new_stamp(prog));
}
