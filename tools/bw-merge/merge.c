/* merge.c - the reports of several processes as one: the merged JSON (the
 * shape the shim writes into a shared report_path, docs/shim.md) and the
 * text summary `blockwatch --` prints at the end of a run.
 *
 * Invariants:
 *  - The totals take the keys of the last report (the newest shim's):
 *    numbers summed, arrays put end to end, call_sites by blocked time
 *    (ties in process order; past BWM_SITES they are counted in
 *    call_sites_dropped), on_other_threads_by_function summed by
 *    function, summary.worst the worst process's; pid, program and interim
 *    stay a process's own. "processes" holds every report as it was read.
 *  - Milliseconds are summed in thousandths, as the shim prints them, so a
 *    total has no rounding of its own.
 */
#include "merge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BWM_SITES 256

int bwm_add_file(json_t *procs, const char *path, char *err, size_t size) {
  json_error_t e;
  json_t *j = json_load_file(path, 0, &e);
  if (!j) {
    snprintf(err, size, "%s:%d: %s", path, e.line, e.text);
    return -1;
  }
  json_t *list = json_object_get(j, "processes");
  if (json_is_array(list)) {
    json_array_extend(procs, list);
  } else if (json_is_object(j) && json_is_integer(json_object_get(j, "pid"))) {
    json_array_append(procs, j);
  } else {
    snprintf(err, size, "%s:1: not a blockwatch report (no \"pid\")", path);
    json_decref(j);
    return -1;
  }
  json_decref(j);
  return 0;
}

/* A member of a process: key, or key2 inside key (key2 NULL: key). */
static json_t *lookup(json_t *report, const char *key, const char *key2) {
  json_t *v = json_object_get(report, key);
  return key2 ? json_object_get(v, key2) : v;
}

static long long thousandths(json_t *v) {
  return json_is_integer(v) ? json_integer_value(v) * 1000
                            : llround(json_number_value(v) * 1000.0);
}

/* One site and the process it came from. */
typedef struct site {
  json_t *site;
  json_t *report;
  long long blocked; /* thousandths of a ms */
} site;

typedef struct totals {
  site top[BWM_SITES];
  int nsites;
  long long dropped;
} totals;

static void keep_sites(totals *t, json_t *procs) {
  size_t i, k;
  json_t *report, *s;
  t->nsites = 0;
  t->dropped = 0;
  json_array_foreach(procs, i, report) {
    json_array_foreach(json_object_get(report, "call_sites"), k, s) {
      long long b = thousandths(json_object_get(s, "blocked_ms"));
      int at = t->nsites;
      while (at > 0 && t->top[at - 1].blocked < b)
        at--;
      if (at == BWM_SITES) {
        t->dropped++;
        continue;
      }
      if (t->nsites == BWM_SITES)
        t->dropped++;
      else
        t->nsites++;
      memmove(&t->top[at + 1], &t->top[at],
              (size_t)(t->nsites - 1 - at) * sizeof t->top[0]);
      t->top[at] = (site){s, report, b};
    }
  }
}

static int by_count_then_name(const void *a, const void *b) {
  json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
  json_int_t cx = json_integer_value(json_object_get(x, "count"));
  json_int_t cy = json_integer_value(json_object_get(y, "count"));
  if (cx != cy)
    return cx > cy ? -1 : 1;
  return strcmp(json_string_value(json_object_get(x, "function")),
                json_string_value(json_object_get(y, "function")));
}

static json_t *by_function(json_t *procs, const char *key, const char *key2) {
  json_t *sum = json_object();
  size_t i, k;
  json_t *report, *e;
  json_array_foreach(procs, i, report) {
    json_array_foreach(lookup(report, key, key2), k, e) {
      const char *fn = json_string_value(json_object_get(e, "function"));
      if (!fn)
        continue;
      json_int_t n = json_integer_value(json_object_get(sum, fn)) +
                     json_integer_value(json_object_get(e, "count"));
      json_object_set_new(sum, fn, json_integer(n));
    }
  }
  size_t n = json_object_size(sum), at = 0;
  json_t **list = calloc(n ? n : 1, sizeof *list);
  const char *fn;
  json_t *count;
  json_object_foreach(sum, fn, count) {
    list[at++] = json_pack("{s:s,s:O}", "function", fn, "count", count);
  }
  qsort(list, n, sizeof *list, by_count_then_name);
  json_t *out = json_array();
  for (size_t j = 0; j < n; j++)
    json_array_append_new(out, list[j]);
  free(list);
  json_decref(sum);
  return out;
}

