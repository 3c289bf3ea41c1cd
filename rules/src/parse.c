/* The rule-file reader: splits a text into lines and reads each line's
 * kind, subject and key=value fields; directive.c gives them their meaning.
 * The grammar is documented in rules/README.md.
 *
 * Invariants:
 *  - The first error of a line is reported (with its column and the
 *    offending text quoted) and the rest of that line is skipped; parsing
 *    goes on with the next line, so one run reports every bad line.
 *  - A line adds to the set only when it parsed without error.
 *  - Field values are unescaped into a scratch buffer at least as large as
 *    twice the text, so no value can overflow it.
 */
#define _POSIX_C_SOURCE 200809L
#include "rules_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ---- */

/* Copies at most BWRL__QUOTE_MAX bytes of s for quoting, marking a cut with
 * "..."; control bytes are shown as '?', so the message stays one line. */
const char *bwrl__quote(const char *s, size_t n, char *out) {
  size_t k = n > BWRL__QUOTE_MAX ? BWRL__QUOTE_MAX : n;
  for (size_t i = 0; i < k; i++)
    out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
  if (k < n) {
    memcpy(out + k, "...", 3);
    k += 3;
  }
  out[k] = '\0';
  return out;
}

/* Reports the line's first error; later ones would only be echoes of it. */
void bwrl__fail(bwrl__line *lc, unsigned col, const char *fmt, ...) {
  if (lc->failed)
    return;
  lc->failed = 1;
  va_list ap;
  va_start(ap, fmt);
  bwrl__vreport(lc->ld, lc->file, lc->lineno, col, fmt, ap);
  va_end(ap);
}

/* Columns are 1-based byte offsets, as in compiler diagnostics. */
static unsigned col_at(size_t pos) {
  return (unsigned)pos + 1;
}

/* ---- lexing ---- */

static int is_ident(char c) {
  return isalnum((unsigned char)c) || c == '_';
}

static void skip_space(bwrl__line *lc) {
  while (lc->pos < lc->len && bwrl__is_space(lc->s[lc->pos]))
    lc->pos++;
}

static int at_end(const bwrl__line *lc) {
  return lc->pos >= lc->len || lc->s[lc->pos] == '#';
}

/* Length of the run of non-space bytes at pos. */
static size_t word_len(const bwrl__line *lc, size_t pos) {
  size_t n = 0;
  while (pos + n < lc->len && !bwrl__is_space(lc->s[pos + n]))
    n++;
  return n;
}

int bwrl__valid_ident(const char *s, size_t n) {
  if (n == 0 || !bwrl__is_ident_start(s[0]))
    return 0;
  for (size_t i = 1; i < n; i++) {
    if (!is_ident(s[i]))
      return 0;
  }
  return 1;
}

/* Allow patterns may also hold glob characters and C++ name punctuation. */
int bwrl__valid_pattern(const char *s, size_t n) {
  if (n == 0)
    return 0;
  for (size_t i = 0; i < n; i++) {
    /* strchr() would also "find" a NUL byte: test it first. */
    if (!is_ident(s[i]) && (s[i] == '\0' || !strchr("*?:~", s[i])))
      return 0;
  }
  return 1;
}

/* Reads a bare or quoted value at pos into the scratch buffer. Returns the
 * NUL-terminated value (length in *n) or NULL after reporting an error. */
