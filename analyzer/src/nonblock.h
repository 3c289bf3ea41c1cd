/* nonblock.h - descriptors the program made non-blocking, and readiness
 * callbacks: I/O on them does not wait.
 *
 * Invariants: a descriptor is named by its integer slot key (a variable's
 * or field's USR, a parameter's "<function USR>#<index>", see facts.h);
 * the set only ever grows from a setter call (a nonblocking: rule, or a
 * program function that calls one on its own parameters), a program
 * function that makes its own parameter non-blocking, a slot every store
 * into which is of a slot in the set (a parameter: every direct call's
 * argument, and what each registration passes when every code use of its
 * function is one, bwsc__nonblock_enter; a field through a pointer,
 * "<pointer>-><field>": the stores through that pointer and the pointers
 * it copies), or a function's result when one of its returns is; keys are
 * borrowed from the TU facts or owned by the bwsc__nonblock. The constants of
 * integer slots are flow-insensitive too: one value over the whole program, or
 * none. Apart from the set, a readiness callback's parameter is ready
 * wherever the function runs when every use of its address is a readiness
 * hand-off for it and every direct call passes a non-blocking one
 * (bwsc__nonblock_add_ready_param).
 */
#ifndef BLOCKSCAN_NONBLOCK_H
#define BLOCKSCAN_NONBLOCK_H

#include "program.h"

#include <blockwatch/rules.h>

/* Calls or desc flows grouped by a string (a callee's USR, a slot key). */
typedef struct bwsc__index_list {
  size_t *items;
  size_t count, cap;
} bwsc__index_list;

typedef struct bwsc__index_lists {
  bwsc__strmap by_key; /* key -> 1 + index in lists */
  bwsc__index_list *lists;
  size_t nlists, caplists;
} bwsc__index_lists;

typedef struct bwsc__nonblock {
  bwsc__strmap keys;    /* key -> 1 */
  bwsc__strmap blocked; /* made blocking again somewhere: never in keys */
  bwsc__strmap direct;  /* keys in `keys` a setter (or wrapper) made so */
  const bw_rules *rules;
  /* Rules derived for the program's wrappers of setters (keyed by USR),
   * whose conditions are on the wrapper's parameters; a condition of kind
   * BW_COND_COUNT held inside the wrapper and always holds. */
  bw_nonblock_rule *derived;
  size_t nderived, capderived;
  bwsc__strmap derived_by_usr; /* USR -> 1 + index in derived */
  int grew;
  /* Every store into an integer slot (find_stores), from NULL: from
   * something that is no slot. */
  bwsc__desc_flow *stores;
  size_t nstores, capstores;
  int stores_done;
  char **owned; /* keys made for stores ("<USR>#ret", "<USR>#<index>") */
  size_t nowned, capowned;
  /* Integer slots' constants, computed on demand (bwsc__nonblock_const):
   * key -> CONST_BUSY, CONST_VARIES, or CONST_FIRST + index in vals. */
  const bwsc__program *prog;
  bwsc__strmap consts;
  long long *vals;
  size_t nvals, capvals;
  bwsc__index_lists calls_to; /* callee USR -> calls of it */
  bwsc__index_lists flows_to; /* slot key -> desc flows into it */
  bwsc__strmap local;         /* keys of locals: every store is known */
  bwsc__strmap address_taken; /* USRs of functions stored in a slot that
                                 may call them (not a dead end) */
  bwsc__strmap results;       /* keys a call's result is stored into */
  bwsc__index_lists made_by;  /* key -> the calls whose result it stores */
  bwsc__strmap sources;       /* key -> 2 + maker's param, 1: no source */
  bwsc__strmap ready_params;  /* bwsc__nonblock_add_ready_param's keys */
  /* bwsc__nonblock_enter's: parameter key -> 1 + its first entry; each
   * entry names what one registration passes there and the next one for
   * the same parameter (0: none). */
  bwsc__strmap entered;
  struct bwsc__nonblock_entry {
    const char *from;
    const char *also; /* with a pointer key `from`: the argument's own key */
    size_t next;
  } * entries;
  size_t nentries, capentries;
  int indexed;
} bwsc__nonblock;

/* Finds every descriptor key of `prog` made non-blocking by the setters
 * `rules` name (nonblocking: rules) and the program's wrappers of them:
 * bwsc__nonblock_init, then bwsc__nonblock_grow. */
void bwsc__nonblock_build(bwsc__nonblock *nb, const bwsc__program *prog,
                          const bw_rules *rules);

/* The set's first part: the program and rules it reads, no key yet;
 * bwsc__nonblock_source and the other queries of the program's indexes
 * answer from here on, bwsc__nonblock_has only after the grow. */
void bwsc__nonblock_init(bwsc__nonblock *nb, const bwsc__program *prog,
                         const bw_rules *rules);

