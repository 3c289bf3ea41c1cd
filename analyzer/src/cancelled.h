/* cancelled.h - `argN is cancelled`: a GCancellable argument, read from a
 * callback's user data, that its every registration cancelled first.
 *
 * Invariant: conservative. The condition holds only for an argument
 * `p->f` (p the callback's last parameter, or a local pointer every store
 * into which copies it) when every code use of the callback is a
 * registration by a rules entry or setter that passes `&v` of a local
 * struct whose field f, at the registration, holds a cancellable
 * cancelled before it (bwsc__call_fact.cancelled), nothing calls the
 * callback directly, nothing stores into field f through a pointer, no
 * function of the program takes g_cancellable_reset's address, and no
 * call of it is given a slot the object may reach (the field, what was
 * stored into it, and forward over copies and direct calls' parameters),
 * a slot of no key, or reaches a call through a pointer given one.
 */
#ifndef BLOCKSCAN_CANCELLED_H
#define BLOCKSCAN_CANCELLED_H

#include "nonblock.h"

#include <blockwatch/rules.h>

typedef struct bwsc__cancelled {
  int asked; /* reset found yet */
  int reset; /* g_cancellable_reset's address is taken: nothing holds */
} bwsc__cancelled;

/* 1 when argument `a` of `call` is a cancellable every registration of
 * the callback it is read in cancelled before registering it. */
int bwsc__cancelled_arg(bwsc__cancelled *state, bwsc__nonblock *nb,
                        const bwsc__program *prog, const bw_rules *rules,
                        const bwsc__call_fact *call, size_t a);

#endif /* BLOCKSCAN_CANCELLED_H */
