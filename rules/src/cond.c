/* Conditions of blocking rules (`unless="arg1 has O_NONBLOCK=0x800"`) and
 * the numbers inside them; the grammar is in rules/README.md, "Conditions".
 *
 * Invariants: numbers are parsed strictly (decimal or 0x-hex to the end of
 * the token, range-checked into a long long); a condition is split in a
 * bounded copy, so the field stays intact for the messages that quote it;
 * a constant may be several operands joined by '|', which are ORed (there
 * is no other operator, and no spaces inside one).
 */
#include "rules_internal.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

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

/* An argument index: decimal 0..BWRL__MAX_ARG, no sign, no leading junk. */
int bwrl__parse_arg_index(const char *s, size_t n, int *out) {
  if (n == 0 || n > 2)
    return -EINVAL;
  int v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -EINVAL;
    v = v * 10 + (s[i] - '0');
  }
  if (v > BWRL__MAX_ARG)
    return -EINVAL;
  *out = v;
  return 0;
}

/* Splits a condition into at most `max` space-separated tokens, in place
 * (max + 1: more). */
static size_t split(char *s, char **tok, size_t max) {
  size_t n = 0;
  char *p = s;
  while (*p) {
    while (bwrl__is_space(*p))
      *p++ = '\0';
    if (!*p)
      break;
    if (n == max)
      return max + 1;
    tok[n++] = p;
    while (*p && !bwrl__is_space(*p))
      p++;
  }
  return n;
}

/* The column of `tok`, a token of the copy `buf` of field f's value (one
 * further when the value is quoted). */
static unsigned column_of(const bwrl__line *lc, const bwrl__field *f,
                          const char *buf, const char *tok) {
  unsigned quote =
      f->column >= 1 && f->column - 1 < lc->len && lc->s[f->column - 1] == '"';
  return f->column + quote + (unsigned)(tok - buf);
}

/* One operand of a constant: "NAME=number" or "number". */
static int parse_operand(bwrl__line *lc, const char *tok, size_t len,
                         unsigned col, long long *value, size_t *name_len) {
  char q[BWRL__QUOTE_BUF];
  char num[32];
  const char *eq = memchr(tok, '=', len);
  const char *digits = eq ? eq + 1 : tok;
  size_t dlen = len - (size_t)(digits - tok);
  *name_len = eq ? (size_t)(eq - tok) : 0;
  if (eq && !bwrl__valid_ident(tok, *name_len)) {
    bwrl__fail(lc, col, "bad constant name '%s' in condition",
               bwrl__quote(tok, *name_len, q));
    return -EINVAL;
  }
  if (!eq && len && bwrl__is_ident_start(tok[0])) {
    bwrl__fail(lc, col,
               "constant '%s' needs its value for the shim: write %s=<number>",
               bwrl__quote(tok, len, q), bwrl__quote(tok, len, q));
    return -EINVAL;
  }
  if (dlen == 0 || dlen >= sizeof(num)) {
    bwrl__fail(lc, col, "bad number '%s' in condition",
               bwrl__quote(digits, dlen, q));
    return -EINVAL;
  }
  memcpy(num, digits, dlen);
  num[dlen] = '\0';
  if (parse_number(num, value)) {
    bwrl__fail(lc, col, "bad number '%s' in condition",
               bwrl__quote(digits, dlen, q));
    return -EINVAL;
  }
  return 0;
}

/* "NAME=number", "number", or several of them joined by '|' (the flags
 * ORed: "NI_NUMERICHOST=1|NI_NUMERICSERV=2") -> value, and the names as
 * written ("NI_NUMERICHOST|NI_NUMERICSERV") into the arena; name stays
 * NULL when no operand has one. */