/* The total of member key (key2 inside it), shaped like `like`. */
static json_t *total(const totals *t, json_t *procs, const char *key,
                     const char *key2, json_t *like) {
  const char *name = key2 ? key2 : key;
  size_t i;
  json_t *report;
  if (json_is_array(like) && !key2 && strcmp(key, "call_sites") == 0) {
    json_t *out = json_array();
    for (int k = 0; k < t->nsites; k++)
      json_array_append(out, t->top[k].site);
    return out;
  }
  if (json_is_array(like) && strcmp(name, "on_other_threads_by_function") == 0)
    return by_function(procs, key, key2);
  if (json_is_array(like)) {
    json_t *out = json_array();
    json_array_foreach(procs, i, report) {
      json_t *v = lookup(report, key, key2);
      if (json_is_array(v))
        json_array_extend(out, v);
    }
    return out;
  }
  if (key2 && strcmp(key2, "worst") == 0) {
    json_t *worst = t->nsites ? lookup(t->top[0].report, key, key2) : NULL;
    return worst ? json_incref(worst) : json_null();
  }
  if (json_is_object(like) && !key2) {
    json_t *out = json_object();
    const char *k;
    json_t *v;
    json_object_foreach(like, k, v) {
      json_object_set_new(out, k, total(t, procs, key, k, v));
    }
    return out;
  }
  if (json_is_number(like)) {
    long long sum = 0;
    json_array_foreach(procs, i, report) {
      json_t *v = lookup(report, key, key2);
      if (json_is_number(v))
        sum += thousandths(v);
    }
    if (!key2 && strcmp(key, "call_sites_dropped") == 0)
      sum += t->dropped * 1000;
    return json_is_integer(like) ? json_integer(sum / 1000)
                                 : json_real((double)sum / 1000.0);
  }
  return json_incref(like);
}

json_t *bwm_merge(json_t *procs) {
  json_t *tmpl = json_array_get(procs, json_array_size(procs) - 1);
  json_t *out = json_object();
  if (!tmpl) {
    json_object_set_new(out, "processes", json_array());
    return out;
  }
  static totals t;
  keep_sites(&t, procs);
  const char *key;
  json_t *v;
  json_object_foreach(tmpl, key, v) {
    if (strcmp(key, "pid") == 0 || strcmp(key, "program") == 0 ||
        strcmp(key, "interim") == 0 || strcmp(key, "run") == 0 ||
        strcmp(key, "trace_file") == 0)
      continue;
    json_object_set_new(out, key, total(&t, procs, key, NULL, v));
  }
  json_object_set(out, "processes", procs);
  return out;
}

/* ---- text ---------------------------------------------------------------- */

static double ms(json_t *v) {
  return json_number_value(v);
}

static long long count(json_t *v) {
  return (long long)json_integer_value(v);
}

static const char *str(json_t *v, const char *none) {
  const char *s = json_string_value(v);
  return s ? s : none;
}

/* "usleep at file:line", "usleep in caller" or "none", as the shim says. */
static void worst_text(json_t *worst, char *out, size_t size) {
  if (!json_is_object(worst)) {
    snprintf(out, size, "none");
    return;
  }
  const char *fn = str(json_object_get(worst, "function"), "?");
  const char *file = json_string_value(json_object_get(worst, "file"));
  if (file)
    snprintf(out, size, "%s at %s:%lld", fn, file,
             count(json_object_get(worst, "line")));
  else
    snprintf(out, size, "%s in %s", fn,
             str(json_object_get(worst, "caller"), "?"));
}

