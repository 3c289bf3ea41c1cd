/* nonblock.h - descriptors the program made non-blocking, and readiness
 * callbacks: I/O on them does not wait.
 *
 * Invariants: a descriptor is named by its integer slot key (a variable's
 * or field's USR, a parameter's "<function USR>#<index>", see facts.h);
 * the set only ever grows from a setter call, a program function that
 * calls a setter on its own parameter (a wrapper), or a slot every store
 * into which is of a slot in the set; every key is borrowed from the TU
 * facts.
 */
#ifndef BLOCKSCAN_NONBLOCK_H
#define BLOCKSCAN_NONBLOCK_H

#include "program.h"

typedef struct bwsc__nonblock {
  bwsc__strmap keys; /* key -> 1 */
} bwsc__nonblock;

/* Finds every descriptor key of `prog` made non-blocking. */
void bwsc__nonblock_build(bwsc__nonblock *nb, const bwsc__program *prog);
void bwsc__nonblock_free(bwsc__nonblock *nb);

/* The descriptor key of a call's argument `arg`, or NULL. */
const char *bwsc__nonblock_arg(const bwsc__call_fact *call, size_t arg);

/* 1 when descriptor `key` (may be NULL) is non-blocking. */
int bwsc__nonblock_has(const bwsc__nonblock *nb, const char *key);

/* 1 when `entry` registers a readiness callback whose parameter 0 is the
 * descriptor it watches (event_new, g_unix_fd_add): in that callback, one
 * read or write on that parameter does not wait. */
int bwsc__nonblock_readiness_entry(const char *entry);

#endif /* BLOCKSCAN_NONBLOCK_H */
