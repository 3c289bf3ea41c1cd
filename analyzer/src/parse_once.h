/* parse_once.h - the parser's view of once-only initialisation (see
 * bwsc__call_fact.once in facts.h): where in a function body the calls
 * that run only until a static variable is set are written.
 *
 * Invariant: only the parser's files include this (libclang types).
 */
#ifndef BLOCKSCAN_PARSE_ONCE_H
#define BLOCKSCAN_PARSE_ONCE_H

#include "parse_clang.h"

/* For an if statement met in function `func`'s body: when it starts a
 * once-only initialisation (`if (!v) { ... v = x; }`, `if (v) return v;`
 * and a later `v = x`, `if (gate(&v)) { ... }`, v a global or static; see
 * parse_once.c), sets *region to the code that runs only then; leaves
 * *region alone otherwise, and while the if lies inside the region
 * already set. */
void bwsc__once_region(CXTranslationUnit tu, CXCursor if_stmt, CXCursor func,
                       CXSourceRange *region);

/* 1 when `cursor` is written inside `region` (a null range: never). */
int bwsc__once_covers(CXSourceRange region, CXCursor cursor);

#endif /* BLOCKSCAN_PARSE_ONCE_H */
