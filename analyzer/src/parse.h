/* parse.h - turns one translation unit into TU facts. The only part of
 * blockscan that touches libclang (with its helpers, parse_clang.h).
 *
 * Invariants: a bwsc__parser is used by one thread at a time (each worker
 * thread owns one, with its own CXIndex); each TU is disposed before
 * bwsc__parser_parse returns, so memory stays bounded by one TU per thread.
 */
#ifndef BLOCKSCAN_PARSE_H
#define BLOCKSCAN_PARSE_H

#include "facts.h"
#include "facts_io.h"

/* One translation unit to parse: the source file and the compiler arguments
 * (without the compiler itself, the source file, -c and -o). */
typedef struct bwsc__tu_input {
  char *file;      /* absolute path */
  char *directory; /* working directory of the compile command, or NULL */
  char **args;
  size_t nargs;
} bwsc__tu_input;

typedef struct bwsc__parser bwsc__parser;

/* Process-wide libclang setup; call once, before any parser thread starts.
 * It turns off libclang's crash recovery (LIBCLANG_DISABLE_CRASH_RECOVERY):
 * that machinery serialises parsing threads (signal masks and a global
 * lock around every parse), so with it -j 2 ran no faster than -j 1. The
 * cost: a libclang crash on one TU ends the run instead of being reported
 * as that TU's error. */
void bwsc__parse_init(void);

/* Creates a parser with its own libclang index. */
bwsc__parser *bwsc__parser_new(void);

/* Parses `input` and fills *out (zeroed first). A TU that does not parse
 * sets out->failed and out->diags; it never aborts the run. Unless deps is
 * NULL, appends to it (hashes left 0) every file the TU read: its main
 * file and every header, system headers included. */
void bwsc__parser_parse(bwsc__parser *parser, const bwsc__tu_input *input,
                        bwsc__tu_facts *out, bwsc__deps *deps);

void bwsc__parser_free(bwsc__parser *parser);

#endif /* BLOCKSCAN_PARSE_H */
