/* out.c - everything the shim writes: "blockwatch:" lines on stderr, a
 * small buffered writer used by the JSON report and the trace, and the
 * names of the files they go to (the merge of reports sharing a file is
 * merge.c's).
 *
 * Invariants:
 *  - No stdio and no allocation: vsnprintf into a stack buffer, then the
 *    real write(2). Nothing goes to stdout, ever.
 *  - Every line printed starts with "blockwatch: ".
 *  - stderr is written only while it is still the file it was at startup
 *    (same device and inode): a program that closed stderr, or reused
 *    descriptor 2 for a file of its own, gets nothing written into it.
 *  - Every JSON string is valid UTF-8: a byte that does not start a valid
 *    sequence is written as \u00XX (its value read as Latin-1).
 *  - A path is checked without creating anything and without changing
 *    errno; a problem is named by the path it is about (the file or its
 *    directory) and strerror's reason.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shim.h"
#include "real.h"
#include "utf8.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

void bwsh__out_hex(bwsh__out *o, uintptr_t v) {
  static const char hex[] = "0123456789abcdef";
  char buf[2 + 2 * sizeof v];
  int i = sizeof buf;
  do {
    buf[--i] = hex[v & 15];
    v >>= 4;
  } while (v);
  buf[--i] = 'x';
  buf[--i] = '0';
  bwsh__out_bytes(o, buf + i, sizeof buf - (size_t)i);
}

/* The byte as \u00XX: a byte that is not UTF-8 is read as Latin-1, so
 * the JSON stays valid and the byte's value stays visible. */
static void out_uescape(bwsh__out *o, unsigned char c) {
  static const char hex[] = "0123456789abcdef";
  char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
  bwsh__out_bytes(o, esc, 6);
}

void bwsh__out_jstr(bwsh__out *o, const char *s) {
  if (!s) {
    bwsh__out_str(o, "null");
    return;
  }
  bwsh__out_bytes(o, "\"", 1);
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    size_t n = 1;
    if (*p == '"' || *p == '\\') {
      char esc[2] = {'\\', (char)*p};
      bwsh__out_bytes(o, esc, 2);
    } else if (*p < 0x20) {
      out_uescape(o, *p);
    } else if (*p < 0x80) {
      bwsh__out_bytes(o, (const char *)p, 1);
    } else if ((n = bwsh__utf8_len(p)) != 0) {
      bwsh__out_bytes(o, (const char *)p, n);
    } else {
      n = 1;
      out_uescape(o, *p);
    }
    p += n;
  }
  bwsh__out_bytes(o, "\"", 1);
}

/* ---- output paths -------------------------------------------------------- */

int bwsh__path_expand(const char *given, int fork_child, char *out,
                      size_t size) {
  size_t n = 0;
  int pids = 0, full = 0;
  char pid[16];
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  for (const char *p = given; *p && !full; p++) {
    const char *piece = p;
    size_t len = 1;
    if (p[0] == '%' && p[1] == 'p') {
      piece = pid;
      len = strlen(pid);
      pids++;
      p++;
    } else if (p[0] == '%' && p[1] == 'e') {
      piece = program_invocation_short_name;
      len = strlen(piece);
      p++;
    } else if (p[0] == '%' && p[1] == '%') {
      p++;
    }
    full = n + len >= size;
    if (!full) {
      memcpy(out + n, piece, len);
      n += len;
    }
  }
  if (!full && fork_child && pids == 0) {
    size_t len = strlen(pid);
    full = n + 1 + len >= size;
    if (!full) {
      out[n++] = '.';
      memcpy(out + n, pid, len);
      n += len;
    }
  }
  if (size > 0)
    out[n] = '\0';
  return full ? -ENAMETOOLONG : 0;
}

/* Why a file cannot be created at path (0 when nothing says so): the
 * errno, and in `about` the path that reason is about. */
static int path_problem(const char *path, char *about, size_t size) {
  struct stat st;
  snprintf(about, size, "%s", path);
  if (stat(path, &st) == 0)
    return S_ISDIR(st.st_mode) ? EISDIR : 0;
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(about, size, ".");
  else if (slash == path)
    snprintf(about, size, "/");
  else
    snprintf(about, size, "%.*s", (int)(slash - path), path);
  if (stat(about, &st) != 0)
    return errno;
  if (!S_ISDIR(st.st_mode))
    return ENOTDIR;
  if (access(about, W_OK | X_OK) != 0)
    return errno;
  return 0;
}

int bwsh__path_check(const char *what, const char *path) {
  int saved = errno;
  char about[600];
  int err = path_problem(path, about, sizeof about);
  if (err && strcmp(about, path) == 0)
    bwsh__log("warning: %s: cannot write '%s': %s", what, path, strerror(err));
  else if (err)
    bwsh__log("warning: %s: cannot write '%s': directory '%s': %s", what, path,
              about, strerror(err));
  errno = saved;
  return -err;
}
