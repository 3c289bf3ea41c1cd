/* diff.c - reading a unified diff into the lines it adds, per file, and
 * keeping the findings those lines touch.
 *
 * Invariants: a hunk is read by its counts (the old and new line numbers
 * of its header), so a removed line that starts with "--" or an added one
 * that starts with "++" is never taken for a file header; text outside
 * hunks (a mail's prose, git's "index" and "similarity" lines) is skipped;
 * every error names the patch's file and line.
 */
/* realpath is XSI in glibc's headers. */
#define _XOPEN_SOURCE 700

#include "diff.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- the changed lines --------------------------------------------------- */

/* The real path of `path`, or `path` itself when it does not exist. */
static char *real_path(const char *path) {
  char *real = realpath(path, NULL);
  return real ? real : bwsc__xstrdup(path);
}

/* The file of `path` (made absolute against `root`), created if new. */
static bwsc__changed_file *file_of(bwsc__changes *changes, const char *root,
                                   const char *path) {
  char *joined = path[0] == '/' ? bwsc__xstrdup(path)
                                : bwsc__xasprintf("%s/%s", root, path);
  char *real = real_path(joined);
  free(joined);
  size_t at;
  if (bwsc__strmap_get(&changes->index, real, &at)) {
    free(real);
    return &changes->files[at];
  }
  /* The key is the file's own path string, which stays put when `files`
   * grows. */
  bwsc__changed_file *file =
      BWSC__PUSH(changes->files, changes->count, changes->cap);
  file->path = real;
  bwsc__strmap_put(&changes->index, real, changes->count - 1);
  return file;
}

static void add_lines(bwsc__changed_file *file, unsigned first, unsigned last) {
  if (file->count &&
      (unsigned long)file->ranges[file->count - 1].last + 1 == first) {
    file->ranges[file->count - 1].last = last; /* the next added line */
    return;
  }
  bwsc__line_range *range = BWSC__PUSH(file->ranges, file->count, file->cap);
  range->first = first;
  range->last = last;
}

static int compare_range(const void *pa, const void *pb) {
  const bwsc__line_range *a = pa, *b = pb;
  if (a->first != b->first)
    return a->first < b->first ? -1 : 1;
  return 0;
}

/* Sorts a file's ranges and merges those that overlap or meet (a patch
 * may name one file twice). */
static void normalise(bwsc__changed_file *file) {
  if (file->count < 2)
    return;
  qsort(file->ranges, file->count, sizeof(*file->ranges), compare_range);
  size_t out = 1;
  for (size_t i = 1; i < file->count; i++) {
    bwsc__line_range *prev = &file->ranges[out - 1];
    if (file->ranges[i].first <= (unsigned long)prev->last + 1) {
      if (file->ranges[i].last > prev->last)
        prev->last = file->ranges[i].last;
    } else {
      file->ranges[out++] = file->ranges[i];
    }
  }
  file->count = out;
}

void bwsc__changes_add(bwsc__changes *changes, const char *root,
                       const char *path, unsigned first, unsigned last) {
  bwsc__changed_file *file = file_of(changes, root, path);
  add_lines(file, first, last);
  normalise(file);
}

/* ---- reading a patch ----------------------------------------------------- */

typedef struct reader {
  FILE *in;
  const char *name, *root;
  char *line;
  size_t cap;
  size_t len;
  unsigned lineno;
  bwsc__errors *errors;
} reader;

/* The next line without its newline; 0 at the end. */
static int next_line(reader *r) {
  ssize_t n = getline(&r->line, &r->cap, r->in);
  if (n < 0)
    return 0;
  r->lineno++;
  if (n > 0 && r->line[n - 1] == '\n')
    r->line[--n] = '\0';
  if (n > 0 && r->line[n - 1] == '\r')
    r->line[--n] = '\0';
  r->len = (size_t)n;
  return 1;
}

static int fail(reader *r, unsigned line, const char *what) {
  char *message = bwsc__xasprintf("malformed patch: %s", what);
  bwsc__errors_add(r->errors, r->name, line, 0, message);
  free(message);
  return -1;
}