static void print_site(FILE *f, json_t *s) {
  /* "via": the library function the program called, as the shim says it */
  const char *via = json_string_value(json_object_get(s, "via"));
  fprintf(f, "blockwatch: %s()%s%s%s x%lld, %.3f ms blocked:\n",
          str(json_object_get(s, "function"), "?"), via ? " via " : "",
          via ? via : "", via ? "()" : "", count(json_object_get(s, "count")),
          ms(json_object_get(s, "blocked_ms")));
  size_t i;
  json_t *fr;
  json_array_foreach(json_object_get(s, "frames"), i, fr) {
    const char *file = json_string_value(json_object_get(fr, "file"));
    const char *note = json_string_value(json_object_get(fr, "note"));
    if (json_is_null(json_object_get(fr, "function")))
      fprintf(f, "blockwatch:     #%zu (%s+%s)%s%s\n", i,
              str(json_object_get(fr, "module"), "?"),
              str(json_object_get(fr, "offset"), "?"), note ? ": " : "",
              note ? note : "");
    else if (file)
      fprintf(f, "blockwatch:     #%zu in %s %s:%lld\n", i,
              str(json_object_get(fr, "function"), "?"), file,
              count(json_object_get(fr, "line")));
    else
      fprintf(f, "blockwatch:     #%zu in %s\n", i,
              str(json_object_get(fr, "function"), "?"));
  }
  const char *hint = json_string_value(json_object_get(s, "hint"));
  if (hint)
    fprintf(f, "blockwatch:     hint: %s\n", hint);
}

/* "  on other threads: read() x120, ... (and 3 more functions)". */
static void print_other_threads(FILE *f, json_t *by_fn) {
  size_t n = json_array_size(by_fn), shown = n < 5 ? n : 5;
  if (n == 0)
    return;
  fprintf(f, "blockwatch:   on other threads: ");
  for (size_t i = 0; i < shown; i++) {
    json_t *e = json_array_get(by_fn, i);
    fprintf(f, "%s%s() x%lld", i ? ", " : "",
            str(json_object_get(e, "function"), "?"),
            count(json_object_get(e, "count")));
  }
  if (n > shown)
    fprintf(f, " (and %zu more function%s)", n - shown,
            n - shown == 1 ? "" : "s");
  fputc('\n', f);
}

/* The calls of reports[] in event-loop callbacks (loops[].blocking_calls). */
static long long loop_calls(json_t *report) {
  long long n = 0;
  size_t i;
  json_t *l;
  json_array_foreach(json_object_get(report, "loops"), i, l) {
    n += count(json_object_get(l, "blocking_calls"));
  }
  return n;
}

/* Where the count "on workers" was, as the shim's text says it after the
 * count: on pool workers, in event-loop callbacks, or both with each one's
 * count. */
static const char *where_counted(long long all, long long in_loops, char *buf,
                                 size_t size) {
  if (in_loops == 0)
    return " on pool workers";
  if (in_loops >= all)
    return " in event-loop callbacks";
  snprintf(buf, size, ": %lld on pool workers, %lld in event-loop callbacks",
           all - in_loops, in_loops);
  return buf;
}

