/* Loading: the public load entry points, files and includes, and the
 * all-or-nothing commit / rollback of one load.
 *
 * Invariants:
 *  - A load first appends new rules to the set's vectors and remembers the
 *    old lengths; the set's indexes keep describing only the old rules
 *    until the commit rebuilds them, so a rollback only has to free the
 *    new rules and restore the lengths (no allocation on that path).
 *  - Each file being loaded has its identity (canonical path, or the name
 *    of a string / pack) on ld->stack; finding it there again is a cycle.
 *  - Nothing here writes to stdout or stderr: errors go to the set's list
 *    and to the caller's callback.
 */
#define _XOPEN_SOURCE 700 /* realpath, strerror_r (XSI) */
#include "rules_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A rule file larger than this is surely a mistake (a binary, a log). */
#define MAX_RULE_FILE (16u << 20)
/* Internal error code of read_file(): the path is not a regular file. It
 * only travels from read_file() to errno_text() and the load's result. */
#define ENOTREG 4095

/* ---- begin / commit / rollback ---- */

static int load_begin(bwrl__load *ld, bw_rules *rs) {
  memset(ld, 0, sizeof(*ld));
  ld->rs = rs;
  ld->old_blocking = rs->blocking.n;
  ld->old_entries = rs->entries.n;
  ld->old_allows = rs->allows.n;
  ld->old_posts = rs->posts.n;
  ld->old_passes = rs->passes.n;
  ld->old_hints = rs->hints.n;
  ld->old_nonblocks = rs->nonblocks.n;
  ld->old_readies = rs->readies.n;
  memcpy(ld->old_enabled, rs->enabled, sizeof(ld->old_enabled));
  if (rs->entries.n > 0) {
    ld->old_callbacks = malloc(rs->entries.n * sizeof(size_t));
    if (ld->old_callbacks == NULL)
      return -ENOMEM;
    for (size_t i = 0; i < rs->entries.n; i++)
      ld->old_callbacks[i] =
          ((bw_entry_rule *)rs->entries.items[i])->n_callbacks;
  }
  return 0;
}

static void truncate_vec(bwrl__vec *vec, size_t n) {
  for (size_t i = n; i < vec->n; i++)
    free(vec->items[i]);
  vec->n = n;
}

static void rollback(bwrl__load *ld) {
  bw_rules *rs = ld->rs;
  truncate_vec(&rs->blocking, ld->old_blocking);
  truncate_vec(&rs->entries, ld->old_entries);
  truncate_vec(&rs->allows, ld->old_allows);
  truncate_vec(&rs->posts, ld->old_posts);
  truncate_vec(&rs->passes, ld->old_passes);
  truncate_vec(&rs->hints, ld->old_hints);
  truncate_vec(&rs->nonblocks, ld->old_nonblocks);
  truncate_vec(&rs->readies, ld->old_readies);
  for (size_t i = 0; i < rs->entries.n; i++)
    ((bw_entry_rule *)rs->entries.items[i])->n_callbacks = ld->old_callbacks[i];
  memcpy(rs->enabled, ld->old_enabled, sizeof(rs->enabled));
}

/* Commits or rolls back; returns the load's result. */
static int load_end(bwrl__load *ld) {
  int result = 0;
  if (ld->oom)
    result = -ENOMEM;
  else if (ld->io_err)
    result = ld->io_err;
  else if (ld->n_errors > 0)
    result = -EINVAL;
  if (result == 0 && bwrl__rules_reindex(ld->rs) != 0)
    result = -ENOMEM;
  if (result != 0)
    rollback(ld);
  bwrl__index_clear(&ld->new_blocking);
  bwrl__index_clear(&ld->new_entries);
  free(ld->old_callbacks);
  ld->old_callbacks = NULL;
  return result;
}

/* ---- names and paths ---- */

/* "dir/libc.rules" -> "libc": the default api of the rules in a file. */
static char *api_from_name(bwrl__load *ld, const char *name) {
  const char *base = strrchr(name, '/');
  base = base ? base + 1 : name;
  size_t n = strlen(base);
  if (n > 6 && strcmp(base + n - 6, ".rules") == 0)
    n -= 6;
  char *api = bwrl__arena_strndup(&ld->rs->arena, base, n);
  if (api == NULL)
    ld->oom = 1;
  return api;
}

/* "dir/x.rules" -> "dir"; "x.rules" -> "" (the current directory). */
static char *dir_from_path(bwrl__load *ld, const char *path) {
  const char *slash = strrchr(path, '/');
  size_t n = slash == NULL ? 0 : (slash == path ? 1 : (size_t)(slash - path));
  char *dir = bwrl__arena_strndup(&ld->rs->arena, path, n);
  if (dir == NULL)
    ld->oom = 1;
  return dir;
}

