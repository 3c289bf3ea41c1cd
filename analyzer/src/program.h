/* program.h - the merged facts of every TU: one call graph keyed by USR,
 * and what each function-pointer slot may hold.
 *
 * Invariants: the program borrows every string from the TU facts it was
 * built from, which must outlive it; a body seen in several TUs at the same
 * place (a static inline in a header) contributes its calls once; bodies at
 * different places under one USR (main() of two programs in one database)
 * all contribute; failed TUs contribute nothing.
 */
#ifndef BLOCKSCAN_PROGRAM_H
#define BLOCKSCAN_PROGRAM_H

#include "facts.h"
#include "util.h"

typedef struct bw__node {
  const char *usr;
  const char *name;
  const bw__func_fact *def;  /* the definition, NULL when none was parsed */
  const bw__func_fact *decl; /* some declaration (or def), may be NULL */
  size_t *body_tus;          /* TUs whose body of this function is merged */
  size_t nbody_tus, capbody_tus;
  int annotated;
  size_t *calls; /* indices into bw__program.calls made by this function */
  size_t ncalls, capcalls;
} bw__node;

typedef struct bw__slot {
  const char *key;
  const bw__value **values; /* what flows into the slot */
  size_t nvalues, capvalues;
} bw__slot;

typedef struct bw__program {
  bw__node *nodes;
  size_t nnodes, capnodes;
  bw__strmap node_by_usr;
  const bw__call_fact **calls;
  size_t ncalls, capcalls;
  bw__slot *slots;
  size_t nslots, capslots;
  bw__strmap slot_by_key;
  char **owned; /* parameter slot keys made while merging */
  size_t nowned, capowned;
  /* Memo of bw__program_targets (filled lazily; the graph is fixed once
   * built) and the scratch marks of its walks: a slot or node is marked
   * when its stamp equals the current walk's. */
  size_t *identity;      /* identity[i] == i: a FUNC's one target */
  size_t **slot_targets; /* per slot, once slot_done */
  size_t *slot_ntargets;
  unsigned char *slot_done;
  unsigned *slot_stamp, *node_stamp;
  unsigned stamp;
} bw__program;

/* Merges the facts of tus[0..ntus) into *prog (zeroed first). */
void bw__program_build(bw__program *prog, const bw__tu_facts *tus, size_t ntus);
void bw__program_free(bw__program *prog);

/* The node of a USR, or NULL. */
bw__node *bw__program_node(const bw__program *prog, const char *usr);

/* Sets *out to the node indices of every function that `value` may
 * denote: a FUNC itself, or whatever flows into a SLOT, transitively (no
 * duplicates, in node order). Returns the count. The array belongs to the
 * program (a memo) and stays valid until bw__program_free. */
size_t bw__program_targets(bw__program *prog, const bw__value *value,
                           const size_t **out);

/* 1 when `value` is, or may hold, parameter `*param` of function `usr`
 * (a wrapper forwarding its argument); sets *param. */
int bw__program_param_of(bw__program *prog, const bw__value *value,
                         const char *usr, int *param);

#endif /* BLOCKSCAN_PROGRAM_H */
