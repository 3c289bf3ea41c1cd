/* nonblock.c - which descriptors the program made non-blocking.
 *
 * Invariants (see nonblock.h for the keys): flow-insensitive - a
 * descriptor made non-blocking anywhere counts everywhere, which is how
 * programs use O_NONBLOCK (set once, right after the descriptor is made);
 * a slot that is only copied into (`ctx->sock = sock`) counts only when
 * every store into it, in the whole program, is of a non-blocking slot;
 * the elements of an array are one slot (`pipefd[0]`, `pipefd[1]`);
 * a setter call counts only when its flag argument provably carries the
 * non-blocking bit (a constant, or an OR with it), so `fcntl(fd, F_SETFL,
 * mode)` with a computed `mode` makes nothing non-blocking.
 *
 * The setters are C API facts the rule packs do not describe yet (they
 * say what blocks, not what makes a descriptor stop blocking); they live in
 * this one table until a rule form takes them over.
 */
#include "nonblock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Linux: O_NONBLOCK, and SOCK_, EFD_, TFD_, SFD_, IN_NONBLOCK equal it. */
#define NONBLOCK_BIT 04000
#define F_SETFL_CMD 4
#define ANY_NONZERO (-1)

typedef struct setter {
  const char *name;
  int fd_arg;     /* the descriptor argument; -1: the call's result */
  int flag_arg;   /* the argument that must carry `flag`; -1: none */
  long long flag; /* bits it must set; ANY_NONZERO: any nonzero constant */
  int cmd_arg;    /* fcntl: the argument that must equal `cmd`; -1: none */
  long long cmd;
} setter;

static const setter setters[] = {
    {"fcntl", 0, 2, NONBLOCK_BIT, 1, F_SETFL_CMD},
    {"socket", -1, 1, NONBLOCK_BIT, -1, 0},
    {"accept4", -1, 3, NONBLOCK_BIT, -1, 0},
    {"pipe2", 0, 1, NONBLOCK_BIT, -1, 0},
    {"eventfd", -1, 1, NONBLOCK_BIT, -1, 0},
    {"timerfd_create", -1, 1, NONBLOCK_BIT, -1, 0},
    {"signalfd", -1, 2, NONBLOCK_BIT, -1, 0},
    {"inotify_init1", -1, 0, NONBLOCK_BIT, -1, 0},
    {"evutil_make_socket_nonblocking", 0, -1, 0, -1, 0},
    {"g_unix_set_fd_nonblocking", 0, 1, ANY_NONZERO, -1, 0},
    {"uv_poll_init", 2, -1, 0, -1, 0},
    {"uv_poll_init_socket", 2, -1, 0, -1, 0},
    {NULL, 0, 0, 0, 0, 0},
};

static const char *const readiness_entries[] = {
    "event_new",     "event_assign",       "event_set",
    "g_unix_fd_add", "g_unix_fd_add_full", NULL,
};

static const setter *find_setter(const char *name) {
  for (const setter *s = setters; name && s->name; s++)
    if (strcmp(s->name, name) == 0)
      return s;
  return NULL;
}

static int arg_carries(const bwsc__call_fact *call, int arg, long long flag) {
  if (arg < 0)
    return 1;
  if ((size_t)arg >= call->nargs)
    return 0;
  const bwsc__value *value = &call->args[arg];
  if (flag == ANY_NONZERO)
    return value->kind == BWSC__VAL_INT && value->ival != 0;
  long long bits = value->kind == BWSC__VAL_INT ? value->ival
                   : call->descs                ? call->descs[arg].bits
                                                : 0;
  return (bits & flag) == flag;
}

/* The key a setter call makes non-blocking, or NULL. */
static const char *set_by(const bwsc__call_fact *call) {
  if (call->callee.kind != BWSC__VAL_FUNC)
    return NULL;
  const setter *s = find_setter(call->callee.name);
  if (!s || !arg_carries(call, s->flag_arg, s->flag))
    return NULL;
  if (s->cmd_arg >= 0 && ((size_t)s->cmd_arg >= call->nargs ||
                          call->args[s->cmd_arg].kind != BWSC__VAL_INT ||
                          call->args[s->cmd_arg].ival != s->cmd))
    return NULL;
  if (s->fd_arg < 0)
    return call->result;
  return bwsc__nonblock_arg(call, (size_t)s->fd_arg);
}

static int add(bwsc__nonblock *nb, const char *key) {
  if (!key || bwsc__strmap_get(&nb->keys, key, NULL))
    return 0;
  bwsc__strmap_put(&nb->keys, key, 1);
  return 1;
}

/* A call of a program function whose parameter is in the set (it makes
 * that parameter non-blocking: tmux's setblocking-style wrappers) makes
 * the argument non-blocking too. */
static int add_through_wrappers(bwsc__nonblock *nb, const bwsc__program *prog) {
  int grew = 0;
  char key[512];
  for (size_t i = 0; i < prog->ncalls; i++) {
    const bwsc__call_fact *call = prog->calls[i];
    if (call->callee.kind != BWSC__VAL_FUNC)
      continue;
    for (size_t a = 0; a < call->nargs; a++) {
      const char *desc = bwsc__nonblock_arg(call, a);
      if (!desc || bwsc__strmap_get(&nb->keys, desc, NULL))
        continue;
      int len = snprintf(key, sizeof(key), "%s#%zu", call->callee.ref, a);
      if (len > 0 && (size_t)len < sizeof(key) &&
          bwsc__strmap_get(&nb->keys, key, NULL))
        grew |= add(nb, desc);
    }
  }
  return grew;
}

