/* trace.c - trace=FILE: a Chrome trace-event JSON timeline (Perfetto,
 * chrome://tracing): an "X" slice per counted blocking call on the
 * worker's tid, "C" counters for blocked workers and queue length per pool,
 * a "queue wait" slice per item starved for 1 ms or more (from its
 * enqueue, for its queue wait) on one lane per pool, and thread_name
 * metadata for workers.
 *
 * Invariants:
 *  - Events go to one buffer mapped once in the constructor (mmap, not
 *    malloc); a writer claims an index with one atomic add and publishes the
 *    event with a release store of its type. A full buffer drops events and
 *    counts them (reported as trace metadata).
 *  - Queue waits are bounded apart from the rest (WAIT_CAP) so that a
 *    program starving millions of items cannot crowd the blocked calls out
 *    of the buffer; waits over the cap are only counted.
 *  - Timestamps are microseconds since the shim started (CLOCK_MONOTONIC).
 *  - The file is written at the final report, atomically (bwsh__file_*); a
 *    fork child writes its own (bwsh__output_path).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shim.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { EV_NONE = 0, EV_SLICE, EV_COUNTER, EV_NAME, EV_WAIT };

typedef struct event {
  atomic_int type;
  int tid;   /* slice: thread; counter, wait: pool */
  int which; /* slice: function; counter: BW_TRACE_* */
  uint64_t ts;
  uint64_t value; /* slice, wait: duration; counter: value */
  uint64_t extra; /* wait: starvation delay */
} event;

#define CAPACITY (1u << 20)
#define WAIT_CAP (CAPACITY / 8)
/* The waits of pool i go on the lane of this made-up tid plus i: far above
 * any Linux tid (pid_max is at most 2^22), so it never names a thread. */
#define WAIT_LANE_TID 0x40000000

static event *events;
static atomic_uint_least64_t next, lost, waits, lost_waits;
static uint64_t origin;

void bwsh__trace_init(void) {
  origin = bwsh__now_ns();
  if (!bwsh__opt.trace_path[0] || events)
    return;
  void *p = mmap(NULL, CAPACITY * sizeof(event), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    bwsh__log("warning: trace: cannot map the event buffer; no trace");
    return;
  }
  events = p;
}

static void add(int type, int tid, int which, uint64_t ts, uint64_t value,
                uint64_t extra) {
  if (!events)
    return;
  uint64_t i = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed);
  if (i >= CAPACITY) {
    atomic_fetch_add_explicit(&lost, 1, memory_order_relaxed);
    return;
  }
  event *e = &events[i];
  e->tid = tid;
  e->which = which;
  e->ts = ts;
  e->value = value;
  e->extra = extra;
  atomic_store_explicit(&e->type, type, memory_order_release);
}

void bwsh__trace_slice(int fn, int tid, uint64_t start_ns, uint64_t dur_ns) {
  add(EV_SLICE, tid, fn, start_ns, dur_ns, 0);
}

/* Starvation shorter than this is the moment a spare or parked worker takes
 * to pick an item up, not a blocked pool: a slice for it would only bury
 * the waits that matter (the report still counts it). */
#define WAIT_MIN_STARVED_NS 1000000u

void bwsh__trace_queue_wait(int pool, uint64_t enqueue_ns, uint64_t wait_ns,
                            uint64_t starved_ns) {
  if (!events || starved_ns < WAIT_MIN_STARVED_NS)
    return;
  if (atomic_fetch_add_explicit(&waits, 1, memory_order_relaxed) >= WAIT_CAP) {
    atomic_fetch_add_explicit(&lost_waits, 1, memory_order_relaxed);
    return;
  }
  add(EV_WAIT, pool, 0, enqueue_ns, wait_ns, starved_ns);
}

void bwsh__trace_counter(int pool, int which, uint64_t ts_ns, uint64_t value) {
  add(EV_COUNTER, pool, which, ts_ns, value, 0);
}

/* The name's 16 bytes ride in ts and value. */
void bwsh__trace_thread_name(int tid, const char name[16]) {
  uint64_t w[2];
  memcpy(w, name, sizeof w);
  add(EV_NAME, tid, 0, w[0], w[1], 0);
}

void bwsh__trace_after_fork(void) {
  if (events)
    memset(events, 0, CAPACITY * sizeof(event));
  atomic_store(&next, 0);
  atomic_store(&lost, 0);
  atomic_store(&waits, 0);
  atomic_store(&lost_waits, 0);
}

static void ts_field(bwsh__out *o, uint64_t ns) {
  bwsh__out_str(o, ",\"ts\":");
  bwsh__out_us(o, ns > origin ? ns - origin : 0);
}

