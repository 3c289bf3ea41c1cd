/* trace.c - loads a Chrome trace-event JSON file into the t2s_trace model.
 *
 * Invariants: the loader never trusts the file: every field is checked for
 * its JSON type before use, events with missing or mistyped fields are
 * ignored (and counted), and nothing it allocates survives a failed load.
 */
#include "trace.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* An open "B" event waiting for its "E". */
typedef struct open_slice {
  int64_t pid, tid;
  double ts;
  char *name;
} open_slice;

/* An open async "b" waiting for its "e": they match on pid, cat, id and
 * name, as in catapult and Perfetto. */
typedef struct open_async {
  int64_t pid, tid;
  double ts;
  char *key; /* cat, id and name, NUL-separated into one string */
  char *name;
  char *detail; /* the "b" event's args: the "e" usually has none */
} open_async;

typedef struct loader {
  t2s_trace *trace;
  open_slice *open;
  size_t n_open;
  open_async *async;
  size_t n_async;
  int failed; /* out of memory */
} loader;

static void set_err(char *err, size_t size, const char *fmt, ...) {
  if (err == NULL || size == 0)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, size, fmt, ap);
  va_end(ap);
}

/* Grows *array to hold one more element of `size` bytes; 0 or -1. */
static int grow(void **array, size_t count, size_t size) {
  void *bigger = realloc(*array, (count + 1) * size);
  if (bigger == NULL)
    return -1;
  *array = bigger;
  return 0;
}

static char *dup_or_null(const char *s) {
  return s != NULL ? strdup(s) : NULL;
}

/* A time or id field: a JSON number, or a string holding one (some writers
 * quote them). Returns 0 and sets *out, or -1. */
static int number_field(json_t *event, const char *key, double *out) {
  json_t *v = json_object_get(event, key);
  if (json_is_number(v)) {
    *out = json_number_value(v);
    return 0;
  }
  if (json_is_string(v)) {
    char *end;
    *out = strtod(json_string_value(v), &end);
    return (*end == '\0' && end != json_string_value(v)) ? 0 : -1;
  }
  return -1;
}

static int64_t id_field(json_t *event, const char *key) {
  double v;
  return number_field(event, key, &v) == 0 ? (int64_t)v : 0;
}

/* "queue wait", or "queue wait (POOL)" as the shim names a pool's waits;
 * any case. */
static int is_queue_wait(const char *name) {
  static const char word[] = "queue wait";
  size_t n = sizeof word - 1;
  return name != NULL && strncasecmp(name, word, n) == 0 &&
         (name[n] == '\0' || strncmp(name + n, " (", 2) == 0);
}

/* The args object as compact JSON, cut to a tooltip-sized string. Reals
 * get 10 significant digits: the 250.18 a writer meant, not the
 * 250.18000000000001 its nearest double prints as in full. */
static char *args_detail(json_t *event) {
  json_t *args = json_object_get(event, "args");
  if (!json_is_object(args) || json_object_size(args) == 0)
    return NULL;
  char *text =
      json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(10));
  if (text != NULL && strlen(text) > 160)
    strcpy(text + 156, "...}");
  return text;
}

/* Appends a zeroed element to *array (of *count elements of `size`
 * bytes); NULL, with the load marked failed, when out of memory. */
static void *append_zeroed(loader *ld, void **array, size_t *count,
                           size_t size) {
  if (grow(array, *count, size) != 0) {
    ld->failed = 1;
    return NULL;
  }
  char *item = (char *)*array + (*count)++ * size;
  memset(item, 0, size);
  return item;
}

static t2s_lane *lane_for(loader *ld, int64_t pid, int64_t tid) {
  t2s_trace *t = ld->trace;
  for (size_t i = 0; i < t->n_lanes; i++) {
    if (t->lanes[i].pid == pid && t->lanes[i].tid == tid)
      return &t->lanes[i];
  }
  t2s_lane *lane =
      append_zeroed(ld, (void **)&t->lanes, &t->n_lanes, sizeof *t->lanes);
  if (lane != NULL) {
    lane->pid = pid;
    lane->tid = tid;
  }
  return lane;
}

