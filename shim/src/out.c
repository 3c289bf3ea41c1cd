/* out.c - everything the shim writes: "blockwatch:" lines on stderr and a
 * small buffered writer used by the JSON report and the trace.
 *
 * Invariants:
 *  - No stdio and no allocation: vsnprintf into a stack buffer, then the
 *    real write(2). Nothing goes to stdout, ever.
 *  - Every line printed starts with "blockwatch: ".
 *  - stderr is written only while it is still the file it was at startup
 *    (same device and inode): a program that closed stderr, or reused
 *    descriptor 2 for a file of its own, gets nothing written into it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "real.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static dev_t err_dev;
static ino_t err_ino;
static int err_ok;

void bwsh__log_init(void) {
  struct stat st;
  err_ok = fstat(2, &st) == 0;
  if (err_ok) {
    err_dev = st.st_dev;
    err_ino = st.st_ino;
  }
}

static int stderr_usable(void) {
  struct stat st;
  return err_ok && fstat(2, &st) == 0 && st.st_dev == err_dev &&
         st.st_ino == err_ino;
}

int bwsh__write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    long w = bwsh__real_write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

void bwsh__log(const char *fmt, ...) {
  int saved = errno;
  if (!stderr_usable()) {
    errno = saved;
    return;
  }
  char line[1024];
  int n = snprintf(line, sizeof line, "blockwatch: ");
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
  va_end(ap);
  size_t len = (size_t)n + (m < 0 ? 0
                            : (size_t)m < sizeof line - (size_t)n - 1
                                ? (size_t)m
                                : sizeof line - (size_t)n - 2);
  line[len++] = '\n';
  bwsh__self.depth++;
  bwsh__write_all(2, line, len);
  bwsh__self.depth--;
  errno = saved;
}

void bwsh__out_flush(bwsh__out *o) {
  if (o->len && !o->failed && bwsh__write_all(o->fd, o->buf, o->len) != 0)
    o->failed = 1;
  o->len = 0;
}

void bwsh__out_bytes(bwsh__out *o, const char *s, size_t n) {
  while (n > 0) {
    if (o->len == sizeof o->buf)
      bwsh__out_flush(o);
    size_t room = sizeof o->buf - o->len;
    size_t k = n < room ? n : room;
    memcpy(o->buf + o->len, s, k);
    o->len += k;
    s += k;
    n -= k;
  }
}

void bwsh__out_str(bwsh__out *o, const char *s) {
  bwsh__out_bytes(o, s, strlen(s));
}

void bwsh__out_u64(bwsh__out *o, uint64_t v) {
  char tmp[24];
  int i = sizeof tmp;
  do {
    tmp[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  bwsh__out_bytes(o, tmp + i, sizeof tmp - (size_t)i);
}

void bwsh__out_i64(bwsh__out *o, int64_t v) {
  if (v < 0) {
    bwsh__out_bytes(o, "-", 1);
    bwsh__out_u64(o, (uint64_t)0 - (uint64_t)v);
  } else {
    bwsh__out_u64(o, (uint64_t)v);
  }
}

/* v / div with three decimals, by integer arithmetic (no locale, no
 * floating point formatting in a signal handler). */
static void out_fixed3(bwsh__out *o, uint64_t v, uint64_t div) {
  uint64_t thousandths = (v * 1000u + div / 2) / div;
  if (v > UINT64_MAX / 1000u)
    thousandths = v / div * 1000u;
  bwsh__out_u64(o, thousandths / 1000u);
  char frac[4] = {'.', (char)('0' + thousandths / 100 % 10),
                  (char)('0' + thousandths / 10 % 10),
                  (char)('0' + thousandths % 10)};
  bwsh__out_bytes(o, frac, 4);
}

void bwsh__out_ms(bwsh__out *o, uint64_t ns) {
  out_fixed3(o, ns, 1000000u);
}

void bwsh__out_us(bwsh__out *o, uint64_t ns) {
  out_fixed3(o, ns, 1000u);
}

void bwsh__out_jstr(bwsh__out *o, const char *s) {
  if (!s) {
    bwsh__out_str(o, "null");
    return;
  }
  bwsh__out_bytes(o, "\"", 1);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      char esc[2] = {'\\', (char)c};
      bwsh__out_bytes(o, esc, 2);
    } else if (c < 0x20) {
      static const char hex[] = "0123456789abcdef";
      char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
      bwsh__out_bytes(o, esc, 6);
    } else {
      bwsh__out_bytes(o, (const char *)&c, 1);
    }
  }
  bwsh__out_bytes(o, "\"", 1);
}
