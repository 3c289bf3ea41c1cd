/* config.h - the .blockscan file: a project's standing options, found in
 * the current directory or the nearest parent that has one.
 *
 * Invariants: the command line wins over the file (its --enable and
 * --disable over the file's, its --confidence over the file's; rule files
 * and excludes add up, the file's first); relative paths in the file are
 * taken from the file's directory; the strings the file gives the options
 * belong to the bwsc__config, which outlives them.
 */
#ifndef BLOCKSCAN_CONFIG_H
#define BLOCKSCAN_CONFIG_H

#include "options.h"

typedef struct bwsc__config {
  char *path; /* the file read, NULL when none was found */
  char *dir;  /* its directory */
  char **strings;
  size_t nstrings, cap;
} bwsc__config;

/* Reads the .blockscan of `start` (a directory) or its nearest parent into
 * opts. Returns 0 (also when there is none), or -1 after printing one
 * "blockscan: FILE:LINE: error: ..." line per bad line. */
int bwsc__config_apply(bwsc__config *cfg, bwsc__options *opts,
                       const char *start);

void bwsc__config_free(bwsc__config *cfg);

/* The path of `name` in the absolute directory `dir` or its nearest parent
 * that has one, as clang-tidy finds its files (malloc'd), or NULL. */
char *bwsc__find_in_parents(const char *dir, const char *name);

#endif /* BLOCKSCAN_CONFIG_H */