static void widen(t2s_trace *t, double begin, double end) {
  if (t->t_end < t->t_begin) { /* first timed event */
    t->t_begin = begin;
    t->t_end = end;
    return;
  }
  if (begin < t->t_begin)
    t->t_begin = begin;
  if (end > t->t_end)
    t->t_end = end;
}

/* Appends a span to a lane, or to the waits when it is a queue wait. */
static void add_span(loader *ld, int64_t pid, int64_t tid, double start,
                     double dur, const char *name, char *detail) {
  t2s_trace *t = ld->trace;
  t2s_span **spans;
  size_t *count;
  if (is_queue_wait(name)) {
    spans = &t->waits;
    count = &t->n_waits;
  } else {
    t2s_lane *lane = lane_for(ld, pid, tid);
    if (lane == NULL) {
      free(detail);
      return;
    }
    spans = &lane->spans;
    count = &lane->n_spans;
  }
  if (grow((void **)spans, *count, sizeof **spans) != 0) {
    ld->failed = 1;
    free(detail);
    return;
  }
  (*spans)[(*count)++] = (t2s_span){.start_us = start,
                                    .dur_us = dur < 0 ? 0 : dur,
                                    .name = dup_or_null(name ? name : "?"),
                                    .detail = detail};
  widen(t, start, start + (dur < 0 ? 0 : dur));
}

static void on_complete(loader *ld, json_t *ev) {
  double ts, dur;
  if (number_field(ev, "ts", &ts) != 0 || number_field(ev, "dur", &dur) != 0) {
    ld->trace->n_ignored++;
    return;
  }
  add_span(ld, id_field(ev, "pid"), id_field(ev, "tid"), ts, dur,
           json_string_value(json_object_get(ev, "name")), args_detail(ev));
}

/* An instant is drawn only when it is a queue wait that says how long. */
static void on_instant(loader *ld, json_t *ev) {
  const char *name = json_string_value(json_object_get(ev, "name"));
  json_t *args = json_object_get(ev, "args");
  double ts, wait_us = -1, v;
  if (!is_queue_wait(name) || number_field(ev, "ts", &ts) != 0 ||
      !json_is_object(args)) {
    ld->trace->n_ignored++;
    return;
  }
  if (number_field(args, "dur", &v) == 0 ||
      number_field(args, "wait_us", &v) == 0)
    wait_us = v;
  else if (number_field(args, "wait_ms", &v) == 0)
    wait_us = v * 1000.0;
  if (wait_us < 0) {
    ld->trace->n_ignored++;
    return;
  }
  add_span(ld, id_field(ev, "pid"), id_field(ev, "tid"), ts - wait_us, wait_us,
           name, args_detail(ev));
}

static void on_begin(loader *ld, json_t *ev) {
  double ts;
  if (number_field(ev, "ts", &ts) != 0 ||
      grow((void **)&ld->open, ld->n_open, sizeof *ld->open) != 0) {
    ld->trace->n_ignored++;
    return;
  }
  ld->open[ld->n_open++] = (open_slice){
      .pid = id_field(ev, "pid"),
      .tid = id_field(ev, "tid"),
      .ts = ts,
      .name = dup_or_null(json_string_value(json_object_get(ev, "name")))};
}

/* Closes the innermost open slice of the same thread. */
static void on_end(loader *ld, json_t *ev) {
  int64_t pid = id_field(ev, "pid"), tid = id_field(ev, "tid");
  double ts;
  if (number_field(ev, "ts", &ts) != 0) {
    ld->trace->n_ignored++;
    return;
  }
  for (size_t i = ld->n_open; i-- > 0;) {
    if (ld->open[i].pid != pid || ld->open[i].tid != tid)
      continue;
    open_slice s = ld->open[i];
    memmove(&ld->open[i], &ld->open[i + 1],
            (ld->n_open - i - 1) * sizeof *ld->open);
    ld->n_open--;
    add_span(ld, pid, tid, s.ts, ts - s.ts, s.name, args_detail(ev));
    free(s.name);
    return;
  }
  ld->trace->n_ignored++;
}