/* Git's quoting of a path with unusual bytes: "a/t\303\251st \"x\"". */
static char *unquote(const char *text) {
  char *out = bwsc__xmalloc(strlen(text) + 1);
  size_t o = 0;
  for (const char *p = text + 1; *p && *p != '"'; p++) {
    if (*p != '\\' || !p[1]) {
      out[o++] = *p;
      continue;
    }
    p++;
    if (*p >= '0' && *p <= '7') {
      unsigned value = 0;
      for (int k = 0; k < 3 && *p >= '0' && *p <= '7'; k++, p++)
        value = value * 8 + (unsigned)(*p - '0');
      p--;
      out[o++] = (char)value;
      continue;
    }
    static const char escapes[] = "a\ab\bf\fn\nr\rt\tv\v";
    const char *e = strchr(escapes, *p);
    out[o++] = e && (e - escapes) % 2 == 0 ? e[1] : *p;
  }
  out[o] = '\0';
  return out;
}

/* The path of a "--- PATH" or "+++ PATH" line (NULL for /dev/null): a
 * quoted path is unquoted, otherwise a tab and what follows (diff's
 * timestamp, git's mark of a path with spaces) is cut. */
static char *header_path(const char *text) {
  if (text[0] == '"')
    return unquote(text);
  size_t len = strcspn(text, "\t");
  if (len == 9 && strncmp(text, "/dev/null", 9) == 0)
    return NULL;
  char *path = bwsc__xmalloc(len + 1);
  memcpy(path, text, len);
  path[len] = '\0';
  return path;
}

/* Reads "N" or "N,M" (M defaults to 1); returns the end or NULL. */
static const char *parse_span(const char *p, unsigned long *start,
                              unsigned long *count) {
  char *end;
  if (*p < '0' || *p > '9')
    return NULL;
  errno = 0;
  *start = strtoul(p, &end, 10);
  *count = 1;
  if (*end == ',') {
    p = end + 1;
    if (*p < '0' || *p > '9')
      return NULL;
    *count = strtoul(p, &end, 10);
  }
  if (errno || *start > UINT_MAX || *count > UINT_MAX - *start)
    return NULL;
  return end;
}

/* Reads one hunk whose header is r->line, marking its added lines in
 * `file` (NULL: the file was deleted). */
static int read_hunk(reader *r, bwsc__changed_file *file) {
  unsigned long old_start, old_left, new_start, new_left;
  const char *p = r->line + 4; /* after "@@ -" */
  if (!(p = parse_span(p, &old_start, &old_left)) || strncmp(p, " +", 2) ||
      !(p = parse_span(p + 2, &new_start, &new_left)) || strncmp(p, " @@", 3))
    return fail(r, r->lineno,
                "a hunk header must read '@@ -OLD[,N] +NEW[,N] @@'");
  unsigned header = r->lineno;
  unsigned long line = new_start;
  while (old_left || new_left) {
    if (!next_line(r)) {
      char *what = bwsc__xasprintf(
          "the patch ends inside the hunk of line %u (%lu old and %lu new "
          "lines missing)",
          header, old_left, new_left);
      fail(r, r->lineno + 1, what);
      free(what);
      return -1;
    }
    char kind = r->len ? r->line[0] : ' '; /* some tools cut the blank */
    if (kind == '\\')
      continue; /* "\ No newline at end of file" */
    int is_old = kind == ' ' || kind == '-';
    int is_new = kind == ' ' || kind == '+';
    if ((!is_old && !is_new) || (is_old && !old_left) ||
        (is_new && !new_left)) {
      char *what = bwsc__xasprintf(
          "this line does not fit the hunk of line %u (%lu old and %lu new "
          "lines were left)",
          header, old_left, new_left);
      fail(r, r->lineno, what);
      free(what);
      return -1;
    }
    old_left -= is_old;
    new_left -= is_new;
    if (kind == '+' && file)
      add_lines(file, (unsigned)line, (unsigned)line);
    line += is_new;
  }
  return 0;
}

