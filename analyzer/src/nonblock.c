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
    if (!prog->desc_flows[i]->from)
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
    if (!flow->from || !bwsc__strmap_get(&nb->keys, flow->from, NULL))
      bwsc__strmap_put(&mixed, flow->to, 1);
  }
  int grew = 0;
  for (size_t i = 0; i < prog->ndesc_flows; i++) {
    const char *to = prog->desc_flows[i]->to;
    if (!bwsc__strmap_get(&mixed, to, NULL) &&
        !bwsc__strmap_get(tainted, to, NULL))
      grew |= add(nb, to);
  }
  bwsc__strmap_free(&mixed);
  return grew;
}

void bwsc__nonblock_build(bwsc__nonblock *nb, const bwsc__program *prog) {
  memset(nb, 0, sizeof(*nb));
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

void bwsc__nonblock_free(bwsc__nonblock *nb) {
  bwsc__strmap_free(&nb->keys);
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
