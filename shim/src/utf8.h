/* utf8.h - the one judge of valid UTF-8 that the shim's JSON writer and
 * bw-merge's trace rewriter share, so a byte one of them escapes the other
 * escapes too. No dependencies: bw-merge builds it without the shim. */
#ifndef BLOCKWATCH_SHIM_UTF8_H
#define BLOCKWATCH_SHIM_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (2..4 bytes; s[0] >= 0x80), or
 * 0: overlong forms, surrogates and code points past U+10FFFF are not. A
 * NUL inside the sequence ends it, so reading stops at a string's end. */
size_t bwsh__utf8_len(const unsigned char *s);

#endif
