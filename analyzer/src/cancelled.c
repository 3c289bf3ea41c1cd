/* cancelled.c - `argN is cancelled` (see cancelled.h). */
#include "cancelled.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESET_FN "g_cancellable_reset"

/* The program stores g_cancellable_reset's address: it may reset
 * anything. */
static int reset_taken(const bwsc__program *prog) {
  for (size_t i = 0; i < prog->ncalls; i++) {
    const bwsc__call_fact *call = prog->calls[i];
    for (size_t a = 0; a < call->nargs; a++)
      if (call->args[a].kind == BWSC__VAL_FUNC && call->args[a].name &&
          !strcmp(call->args[a].name, RESET_FN))
        return 1;
  }
  for (size_t i = 0; i < prog->nslots; i++)
    for (size_t v = 0; v < prog->slots[i].nvalues; v++) {
      const bwsc__value *value = prog->slots[i].values[v];
      if (value->kind == BWSC__VAL_FUNC && value->name &&
          !strcmp(value->name, RESET_FN))
        return 1;
    }
  return 0;
}

/* The slots an object in the field `field` (its key) and in slot `via`
 * may reach, with what was stored into the field (the cancelled
 * locals): forward over desc flows (`x = slot`) and direct calls' keyed
 * arguments (the callee's parameter "<USR>#<i>"), to a fixpoint. A
 * reset of one of them, or of a slot with no key, may be of that object;
 * so may a call through a pointer given one (its callee is not known). */
static int may_reset(bwsc__nonblock *nb, const bwsc__program *prog,
                     const char *field, const char *via) {
  bwsc__strmap reach;
  memset(&reach, 0, sizeof(reach));
  char **owned = NULL;
  size_t nowned = 0, capowned = 0;
  bwsc__strmap_put(&reach, field, 1);
  bwsc__strmap_put(&reach, via, 1);
  const size_t *flows = NULL;
  size_t n = bwsc__nonblock_flows_into(nb, field, &flows);
  for (size_t i = 0; i < n; i++)
    if (prog->desc_flows[flows[i]]->from)
      bwsc__strmap_put(&reach, prog->desc_flows[flows[i]]->from, 1);
  int grew = 1, reset = 0;
  while (grew && !reset) {
    grew = 0;
    for (size_t i = 0; i < prog->ndesc_flows; i++) {
      const bwsc__desc_flow *flow = prog->desc_flows[i];
      if (flow->from && flow->to &&
          bwsc__strmap_get(&reach, flow->from, NULL) &&
          !bwsc__strmap_get(&reach, flow->to, NULL)) {
        bwsc__strmap_put(&reach, flow->to, 1);
        grew = 1;
      }
    }
    for (size_t i = 0; i < prog->ncalls && !reset; i++) {
      const bwsc__call_fact *call = prog->calls[i];
      for (size_t a = 0; call->descs && a < call->nargs; a++) {
        const char *key = call->descs[a].key;
        if (!key || !bwsc__strmap_get(&reach, key, NULL))
          continue;
        if (call->callee.kind != BWSC__VAL_FUNC || !call->callee.ref) {
          reset = 1;
          break;
        }
        char *param = bwsc__xasprintf("%s#%zu", call->callee.ref, a);
        if (bwsc__strmap_get(&reach, param, NULL)) {
          free(param);
          continue;
        }
        *BWSC__PUSH(owned, nowned, capowned) = param;
        bwsc__strmap_put(&reach, param, 1);
        grew = 1;
      }
    }
  }
  for (size_t i = 0; i < prog->ncalls && !reset; i++) {
    const bwsc__call_fact *call = prog->calls[i];
    if (!call->callee.name || strcmp(call->callee.name, RESET_FN) != 0)
      continue;
    const char *key = bwsc__nonblock_arg(call, 0);
    reset = !key || bwsc__strmap_get(&reach, key, NULL);
  }
  bwsc__strmap_free(&reach);
  for (size_t i = 0; i < nowned; i++)
    free(owned[i]);
  free(owned);
  return reset;
}

/* A function the rules register callbacks with: an entry, or a setter. */
static int registers(const bw_rules *rules, const char *name) {
  if (bw_rules_find_entry(rules, name))
    return 1;
  size_t n = bw_rules_entry_count(rules);
  for (size_t e = 0; e < n; e++) {
    const bw_entry_rule *rule = bw_rules_entry_at(rules, e);
    for (size_t i = 0; i < rule->n_callbacks; i++)
      if (rule->callbacks[i].kind == BW_CALLBACK_SETTER &&
          rule->callbacks[i].setter && !strcmp(rule->callbacks[i].setter, name))
        return 1;
  }
  return 0;
}

