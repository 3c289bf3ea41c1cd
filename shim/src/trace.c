/* trace.c - trace=FILE: the timeline as a Trace Event Format JSON file, in
 * the conventions Perfetto and chrome://tracing read: an "X" slice per
 * counted blocking call on the worker's tid (its args name the function
 * and the caller: symbolized when the file is written, or with symbolize=0
 * and in a signal handler left as module + offset for bw-merge to name
 * later), one "C" counter
 * track per pool and quantity ("blocked workers (NAME)", "queue length
 * (NAME)"), a "b"/"e" async pair per item starved for 1 ms or more (from
 * its enqueue, for its queue wait; a unique id each, one lane per pool),
 * an "X" slice per loop callback stretch of 1 ms or more on the loop's
 * thread, and "M" metadata naming the process and every thread that
 * appears.
 *
 * Invariants:
 *  - Events go to one buffer mapped once in the constructor (mmap, not
 *    malloc); a writer claims an index with one atomic add and publishes the
 *    event with a release store of its kind. A full buffer drops events and
 *    counts them (reported as trace metadata). The hot path records only
 *    numbers and a return address: names and symbols are looked up here,
 *    when the file is written.
 *  - Queue waits are bounded apart from the rest (WAIT_CAP) so that a
 *    program starving millions of items cannot crowd the blocked calls out
 *    of the buffer; waits over the cap are only counted.
 *  - Timestamps are microseconds since the shim started (CLOCK_MONOTONIC).
 *  - The file is written at the final report, atomically (bwsh__file_*); a
 *    fork child writes its own (bwsh__output_path). Writing it takes no
 *    lock and no malloc (its scratch tables are mapped and unmapped), so a
 *    fatal-signal report can write it too; there, and with symbolize=0, a
 *    slice's caller is written unnamed ("caller": null, then its module,
 *    build_id and offset, as a report's frame) and libdw is not touched:
 *    bw-merge names it from the file the report's "trace_file" gives.
 *  - Each event kind is one line of TRACE_KINDS: a new kind is that line,
 *    the function that records it and the writer that prints it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "merge.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct event {
  atomic_int kind;
  int tid;   /* slice: thread; counter, wait: pool */
  int which; /* slice: function; counter: BW_TRACE_* */
  uint64_t ts;
  uint64_t value; /* slice, wait: duration; counter: value */
  uint64_t extra; /* slice: return address into the caller; wait: starved */
} event;

struct writer;
typedef void write_fn(struct writer *w, const event *e, uint64_t index);
static write_fn write_slice, write_counter, write_name, write_wait, write_loop;

#define TRACE_KINDS(X)                                                         \
  X(SLICE, write_slice)                                                        \
  X(COUNTER, write_counter)                                                    \
  X(NAME, write_name)                                                          \
  X(WAIT, write_wait)                                                          \
  X(LOOP, write_loop)

enum {
  EV_NONE = 0,
#define KIND_ENUM(kind, fn) EV_##kind,
  TRACE_KINDS(KIND_ENUM)
#undef KIND_ENUM
      EV_KINDS
};

static write_fn *const writers[EV_KINDS] = {
#define KIND_WRITER(kind, fn) [EV_##kind] = fn,
    TRACE_KINDS(KIND_WRITER)
#undef KIND_WRITER
};

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

static void add(int kind, int tid, int which, uint64_t ts, uint64_t value,
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
  atomic_store_explicit(&e->kind, kind, memory_order_release);
}

