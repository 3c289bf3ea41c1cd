/* nonblock.c - which descriptors the program made non-blocking.
 *
 * Invariants (see nonblock.h for the keys): flow-insensitive - a
 * descriptor made non-blocking anywhere counts everywhere, which is how
 * programs use O_NONBLOCK (set once, right after the descriptor is made);
 * a slot that is only copied into (`ctx->sock = sock`) counts only when
 * every store into it, in the whole program, is of a non-blocking slot;
 * the elements of an array are one slot (`pipefd[0]`, `pipefd[1]`);
 * a setter call counts only when its flag argument provably carries the
 * non-blocking bit (a constant, an OR with it, or a local whose last
 * writes set it: bwsc__arg_flags), so `fcntl(fd, F_SETFL, mode)` with a
 * `mode` of unknown origin makes nothing non-blocking.
 *
 * The setters are the rules' nonblocking: rules; a program function
 * that calls one on its own descriptor parameter with a condition on
 * another of its parameters (`ioctl(fd, FIONBIO, &set)` in
 * uv__nonblock_ioctl(fd, set); `fcntl(fd, F_SETFL, mode)` in tmux's
 * setblocking(fd, state), where `mode` has the flag exactly when `state`
 * is 0) is a setter too, with that condition moved onto its callers'
 * argument; one that makes its parameter blocking again makes its
 * callers' argument blocking. Which callbacks are readiness callbacks,
 * and which of their parameters is the ready descriptor, the rules' ready:
 * rules say.
 */
#include "nonblock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* From the indexes of the constants' section below. */
static size_t flows_into(bwsc__nonblock *nb, const char *key,
                         const size_t **out);
static int is_local(bwsc__nonblock *nb, const char *key);
static int address_taken(bwsc__nonblock *nb, const char *usr);
static size_t index_get(const bwsc__index_lists *index, const char *key,
                        const size_t **out);
static void build_indexes(bwsc__nonblock *nb);

static int add(bwsc__nonblock *nb, const char *key) {
  if (!key || bwsc__strmap_get(&nb->keys, key, NULL) ||
      bwsc__strmap_get(&nb->blocked, key, NULL))
    return 0;
  bwsc__strmap_put(&nb->keys, key, 1);
  return 1;
}

/* Index `*param` when `key` is a parameter of function `usr`. */
static int param_of(const char *key, const char *usr, int *param) {
  size_t len = strlen(usr);
  if (!key || strncmp(key, usr, len) != 0 || key[len] != '#' ||
      key[len + 1] < '0' || key[len + 1] > '9')
    return 0;
  char *end = NULL;
  long index = strtol(key + len + 1, &end, 10);
  if (*end || index < 0 || index > 63)
    return 0;
  *param = (int)index;
  return 1;
}

/* The one constant the integer `&key` points to at a setter call: the
 * stores into it, taking the address not counted (the setter reads it). */
static int pointee_const(bwsc__nonblock *nb, const char *key, long long *out) {
  const size_t *flows = NULL;
  size_t n = flows_into(nb, key, &flows);
  int found = 0;
  for (size_t i = 0; i < n; i++) {
    const bwsc__desc_flow *flow = nb->prog->desc_flows[flows[i]];
    long long v = flow->ival;
    if (flow->addr)
      continue;
    if (!flow->is_const &&
        !(flow->from && bwsc__nonblock_const(nb, flow->from, &v)))
      return 0;
    if (found && v != *out)
      return 0;
    *out = v;
    found = 1;
  }
  return found && is_local(nb, key);
}

/* COND_FALSE: provably not (a constant says so); COND_UNKNOWN: not known;
 * COND_PARAM: it holds exactly when a condition on a parameter of the
 * function the call is written in does (*moved). */
enum { COND_FALSE, COND_TRUE, COND_PARAM, COND_UNKNOWN };

/* The condition moves onto parameter `param` of the caller unchanged. */
static int moved_to(const bw_rule_cond *cond, int param, bw_rule_cond *moved) {
  *moved = *cond;
  moved->arg = param;
  return COND_PARAM;
}

/* A flag condition on `key & mask` (`flags & UV_NONBLOCK_PIPE` in libuv's
 * uv__make_pipe(fds, flags)): the flag is set when it is one of the mask
 * and `key` has it, so the condition moves onto `key`. */
static int masked_holds(bwsc__nonblock *nb, const bw_rule_cond *cond,
                        const bwsc__arg_desc *desc, const char *usr,
                        bw_rule_cond *moved) {
  long long v = 0;
  int param;
  if (cond->kind != BW_COND_HAS_FLAG || !cond->value)
    return COND_UNKNOWN;
  if (cond->value & ~desc->mask)
    return COND_FALSE;
  if (param_of(desc->key, usr, &param))
    return moved_to(cond, param, moved);
  if (!bwsc__nonblock_const(nb, desc->key, &v))
    return COND_UNKNOWN;
  return (v & cond->value) == cond->value;
}

/* A flag condition on a local whose flags the statements before the call
 * say (bwsc__arg_flags): set or clear whatever else it holds, or set
 * exactly when a test of the caller's parameter is, which moves onto that
 * parameter (`if (!state) mode |= O_NONBLOCK; else mode &= ~O_NONBLOCK;`
 * in tmux's setblocking(fd, state): "arg1 is 0"). */
static int flags_hold(const bw_rule_cond *cond, const bwsc__arg_desc *desc,
                      bw_rule_cond *moved) {
  const bwsc__arg_flags *flags = desc->flags;
  long long f = cond->value;
  if ((desc->bits & f) == f)
    return COND_TRUE; /* `flags | O_NONBLOCK` sets it whatever flags holds */
  if (!flags)
    return COND_UNKNOWN;
  if (flags->clear & f)
    return COND_FALSE;
  if (flags->param < 0)
    return COND_UNKNOWN;
  memset(moved, 0, sizeof(*moved));
  moved->arg = flags->param;
  if ((flags->eq_set & f) == f) {
    moved->kind = BW_COND_EQUALS;
    moved->value = flags->value;
    return COND_PARAM;
  }
  if ((flags->ne_set & f) == f && flags->value == 0) {
    moved->kind = BW_COND_NOT_NULL; /* on an integer: not 0 */
    return COND_PARAM;
  }
  return COND_UNKNOWN;
}