static const char *read_value(bwrl__line *lc, size_t *n, const char *what) {
  char q[BWRL__QUOTE_BUF];
  char *out = lc->scratch + lc->scratch_used;
  size_t k = 0;
  size_t start = lc->pos;
  if (lc->pos < lc->len && lc->s[lc->pos] == '"') {
    lc->pos++;
    for (;;) {
      if (lc->pos >= lc->len) {
        bwrl__fail(lc, col_at(start), "unterminated string '%s'",
                   bwrl__quote(lc->s + start, lc->len - start, q));
        return NULL;
      }
      char c = lc->s[lc->pos++];
      if (c == '"')
        break;
      if (c == '\\') {
        char e = lc->pos < lc->len ? lc->s[lc->pos] : '\0';
        if (e != '"' && e != '\\') {
          bwrl__fail(
              lc, col_at(lc->pos - 1),
              "bad escape '%s' in string (only \\\" and \\\\ are allowed)",
              bwrl__quote(lc->s + lc->pos - 1, lc->pos < lc->len ? 2 : 1, q));
          return NULL;
        }
        c = e;
        lc->pos++;
      }
      out[k++] = c;
    }
    if (lc->pos < lc->len && !bwrl__is_space(lc->s[lc->pos])) {
      bwrl__fail(lc, col_at(lc->pos),
                 "expected a space after the string, got '%s'",
                 bwrl__quote(lc->s + lc->pos, word_len(lc, lc->pos), q));
      return NULL;
    }
  } else {
    while (lc->pos < lc->len && !bwrl__is_space(lc->s[lc->pos])) {
      char c = lc->s[lc->pos++];
      if (c == '"') {
        size_t w = word_len(lc, start);
        bwrl__fail(lc, col_at(start),
                   "unexpected '\"' inside %s '%s' (quote the whole value)",
                   what, bwrl__quote(lc->s + start, w, q));
        return NULL;
      }
      out[k++] = c;
    }
  }
  out[k] = '\0';
  lc->scratch_used += k + 1;
  *n = k;
  return out;
}

/* Reads key=value fields up to the end of the line or a comment. */
int bwrl__read_fields(bwrl__line *lc, const bwrl__key_spec *keys,
                      const char *kind) {
  char q[BWRL__QUOTE_BUF];
  lc->n_fields = 0;
  for (;;) {
    skip_space(lc);
    if (at_end(lc))
      return 0;
    size_t start = lc->pos;
    size_t klen = 0;
    while (start + klen < lc->len && lc->s[start + klen] != '=' &&
           !bwrl__is_space(lc->s[start + klen]))
      klen++;
    if (start + klen >= lc->len || lc->s[start + klen] != '=') {
      bwrl__fail(lc, col_at(start), "expected key=value, got '%s'",
                 bwrl__quote(lc->s + start, klen, q));
      return -EINVAL;
    }
    const bwrl__key_spec *spec = keys;
    while (spec->name && (strlen(spec->name) != klen ||
                          memcmp(spec->name, lc->s + start, klen) != 0))
      spec++;
    if (spec->name == NULL) {
      bwrl__fail(lc, col_at(start), "unknown key '%s' in %s rule",
                 bwrl__quote(lc->s + start, klen, q), kind);
      return -EINVAL;
    }
    for (size_t i = 0; i < lc->n_fields && !spec->repeatable; i++) {
      if (lc->fields[i].key == spec->name) {
        bwrl__fail(lc, col_at(start), "duplicate key '%s'", spec->name);
        return -EINVAL;
      }
    }
    if (lc->n_fields == BWRL__MAX_FIELDS) {
      bwrl__fail(lc, col_at(start), "too many fields (at most %d)",
                 BWRL__MAX_FIELDS);
      return -EINVAL;
    }
    lc->pos = start + klen + 1;
    bwrl__field *f = &lc->fields[lc->n_fields];
    f->key = spec->name;
    f->key_column = col_at(start);
    f->column = col_at(lc->pos);
    if (lc->pos >= lc->len || bwrl__is_space(lc->s[lc->pos])) {
      bwrl__fail(lc, f->column, "empty value for key '%s'", spec->name);
      return -EINVAL;
    }
    f->value = read_value(lc, &f->len, "value");
    if (f->value == NULL)
      return -EINVAL;
    lc->n_fields++;
  }
}

