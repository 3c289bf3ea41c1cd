/* shim.h - internal interfaces shared by the files of libblockwatch.so.
 *
 * Invariants:
 *  - Everything here is internal (bw__ prefix, hidden visibility); the only
 *    exported symbols of the library are the wrapped libc/runtime functions
 *    and blockwatch_tool_attach.
 *  - Per-thread state lives in one initial-exec TLS struct (bw__self): an
 *    initial-exec access is a plain %fs load, never a call into the loader
 *    (which could allocate) from a wrapped function.
 *  - bw__self.depth > 0 means "inside the shim": every wrapped function then
 *    goes straight to the real one. The shim raises it around its own work,
 *    so its own writes, locks and runtime calls are never counted.
 */
#ifndef BW_SHIM_H
#define BW_SHIM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <blockwatch/rules.h>

#define BW__HIDDEN __attribute__((visibility("hidden")))
#define BW__TLS __attribute__((tls_model("initial-exec")))

/* ---- options (options.c) ----------------------------------------------- */

enum { BW_REPORT_NONE = 0, BW_REPORT_TEXT = 1, BW_REPORT_JSON = 2 };
enum { BW_FAIL_OFF = 0, BW_FAIL_NOW = 1, BW_FAIL_REPORT = 2 };

typedef struct bw__options {
  int report;             /* BW_REPORT_* bits */
  char report_path[512];  /* "" = blockwatch.<pid>.json */
  int fail;               /* BW_FAIL_* */
  int exitcode;           /* status for fail modes */
  uint64_t threshold_ns;  /* shorter calls on workers are not counted */
  int compensate;         /* tell the runtime when a worker blocks */
  char trace_path[512];   /* "" = no trace */
  int report_signal;      /* 0 = none */
  char worker_name[64];   /* glob on thread names, "" = off */
  char worker_start[128]; /* start routine symbol, "" = off */
  char rules_path[512];   /* extra rule file, "" = none */
  int default_rules;      /* load the embedded libc/blockwatch packs */
  char categories[256];   /* "" = rules defaults */
  int lock;               /* enable the lock category */
  int verbosity;          /* 0 quiet unless findings, 1 always, 2 debug */
  int fatal_signals;      /* report on fatal signals */
  unsigned frames;        /* caller frames kept per call site */
  unsigned sample_items;  /* time one runtime item in this many (gate) */
} bw__options;

BW__HIDDEN extern bw__options bw__opt;

/* Parses BLOCKWATCH_OPTIONS into bw__opt (defaults first). Warns once per
 * bad key or value and keeps the default. */
BW__HIDDEN void bw__options_parse(const char *text);

/* ---- output (out.c) ------------------------------------------------------ */

/* Prints one "blockwatch: ..." line to stderr unless stderr was closed or
 * replaced by another file since startup. printf-style, no allocation. */
