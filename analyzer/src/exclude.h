/* exclude.h - the --exclude globs: which files a run leaves out.
 *
 * Invariant: a glob with a '/' is matched against the whole absolute path
 * (a relative one is first joined to its base directory); a glob without
 * one against each component of the path, so "vendor" or "*_test.c" match
 * at any depth. '*' also matches '/' (fnmatch without FNM_PATHNAME).
 */
#ifndef BLOCKSCAN_EXCLUDE_H
#define BLOCKSCAN_EXCLUDE_H

#include "options.h"

/* 1 when the absolute path `file` matches one of the options' globs. */
int bwsc__excluded(const bwsc__options *opts, const char *file);

#endif /* BLOCKSCAN_EXCLUDE_H */