/* Whether a `when` condition holds for `call`, written in function
 * `usr`: COND_PARAM (and *moved) when it depends on that function's own
 * parameter (`ioctl(fd, FIONBIO, &set)` in a wrapper taking `set`). */
static int when_holds(bwsc__nonblock *nb, const bw_rule_cond *cond,
                      const bwsc__call_fact *call, const char *usr,
                      bw_rule_cond *moved) {
  size_t a = (size_t)cond->arg;
  int param;
  if (cond->arg < 0 || a >= call->nargs)
    return COND_UNKNOWN;
  const bwsc__value *value = &call->args[a];
  const bwsc__arg_desc *desc = call->descs ? &call->descs[a] : NULL;
  long long v = 0;
  int known = value->kind == BWSC__VAL_INT;
  if (!known && desc && desc->key && desc->mask)
    return masked_holds(nb, cond, desc, usr, moved);
  if (known)
    v = value->ival;
  else if (desc && desc->key && param_of(desc->key, usr, &param))
    return moved_to(cond, param, moved);
  else if (desc && desc->key)
    known = desc->plain ? bwsc__nonblock_const(nb, desc->key, &v)
                        : pointee_const(nb, desc->key, &v);
  if (!known && cond->kind == BW_COND_HAS_FLAG && desc && cond->value)
    return flags_hold(cond, desc, moved);
  if (!known)
    return cond->kind == BW_COND_NOT_NULL && value->kind == BWSC__VAL_FUNC
               ? COND_TRUE
               : COND_UNKNOWN;
  switch (cond->kind) {
  case BW_COND_EQUALS:
    return v == cond->value;
  case BW_COND_HAS_FLAG:
    return cond->value && (v & cond->value) == cond->value;
  case BW_COND_IS_NULL:
    return v == 0;
  case BW_COND_NOT_NULL:
    return v != 0;
  default:
    return COND_FALSE;
  }
}

/* A program function that calls a setter on its own descriptor parameter
 * with a condition on another of its parameters: a setter itself, with
 * the conditions moved onto its parameters (uv__nonblock(fd, 1)). */
static void derive(bwsc__nonblock *nb, const char *usr, int fd_param,
                   const bw_nonblock_rule *from, const bw_rule_cond *moved,
                   const int *deferred) {
  if (bwsc__strmap_get(&nb->derived_by_usr, usr, NULL))
    return;
  bw_nonblock_rule copy = *from; /* `from` may be in nb->derived */
  bw_nonblock_rule *rule =
      BWSC__PUSH(nb->derived, nb->nderived, nb->capderived);
  *rule = copy;
  rule->function = usr;
  rule->fd_arg = fd_param;
  for (size_t i = 0; i < rule->n_when; i++)
    if (deferred[i])
      rule->when[i] = moved[i];
    else
      rule->when[i].kind = BW_COND_COUNT; /* held inside: always true */
  bwsc__strmap_put(&nb->derived_by_usr, usr, nb->nderived);
  nb->grew = 1;
}

/* The rule a call applies: the rules' for its callee by name, or one
 * derived for a program wrapper. */
static const bw_nonblock_rule *rule_of(const bwsc__nonblock *nb,
                                       const bwsc__call_fact *call) {
  size_t at;
  if (call->callee.kind != BWSC__VAL_FUNC)
    return NULL;
  if (call->callee.ref &&
      bwsc__strmap_get(&nb->derived_by_usr, call->callee.ref, &at))
    return &nb->derived[at - 1];
  return bw_rules_find_nonblock(nb->rules, call->callee.name);
}

/* A rule's "path=N under=PREFIX" holds: the path is known to start with
 * the prefix (or the rule has none). */
static int path_under(const bwsc__call_fact *call,
                      const bw_nonblock_rule *rule) {
  size_t a = (size_t)rule->path_arg;
  if (!rule->path_prefix)
    return 1;
  const char *text =
      call->descs && a < call->nargs ? call->descs[a].text : NULL;
  return text && !strncmp(text, rule->path_prefix, strlen(rule->path_prefix));
}

/* The key a setter call makes non-blocking, or NULL; a setter call on
 * the caller's parameters derives a rule for the caller instead. */
static const char *set_by(bwsc__nonblock *nb, const bwsc__call_fact *call) {
  const bw_nonblock_rule *rule = rule_of(nb, call);
  if (!rule || !path_under(call, rule))
    return NULL;
  const char *key = rule->fd_arg < 0
                        ? call->result
                        : bwsc__nonblock_arg(call, (size_t)rule->fd_arg);
  bw_rule_cond moved[BW_RULE_MAX_CONDS];
  int on_param[BW_RULE_MAX_CONDS], deferred = 0;
  memset(moved, 0, sizeof(moved));
  for (size_t i = 0; i < rule->n_when; i++) {
    on_param[i] = 0;
    if (rule->when[i].kind == BW_COND_COUNT)
      continue;
    int held = when_holds(nb, &rule->when[i], call, call->caller, &moved[i]);
    on_param[i] = held == COND_PARAM;
    if (held == COND_FALSE && i + 1 == rule->n_when &&
        rule->otherwise_blocking && !deferred && key)
      bwsc__strmap_put(&nb->blocked, key, 1); /* setblocking(fd, 1) */
    if (held == COND_FALSE || held == COND_UNKNOWN)
      return NULL;
    deferred |= held == COND_PARAM;
  }
  int fd_param;
  if (!deferred)
    return key;
  if (param_of(key, call->caller, &fd_param))
    derive(nb, call->caller, fd_param, rule, moved, on_param);
  return NULL;
}