/* The id of an async event: "id", or "id2" with "local" or "global" (a
 * number or a string; a local id is scoped to its process, pid is part of
 * the match anyway). NULL when it has none. */
static char *async_key(json_t *ev) {
  json_t *id = json_object_get(ev, "id");
  json_t *id2 = json_object_get(ev, "id2");
  const char *scope = "";
  if (id == NULL && json_is_object(id2)) {
    id = json_object_get(id2, "local");
    scope = "local";
    if (id == NULL) {
      id = json_object_get(id2, "global");
      scope = "global";
    }
  }
  char num[64];
  const char *text = json_string_value(id);
  if (text == NULL && json_is_number(id)) {
    snprintf(num, sizeof num, "%.17g", json_number_value(id));
    text = num;
  }
  if (text == NULL)
    return NULL;
  const char *cat = json_string_value(json_object_get(ev, "cat"));
  const char *name = json_string_value(json_object_get(ev, "name"));
  char *key = NULL;
  if (asprintf(&key, "%s%c%s%c%s%c%s", cat ? cat : "", 0, scope, 0, text, 0,
               name ? name : "") < 0)
    return NULL;
  return key;
}

/* Keys hold NULs: compare the four parts. */
static int same_key(const char *a, const char *b) {
  for (int part = 0; part < 4; part++) {
    if (strcmp(a, b) != 0)
      return 0;
    a += strlen(a) + 1;
    b += strlen(b) + 1;
  }
  return 1;
}

static void on_async_begin(loader *ld, json_t *ev) {
  double ts;
  char *key = async_key(ev);
  if (key == NULL || number_field(ev, "ts", &ts) != 0 ||
      grow((void **)&ld->async, ld->n_async, sizeof *ld->async) != 0) {
    free(key);
    ld->trace->n_ignored++;
    return;
  }
  ld->async[ld->n_async++] = (open_async){
      .pid = id_field(ev, "pid"),
      .tid = id_field(ev, "tid"),
      .ts = ts,
      .key = key,
      .name = dup_or_null(json_string_value(json_object_get(ev, "name"))),
      .detail = args_detail(ev)};
}

/* Closes the latest open "b" with the same pid and key: a queue wait goes
 * with the waits, any other async slice on the lane of its "b". */
static void on_async_end(loader *ld, json_t *ev) {
  int64_t pid = id_field(ev, "pid");
  double ts;
  char *key = async_key(ev);
  if (key == NULL || number_field(ev, "ts", &ts) != 0) {
    free(key);
    ld->trace->n_ignored++;
    return;
  }
  for (size_t i = ld->n_async; i-- > 0;) {
    open_async a = ld->async[i];
    if (a.pid != pid || !same_key(a.key, key))
      continue;
    memmove(&ld->async[i], &ld->async[i + 1],
            (ld->n_async - i - 1) * sizeof *ld->async);
    ld->n_async--;
    if (is_queue_wait(a.name)) {
      t2s_lane *lane = lane_for(ld, pid, a.tid);
      if (lane != NULL)
        lane->wait_lane = 1;
    }
    add_span(ld, pid, a.tid, a.ts, ts - a.ts, a.name, a.detail);
    free(a.name);
    free(a.key);
    free(key);
    return;
  }
  free(key);
  ld->trace->n_ignored++;
}

static t2s_counter *counter_named(loader *ld, const char *name) {
  t2s_trace *t = ld->trace;
  for (size_t i = 0; i < t->n_counters; i++) {
    if (strcmp(t->counters[i].name, name) == 0)
      return &t->counters[i];
  }
  t2s_counter *c = append_zeroed(ld, (void **)&t->counters, &t->n_counters,
                                 sizeof *t->counters);
  if (c != NULL && (c->name = strdup(name)) == NULL)
    ld->failed = 1;
  return c;
}