const bwrl__field *bwrl__get_field(const bwrl__line *lc, const char *key) {
  for (size_t i = 0; i < lc->n_fields; i++) {
    if (strcmp(lc->fields[i].key, key) == 0)
      return &lc->fields[i];
  }
  return NULL;
}

const char *bwrl__keep(bwrl__line *lc, const char *s, size_t n) {
  char *out = bwrl__arena_strndup(&lc->ld->rs->arena, s, n);
  if (out == NULL)
    lc->ld->oom = 1;
  return out;
}

/* Nothing but a comment may follow the subject of include:, enable: and
 * disable:. */
int bwrl__expect_end(bwrl__line *lc, const char *kind) {
  char q[BWRL__QUOTE_BUF];
  skip_space(lc);
  if (at_end(lc))
    return 0;
  bwrl__fail(lc, col_at(lc->pos), "unexpected text '%s' after %s",
             bwrl__quote(lc->s + lc->pos, lc->len - lc->pos, q), kind);
  return -EINVAL;
}

static void parse_line(bwrl__line *lc) {
  char q[BWRL__QUOTE_BUF];
  skip_space(lc);
  if (at_end(lc))
    return;
  size_t kstart = lc->pos;
  unsigned kcol = col_at(kstart);
  size_t klen = 0;
  while (kstart + klen < lc->len && lc->s[kstart + klen] != ':' &&
         !bwrl__is_space(lc->s[kstart + klen]))
    klen++;
  const bwrl__directive *d = bwrl__directives;
  while (d->word && (strlen(d->word) != klen ||
                     memcmp(d->word, lc->s + kstart, klen) != 0))
    d++;
  if (d->word == NULL) {
    bwrl__fail(lc, kcol,
               "unknown rule kind '%s' (expected blocking, entry, posts, "
               "passes, nonblocking, ready, hint, allow, include, enable or "
               "disable)",
               bwrl__quote(lc->s + kstart, klen, q));
    return;
  }
  lc->pos = kstart + klen;
  if (lc->pos >= lc->len || lc->s[lc->pos] != ':') {
    bwrl__fail(lc, col_at(lc->pos), "expected ':' after '%s'", d->word);
    return;
  }
  lc->pos++;
  skip_space(lc);
  bwrl__subject subj;
  subj.column = col_at(lc->pos);
  if (at_end(lc)) {
    bwrl__fail(lc, subj.column, "missing %s after '%s:'", d->subject, d->word);
    return;
  }
  subj.text = read_value(lc, &subj.len, d->subject);
  if (subj.text == NULL)
    return;
  if (subj.len == 0) {
    bwrl__fail(lc, subj.column, "empty %s after '%s:'", d->subject, d->word);
    return;
  }
  d->run(lc, &subj, kcol);
}

void bwrl__parse(bwrl__load *ld, const char *file, const char *dir,
                 const char *api, const char *text, size_t len) {
  char *scratch = malloc(2 * len + 64);
  if (scratch == NULL) {
    ld->oom = 1;
    return;
  }
  bwrl__line lc = {0};
  lc.ld = ld;
  lc.file = file;
  lc.dir = dir;
  lc.api = api;
  lc.scratch = scratch;
  size_t pos = 0;
  unsigned lineno = 0;
  while (pos < len && !ld->oom) {
    const char *nl = memchr(text + pos, '\n', len - pos);
    size_t end = nl ? (size_t)(nl - text) : len;
    lc.s = text + pos;
    lc.len = end - pos;
    if (lc.len > 0 && lc.s[lc.len - 1] == '\r')
      lc.len--;
    lc.lineno = ++lineno;
    lc.pos = 0;
    lc.failed = 0;
    lc.scratch_used = 0;
    const char *nul = memchr(lc.s, '\0', lc.len);
    if (nul != NULL)
      bwrl__fail(&lc, col_at((size_t)(nul - lc.s)), "NUL byte in rule text");
    else
      parse_line(&lc);
    pos = end + 1;
  }
  free(scratch);
}