/* Adds a key a setter call made non-blocking: it is "direct", which a
 * key that joined through its stores is not. */
static int add_direct(bwsc__nonblock *nb, const char *key) {
  if (key && !bwsc__strmap_get(&nb->blocked, key, NULL))
    bwsc__strmap_put(&nb->direct, key, 1);
  return add(nb, key);
}

/* A call of a program function whose parameter a setter made non-blocking
 * (OpenSSH's set_nonblock(fd)) makes the argument non-blocking too, and one
 * whose parameter a setter made blocking again (unset_nonblock(fd)) makes
 * it blocking. A parameter that joined through stores (`fds[0] = temp[0]`
 * into an out-parameter, from a descriptor made non-blocking only under a
 * condition) does not reach back into its callers. */
static int add_through_wrappers(bwsc__nonblock *nb, const bwsc__program *prog) {
  int grew = 0;
  char key[512];
  for (size_t i = 0; i < prog->ncalls; i++) {
    const bwsc__call_fact *call = prog->calls[i];
    if (call->callee.kind != BWSC__VAL_FUNC)
      continue;
    for (size_t a = 0; a < call->nargs; a++) {
      const char *desc = bwsc__nonblock_arg(call, a);
      if (!desc || bwsc__strmap_get(&nb->blocked, desc, NULL))
        continue;
      int len = snprintf(key, sizeof(key), "%s#%zu", call->callee.ref, a);
      if (len <= 0 || (size_t)len >= sizeof(key))
        continue;
      if (bwsc__strmap_get(&nb->blocked, key, NULL))
        bwsc__strmap_put(&nb->blocked, desc, 1);
      else if (!bwsc__strmap_get(&nb->keys, desc, NULL) &&
               bwsc__strmap_get(&nb->direct, key, NULL))
        grew |= add_direct(nb, desc);
    }
  }
  return grew;
}

/* ---- stores: a slot every store into which is non-blocking joins ------- */

/* `to` takes the value of `from` (NULL: of something the set cannot vouch
 * for), which is that of `alt` when known (see bwsc__desc_flow). Keys are
 * borrowed from the facts or owned by nb->owned. */
static void add_store(bwsc__nonblock *nb, const char *to, const char *from,
                      const char *alt) {
  bwsc__desc_flow *store = BWSC__PUSH(nb->stores, nb->nstores, nb->capstores);
  memset(store, 0, sizeof(*store));
  store->to = (char *)to;
  store->from = (char *)from;
  store->alt = (char *)alt;
}

static const char *own(bwsc__nonblock *nb, char *key) {
  *BWSC__PUSH(nb->owned, nb->nowned, nb->capowned) = key;
  return key;
}

/* A struct pointer variable's "*<USR>" (no descriptor: its stores say
 * where it points) or a field through a pointer, "<pointer>-><field>"
 * (its stores are added only when the program reads it,
 * add_field_stores). */
static int pointer_or_field(const char *key) {
  return key[0] == '*' || strstr(key, "->") != NULL;
}

/* The integer slots something reads as a descriptor, whose stores matter. */
static void find_read(bwsc__strmap *read, const bwsc__program *prog) {
  for (size_t i = 0; i < prog->ncalls; i++)
    for (size_t a = 0; prog->calls[i]->descs && a < prog->calls[i]->nargs; a++)
      if (prog->calls[i]->descs[a].key)
        bwsc__strmap_put(read, prog->calls[i]->descs[a].key, 1);
  for (size_t i = 0; i < prog->ndesc_flows; i++)
    if (prog->desc_flows[i]->from && !pointer_or_field(prog->desc_flows[i]->to))
      bwsc__strmap_put(read, prog->desc_flows[i]->from, 1);
}

/* ---- fields through pointers: "<pointer>-><field>" slots --------------- */

/* A registration's user data, or a struct pointer variable: "*<USR>". */
static int is_pointer_key(const char *key) {
  return key && key[0] == '*';
}

/* The field slots met so far (a work list: each is visited once) and
 * their index in it. */
typedef struct field_slots {
  const char **keys;
  size_t count, cap;
  bwsc__strmap index;
} field_slots;

static const char *field_seen(field_slots *slots, const char *key) {
  size_t at;
  if (bwsc__strmap_get(&slots->index, key, &at))
    return slots->keys[at];
  *BWSC__PUSH(slots->keys, slots->count, slots->cap) = key;
  bwsc__strmap_put(&slots->index, key, slots->count - 1);
  return key;
}

/* "<pointer>-><field>", met (owned by nb->owned when new); NULL when too
 * long. */
static const char *field_of(bwsc__nonblock *nb, field_slots *slots,
                            const char *pointer, const char *field) {
  char key[1024];
  size_t at;
  int len = snprintf(key, sizeof(key), "%s->%s", pointer, field);
  if (len <= 0 || (size_t)len >= sizeof(key))
    return NULL;
  if (bwsc__strmap_get(&slots->index, key, &at))
    return slots->keys[at];
  return field_seen(slots, own(nb, bwsc__xstrdup(key)));
}

/* The stores into the field slots the program reads (call arguments'
 * bwsc__arg_desc.via) and those they take from: the stores through the
 * same pointer (its desc flows), and a pointer variable that copies other
 * pointers
 * (`data = user_data`) holds their fields too, and a parameter's fields
 * hold those of what its direct calls pass (a struct pointer variable)
 * and its registrations' user data (bwsc__nonblock_enter), or anything
 * when its function's address is taken otherwise or the argument is no
 * such variable. A pointer of any other origin (a call's result) holds
 * only the stores through it: the function that has it sets the fields
 * it reads (flow-insensitive, as the set is). */