static int parse_constant(bwrl__line *lc, const bwrl__field *f, const char *buf,
                          const char *tok, bw_rule_cond *cond) {
  char names[256];
  size_t nlen = 0;
  int named = 0;
  cond->value = 0;
  cond->name = NULL;
  /* A lone constant is named by the condition's column, as it always was;
   * an operand of a '|' list by its own. */
  int list = strchr(tok, '|') != NULL;
  for (const char *p = tok;;) {
    const char *bar = strchr(p, '|');
    size_t len = bar ? (size_t)(bar - p) : strlen(p);
    long long value;
    size_t name_len;
    if (parse_operand(lc, p, len, list ? column_of(lc, f, buf, p) : f->column,
                      &value, &name_len))
      return -EINVAL;
    cond->value |= value;
    /* A bare number stands for itself among the names. */
    size_t shown = name_len ? name_len : len;
    named |= name_len != 0;
    if (nlen + shown + 2 < sizeof(names)) {
      if (nlen)
        names[nlen++] = '|';
      memcpy(names + nlen, p, shown);
      nlen += shown;
    }
    if (!bar)
      break;
    p = bar + 1;
  }
  if (named) {
    cond->name = bwrl__arena_strndup(&lc->ld->rs->arena, names, nlen);
    if (cond->name == NULL) {
      lc->ld->oom = 1;
      return -ENOMEM;
    }
  }
  return 0;
}

static int parse_condition(bwrl__line *lc, const bwrl__field *f,
                           bw_rule_cond *cond);

/* "argN is|has ..." (see README.md, "Conditions"); "argN->FIELD" only with
 * a constant or a flag. */
int bwrl__parse_condition(bwrl__line *lc, const bwrl__field *f,
                          bw_rule_cond *cond) {
  char q[BWRL__QUOTE_BUF];
  int err = parse_condition(lc, f, cond);
  if (!err && cond->field && cond->kind != BW_COND_EQUALS &&
      cond->kind != BW_COND_HAS_FLAG) {
    bwrl__fail(lc, f->column,
               "a field condition takes 'is <constant>' or 'has <flag>': "
               "'%s'",
               bwrl__quote(f->value, f->len, q));
    return -EINVAL;
  }
  return err;
}

/* Sets a condition whose operand is a name (a path prefix, a list of
 * makers), kept in the rule set's arena. */
static int keep_name(bwrl__line *lc, bw_rule_cond *cond, bw_cond_kind kind,
                     const char *name) {
  cond->kind = kind;
  cond->name = bwrl__arena_strndup(&lc->ld->rs->arena, name, strlen(name));
  if (cond->name == NULL) {
    lc->ld->oom = 1;
    return -ENOMEM;
  }
  return 0;
}