int bwsc__changes_read(bwsc__changes *changes, FILE *in, const char *name,
                       const char *root, bwsc__errors *errors) {
  reader r = {in, name, root, NULL, 0, 0, 0, errors};
  int rc = 0, have_file = 0, old_prefixed = 0;
  bwsc__changed_file *file = NULL;
  size_t at = SIZE_MAX; /* `file` as an index: PUSH may move the array */
  while (rc == 0 && next_line(&r)) {
    if (strncmp(r.line, "diff --git ", 11) == 0) {
      have_file = 0; /* a rename or mode change alone has no hunk */
    } else if (strncmp(r.line, "--- ", 4) == 0) {
      char *old = header_path(r.line + 4);
      old_prefixed = !old || strncmp(old, "a/", 2) == 0;
      free(old);
    } else if (strncmp(r.line, "+++ ", 4) == 0) {
      char *path = header_path(r.line + 4);
      have_file = 1;
      at = SIZE_MAX;
      if (path) {
        int strip = old_prefixed && strncmp(path, "b/", 2) == 0;
        file = file_of(changes, root, path + (strip ? 2 : 0));
        at = (size_t)(file - changes->files);
      }
      free(path);
    } else if (strncmp(r.line, "@@ -", 4) == 0) {
      if (!have_file) {
        rc = fail(&r, r.lineno,
                  "a hunk before any '--- OLD' / '+++ NEW' file header");
        break;
      }
      rc = read_hunk(&r, at == SIZE_MAX ? NULL : &changes->files[at]);
    }
  }
  if (rc == 0 && ferror(in)) {
    char *message = bwsc__xasprintf("cannot read: %s", strerror(errno));
    bwsc__errors_add(errors, name, 0, 0, message);
    free(message);
    rc = -1;
  }
  free(r.line);
  for (size_t i = 0; i < changes->count; i++)
    normalise(&changes->files[i]);
  return rc;
}

/* ---- the filter ---------------------------------------------------------- */

/* The changed file that `path` names, or NULL; real paths are cached. */
static const bwsc__changed_file *lookup(bwsc__changes *changes,
                                        const char *path) {
  size_t at;
  if (!bwsc__strmap_get(&changes->real, path, &at)) {
    char *real = real_path(path);
    size_t index;
    at = bwsc__strmap_get(&changes->index, real, &index) ? index + 1 : 0;
    free(real);
    char *key = bwsc__xstrdup(path);
    *BWSC__PUSH(changes->real_keys, changes->nreal_keys,
                changes->capreal_keys) = key;
    bwsc__strmap_put(&changes->real, key, at);
  }
  return at ? &changes->files[at - 1] : NULL;
}

/* 1 when the change added or changed line loc->line of loc->file. */
static int touches(bwsc__changes *changes, const bwsc__loc *loc) {
  if (!loc->file || !loc->line)
    return 0;
  const bwsc__changed_file *file = lookup(changes, loc->file);
  if (!file)
    return 0;
  size_t lo = 0, hi = file->count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (file->ranges[mid].last < loc->line)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < file->count && file->ranges[lo].first <= loc->line;
}

static int touched(bwsc__changes *changes, const bwsc__finding *f) {
  if (touches(changes, &f->loc) || touches(changes, &f->submit_loc))
    return 1;
  for (size_t s = 0; s < f->nchain; s++)
    if (touches(changes, &f->chain[s].loc))
      return 1;
  return 0;
}

void bwsc__changes_filter(bwsc__changes *changes, bwsc__findings *findings) {
  for (size_t i = 0; i < findings->count;) {
    if (touched(changes, &findings->items[i]))
      i++;
    else
      bwsc__findings_remove(findings, i);
  }
}

void bwsc__changes_free(bwsc__changes *changes) {
  bwsc__git_job_drop(&changes->diff);
  bwsc__git_job_drop(&changes->untracked);
  free(changes->top);
  for (size_t i = 0; i < changes->count; i++) {
    free(changes->files[i].path);
    free(changes->files[i].ranges);
  }
  free(changes->files);
  for (size_t i = 0; i < changes->nreal_keys; i++)
    free(changes->real_keys[i]);
  free(changes->real_keys);
  bwsc__strmap_free(&changes->index);
  bwsc__strmap_free(&changes->real);
  memset(changes, 0, sizeof(*changes));
}