static void add_field_stores(bwsc__nonblock *nb, const bwsc__program *prog) {
  if (!nb->indexed)
    build_indexes(nb);
  field_slots slots;
  memset(&slots, 0, sizeof(slots));
  for (size_t i = 0; i < prog->ncalls; i++)
    for (size_t a = 0; prog->calls[i]->descs && a < prog->calls[i]->nargs; a++)
      if (prog->calls[i]->descs[a].via)
        field_seen(&slots, prog->calls[i]->descs[a].via);
  char pointer[512], usr[512];
  for (size_t q = 0; q < slots.count; q++) {
    const char *slot = slots.keys[q];
    const char *arrow = strstr(slot, "->");
    size_t len = arrow ? (size_t)(arrow - slot) : 0;
    if (!arrow || len >= sizeof(pointer))
      continue;
    memcpy(pointer, slot, len);
    pointer[len] = '\0';
    const char *field = arrow + 2;
    const size_t *own_flows = NULL;
    size_t nown = flows_into(nb, slot, &own_flows);
    for (size_t i = 0; i < nown; i++) {
      const bwsc__desc_flow *flow = nb->prog->desc_flows[own_flows[i]];
      if (!flow->is_const && flow->addr != 2)
        add_store(nb, slot, flow->from, flow->alt); /* through the pointer */
    }
    if (is_pointer_key(pointer)) {
      const size_t *flows = NULL;
      size_t n = flows_into(nb, pointer, &flows);
      for (size_t i = 0; i < n; i++) {
        const char *from = nb->prog->desc_flows[flows[i]]->from;
        if (from && from[0] != '&')
          add_store(nb, slot, field_of(nb, &slots, from, field), NULL);
      }
      continue;
    }
    const char *hash = strrchr(pointer, '#');
    if (!hash || hash[1] < '0' || hash[1] > '9')
      continue;
    memcpy(usr, pointer, (size_t)(hash - pointer));
    usr[hash - pointer] = '\0';
    size_t entry = 0;
    bwsc__strmap_get(&nb->entered, pointer, &entry);
    if (!entry && address_taken(nb, usr))
      add_store(nb, slot, NULL, NULL); /* called with anything */
    for (; entry; entry = nb->entries[entry - 1].next) {
      const char *from = nb->entries[entry - 1].from;
      add_store(nb, slot,
                is_pointer_key(from) ? field_of(nb, &slots, from, field) : NULL,
                NULL);
    }
    size_t index = strtoul(hash + 1, NULL, 10);
    const size_t *calls = NULL;
    size_t ncalls = index_get(&nb->calls_to, usr, &calls);
    for (size_t i = 0; i < ncalls; i++) {
      const bwsc__call_fact *call = nb->prog->calls[calls[i]];
      const char *points =
          call->descs && index < call->nargs ? call->descs[index].points : NULL;
      add_store(nb, slot,
                is_pointer_key(points) ? field_of(nb, &slots, points, field)
                                       : NULL,
                NULL);
    }
  }
  free(slots.keys);
  bwsc__strmap_free(&slots.index);
}

/* Every store into an integer slot: assignments, a call's result stored
 * (from its callee's "#ret" slot, which the callee's returns store into),
 * and a direct call's argument into a parameter that is read (from
 * nothing when the function's address is taken: it is called with
 * anything). A constant store (`fd = -1`) is no descriptor at all. */
static void find_stores(bwsc__nonblock *nb, const bwsc__program *prog) {
  bwsc__strmap read;
  memset(&read, 0, sizeof(read));
  find_read(&read, prog);
  /* `&obj` of an object pointer is not a store: GLib takes it to clear
   * the slot (g_clear_object, g_clear_pointer: NULL, no object). */
  for (size_t i = 0; i < prog->ndesc_flows; i++)
    if (!prog->desc_flows[i]->is_const && prog->desc_flows[i]->addr != 2 &&
        !pointer_or_field(prog->desc_flows[i]->to))
      add_store(nb, prog->desc_flows[i]->to, prog->desc_flows[i]->from,
                prog->desc_flows[i]->alt);
  char key[512];
  for (size_t i = 0; i < prog->ncalls; i++) {
    const bwsc__call_fact *call = prog->calls[i];
    int direct = call->callee.kind == BWSC__VAL_FUNC && call->callee.ref;
    if (call->result && !rule_of(nb, call))
      add_store(nb, call->result,
                direct ? own(nb, bwsc__xasprintf("%s#ret", call->callee.ref))
                       : NULL,
                NULL);
    else if (call->result && set_by(nb, call) != call->result)
      add_store(nb, call->result, NULL, NULL); /* socket() without the flag */
    for (size_t a = 0; direct && a < call->nargs; a++) {
      int len = snprintf(key, sizeof(key), "%s#%zu", call->callee.ref, a);
      if (len <= 0 || (size_t)len >= sizeof(key) ||
          !bwsc__strmap_get(&read, key, NULL) ||
          call->args[a].kind == BWSC__VAL_INT)
        continue;
      const char *to = own(nb, bwsc__xstrdup(key));
      int taken = address_taken(nb, call->callee.ref) &&
                  !bwsc__strmap_get(&nb->entered, key, NULL);
      const char *via = call->descs ? call->descs[a].via : NULL;
      add_store(nb, to, taken ? NULL : bwsc__nonblock_arg(call, a),
                taken ? NULL : via);
    }
  }
  for (size_t k = 0; k < nb->entered.cap; k++) {
    const char *to = nb->entered.keys[k];
    for (size_t e = to ? nb->entered.values[k] : 0; e;
         e = nb->entries[e - 1].next) {
      const char *from = nb->entries[e - 1].from;
      add_store(nb, to, is_pointer_key(from) ? nb->entries[e - 1].also : from,
                NULL);
    }
  }
  bwsc__strmap_free(&read);
  add_field_stores(nb, prog);
}

