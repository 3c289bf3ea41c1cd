/* options.c - BLOCKWATCH_OPTIONS=key=value:key=value parsing.
 *
 * Invariants:
 *  - One table (OPTIONS) names every key, its kind, where it goes, its
 *    default and its help line: the defaults and help=1 come from it; the
 *    documentation in docs/shim.md follows the same order.
 *  - Parsing is strict (numbers to the end of the string); a bad key or
 *    value prints one "blockwatch:" warning naming it and keeps the default.
 *  - Separators are ':' and ','; a ',' followed by anything but a known
 *    "key=" belongs to the value (the comma lists). A quoted value ('...'
 *    or "...") is taken as it is, up to the same quote; no escapes.
 *  - No allocation: runs in the constructor before anything else.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shim.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

bwsh__options bwsh__opt;

typedef enum kind {
  K_REPORT, /* text|json|both|none -> BW_REPORT_* bits */
  K_FAIL,   /* 0|1|report */
  K_UINT,   /* unsigned int, 0..max */
  K_MICROS, /* microseconds, 0..max, stored as uint64_t nanoseconds */
  K_BOOL,   /* 0|1 */
  K_PATH,   /* a string that must fit its field */
  K_GLOBS,  /* comma-separated globs, none empty, fitting the field */
  K_SIGNAL  /* a signal name or number */
} kind;

typedef struct option {
  const char *key;
  kind kind;
  size_t offset;
  size_t size;       /* of the destination (strings) */
  unsigned long max; /* K_UINT upper bound */
  const char *def;   /* the default, as it would be written (parsed) */
  const char *help;  /* one line for help=1 */
} option;

#define OPT(key, kind, field, max, def, help)                                  \
  {                                                                            \
    key, kind, offsetof(bwsh__options, field), sizeof(bwsh__opt.field), max,   \
        def, help                                                              \
  }

/* K_UINT fields are int or unsigned (same size), K_MICROS uint64_t. */
_Static_assert(sizeof(int) == sizeof(unsigned), "K_UINT stores unsigned");

/* Every option: the parser, the defaults and help=1 all read this table. */
static const option OPTIONS[] = {
    OPT("report", K_REPORT, report, 0, "text",
        "text (summary on stderr), json (file), both, none"),
    OPT("report_path", K_PATH, report_path, 0, "",
        "the JSON file (none: blockwatch.%p.json); %p pid, %e program, %% %"),
    OPT("fail", K_FAIL, fail, 0, "0",
        "1: stop at the first blocking call on a worker; report: fail at "
        "exit"),
    OPT("exitcode", K_UINT, exitcode, 255, "66",
        "the exit status of the fail modes"),
    OPT("threshold_us", K_MICROS, threshold_ns, 3600000000ul, "0",
        "calls on workers shorter than this are not counted"),
    OPT("compensate", K_BOOL, compensate, 1, "0",
        "1: tell the runtime when a worker blocks (spare workers)"),
    OPT("trace", K_PATH, trace_path, 0, "",
        "write a Chrome trace-event timeline to this file (%p, %e, %%)"),
    OPT("interim_signal", K_SIGNAL, report_signal, 0, "0",
        "signal that writes an interim report (SIGUSR2, USR1, a number; 0 "
        "off)"),
    OPT("worker_name", K_PATH, worker_name, 0, "",
        "comma-separated globs on thread names: those threads are workers"),
    OPT("worker_start", K_PATH, worker_start, 0, "",
        "start-routine symbol: threads started there are workers"),
    OPT("item_fn", K_GLOBS, item_fn, 0, "",
        "globs on functions: an option worker's call is an item's only "
        "inside one"),
    OPT("rules", K_PATH, rules_path, 0, "", "an extra rule file"),
    OPT("default_rules", K_BOOL, default_rules, 1, "1",
        "0: without the embedded libc/blockwatch rule packs"),
    OPT("categories", K_PATH, categories, 0, "",
        "comma list of the categories that count (none: the rules' own)"),
    OPT("lock", K_BOOL, lock, 1, "0", "1: count contended locks too"),
    OPT("verbosity", K_UINT, verbosity, 2, "0",
        "0: summary only when a worker blocked; 1: always; 2: debug"),
    OPT("handle_fatal", K_BOOL, fatal_signals, 1, "0",
        "1: write the report on a fatal signal, then die of it"),
    OPT("frames", K_UINT, frames, BW_SITE_FRAMES, "4",
        "caller frames kept per call site"),
    OPT("symbolize", K_BOOL, symbolize, 1, "1",
        "0: frames as module+offset only, named by bw-merge (blockwatch --)"),
    OPT("sample_items", K_UINT, sample_items, 65536, "16",
        "time the queue wait of one runtime item in this many"),
    OPT("help", K_BOOL, help, 1, "0",
        "1: print this list at start, then run the program as usual"),
    {NULL, K_BOOL, 0, 0, 0, NULL, NULL},
};