/* Slots that take a value the set cannot vouch for: the result of a call
 * that is not a setter (`fd = open(...)`), or an expression of unknown
 * origin. They only count when made non-blocking themselves. */
static void find_tainted(bwsc__strmap *tainted, const bwsc__program *prog) {
  for (size_t i = 0; i < prog->ncalls; i++) {
    const bwsc__call_fact *call = prog->calls[i];
    if (call->result && set_by(call) != call->result)
      bwsc__strmap_put(tainted, call->result, 1);
  }
  for (size_t i = 0; i < prog->ndesc_flows; i++)
    if (!prog->desc_flows[i]->from && !prog->desc_flows[i]->is_const)
      bwsc__strmap_put(tainted, prog->desc_flows[i]->to, 1);
}

/* A slot every store of which is non-blocking (`ctx->sock = sock` where
 * `sock` is, and no other store of ctx->sock is not) joins the set. */
static int add_through_stores(bwsc__nonblock *nb, const bwsc__program *prog,
                              const bwsc__strmap *tainted) {
  bwsc__strmap mixed; /* slots with a store from outside the set */
  memset(&mixed, 0, sizeof(mixed));
  for (size_t i = 0; i < prog->ndesc_flows; i++) {
    const bwsc__desc_flow *flow = prog->desc_flows[i];
    if (flow->is_const)
      continue; /* `fd = -1`: no descriptor at all */
    if (!flow->from || !bwsc__strmap_get(&nb->keys, flow->from, NULL))
      bwsc__strmap_put(&mixed, flow->to, 1);
  }
  int grew = 0;
  for (size_t i = 0; i < prog->ndesc_flows; i++) {
    const char *to = prog->desc_flows[i]->to;
    if (prog->desc_flows[i]->is_const)
      continue;
    if (!bwsc__strmap_get(&mixed, to, NULL) &&
        !bwsc__strmap_get(tainted, to, NULL))
      grew |= add(nb, to);
  }
  bwsc__strmap_free(&mixed);
  return grew;
}

void bwsc__nonblock_build(bwsc__nonblock *nb, const bwsc__program *prog) {
  memset(nb, 0, sizeof(*nb));
  nb->prog = prog;
  for (size_t i = 0; i < prog->ncalls; i++)
    add(nb, set_by(prog->calls[i]));
  bwsc__strmap tainted;
  memset(&tainted, 0, sizeof(tainted));
  find_tainted(&tainted, prog);
  /* To a fixpoint: wrappers of wrappers, stores of stores. */
  for (int grew = 1; grew;) {
    grew = add_through_wrappers(nb, prog);
    grew |= add_through_stores(nb, prog, &tainted);
  }
  bwsc__strmap_free(&tainted);
}

static void index_free(bwsc__index_lists *index) {
  for (size_t i = 0; i < index->nlists; i++)
    free(index->lists[i].items);
  free(index->lists);
  bwsc__strmap_free(&index->by_key);
}

void bwsc__nonblock_free(bwsc__nonblock *nb) {
  bwsc__strmap_free(&nb->keys);
  bwsc__strmap_free(&nb->consts);
  free(nb->vals);
  index_free(&nb->calls_to);
  index_free(&nb->flows_to);
  bwsc__strmap_free(&nb->local);
  bwsc__strmap_free(&nb->address_taken);
  bwsc__strmap_free(&nb->results);
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

static void build_indexes(bwsc__nonblock *nb) {
  const bwsc__program *prog = nb->prog;
  nb->indexed = 1;
  for (size_t i = 0; i < prog->ncalls; i++) {
    const bwsc__call_fact *call = prog->calls[i];
    if (call->callee.kind == BWSC__VAL_FUNC && call->callee.ref)
      index_add(&nb->calls_to, call->callee.ref, i);
    if (call->result)
      bwsc__strmap_put(&nb->results, call->result, 1);
  }
  for (size_t i = 0; i < prog->ndesc_flows; i++) {
    const bwsc__desc_flow *flow = prog->desc_flows[i];
    index_add(&nb->flows_to, flow->to, i);
    if (flow->local)
      bwsc__strmap_put(&nb->local, flow->to, 1);
  }
  for (size_t s = 0; s < prog->nslots; s++)
    for (size_t v = 0; v < prog->slots[s].nvalues; v++)
      if (prog->slots[s].values[v]->kind == BWSC__VAL_FUNC)
        bwsc__strmap_put(&nb->address_taken, prog->slots[s].values[v]->ref, 1);
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

int bwsc__nonblock_const(bwsc__nonblock *nb, const char *key, long long *out) {
  if (!key)
    return 0;
  if (!nb->indexed)
    build_indexes(nb);
  return slot_const(nb, key, 0, out) == CONST_FIRST;
}

const char *bwsc__nonblock_arg(const bwsc__call_fact *call, size_t arg) {
  return call->descs && arg < call->nargs ? call->descs[arg].key : NULL;
}

int bwsc__nonblock_has(const bwsc__nonblock *nb, const char *key) {
  return key && bwsc__strmap_get(&nb->keys, key, NULL);
}

int bwsc__nonblock_readiness_entry(const char *entry) {
  for (size_t i = 0; entry && readiness_entries[i]; i++)
    if (strcmp(readiness_entries[i], entry) == 0)
      return 1;
  return 0;
}