static int is_return_slot(const char *key) {
  size_t len = strlen(key);
  return len > 4 && strcmp(key + len - 4, "#ret") == 0;
}

/* A store's source can vouch for its target: a key of the set, or a
 * slot that is stored into and not (yet) known to hold anything else. */
static int may_be_good(const bwsc__nonblock *nb, const bwsc__strmap *stored,
                       const bwsc__strmap *bad, const char *from) {
  return from && (bwsc__strmap_get(&nb->keys, from, NULL) ||
                  (bwsc__strmap_get(stored, from, NULL) &&
                   !bwsc__strmap_get(bad, from, NULL)));
}

/* The slots that may hold only non-blocking descriptors: the greatest set
 * closed under "every store is of a key or of a slot of the set" (a
 * "#ret" slot: one store is), so that a cycle of copies (libuv's
 * `stream->io_watcher.fd = fd` in uv__stream_open, whose caller
 * uv_pipe_connect passes `uv__stream_fd(handle)` back) does not keep
 * every slot of it out. Computed as its complement, `bad`, which only
 * grows. */
static void find_bad(const bwsc__nonblock *nb, const bwsc__strmap *stored,
                     bwsc__strmap *bad) {
  for (size_t i = 0; i < nb->nstores; i++)
    if (bwsc__strmap_get(&nb->blocked, nb->stores[i].to, NULL))
      bwsc__strmap_put(bad, nb->stores[i].to, 1);
  for (int grew = 1; grew;) {
    grew = 0;
    bwsc__strmap good_ret; /* "#ret" slots with a store that may be good */
    memset(&good_ret, 0, sizeof(good_ret));
    for (size_t i = 0; i < nb->nstores; i++) {
      const bwsc__desc_flow *store = &nb->stores[i];
      int good = may_be_good(nb, stored, bad, store->from) ||
                 may_be_good(nb, stored, bad, store->alt);
      if (is_return_slot(store->to)) {
        if (good)
          bwsc__strmap_put(&good_ret, store->to, 1);
      } else if (!good && !bwsc__strmap_get(bad, store->to, NULL)) {
        bwsc__strmap_put(bad, store->to, 1);
        grew = 1;
      }
    }
    for (size_t i = 0; i < nb->nstores; i++) {
      const char *to = nb->stores[i].to;
      if (is_return_slot(to) && !bwsc__strmap_get(&good_ret, to, NULL) &&
          !bwsc__strmap_get(bad, to, NULL)) {
        bwsc__strmap_put(bad, to, 1);
        grew = 1;
      }
    }
    bwsc__strmap_free(&good_ret);
  }
}

/* A slot every store of which is non-blocking (`ctx->sock = sock` where
 * `sock` is, and no other store of ctx->sock is not) joins the set, also
 * when some of those stores are of slots that join with it (a cycle); a
 * function's "#ret" slot joins when one of its returns is non-blocking:
 * its other returns are taken for error codes (`return err;`). A slot
 * joins only once one of its stores is of a key, so a cycle of copies
 * that nothing non-blocking enters stays out. */
static int add_through_stores(bwsc__nonblock *nb) {
  bwsc__strmap stored, bad;
  memset(&stored, 0, sizeof(stored));
  memset(&bad, 0, sizeof(bad));
  for (size_t i = 0; i < nb->nstores; i++)
    bwsc__strmap_put(&stored, nb->stores[i].to, 1);
  find_bad(nb, &stored, &bad);
  int grew = 0;
  for (size_t i = 0; i < nb->nstores; i++) {
    const bwsc__desc_flow *store = &nb->stores[i];
    if (!bwsc__strmap_get(&bad, store->to, NULL) &&
        (bwsc__nonblock_has(nb, store->from) ||
         bwsc__nonblock_has(nb, store->alt)))
      grew |= add(nb, store->to);
  }
  bwsc__strmap_free(&stored);
  bwsc__strmap_free(&bad);
  return grew;
}

static void fixpoint(bwsc__nonblock *nb, const bwsc__program *prog);

void bwsc__nonblock_init(bwsc__nonblock *nb, const bwsc__program *prog,
                         const bw_rules *rules) {
  memset(nb, 0, sizeof(*nb));
  nb->prog = prog;
  nb->rules = rules;
}

void bwsc__nonblock_enter(bwsc__nonblock *nb, const char *usr, int param,
                          const char *from, const char *also) {
  const char *key = own(nb, bwsc__xasprintf("%s#%d", usr, param));
  size_t first = 0;
  bwsc__strmap_get(&nb->entered, key, &first);
  struct bwsc__nonblock_entry *entry =
      BWSC__PUSH(nb->entries, nb->nentries, nb->capentries);
  entry->from = from;
  entry->also = also;
  entry->next = first;
  bwsc__strmap_put(&nb->entered, key, nb->nentries);
}

void bwsc__nonblock_build(bwsc__nonblock *nb, const bwsc__program *prog,
                          const bw_rules *rules) {
  bwsc__nonblock_init(nb, prog, rules);
  bwsc__nonblock_grow(nb);
}

void bwsc__nonblock_grow(bwsc__nonblock *nb) {
  const bwsc__program *prog = nb->prog;
  /* To a fixpoint: setters and the wrappers derived from them, wrappers
   * of wrappers, stores of stores. A descriptor made blocking again is
   * found on the way; while more are, the set is made again without
   * them (and what was copied from them). Blocked keys only ever grow, so
   * this ends. */
  for (size_t before = (size_t)-1; nb->blocked.count != before;) {
    before = nb->blocked.count;
    bwsc__strmap_free(&nb->keys);
    bwsc__strmap_free(&nb->direct);
    memset(&nb->keys, 0, sizeof(nb->keys));
    memset(&nb->direct, 0, sizeof(nb->direct));
    fixpoint(nb, prog);
  }
}

