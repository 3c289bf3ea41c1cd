/* shim.h - internal interfaces shared by the files of libblockwatch.so.
 *
 * Invariants:
 *  - Everything here is internal (bwsh__ prefix, hidden visibility); the only
 *    exported symbols of the library are the wrapped libc/runtime functions
 *    and blockwatch_tool_attach.
 *  - Per-thread state lives in one initial-exec TLS struct (bwsh__self): an
 *    initial-exec access is a plain %fs load, never a call into the loader
 *    (which could allocate) from a wrapped function.
 *  - bwsh__self.depth > 0 means "inside the shim": every wrapped function then
 *    goes straight to the real one. The shim raises it around its own work,
 *    so its own writes, locks and runtime calls are never counted.
 */
#ifndef BW_SHIM_H
#define BW_SHIM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <blockwatch/rules.h>

#define BWSH__HIDDEN __attribute__((visibility("hidden")))
#define BWSH__TLS __attribute__((tls_model("initial-exec")))

/* ---- options (options.c) ----------------------------------------------- */

enum { BW_REPORT_NONE = 0, BW_REPORT_TEXT = 1, BW_REPORT_JSON = 2 };
enum { BW_FAIL_OFF = 0, BW_FAIL_NOW = 1, BW_FAIL_REPORT = 2 };

typedef struct bwsh__options {
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
  char item_fn[256];      /* globs on item functions, "" = off (items.c) */
  char rules_path[512];   /* extra rule file, "" = none */
  int default_rules;      /* load the embedded libc/blockwatch packs */
  char categories[256];   /* "" = rules defaults */
  int lock;               /* enable the lock category */
  int verbosity;          /* 0 quiet unless findings, 1 always, 2 debug */
  int fatal_signals;      /* report on fatal signals */
  unsigned frames;        /* caller frames kept per call site */
  unsigned sample_items;  /* time one runtime item in this many (gate) */
  int help;               /* print the options at start */
  int symbolize;          /* 0: frames as module + offset, named later */
} bwsh__options;

BWSH__HIDDEN extern bwsh__options bwsh__opt;

/* Parses BLOCKWATCH_OPTIONS into bwsh__opt (defaults first): key=value
 * items separated by ':' or ',' (a ',' only where a known "key=" follows),
 * a value in single or double quotes taken as it is. Warns once per bad
 * key or value and keeps the default. */
BWSH__HIDDEN void bwsh__options_parse(const char *text);
/* Prints every option, its default and meaning (help=1). */
BWSH__HIDDEN void bwsh__options_help(void);
/* 1 when one of the comma-separated globs in list matches s (the rules'
 * glob syntax, '*' and '?'; an empty glob matches nothing). No allocation. */
BWSH__HIDDEN int bwsh__glob_list_match(const char *list, const char *s);
/* Checks at start that the report and trace files can be written where
 * the options say: one warning per path that cannot. */
BWSH__HIDDEN void bwsh__options_check_paths(void);

/* ---- output (out.c) ------------------------------------------------------ */

/* Prints one "blockwatch: ..." line to stderr unless stderr was closed or
 * replaced by another file since startup. printf-style, no allocation. */