/* The fields every "X" slice has after its name and kind. */
static void slice_fields(bwsh__out *o, uint64_t ts, uint64_t dur, int64_t pid,
                         int64_t tid) {
  ts_field(o, ts);
  bwsh__out_str(o, ",\"dur\":");
  bwsh__out_us(o, dur);
  bwsh__out_str(o, ",\"pid\":");
  bwsh__out_i64(o, pid);
  bwsh__out_str(o, ",\"tid\":");
  bwsh__out_i64(o, tid);
}

void bwsh__trace_write(void) {
  if (!events)
    return;
  char path[600], tmp[700];
  bwsh__output_path(bwsh__opt.trace_path, path, sizeof path);
  int fd = bwsh__file_begin(path, tmp, sizeof tmp);
  if (fd < 0)
    return;
  bwsh__out o = {.fd = fd};
  int pid = (int)getpid();
  bwsh__out_str(&o, "{\"traceEvents\":[\n");
  bwsh__out_str(&o, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":");
  bwsh__out_i64(&o, pid);
  bwsh__out_str(&o, ",\"tid\":0,\"args\":{\"name\":");
  bwsh__out_jstr(&o, program_invocation_name);
  bwsh__out_str(&o, "}}");
  uint64_t n = atomic_load(&next);
  if (n > CAPACITY)
    n = CAPACITY;
  for (uint64_t i = 0; i < n; i++) {
    const event *e = &events[i];
    int type = atomic_load_explicit(&e->type, memory_order_acquire);
    if (type == EV_SLICE) {
      bwsh__out_str(&o, ",\n{\"name\":");
      bwsh__out_jstr(&o, bwsh__fn_name(e->which));
      bwsh__out_str(&o, ",\"cat\":\"blocking\",\"ph\":\"X\"");
      slice_fields(&o, e->ts, e->value, pid, e->tid);
      bwsh__out_str(&o, ",\"args\":{}}");
    } else if (type == EV_WAIT) {
      bwsh__pool_report pr;
      bwsh__pool_get(e->tid, &pr);
      bwsh__out_str(&o, ",\n{\"name\":\"queue wait\",\"cat\":\"queue\","
                        "\"ph\":\"X\"");
      slice_fields(&o, e->ts, e->value, pid, WAIT_LANE_TID + e->tid);
      bwsh__out_str(&o, ",\"args\":{\"pool\":");
      bwsh__out_jstr(&o, pr.name);
      bwsh__out_str(&o, ",\"starvation_ms\":");
      bwsh__out_ms(&o, e->extra);
      bwsh__out_str(&o, ",\"wait_ms\":");
      bwsh__out_ms(&o, e->value);
      bwsh__out_str(&o, "}}");
    } else if (type == EV_NAME) {
      char name[17];
      uint64_t w[2] = {e->ts, e->value};
      memcpy(name, w, 16);
      name[16] = '\0';
      bwsh__out_str(&o, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":");
      bwsh__out_i64(&o, pid);
      bwsh__out_str(&o, ",\"tid\":");
      bwsh__out_i64(&o, e->tid);
      bwsh__out_str(&o, ",\"args\":{\"name\":");
      bwsh__out_jstr(&o, name);
      bwsh__out_str(&o, "}}");
    } else if (type == EV_COUNTER) {
      bwsh__pool_report pr;
      bwsh__pool_get(e->tid, &pr);
      int blocked = e->which == BW_TRACE_BLOCKED;
      bwsh__out_str(&o, ",\n{\"name\":\"");
      bwsh__out_str(&o, blocked ? "blocked workers" : "queue length");
      bwsh__out_str(&o, "\",\"ph\":\"C\"");
      ts_field(&o, e->ts);
      bwsh__out_str(&o, ",\"pid\":");
      bwsh__out_i64(&o, pid);
      bwsh__out_str(&o, ",\"tid\":0,\"args\":{");
      bwsh__out_jstr(&o, pr.name);
      bwsh__out_str(&o, ":");
      bwsh__out_u64(&o, e->value);
      bwsh__out_str(&o, "}}");
    }
  }
  bwsh__out_str(&o, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{"
                    "\"tool\":\"blockwatch\",\"dropped_events\":");
  bwsh__out_u64(&o, atomic_load(&lost));
  bwsh__out_str(&o, ",\"dropped_queue_waits\":");
  bwsh__out_u64(&o, atomic_load(&lost_waits));
  bwsh__out_str(&o, "}}\n");
  bwsh__out_flush(&o);
  bwsh__file_commit(fd, tmp, path, !o.failed);
}