BW__HIDDEN void bw__log(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/* Remembers which file stderr is, for bw__log. */
BW__HIDDEN void bw__log_init(void);

/* A tiny buffered writer on a file descriptor (no allocation). */
typedef struct bw__out {
  int fd;
  size_t len;
  int failed;
  char buf[4096];
} bw__out;

BW__HIDDEN void bw__out_bytes(bw__out *o, const char *s, size_t n);
BW__HIDDEN void bw__out_str(bw__out *o, const char *s);
BW__HIDDEN void bw__out_u64(bw__out *o, uint64_t v);
BW__HIDDEN void bw__out_i64(bw__out *o, int64_t v);
/* Nanoseconds as milliseconds with three decimals ("1000.000"). */
BW__HIDDEN void bw__out_ms(bw__out *o, uint64_t ns);
/* Microseconds with three decimals, for trace timestamps. */
BW__HIDDEN void bw__out_us(bw__out *o, uint64_t ns);
/* A JSON string literal, escaped; NULL becomes null. */
BW__HIDDEN void bw__out_jstr(bw__out *o, const char *s);
BW__HIDDEN void bw__out_flush(bw__out *o);

/* Writes through the real write(2), retrying on EINTR and short writes. */
BW__HIDDEN int bw__write_all(int fd, const char *p, size_t n);

/* ---- clock --------------------------------------------------------------- */

BW__HIDDEN uint64_t bw__now_ns(void);

/* ---- wrapped functions (interpose.c, table.h) ---------------------------- */

#define BW__FN_ENUM(ret, name, canon, params, args, cat, gate) BW_FN_##name,
#define BW__LOCK_ENUM(name, type, trylock, cat, xp, xa) BW_FN_##name,
#include "table.h"
enum bw__fn {
  BW_SHIM_FUNCS(BW__FN_ENUM) BW_SHIM_LOCKS(BW__LOCK_ENUM)
      BW_FN_pthread_cond_wait,
  BW_FN_pthread_cond_timedwait,
  BW_FN_sync,
  BW_FN_COUNT
};
#undef BW__FN_ENUM
#undef BW__LOCK_ENUM

/* Name of a wrapped function as reported ("read" for __read_chk too). */
BW__HIDDEN const char *bw__fn_name(int fn);
/* Per function: 1 when its calls count as blocking (rules + options). */
BW__HIDDEN extern unsigned char bw__fn_enabled[BW_FN_COUNT];
/* Computes bw__fn_enabled from the rules and options. */
BW__HIDDEN void bw__fn_enable_init(void);

/* Resolves every real function (dlsym RTLD_NEXT). Idempotent. */
BW__HIDDEN void bw__resolve_all(void);

/* Real functions the shim itself needs (resolved by bw__resolve_all). */
BW__HIDDEN long bw__real_write(int fd, const void *p, size_t n);
BW__HIDDEN int bw__real_close(int fd);
BW__HIDDEN int bw__real_fcntl(int fd, int cmd, long arg);
BW__HIDDEN void bw__real_exit_now(int status) __attribute__((noreturn));

/* ---- per-thread state and ledger (state.c) ------------------------------ */

enum { BW_THREAD_UNKNOWN = 0, BW_THREAD_OTHER, BW_THREAD_WORKER };

/* Process-wide counters, partitioned per thread slot so that the hot path
 * is a plain store by the one owning thread. A slot freed by an exiting
 * thread keeps its counts; the next owner adds to them. */
typedef struct bw__slot {
  atomic_int used;
  atomic_int tid;
  atomic_uint_least64_t calls_worker;
  atomic_uint_least64_t calls_other;
  atomic_uint_least64_t blocked_ns_worker;
  /* Start of the counted call this slot's thread is in on a worker (0:
   * none): the report counts calls still blocked (a hang, a deadlock). */
  atomic_uint_least64_t busy_since;
  char name[16]; /* thread name when it was classified a worker */
  atomic_int named;
} bw__slot;

typedef struct bw__thread {
  int depth;   /* > 0: inside the shim, pass everything through */
  int kind;    /* BW_THREAD_* */
  int pool;    /* pool index when a worker, else -1 */
  int in_item; /* runtime worker running an item */
  /* When set, asked instead of in_item: the runtime's current_item hook
   * (a runtime that has it is spared item_finished on every item). */
  int (*item_query)(void);
  int classified_by_option; /* worker by name/start routine */
  int blocked_pool;         /* pool marked blocked by the current call, -1 */
  int locks_held;           /* pool spinlocks this thread holds (pools.c) */
  int tid;
  unsigned shard; /* 1 + its per-pool item shard (pools.c); 0: none yet */
  bw__slot *slot;
} bw__thread;

BW__HIDDEN extern BW__TLS __thread bw__thread bw__self;
/* 0 in a vfork child (which shares the parent's memory), else 1. */
BW__HIDDEN int bw__is_own_process(void);
/* Records the pid this memory belongs to (constructor, fork child). */
BW__HIDDEN void bw__own_pid_set(void);
/* 1 once the constructor finished (options parsed, symbols resolved). */
BW__HIDDEN extern atomic_int bw__active;

/* One timed blocking call in progress. */
typedef struct bw__call {
  int fn;
  void *caller; /* return address into the caller of the wrapped function */
  int worker;   /* counted as a call on a worker */
  int pool;
  int compensated;
  int counted_early; /* counted at begin (no threshold): a hang still shows */
  int site;          /* its call site, when counted early (-1: none) */
  uint64_t start_ns;
} bw__call;

/* Begins / ends a counted call (see interpose.c for who calls them). Both
 * keep errno. begin may not return (fail=1). caller identifies the site. */
BW__HIDDEN void bw__call_begin(bw__call *c, int fn, void *caller);
BW__HIDDEN void bw__call_end(bw__call *c);
/* The short way for a counted call on a thread already classified as not
 * a worker: bumps its "other threads" count and returns 1 (the caller then
 * just makes the real call, no begin/end); 0 when the call needs
 * bw__call_begin / bw__call_end. Keeps errno. */
BW__HIDDEN int bw__count_other_call(void);

/* 1 when the descriptor may block (O_NONBLOCK clear); cached per fd. */
BW__HIDDEN int bw__fd_blocking(int fd);
/* Forgets what is cached about fd (closed, reused, flags changed). */
BW__HIDDEN void bw__fd_forget(int fd);

/* Thread bookkeeping. */
BW__HIDDEN bw__slot *bw__slot_get(void);
BW__HIDDEN void bw__thread_classify(void);
/* Records the calling thread's name in its slot (trace metadata). */
BW__HIDDEN void bw__thread_name_slot(void);
/* Resets per-process state in a fork child. */
BW__HIDDEN void bw__state_after_fork(void);
BW__HIDDEN void bw__state_init(void);

/* Sums over all slots. */
typedef struct bw__totals {
  uint64_t calls_worker, calls_other, blocked_ns_worker;
  uint64_t in_progress, in_progress_ns; /* worker calls blocked right now */
} bw__totals;
BW__HIDDEN void bw__totals_get(bw__totals *t);

#define BW_MAX_SLOTS 1024
BW__HIDDEN extern bw__slot bw__slots[BW_MAX_SLOTS];

/* ---- pools (pools.c) ----------------------------------------------------- */

#define BW_MAX_POOLS 32
#define BW_HIST_BUCKETS 512

typedef struct bw__hist {
  atomic_uint_least64_t b[BW_HIST_BUCKETS];
} bw__hist;
BW__HIDDEN void bw__hist_add(bw__hist *h, uint64_t v);
/* The value at quantile q (0..1), an upper bound of the bucket. */
BW__HIDDEN uint64_t bw__hist_quantile(const bw__hist *h, double q);

typedef struct bw__pool_report {
  char name[48];
  unsigned workers, peak_blocked;
  uint64_t all_blocked_ns;
  uint64_t starv_total, starv_max, starv_p99, starv_items;
  uint64_t qwait_max, qwait_p99, items;
  uint64_t timed_items; /* items whose queue wait was measured */
  uint64_t compensated;
} bw__pool_report;

/* Index of the option-classified pool ("worker_name"/"worker_start"). */
BW__HIDDEN int bw__pool_for_option(void);
/* A worker of pool p begins / ends a blocking call (at time now). */
BW__HIDDEN void bw__pool_block(int p, uint64_t now);
BW__HIDDEN void bw__pool_unblock(int p, uint64_t now);
/* Sets the runtime's item time gate (pools.c) after the options are read
 * or a fork; the pools' all-blocked intervals close and open it. */
BW__HIDDEN void bw__pool_gate_init(uint64_t now);
/* A thread classified by option joins / leaves pool p. */
BW__HIDDEN void bw__pool_worker_join(int p, uint64_t now);
BW__HIDDEN void bw__pool_worker_leave(int p, uint64_t now);
BW__HIDDEN int bw__pool_count(void);
BW__HIDDEN void bw__pool_get(int p, bw__pool_report *out);
BW__HIDDEN void bw__pools_after_fork(void);
/* Compensation hooks of the runtime copy that owns pool p (or -1). */
BW__HIDDEN int bw__pool_notify(int p, int blocked);

/* ---- call sites (sites.c) ------------------------------------------------ */

#define BW_MAX_SITES 1024
#define BW_SITE_FRAMES 8

/* Adds count calls and blocked_ns to the site identified by fn + caller and
 * returns its index (-1 when the table is full). The first call at a site
 * captures its caller chain (backtrace, the expensive part); the later ones
 * only count, so a site's chain is the first one seen there. */
BW__HIDDEN int bw__site_add(int fn, void *caller, uint64_t count,
                            uint64_t blocked_ns);
/* Adds blocked time to a site returned by bw__site_add. */
BW__HIDDEN void bw__site_add_ns(int site, uint64_t blocked_ns);
/* Captures the caller chain outside the shim into frames (max n). */
BW__HIDDEN int bw__capture_frames(void **frames, int n);
BW__HIDDEN void bw__sites_init(void);
BW__HIDDEN void bw__sites_after_fork(void);

typedef struct bw__site_view {
  int fn;
  uint64_t count, blocked_ns;
  int nframes;
  void *frames[BW_SITE_FRAMES];
} bw__site_view;
/* Copies site i (0..BW_MAX_SITES-1); returns 0 if the slot is empty. */
BW__HIDDEN int bw__site_get(int i, bw__site_view *out);
/* Calls that found the table full. */
BW__HIDDEN uint64_t bw__sites_dropped(void);

/* ---- symbols (symbolize.c) ----------------------------------------------- */

typedef struct bw__sym {
  char function[128];
  char file[256];
  int line;
} bw__sym;
/* Symbolizes a return address (libdw when available, else dladdr). In a
 * signal handler (safe_only) only raw addresses are given. */
BW__HIDDEN void bw__symbolize(void *pc, bw__sym *out, int safe_only);
BW__HIDDEN void bw__symbolize_end(void);

/* ---- trace (trace.c) ----------------------------------------------------- */

BW__HIDDEN void bw__trace_init(void);
BW__HIDDEN void bw__trace_slice(int fn, int tid, uint64_t start_ns,
                                uint64_t dur_ns);
BW__HIDDEN void bw__trace_counter(int pool, int which, uint64_t ts_ns,
                                  uint64_t value);
BW__HIDDEN void bw__trace_thread_name(int tid, const char name[16]);
/* An item of pool `pool` that waited wait_ns in the queue from enqueue_ns,
 * starved_ns of it with every worker blocked: a "queue wait" slice when
 * starved_ns is 1 ms or more. */
BW__HIDDEN void bw__trace_queue_wait(int pool, uint64_t enqueue_ns,
                                     uint64_t wait_ns, uint64_t starved_ns);
BW__HIDDEN void bw__trace_write(void);
BW__HIDDEN void bw__trace_after_fork(void);
enum { BW_TRACE_BLOCKED = 0, BW_TRACE_QUEUE = 1 };

/* ---- report (report.c) and lifecycle (lifecycle.c) ----------------------- */

enum { BW_WHY_EXIT = 0, BW_WHY_SIGNAL, BW_WHY_INTERIM, BW_WHY_FAIL };
/* Writes the report (text and/or JSON per options). */
BW__HIDDEN void bw__report_write(int why);
/* The final report, at most once per process. */
BW__HIDDEN void bw__report_final(int why);
/* The file `given` (report_path, trace) names in this process: "%p" is
 * the pid; a fork child without "%p" appends ".<pid>". */
BW__HIDDEN void bw__output_path(const char *given, char *out, size_t size);
/* Nonzero when findings should make the process fail (fail=report). */
BW__HIDDEN int bw__has_findings(void);

BW__HIDDEN extern const bw_rules *bw__rules;

#endif /* BW_SHIM_H */