/* `field`, a key, is one of the space-separated keys of `list`. */
static int listed(const char *list, const char *field) {
  size_t len = strlen(field);
  for (const char *p = list; p && *p;) {
    const char *space = strchr(p, ' ');
    size_t n = space ? (size_t)(space - p) : strlen(p);
    if (n == len && !strncmp(p, field, len))
      return 1;
    p = space ? space + 1 : NULL;
  }
  return 0;
}

/* Every code use of callback `usr` is a registration by the rules whose
 * `&v` user data holds a cancelled cancellable in `field`, and nothing
 * calls it directly. */
static int registrations_cancel(bwsc__nonblock *nb, const bwsc__program *prog,
                                const bw_rules *rules, const char *usr,
                                const char *field) {
  size_t registrations = 0;
  for (size_t i = 0; i < prog->ncalls; i++) {
    const bwsc__call_fact *call = prog->calls[i];
    if (call->callee.kind == BWSC__VAL_FUNC && call->callee.ref &&
        !strcmp(call->callee.ref, usr))
      return 0; /* a direct call passes anything */
    int passes = 0;
    for (size_t a = 0; a < call->nargs; a++)
      passes |= call->args[a].kind == BWSC__VAL_FUNC && call->args[a].ref &&
                !strcmp(call->args[a].ref, usr);
    if (!passes)
      continue;
    if (call->callee.kind != BWSC__VAL_FUNC || !call->callee.name ||
        !registers(rules, call->callee.name) || !listed(call->cancelled, field))
      return 0;
    registrations++;
  }
  return registrations > 0 &&
         registrations == bwsc__nonblock_code_uses(nb, usr);
}

/* Some store goes into field `field` through a pointer: a desc flow into
 * a "<pointer>-><field>" key. */
static int stored_through_pointer(const bwsc__program *prog,
                                  const char *field) {
  size_t len = strlen(field);
  for (size_t i = 0; i < prog->ndesc_flows; i++) {
    const char *to = prog->desc_flows[i]->to;
    size_t n = to ? strlen(to) : 0;
    if (n > len + 2 && !strcmp(to + n - len, field) &&
        !strncmp(to + n - len - 2, "->", 2))
      return 1;
  }
  return 0;
}

int bwsc__cancelled_arg(bwsc__cancelled *state, bwsc__nonblock *nb,
                        const bwsc__program *prog, const bw_rules *rules,
                        const bwsc__call_fact *call, size_t a) {
  if (!state->asked) {
    state->asked = 1;
    state->reset = reset_taken(prog);
  }
  const char *via = call->descs && a < call->nargs ? call->descs[a].via : NULL;
  const char *arrow = via ? strstr(via, "->") : NULL;
  char base[512];
  if (state->reset || !arrow || (size_t)(arrow - via) >= sizeof(base) ||
      !call->caller)
    return 0;
  memcpy(base, via, (size_t)(arrow - via));
  base[arrow - via] = '\0';
  const char *field = arrow + 2;
  /* The pointer: the caller's parameter, or a local copying only it. */
  int param = -1;
  if (!bwsc__nonblock_param_of(base, call->caller, &param)) {
    const size_t *flows = NULL;
    size_t n = base[0] == '*' ? bwsc__nonblock_flows_into(nb, base, &flows) : 0;
    for (size_t i = 0; i < n; i++) {
      const bwsc__desc_flow *flow = prog->desc_flows[flows[i]];
      int p = -1;
      if (!flow->from ||
          !bwsc__nonblock_param_of(flow->from, call->caller, &p) ||
          (param >= 0 && p != param))
        return 0;
      param = p;
    }
  }
  const bwsc__node *node = bwsc__program_node(prog, call->caller);
  const bwsc__func_fact *fact =
      node ? (node->def ? node->def : node->decl) : NULL;
  char key[512];
  int len = snprintf(key, sizeof(key), "%s#%d", call->caller, param);
  if (param < 0 || !fact || param != fact->nparams - 1 || len <= 0 ||
      (size_t)len >= sizeof(key) || !bwsc__nonblock_unwritten(nb, key))
    return 0;
  return !stored_through_pointer(prog, field) &&
         registrations_cancel(nb, prog, rules, call->caller, field) &&
         !may_reset(nb, prog, field, via);
}