static int parse_condition(bwrl__line *lc, const bwrl__field *f,
                           bw_rule_cond *cond) {
  char q[BWRL__QUOTE_BUF];
  char buf[256];
  if (f->len >= sizeof(buf)) {
    bwrl__fail(lc, f->column, "condition too long '%s'",
               bwrl__quote(f->value, f->len, q));
    return -EINVAL;
  }
  memcpy(buf, f->value, f->len + 1);
  char *tok[6];
  size_t n = split(buf, tok, 5);
  if (n < 3 || n > 5 || strncmp(tok[0], "arg", 3) != 0 ||
      (strcmp(tok[1], "is") != 0 && strcmp(tok[1], "has") != 0)) {
    bwrl__fail(lc, f->column,
               "bad condition '%s': expected 'argN is ...' or 'argN has ...'",
               bwrl__quote(f->value, f->len, q));
    return -EINVAL;
  }
  /* "argN->FIELD": a field of the struct the argument points to. */
  char *arrow = strstr(tok[0], "->");
  const char *field = NULL;
  if (arrow) {
    *arrow = '\0';
    field = arrow + 2;
    if (!bwrl__valid_ident(field, strlen(field))) {
      bwrl__fail(lc, f->column, "bad field name '%s' in condition",
                 bwrl__quote(field, strlen(field), q));
      return -EINVAL;
    }
  }
  if (bwrl__parse_arg_index(tok[0] + 3, strlen(tok[0] + 3), &cond->arg)) {
    bwrl__fail(lc, f->column,
               "bad argument index '%s' (expected arg0 to arg%d)",
               bwrl__quote(tok[0], strlen(tok[0]), q), BWRL__MAX_ARG);
    return -EINVAL;
  }
  cond->value = 0;
  cond->name = NULL;
  cond->field = NULL;
  if (field) {
    cond->field = bwrl__arena_strndup(&lc->ld->rs->arena, field, strlen(field));
    if (cond->field == NULL) {
      lc->ld->oom = 1;
      return -ENOMEM;
    }
  }
  int is = strcmp(tok[1], "is") == 0;
  if (!is && strcmp(tok[2], "room") == 0) {
    /* "argN has room for argM": M, the size, into value. */
    int size;
    if (n != 5 || strcmp(tok[3], "for") != 0 ||
        strncmp(tok[4], "arg", 3) != 0 ||
        bwrl__parse_arg_index(tok[4] + 3, strlen(tok[4] + 3), &size)) {
      bwrl__fail(lc, f->column,
                 "bad condition '%s': expected 'argN has room for argM'",
                 bwrl__quote(f->value, f->len, q));
      return -EINVAL;
    }
    cond->kind = BW_COND_HAS_ROOM;
    cond->value = size;
    return 0;
  }
  if (n == 4 && is && strcmp(tok[2], "under") == 0) {
    if (tok[3][0] != '/') {
      bwrl__fail(lc, f->column,
                 "bad path prefix '%s' (expected an absolute path)",
                 bwrl__quote(tok[3], strlen(tok[3]), q));
      return -EINVAL;
    }
    return keep_name(lc, cond, BW_COND_PATH_UNDER, tok[3]);
  }
  if (n == 4 && is && strcmp(tok[2], "made-by") == 0) {
    for (const char *p = tok[3];;) {
      const char *bar = strchr(p, '|');
      size_t len = bar ? (size_t)(bar - p) : strlen(p);
      if (!bwrl__valid_ident(p, len)) {
        bwrl__fail(lc, column_of(lc, f, buf, p),
                   "bad function name '%s' in condition",
                   bwrl__quote(p, len, q));
        return -EINVAL;
      }
      if (!bar)
        break;
      p = bar + 1;
    }
    return keep_name(lc, cond, BW_COND_MADE_BY, tok[3]);
  }
  if (n >= 4) {
    if (n != 4 || !is || strcmp(tok[2], "not") != 0 ||
        strcmp(tok[3], "NULL") != 0) {
      bwrl__fail(lc, f->column, "bad condition '%s'",
                 bwrl__quote(f->value, f->len, q));
      return -EINVAL;
    }
    cond->kind = BW_COND_NOT_NULL;
    return 0;
  }
  if (!is) {
    cond->kind = BW_COND_HAS_FLAG;
    if (parse_constant(lc, f, buf, tok[2], cond))
      return -EINVAL;
    if (cond->value == 0) {
      bwrl__fail(lc, f->column, "flag '%s' has no bits set",
                 bwrl__quote(tok[2], strlen(tok[2]), q));
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
  else if (strcmp(tok[2], "nonblocking-object") == 0)
    cond->kind = BW_COND_NONBLOCKING_OBJECT;
  else if (strcmp(tok[2], "zero-timeout") == 0)
    cond->kind = BW_COND_ZERO_TIMEOUT;
  else if (strcmp(tok[2], "ready") == 0)
    cond->kind = BW_COND_READY;
  else if (strcmp(tok[2], "cancelled") == 0)
    cond->kind = BW_COND_CANCELLED;
  else {
    cond->kind = BW_COND_EQUALS;
    return parse_constant(lc, f, buf, tok[2], cond);
  }
  return 0;
}

int bwrl__parse_conditions(bwrl__line *lc, const char *key, bw_rule_cond *conds,
                           size_t *n) {
  *n = 0;
  for (size_t i = 0; i < lc->n_fields; i++) {
    const bwrl__field *f = &lc->fields[i];
    if (strcmp(f->key, key) != 0)
      continue;
    if (*n == BW_RULE_MAX_CONDS) {
      bwrl__fail(lc, f->key_column, "too many '%s' conditions (at most %d)",
                 key, BW_RULE_MAX_CONDS);
      return -EINVAL;
    }
    if (bwrl__parse_condition(lc, f, &conds[*n]))
      return -EINVAL;
    if (conds[*n].field && strcmp(key, "unless") != 0) {
      bwrl__fail(lc, f->column,
                 "a field condition is only valid in 'unless', not '%s'", key);
      return -EINVAL;
    }
    (*n)++;
  }
  return 0;
}