static void fixpoint(bwsc__nonblock *nb, const bwsc__program *prog) {
  for (int grew = 1; grew;) {
    nb->grew = 0;
    for (size_t i = 0; i < prog->ncalls; i++)
      nb->grew |= add_direct(nb, set_by(nb, prog->calls[i]));
    grew = nb->grew;
    if (!nb->stores_done) {
      find_stores(nb, prog);
      nb->stores_done = 1;
    }
    grew |= add_through_wrappers(nb, prog);
    grew |= add_through_stores(nb);
  }
}

static void index_free(bwsc__index_lists *index) {
  for (size_t i = 0; i < index->nlists; i++)
    free(index->lists[i].items);
  free(index->lists);
  bwsc__strmap_free(&index->by_key);
}

/* Frees what building the set needed: all but its keys, the strings they
 * point to, and the ready parameters. */
static void free_building(bwsc__nonblock *nb) {
  bwsc__strmap_free(&nb->blocked);
  bwsc__strmap_free(&nb->direct);
  free(nb->derived);
  bwsc__strmap_free(&nb->derived_by_usr);
  free(nb->stores);
  bwsc__strmap_free(&nb->consts);
  free(nb->vals);
  index_free(&nb->calls_to);
  index_free(&nb->flows_to);
  bwsc__strmap_free(&nb->local);
  bwsc__strmap_free(&nb->address_taken);
  bwsc__strmap_free(&nb->results);
  index_free(&nb->made_by);
  bwsc__strmap_free(&nb->sources);
  bwsc__strmap_free(&nb->entered);
  free(nb->entries);
  nb->entries = NULL;
  nb->nentries = nb->capentries = 0;
}

void bwsc__nonblock_shrink(bwsc__nonblock *nb) {
  free_building(nb);
  bwsc__strmap_free(&nb->ready_params); /* cleared below in any case */
  bwsc__strmap keys = nb->keys;
  char **owned = nb->owned;
  size_t nowned = nb->nowned, capowned = nb->capowned;
  const bwsc__program *prog = nb->prog;
  const bw_rules *rules = nb->rules;
  memset(nb, 0, sizeof(*nb));
  nb->keys = keys;
  nb->owned = owned;
  nb->nowned = nowned;
  nb->capowned = capowned;
  nb->prog = prog;
  nb->rules = rules;
  nb->stores_done = 1;
}

void bwsc__nonblock_free(bwsc__nonblock *nb) {
  free_building(nb);
  bwsc__strmap_free(&nb->keys);
  for (size_t i = 0; i < nb->nowned; i++)
    free(nb->owned[i]);
  free(nb->owned);
  bwsc__strmap_free(&nb->ready_params);
}

/* ---- constants of integer slots ----------------------------------------- */

#define CONST_BUSY 0 /* being computed: met again in a cycle, it varies */
#define CONST_VARIES 1
#define CONST_FIRST 2
#define CONST_NONE 3 /* a fold's start: nothing seen yet */
/* Slots followed from one query (wrappers of wrappers); past it, varies. */
#define CONST_DEPTH 16

static void index_add(bwsc__index_lists *index, const char *key, size_t item) {
  size_t at;
  if (!bwsc__strmap_get(&index->by_key, key, &at)) {
    BWSC__PUSH(index->lists, index->nlists, index->caplists);
    at = index->nlists;
    bwsc__strmap_put(&index->by_key, key, at);
  }
  bwsc__index_list *list = &index->lists[at - 1];
  *BWSC__PUSH(list->items, list->count, list->cap) = item;
}

static size_t index_get(const bwsc__index_lists *index, const char *key,
                        const size_t **out) {
  size_t at;
  if (!bwsc__strmap_get(&index->by_key, key, &at))
    return 0;
  *out = index->lists[at - 1].items;
  return index->lists[at - 1].count;
}

/* The slots the program may read as code: called through, passed on as
 * an argument (to any call), or stored into another function-pointer
 * slot. */
static void read_as_code(const bwsc__program *prog, bwsc__strmap *read) {
  for (size_t i = 0; i < prog->ncalls; i++) {
    const bwsc__call_fact *call = prog->calls[i];
    if (call->callee.kind == BWSC__VAL_SLOT && call->callee.ref)
      bwsc__strmap_put(read, call->callee.ref, 1);
    for (size_t a = 0; a < call->nargs; a++)
      if (call->args[a].kind == BWSC__VAL_SLOT && call->args[a].ref)
        bwsc__strmap_put(read, call->args[a].ref, 1);
  }
  for (size_t s = 0; s < prog->nslots; s++)
    for (size_t v = 0; v < prog->slots[s].nvalues; v++)
      if (prog->slots[s].values[v]->kind == BWSC__VAL_SLOT &&
          prog->slots[s].values[v]->ref)
        bwsc__strmap_put(read, prog->slots[s].values[v]->ref, 1);
}

/* A parameter of a function whose body the program has, which that body
 * never reads as code (GLib's g_task_set_source_tag(task, tag), which
 * keeps `tag` as a data pointer to compare): a function passed there is
 * not called through it, so that does not take its address. A parameter
 * of a function without a body (a library's) may be called by it. */
static int dead_end(const bwsc__program *prog, const bwsc__strmap *read,
                    const char *key) {
  const char *hash = strrchr(key, '#');
  char usr[512];
  size_t len = hash ? (size_t)(hash - key) : 0;
  if (!hash || hash[1] < '0' || hash[1] > '9' || len >= sizeof(usr) ||
      bwsc__strmap_get(read, key, NULL))
    return 0;
  memcpy(usr, key, len);
  usr[len] = '\0';
  const bwsc__node *node = bwsc__program_node(prog, usr);
  return node && node->def;
}