/* Between init and grow: parameter `param` of function `usr`, whose every
 * code use (bwsc__nonblock_code_uses) is a registration that the caller
 * enters here once each, receives `from` from one of them (a descriptor
 * or object key: a readiness source's watched socket; or a pointer key
 * "*<USR>", a registration's user data, whose fields the parameter's
 * fields then hold: see bwsc__arg_desc.via); NULL: something unknown. The
 * parameter then holds what those registrations and the function's direct
 * calls pass, rather than anything (an address taken). With a pointer key,
 * `also` is the argument's own key (the object itself: a stream handed
 * on as user data), or NULL: the parameter then holds anything, its
 * fields what `from`'s do. */
void bwsc__nonblock_enter(bwsc__nonblock *nb, const char *usr, int param,
                          const char *from, const char *also);

/* Grows the set to its fixpoint (see nonblock.c). */
void bwsc__nonblock_grow(bwsc__nonblock *nb);
void bwsc__nonblock_free(bwsc__nonblock *nb);

/* Keeps only what bwsc__nonblock_has reads (the keys and the strings they
 * borrow); any other query afterwards is not allowed. */
void bwsc__nonblock_shrink(bwsc__nonblock *nb);

/* The descriptor key of a call's argument `arg`, or NULL. */
const char *bwsc__nonblock_arg(const bwsc__call_fact *call, size_t arg);

/* 1 when descriptor `key` (may be NULL) is non-blocking. */
int bwsc__nonblock_has(const bwsc__nonblock *nb, const char *key);

/* 1 and *out when integer slot `key` (a local variable or a parameter)
 * holds one constant wherever it is read: every store into it, and for a
 * parameter every direct call's argument, is that constant or a slot that
 * holds it (`poll(fds, 1, timeout)` in a wrapper every caller of which
 * passes 0). A function whose address is taken is called with anything;
 * passing it to a parameter that the callee's body (the program has it)
 * never reads as code, only keeps as data (GLib's
 * g_task_set_source_tag(task, tag)), does not take it. */
int bwsc__nonblock_const(bwsc__nonblock *nb, const char *key, long long *out);

/* 1 when slot `key` (a parameter's) is never written in the program: no
 * assignment, `++`, `op=`, `&key` or stored call result, so it holds what
 * the call that entered the function passed. */
int bwsc__nonblock_unwritten(bwsc__nonblock *nb, const char *key);

/* The desc flows into slot `key` (indexes into the program's desc_flows). */
size_t bwsc__nonblock_flows_into(bwsc__nonblock *nb, const char *key,
                                 const size_t **out);

/* The parameter that the callback of the source in slot `key` (may be
 * NULL) receives the object it watches as, being ready, or -1: every
 * store into the slot (but a constant: NULL) is the result of a function
 * with a ready: rule "source=result", of one param
 * (`src = g_socket_create_source(sock, ...)`: 0, the GSocket). A
 * parameter's slot is not followed into its callers (-1). */
int bwsc__nonblock_source(bwsc__nonblock *nb, const char *key);

/* The calls whose results slot `key` stores (indexes into the program's
 * calls): with bwsc__nonblock_source(key) >= 0, the sources' makers. */
size_t bwsc__nonblock_made_by(bwsc__nonblock *nb, const char *key,
                              const size_t **out);

/* 1 and *param when slot `key` is parameter *param of function `usr`. */
int bwsc__nonblock_param_of(const char *key, const char *usr, int *param);

/* 1 when descriptor `key` (may be NULL) is parameter `param` (>= 0) of
 * `callback` (a USR): the one its registration says it is called for,
 * being ready (a ready: rule's param, or its source's maker's). In that
 * callback, one read or write on it does not wait. */
int bwsc__nonblock_ready_fd(int param, const char *callback, const char *key);

/* How many times the program takes the address of function `usr` in a
 * way that may call it: each function-pointer value naming it, in a slot
 * but a dead end (the parameter of a function whose body the program has
 * and never reads as code: GLib's g_task_set_source_tag(task, tag)). A
 * function with none is only called directly, with what its callers
 * pass. */
size_t bwsc__nonblock_code_uses(bwsc__nonblock *nb, const char *usr);

/* Function `usr` is registered only as a readiness callback whose
 * parameter `param` is the object it is called for (every code use of it,
 * bwsc__nonblock_code_uses, is such a hand-off of a rules entry or setter:
 * the caller checks). When
 * every direct call of it passes a constant or a non-blocking descriptor
 * there too (GLib's gdbusprivate.c calls its readiness callback itself
 * with the worker's non-blocking socket after g_socket_condition_check),
 * that parameter is ready wherever the function runs: one call on it in
 * the function itself does not wait, whatever root reached it. */
void bwsc__nonblock_add_ready_param(bwsc__nonblock *nb, const char *usr,
                                    int param);

/* 1 when `key` (may be NULL) is a parameter bwsc__nonblock_add_ready_param
 * accepted. */
int bwsc__nonblock_ready_param(const bwsc__nonblock *nb, const char *key);

#endif /* BLOCKSCAN_NONBLOCK_H */