static int parse_uint(const char *v, unsigned long max, unsigned long *out) {
  if (!*v || *v == '-' || *v == '+')
    return -EINVAL;
  char *end;
  errno = 0;
  unsigned long n = strtoul(v, &end, 10);
  if (errno || *end || n > max)
    return -EINVAL;
  *out = n;
  return 0;
}

/* A signal by name (with or without "SIG", as sigabbrev_np spells it) or
 * number; 0 and "none" mean off. */
static int parse_signal(const char *v, int *out) {
  if (strcmp(v, "none") == 0) {
    *out = 0;
    return 0;
  }
  const char *name = strncmp(v, "SIG", 3) == 0 ? v + 3 : v;
  for (int sig = 1; sig < NSIG; sig++) {
    const char *abbrev = sigabbrev_np(sig);
    if (abbrev && strcmp(name, abbrev) == 0) {
      *out = sig;
      return 0;
    }
  }
  unsigned long n;
  if (parse_uint(v, NSIG - 1, &n) == 0) {
    *out = (int)n;
    return 0;
  }
  return -EINVAL;
}

/* A signal the shim can take: not KILL or STOP, which nothing can catch. */
static int parse_catchable(const char *v, int *out) {
  int sig;
  if (parse_signal(v, &sig) != 0 || sig == SIGKILL || sig == SIGSTOP)
    return -EINVAL;
  *out = sig;
  return 0;
}

/* Why the last value apply() refused was bad, when it can say more than
 * "bad value" (NULL: nothing more). */
static const char *bad_why;

/* A comma list of globs: each one non-empty and without a space at
 * either end (no function name has one there: "job_*, task_*" is a
 * mistake, not a pattern). */
static int check_globs(const char *v) {
  for (const char *p = v;; p++) {
    size_t n = strcspn(p, ",");
    if (n == 0 && *v) {
      bad_why = "an empty glob: two commas, or one at an end";
      return -EINVAL;
    }
    if (n > 0 && (p[0] == ' ' || p[n - 1] == ' ')) {
      bad_why = "a glob begins or ends with a space";
      return -EINVAL;
    }
    p += n;
    if (!*p)
      return 0;
  }
}

int bwsh__glob_list_match(const char *list, const char *s) {
  char one[sizeof bwsh__opt.item_fn];
  while (*list) {
    size_t n = strcspn(list, ",");
    if (n > 0 && n < sizeof one) {
      memcpy(one, list, n);
      one[n] = '\0';
      if (bw_rules_glob_match(one, s))
        return 1;
    }
    list += n;
    if (*list == ',')
      list++;
  }
  return 0;
}

static int apply(const option *o, const char *v) {
  char *dst = (char *)&bwsh__opt + o->offset;
  unsigned long n;
  switch (o->kind) {
  case K_REPORT: {
    int r;
    if (strcmp(v, "text") == 0)
      r = BW_REPORT_TEXT;
    else if (strcmp(v, "json") == 0)
      r = BW_REPORT_JSON;
    else if (strcmp(v, "both") == 0)
      r = BW_REPORT_TEXT | BW_REPORT_JSON;
    else if (strcmp(v, "none") == 0)
      r = BW_REPORT_NONE;
    else
      return -EINVAL;
    *(int *)dst = r;
    return 0;
  }
  case K_FAIL:
    if (strcmp(v, "0") == 0)
      bwsh__opt.fail = BW_FAIL_OFF;
    else if (strcmp(v, "1") == 0)
      bwsh__opt.fail = BW_FAIL_NOW;
    else if (strcmp(v, "report") == 0)
      bwsh__opt.fail = BW_FAIL_REPORT;
    else
      return -EINVAL;
    return 0;
  case K_BOOL:
    if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
      return -EINVAL;
    *(int *)dst = v[0] == '1';
    return 0;
  case K_UINT:
    if (parse_uint(v, o->max, &n) != 0)
      return -EINVAL;
    *(unsigned *)dst = (unsigned)n;
    return 0;
  case K_MICROS:
    if (parse_uint(v, o->max, &n) != 0)
      return -EINVAL;
    *(uint64_t *)dst = (uint64_t)n * 1000u;
    return 0;
  case K_GLOBS:
    if (check_globs(v) != 0)
      return -EINVAL;
    /* It must fit its field, as a path does. */
    __attribute__((fallthrough));
  case K_PATH:
    if (strlen(v) >= o->size)
      return -ENAMETOOLONG;
    memcpy(dst, v, strlen(v) + 1);
    return 0;
  case K_SIGNAL:
    return parse_catchable(v, (int *)dst);
  }
  return -EINVAL;
}

/* Every field from its table default: one place says what a default is. */
static void defaults(void) {
  memset(&bwsh__opt, 0, sizeof bwsh__opt);
  for (const option *o = OPTIONS; o->key; o++)
    apply(o, o->def);
}

static const option *find(const char *key, size_t len) {
  for (const option *o = OPTIONS; o->key; o++)
    if (strlen(o->key) == len && memcmp(o->key, key, len) == 0)
      return o;
  return NULL;
}

/* A ',' ends a value only where a known "key=" follows it, so the comma
 * lists of worker_name and categories keep working unquoted. */