static void build_indexes(bwsc__nonblock *nb) {
  const bwsc__program *prog = nb->prog;
  nb->indexed = 1;
  for (size_t i = 0; i < prog->ncalls; i++) {
    const bwsc__call_fact *call = prog->calls[i];
    if (call->callee.kind == BWSC__VAL_FUNC && call->callee.ref)
      index_add(&nb->calls_to, call->callee.ref, i);
    if (call->result) {
      bwsc__strmap_put(&nb->results, call->result, 1);
      index_add(&nb->made_by, call->result, i);
    }
  }
  for (size_t i = 0; i < prog->ndesc_flows; i++) {
    const bwsc__desc_flow *flow = prog->desc_flows[i];
    index_add(&nb->flows_to, flow->to, i);
    if (flow->local)
      bwsc__strmap_put(&nb->local, flow->to, 1);
  }
  bwsc__strmap read;
  memset(&read, 0, sizeof(read));
  read_as_code(prog, &read);
  for (size_t s = 0; s < prog->nslots; s++) {
    if (dead_end(prog, &read, prog->slots[s].key))
      continue;
    for (size_t v = 0; v < prog->slots[s].nvalues; v++)
      if (prog->slots[s].values[v]->kind == BWSC__VAL_FUNC) {
        const char *ref = prog->slots[s].values[v]->ref;
        size_t uses = 0;
        bwsc__strmap_get(&nb->address_taken, ref, &uses);
        bwsc__strmap_put(&nb->address_taken, ref, uses + 1);
      }
  }
  bwsc__strmap_free(&read);
}

/* Folds one more value a slot may hold into *state: CONST_NONE (nothing
 * yet), CONST_VARIES, or CONST_FIRST with *value. */
static void meet(int *state, long long *value, int src, long long src_value) {
  if (*state == CONST_VARIES)
    return;
  if (src != CONST_FIRST || (*state == CONST_FIRST && *value != src_value)) {
    *state = CONST_VARIES;
    return;
  }
  *state = CONST_FIRST;
  *value = src_value;
}

static int slot_const(bwsc__nonblock *nb, const char *key, int depth,
                      long long *out);

/* What argument `a` of `call` holds: a constant, a slot's constant, or
 * anything. */
static int arg_const(bwsc__nonblock *nb, const bwsc__call_fact *call, size_t a,
                     int depth, long long *out) {
  if (a >= call->nargs)
    return CONST_VARIES;
  if (call->args[a].kind == BWSC__VAL_INT) {
    *out = call->args[a].ival;
    return CONST_FIRST;
  }
  if (call->descs && call->descs[a].key && call->descs[a].plain)
    return slot_const(nb, call->descs[a].key, depth + 1, out);
  return CONST_VARIES;
}

/* The callers' side of parameter `key` ("<USR>#<index>"). */
static void param_sources(bwsc__nonblock *nb, const char *key, int depth,
                          int *state, long long *value) {
  const char *hash = strrchr(key, '#');
  char usr[512];
  char *end = NULL;
  unsigned long index = hash ? strtoul(hash + 1, &end, 10) : 0;
  size_t len = hash ? (size_t)(hash - key) : 0;
  if (!hash || !end || *end || hash[1] == '\0' || len >= sizeof(usr)) {
    *state = CONST_VARIES;
    return;
  }
  memcpy(usr, key, len);
  usr[len] = '\0';
  const size_t *calls = NULL;
  size_t ncalls = index_get(&nb->calls_to, usr, &calls);
  if (!ncalls || bwsc__strmap_get(&nb->address_taken, usr, NULL)) {
    *state = CONST_VARIES;
    return;
  }
  for (size_t i = 0; i < ncalls && *state != CONST_VARIES; i++) {
    long long v = 0;
    int src = arg_const(nb, nb->prog->calls[calls[i]], index, depth, &v);
    meet(state, value, src, v);
  }
}

static int slot_const(bwsc__nonblock *nb, const char *key, int depth,
                      long long *out) {
  size_t memo;
  if (bwsc__strmap_get(&nb->consts, key, &memo)) {
    if (memo >= CONST_FIRST)
      *out = nb->vals[memo - CONST_FIRST];
    return memo >= CONST_FIRST ? CONST_FIRST : (int)memo;
  }
  int param = strchr(key, '#') != NULL;
  if (depth > CONST_DEPTH || bwsc__strmap_get(&nb->results, key, NULL) ||
      (!param && !bwsc__strmap_get(&nb->local, key, NULL)))
    return CONST_VARIES; /* not memoised: a deeper query may go further */
  bwsc__strmap_put(&nb->consts, key, CONST_BUSY);
  int state = CONST_NONE;
  long long value = 0;
  if (param)
    param_sources(nb, key, depth, &state, &value);
  const size_t *flows = NULL;
  size_t nflows = index_get(&nb->flows_to, key, &flows);
  for (size_t i = 0; i < nflows && state != CONST_VARIES; i++) {
    const bwsc__desc_flow *flow = nb->prog->desc_flows[flows[i]];
    long long v = flow->ival;
    int src = flow->is_const ? CONST_FIRST
              : flow->from   ? slot_const(nb, flow->from, depth + 1, &v)
                             : CONST_VARIES;
    meet(&state, &value, src, v);
  }
  if (state == CONST_FIRST) {
    *BWSC__PUSH(nb->vals, nb->nvals, nb->capvals) = value;
    bwsc__strmap_put(&nb->consts, key, CONST_FIRST + nb->nvals - 1);
    *out = value;
    return CONST_FIRST;
  }
  /* Nothing known (a local never set) counts as anything. */
  bwsc__strmap_put(&nb->consts, key, CONST_VARIES);
  return CONST_VARIES;
}

