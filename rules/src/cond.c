/* Conditions of blocking rules (`unless="arg1 has O_NONBLOCK=0x800"`) and
 * the numbers inside them; the grammar is in rules/README.md, "Conditions".
 *
 * Invariants: numbers are parsed strictly (decimal or 0x-hex to the end of
 * the token, range-checked into a long long); a condition is split in a
 * bounded copy, so the field stays intact for the messages that quote it.
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

/* Splits a condition into at most 5 space-separated tokens, in place. */
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

/* "NAME=number" or "number" -> value (and name into the arena). */
static int parse_constant(bwrl__line *lc, const char *tok, unsigned col,
                          bw_rule_cond *cond) {
  char q[BWRL__QUOTE_BUF];
  const char *eq = strchr(tok, '=');
  const char *num = tok;
  if (eq != NULL) {
    if (!bwrl__valid_ident(tok, (size_t)(eq - tok))) {
      bwrl__fail(lc, col, "bad constant name '%s' in condition",
                 bwrl__quote(tok, (size_t)(eq - tok), q));
      return -EINVAL;
    }
    num = eq + 1;
  } else if (bwrl__is_ident_start(tok[0])) {
    bwrl__fail(lc, col,
               "constant '%s' needs its value for the shim: write %s=<number>",
               bwrl__quote(tok, strlen(tok), q),
               bwrl__quote(tok, strlen(tok), q));
    return -EINVAL;
  }
  if (parse_number(num, &cond->value)) {
    bwrl__fail(lc, col, "bad number '%s' in condition",
               bwrl__quote(num, strlen(num), q));
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
int bwrl__parse_condition(bwrl__line *lc, const bwrl__field *f,
                          bw_rule_cond *cond) {
  char q[BWRL__QUOTE_BUF];
  char buf[256];
  if (f->len >= sizeof(buf)) {
    bwrl__fail(lc, f->column, "condition too long '%s'",
               bwrl__quote(f->value, f->len, q));
    return -EINVAL;
  }
  memcpy(buf, f->value, f->len + 1);
  char *tok[5];
  size_t n = split(buf, tok, 4);
  if (n < 3 || n > 4 || strncmp(tok[0], "arg", 3) != 0 ||
      (strcmp(tok[1], "is") != 0 && strcmp(tok[1], "has") != 0)) {
    bwrl__fail(lc, f->column,
               "bad condition '%s': expected 'argN is ...' or 'argN has ...'",
               bwrl__quote(f->value, f->len, q));
    return -EINVAL;
  }
  if (bwrl__parse_arg_index(tok[0] + 3, strlen(tok[0] + 3), &cond->arg)) {
    bwrl__fail(lc, f->column,
               "bad argument index '%s' (expected arg0 to arg%d)",
               bwrl__quote(tok[0], strlen(tok[0]), q), BWRL__MAX_ARG);
    return -EINVAL;
  }
  cond->value = 0;
  cond->name = NULL;
  int is = strcmp(tok[1], "is") == 0;
  if (n == 4) {
    if (!is || strcmp(tok[2], "not") != 0 || strcmp(tok[3], "NULL") != 0) {
      bwrl__fail(lc, f->column, "bad condition '%s'",
                 bwrl__quote(f->value, f->len, q));
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
  else if (strcmp(tok[2], "zero-timeout") == 0)
    cond->kind = BW_COND_ZERO_TIMEOUT;
  else {
    cond->kind = BW_COND_EQUALS;
    return parse_constant(lc, tok[2], f->column, cond);
  }
  return 0;
}
