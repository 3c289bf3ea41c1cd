/* program.h - the merged facts of every TU: one call graph keyed by USR,
 * and what each function-pointer slot may hold.
 *
 * Invariants: every string is interned (the facts are interned as they are
 * merged; parameter slot keys, made here, too); nodes point to the
 * program's own copies of function facts, while calls, flows and
 * descriptor flows are borrowed from the TU facts, which must outlive the
 * program; a body seen in several TUs at the same
 * place (a static inline in a header) contributes its calls once; bodies at
 * different places under one USR (main() of two programs in one database)
 * are nodes of their own, "variants" of the first, reached only through
 * bwsc__program_targets_in; failed TUs contribute nothing.
 *
 * Programs: a compilation database does not say which TUs are linked
 * together, but two TUs that both define one external function cannot be
 * (the link would fail). So a call of TU t to a function defined in several
 * TUs goes to t's own definition, else to those in TUs that define no
 * external function t defines too, else (nothing tells them apart) to all.
 */
#ifndef BLOCKSCAN_PROGRAM_H
#define BLOCKSCAN_PROGRAM_H

#include "facts.h"
#include "util.h"

typedef struct bwsc__node {
  const char *usr;
  const char *name;
  const bwsc__func_fact *def;  /* the definition, NULL when none was parsed */
  const bwsc__func_fact *decl; /* some declaration (or def), may be NULL */
  size_t *body_tus;            /* TUs whose body of this function is merged */
  size_t nbody_tus, capbody_tus;
  int annotated;
  int noreturn;  /* some declaration says it never returns */
  size_t *calls; /* indices into bwsc__program.calls made by this function */
  size_t ncalls, capcalls;
  size_t *variants; /* nodes of the other definitions of this USR */
  size_t nvariants, capvariants;
} bwsc__node;

typedef struct bwsc__slot {
  const char *key;
  const bwsc__value **values; /* what flows into the slot */
  size_t nvalues, capvalues;
} bwsc__slot;

typedef struct bwsc__program {
  bwsc__node *nodes;
  size_t nnodes, capnodes;
  bwsc__strmap node_by_usr;
  const bwsc__call_fact **calls;
  size_t ncalls, capcalls;
  size_t *call_tu; /* per call: the TU it was written in */
  size_t capcall_tu;
  /* Per TU: the functions with variants it defines a body of (sorted). */
  size_t **tu_multi, *tu_nmulti, ntus;
  /* Memo of bwsc__program_targets_in for functions with variants. */
  bwsc__strmap resolved_by_key;
  char **resolved_keys;
  size_t **resolved, *nresolved;
  size_t nresolved_lists, capresolved_keys, capresolved, capnresolved;
  bwsc__slot *slots;
  size_t nslots, capslots;
  const bwsc__desc_flow **desc_flows; /* of every TU, borrowed */
  /* Every store of a function into a field, of every TU (borrowed): what
   * vtables.c reads. */
  const bwsc__flow_fact **field_flows;
  size_t nfield_flows, capfield_flows;
  /* Copies of the function facts nodes point to, in blocks that never
   * move; and how many TUs' functions are merged so far. */
  bwsc__func_fact **kept;
  size_t nkept, nkept_blocks, capkept;
  size_t nadded;
  size_t ndesc_flows, capdesc_flows;
  bwsc__strmap slot_by_key;
  /* Memo of bwsc__program_targets (filled lazily; the graph is fixed once
   * built) and the scratch marks of its walks: a slot or node is marked
   * when its stamp equals the current walk's. */
  size_t *identity;      /* identity[i] == i: a FUNC's one target */
  size_t **slot_targets; /* per slot, once slot_done */
  size_t *slot_ntargets;
  unsigned char *slot_done;
  unsigned *slot_stamp, *node_stamp;
  unsigned stamp;
} bwsc__program;

/* Merges the facts of tus[0..ntus) into *prog (zeroed first), leaving
 * the facts as they are. */
void bwsc__program_build(bwsc__program *prog, const bwsc__tu_facts *tus,
                         size_t ntus);

/* The same in steps, so that a run of hundreds of TUs merges each TU's
 * functions as soon as its facts (and those of every TU before it) are
 * there: bwsc__program_init; bwsc__program_add_functions for TU 0, 1, ...
 * in input order, as many as are ready; bwsc__program_finish with every
 * TU, which adds the rest. Adding a TU interns its facts and frees what
 * the program does not need of them (its function facts, and the calls of
 * a body another TU already gave). */
void bwsc__program_init(bwsc__program *prog);
void bwsc__program_add_functions(bwsc__program *prog, bwsc__tu_facts *facts);
void bwsc__program_finish(bwsc__program *prog, bwsc__tu_facts *tus,
                          size_t ntus);
void bwsc__program_free(bwsc__program *prog);

/* The node of a USR, or NULL. */
bwsc__node *bwsc__program_node(const bwsc__program *prog, const char *usr);

/* Sets *out to the node indices of every function that `value` may
 * denote: a FUNC itself, or whatever flows into a SLOT, transitively (no
 * duplicates, in node order). Returns the count. The array belongs to the
 * program (a memo) and stays valid until bwsc__program_free. */
size_t bwsc__program_targets(bwsc__program *prog, const bwsc__value *value,
                             const size_t **out);

/* bwsc__program_targets for a value used in TU `tu`: a function with
 * variants resolves as the header says. */
size_t bwsc__program_targets_in(bwsc__program *prog, const bwsc__value *value,
                                size_t tu, const size_t **out);

/* 1 when `value` is, or may hold, parameter `*param` of function `usr`
 * (a wrapper forwarding its argument); sets *param. */
int bwsc__program_param_of(bwsc__program *prog, const bwsc__value *value,
                           const char *usr, int *param);

#endif /* BLOCKSCAN_PROGRAM_H */
