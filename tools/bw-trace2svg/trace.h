/* trace.h - the timeline model bw-trace2svg builds from a Chrome trace-event
 * JSON file, and the loader that builds it.
 *
 * Invariants:
 *  - All times are microseconds, as in the trace format; t_begin <= t_end
 *    whenever the trace has at least one timed event.
 *  - Every string in the model is owned by it and freed by t2s_trace_free().
 *  - Lanes are sorted by thread name (numbers compared as numbers, so
 *    "bw-2" comes before "bw-10"), then by tid; the spans of a lane and the
 *    points of a counter are sorted by time; counters are sorted by name.
 */
#ifndef T2S_TRACE_H
#define T2S_TRACE_H

#include <stddef.h>
#include <stdint.h>

/* One span of time on a lane. */
typedef struct t2s_span {
  double start_us;
  double dur_us;
  char *name;   /* the event's name, e.g. the blocking function */
  char *detail; /* a short rendering of its args, or NULL */
} t2s_span;

/* One thread of the traced process: a worker, or any thread with spans. */
typedef struct t2s_lane {
  int64_t pid;
  int64_t tid;
  char *name; /* from thread_name metadata; "tid N" when there was none */
  t2s_span *spans;
  size_t n_spans;
  int wait_lane; /* async queue waits began here: drawn as waits instead */
} t2s_lane;

typedef struct t2s_point {
  double ts_us;
  double value;
} t2s_point;

/* A "C" counter series: one per counter name and argument key. */
typedef struct t2s_counter {
  char *name; /* "name key"; just "name" when the key is "value" */
  t2s_point *points;
  size_t n_points;
  double max_value;
} t2s_counter;

typedef struct t2s_trace {
  t2s_lane *lanes;
  size_t n_lanes;
  t2s_span *waits; /* "queue wait" slices: the starved items' waits, */
                   /* named "queue wait" or "queue wait (POOL)" */
  size_t n_waits;
  t2s_counter *counters;
  size_t n_counters;
  double t_begin;   /* earliest timestamp of any timed event */
  double t_end;     /* latest end of any timed event */
  size_t n_ignored; /* events of kinds the timeline does not draw */
} t2s_trace;

/* Loads a trace: either {"traceEvents": [...]} or a bare array of events.
 * "X" slices (and B/E pairs, and async b/e pairs, matched on pid, cat, id
 * or id2, and name) become spans on their thread's lane, except slices
 * named "queue wait" or "queue wait (POOL)" (any case), which become
 * waits; an "i"/"I"
 * instant named "queue wait" becomes a wait ending at its ts when its args
 * carry the duration (dur / wait_us in microseconds, wait_ms in ms). "C"
 * events become counters, "M" thread_name events name lanes; anything else
 * is counted in n_ignored. Returns 0, or -1 with a message in err. */
int t2s_trace_load(const char *path, t2s_trace *out, char *err,
                   size_t err_size);

/* Frees everything the trace owns and zeroes it. */
void t2s_trace_free(t2s_trace *trace);

#endif /* T2S_TRACE_H */
