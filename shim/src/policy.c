/* policy.c - what counts: loads the rules at start-up and answers, per
 * wrapped function, whether its calls count and which of them cannot block.
 *
 * Invariants:
 *  - The rule set is built once, in the constructor, and then only read
 *    (bw_rules lookups never allocate, lock or print).
 *  - A function counts when the rules name it as blocking in an enabled
 *    category; a function no loaded rule names does not count. There is
 *    no built-in fallback: the embedded packs are part of the shim, and
 *    when they do not load the shim says so and stays inactive.
 *  - An "unless" condition that cannot be answered (an argument out of
 *    range) does not excuse the call: it counts.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "policy.h"

#include <errno.h>
#include <dlfcn.h>
#include <string.h>

static const bw_rules *rules;

/* ---- names --------------------------------------------------------------- */

/* Per function id: the symbol itself ("__read_chk") and the name reported
 * and looked up in the rules ("read"). */
typedef struct fn_info {
  const char *symbol, *name;
} fn_info;

static const fn_info fns[BW_FN_COUNT] = {
#define INFO_FUNC(ret, name, canon, params, args, check) {#name, #canon},
#define INFO_LOCK(name, type, trylock, xp, xa) {#name, #name},
#define INFO_HAND(name) {#name, #name},
    BW_SHIM_FUNCS(INFO_FUNC) BW_SHIM_LOCKS(INFO_LOCK) BW_SHIM_BY_HAND(INFO_HAND)
#undef INFO_FUNC
#undef INFO_LOCK
#undef INFO_HAND
};

const char *bwsh__fn_name(int fn) {
  return fn >= 0 && fn < BW_FN_COUNT ? fns[fn].name : "?";
}

/* ---- the rules' "unless" conditions -------------------------------------- */

/* The rule whose "unless" conditions say when each wrapped symbol cannot
 * block, or NULL: the rule that names the symbol itself ("__recv_chk"), or
 * failing that the plain function's ("recv", fn_rule_plain set). Without
 * one no call of the symbol is excused. */
static const bw_blocking_rule *fn_rule[BW_FN_COUNT];
static unsigned char fn_rule_plain[BW_FN_COUNT];
/* The rule of the name the report uses, which decides whether fn counts. */
static const bw_blocking_rule *fn_counting_rule[BW_FN_COUNT];

/* Where a fortified form's extra size argument sits: its index + 1. A
 * plain function's rule is read against the fortified form's arguments
 * with that one left out. 0: the arguments are the plain function's
 * (_IO_getc, __getdelim) or the symbol is not a fortified form. */
static const unsigned char chk_extra[BW_FN_COUNT] = {
    [BW_FN___read_chk] = 4,  [BW_FN___pread_chk] = 5,
    [BW_FN___recv_chk] = 4,  [BW_FN___recvfrom_chk] = 4,
    [BW_FN___poll_chk] = 4,  [BW_FN___ppoll_chk] = 5,
    [BW_FN___fgets_chk] = 2, [BW_FN___fgets_unlocked_chk] = 2,
    [BW_FN___fread_chk] = 2,
};

unsigned char bwsh__fn_enabled[BW_FN_COUNT];
unsigned char bwsh__fn_conditional[BW_FN_COUNT];

const char *bwsh__fn_hint(int fn) {
  return fn >= 0 && fn < BW_FN_COUNT && fn_counting_rule[fn]
             ? fn_counting_rule[fn]->hint
             : NULL;
}

static int cond_holds(const bw_rule_cond *c, const uint64_t *av, size_t n) {
  if (c->arg < 0 || (size_t)c->arg >= n || c->field)
    return 0; /* unknown (a struct's field is not read): the call counts */
  uint64_t v = av[c->arg];
  switch (c->kind) {
  case BW_COND_EQUALS:
    return v == (uint64_t)c->value;
  case BW_COND_HAS_FLAG:
    return c->value && (v & (uint64_t)c->value) == (uint64_t)c->value;
  case BW_COND_IS_NULL:
    return v == 0;
  case BW_COND_NOT_NULL:
    return v != 0;
  case BW_COND_NONBLOCKING_FD:
    return !bwsh__fd_blocking((int)v);
  case BW_COND_NONBLOCKING_FILE:
    return v && !bwsh__fd_blocking(fileno_unlocked((FILE *)(uintptr_t)v));
  case BW_COND_PATH_UNDER: /* a path's text: not read, the call counts */
  case BW_COND_MADE_BY:    /* who made an object: not known, it counts */
  case BW_COND_CANCELLED:  /* a cancellable's history: not known */
  case BW_COND_NONBLOCKING_OBJECT:
  case BW_COND_READY:
  case BW_COND_HAS_ROOM:
    return 0; /* an object's own mode (GSocket's), or whether the loop found
                 it ready: not asked, the call counts */
  case BW_COND_ZERO_TIMEOUT: {
    /* struct timespec and struct timeval: two longs, both zero. */
    const long *t = (const long *)(uintptr_t)v;
    return t && t[0] == 0 && t[1] == 0;
  }
  case BW_COND_COUNT:
    break;
  }
  return 0;
}

int bwsh__call_excused(int fn, const uint64_t *av, size_t n) {
  const bw_blocking_rule *rule = fn_rule[fn];
  if (!rule || rule->n_unless == 0)
    return 0;
  uint64_t plain[8];
  unsigned extra = chk_extra[fn];
  if (fn_rule_plain[fn] && extra && extra <= n && n <= 8) {
    for (size_t i = 0, k = 0; i < n; i++)
      if (i != extra - 1)
        plain[k++] = av[i];
    av = plain;
    n--;
  }
  for (size_t i = 0; i < rule->n_unless; i++)
    if (cond_holds(&rule->unless[i], av, n))
      return 1;
  return 0;
}

