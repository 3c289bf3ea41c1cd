/* merge.c - reports of several processes merged into one file (merge.h),
 * read as the shim's own JSON text, and the frames another process left
 * unnamed named on the way (the last writer names them).
 *
 * Invariants:
 *  - The merge reads nothing past the spans it is given and keeps nothing
 *    from one merge to the next; its tables are static, used by one report
 *    writer at a time.
 *  - Copying a report names its unnamed frames ("function": null) from
 *    their module and offset only when naming is on (bwsh__merge_naming:
 *    not in a signal handler, not with symbolize=0); a frame that cannot
 *    be named is copied as it is.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "merge.h"

#include <stdint.h>
#include <string.h>

/* ---- merging reports that share a file (merge.h) ------------------------- */

typedef bwsh__span span;

static const span no_span = {NULL, 0};

static int is_space(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

static const char *skip_ws(const char *p, const char *end) {
  while (p < end && is_space(*p))
    p++;
  return p;
}

/* Past the string that starts at p (its '"'); NULL when it does not end. */
static const char *skip_string(const char *p, const char *end) {
  for (p++; p < end; p++) {
    if (*p == '\\')
      p++;
    else if (*p == '"')
      return p + 1;
  }
  return NULL;
}

/* Past the JSON value at p; NULL when the text is cut short. Brackets are
 * counted, not matched: only the shim's own text is read. */
static const char *skip_value(const char *p, const char *end) {
  p = skip_ws(p, end);
  if (p >= end)
    return NULL;
  if (*p == '"')
    return skip_string(p, end);
  if (*p != '{' && *p != '[') {
    const char *start = p;
    while (p < end && !is_space(*p) && *p != ',' && *p != '}' && *p != ']')
      p++;
    return p > start ? p : NULL;
  }
  int depth = 0;
  while (p < end) {
    if (*p == '"') {
      if (!(p = skip_string(p, end)))
        return NULL;
      continue;
    }
    if (*p == '{' || *p == '[')
      depth++;
    else if ((*p == '}' || *p == ']') && --depth == 0)
      return p + 1;
    p++;
  }
  return NULL;
}

/* The members of an object or the elements of an array, one at a time. */
typedef struct items {
  const char *p, *end;
} items;

/* 1 when v starts with `open` ('{' or '['), ready for items_next. */
static int items_open(items *it, span v, char open) {
  it->end = v.p + v.n;
  const char *p = skip_ws(v.p, it->end);
  it->p = p + 1;
  return v.n > 0 && p < it->end && *p == open;
}

/* The next member (key: its name in quotes; then val) or element (key
 * NULL); 0 at the end, or where the text is not JSON. */
static int items_next(items *it, span *key, span *val) {
  const char *p = skip_ws(it->p, it->end);
  if (p < it->end && *p == ',')
    p = skip_ws(p + 1, it->end);
  if (p >= it->end || *p == '}' || *p == ']')
    return 0;
  if (key) {
    const char *k = p;
    if (*p != '"' || !(p = skip_string(p, it->end)))
      return 0;
    *key = (span){k, (size_t)(p - k)};
    p = skip_ws(p, it->end);
    if (p >= it->end || *p != ':')
      return 0;
    p++;
  }
  const char *v = skip_ws(p, it->end);
  if (!(p = skip_value(v, it->end)))
    return 0;
  *val = (span){v, (size_t)(p - v)};
  it->p = p;
  return 1;
}

static int same_text(span a, span b) {
  return a.n == b.n && memcmp(a.p, b.p, a.n) == 0;
}

static int key_is(span key, const char *name) {
  size_t n = strlen(name);
  return key.n == n + 2 && memcmp(key.p + 1, name, n) == 0;
}

/* The value of the member whose key (in quotes) is key; empty if none. */
static span member(span obj, span key) {
  items it;
  span k, v;
  if (items_open(&it, obj, '{'))
    while (items_next(&it, &k, &v))
      if (same_text(k, key))
        return v;
  return no_span;
}

static span member_named(span obj, const char *name) {
  items it;
  span k, v;
  if (items_open(&it, obj, '{'))
    while (items_next(&it, &k, &v))
      if (key_is(k, name))
        return v;
  return no_span;
}

static char first_char(span v) {
  return v.n ? v.p[0] : '\0';
}

/* A number as the shim writes one: a count, or milliseconds with three
 * decimals (ms = 1; v in thousandths then). */
typedef struct num {
  uint64_t v;
  int ms;
} num;

static int num_parse(span s, num *out) {
  size_t i = 0;
  uint64_t v = 0;
  for (; i < s.n && s.p[i] >= '0' && s.p[i] <= '9'; i++)
    v = v * 10 + (uint64_t)(s.p[i] - '0');
  if (i == 0)
    return 0;
  out->ms = i < s.n && s.p[i] == '.';
  if (out->ms) {
    int decimals = 0;
    for (i++; i < s.n && s.p[i] >= '0' && s.p[i] <= '9'; i++)
      if (decimals < 3) {
        v = v * 10 + (uint64_t)(s.p[i] - '0');
        decimals++;
      }
    for (; decimals < 3; decimals++)
      v *= 10;
  }
  out->v = v;
  return i == s.n;
}

static void out_num(bwsh__out *o, num n) {
  if (n.ms)
    bwsh__out_us(o, n.v); /* n.v is in thousandths: v / 1000 */
  else
    bwsh__out_u64(o, n.v);
}

static void out_span(bwsh__out *o, span s) {
  bwsh__out_bytes(o, s.p, s.n);
}

/* ---- naming the frames another process left unnamed -------------------- */

static int naming;

void bwsh__merge_naming(int on) {
  naming = on;
}

static int is_null(span v) {
  return v.n == 4 && memcmp(v.p, "null", 4) == 0;
}

/* An object whose "function" is null: a frame written unnamed. */
static int unnamed_frame(span v) {
  return first_char(v) == '{' && is_null(member_named(v, "function"));
}

/* The JSON string s (as the shim writes one: \", \\ and \u00XX escapes)
 * into out; 0 when it is not a string or does not fit. */
static int unquote(span s, char *out, size_t size) {
  size_t n = 0;
  if (s.n < 2 || s.p[0] != '"')
    return 0;
  for (size_t i = 1; i + 1 < s.n; i++) {
    char c = s.p[i];
    if (c == '\\' && i + 2 < s.n && s.p[i + 1] == 'u' && i + 6 < s.n) {
      unsigned v = 0;
      for (int k = 2; k < 6; k++) {
        char h = s.p[i + k];
        v = v * 16 + (unsigned)(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
      }
      c = (char)v;
      i += 5;
    } else if (c == '\\' && i + 2 < s.n) {
      c = s.p[++i];
    }
    if (n + 1 >= size)
      return 0;
    out[n++] = c;
  }
  out[n] = '\0';
  return 1;
}

#define MAX_INLINE 8 /* as report.c: the frames one address expands to */

/* The frames of an unnamed frame, named from its module and offset into
 * out: how many (0: it cannot be named). */
static int name_frame(span frame, bwsh__sym *out, int max) {
  char path[600], build_id[80], offset[24];
  span id = member_named(frame, "build_id");
  if (!unquote(member_named(frame, "module"), path, sizeof path) ||
      !unquote(member_named(frame, "offset"), offset, sizeof offset))
    return 0;
  int has_id = unquote(id, build_id, sizeof build_id);
  uintptr_t off = 0;
  for (const char *p = offset + 2; *p; p++)
    off = off * 16 + (uintptr_t)(*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
  const char *note;
  return bwsh__symbolize_file(path, has_id ? build_id : NULL, off, out, max,
                              &note);
}

/* A named frame as report.c writes one, its module, build-id and offset
 * those of the unnamed one. */
static void out_named_frame(bwsh__out *o, const bwsh__sym *sym, span frame) {
  bwsh__out_str(o, "{\"function\":");
  bwsh__out_jstr(o, sym->function);
  bwsh__out_str(o, ",\"file\":");
  bwsh__out_jstr(o, sym->file[0] ? sym->file : NULL);
  bwsh__out_str(o, ",\"line\":");
  bwsh__out_i64(o, sym->line);
  bwsh__out_str(o, sym->inlined ? ",\"inlined\":true" : ",\"inlined\":false");
  static const char *const keys[] = {"module", "build_id", "offset"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    bwsh__out_str(o, ",\"");
    bwsh__out_str(o, keys[i]);
    bwsh__out_str(o, "\":");
    span v = member_named(frame, keys[i]);
    out_span(o, v.n ? v : (span){"null", 4});
  }
  bwsh__out_str(o, "}");
}

static bwsh__sym syms[MAX_INLINE];

static void out_named(bwsh__out *o, span v, span report);

/* A "frames" array with each unnamed frame as the frames it names. */
static void out_frames(bwsh__out *o, span v) {
  items it;
  span f;
  const char *at = v.p;
  if (!items_open(&it, v, '[')) {
    out_span(o, v);
    return;
  }
  while (items_next(&it, NULL, &f)) {
    bwsh__out_bytes(o, at, (size_t)(f.p - at));
    at = f.p + f.n;
    int n = unnamed_frame(f) ? name_frame(f, syms, MAX_INLINE) : 0;
    if (n == 0)
      out_span(o, f);
    for (int k = 0; k < n; k++) {
      bwsh__out_str(o, k ? "," : "");
      out_named_frame(o, &syms[k], f);
    }
  }
  bwsh__out_bytes(o, at, (size_t)(v.p + v.n - at));
}

/* summary.worst with its caller from the report's worst site (the first),
 * named: the frame where the blocking function was called. */
static void out_worst(bwsh__out *o, span worst, span report) {
  /* Not named when naming is off: a signal handler writes this too. */
  items it;
  span site = no_span, frame = no_span;
  if (items_open(&it, member_named(report, "call_sites"), '['))
    items_next(&it, NULL, &site);
  if (items_open(&it, member_named(site, "frames"), '['))
    items_next(&it, NULL, &frame);
  if (!naming || !is_null(member_named(worst, "caller")) ||
      !unnamed_frame(frame) || name_frame(frame, syms, MAX_INLINE) == 0) {
    out_span(o, worst);
    return;
  }
  bwsh__out_str(o, "{\"function\":");
  out_span(o, member_named(worst, "function"));
  bwsh__out_str(o, ",\"caller\":");
  bwsh__out_jstr(o, syms[0].function);
  bwsh__out_str(o, ",\"file\":");
  bwsh__out_jstr(o, syms[0].file[0] ? syms[0].file : NULL);
  bwsh__out_str(o, ",\"line\":");
  bwsh__out_i64(o, syms[0].line);
  bwsh__out_str(o, "}");
}

/* One member's value, named: frames, the via of a site, the worst. */
static void out_member(bwsh__out *o, span obj, span key, span v, span report) {
  span via = member_named(obj, "via_frame");
  if (key_is(key, "frames") && first_char(v) == '[') {
    out_frames(o, v);
  } else if (key_is(key, "via") && is_null(v) && unnamed_frame(via) &&
             name_frame(via, syms, 1) == 1) {
    bwsh__out_jstr(o, syms[0].function);
  } else if (key_is(key, "via_frame") && unnamed_frame(v) &&
             name_frame(v, syms, 1) == 1) {
    out_named_frame(o, &syms[0], v);
  } else if (key_is(key, "worst") && first_char(v) == '{') {
    out_worst(o, v, report);
  } else {
    out_named(o, v, report);
  }
}

/* v as it is, but for the frames its process left unnamed: named, when
 * naming is on (the text between values is copied as it was). report: the
 * process report v is part of (for the worst site). */
static void out_named(bwsh__out *o, span v, span report) {
  char open = first_char(v);
  items it;
  span k, val;
  if (!naming || (open != '{' && open != '[') || !items_open(&it, v, open)) {
    out_span(o, v);
    return;
  }
  if (open == '{' && member_named(v, "pid").n)
    report = v;
  const char *at = v.p;
  while (items_next(&it, open == '{' ? &k : NULL, &val)) {
    bwsh__out_bytes(o, at, (size_t)(val.p - at));
    at = val.p + val.n;
    if (open == '{')
      out_member(o, v, k, val, report);
    else
      out_named(o, val, report);
  }
  bwsh__out_bytes(o, at, (size_t)(v.p + v.n - at));
}

/* The processes of a merge: prev's (the one report, or a merged file's
 * "processes"), less those with mine's pid, then mine. */
typedef struct procs {
  span prev; /* the report, or the "processes" array */
  int prev_merged;
  span mine;
} procs;

typedef void (*visit_fn)(void *ctx, span report);

static void each_process(const procs *ps, visit_fn fn, void *ctx) {
  span pid = member_named(ps->mine, "pid");
  items it;
  span v;
  if (!ps->prev_merged) {
    if (!same_text(member_named(ps->prev, "pid"), pid))
      fn(ctx, ps->prev);
  } else if (items_open(&it, ps->prev, '[')) {
    while (items_next(&it, NULL, &v))
      if (!same_text(member_named(v, "pid"), pid))
        fn(ctx, v);
  }
  fn(ctx, ps->mine);
}

static void count_process(void *ctx, span report) {
  (void)report;
  (*(int *)ctx)++;
}

/* A value of every process: its member key, or key2 of that member. */
typedef struct gather {
  span key, key2;
  num sum;      /* numbers: their sum */
  bwsh__out *o; /* arrays: where their elements go, one after another */
  int n;        /* elements written */
} gather;

static span lookup(span report, span key, span key2) {
  span v = member(report, key);
  return key2.n ? member(v, key2) : v;
}

static void add_number(void *ctx, span report) {
  gather *g = ctx;
  num n;
  if (num_parse(lookup(report, g->key, g->key2), &n)) {
    g->sum.v += n.v;
    g->sum.ms |= n.ms;
  }
}

static void append_elements(void *ctx, span report) {
  gather *g = ctx;
  items it;
  span v;
  if (items_open(&it, lookup(report, g->key, g->key2), '['))
    while (items_next(&it, NULL, &v)) {
      bwsh__out_str(g->o, g->n++ ? ",\n  " : "\n  ");
      out_span(g->o, v);
    }
}

/* The merged call_sites: the MERGE_SITES that blocked longest of all the
 * processes' (each process's come sorted), ties in process order; the
 * rest are counted in call_sites_dropped. `worst` is the process of the
 * first one. */
#define MERGE_SITES 256
typedef struct top_sites {
  int n;
  span site[MERGE_SITES];
  uint64_t blocked[MERGE_SITES];
  span report[MERGE_SITES];
  uint64_t dropped;
} top_sites;

static top_sites tops;

static uint64_t site_blocked(span site) {
  num n = {0, 0};
  num_parse(member_named(site, "blocked_ms"), &n);
  return n.v;
}

static void keep_top_sites(void *ctx, span report) {
  top_sites *t = ctx;
  items it;
  span v;
  if (!items_open(&it, member_named(report, "call_sites"), '['))
    return;
  while (items_next(&it, NULL, &v)) {
    uint64_t b = site_blocked(v);
    int at = t->n;
    while (at > 0 && t->blocked[at - 1] < b)
      at--;
    if (at == MERGE_SITES) {
      t->dropped++;
      continue;
    }
    if (t->n == MERGE_SITES)
      t->dropped++; /* the last one falls off */
    else
      t->n++;
    for (int i = t->n - 1; i > at; i--) {
      t->site[i] = t->site[i - 1];
      t->blocked[i] = t->blocked[i - 1];
      t->report[i] = t->report[i - 1];
    }
    t->site[at] = v;
    t->blocked[at] = b;
    t->report[at] = report;
  }
}

/* on_other_threads_by_function, summed by function: most calls first,
 * ties by name (as one report sorts them). */
#define MERGE_FNS 256
typedef struct by_fn {
  int n;
  span name[MERGE_FNS]; /* the JSON string, quotes included */
  uint64_t count[MERGE_FNS];
} by_fn;

static by_fn fns;

static void add_by_function(void *ctx, span report) {
  gather *g = ctx;
  items it;
  span v;
  if (!items_open(&it, lookup(report, g->key, g->key2), '['))
    return;
  while (items_next(&it, NULL, &v)) {
    span name = member_named(v, "function");
    num n = {0, 0};
    num_parse(member_named(v, "count"), &n);
    int i = 0;
    while (i < fns.n && !same_text(fns.name[i], name))
      i++;
    if (i == fns.n && fns.n < MERGE_FNS) {
      fns.name[fns.n] = name;
      fns.count[fns.n++] = 0;
    }
    if (i < fns.n)
      fns.count[i] += n.v;
  }
}

static int fn_before(int a, int b) {
  if (fns.count[a] != fns.count[b])
    return fns.count[a] > fns.count[b];
  size_t n = fns.name[a].n < fns.name[b].n ? fns.name[a].n : fns.name[b].n;
  int c = memcmp(fns.name[a].p, fns.name[b].p, n);
  return c < 0 || (c == 0 && fns.name[a].n < fns.name[b].n);
}

static void write_by_function(bwsh__out *o, const procs *ps, gather *g) {
  fns.n = 0;
  each_process(ps, add_by_function, g);
  for (int i = 1; i < fns.n; i++)
    for (int j = i; j > 0 && fn_before(j, j - 1); j--) {
      span name = fns.name[j];
      uint64_t count = fns.count[j];
      fns.name[j] = fns.name[j - 1];
      fns.count[j] = fns.count[j - 1];
      fns.name[j - 1] = name;
      fns.count[j - 1] = count;
    }
  bwsh__out_str(o, "[");
  for (int i = 0; i < fns.n; i++) {
    bwsh__out_str(o, i ? ",{\"function\":" : "{\"function\":");
    out_span(o, fns.name[i]);
    bwsh__out_str(o, ",\"count\":");
    bwsh__out_u64(o, fns.count[i]);
    bwsh__out_str(o, "}");
  }
  bwsh__out_str(o, "]");
}

/* The total of one member (key, or key2 inside key), shaped like mine's
 * value `like`. */
static void write_total(bwsh__out *o, const procs *ps, span key, span key2,
                        span like) {
  gather g = {.key = key, .key2 = key2, .o = o};
  span name = key2.n ? key2 : key;
  if (first_char(like) == '[' && !key2.n && key_is(key, "call_sites")) {
    bwsh__out_str(o, "[");
    for (int i = 0; i < tops.n; i++) {
      bwsh__out_str(o, i ? ",\n  " : "\n  ");
      out_named(o, tops.site[i], tops.report[i]);
    }
    bwsh__out_str(o, "]");
  } else if (first_char(like) == '[' &&
             key_is(name, "on_other_threads_by_function")) {
    write_by_function(o, ps, &g);
  } else if (first_char(like) == '[') {
    bwsh__out_str(o, "[");
    each_process(ps, append_elements, &g);
    bwsh__out_str(o, "]");
  } else if (key2.n && key_is(key2, "worst")) {
    span worst = tops.n ? lookup(tops.report[0], key, key2) : no_span;
    if (worst.n)
      out_worst(o, worst, tops.report[0]);
    else
      bwsh__out_str(o, "null");
  } else if (first_char(like) == '{' && !key2.n) {
    items it;
    span k, v;
    int first = 1;
    bwsh__out_str(o, "{");
    items_open(&it, like, '{');
    while (items_next(&it, &k, &v)) {
      bwsh__out_str(o, first ? "" : ",");
      first = 0;
      out_span(o, k);
      bwsh__out_str(o, ":");
      write_total(o, ps, key, k, v);
    }
    bwsh__out_str(o, "}");
  } else if (num_parse(like, &g.sum)) {
    g.sum.v = 0;
    each_process(ps, add_number, &g);
    if (!key2.n && key_is(key, "call_sites_dropped"))
      g.sum.v += tops.dropped;
    out_num(o, g.sum);
  } else {
    out_span(o, like); /* a string or a literal: mine's */
  }
}

static void write_raw(void *ctx, span report) {
  gather *g = ctx;
  bwsh__out_str(g->o, g->n++ ? ",\n" : "\n");
  out_named(g->o, report, report);
}

/* The whole text v is one JSON object (whitespace around it aside). */
static int is_object(span v) {
  const char *end = v.p + v.n;
  const char *p = skip_ws(v.p, end);
  const char *after = p < end && *p == '{' ? skip_value(p, end) : NULL;
  return after && skip_ws(after, end) == end;
}

int bwsh__merge_write(bwsh__out *o, bwsh__span prev, bwsh__span mine,
                      const char *run) {
  if (!is_object(prev) || !is_object(mine) || !member_named(mine, "pid").n)
    return -1;
  span theirs = member_named(prev, "run");
  if (run && (theirs.n != strlen(run) + 2 ||
              memcmp(theirs.p + 1, run, theirs.n - 2) != 0))
    return -1; /* an earlier run's */
  procs ps = {.prev = member_named(prev, "processes"), .mine = mine};
  ps.prev_merged = first_char(ps.prev) == '[';
  if (!ps.prev_merged) {
    if (!member_named(prev, "pid").n)
      return -1;
    ps.prev = prev;
  }
  int n = 0;
  each_process(&ps, count_process, &n);
  if (n == 1)
    return -1; /* only mine (prev was an earlier report of this process) */
  tops.n = 0;
  tops.dropped = 0;
  each_process(&ps, keep_top_sites, &tops);
  items it;
  span k, v;
  int first = 1;
  bwsh__out_str(o, "{");
  items_open(&it, mine, '{');
  while (items_next(&it, &k, &v)) {
    if (key_is(k, "pid") || key_is(k, "program") || key_is(k, "interim") ||
        key_is(k, "trace_file"))
      continue; /* one process's own */
    bwsh__out_str(o, first ? "" : ",\n");
    first = 0;
    out_span(o, k);
    bwsh__out_str(o, ":");
    write_total(o, &ps, k, no_span, v);
  }
  bwsh__out_str(o, ",\n\"processes\":[");
  gather g = {.o = o};
  each_process(&ps, write_raw, &g);
  bwsh__out_str(o, "]}\n");
  return 0;
}
