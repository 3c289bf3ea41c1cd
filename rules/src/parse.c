/* The rule-file parser: one directive per line, `kind:subject key=value...`.
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

/* Highest argument index a rule may name. */
#define MAX_ARG 31
/* Most key=value fields on one line. */
#define MAX_FIELDS 16
/* Longest quotation of offending text in a message. */
#define QUOTE_MAX 60

typedef struct field {
  const char *key; /* points into the kind's key table */
  const char *value;
  size_t len;
  unsigned column; /* of the value's first character (or its quote) */
  unsigned key_column;
} field;

typedef struct line_ctx {
  bwrl__load *ld;
  const char *file;
  const char *dir;
  const char *api;
  unsigned lineno;
  const char *s; /* the line, without its newline */
  size_t len;
  size_t pos;
  int failed;
  char *scratch; /* unescaped values */
  size_t scratch_used;
  field fields[MAX_FIELDS];
  size_t n_fields;
} line_ctx;

/* ---- errors ---- */

/* Copies at most QUOTE_MAX bytes of s for quoting, marking a cut with "...";
 * control bytes are shown as '?', so the message stays one line. */
static const char *quote(const char *s, size_t n, char *out) {
  size_t k = n > QUOTE_MAX ? QUOTE_MAX : n;
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
__attribute__((format(printf, 3, 4))) static void
fail(line_ctx *lc, unsigned col, const char *fmt, ...) {
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

static int is_space(char c) {
  return c == ' ' || c == '\t';
}

static int is_ident_start(char c) {
  return isalpha((unsigned char)c) || c == '_';
}

static int is_ident(char c) {
  return isalnum((unsigned char)c) || c == '_';
}

static void skip_space(line_ctx *lc) {
  while (lc->pos < lc->len && is_space(lc->s[lc->pos]))
    lc->pos++;
}

static int at_end(const line_ctx *lc) {
  return lc->pos >= lc->len || lc->s[lc->pos] == '#';
}

/* Length of the run of non-space bytes at pos. */
static size_t word_len(const line_ctx *lc, size_t pos) {
  size_t n = 0;
  while (pos + n < lc->len && !is_space(lc->s[pos + n]))
    n++;
  return n;
}

static int valid_ident(const char *s, size_t n) {
  if (n == 0 || !is_ident_start(s[0]))
    return 0;
  for (size_t i = 1; i < n; i++) {
    if (!is_ident(s[i]))
      return 0;
  }
  return 1;
}

/* Allow patterns may also hold glob characters and C++ name punctuation. */
static int valid_pattern(const char *s, size_t n) {
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
static const char *read_value(line_ctx *lc, size_t *n, const char *what) {
  char q[QUOTE_MAX + 4];
  char *out = lc->scratch + lc->scratch_used;
  size_t k = 0;
  size_t start = lc->pos;
  if (lc->pos < lc->len && lc->s[lc->pos] == '"') {
    lc->pos++;
    for (;;) {
      if (lc->pos >= lc->len) {
        fail(lc, col_at(start), "unterminated string '%s'",
             quote(lc->s + start, lc->len - start, q));
        return NULL;
      }
      char c = lc->s[lc->pos++];
      if (c == '"')
        break;
      if (c == '\\') {
        char e = lc->pos < lc->len ? lc->s[lc->pos] : '\0';
        if (e != '"' && e != '\\') {
          fail(lc, col_at(lc->pos - 1),
               "bad escape '%s' in string (only \\\" and \\\\ are allowed)",
               quote(lc->s + lc->pos - 1, lc->pos < lc->len ? 2 : 1, q));
          return NULL;
        }
        c = e;
        lc->pos++;
      }
      out[k++] = c;
    }
    if (lc->pos < lc->len && !is_space(lc->s[lc->pos])) {
      fail(lc, col_at(lc->pos), "expected a space after the string, got '%s'",
           quote(lc->s + lc->pos, word_len(lc, lc->pos), q));
      return NULL;
    }
  } else {
    while (lc->pos < lc->len && !is_space(lc->s[lc->pos])) {
      char c = lc->s[lc->pos++];
      if (c == '"') {
        size_t w = word_len(lc, start);
        fail(lc, col_at(start),
             "unexpected '\"' inside %s '%s' (quote the whole value)", what,
             quote(lc->s + start, w, q));
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

/* ---- numbers and conditions ---- */

/* Decimal or 0x-hex, optionally negative, nothing else. */
static int parse_number(const char *s, long long *out) {
  const char *p = s;
  int neg = 0;
  if (*p == '-') {
    neg = 1;
    p++;
  }
  int base = 10;
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    base = 16;
    p += 2;
  }
  if (*p == '\0')
    return -EINVAL;
  unsigned long long v = 0;
  for (; *p; p++) {
    int d;
    if (*p >= '0' && *p <= '9')
      d = *p - '0';
    else if (base == 16 && isxdigit((unsigned char)*p))
      d = tolower((unsigned char)*p) - 'a' + 10;
    else
      return -EINVAL;
    if (v > (0x8000000000000000ull - (unsigned)d) / (unsigned)base)
      return -ERANGE;
    v = v * (unsigned)base + (unsigned)d;
  }
  if (!neg && v > 0x7fffffffffffffffull)
    return -ERANGE;
  *out = neg ? (long long)(0 - v) : (long long)v;
  return 0;
}

/* An argument index: decimal 0..MAX_ARG, no sign, no leading junk. */
static int parse_arg_index(const char *s, size_t n, int *out) {
  if (n == 0 || n > 2)
    return -EINVAL;
  int v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -EINVAL;
    v = v * 10 + (s[i] - '0');
  }
  if (v > MAX_ARG)
    return -EINVAL;
  *out = v;
  return 0;
}

/* Splits a condition into at most 5 space-separated tokens, in place. */
static size_t split(char *s, char **tok, size_t max) {
  size_t n = 0;
  char *p = s;
  while (*p) {
    while (is_space(*p))
      *p++ = '\0';
    if (!*p)
      break;
    if (n == max)
      return max + 1;
    tok[n++] = p;
    while (*p && !is_space(*p))
      p++;
  }
  return n;
}

/* "NAME=number" or "number" -> value (and name into the arena). */
static int parse_constant(line_ctx *lc, const char *tok, unsigned col,
                          bw_rule_cond *cond) {
  char q[QUOTE_MAX + 4];
  const char *eq = strchr(tok, '=');
  const char *num = tok;
  if (eq != NULL) {
    if (!valid_ident(tok, (size_t)(eq - tok))) {
      fail(lc, col, "bad constant name '%s' in condition",
           quote(tok, (size_t)(eq - tok), q));
      return -EINVAL;
    }
    num = eq + 1;
  } else if (is_ident_start(tok[0])) {
    fail(lc, col,
         "constant '%s' needs its value for the shim: write %s=<number>",
         quote(tok, strlen(tok), q), quote(tok, strlen(tok), q));
    return -EINVAL;
  }
  if (parse_number(num, &cond->value)) {
    fail(lc, col, "bad number '%s' in condition", quote(num, strlen(num), q));
    return -EINVAL;
  }
  cond->name = NULL;
  if (eq != NULL) {
    cond->name =
        bwrl__arena_strndup(&lc->ld->rs->arena, tok, (size_t)(eq - tok));
    if (cond->name == NULL) {
      lc->ld->oom = 1;
      return -ENOMEM;
    }
  }
  return 0;
}

/* "argN is|has ..." (see README.md, "Conditions"). */
static int parse_condition(line_ctx *lc, const field *f, bw_rule_cond *cond) {
  char q[QUOTE_MAX + 4];
  char buf[256];
  if (f->len >= sizeof(buf)) {
    fail(lc, f->column, "condition too long '%s'", quote(f->value, f->len, q));
    return -EINVAL;
  }
  memcpy(buf, f->value, f->len + 1);
  char *tok[5];
  size_t n = split(buf, tok, 4);
  if (n < 3 || n > 4 || strncmp(tok[0], "arg", 3) != 0 ||
      (strcmp(tok[1], "is") != 0 && strcmp(tok[1], "has") != 0)) {
    fail(lc, f->column,
         "bad condition '%s': expected 'argN is ...' or 'argN has ...'",
         quote(f->value, f->len, q));
    return -EINVAL;
  }
  if (parse_arg_index(tok[0] + 3, strlen(tok[0] + 3), &cond->arg)) {
    fail(lc, f->column, "bad argument index '%s' (expected arg0 to arg%d)",
         quote(tok[0], strlen(tok[0]), q), MAX_ARG);
    return -EINVAL;
  }
  cond->value = 0;
  cond->name = NULL;
  int is = strcmp(tok[1], "is") == 0;
  if (n == 4) {
    if (!is || strcmp(tok[2], "not") != 0 || strcmp(tok[3], "NULL") != 0) {
      fail(lc, f->column, "bad condition '%s'", quote(f->value, f->len, q));
      return -EINVAL;
    }
    cond->kind = BW_COND_NOT_NULL;
    return 0;
  }
  if (!is) {
    cond->kind = BW_COND_HAS_FLAG;
    if (parse_constant(lc, tok[2], f->column, cond))
      return -EINVAL;
    if (cond->value == 0) {
      fail(lc, f->column, "flag '%s' has no bits set",
           quote(tok[2], strlen(tok[2]), q));
      return -EINVAL;
    }
    return 0;
  }
  if (strcmp(tok[2], "NULL") == 0)
    cond->kind = BW_COND_IS_NULL;
  else if (strcmp(tok[2], "nonblocking-fd") == 0)
    cond->kind = BW_COND_NONBLOCKING_FD;
  else if (strcmp(tok[2], "nonblocking-file") == 0)
    cond->kind = BW_COND_NONBLOCKING_FILE;
  else if (strcmp(tok[2], "zero-timeout") == 0)
    cond->kind = BW_COND_ZERO_TIMEOUT;
  else {
    cond->kind = BW_COND_EQUALS;
    return parse_constant(lc, tok[2], f->column, cond);
  }
  return 0;
}

/* ---- fields ---- */

typedef struct key_spec {
  const char *name;
  int repeatable;
} key_spec;

static const key_spec blocking_keys[] = {
    {"category", 0}, {"severity", 0}, {"message", 0}, {"hint", 0},
    {"unless", 1},   {"api", 0},      {NULL, 0}};
static const key_spec entry_keys[] = {
    {"arg", 0},    {"on", 0},  {"field", 0}, {"setter", 0},
    {"object", 0}, {"api", 0}, {NULL, 0}};
static const key_spec allow_keys[] = {{"reason", 0}, {NULL, 0}};

/* Reads key=value fields up to the end of the line or a comment. */
static int read_fields(line_ctx *lc, const key_spec *keys, const char *kind) {
  char q[QUOTE_MAX + 4];
  lc->n_fields = 0;
  for (;;) {
    skip_space(lc);
    if (at_end(lc))
      return 0;
    size_t start = lc->pos;
    size_t klen = 0;
    while (start + klen < lc->len && lc->s[start + klen] != '=' &&
           !is_space(lc->s[start + klen]))
      klen++;
    if (start + klen >= lc->len || lc->s[start + klen] != '=') {
      fail(lc, col_at(start), "expected key=value, got '%s'",
           quote(lc->s + start, klen, q));
      return -EINVAL;
    }
    const key_spec *spec = keys;
    while (spec->name && (strlen(spec->name) != klen ||
                          memcmp(spec->name, lc->s + start, klen) != 0))
      spec++;
    if (spec->name == NULL) {
      fail(lc, col_at(start), "unknown key '%s' in %s rule",
           quote(lc->s + start, klen, q), kind);
      return -EINVAL;
    }
    for (size_t i = 0; i < lc->n_fields && !spec->repeatable; i++) {
      if (lc->fields[i].key == spec->name) {
        fail(lc, col_at(start), "duplicate key '%s'", spec->name);
        return -EINVAL;
      }
    }
    if (lc->n_fields == MAX_FIELDS) {
      fail(lc, col_at(start), "too many fields (at most %d)", MAX_FIELDS);
      return -EINVAL;
    }
    lc->pos = start + klen + 1;
    field *f = &lc->fields[lc->n_fields];
    f->key = spec->name;
    f->key_column = col_at(start);
    f->column = col_at(lc->pos);
    if (lc->pos >= lc->len || is_space(lc->s[lc->pos])) {
      fail(lc, f->column, "empty value for key '%s'", spec->name);
      return -EINVAL;
    }
    f->value = read_value(lc, &f->len, "value");
    if (f->value == NULL)
      return -EINVAL;
    lc->n_fields++;
  }
}

static const field *get_field(const line_ctx *lc, const char *key) {
  for (size_t i = 0; i < lc->n_fields; i++) {
    if (strcmp(lc->fields[i].key, key) == 0)
      return &lc->fields[i];
  }
  return NULL;
}

static const char *keep(line_ctx *lc, const char *s, size_t n) {
  char *out = bwrl__arena_strndup(&lc->ld->rs->arena, s, n);
  if (out == NULL)
    lc->ld->oom = 1;
  return out;
}

/* ---- directives ---- */

typedef struct subject {
  const char *text;
  size_t len;
  unsigned column;
} subject;

static void add_blocking(line_ctx *lc, const subject *subj, unsigned kcol) {
  char q[QUOTE_MAX + 4];
  if (!valid_ident(subj->text, subj->len)) {
    fail(lc, subj->column, "invalid function name '%s'",
         quote(subj->text, subj->len, q));
    return;
  }
  if (read_fields(lc, blocking_keys, "blocking"))
    return;
  bw_blocking_rule tmp = {0};
  tmp.severity = BW_SEVERITY_WARNING;
  const field *f = get_field(lc, "category");
  if (f == NULL) {
    fail(lc, kcol, "missing required key 'category' in blocking rule for '%s'",
         quote(subj->text, subj->len, q));
    return;
  }
  if (bw_rule_category_parse(f->value, &tmp.category)) {
    fail(lc, f->column, "unknown category '%s'", quote(f->value, f->len, q));
    return;
  }
  if ((f = get_field(lc, "severity")) != NULL) {
    if (strcmp(f->value, "note") == 0)
      tmp.severity = BW_SEVERITY_NOTE;
    else if (strcmp(f->value, "warning") == 0)
      tmp.severity = BW_SEVERITY_WARNING;
    else if (strcmp(f->value, "error") == 0)
      tmp.severity = BW_SEVERITY_ERROR;
    else {
      fail(lc, f->column,
           "unknown severity '%s' (expected note, warning or error)",
           quote(f->value, f->len, q));
      return;
    }
  }
  for (size_t i = 0; i < lc->n_fields; i++) {
    f = &lc->fields[i];
    if (strcmp(f->key, "unless") != 0)
      continue;
    if (tmp.n_unless == BW_RULE_MAX_CONDS) {
      fail(lc, f->key_column, "too many 'unless' conditions (at most %d)",
           BW_RULE_MAX_CONDS);
      return;
    }
    if (parse_condition(lc, f, &tmp.unless[tmp.n_unless]))
      return;
    tmp.n_unless++;
  }
  const bw_blocking_rule *old = bwrl__load_find_blocking(lc->ld, subj->text);
  if (old != NULL) {
    fail(lc, subj->column,
         "duplicate blocking rule for '%s' (first defined at %s:%u)",
         subj->text, old->origin.file, old->origin.line);
    return;
  }
  tmp.function = keep(lc, subj->text, subj->len);
  tmp.id = bw_rule_category_id(tmp.category);
  f = get_field(lc, "api");
  tmp.api = f ? keep(lc, f->value, f->len) : lc->api;
  f = get_field(lc, "message");
  if (f != NULL) {
    tmp.message = keep(lc, f->value, f->len);
  } else {
    /* Default: "sleep() sleeps on a pool or loop thread". */
    char msg[512];
    int n = snprintf(msg, sizeof(msg), "%s() %s", subj->text,
                     bw_rule_category_description(tmp.category));
    tmp.message = keep(lc, msg, n < 0 ? 0 : (size_t)n);
  }
  f = get_field(lc, "hint");
  tmp.hint = f ? keep(lc, f->value, f->len) : bwrl__category_hint(tmp.category);
  tmp.origin.file = lc->file;
  tmp.origin.line = lc->lineno;
  if (!tmp.function || !tmp.api || !tmp.message || !tmp.hint)
    return;
  bw_blocking_rule *rule = malloc(sizeof(*rule));
  if (rule == NULL) {
    lc->ld->oom = 1;
    return;
  }
  *rule = tmp;
  if (bwrl__vec_push(&lc->ld->rs->blocking, rule)) {
    free(rule);
    lc->ld->oom = 1;
    return;
  }
  if (bwrl__index_put(&lc->ld->new_blocking, rule->function, rule))
    lc->ld->oom = 1;
}

static int same_callback(const bw_entry_callback *a,
                         const bw_entry_callback *b) {
  if (a->kind != b->kind || a->arg != b->arg || a->object != b->object)
    return 0;
  if ((a->field == NULL) != (b->field == NULL) ||
      (a->field && strcmp(a->field, b->field) != 0))
    return 0;
  if ((a->setter == NULL) != (b->setter == NULL) ||
      (a->setter && strcmp(a->setter, b->setter) != 0))
    return 0;
  return 1;
}

static int parse_index_field(line_ctx *lc, const field *f, int *out) {
  char q[QUOTE_MAX + 4];
  if (parse_arg_index(f->value, f->len, out)) {
    fail(lc, f->column, "bad argument index '%s' for '%s' (expected 0 to %d)",
         quote(f->value, f->len, q), f->key, MAX_ARG);
    return -EINVAL;
  }
  return 0;
}

static void add_entry(line_ctx *lc, const subject *subj, unsigned kcol) {
  char q[QUOTE_MAX + 4];
  if (!valid_ident(subj->text, subj->len)) {
    fail(lc, subj->column, "invalid function name '%s'",
         quote(subj->text, subj->len, q));
    return;
  }
  if (read_fields(lc, entry_keys, "entry"))
    return;
  bw_entry_callback cb = {0};
  cb.kind = BW_CALLBACK_ARG;
  cb.object = -1;
  const field *arg = get_field(lc, "arg");
  const field *on = get_field(lc, "on");
  const field *fld = get_field(lc, "field");
  const field *setter = get_field(lc, "setter");
  const field *object = get_field(lc, "object");
  if (arg == NULL || on == NULL) {
    fail(lc, kcol, "missing required key '%s' in entry rule for '%s'",
         arg == NULL ? "arg" : "on", quote(subj->text, subj->len, q));
    return;
  }
  if (parse_index_field(lc, arg, &cb.arg))
    return;
  if (strcmp(on->value, "pool") == 0)
    cb.runs_on = BW_RUNS_ON_POOL;
  else if (strcmp(on->value, "loop") == 0)
    cb.runs_on = BW_RUNS_ON_LOOP;
  else {
    fail(lc, on->column, "unknown value '%s' for 'on' (expected pool or loop)",
         quote(on->value, on->len, q));
    return;
  }
  if (fld != NULL && setter != NULL) {
    fail(lc, setter->key_column, "'field' and 'setter' cannot be combined");
    return;
  }
  if (fld != NULL) {
    if (!valid_ident(fld->value, fld->len)) {
      fail(lc, fld->column, "invalid field name '%s'",
           quote(fld->value, fld->len, q));
      return;
    }
    cb.kind = BW_CALLBACK_FIELD;
  }
  if (setter != NULL) {
    if (!valid_ident(setter->value, setter->len)) {
      fail(lc, setter->column, "invalid function name '%s'",
           quote(setter->value, setter->len, q));
      return;
    }
    if (object == NULL) {
      fail(lc, setter->key_column,
           "'setter' needs 'object' (the argument "
           "the callback was set on)");
      return;
    }
    cb.kind = BW_CALLBACK_SETTER;
  }
  if (object != NULL) {
    if (setter == NULL) {
      fail(lc, object->key_column, "'object' is only valid with 'setter'");
      return;
    }
    if (parse_index_field(lc, object, &cb.object))
      return;
  }
  const field *api = get_field(lc, "api");
  const char *api_name = api ? api->value : lc->api;
  /* Compare with the scratch copies first: nothing is kept on error. */
  cb.field = fld ? fld->value : NULL;
  cb.setter = setter ? setter->value : NULL;
  bw_entry_rule *rule = bwrl__load_find_entry(lc->ld, subj->text);
  if (rule != NULL) {
    if (strcmp(rule->api, api_name) != 0) {
      fail(lc, api ? api->column : kcol,
           "conflicting api '%s' for entry '%s' (first defined with api "
           "'%s' at %s:%u)",
           api_name, subj->text, rule->api, rule->callbacks[0].origin.file,
           rule->callbacks[0].origin.line);
      return;
    }
    for (size_t i = 0; i < rule->n_callbacks; i++) {
      if (same_callback(&rule->callbacks[i], &cb)) {
        fail(lc, arg->key_column,
             "duplicate callback arg=%d for entry '%s' (first defined at "
             "%s:%u)",
             cb.arg, subj->text, rule->callbacks[i].origin.file,
             rule->callbacks[i].origin.line);
        return;
      }
    }
    if (rule->n_callbacks == BW_ENTRY_MAX_CALLBACKS) {
      fail(lc, kcol, "too many callbacks for entry '%s' (at most %d)",
           subj->text, BW_ENTRY_MAX_CALLBACKS);
      return;
    }
  }
  cb.field = fld ? keep(lc, fld->value, fld->len) : NULL;
  cb.setter = setter ? keep(lc, setter->value, setter->len) : NULL;
  cb.origin.file = lc->file;
  cb.origin.line = lc->lineno;
  if ((fld && !cb.field) || (setter && !cb.setter))
    return;
  if (rule != NULL) {
    rule->callbacks[rule->n_callbacks++] = cb;
    return;
  }
  rule = calloc(1, sizeof(*rule));
  if (rule == NULL) {
    lc->ld->oom = 1;
    return;
  }
  rule->function = keep(lc, subj->text, subj->len);
  rule->api = api ? keep(lc, api->value, api->len) : lc->api;
  rule->n_callbacks = 1;
  rule->callbacks[0] = cb;
  if (!rule->function || !rule->api ||
      bwrl__vec_push(&lc->ld->rs->entries, rule)) {
    free(rule);
    lc->ld->oom = 1;
    return;
  }
  if (bwrl__index_put(&lc->ld->new_entries, rule->function, rule))
    lc->ld->oom = 1;
}

static void add_allow(line_ctx *lc, const subject *subj) {
  char q[QUOTE_MAX + 4];
  if (!valid_pattern(subj->text, subj->len)) {
    fail(lc, subj->column, "invalid function pattern '%s'",
         quote(subj->text, subj->len, q));
    return;
  }
  if (read_fields(lc, allow_keys, "allow"))
    return;
  bwrl__vec *allows = &lc->ld->rs->allows;
  for (size_t i = 0; i < allows->n; i++) {
    const bw_allow_rule *old = allows->items[i];
    if (strcmp(old->pattern, subj->text) == 0) {
      fail(lc, subj->column,
           "duplicate allow rule for '%s' (first defined at %s:%u)", subj->text,
           old->origin.file, old->origin.line);
      return;
    }
  }
  const field *reason = get_field(lc, "reason");
  bw_allow_rule *rule = malloc(sizeof(*rule));
  if (rule == NULL) {
    lc->ld->oom = 1;
    return;
  }
  rule->pattern = keep(lc, subj->text, subj->len);
  rule->reason = reason ? keep(lc, reason->value, reason->len) : "";
  rule->origin.file = lc->file;
  rule->origin.line = lc->lineno;
  if (!rule->pattern || !rule->reason || bwrl__vec_push(allows, rule)) {
    free(rule);
    lc->ld->oom = 1;
  }
}

/* Nothing but a comment may follow the subject of these directives. */
static int expect_end(line_ctx *lc, const char *kind) {
  char q[QUOTE_MAX + 4];
  skip_space(lc);
  if (at_end(lc))
    return 0;
  fail(lc, col_at(lc->pos), "unexpected text '%s' after %s",
       quote(lc->s + lc->pos, lc->len - lc->pos, q), kind);
  return -EINVAL;
}

static void do_include(line_ctx *lc, const subject *subj) {
  if (expect_end(lc, "include"))
    return;
  char *path;
  if (subj->text[0] == '/' || lc->dir[0] == '\0') {
    path = (char *)keep(lc, subj->text, subj->len);
  } else {
    size_t dl = strlen(lc->dir);
    path = malloc(dl + subj->len + 2);
    if (path != NULL) {
      memcpy(path, lc->dir, dl);
      /* dir "/" already ends with the separator. */
      size_t at = dl;
      if (lc->dir[dl - 1] != '/')
        path[at++] = '/';
      memcpy(path + at, subj->text, subj->len + 1);
      const char *kept = keep(lc, path, strlen(path));
      free(path);
      path = (char *)kept;
    } else {
      lc->ld->oom = 1;
    }
  }
  if (path == NULL)
    return;
  size_t before = lc->ld->n_errors;
  bwrl__load_path(lc->ld, path, lc->file, lc->lineno, subj->column);
  /* Errors inside the included file were already reported there. */
  if (lc->ld->n_errors != before)
    lc->failed = 1;
}

static void do_category(line_ctx *lc, const subject *subj, int on) {
  char q[QUOTE_MAX + 4];
  bw_rule_category cat;
  if (bw_rule_category_parse(subj->text, &cat)) {
    fail(lc, subj->column, "unknown category '%s'",
         quote(subj->text, subj->len, q));
    return;
  }
  if (expect_end(lc, on ? "enable" : "disable"))
    return;
  lc->ld->rs->enabled[cat] = (unsigned char)on;
}

typedef enum kind {
  K_BLOCKING,
  K_ENTRY,
  K_ALLOW,
  K_INCLUDE,
  K_ENABLE,
  K_DISABLE
} kind;
static const char *const kind_names[] = {
    "blocking", "entry", "allow", "include", "enable", "disable", NULL};
static const char *const subject_names[] = {"function name",    "function name",
                                            "function pattern", "file name",
                                            "category",         "category"};

static void parse_line(line_ctx *lc) {
  char q[QUOTE_MAX + 4];
  skip_space(lc);
  if (at_end(lc))
    return;
  size_t kstart = lc->pos;
  unsigned kcol = col_at(kstart);
  size_t klen = 0;
  while (kstart + klen < lc->len && lc->s[kstart + klen] != ':' &&
         !is_space(lc->s[kstart + klen]))
    klen++;
  int k = 0;
  while (kind_names[k] && (strlen(kind_names[k]) != klen ||
                           memcmp(kind_names[k], lc->s + kstart, klen) != 0))
    k++;
  if (kind_names[k] == NULL) {
    fail(lc, kcol,
         "unknown rule kind '%s' (expected blocking, entry, allow, include, "
         "enable or disable)",
         quote(lc->s + kstart, klen, q));
    return;
  }
  lc->pos = kstart + klen;
  if (lc->pos >= lc->len || lc->s[lc->pos] != ':') {
    fail(lc, col_at(lc->pos), "expected ':' after '%s'", kind_names[k]);
    return;
  }
  lc->pos++;
  skip_space(lc);
  subject subj;
  subj.column = col_at(lc->pos);
  if (at_end(lc)) {
    fail(lc, subj.column, "missing %s after '%s:'", subject_names[k],
         kind_names[k]);
    return;
  }
  subj.text = read_value(lc, &subj.len, subject_names[k]);
  if (subj.text == NULL)
    return;
  if (subj.len == 0) {
    fail(lc, subj.column, "empty %s after '%s:'", subject_names[k],
         kind_names[k]);
    return;
  }
  switch ((kind)k) {
  case K_BLOCKING:
    add_blocking(lc, &subj, kcol);
    break;
  case K_ENTRY:
    add_entry(lc, &subj, kcol);
    break;
  case K_ALLOW:
    add_allow(lc, &subj);
    break;
  case K_INCLUDE:
    do_include(lc, &subj);
    break;
  case K_ENABLE:
    do_category(lc, &subj, 1);
    break;
  case K_DISABLE:
    do_category(lc, &subj, 0);
    break;
  }
}

void bwrl__parse(bwrl__load *ld, const char *file, const char *dir,
                 const char *api, const char *text, size_t len) {
  char *scratch = malloc(2 * len + 64);
  if (scratch == NULL) {
    ld->oom = 1;
    return;
  }
  line_ctx lc = {0};
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
      fail(&lc, col_at((size_t)(nul - lc.s)), "NUL byte in rule text");
    else
      parse_line(&lc);
    pos = end + 1;
  }
  free(scratch);
}
