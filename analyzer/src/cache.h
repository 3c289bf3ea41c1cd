/* cache.h - the facts cache: one entry per translation unit, reused while
 * nothing that went into its facts has changed.
 *
 * Invariants: an entry's name is a hash of what selects it (this blockscan
 * binary, the facts format, clang's resource directory, the file, the
 * working directory and the flags); inside it lists every file the TU read
 * with a hash of its content, and it is used only when each one still
 * hashes the same. Rules are not part of the key: they are applied to the
 * merged program, after the facts. An unreadable or corrupt entry is a note
 * on stderr and a parse, never an error. Safe to use from several threads.
 */
#ifndef BLOCKSCAN_CACHE_H
#define BLOCKSCAN_CACHE_H

#include "facts_io.h"
#include "options.h"
#include "parse.h"

typedef struct bwsc__cache bwsc__cache;

/* Opens (creating it if needed) the cache directory. NULL after a note on
 * stderr when it cannot be created: the run goes on without a cache. */
bwsc__cache *bwsc__cache_open(const char *dir);

/* The directory --cache names, or by default .blockscan-cache beside the
 * compilation database; NULL for --no-cache or when there is no database
 * (files given with "--" flags). malloc'd. */
char *bwsc__cache_dir(const bwsc__options *opts);

/* Returns 1 and fills *out when a valid, current entry exists for input. */
int bwsc__cache_lookup(bwsc__cache *cache, const bwsc__tu_input *input,
                       bwsc__tu_facts *out);

/* Stores the facts of a parse (deps as bwsc__parser_parse gave them;
 * their hashes are filled in here). Failed TUs are not stored. */
void bwsc__cache_store(bwsc__cache *cache, const bwsc__tu_input *input,
                       const bwsc__tu_facts *facts, bwsc__deps *deps);

/* The content hash of a file, 0 when it cannot be read (memoised for the
 * cache's lifetime). */
uint64_t bwsc__cache_file_hash(bwsc__cache *cache, const char *path);

void bwsc__cache_close(bwsc__cache *cache);

#endif /* BLOCKSCAN_CACHE_H */
