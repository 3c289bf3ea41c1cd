/* utf8.c - see utf8.h. */
#include "utf8.h"

size_t bwsh__utf8_len(const unsigned char *s) {
  unsigned char c = s[0];
  size_t n;
  unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    lo = c == 0xe0 ? 0xa0 : 0x80; /* not overlong */
    hi = c == 0xed ? 0x9f : 0xbf; /* not a surrogate */
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    lo = c == 0xf0 ? 0x90 : 0x80; /* not overlong */
    hi = c == 0xf4 ? 0x8f : 0xbf; /* not past U+10FFFF */
  } else {
    return 0;
  }
  if (s[1] < lo || s[1] > hi)
    return 0;
  for (size_t i = 2; i < n; i++)
    if (s[i] < 0x80 || s[i] > 0xbf)
      return 0; /* the terminating NUL ends it here too */
  return n;
}