/* "C": one series per numeric argument ("name key", or "name" for the
 * conventional key "value"). */
static void on_counter(loader *ld, json_t *ev) {
  const char *name = json_string_value(json_object_get(ev, "name"));
  json_t *args = json_object_get(ev, "args");
  double ts;
  if (name == NULL || !json_is_object(args) ||
      number_field(ev, "ts", &ts) != 0) {
    ld->trace->n_ignored++;
    return;
  }
  const char *key;
  json_t *value;
  json_object_foreach(args, key, value) {
    if (!json_is_number(value))
      continue;
    /* One series per name and key, as catapult draws them: the shim
     * writes one counter name per pool and quantity, key "value". */
    char series[256];
    if (strcmp(key, "value") == 0)
      snprintf(series, sizeof series, "%s", name);
    else
      snprintf(series, sizeof series, "%s %s", name, key);
    t2s_counter *c = counter_named(ld, series);
    if (c == NULL || c->name == NULL ||
        grow((void **)&c->points, c->n_points, sizeof *c->points) != 0) {
      ld->failed = 1;
      return;
    }
    double v = json_number_value(value);
    c->points[c->n_points++] = (t2s_point){.ts_us = ts, .value = v};
    if (v > c->max_value)
      c->max_value = v;
    widen(ld->trace, ts, ts);
  }
}

static void on_metadata(loader *ld, json_t *ev) {
  const char *name = json_string_value(json_object_get(ev, "name"));
  const char *thread =
      json_string_value(json_object_get(json_object_get(ev, "args"), "name"));
  if (name == NULL || strcmp(name, "thread_name") != 0 || thread == NULL) {
    ld->trace->n_ignored++;
    return;
  }
  t2s_lane *lane = lane_for(ld, id_field(ev, "pid"), id_field(ev, "tid"));
  if (lane == NULL)
    return;
  free(lane->name);
  lane->name = strdup(thread);
}

static void on_event(loader *ld, json_t *ev) {
  const char *ph = json_string_value(json_object_get(ev, "ph"));
  if (!json_is_object(ev) || ph == NULL) {
    ld->trace->n_ignored++;
    return;
  }
  if (strcmp(ph, "X") == 0)
    on_complete(ld, ev);
  else if (strcmp(ph, "B") == 0)
    on_begin(ld, ev);
  else if (strcmp(ph, "E") == 0)
    on_end(ld, ev);
  else if (strcmp(ph, "i") == 0 || strcmp(ph, "I") == 0)
    on_instant(ld, ev);
  else if (strcmp(ph, "b") == 0)
    on_async_begin(ld, ev);
  else if (strcmp(ph, "e") == 0)
    on_async_end(ld, ev);
  else if (strcmp(ph, "C") == 0)
    on_counter(ld, ev);
  else if (strcmp(ph, "M") == 0)
    on_metadata(ld, ev);
  else
    ld->trace->n_ignored++;
}

static int cmp_span(const void *a, const void *b) {
  double x = ((const t2s_span *)a)->start_us;
  double y = ((const t2s_span *)b)->start_us;
  return (x > y) - (x < y);
}

static int cmp_point(const void *a, const void *b) {
  double x = ((const t2s_point *)a)->ts_us;
  double y = ((const t2s_point *)b)->ts_us;
  return (x > y) - (x < y);
}

/* qsort with a NULL base is undefined even for zero elements. */
static void sort(void *base, size_t n, size_t size,
                 int (*cmp)(const void *, const void *)) {
  if (n > 1)
    qsort(base, n, size, cmp);
}

static int cmp_lane(const void *a, const void *b) {
  const t2s_lane *x = a, *y = b;
  int by_name = strverscmp(x->name, y->name);
  if (by_name != 0)
    return by_name;
  return (x->tid > y->tid) - (x->tid < y->tid);
}

static int cmp_counter(const void *a, const void *b) {
  return strcmp(((const t2s_counter *)a)->name, ((const t2s_counter *)b)->name);
}