void bwsh__trace_slice(int fn, int tid, void *caller, uint64_t start_ns,
                       uint64_t dur_ns) {
  add(EV_SLICE, tid, fn, start_ns, dur_ns, (uint64_t)(uintptr_t)caller);
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

/* A loop's callback stretch shorter than this is its own bookkeeping
 * between two waits, not lag: a slice for each would bury the ones that
 * matter. */
#define LOOP_MIN_STRETCH_NS 1000000u

void bwsh__trace_loop_callbacks(int kind, int tid, uint64_t start_ns,
                                uint64_t dur_ns) {
  if (dur_ns >= LOOP_MIN_STRETCH_NS)
    add(EV_LOOP, tid, kind, start_ns, dur_ns, 0);
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
  /* Only the events written so far: the rest of the mapping was never
   * touched, and clearing it would fault in every page of it. */
  uint64_t used = atomic_load(&next);
  if (events && used > 0)
    memset(events, 0, (used < CAPACITY ? used : CAPACITY) * sizeof(event));
  atomic_store(&next, 0);
  atomic_store(&lost, 0);
  atomic_store(&waits, 0);
  atomic_store(&lost_waits, 0);
}

/* ---- writing the file ---------------------------------------------------- */

/* Threads seen in the events, for their metadata; a program with more
 * threads than this gets the rest unnamed (the viewers show their tid). */
#define THREAD_CAP 8192
/* Callers symbolized so far, direct-mapped: slices repeat a few callers. */
#define SYM_CACHE 1024

typedef struct thread_seen {
  int used, tid;
  uint64_t name_event; /* index + 1 of its last thread_name event, 0: none */
} thread_seen;

typedef struct cached_sym {
  void *pc;
  bwsh__sym sym;
} cached_sym;

typedef struct scratch {
  thread_seen threads[THREAD_CAP];
  cached_sym syms[SYM_CACHE];
} scratch;

typedef struct writer {
  bwsh__out o;
  int pid;
  int raw;            /* callers unnamed: module + offset (bw-merge names) */
  scratch *tmp;       /* NULL when it could not be mapped */
  uint32_t wait_lane; /* bit i: pool i has queue waits */
  char pool_label[BW_MAX_POOLS][64];
} writer;

/* Every pool's own name; a name two pools share gets " #N" (N: its index
 * from 1), so that each pool keeps a counter track of its own. */
static void label_pools(writer *w) {
  static bwsh__pool_report pr[BW_MAX_POOLS];
  int n = bwsh__pool_count();
  if (n > BW_MAX_POOLS)
    n = BW_MAX_POOLS;
  for (int i = 0; i < n; i++)
    bwsh__pool_get(i, &pr[i]);
  for (int i = 0; i < n; i++) {
    int shared = 0;
    for (int k = 0; k < n && !shared; k++)
      shared = k != i && strcmp(pr[k].name, pr[i].name) == 0;
    snprintf(w->pool_label[i], sizeof w->pool_label[i],
             shared ? "%.47s #%d" : "%.47s", pr[i].name, i + 1);
  }
}

static const char *pool_label(const writer *w, int pool) {
  return pool >= 0 && pool < BW_MAX_POOLS && w->pool_label[pool][0]
             ? w->pool_label[pool]
             : "?";
}

/* The table entry of tid, made on first sight (NULL: no table, or full). */
static thread_seen *thread_entry(writer *w, int tid) {
  if (!w->tmp)
    return NULL;
  uint32_t h = ((uint32_t)tid * 2654435761u) % THREAD_CAP;
  for (uint32_t probe = 0; probe < THREAD_CAP; probe++) {
    thread_seen *t = &w->tmp->threads[(h + probe) % THREAD_CAP];
    if (!t->used) {
      t->used = 1;
      t->tid = tid;
      return t;
    }
    if (t->tid == tid)
      return t;
  }
  return NULL;
}

/* A slice's caller, from the cache, else looked up (into own when there
 * is no cache). The caller is its call site's first frame in the
 * program's own code (sites.c: past libraries and sanitizer
 * interceptors), chosen when the slice was recorded, so naming it is one
 * symbolization of pc. */
static const bwsh__sym *caller_sym(writer *w, void *pc, bwsh__sym *own) {
  if (!w->tmp) {
    bwsh__symbolize(pc, own, 0);
    return own;
  }
  uintptr_t v = (uintptr_t)pc;
  cached_sym *c = &w->tmp->syms[(v ^ (v >> 12)) % SYM_CACHE];
  if (c->pc != pc) {
    bwsh__symbolize(pc, &c->sym, 0);
    c->pc = pc;
  }
  return &c->sym;
}

static void ts_field(bwsh__out *o, uint64_t ns) {
  bwsh__out_str(o, ",\"ts\":");
  bwsh__out_us(o, ns > origin ? ns - origin : 0);
}

/* Opens an event: its name (JSON-escaped) and then `rest`, raw. */
static void head(writer *w, const char *name, const char *rest) {
  bwsh__out_str(&w->o, ",\n{\"name\":");
  bwsh__out_jstr(&w->o, name);
  bwsh__out_str(&w->o, rest);
}

/* A string field after the first: ,"key":"value" (value JSON-escaped). */
static void str_field(bwsh__out *o, const char *key, const char *value) {
  bwsh__out_str(o, ",\"");
  bwsh__out_str(o, key);
  bwsh__out_str(o, "\":");
  bwsh__out_jstr(o, value);
}

/* ,"pid":P,"tid":T */
static void ids(writer *w, int64_t tid) {
  bwsh__out_str(&w->o, ",\"pid\":");
  bwsh__out_i64(&w->o, w->pid);
  bwsh__out_str(&w->o, ",\"tid\":");
  bwsh__out_i64(&w->o, tid);
}

/* Opens the "X" slice of event e (from e->ts for e->value, on thread
 * e->tid), up to its args: its name and category `cat`. */
static void x_slice(writer *w, const event *e, const char *name,
                    const char *cat) {
  thread_entry(w, e->tid);
  head(w, name, ",\"cat\":");
  bwsh__out_jstr(&w->o, cat);
  bwsh__out_str(&w->o, ",\"ph\":\"X\"");
  ts_field(&w->o, e->ts);
  bwsh__out_str(&w->o, ",\"dur\":");
  bwsh__out_us(&w->o, e->value);
  ids(w, e->tid);
}

/* A caller left for bw-merge to name: "caller": null, then its module,
 * build_id and offset as a report's frame gives them (no lock, no
 * allocation, no libdw). An address in no module the shim saw has nothing
 * to be named from later: its caller is the raw address. */
static void unnamed_caller(bwsh__out *o, void *pc) {
  bwsh__module m;
  if (!bwsh__module_of(pc, &m)) {
    bwsh__sym own;
    bwsh__symbolize(pc, &own, 1);
    str_field(o, "caller", own.function);
    return;
  }
  bwsh__out_str(o, ",\"caller\":null");
  str_field(o, "module", m.path);
  str_field(o, "build_id", m.build_id);
  bwsh__out_str(o, ",\"offset\":\"");
  bwsh__out_hex(o, m.offset);
  bwsh__out_str(o, "\"");
}

static void write_slice(writer *w, const event *e, uint64_t index) {
  (void)index;
  bwsh__out *o = &w->o;
  const char *fn = bwsh__fn_name(e->which);
  x_slice(w, e, fn, "blocking");
  bwsh__out_str(o, ",\"args\":{\"function\":");
  bwsh__out_jstr(o, fn);
  void *pc = (void *)(uintptr_t)e->extra;
  if (pc && w->raw) {
    unnamed_caller(o, pc);
  } else if (pc) {
    bwsh__sym own;
    const bwsh__sym *s = caller_sym(w, pc, &own);
    str_field(o, "caller", s->function);
    if (s->file[0]) {
      char at[300];
      snprintf(at, sizeof at, "%s:%d", s->file, s->line);
      str_field(o, "at", at);
    }
  }
  bwsh__out_str(o, "}}");
}

/* A loop's callback stretch, "libuv callbacks", on the loop's thread: the
 * blocking calls its callbacks made are slices inside it. */
static void write_loop(writer *w, const event *e, uint64_t index) {
  (void)index;
  bwsh__out *o = &w->o;
  char name[32];
  snprintf(name, sizeof name, "%s callbacks", bwsh__loop_kind_name(e->which));
  x_slice(w, e, name, "loop");
  bwsh__out_str(o, ",\"args\":{\"loop\":");
  bwsh__out_jstr(o, bwsh__loop_kind_name(e->which));
  bwsh__out_str(o, "}}");
}

/* A starved item's wait as an async pair: catapult groups async slices by
 * the thread of their "b" (the pool's lane) and Perfetto by their name (the
 * pool's too); its own id keeps overlapping waits from having to nest. */
static void write_wait(writer *w, const event *e, uint64_t index) {
  bwsh__out *o = &w->o;
  const char *pool = pool_label(w, e->tid);
  if (e->tid >= 0 && e->tid < BW_MAX_POOLS)
    w->wait_lane |= 1u << e->tid;
  char name[96];
  snprintf(name, sizeof name, "queue wait (%s)", pool);
  char id[24];
  snprintf(id, sizeof id, "0x%llx", (unsigned long long)index);
  for (int end = 0; end <= 1; end++) {
    head(w, name,
         end ? ",\"cat\":\"queue\",\"ph\":\"e\",\"id2\":{\"local\":"
             : ",\"cat\":\"queue\",\"ph\":\"b\",\"id2\":{\"local\":");
    bwsh__out_jstr(o, id);
    bwsh__out_str(o, "}");
    ts_field(o, end ? e->ts + e->value : e->ts);
    ids(w, WAIT_LANE_TID + e->tid);
    if (end) {
      bwsh__out_str(o, ",\"args\":{}}");
      continue;
    }
    bwsh__out_str(o, ",\"args\":{\"pool\":");
    bwsh__out_jstr(o, pool);
    bwsh__out_str(o, ",\"starvation_ms\":");
    bwsh__out_ms(o, e->extra);
    bwsh__out_str(o, ",\"wait_ms\":");
    bwsh__out_ms(o, e->value);
    bwsh__out_str(o, "}}");
  }
}

/* One track per pool and quantity: catapult keeps one counter per name
 * (and its series per arg key), so two pools under one name would lose
 * all but the first pool's samples. */
static void write_counter(writer *w, const event *e, uint64_t index) {
  (void)index;
  bwsh__out *o = &w->o;
  char name[96];
  snprintf(name, sizeof name, "%s (%s)",
           e->which == BW_TRACE_BLOCKED ? "blocked workers" : "queue length",
           pool_label(w, e->tid));
  head(w, name, ",\"ph\":\"C\"");
  ts_field(o, e->ts);
  ids(w, 0);
  bwsh__out_str(o, ",\"args\":{\"value\":");
  bwsh__out_u64(o, e->value);
  bwsh__out_str(o, "}}");
}

/* Names are written once per thread, after the events (the last name a
 * thread took wins); without the scratch table, as they come. */
static void thread_name_event(writer *w, int tid, const char *name) {
  bwsh__out *o = &w->o;
  head(w, "thread_name", ",\"ph\":\"M\"");
  ids(w, tid);
  bwsh__out_str(o, ",\"args\":{\"name\":");
  bwsh__out_jstr(o, name);
  bwsh__out_str(o, "}}");
}

static void name_of(const event *e, char name[17]) {
  uint64_t words[2] = {e->ts, e->value};
  memcpy(name, words, 16);
  name[16] = '\0';
}

static void write_name(writer *w, const event *e, uint64_t index) {
  thread_seen *t = thread_entry(w, e->tid);
  if (t) {
    t->name_event = index + 1;
    return;
  }
  char name[17];
  name_of(e, name);
  thread_name_event(w, e->tid, name);
}

/* thread_name for every thread seen (its own name, else "thread TID") and
 * for the pools' wait lanes, which sort above the threads. */
static void write_thread_names(writer *w) {
  for (uint32_t i = 0; w->tmp && i < THREAD_CAP; i++) {
    const thread_seen *t = &w->tmp->threads[i];
    if (!t->used)
      continue;
    char name[32];
    if (t->name_event)
      name_of(&events[t->name_event - 1], name);
    if (!t->name_event || !name[0])
      snprintf(name, sizeof name, "thread %d", t->tid);
    thread_name_event(w, t->tid, name);
  }
  for (int p = 0; p < BW_MAX_POOLS; p++) {
    if (!(w->wait_lane & (1u << p)))
      continue;
    char name[96];
    snprintf(name, sizeof name, "queue waits (%s)", pool_label(w, p));
    thread_name_event(w, WAIT_LANE_TID + p, name);
    head(w, "thread_sort_index", ",\"ph\":\"M\"");
    ids(w, WAIT_LANE_TID + p);
    bwsh__out_str(&w->o, ",\"args\":{\"sort_index\":");
    bwsh__out_i64(&w->o, p - BW_MAX_POOLS);
    bwsh__out_str(&w->o, "}}");
  }
}

void bwsh__trace_write(int in_signal) {
  if (!events)
    return;
  char path[600], tmp[700];
  bwsh__output_path(bwsh__opt.trace_path, path, sizeof path);
  int fd = bwsh__file_begin(path, tmp, sizeof tmp);
  if (fd < 0)
    return;
  static writer w;
  memset(&w, 0, sizeof w);
  w.o.fd = fd;
  w.pid = (int)getpid();
  /* libdw locks and allocates: not in a handler; and with symbolize=0
   * bw-merge names the callers, once for every process of a run. */
  w.raw = in_signal || !bwsh__opt.symbolize;
  void *scratch_map = mmap(NULL, sizeof(scratch), PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  w.tmp = scratch_map == MAP_FAILED ? NULL : scratch_map;
  label_pools(&w);
  bwsh__out_str(&w.o, "{\"traceEvents\":[\n");
  bwsh__out_str(&w.o, "{\"name\":\"process_name\",\"ph\":\"M\"");
  ids(&w, 0);
  bwsh__out_str(&w.o, ",\"args\":{\"name\":");
  bwsh__out_jstr(&w.o, program_invocation_short_name);
  bwsh__out_str(&w.o, "}}");
  uint64_t n = atomic_load(&next);
  if (n > CAPACITY)
    n = CAPACITY;
  for (uint64_t i = 0; i < n; i++) {
    int kind = atomic_load_explicit(&events[i].kind, memory_order_acquire);
    if (kind > EV_NONE && kind < EV_KINDS)
      writers[kind](&w, &events[i], i);
  }
  write_thread_names(&w);
  bwsh__out_str(&w.o, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{"
                      "\"tool\":\"blockwatch\",\"dropped_events\":");
  bwsh__out_u64(&w.o, atomic_load(&lost));
  bwsh__out_str(&w.o, ",\"dropped_queue_waits\":");
  bwsh__out_u64(&w.o, atomic_load(&lost_waits));
  bwsh__out_str(&w.o, "}}\n");
  bwsh__out_flush(&w.o);
  if (w.tmp)
    munmap(w.tmp, sizeof(scratch));
  bwsh__file_commit(fd, tmp, path, !w.o.failed);
}

int bwsh__trace_file(char *out, size_t size) {
  static char path[600], cwd[4096]; /* static: a signal stack is small */
  if (!events)
    return 0;
  bwsh__output_path(bwsh__opt.trace_path, path, sizeof path);
  int n;
  if (path[0] == '/') {
    n = snprintf(out, size, "%s", path);
  } else {
    /* getcwd's system call: glibc's getcwd may allocate. A directory
     * unreachable from the root is no absolute path: no name then. */
    long got = syscall(SYS_getcwd, cwd, sizeof cwd);
    if (got <= 0 || cwd[0] != '/')
      return 0;
    n = snprintf(out, size, "%s/%s", cwd, path);
  }
  return n > 0 && (size_t)n < size;
}