/* Pushes identity on the include stack; reports a cycle or excess depth at
 * the including line (or, at top level, against the file itself). */
static int push_identity(bwrl__load *ld, const char *identity,
                         const char *shown, const char *from_file,
                         unsigned from_line, unsigned from_column) {
  const char *where = from_file ? from_file : shown;
  for (size_t i = 0; i < ld->depth; i++) {
    if (strcmp(ld->stack[i], identity) == 0) {
      bwrl__report(ld, where, from_line, from_column,
                   "include cycle: '%s' is already being loaded", shown);
      return -EINVAL;
    }
  }
  if (ld->depth == BWRL__MAX_INCLUDE_DEPTH) {
    bwrl__report(ld, where, from_line, from_column,
                 "includes nested too deeply at '%s' (at most %d levels)",
                 shown, BWRL__MAX_INCLUDE_DEPTH);
    return -EINVAL;
  }
  ld->stack[ld->depth++] = identity;
  return 0;
}

/* Reads a whole regular file into a malloc'ed, NUL-terminated buffer.
 * The file is opened with O_NONBLOCK and checked with fstat() first, so an
 * include of a FIFO or a device (/dev/stdin, /dev/zero) is an error instead
 * of a hang. Reading goes through stdio, not read(): inside the shim, read()
 * is one of the wrapped functions. */
static int read_file(const char *path, char **out, size_t *out_len) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    int err = S_ISDIR(st.st_mode) ? -EISDIR : -ENOTREG;
    close(fd);
    return err;
  }
  if ((unsigned long long)st.st_size > MAX_RULE_FILE) {
    close(fd);
    return -EFBIG;
  }
  FILE *fp = fdopen(fd, "rb");
  if (fp == NULL) {
    int err = -errno;
    close(fd);
    return err;
  }
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  int err = buf ? 0 : -ENOMEM;
  while (err == 0) {
    if (len + 1 == cap) {
      char *bigger = cap > MAX_RULE_FILE ? NULL : realloc(buf, cap * 2);
      if (bigger == NULL) {
        err = cap > MAX_RULE_FILE ? -EFBIG : -ENOMEM;
        break;
      }
      buf = bigger;
      cap *= 2;
    }
    size_t got = fread(buf + len, 1, cap - 1 - len, fp);
    len += got;
    if (got == 0) {
      if (ferror(fp))
        err = errno ? -errno : -EIO;
      break;
    }
  }
  fclose(fp);
  if (err) {
    free(buf);
    return err;
  }
  buf[len] = '\0';
  *out = buf;
  *out_len = len;
  return 0;
}

static const char *errno_text(int err, char *buf, size_t size) {
  if (err == -EFBIG)
    return "file too large";
  if (err == -ENOTREG)
    return "not a regular file";
  if (strerror_r(-err, buf, size) != 0)
    snprintf(buf, size, "error %d", -err);
  return buf;
}

/* Reports that path cannot be opened or read (`verb`), at the include:
 * line of from_file, or for a top-level load against path itself, whose
 * error then becomes the load's result. */
static void report_unreadable(bwrl__load *ld, const char *verb,
                              const char *path, const char *from_file,
                              unsigned from_line, unsigned from_column,
                              int err) {
  char buf[128];
  const char *reason = errno_text(err, buf, sizeof(buf));
  if (from_file) {
    bwrl__report(ld, from_file, from_line, from_column,
                 "cannot %s include '%s': %s", verb, path, reason);
    return;
  }
  bwrl__report(ld, path, 0, 0, "cannot %s '%s': %s", verb, path, reason);
  if (!ld->io_err)
    ld->io_err = err == -ENOTREG ? -EINVAL : err;
}

/* Loads the file at path for an include: line of from_file (NULL for a
 * top-level load). */
static void load_path(bwrl__load *ld, const char *path, const char *from_file,
                      unsigned from_line, unsigned from_column) {
  char *canonical = realpath(path, NULL);
  if (canonical == NULL) {
    int err = errno == ENOMEM ? -ENOMEM : -errno;
    report_unreadable(ld, "open", path, from_file, from_line, from_column, err);
    return;
  }
  char *identity =
      bwrl__arena_strndup(&ld->rs->arena, canonical, strlen(canonical));
  free(canonical);
  if (identity == NULL) {
    ld->oom = 1;
    return;
  }
  if (push_identity(ld, identity, path, from_file, from_line, from_column))
    return;
  char *text = NULL;
  size_t len = 0;
  int err = read_file(path, &text, &len);
  if (err) {
    report_unreadable(ld, "read", path, from_file, from_line, from_column, err);
  } else {
    char *dir = dir_from_path(ld, path);
    char *api = api_from_name(ld, path);
    char *shown = bwrl__arena_strndup(&ld->rs->arena, path, strlen(path));
    if (dir && api && shown)
      bwrl__parse(ld, shown, dir, api, text, len);
    else
      ld->oom = 1;
    free(text);
  }
  ld->depth--;
}

