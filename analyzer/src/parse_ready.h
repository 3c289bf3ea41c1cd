/* parse_ready.h - the parser's view of readiness tests: a call on an
 * object written right after the program tested that object, in the
 * statement that follows an assertion of the test in the same block
 * (`g_assert_true (g_pollable_output_stream_is_writable (out)); n =
 * g_output_stream_write (out, buf, 2, NULL, &error);`), or as the first
 * statement of the branch an if on the test takes (`if (is_readable (in))
 * n = read_it (in);`). Which functions are tests is the rules' business
 * (ready: test=N); the parser records every such pair, by the test's name.
 *
 * Invariants: only the parser's files include this (libclang types); the
 * test must be the assertion's or the if's whole condition (no `!`, no
 * `&&`), and the call the statement's outermost one (a call, the value
 * of an assignment, a declaration's initialiser or a return), so no
 * statement runs between the test and the call; the object is a variable,
 * field or parameter, the same declaration and the same source text in
 * both (through casts and GLib's checked cast g_type_check_instance_cast).
 */
#ifndef BLOCKSCAN_PARSE_READY_H
#define BLOCKSCAN_PARSE_READY_H

#include "parse_clang.h"

#define BWSC__READY_MAX_TESTS 64

typedef struct bwsc__ready_test {
  unsigned call_offset; /* the tested call's expansion offset in its file */
  CXCursor object;      /* the declaration the tested expression names */
  char *text;           /* its source text ("streams->out"), owned */
  char *test;           /* "<test function>#<argument index>", owned */
} bwsc__ready_test;

/* For a compound statement: appends the tests its statements make just
 * before a call to out[*n..max), raising *n. */
void bwsc__ready_tests(CXTranslationUnit tu, CXCursor block,
                       bwsc__ready_test *out, int *n, int max);

/* For argument `arg` of `call`: a copy of the test ("name#index") that
 * tested the object `arg` names just before `call`, or NULL. */
char *bwsc__ready_tested(CXTranslationUnit tu, const bwsc__ready_test *tests,
                         int n, CXCursor call, CXCursor arg);

/* Frees the tests' strings; *n becomes 0. */
void bwsc__ready_drop(bwsc__ready_test *tests, int *n);

#endif /* BLOCKSCAN_PARSE_READY_H */