static size_t flows_into(bwsc__nonblock *nb, const char *key,
                         const size_t **out) {
  if (!nb->indexed)
    build_indexes(nb);
  return index_get(&nb->flows_to, key, out);
}

static int is_local(bwsc__nonblock *nb, const char *key) {
  if (!nb->indexed)
    build_indexes(nb);
  return bwsc__strmap_get(&nb->local, key, NULL);
}

static int address_taken(bwsc__nonblock *nb, const char *usr) {
  if (!nb->indexed)
    build_indexes(nb);
  return bwsc__strmap_get(&nb->address_taken, usr, NULL);
}

int bwsc__nonblock_const(bwsc__nonblock *nb, const char *key, long long *out) {
  if (!key)
    return 0;
  if (!nb->indexed)
    build_indexes(nb);
  return slot_const(nb, key, 0, out) == CONST_FIRST;
}

size_t bwsc__nonblock_flows_into(bwsc__nonblock *nb, const char *key,
                                 const size_t **out) {
  return key ? flows_into(nb, key, out) : 0;
}

int bwsc__nonblock_unwritten(bwsc__nonblock *nb, const char *key) {
  const size_t *flows = NULL;
  return key && !flows_into(nb, key, &flows) &&
         !bwsc__strmap_get(&nb->results, key, NULL);
}

const char *bwsc__nonblock_arg(const bwsc__call_fact *call, size_t arg) {
  /* `fd & mask` is no descriptor */
  return call->descs && arg < call->nargs && !call->descs[arg].mask
             ? call->descs[arg].key
             : NULL;
}

int bwsc__nonblock_has(const bwsc__nonblock *nb, const char *key) {
  return key && bwsc__strmap_get(&nb->keys, key, NULL);
}

/* The param of the source=result rule that made every source slot `key`
 * holds (2 + it), or 1: not only such sources, or none at all. */
static size_t source_of(bwsc__nonblock *nb, const char *key) {
  size_t memo;
  if (bwsc__strmap_get(&nb->sources, key, &memo))
    return memo;
  size_t found = 0;
  const size_t *items = NULL;
  size_t n = flows_into(nb, key, &items);
  for (size_t i = 0; i < n && found != 1; i++)
    if (!nb->prog->desc_flows[items[i]]->is_const)
      found = 1; /* a copy or a computed value: not followed */
  n = index_get(&nb->made_by, key, &items);
  for (size_t i = 0; i < n && found != 1; i++) {
    const bwsc__call_fact *call = nb->prog->calls[items[i]];
    const bw_ready_rule *rule =
        call->callee.kind == BWSC__VAL_FUNC
            ? bw_rules_find_ready(nb->rules, call->callee.name)
            : NULL;
    size_t param =
        rule && rule->source == BW_READY_SOURCE_RESULT && rule->param >= 0
            ? 2 + (size_t)rule->param
            : 1;
    found = found && found != param ? 1 : param;
  }
  if (!found || strchr(key, '#'))
    found = 1; /* a parameter: what its callers pass is not followed */
  bwsc__strmap_put(&nb->sources, key, found);
  return found;
}

int bwsc__nonblock_source(bwsc__nonblock *nb, const char *key) {
  if (!key)
    return -1;
  if (!nb->indexed)
    build_indexes(nb);
  size_t made = source_of(nb, key);
  return made >= 2 ? (int)(made - 2) : -1;
}

size_t bwsc__nonblock_made_by(bwsc__nonblock *nb, const char *key,
                              const size_t **out) {
  if (!key)
    return 0;
  if (!nb->indexed)
    build_indexes(nb);
  return index_get(&nb->made_by, key, out);
}

int bwsc__nonblock_param_of(const char *key, const char *usr, int *param) {
  return key && usr && param_of(key, usr, param);
}

int bwsc__nonblock_ready_fd(int ready, const char *callback, const char *key) {
  int param;
  return ready >= 0 && param_of(key, callback, &param) && param == ready;
}

size_t bwsc__nonblock_code_uses(bwsc__nonblock *nb, const char *usr) {
  size_t uses = 0;
  if (!nb->indexed)
    build_indexes(nb);
  bwsc__strmap_get(&nb->address_taken, usr, &uses);
  return uses;
}

/* Whether every direct call of the function parameter `key` belongs to
 * passes a constant or a non-blocking descriptor there. */
static int direct_calls_nonblocking(bwsc__nonblock *nb, const char *key) {
  const char *hash = strrchr(key, '#');
  char usr[512];
  size_t len = hash ? (size_t)(hash - key) : 0;
  if (!hash || len >= sizeof(usr))
    return 0;
  memcpy(usr, key, len);
  usr[len] = '\0';
  size_t index = strtoul(hash + 1, NULL, 10);
  const size_t *calls = NULL;
  size_t ncalls = index_get(&nb->calls_to, usr, &calls);
  for (size_t i = 0; i < ncalls; i++) {
    const bwsc__call_fact *call = nb->prog->calls[calls[i]];
    if (index >= call->nargs)
      return 0;
    if (call->args[index].kind == BWSC__VAL_INT)
      continue;
    if (!bwsc__nonblock_has(nb, bwsc__nonblock_arg(call, index)))
      return 0;
  }
  return 1;
}

void bwsc__nonblock_add_ready_param(bwsc__nonblock *nb, const char *usr,
                                    int param) {
  if (!nb->indexed)
    build_indexes(nb);
  char *key = bwsc__xasprintf("%s#%d", usr, param);
  if (!direct_calls_nonblocking(nb, key)) {
    free(key);
    return;
  }
  bwsc__strmap_put(&nb->ready_params, own(nb, key), 1);
}

int bwsc__nonblock_ready_param(const bwsc__nonblock *nb, const char *key) {
  return key && bwsc__strmap_get(&nb->ready_params, key, NULL);
}