void bwrl__load_include(bwrl__load *ld, const char *dir, const char *name,
                        const char *from_file, unsigned from_line,
                        unsigned from_column) {
  size_t dl = name[0] == '/' ? 0 : strlen(dir);
  size_t nl = strlen(name);
  char *path = malloc(dl + nl + 2);
  if (path == NULL) {
    ld->oom = 1;
    return;
  }
  memcpy(path, dir, dl);
  /* dir "/" already ends with the separator. */
  size_t at = dl;
  if (dl > 0 && dir[dl - 1] != '/')
    path[at++] = '/';
  memcpy(path + at, name, nl + 1);
  load_path(ld, path, from_file, from_line, from_column);
  free(path);
}

/* ---- public entry points ---- */

int bw_rules_load_file(bw_rules *rs, const char *path) {
  if (rs == NULL || path == NULL)
    return -EINVAL;
  bwrl__load ld;
  if (load_begin(&ld, rs))
    return -ENOMEM;
  load_path(&ld, path, NULL, 0, 0);
  return load_end(&ld);
}

/* Loads one text under `name`, for strings and embedded packs. */
static void load_text(bwrl__load *ld, const char *name, const char *identity,
                      const char *text, size_t len) {
  char *shown = bwrl__arena_strndup(&ld->rs->arena, name, strlen(name));
  char *dir = strchr(name, '/') ? dir_from_path(ld, name)
                                : bwrl__arena_strndup(&ld->rs->arena, "", 0);
  char *api = api_from_name(ld, name);
  if (!shown || !dir || !api) {
    ld->oom = 1;
    return;
  }
  if (push_identity(ld, identity, shown, NULL, 0, 0))
    return;
  bwrl__parse(ld, shown, dir, api, text, len);
  ld->depth--;
}

int bw_rules_load_string(bw_rules *rs, const char *name, const char *text,
                         size_t len) {
  if (rs == NULL || (text == NULL && len > 0))
    return -EINVAL;
  if (name == NULL)
    name = "<string>";
  bwrl__load ld;
  if (load_begin(&ld, rs))
    return -ENOMEM;
  /* A string named after a real file must be caught including that file. */
  char *canonical = realpath(name, NULL);
  const char *identity = name;
  char *copy = NULL;
  if (canonical != NULL) {
    copy = bwrl__arena_strndup(&rs->arena, canonical, strlen(canonical));
    free(canonical);
    if (copy == NULL)
      ld.oom = 1;
    identity = copy;
  }
  if (!ld.oom)
    load_text(&ld, name, identity, text ? text : "", len);
  return load_end(&ld);
}

size_t bw_rules_pack_count(void) {
  size_t n = 0;
  while (bwrl__packs[n].name != NULL)
    n++;
  return n;
}

const char *bw_rules_pack_name(size_t i) {
  return i < bw_rules_pack_count() ? bwrl__packs[i].name : NULL;
}

static const bwrl__pack *find_pack(const char *name) {
  for (const bwrl__pack *pack = bwrl__packs; pack->name != NULL; pack++) {
    if (strcmp(pack->name, name) == 0)
      return pack;
  }
  return NULL;
}

const char *bw_rules_pack_text(const char *name) {
  const bwrl__pack *pack = name ? find_pack(name) : NULL;
  return pack ? pack->text : NULL;
}

/* Packs are named "<name>.rules" in messages, so their api is <name>. */
static void load_pack(bwrl__load *ld, const bwrl__pack *pack) {
  char shown[256];
  snprintf(shown, sizeof(shown), "%s.rules", pack->name);
  char identity[300];
  snprintf(identity, sizeof(identity), "<pack>/%s", shown);
  char *id = bwrl__arena_strndup(&ld->rs->arena, identity, strlen(identity));
  if (id == NULL) {
    ld->oom = 1;
    return;
  }
  load_text(ld, shown, id, pack->text, pack->len);
}

int bw_rules_load_default(bw_rules *rs, const char *pack) {
  if (rs == NULL)
    return -EINVAL;
  const bwrl__pack *one = NULL;
  if (pack != NULL && (one = find_pack(pack)) == NULL)
    return -ENOENT;
  bwrl__load ld;
  if (load_begin(&ld, rs))
    return -ENOMEM;
  if (one != NULL) {
    load_pack(&ld, one);
  } else {
    for (const bwrl__pack *p = bwrl__packs; p->name != NULL && !ld.oom; p++)
      load_pack(&ld, p);
  }
  return load_end(&ld);
}
