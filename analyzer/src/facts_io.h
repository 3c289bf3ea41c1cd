/* facts_io.h - one TU's facts on disk (.bwfacts files, cache entries).
 *
 * The format is documented in docs/blockscan.md ("The facts format"):
 * a fixed header (magic, version, payload length, checksum of the payload,
 * a key) and a payload of LEB128 numbers and indices into a string table.
 *
 * Invariants: a file is trusted only when its magic, version, length and
 * checksum all match and every index and count in it is in range; the
 * reader never allocates more than the file's size justifies, so a
 * corrupt or hostile file costs a message, never a crash. Writing is
 * atomic (a temporary file renamed over the target), so a reader running
 * beside a writer sees the old file or the new one.
 */
#ifndef BLOCKSCAN_FACTS_IO_H
#define BLOCKSCAN_FACTS_IO_H

#include "facts.h"

#include <stdint.h>

/* Bumped whenever the payload's layout or meaning changes. */
#define BWSC__FACTS_FORMAT 15

/* A file the TU read (the main file or a header) and the FNV-1a hash of
 * its content when it was parsed. */
typedef struct bwsc__dep {
  char *path;
  uint64_t hash;
} bwsc__dep;

typedef struct bwsc__deps {
  bwsc__dep *items;
  size_t count, cap;
} bwsc__deps;

void bwsc__deps_free(bwsc__deps *deps);

/* Serialises facts and deps into a malloc'd buffer (*len set). `key` is
 * stored in the header and checked by the reader (0 for facts files). */
unsigned char *bwsc__facts_encode(const bwsc__tu_facts *facts,
                                  const bwsc__deps *deps, uint64_t key,
                                  size_t *len);

/* Decodes a buffer. Returns 0 and fills *facts and *deps (either may be
 * NULL: not wanted), or -1 with *why set to a static reason ("truncated",
 * "bad checksum", ...) and nothing allocated. `key` must match the
 * header's. */
int bwsc__facts_decode(const unsigned char *buf, size_t len, uint64_t key,
                       bwsc__tu_facts *facts, bwsc__deps *deps,
                       const char **why);

/* Writes facts to `path` atomically. Returns 0, or -1 with errno set. */
int bwsc__facts_write(const char *path, const bwsc__tu_facts *facts,
                      const bwsc__deps *deps, uint64_t key);

/* Reads `path`. Returns 0, or -1 with *why set (a missing file: "missing";
 * errno tells more). */
int bwsc__facts_read(const char *path, uint64_t key, bwsc__tu_facts *facts,
                     bwsc__deps *deps, const char **why);

/* FNV-1a over a byte range, continuing from `hash`. */
uint64_t bwsc__fnv1a_bytes(uint64_t hash, const void *data, size_t len);

#endif /* BLOCKSCAN_FACTS_IO_H */
