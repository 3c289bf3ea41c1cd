/* parse_guard.h - the parser's view of an equality guard: in the
 * then-branch of `if (v == a || v == b)`, the variable v holds a or b, so
 * a descriptor or object argument v there is one of theirs (GLib's
 * gsubprocess.c writes `source` only after `source == state->stdout_buf
 * || source == state->stderr_buf`, two memory streams).
 *
 * Invariant: only the parser's files include this (libclang types).
 */
#ifndef BLOCKSCAN_PARSE_GUARD_H
#define BLOCKSCAN_PARSE_GUARD_H

#include "facts.h"
#include "parse_clang.h"

#define BWSC__GUARD_MAX_KEYS 4

typedef struct bwsc__guard {
  CXSourceRange then;               /* where v holds one of the keys' values */
  CXCursor var;                     /* v: a local variable or a parameter */
  char *keys[BWSC__GUARD_MAX_KEYS]; /* the slots compared with (owned) */
  int nkeys;
} bwsc__guard;

/* For an if statement: 1 and *out when its condition is `v == e` or an
 * `||` of such tests of one v (either way round, at most
 * BWSC__GUARD_MAX_KEYS), v a local variable (not static) or a parameter,
 * each e a variable, field or parameter with a descriptor key
 * (bwsc__desc_key). A write to v inside the branch is not looked for. */
int bwsc__guard_of(CXTranslationUnit tu, CXCursor if_stmt, bwsc__guard *out);

/* 1 when `ref` (what an argument names) is the guard's v. */
int bwsc__guard_names(const bwsc__guard *guard, CXCursor ref);

/* A branch of an if and the tests of the function's integer parameters
 * it passes whenever it runs (bwsc__param_test). */
typedef struct bwsc__test_region {
  CXSourceRange range;
  bwsc__param_test tests[BWSC__CALL_TESTS_MAX];
  int ntests;
} bwsc__test_region;

/* For an if statement of function `func`: its then-branch (out[0]) and
 * else-branch (out[1]) with the tests each passes; ntests is 0 for a
 * branch with none (or no else). The then-branch passes each operand of
 * a top-level `&&` (`!(a || b)` alike), the else-branch the negation of
 * the whole condition or of each operand of a top-level `||`. A test is
 * `p`, `!p`, `p & M`, `(p & M) == 0` or `!= 0`, `p == K`, `p != K`
 * (either order), p an integer parameter named through parentheses and
 * implicit conversions only (a cast may change its value), M and K
 * constants; an operator written in a macro's body is not read. A branch
 * holding a label or a case of a switch around it passes no test (a goto
 * or the switch may enter it). Whether p is written before the test is
 * the caller's question. */
void bwsc__test_regions(CXTranslationUnit tu, CXCursor if_stmt, CXCursor func,
                        bwsc__test_region out[2]);

#endif /* BLOCKSCAN_PARSE_GUARD_H */