/* One process as the shim prints its own report, without the SUMMARY. */
static void print_process(FILE *f, json_t *report, const char *json_path) {
  json_t *calls = json_object_get(report, "blocking_calls");
  fprintf(f, "blockwatch: ==== report for pid %lld (%s)\n",
          count(json_object_get(report, "pid")),
          str(json_object_get(report, "program"), "?"));
  char buf[96];
  long long on = count(json_object_get(calls, "on_workers"));
  fprintf(f,
          "blockwatch: %lld blocking call(s)%s, %.3f ms blocked; %lld on "
          "other threads\n",
          on, where_counted(on, loop_calls(report), buf, sizeof buf),
          ms(json_object_get(calls, "blocked_ms")),
          count(json_object_get(calls, "on_other_threads")));
  print_other_threads(f,
                      json_object_get(calls, "on_other_threads_by_function"));
  size_t i;
  json_t *p;
  json_array_foreach(json_object_get(report, "pools"), i, p) {
    json_t *starv = json_object_get(p, "starvation_delay_ms");
    char idle[64] = "";
    long long idle_waits = count(json_object_get(p, "idle_waits"));
    if (idle_waits > 0)
      snprintf(idle, sizeof idle, "; %lld idle wait(s) not counted",
               idle_waits);
    fprintf(f,
            "blockwatch: pool '%s': %lld workers, peak %lld blocked, all "
            "blocked for %.3f ms, starvation delay %.3f ms over %lld "
            "item(s) (max %.3f ms); kind %s%s\n",
            str(json_object_get(p, "name"), "?"),
            count(json_object_get(p, "workers")),
            count(json_object_get(p, "peak_blocked_workers")),
            ms(json_object_get(p, "all_blocked_ms")),
            ms(json_object_get(starv, "total")),
            count(json_object_get(starv, "items")),
            ms(json_object_get(starv, "max")),
            str(json_object_get(p, "kind"), "?"), idle);
  }
  /* The loops as the shim's text names them: the main thread is the one
   * whose id is the process's. */
  json_array_foreach(json_object_get(report, "loops"), i, p) {
    long long tid = count(json_object_get(p, "thread"));
    char thread[48] = "the main thread";
    if (tid != count(json_object_get(report, "pid")))
      snprintf(thread, sizeof thread, "thread %lld", tid);
    fprintf(f,
            "blockwatch: loop %s on %s: %lld blocking call(s) in callbacks, "
            "%.3f ms blocked; longest callback %.3f ms\n",
            str(json_object_get(p, "kind"), "?"), thread,
            count(json_object_get(p, "blocking_calls")),
            ms(json_object_get(p, "blocked_ms")),
            ms(json_object_get(p, "longest_callback_ms")));
  }
  json_t *sites = json_object_get(report, "call_sites");
  json_t *s;
  json_array_foreach(sites, i, s) {
    if (i == 10)
      break;
    print_site(f, s);
  }
  if (json_array_size(sites) > 10)
    fprintf(f, "blockwatch: ... %zu more call site(s)%s\n",
            json_array_size(sites) - 10,
            json_path ? ", in the JSON report" : "");
}

void bwm_print(FILE *f, json_t *merged, const char *json_path) {
  json_t *procs = json_object_get(merged, "processes");
  size_t n = json_array_size(procs), i, flagged = 0;
  json_t *report;
  /* Every process that blocked a worker in full; the others in a line. */
  json_array_foreach(procs, i, report) {
    json_t *calls = json_object_get(report, "blocking_calls");
    int blocked = count(json_object_get(calls, "on_workers")) > 0;
    flagged += (size_t)blocked;
    if (n == 1 || blocked)
      print_process(f, report, json_path);
  }
  if (n > 1) {
    fprintf(f,
            "blockwatch: ==== %zu processes, %zu with blocking calls on pool "
            "workers:\n",
            n, flagged);
    json_array_foreach(procs, i, report) {
      json_t *calls = json_object_get(report, "blocking_calls");
      fprintf(f,
              "blockwatch:   pid %lld (%s): %lld blocking call(s), %.3f ms "
              "blocked\n",
              count(json_object_get(report, "pid")),
              str(json_object_get(report, "program"), "?"),
              count(json_object_get(calls, "on_workers")),
              ms(json_object_get(calls, "blocked_ms")));
    }
  }
  if (json_path)
    fprintf(f, "blockwatch: JSON report: %s\n", json_path);
  json_t *sum = json_object_get(merged, "summary");
  char worst[512];
  worst_text(json_object_get(sum, "worst"), worst, sizeof worst);
  long long on = count(json_object_get(sum, "on_workers")), in_loops = 0;
  json_array_foreach(procs, i, report) {
    in_loops += loop_calls(report);
  }
  char buf[96];
  fprintf(f,
          "blockwatch: SUMMARY: blockwatch: %lld blocking call%s%s (%.3f "
          "ms), starvation delay %.3f ms; worst: %s\n",
          on, on == 1 ? "" : "s", where_counted(on, in_loops, buf, sizeof buf),
          ms(json_object_get(sum, "blocked_ms")),
          ms(json_object_get(sum, "starvation_delay_ms")), worst);
}

int bwm_findings(json_t *merged) {
  return count(json_object_get(json_object_get(merged, "summary"),
                               "on_workers")) > 0;
}
