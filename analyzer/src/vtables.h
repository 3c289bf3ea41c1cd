/* vtables.h - default methods of GObject interfaces and classes that every
 * implementation in the program overrides.
 *
 * A call through `iface->method` reaches every function stored into that
 * field, the interface's default (set in its `*_default_init`, or in the
 * declaring class's own `*_class_init`) too. When every function of the
 * program that stores methods into that struct stores this one, each
 * implementation replaces the default, and a chain through the default
 * is low confidence. Not dropped: an implementation that sets no method
 * at all (it inherits its parent's vtable, or keeps the defaults) stores
 * nothing, so it cannot be told apart here.
 */
#ifndef BLOCKSCAN_VTABLES_H
#define BLOCKSCAN_VTABLES_H

#include "facts.h"
#include "util.h"

#include <stddef.h>

/* The overridden defaults of one field. */
typedef struct bwsc__vt_field {
  const char **fns; /* their USRs, borrowed from the flow facts */
  size_t nfns, capfns;
} bwsc__vt_field;

/* The stores into one struct's fields (bwsc__vtables_self). */
typedef struct bwsc__vt_record {
  char *usr; /* owned */
  const bwsc__flow_fact **flows;
  size_t nflows, capflows;
} bwsc__vt_record;

typedef struct bwsc__vtables {
  bwsc__strmap by_slot; /* field USR (borrowed) -> index into fields */
  bwsc__vt_field *fields;
  size_t nfields, capfields;
  bwsc__strmap by_record; /* struct USR (the record's) -> index */
  bwsc__vt_record *records;
  size_t nrecords, caprecords;
} bwsc__vtables;

/* Finds the overridden defaults among flows[0..n) (every store of a
 * function into a field, across the program's TUs). */
void bwsc__vtables_build(bwsc__vtables *v, const bwsc__flow_fact *const *flows,
                         size_t n);

/* The index of field `slot`'s overridden defaults, or -1 when it has none:
 * a lookup by the field's USR, which a caller asks once per call site. */
long bwsc__vtables_field(const bwsc__vtables *v, const char *slot);

/* Is function `fn` (a USR) one of field `field`'s overridden defaults? */
int bwsc__vtables_overridden(const bwsc__vtables *v, long field,
                             const char *fn);

/* What a call on a method's own object through field `to` reaches.
 * `method` (a USR) is stored into field K of the struct `to` belongs to;
 * the types that can run it are the functions storing into that struct
 * (each an init function: a class_init, an iface_init) that store it
 * into K, and those that store into the struct but never into K (they
 * inherit K, from a parent that may keep `method`); one storing another
 * function into K does not run it. Sets *out to the functions those
 * types store into `to` (USRs, borrowed; the array is the caller's to
 * free) and returns their count; 0 and *out NULL when any is unknown:
 * `method` is stored into no field of the struct, into two, or at file
 * scope; the struct is filled at file scope too; a type stores something
 * other than a function into `to`, or nothing while it is not the
 * struct's own type's default init (there an unset field is NULL, so it
 * adds no target; anywhere else it is inherited from a parent this cannot
 * name); or no function is found at all. */
size_t bwsc__vtables_self(const bwsc__vtables *v, const char *method,
                          const char *to, const char ***out);

void bwsc__vtables_free(bwsc__vtables *v);

#endif /* BLOCKSCAN_VTABLES_H */