/* ---- start-up ------------------------------------------------------------ */

static void rules_error(void *ctx, const bw_rules_error *err) {
  (void)ctx;
  bwsh__log("warning: rules: %s", err->formatted);
}

/* The packs loaded unless default_rules=0. BWSH__PACK_EXTRA names one
 * more: the test suite builds a shim with a pack that does not exist, to
 * see the start-up failure. */
static const char *const packs[] = {
    "libc",
    "blockwatch",
#ifdef BWSH__PACK_EXTRA
    BWSH__PACK_EXTRA,
#endif
};

/* GLib waits on futexes, never through pthread's, so the shim wraps its
 * waits by name (g_cond_wait, g_usleep, ...) and needs the glib pack's
 * rules to count them. The pack is the largest, so it is parsed only in a
 * process that has GLib loaded at start (the common case: it is linked);
 * a program that dlopens GLib later goes without. */
static int glib_loaded(void) {
  void *h = dlopen("libglib-2.0.so.0", RTLD_LAZY | RTLD_NOLOAD);
  if (h == NULL)
    return 0;
  dlclose(h);
  return 1;
}

/* Loads embedded pack `name`: 0, or a negative errno after saying on
 * stderr that the shim stands down. */
static int load_pack(bw_rules *rs, const char *name) {
  int rc = bw_rules_load_default(rs, name);
  if (rc != 0)
    bwsh__log("ERROR: the embedded rule pack '%s' did not load (%s); "
              "inactive in this process",
              name, strerror(-rc));
  return rc;
}

/* Loads the embedded packs (unless default_rules=0: a pack's rule cannot
 * be redefined, so a file that changes one replaces the packs), then
 * rules=FILE, then applies lock=1 / categories=. 0, or a negative errno
 * when the set or an embedded pack failed (said on stderr, whatever the
 * verbosity). A rules= file that does not load is a warning: the packs
 * stand. */
static int load_rules(void) {
  bw_rules *rs = bw_rules_create();
  if (!rs) {
    bwsh__log("ERROR: no memory for the rules; inactive in this process");
    return -ENOMEM;
  }
  bw_rules_set_error_callback(rs, rules_error, NULL);
  int rc = 0;
  for (size_t i = 0;
       rc == 0 && bwsh__opt.default_rules && i < sizeof packs / sizeof *packs;
       i++)
    rc = load_pack(rs, packs[i]);
  if (rc == 0 && bwsh__opt.default_rules && glib_loaded())
    rc = load_pack(rs, "glib");
  if (rc != 0) {
    bw_rules_free(rs);
    return rc;
  }
  if (bwsh__opt.rules_path[0] &&
      bw_rules_load_file(rs, bwsh__opt.rules_path) != 0)
    bwsh__log("warning: rules=%s could not be loaded", bwsh__opt.rules_path);
  if (bwsh__opt.categories[0]) {
    for (int c = 0; c < BW_CATEGORY_COUNT; c++)
      bw_rules_set_category(rs, (bw_rule_category)c, 0);
    char list[sizeof bwsh__opt.categories];
    memcpy(list, bwsh__opt.categories, sizeof list);
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
      bw_rule_category cat;
      if (bw_rule_category_parse(tok, &cat) == 0)
        bw_rules_set_category(rs, cat, 1);
      else
        bwsh__log("warning: BLOCKWATCH_OPTIONS: unknown category '%s'", tok);
    }
  }
  if (bwsh__opt.lock)
    bw_rules_set_category(rs, BW_CATEGORY_LOCK, 1);
  rules = rs;
  return 0;
}

static void log_enabled(void) {
  char on[2048] = "", off[2048] = "";
  for (int i = 0; i < BW_FN_COUNT; i++) {
    char *list = bwsh__fn_enabled[i] ? on : off;
    if (i > 0 && strcmp(fns[i].name, fns[i - 1].name) == 0)
      continue; /* a __*_chk form next to its plain one */
    size_t len = strlen(list);
    snprintf(list + len, sizeof on - len, " %s", fns[i].name);
  }
  bwsh__log("counting:%s", on);
  bwsh__log("not counting:%s", off);
}

static void fn_enable_init(void) {
  for (int i = 0; i < BW_FN_COUNT; i++) {
    /* Counted or not: the rule of the name the report uses. Which calls
     * cannot block: the rule of the symbol itself (fn_rule). */
    const bw_blocking_rule *rule = bw_rules_lookup_blocking(rules, fns[i].name);
    fn_counting_rule[i] = rule;
    fn_rule[i] = bw_rules_lookup_blocking(rules, fns[i].symbol);
    /* A fortified form missing from chk_extra is not excused at all rather
     * than read a rule at the wrong positions. */
    size_t len = strlen(fns[i].symbol);
    int unmapped = len > 4 && strcmp(fns[i].symbol + len - 4, "_chk") == 0 &&
                   !chk_extra[i];
    fn_rule_plain[i] = !fn_rule[i] && rule && !unmapped &&
                       strcmp(fns[i].symbol, fns[i].name) != 0;
    if (fn_rule_plain[i])
      fn_rule[i] = rule;
    bwsh__fn_enabled[i] =
        rule ? (unsigned char)bw_rules_is_active(rules, rule) : 0;
    bwsh__fn_conditional[i] = fn_rule[i] && fn_rule[i]->n_unless > 0;
  }
  if (bwsh__opt.verbosity >= 2)
    log_enabled();
}

int bwsh__policy_init(void) {
  int rc = load_rules();
  if (rc == 0)
    fn_enable_init();
  return rc;
}