/* Names unnamed lanes, drops lanes with neither name nor spans and the
 * lanes of async waits (the waits have rows of their own), sorts (so the
 * picture does not depend on the order events were written in). */
static int finish(t2s_trace *t) {
  size_t kept = 0;
  for (size_t i = 0; i < t->n_lanes; i++) {
    t2s_lane *lane = &t->lanes[i];
    if ((lane->name == NULL || lane->wait_lane) && lane->n_spans == 0) {
      free(lane->name);
      continue;
    }
    if (lane->name == NULL) {
      char buf[48];
      snprintf(buf, sizeof buf, "tid %lld", (long long)lane->tid);
      lane->name = strdup(buf);
      if (lane->name == NULL)
        return -1;
    }
    sort(lane->spans, lane->n_spans, sizeof *lane->spans, cmp_span);
    t->lanes[kept++] = *lane;
  }
  t->n_lanes = kept;
  sort(t->lanes, t->n_lanes, sizeof *t->lanes, cmp_lane);
  sort(t->waits, t->n_waits, sizeof *t->waits, cmp_span);
  sort(t->counters, t->n_counters, sizeof *t->counters, cmp_counter);
  for (size_t i = 0; i < t->n_counters; i++)
    sort(t->counters[i].points, t->counters[i].n_points, sizeof(t2s_point),
         cmp_point);
  if (t->t_end < t->t_begin)
    t->t_begin = t->t_end = 0;
  return 0;
}

int t2s_trace_load(const char *path, t2s_trace *out, char *err,
                   size_t err_size) {
  memset(out, 0, sizeof *out);
  out->t_begin = 1;
  out->t_end = 0; /* end < begin: no timed event yet */
  json_error_t jerr;
  json_t *root = json_load_file(path, 0, &jerr);
  if (root == NULL) {
    /* jansson reports a file it cannot open at line -1, with a text that
     * already names the file and the reason: no position to give then. */
    if (jerr.line < 1)
      set_err(err, err_size, "%s", jerr.text);
    else
      set_err(err, err_size, "%s:%d:%d: %s", path, jerr.line, jerr.column,
              jerr.text);
    return -1;
  }
  json_t *events =
      json_is_array(root) ? root : json_object_get(root, "traceEvents");
  if (!json_is_array(events)) {
    set_err(err, err_size,
            "%s: not a trace: expected {\"traceEvents\": [...]} or an array",
            path);
    json_decref(root);
    return -1;
  }
  loader ld = {.trace = out};
  size_t i;
  json_t *ev;
  json_array_foreach(events, i, ev) {
    on_event(&ld, ev);
    if (ld.failed)
      break;
  }
  for (size_t k = 0; k < ld.n_open; k++)
    free(ld.open[k].name);
  out->n_ignored += ld.n_open; /* B without E */
  free(ld.open);
  for (size_t k = 0; k < ld.n_async; k++) {
    free(ld.async[k].key);
    free(ld.async[k].name);
    free(ld.async[k].detail);
  }
  out->n_ignored += ld.n_async; /* b without e */
  free(ld.async);
  json_decref(root);
  if (ld.failed || finish(out) != 0) {
    set_err(err, err_size, "%s: out of memory", path);
    t2s_trace_free(out);
    return -1;
  }
  return 0;
}

static void free_spans(t2s_span *spans, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(spans[i].name);
    free(spans[i].detail);
  }
  free(spans);
}

void t2s_trace_free(t2s_trace *trace) {
  for (size_t i = 0; i < trace->n_lanes; i++) {
    free(trace->lanes[i].name);
    free_spans(trace->lanes[i].spans, trace->lanes[i].n_spans);
  }
  free(trace->lanes);
  free_spans(trace->waits, trace->n_waits);
  for (size_t i = 0; i < trace->n_counters; i++) {
    free(trace->counters[i].name);
    free(trace->counters[i].points);
  }
  free(trace->counters);
  memset(trace, 0, sizeof *trace);
}