static int comma_ends_value(const char *after) {
  size_t n = strcspn(after, "=:,");
  return after[n] == '=' && find(after, n) != NULL;
}

/* Length of an unquoted value starting at v. */
static size_t plain_value_len(const char *v) {
  size_t n = 0;
  for (;;) {
    n += strcspn(v + n, ":,");
    if (v[n] != ',' || comma_ends_value(v + n + 1))
      return n;
    n++;
  }
}

static void warn_bad_value(const option *o, const char *v, int err) {
  if (err == -ENAMETOOLONG)
    bwsh__log("warning: BLOCKWATCH_OPTIONS: the value of '%s' is too long "
              "(at most %zu bytes), keeping the default",
              o->key, o->size - 1);
  else if (bad_why)
    bwsh__log("warning: BLOCKWATCH_OPTIONS: bad value '%s' for '%s' (%s), "
              "keeping the default",
              v, o->key, bad_why);
  else
    bwsh__log("warning: BLOCKWATCH_OPTIONS: bad value '%s' for '%s', "
              "keeping the default",
              v, o->key);
}

static void warn_unknown(const char *key, size_t len) {
  bwsh__log("warning: BLOCKWATCH_OPTIONS: unknown option '%.*s' (help=1 lists "
            "the options)",
            (int)len, key);
}

/* Parses one "key=value" at p (a key, '=', then a value plain or in single
 * or double quotes) and returns where the next one starts. */
static const char *parse_one(const char *p) {
  size_t klen = strcspn(p, "=:,");
  const option *o = find(p, klen);
  if (p[klen] != '=') {
    if (o)
      bwsh__log("warning: BLOCKWATCH_OPTIONS: '%s' needs a value (%s=...; "
                "help=1 lists the options)",
                o->key, o->key);
    else
      warn_unknown(p, klen);
    return p + klen;
  }
  const char *v = p + klen + 1, *next;
  size_t vlen;
  if (*v == '\'' || *v == '"') {
    const char *close = strchr(v + 1, *v);
    if (!close) {
      bwsh__log("warning: BLOCKWATCH_OPTIONS: unterminated %c quote in the "
                "value of '%.*s': it and the rest of the options ignored",
                *v, (int)klen, p);
      return v + strlen(v);
    }
    vlen = (size_t)(close - v - 1);
    v++;
    next = close + 1;
    if (*next && *next != ':' && *next != ',') {
      bwsh__log("warning: BLOCKWATCH_OPTIONS: text after the closing quote of "
                "'%.*s' (expected ':' or ','): option ignored",
                (int)klen, p);
      return next + plain_value_len(next);
    }
  } else {
    vlen = plain_value_len(v);
    next = v + vlen;
  }
  char value[600];
  if (!o) {
    warn_unknown(p, klen);
  } else if (vlen >= sizeof value) {
    warn_bad_value(o, "(too long)",
                   o->kind == K_PATH || o->kind == K_GLOBS ? -ENAMETOOLONG
                                                           : -EINVAL);
  } else {
    memcpy(value, v, vlen);
    value[vlen] = '\0';
    bad_why = NULL;
    int err = apply(o, value);
    if (err != 0)
      warn_bad_value(o, value, err);
  }
  return next;
}

void bwsh__options_parse(const char *text) {
  defaults();
  if (!text)
    return;
  const char *p = text;
  while (*p) {
    if (*p == ':' || *p == ',')
      p++;
    else
      p = parse_one(p);
  }
  if (bwsh__opt.item_fn[0] && !bwsh__opt.worker_name[0] &&
      !bwsh__opt.worker_start[0])
    bwsh__log("warning: BLOCKWATCH_OPTIONS: 'item_fn' tells items apart only "
              "on workers named by 'worker_name' or 'worker_start': neither "
              "is set, so it does nothing");
}

void bwsh__options_help(void) {
  bwsh__log("BLOCKWATCH_OPTIONS=key=value, separated by ':' or ','; a value "
            "in single or double quotes may hold them. The options:");
  for (const option *o = OPTIONS; o->key; o++)
    bwsh__log("  %-14s %-8s %s", o->key, o->def[0] ? o->def : "(none)",
              o->help);
}

/* Only the outputs this run will write: report=none or text alone checks
 * no report file. */
void bwsh__options_check_paths(void) {
  char path[sizeof bwsh__opt.report_path + 64];
  if (bwsh__opt.report & BW_REPORT_JSON) {
    const char *given =
        bwsh__opt.report_path[0] ? bwsh__opt.report_path : "blockwatch.%p.json";
    if (bwsh__path_expand(given, 0, path, sizeof path) != 0)
      bwsh__log("warning: report_path: '%s' is too long", given);
    else
      bwsh__path_check("report_path", path);
  }
  if (bwsh__opt.trace_path[0]) {
    if (bwsh__path_expand(bwsh__opt.trace_path, 0, path, sizeof path) != 0)
      bwsh__log("warning: trace: '%s' is too long", bwsh__opt.trace_path);
    else
      bwsh__path_check("trace", path);
  }
}