BWSH__HIDDEN void bwsh__log(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/* Remembers which file stderr is, for bwsh__log. */
BWSH__HIDDEN void bwsh__log_init(void);

/* A tiny buffered writer on a file descriptor (no allocation). */
typedef struct bwsh__out {
  int fd;
  size_t len;
  int failed;
  char buf[4096];
} bwsh__out;

BWSH__HIDDEN void bwsh__out_bytes(bwsh__out *o, const char *s, size_t n);
BWSH__HIDDEN void bwsh__out_str(bwsh__out *o, const char *s);
BWSH__HIDDEN void bwsh__out_u64(bwsh__out *o, uint64_t v);
BWSH__HIDDEN void bwsh__out_i64(bwsh__out *o, int64_t v);
/* Nanoseconds as milliseconds with three decimals ("1000.000"). */
BWSH__HIDDEN void bwsh__out_ms(bwsh__out *o, uint64_t ns);
/* Microseconds with three decimals, for trace timestamps. */
BWSH__HIDDEN void bwsh__out_us(bwsh__out *o, uint64_t ns);
/* "0x" and v in lowercase hex. */
BWSH__HIDDEN void bwsh__out_hex(bwsh__out *o, uintptr_t v);
/* A JSON string literal, escaped; NULL becomes null. */
BWSH__HIDDEN void bwsh__out_jstr(bwsh__out *o, const char *s);
BWSH__HIDDEN void bwsh__out_flush(bwsh__out *o);

/* Writes through the real write(2), retrying on EINTR and short writes. */
BWSH__HIDDEN int bwsh__write_all(int fd, const char *p, size_t n);

/* The file an output option (report_path, trace) names in this process:
 * every "%p" becomes the pid, "%e" the program's name (argv[0]'s last
 * part), "%%" a '%'; in a fork child a path without "%p" gets ".<pid>"
 * appended. 0, or -ENAMETOOLONG when out (still terminated) was too small. */
BWSH__HIDDEN int bwsh__path_expand(const char *given, int fork_child, char *out,
                                   size_t size);
/* 0 when a file can be created at path as far as can be told without
 * creating one (its directory exists and is writable, it is not a
 * directory), else a negative errno and one warning naming `what`, the
 * path the problem is about and the reason. Keeps errno. */
BWSH__HIDDEN int bwsh__path_check(const char *what, const char *path);

/* ---- clock --------------------------------------------------------------- */

BWSH__HIDDEN uint64_t bwsh__now_ns(void);

/* ---- wrapped functions: their ids (table.h) ------------------------------ */

#define BWSH__FN_ENUM(ret, name, canon, params, args, check) BW_FN_##name,
#define BWSH__LOCK_ENUM(name, type, trylock, xp, xa) BW_FN_##name,
#define BWSH__HAND_ENUM(name) BW_FN_##name,
#include "table.h"
enum bwsh__fn {
  BW_SHIM_FUNCS(BWSH__FN_ENUM) BW_SHIM_LOCKS(BWSH__LOCK_ENUM)
      BW_SHIM_BY_HAND(BWSH__HAND_ENUM) BW_FN_COUNT
};
#undef BWSH__FN_ENUM
#undef BWSH__LOCK_ENUM
#undef BWSH__HAND_ENUM

/* Name of a wrapped function as reported ("read" for __read_chk too);
 * policy.c, which looks the names up in the rules. */
BWSH__HIDDEN const char *bwsh__fn_name(int fn);

/* ---- per-thread state and ledger (state.c) ------------------------------ */

/* BLOCKING: a thread the runtime keeps apart for blocking work
 * (bw_run_blocking), whose calls are counted under their own heading;
 * RUNTIME: a runtime thread whose waits are its own idle waits (the
 * bw_fd_ready poller), not counted at all; POOL_IDLE: a foreign pool's
 * thread between items (its waits are the pool's parking, not counted at
 * all; while it runs an item it is a WORKER of that pool). */
enum {
  BW_THREAD_UNKNOWN = 0,
  BW_THREAD_OTHER,
  BW_THREAD_WORKER,
  BW_THREAD_BLOCKING,
  BW_THREAD_RUNTIME,
  BW_THREAD_POOL_IDLE
};

/* Process-wide counters, partitioned per thread slot so that the hot path
 * is a plain store by the one owning thread. A slot freed by an exiting
 * thread keeps its counts; the next owner adds to them. */
typedef struct bwsh__slot {
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
} bwsh__slot;

typedef struct bwsh__thread {
  int depth;   /* > 0: inside the shim, pass everything through */
  int kind;    /* BW_THREAD_* */
  int pool;    /* pool index when a worker, else -1 */
  int in_item; /* runtime worker running an item */
  /* When set, asked instead of in_item: the runtime's current_item hook
   * (a runtime that has it is spared item_finished on every item). */
  int (*item_query)(void);
  int classified_by_option; /* worker by name/start routine */
  /* A C-Thread-Pool worker: each call's site says whether it is the
   * pool's own wait or an item's (foreign_thpool.c). */
  int own_by_caller;
  /* The function of the item a foreign pool's trampoline is running (NULL:
   * none known): what tells two items sharing a helper apart (sites.c). */
  void *item_fn;
  int blocked_pool; /* pool marked blocked by the current call, -1 */
  int locks_held;   /* pool spinlocks this thread holds (pools.c) */
  /* BW_LIB_GLIB: GLib made this thread; whether for a function of its own
   * is asked at its first counted call (then cleared). */
  int born_of;
  /* This thread started libuv's pool: its calls take the long way (where
   * their caller is known) until one is no longer libuv's setup. */
  int uv_setup;
  int tid;
  unsigned shard; /* 1 + its per-pool item shard (pools.c); 0: none yet */
  bwsh__slot *slot;
} bwsh__thread;

BWSH__HIDDEN extern BWSH__TLS __thread bwsh__thread bwsh__self;
/* 0 in a vfork child (which shares the parent's memory), else 1. */
BWSH__HIDDEN int bwsh__is_own_process(void);
/* Records the pid this memory belongs to (constructor, fork child). */
BWSH__HIDDEN void bwsh__own_pid_set(void);
/* 1 once the constructor finished (options parsed, symbols resolved). */
BWSH__HIDDEN extern atomic_int bwsh__active;
/* 1 when the constructor gave up (the rules did not load): the shim stays
 * inactive for the life of the process (lifecycle.c). */
BWSH__HIDDEN extern atomic_int bwsh__stood_down;

/* One timed blocking call in progress. */
typedef struct bwsh__call {
  int fn;
  void *caller; /* return address into the caller of the wrapped function */
  int worker;   /* counted: 1 on a worker, 2 from a loop's callback */
  int pool;
  int compensated;
  int counted_early; /* counted at begin (no threshold): a hang still shows */
  int site;          /* its call site, when counted early (-1: none) */
  uint64_t start_ns;
  /* The stack slot holding `caller` (the wrapper's return address), when
   * the wrapper called bwsh__call_begin itself; NULL: not known. */
  void *const *caller_slot;
  uint64_t key; /* its site key, found with the item_fn verdict (0: none) */
} bwsh__call;

/* Begins / ends a counted call (see interpose.c for who calls them). Both
 * keep errno. begin may not return (fail=1). caller identifies the site. */
BWSH__HIDDEN void bwsh__call_begin(bwsh__call *c, int fn, void *caller);
BWSH__HIDDEN void bwsh__call_end(bwsh__call *c);
/* The short way for a counted call on a thread already classified as not
 * a worker: bumps its "other threads" count and returns 1 (the caller then
 * just makes the real call, no begin/end); 0 when the call needs
 * bwsh__call_begin / bwsh__call_end (among them a call from libuv's code
 * or an interposer, which may be libuv's setup). Keeps errno. */
BWSH__HIDDEN int bwsh__count_other_call(int fn, void *caller);

/* 1 when the descriptor may block (O_NONBLOCK clear); cached per fd.
 * Keeps errno. */
BWSH__HIDDEN int bwsh__fd_blocking(int fd);
/* Forgets what is cached about fd (closed, reused, flags changed). */
BWSH__HIDDEN void bwsh__fd_forget(int fd);

/* Thread bookkeeping. */
BWSH__HIDDEN bwsh__slot *bwsh__slot_get(void);
BWSH__HIDDEN void bwsh__thread_classify(void);
/* Makes every thread classify itself again at its next counted call (a
 * pool appeared, a runtime attached, a thread was renamed). */
BWSH__HIDDEN void bwsh__reclassify_all(void);
/* The calling thread runs the worker_start routine: a worker for life
 * (the pthread_create trampoline, interpose.c). */
BWSH__HIDDEN void bwsh__thread_is_option_worker(void);
/* What a thread was before a foreign item began, restored when it ends. */
typedef struct bwsh__item_frame {
  int kind, pool, in_item, classified_by_option;
  int (*item_query)(void);
  void *item_fn;
} bwsh__item_frame;
/* The calling thread starts / ends an item of foreign pool p (foreign_*.c)
 * queued at enqueue_ns (0: unknown, the item is then not timed) that runs
 * the function fn (its call sites are told apart by it). While it runs,
 * the thread is a worker of p; after it, a POOL_IDLE thread (a thread the
 * runtime or an option classified gets its kind back). Keep errno; never
 * nest across threads (begin and end on one thread). */
BWSH__HIDDEN void bwsh__foreign_item_begin(int p, uint64_t enqueue_ns, void *fn,
                                           bwsh__item_frame *saved);
BWSH__HIDDEN void bwsh__foreign_item_end(const bwsh__item_frame *saved);
/* The calling thread was made by foreign library code (BW_LIB_*, as
 * bwsh__foreign_thread_maker said in its creator): libuv's pool thread is
 * a POOL_IDLE thread from here on; GLib's is asked at its first counted
 * call whether it runs a function of GLib's own (then it is one too). Its
 * first instruction, from the pthread_create trampoline (interpose.c). */
BWSH__HIDDEN void bwsh__thread_born_of(int lib);
/* The calling thread is creating a thread that bwsh__foreign_thread_maker
 * called libuv's pool's: its own waits for them are libuv's setup. */
BWSH__HIDDEN void bwsh__thread_starts_uv_pool(void);
/* Records the calling thread's name in its slot (trace metadata). */
BWSH__HIDDEN void bwsh__thread_name_slot(void);
/* Resets per-process state in a fork child. */
BWSH__HIDDEN void bwsh__state_after_fork(void);
BWSH__HIDDEN void bwsh__state_init(void);

/* Sums over all slots. */
typedef struct bwsh__totals {
  uint64_t calls_worker, calls_other, blocked_ns_worker;
  uint64_t in_progress, in_progress_ns; /* worker calls blocked right now */
  uint64_t other_by_fn[BW_FN_COUNT];    /* calls_other, by BW_FN_* */
  uint64_t calls_blocking; /* on the runtime's bw_run_blocking threads */
} bwsh__totals;
BWSH__HIDDEN void bwsh__totals_get(bwsh__totals *t);

#define BW_MAX_SLOTS 1024
BWSH__HIDDEN extern bwsh__slot bwsh__slots[BW_MAX_SLOTS];

/* ---- pools (pools.c) ----------------------------------------------------- */

#define BW_MAX_POOLS 32
#define BW_HIST_BUCKETS 512

typedef struct bwsh__hist {
  atomic_uint_least64_t b[BW_HIST_BUCKETS];
} bwsh__hist;
BWSH__HIDDEN void bwsh__hist_add(bwsh__hist *h, uint64_t v);
/* The value at quantile q (0..1), an upper bound of the bucket. */
BWSH__HIDDEN uint64_t bwsh__hist_quantile(const bwsh__hist *h, double q);

typedef struct bwsh__pool_report {
  char name[48];
  unsigned workers, peak_blocked;
  uint64_t all_blocked_ns;
  uint64_t starv_total, starv_max, starv_p99, starv_items;
  uint64_t qwait_max, qwait_p99, items;
  uint64_t timed_items; /* items whose queue wait was measured */
  uint64_t compensated;
  uint64_t idle_waits; /* the pool's own calls (bwsh__pool_idle_wait) */
  int kind;            /* BW_POOL_* */
} bwsh__pool_report;

/* What made a pool, as the report names it: X(id, "name"). */
#define BWSH__POOL_KINDS(X)                                                    \
  X(BW_POOL_BLOCKWATCH, "blockwatch")                                          \
  X(BW_POOL_THREADS, "threads")                                                \
  X(BW_POOL_LIBUV, "libuv")                                                    \
  X(BW_POOL_GLIB, "glib")                                                      \
  X(BW_POOL_CTHREADPOOL, "cthreadpool")
#define BWSH__POOL_KIND_ENUM(id, name) id,
enum { BWSH__POOL_KINDS(BWSH__POOL_KIND_ENUM) BW_POOL_KIND_COUNT };
#undef BWSH__POOL_KIND_ENUM
/* The report's name of a BW_POOL_* kind. */
BWSH__HIDDEN const char *bwsh__pool_kind_name(int kind);

/* A pool of a foreign library (foreign_*.c), found or made by its kind and
 * the library's identity for it (id); size: how many threads it runs items
 * on at most, 0 when unbounded (then never all blocked). -1: table full. */
BWSH__HIDDEN int bwsh__pool_foreign(int kind, uint64_t id, const char *name,
                                    unsigned size);
/* A foreign pool's size changed (g_thread_pool_set_max_threads). */
BWSH__HIDDEN void bwsh__pool_resize(int p, unsigned size, uint64_t now);

/* Index of the option-classified pool ("worker_name"/"worker_start"). */
BWSH__HIDDEN int bwsh__pool_for_option(void);
/* A blocking call on a thread of pool p was the pool's own (its idle
 * wait, its locks), told apart by its call chain: not counted, only
 * tallied (an item_fn pool's, C-Thread-Pool's). */
BWSH__HIDDEN void bwsh__pool_idle_wait(int p);
/* A worker of pool p begins / ends a blocking call (at time now). */
BWSH__HIDDEN void bwsh__pool_block(int p, uint64_t now);
BWSH__HIDDEN void bwsh__pool_unblock(int p, uint64_t now);
/* Sets the runtime's item time gate (pools.c) after the options are read
 * or a fork; the pools' all-blocked intervals close and open it. */
BWSH__HIDDEN void bwsh__pool_gate_init(uint64_t now);
/* A thread classified by option joins / leaves pool p. */
BWSH__HIDDEN void bwsh__pool_worker_join(int p, uint64_t now);
BWSH__HIDDEN void bwsh__pool_worker_leave(int p, uint64_t now);
BWSH__HIDDEN int bwsh__pool_count(void);
BWSH__HIDDEN void bwsh__pool_get(int p, bwsh__pool_report *out);
BWSH__HIDDEN void bwsh__pools_after_fork(void);

/* What the runtime bridge (bridge.c) reports: pool id `id` of runtime copy
 * `copy` (-1: the option pool) by index, found or made (-1: none / full). */
BWSH__HIDDEN int bwsh__pool_find(int copy, uint64_t id);
BWSH__HIDDEN int bwsh__pool_new(int copy, uint64_t id, const char *name);
/* The runtime copy of pool p, -1 for the option pool or no pool. */
BWSH__HIDDEN int bwsh__pool_copy(int p);
/* The item time gate the runtime reads (observer.h, item_time_gate). */
BWSH__HIDDEN const uint64_t *bwsh__pool_item_gate(void);
/* An item of pool p was queued (queued: the runtime's queue length). */
BWSH__HIDDEN void bwsh__pool_item_enqueued(int p, uint64_t enqueue_ns,
                                           size_t queued);
/* An item of pool p (-1: ignored) started; timed: both times measured. */
BWSH__HIDDEN void bwsh__pool_item_started(int p, uint64_t enqueue_ns,
                                          uint64_t start_ns, int timed);
/* The runtime added a worker to pool p (compensated: for a blocked one). */
BWSH__HIDDEN void bwsh__pool_spare_worker(int p, int compensated);
/* The calling worker stops: its per-item shard is free again. */
BWSH__HIDDEN void bwsh__pool_shard_release(void);

/* ---- loop threads (loops.c) --------------------------------------------- */

/* The event loops whose runners the shim wraps (table.h, BW_SHIM_LOOPS):
 * X(id, name as reported). */
#define BWSH__LOOP_KINDS(X)                                                    \
  X(LIBUV, "libuv")                                                            \
  X(GLIB, "glib")                                                              \
  X(LIBEVENT, "libevent")
#define BWSH__LOOP_ENUM(id, name) BW_LOOP_##id,
enum { BWSH__LOOP_KINDS(BWSH__LOOP_ENUM) BW_LOOP_KIND_COUNT };
#undef BWSH__LOOP_ENUM
BWSH__HIDDEN const char *bwsh__loop_kind_name(int kind);

/* What a thread running a loop runner knows about it. depth > 0: the
 * thread is a loop thread; a counted call there is the loop's own wait
 * (a poll-family call from the loop library's code: not counted at all)
 * or a callback's (counted like a worker's). A nested runner saves the
 * whole struct and restores it when it returns. */
typedef struct bwsh__loop_thread {
  int depth;          /* loop runners in progress on this thread */
  int kind;           /* BW_LOOP_* of the innermost one */
  int rec;            /* its loops[] record, -1 when the table is full */
  int in_wait;        /* inside the loop's own wait */
  uint64_t out_since; /* when the loop last left its own wait */
  void *runner_ret;   /* where the program called the innermost runner */
} bwsh__loop_thread;

BWSH__HIDDEN extern BWSH__TLS __thread bwsh__loop_thread bwsh__loop_self;

/* A loop runner of `kind` starts on this thread; `real` is the real
 * runner (its module is the loop library), `ret` the return address of
 * the program's call to it. Saves the thread's loop state into *saved and
 * returns 1, or 0 (nothing done, nothing to undo) when the shim is
 * inactive or the thread is inside it. Keeps errno. */
BWSH__HIDDEN int bwsh__loop_enter(bwsh__loop_thread *saved, int kind,
                                  void (*real)(void), void *ret);
/* The runner bwsh__loop_enter saw returns. Keeps errno. */
BWSH__HIDDEN void bwsh__loop_leave(const bwsh__loop_thread *saved);
/* From bwsh__call_begin on a loop thread: 1 when the call is a callback's
 * (it counts), 0 when it is the loop's own: its wait (which ends a
 * callback stretch; bwsh__loop_wait_end then starts the next one), or a
 * call the loop library made with no program frame between it and the
 * runner (libuv's uv__async_spin yielding while another thread writes). */
BWSH__HIDDEN int bwsh__loop_call_begin(int fn, void *caller);
BWSH__HIDDEN void bwsh__loop_wait_end(void);
/* The address that keys the call site of a callback's counted call made
 * from `caller`: one past it. A loop callback and a worker that block at
 * the same return address (both in GLib's g_usleep) are two findings, and
 * each keeps its own caller chain; one past a return address is never
 * another call's (a call instruction is longer than a byte), and still in
 * the same function should it be shown for want of an unwinder. */
static inline void *bwsh__loop_site_key(void *caller) {
  return (char *)caller + 1;
}
/* A callback's counted call lasted dur_ns: into the loop's record. */
BWSH__HIDDEN void bwsh__loop_call_counted(uint64_t dur_ns);

/* With trace=FILE: one callback stretch of a loop of `kind` on thread
 * tid, a slice when it lasted 1 ms or more (trace.c). */
BWSH__HIDDEN void bwsh__trace_loop_callbacks(int kind, int tid,
                                             uint64_t start_ns,
                                             uint64_t dur_ns);

#define BW_MAX_LOOPS 64
typedef struct bwsh__loop_report {
  int kind, tid;
  uint64_t calls, blocked_ns, longest_ns;
} bwsh__loop_report;
/* Record i (0..BW_MAX_LOOPS-1) of this process into *out: 0 when empty. */
BWSH__HIDDEN int bwsh__loop_get(int i, bwsh__loop_report *out);

/* ---- foreign pools (foreign*.c): libuv, GLib, C-Thread-Pool ------------- */

/* The next definition of a foreign library's function, found at its first
 * call (foreign.c): *out (a function pointer of `size` bytes) is NULL, and
 * one "ERROR" line said so, when there is none (or, from inside dlsym,
 * not yet). */
typedef struct bwsh__foreign_fn {
  _Atomic(void *) fn;
  atomic_int said;
} bwsh__foreign_fn;
BWSH__HIDDEN void bwsh__foreign_next(bwsh__foreign_fn *f, const char *name,
                                     void *out, size_t size);
/* 1 when a submit should be watched: the shim is active, has not stood
 * down, and the caller is not the shim itself. */
BWSH__HIDDEN int bwsh__foreign_watched(void);
/* Who the thread that pthread_create is asked for from `caller` (its
 * return address) is for: BW_LIB_UV, libuv's pool (made in libuv's
 * setup); BW_LIB_GLIB, made by GLib's code (for itself or for the
 * program: asked later); BW_LIB_NONE, anyone else's. Inside the shim
 * (depth raised); may unwind. */
BWSH__HIDDEN int bwsh__foreign_thread_maker(void *caller);

/* libuv (foreign_uv.c): uv_queue_work and uv_cancel, with libuv's types
 * as pointers (uv_work_t *, uv_loop_t *); results are libuv's. */
typedef void (*bwsh__uv_work_cb)(void *req);
typedef void (*bwsh__uv_after_cb)(void *req, int status);
BWSH__HIDDEN int bwsh__uv_queue_work(void *loop, void *req,
                                     bwsh__uv_work_cb work_cb,
                                     bwsh__uv_after_cb after_cb);
BWSH__HIDDEN int bwsh__uv_cancel(void *req);
/* 1 when the calling thread is in libuv's one-time setup (under uv_once):
 * starting its pool, its signal lock's first write. Unwinds. */
BWSH__HIDDEN int bwsh__uv_in_setup(void);

/* GLib (foreign_glib.c): GThreadPool's constructors, push and
 * set_max_threads, with GLib's types as C's (GThreadPool *, GError **,
 * gboolean and gint as int). */
typedef void (*bwsh__glib_func)(void *data, void *user_data);
BWSH__HIDDEN void *bwsh__glib_pool_new(bwsh__glib_func func, void *user_data,
                                       int max_threads, int exclusive,
                                       void **error);
BWSH__HIDDEN void *bwsh__glib_pool_new_full(bwsh__glib_func func,
                                            void *user_data,
                                            void (*item_free)(void *),
                                            int max_threads, int exclusive,
                                            void **error);
BWSH__HIDDEN int bwsh__glib_pool_push(void *pool, void *data, void **error);
BWSH__HIDDEN int bwsh__glib_pool_set_max_threads(void *pool, int max_threads,
                                                 void **error);
/* 1 when the calling thread is a GThread running a function of GLib's own
 * (a pool's thread, the pool-spawner, the worker context's "gmain"). */
BWSH__HIDDEN int bwsh__glib_own_thread(void);

/* C-Thread-Pool (foreign_thpool.c): the pool of a thread named `name`
 * ("thread-pool-N"), made or grown to N + 1 threads, else -1; and whether
 * a blocking call made from `caller` on one of its threads is the pool's
 * own (1) or an item's (0). */
BWSH__HIDDEN int bwsh__thpool_pool_of_name(const char *name);
BWSH__HIDDEN int bwsh__thpool_own_call(void *caller);

/* ---- items of a pool named by options (items.c) ------------------------- */

/* With item_fn set, on a worker named by worker_name / worker_start: 1
 * when the return addresses raw[0..got) (nearest the call first) are an
 * item's (a function of the chain, inlined or not, matches a glob of
 * item_fn), 0 when they are the pool's own. *last: the index of the last
 * frame the verdict looked at (-1: none), which nothing past it changes.
 * Symbolizes only return addresses not seen before. Inside the shim (depth
 * raised). */
BWSH__HIDDEN int bwsh__item_chain(void *const *raw, int got, int *last);
/* bwsh__item_chain of the calling blocking call's chain (sites.c): fn
 * made from caller, the wrapper's return address lying at caller_slot
 * (NULL: not known). Also stores the call's site key into *key (0: none
 * found, bwsh__site_add makes it), from the same unwind; a repeat from
 * the same chain of this thread takes both from a memo, unwinding
 * nothing. */
BWSH__HIDDEN int bwsh__item_call(int fn, void *caller, void *const *caller_slot,
                                 uint64_t *key);

/* ---- the runtime bridge (bridge.c) --------------------------------------- */

/* Exported, the one symbol besides the wrapped functions: the runtime
 * finds it with dlsym(RTLD_DEFAULT), once per runtime copy, when its first
 * pool is created (observer.h). */
struct bw_runtime_hooks;
__attribute__((visibility("default"))) void
blockwatch_tool_attach(const struct bw_runtime_hooks *hooks);

/* Asks each attached runtime copy whether the calling thread is one of its
 * workers; 1 and its pool in *pool when it is. */
BWSH__HIDDEN int bwsh__runtime_current_worker(int *pool);
/* BW_THREAD_BLOCKING or BW_THREAD_RUNTIME when an attached runtime copy
 * says the calling thread is one of its blocking threads or its poller,
 * else BW_THREAD_OTHER. */
BWSH__HIDDEN int bwsh__runtime_thread_kind(void);
/* Calls notify_blocked (blocked) / notify_unblocked of the runtime copy
 * that owns pool p: 0, or a negative errno (-EPERM: not a runtime pool). */
BWSH__HIDDEN int bwsh__pool_notify(int p, int blocked);

/* ---- call sites (sites.c) ------------------------------------------------ */

#define BW_MAX_SITES 1024
#define BW_SITE_FRAMES 8

/* Adds count calls and blocked_ns to the site identified by fn + caller and
 * returns its index (-1 when the table is full). The first call at a site
 * captures its caller chain (backtrace, the expensive part); the later ones
 * only count, so a site's chain is the first one seen there. caller_slot:
 * where on the stack the wrapper's return address lies (bwsh__call), or
 * NULL; it only spares a walk of the shim's frames to find it. key: the
 * call's site key when bwsh__item_call found it, else 0. */
BWSH__HIDDEN int bwsh__site_add(int fn, void *caller, void *const *caller_slot,
                                uint64_t key, uint64_t count,
                                uint64_t blocked_ns);
/* The first frame of site i (the program's own line that made the call),
 * or fallback when i is no ready site. */
BWSH__HIDDEN void *bwsh__site_frame0(int i, void *fallback);
/* Adds blocked time to a site returned by bwsh__site_add. */
BWSH__HIDDEN void bwsh__site_add_ns(int site, uint64_t blocked_ns);
/* Captures the caller chain outside the shim into frames (max n). */
BWSH__HIDDEN int bwsh__capture_frames(void **frames, int n);
BWSH__HIDDEN void bwsh__sites_init(void);
BWSH__HIDDEN void bwsh__sites_after_fork(void);

typedef struct bwsh__site_view {
  int fn;
  uint64_t count, blocked_ns;
  int nframes;
  void *frames[BW_SITE_FRAMES];
  void *via; /* the library function the program called, or NULL */
} bwsh__site_view;
/* Copies site i (0..BW_MAX_SITES-1); returns 0 if the slot is empty. */
BWSH__HIDDEN int bwsh__site_get(int i, bwsh__site_view *out);
/* Calls that found the table full. */
BWSH__HIDDEN uint64_t bwsh__sites_dropped(void);

/* ---- the program's own code (modules.c) ---------------------------------- */

/* Records the code ranges of the system libraries loaded now (libc, the
 * pool and loop libraries, sanitizer runtimes, the shim): at start and
 * when a new call site may come from a library loaded since. */
BWSH__HIDDEN void bwsh__modules_scan(void);
/* The span [*lo, *hi) of a loaded module's PT_LOAD segments; *hi is 0
 * when it has none. */
struct dl_phdr_info;
BWSH__HIDDEN void bwsh__load_span(const struct dl_phdr_info *info,
                                  uintptr_t *lo, uintptr_t *hi);
/* Whose code pc lies in: the program's (any module not named as a system
 * library), a system library's, or an interposer's (a sanitizer runtime,
 * the shim). Lock-free, a few compares. */
enum { BW_CODE_PROGRAM = 0, BW_CODE_LIBRARY, BW_CODE_INTERPOSER };
BWSH__HIDDEN int bwsh__code_kind(const void *pc);
/* Which of the libraries the foreign-pool code asks about pc lies in
 * (BW_LIB_NONE: another, or none known), by the module's name. */
enum { BW_LIB_NONE = 0, BW_LIB_UV, BW_LIB_GLIB };
BWSH__HIDDEN int bwsh__code_library(const void *pc);
/* The span of libuv's code, and of the interposers' once libuv is loaded
 * (empty: lo > hi), for a hot path that cannot scan: pc outside both is
 * neither libuv's nor an interposer's; inside, bwsh__code_library and
 * bwsh__code_kind tell. */
typedef struct bwsh__code_hull {
  _Atomic uintptr_t lo, hi;
} bwsh__code_hull;
BWSH__HIDDEN extern bwsh__code_hull bwsh__uv_hull, bwsh__interposer_hull;
/* 1 when pc may be libuv's code or an interposer's (two compares for a
 * caller below both, as a program's code is). Lock-free. */
static inline int bwsh__code_maybe_uv(const void *pc) {
  uintptr_t a = (uintptr_t)pc;
  const bwsh__code_hull *uv = &bwsh__uv_hull, *ip = &bwsh__interposer_hull;
  return (a >= atomic_load_explicit(&uv->lo, memory_order_relaxed) &&
          a < atomic_load_explicit(&uv->hi, memory_order_relaxed)) ||
         (a >= atomic_load_explicit(&ip->lo, memory_order_relaxed) &&
          a < atomic_load_explicit(&ip->hi, memory_order_relaxed));
}
/* Marks the executable segment holding `runner` (a loop runner's real
 * function) as the code of the loop library of BW_LOOP_* `loop_kind`;
 * bwsh__code_loop then gives that kind for any pc in it, else -1. The
 * first mark of a segment walks the loader's list (takes its lock). */
BWSH__HIDDEN void bwsh__modules_mark_loop(const void *runner, int loop_kind);
BWSH__HIDDEN int bwsh__code_loop(const void *pc);

/* ---- symbols (symbolize.c) ----------------------------------------------- */

typedef struct bwsh__sym {
  char function[128];
  char file[256];
  int line;
  int inlined; /* 1: inlined into the frame that follows it */
} bwsh__sym;
/* Symbolizes a return address (libdw when available, else dladdr). In a
 * signal handler (safe_only) only raw addresses are given. */
BWSH__HIDDEN void bwsh__symbolize(void *pc, bwsh__sym *out, int safe_only);
/* The same with the functions inlined at pc expanded (as addr2line -i):
 * up to max frames into out, innermost first, the physical one last; an
 * inlined frame's file:line is where it is, the next one's where it was
 * called. Returns how many (>= 1). */
BWSH__HIDDEN int bwsh__symbolize_inline(void *pc, bwsh__sym *out, int max,
                                        int safe_only);
BWSH__HIDDEN void bwsh__symbolize_end(void);
/* One lock around the lookups made on the calls' path, by any thread
 * (C-Thread-Pool's and item_fn's verdicts, worker_start's routines): one
 * libdw session, not made for two threads at once. A spin lock, held only
 * with bwsh__self.depth raised, that ThreadSanitizer is told of when its
 * runtime is loaded; a fork child finds it free. */
BWSH__HIDDEN void bwsh__symbolize_init(void); /* at start: finds TSan's hooks */
BWSH__HIDDEN void bwsh__symbolize_lock(void);
BWSH__HIDDEN void bwsh__symbolize_unlock(void);
BWSH__HIDDEN void bwsh__symbolize_after_fork(void);

/* A verdict per code address that takes the symbolizer to reach (is this
 * return address in one of C-Thread-Pool's functions, in an item_fn?),
 * kept in a table of n slots (a power of two) that the caller owns:
 * looked up lock-free; an address never seen before is judged once, with
 * bwsh__symbolize_lock held, and published after its verdict. judge gives
 * 1 or 2. A full table still gives the right verdict: an address it has
 * no room for is judged at each call (verdicts.c). */
typedef struct bwsh__verdict_slot {
  _Atomic(void *) pc;
  atomic_int verdict;
} bwsh__verdict_slot;
BWSH__HIDDEN int bwsh__verdict(bwsh__verdict_slot *table, unsigned n, void *pc,
                               int (*judge)(void *pc));

/* ---- trace (trace.c) ----------------------------------------------------- */

BWSH__HIDDEN void bwsh__trace_init(void);
/* A counted blocking call of fn on thread tid; caller is the return
 * address into its caller, symbolized only when the file is written. */
BWSH__HIDDEN void bwsh__trace_slice(int fn, int tid, void *caller,
                                    uint64_t start_ns, uint64_t dur_ns);
BWSH__HIDDEN void bwsh__trace_counter(int pool, int which, uint64_t ts_ns,
                                      uint64_t value);
BWSH__HIDDEN void bwsh__trace_thread_name(int tid, const char name[16]);
/* An item of pool `pool` that waited wait_ns in the queue from enqueue_ns,
 * starved_ns of it with every worker blocked: a "queue wait" async pair
 * when starved_ns is 1 ms or more. */
BWSH__HIDDEN void bwsh__trace_queue_wait(int pool, uint64_t enqueue_ns,
                                         uint64_t wait_ns, uint64_t starved_ns);
/* Writes the trace file; in_signal: from the fatal-signal report, where
 * nothing that locks or allocates may run. There, and with symbolize=0,
 * the slices' callers are written unnamed (module + offset, no libdw),
 * for bw-merge to name. */
BWSH__HIDDEN void bwsh__trace_write(int in_signal);
/* The absolute path of the trace this process writes (what
 * bwsh__trace_write opens, against the working directory of now) into
 * out: 1, or 0 when there is no trace (or no such path). No lock, no
 * allocation; one caller at a time (the report writer). */
BWSH__HIDDEN int bwsh__trace_file(char *out, size_t size);
BWSH__HIDDEN void bwsh__trace_after_fork(void);
enum { BW_TRACE_BLOCKED = 0, BW_TRACE_QUEUE = 1 };

/* ---- report (report.c) and lifecycle (lifecycle.c) ----------------------- */

enum { BW_WHY_EXIT = 0, BW_WHY_SIGNAL, BW_WHY_INTERIM, BW_WHY_FAIL };
/* Writes the report (text and/or JSON per options). */
BWSH__HIDDEN void bwsh__report_write(int why);
/* Marks this process a fork child (its report file gets its pid) and lets
 * it write a final report of its own. */
BWSH__HIDDEN void bwsh__report_mark_fork_child(void);
/* Set while a signal handler writes the report: symbols stay raw. */
BWSH__HIDDEN void bwsh__report_set_in_signal(int on);
/* An output file written atomically: bwsh__file_begin opens a temporary
 * file next to path (returned in tmp) and returns its descriptor, or -1
 * with a warning; bwsh__file_commit closes it and, when ok, renames it to
 * path (0), else removes it (-1, with a warning). */
BWSH__HIDDEN int bwsh__file_begin(const char *path, char *tmp, size_t tmpsize);
BWSH__HIDDEN int bwsh__file_commit(int fd, const char *tmp, const char *path,
                                   int ok);
/* The final report, at most once per process. */
BWSH__HIDDEN void bwsh__report_final(int why);
/* The file `given` (report_path, trace) names in this process: "%p" is
 * the pid; a fork child without "%p" appends ".<pid>". */
BWSH__HIDDEN void bwsh__output_path(const char *given, char *out, size_t size);
/* Nonzero when findings should make the process fail (fail=report). */
BWSH__HIDDEN int bwsh__has_findings(void);

#endif /* BW_SHIM_H */
