/* parse_fork.h - the parser's view of code run by a forked child (see
 * bwsc__call_fact.forked in facts.h): where in a function body the
 * statements that only the child of a fork() runs are written.
 *
 * Invariant: only the parser's files include this (libclang types).
 */
#ifndef BLOCKSCAN_PARSE_FORK_H
#define BLOCKSCAN_PARSE_FORK_H

#include "parse_clang.h"

/* For a compound, if or switch statement met in a function body: writes
 * to out (at most max) the child's branches of a fork() it holds (`if
 * ((pid = fork()) == 0) { ... }`, `if (!fork())`, `pid = fork();` followed
 * by an if/else-if chain with a `pid == 0` branch, `switch (fork()) { case
 * 0: ... }`; see parse_fork.c) and returns how many. bwsc__once_covers
 * (parse_once.h) tells whether a call is written inside one. */
int bwsc__fork_regions(CXTranslationUnit tu, CXCursor stmt, CXSourceRange *out,
                       int max);

#endif /* BLOCKSCAN_PARSE_FORK_H */
