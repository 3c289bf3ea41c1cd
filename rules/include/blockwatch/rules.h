/* blockwatch rules loader: the one definition of "blocking" and "pool
 * callback" shared by blockscan and libblockwatch.so.
 *
 * Invariants:
 *  - A bw_rules set is built by the load functions (which may allocate) and
 *    then only read. Lookups (bw_rules_find_*, bw_rules_is_*, *_count, *_at)
 *    never allocate, never lock and never print, so the shim may call them
 *    from wrapped functions; they are safe from many threads at once as long
 *    as no load, enable/disable or free runs concurrently.
 *  - Every returned pointer (rules, strings) is owned by the set and stays
 *    valid until bw_rules_free(); a failed load adds nothing.
 *  - Loading is all-or-nothing per call: on any error the set is left as it
 *    was before the call, every error has been reported, and the call returns
 *    a negative errno.
 *  - Errors are reported as "file:line:column: error: message" (the message
 *    quotes the offending text) to the error callback and to the set's error
 *    list; the library never writes to stdout or stderr.
 *  - Functions return 0 or a negative errno (-EINVAL, -ENOMEM, -ENOENT, ...).
 *
 * The file format is documented in rules/README.md.
 */
#ifndef BLOCKWATCH_RULES_H
#define BLOCKWATCH_RULES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- categories ------------------------------------------------------ */

/* X(ENUM_SUFFIX, "name", "description") - the one list of categories; the
 * rule id of a category is "blocking-<name>". */
#define BW_RULE_CATEGORIES(X)                                                  \
  X(SLEEP, "sleep", "sleeps on a pool or loop thread")                         \
  X(WAIT, "wait", "waits for an event, a condition or a descriptor")           \
  X(JOIN, "join", "joins a thread or drains a pool")                           \
  X(LOCK, "lock", "takes a lock that may be contended")                        \
  X(IO, "io", "does blocking file or network I/O")                             \
  X(PROCESS, "process", "waits for or spawns a child process")                 \
  X(SYNC_OVER_ASYNC, "sync-over-async",                                        \
    "waits synchronously for asynchronous work")                               \
  X(NESTED_LOOP, "nested-loop", "runs a nested event loop")                    \
  X(DNS, "dns", "resolves a host name synchronously")                          \
  X(YIELD, "yield", "spins with sched_yield instead of waiting for work")      \
  X(SPIN_WAIT, "spin-wait",                                                    \
    "polls in a loop, yielding or sleeping, for another thread")

typedef enum bw_rule_category {
#define BWRL__CAT_ENUM(e, name, desc) BW_CATEGORY_##e,
  BW_RULE_CATEGORIES(BWRL__CAT_ENUM)
#undef BWRL__CAT_ENUM
      BW_CATEGORY_COUNT
} bw_rule_category;

/* The category's name as written in rule files ("sync-over-async"), or NULL
 * for an out-of-range value. */
const char *bw_rule_category_name(bw_rule_category cat);

/* The stable rule id of a category ("blocking-sync-over-async"), used as
 * the SARIF ruleId; NULL for an out-of-range value. */
const char *bw_rule_category_id(bw_rule_category cat);

/* A one-line description of the category, for SARIF rule metadata. */
const char *bw_rule_category_description(bw_rule_category cat);

/* The category's default hint (the fix a finding of it names when its
 * rule gives none), or NULL for an out-of-range value. */
const char *bw_rule_category_hint(bw_rule_category cat);

/* Parses a category name; returns 0 and sets *out, or -EINVAL. */
int bw_rule_category_parse(const char *name, bw_rule_category *out);

/* ---- severities ------------------------------------------------------ */

typedef enum bw_rule_severity {
  BW_SEVERITY_NOTE,
  BW_SEVERITY_WARNING, /* the default */
  BW_SEVERITY_ERROR
} bw_rule_severity;

/* "note", "warning" or "error" (NULL when out of range). */
const char *bw_rule_severity_name(bw_rule_severity sev);

/* ---- conditions under which a blocking function does NOT block -------- */

/* X(ENUM_SUFFIX, "spelling in files", "meaning")
 * Every condition names one argument (0-based). A static analyzer checks a
 * condition against the argument expression (a constant, a macro spelling,
 * a NULL literal); the shim checks it against the argument's value. Either
 * may answer "unknown", in which case the call counts as blocking. */
#define BW_COND_KINDS(X)                                                       \
  X(EQUALS, "is <constant>", "the argument equals value (e.g. 0, FALSE)")      \
  X(HAS_FLAG, "has <flag>", "the argument has all bits of value set")          \
  X(IS_NULL, "is NULL", "the pointer argument is NULL")                        \
  X(NOT_NULL, "is not NULL",                                                   \
    "the pointer argument is not NULL (e.g. a callback: async)")               \
  X(NONBLOCKING_FD, "is nonblocking-fd",                                       \
    "the descriptor argument has O_NONBLOCK set")                              \
  X(NONBLOCKING_FILE, "is nonblocking-file",                                   \
    "the FILE * argument's descriptor has O_NONBLOCK set")                     \
  X(NONBLOCKING_OBJECT, "is nonblocking-object",                               \
    "the object argument (a GSocket *) is in non-blocking mode")               \
  X(PATH_UNDER, "is under <prefix>",                                           \
    "the path argument starts with prefix (a file system served from memory)") \
  X(ZERO_TIMEOUT, "is zero-timeout",                                           \
    "the argument points to a struct timeval/timespec that is all zero")       \
  X(READY, "is ready",                                                         \
    "the descriptor or object argument is the one a readiness callback was "   \
    "called for, or one a read test found ready (data is there)")              \
  X(HAS_ROOM, "has room for <argM>",                                           \
    "a write test found the object writable just before, and argument M, the " \
    "size, is a constant of at most BW_ROOM_BYTES")                            \
  X(MADE_BY, "is made-by <function>",                                          \
    "the object argument was made by one of the functions (its kind)")         \
  X(CANCELLED, "is cancelled",                                                 \
    "the GCancellable argument was cancelled before the callback the call is " \
    "in was registered, and nothing resets it")

/* The most bytes a write may take for "has room for": POSIX's least
 * PIPE_BUF (_POSIX_PIPE_BUF). A pipe that polls writable has a free page
 * (Linux), and a stream socket that does has at least a third of its send
 * buffer free, never less than this. */
#define BW_ROOM_BYTES 512

typedef enum bw_cond_kind {
#define BWRL__COND_ENUM(e, spelling, desc) BW_COND_##e,
  BW_COND_KINDS(BWRL__COND_ENUM)
#undef BWRL__COND_ENUM
      BW_COND_COUNT
} bw_cond_kind;

/* One "unless" condition of a blocking rule. */
typedef struct bw_rule_cond {
  bw_cond_kind kind;
  int arg;          /* 0-based index of the argument tested */
  long long value;  /* EQUALS: the value; HAS_FLAG: the bits; HAS_ROOM: the
                       size's argument index (else 0) */
  const char *name; /* EQUALS/HAS_FLAG: the constant's spelling as written
                       ("WNOHANG", "FALSE"), or NULL when only a number was
                       given. The analyzer may match the macro spelling; the
                       shim uses value. PATH_UNDER: the prefix ("/proc/").
                       MADE_BY: the makers, joined by '|'
                       ("g_unix_output_stream_new|g_unix_input_stream_new"). */
  /* `argN->FIELD is|has ...` (EQUALS, HAS_FLAG only): the integer field
   * of the struct the argument points to ("ai_flags"); NULL: the
   * argument itself. */
  const char *field;
} bw_rule_cond;

/* Names a condition kind as spelled in files ("is nonblocking-fd"). */
const char *bw_cond_kind_name(bw_cond_kind kind);

/* The most conditions one blocking rule may carry. */
#define BW_RULE_MAX_CONDS 4

/* ---- rules ------------------------------------------------------------ */

/* Where a rule was written (for messages: "libc.rules:12"). */
typedef struct bw_rule_origin {
  const char *file; /* file name, or the name given to a string / pack */
  unsigned line;
} bw_rule_origin;

/* A function that blocks the calling thread. */
typedef struct bw_blocking_rule {
  const char *function; /* exact function name, e.g. "nanosleep" */
  const char *id;       /* stable rule id: bw_rule_category_id(category) */
  bw_rule_category category;
  bw_rule_severity severity;
  const char *message; /* one line, never NULL */
  const char *hint;    /* the non-blocking alternative, never NULL */
  const char *api;     /* the API / pack it belongs to ("libc") */
  bw_rule_origin origin;
  /* The call does NOT block if ANY of these holds. */
  size_t n_unless;
  bw_rule_cond unless[BW_RULE_MAX_CONDS];
  /* `fds=N`: 1 + N, where argument N counts the descriptors the call waits
   * for (poll's nfds); 0: none. On an offload pool such a wait is the
   * pool's I/O (category io) unless the count is 0 (a plain sleep). */
  int fds;
} bw_blocking_rule;

/* Where callbacks passed to an entry run. */
typedef enum bw_runs_on {
  BW_RUNS_ON_POOL, /* a pool worker thread ("pool") */
  BW_RUNS_ON_LOOP  /* an event-loop thread ("loop") */
} bw_runs_on;

/* "pool" or "loop". */
const char *bw_runs_on_name(bw_runs_on where);

/* What a pool is for, and so what still counts as blocking on it. */
typedef enum bw_pool_kind {
  BW_POOL_GENERAL, /* short tasks: every category blocks it (the default) */
  /* A pool that exists to run blocking work off a loop (uv_queue_work's
   * work_cb, g_task_run_in_thread): io, process and dns are its point and
   * are not findings; sleeps, waits, joins and nested loops still are. */
  BW_POOL_OFFLOAD,
  /* A place where blocking is the point (bw_run_blocking): nothing
   * reached from its callbacks is a finding. */
  BW_POOL_BLOCKING
} bw_pool_kind;

/* "general", "offload" or "blocking" (NULL when out of range). */
const char *bw_pool_kind_name(bw_pool_kind kind);

/* Parses a pool kind name; returns 0 and sets *out, or -EINVAL. */
int bw_pool_kind_parse(const char *name, bw_pool_kind *out);

/* 1 when a call of `cat` reached from a callback on a pool of kind `kind`
 * is still blocking work that matters there, else 0. */
int bw_pool_kind_reports(bw_pool_kind kind, bw_rule_category cat);

/* How to find a callback given to an entry function. */
typedef enum bw_callback_kind {
  /* The callback is argument `arg` itself (uv_queue_work: 2). */
  BW_CALLBACK_ARG,
  /* Argument `arg` is a struct (or a pointer to one) whose member `field`
   * holds the callback. */
  BW_CALLBACK_FIELD,
  /* The callback reaches the object passed as argument `object` of the entry
   * through an earlier call to `setter`, where it is the setter's argument
   * `arg` (g_source_attach(source, ...) with
   * g_source_set_callback(source, func, ...): object 0, setter arg 1). */
  BW_CALLBACK_SETTER
} bw_callback_kind;

typedef struct bw_entry_callback {
  bw_callback_kind kind;
  int arg;            /* see bw_callback_kind */
  const char *field;  /* BW_CALLBACK_FIELD: the member name, else NULL */
  const char *setter; /* BW_CALLBACK_SETTER: the setter, else NULL */
  int object;         /* BW_CALLBACK_SETTER: the object argument, else -1 */
  bw_runs_on runs_on;
  bw_rule_origin origin;
  bw_pool_kind pool_kind; /* BW_RUNS_ON_POOL only ("kind="), else GENERAL */
} bw_entry_callback;

/* The most callbacks one entry function may take. */
#define BW_ENTRY_MAX_CALLBACKS 4

/* A function that hands a callback to a pool or an event loop. */
typedef struct bw_entry_rule {
  const char *function; /* e.g. "uv_queue_work" */
  const char *api;      /* e.g. "libuv" */
  size_t n_callbacks;   /* >= 1 */
  bw_entry_callback callbacks[BW_ENTRY_MAX_CALLBACKS];
} bw_entry_rule;

/* A function (or glob pattern, with * and ?) inside which blocking is
 * accepted: a wrapper that offloads, startup code. */
typedef struct bw_allow_rule {
  const char *pattern;
  const char *reason; /* may be "" but never NULL */
  bw_rule_origin origin;
} bw_allow_rule;

/* A function that posts a callback registered earlier (by the entry
 * `from`) to run later on a loop or pool: calling it never runs that
 * callback on the calling thread (uv_async_send, g_task_return_pointer). */
typedef struct bw_post_rule {
  const char *function; /* e.g. "uv_async_send" */
  const char *from;     /* the entry that registered the callback */
  const char *api;
  bw_rule_origin origin;
} bw_post_rule;

/* A function that calls the callback it takes as argument `callback` with
 * its argument `object` as the callback's first parameter and its
 * argument `data` as the last (-1: not said), as GIO's `*_async` calls do
 * with a GAsyncReadyCallback: g_input_stream_read_async(stream, ..., cb,
 * user_data) calls cb(stream, result, user_data). blockscan gives the
 * callback's parameters what each such call passes (the objects' kinds,
 * non-blocking states); it does not make FN an entry. */
typedef struct bw_pass_rule {
  const char *function; /* e.g. "g_input_stream_read_async" */
  const char *api;
  int callback, object, data;
  bw_rule_origin origin;
} bw_pass_rule;

/* A function that makes a descriptor non-blocking, so that I/O on it later
 * does not wait (blockscan): fcntl(fd, F_SETFL, flags | O_NONBLOCK),
 * socket(..., SOCK_NONBLOCK, ...), a program's own setblocking(fd, 0).
 * The call counts when ALL of `when` hold; for an argument that is the
 * address of an integer (`ioctl(fd, FIONBIO, &one)`) a condition is read
 * against that integer. */
typedef struct bw_nonblock_rule {
  const char *function;
  int fd_arg; /* the descriptor argument; -1: the descriptor it returns */
  size_t n_when;
  bw_rule_cond when[BW_RULE_MAX_CONDS];
  /* "otherwise=blocking": a call that meets every condition but the last,
   * and provably not the last, makes the descriptor blocking again
   * (fcntl(fd, F_SETFL, 0), setblocking(fd, 1)); then it counts as
   * blocking everywhere. */
  int otherwise_blocking;
  /* "path=N under=PREFIX": the call counts only when argument `path_arg`
   * is a path known to start with `path_prefix`, a file system served from
   * memory (fopen("/proc/...")), whose reads never wait; NULL: any path. */
  const char *path_prefix;
  int path_arg;
  const char *api;
  bw_rule_origin origin;
} bw_nonblock_rule;

/* An entry whose callback is a readiness callback, or a readiness test
 * (`test`, below). A readiness callback's loop calls it when
 * the descriptor (or object) it watches is ready, and passes that as the
 * callback's parameter `param` (libevent's event_new: the fd, 0; GLib's
 * g_unix_fd_add: the fd, 0). One read or write on that parameter, in the
 * callback itself, does not wait (blockscan).
 *
 * With `source`, the readiness is a source's, made by one function and
 * registered by another (GLib's GSource): "source=result" (source ==
 * BW_READY_SOURCE_RESULT) says that `function` returns a source whose
 * callback receives the ready object as its parameter `param`
 * (g_socket_create_source: the GSocket, 0); "source=N" (source >= 0)
 * says that the callback the entry `function` registers is that of the
 * source in its argument N (g_source_set_callback: 0), a readiness
 * callback when a "source=result" function made that source; `param` is
 * then -1 (the maker's counts). */
#define BW_READY_NO_SOURCE (-1)
#define BW_READY_SOURCE_RESULT (-2)
typedef struct bw_ready_rule {
  const char *function; /* the entry, e.g. "event_new"; or a source's maker */
  int param;  /* the callback's parameter that is the descriptor, or -1 */
  int source; /* BW_READY_NO_SOURCE, BW_READY_SOURCE_RESULT or an argument */
  /* "test=N for=read|write": `function` is no entry but a test, true when
   * its argument N is ready to read (for=read) or to write (for=write):
   * g_pollable_output_stream_is_writable(stream); -1 for the others. A
   * call on that object right after the test asserts it or in the branch
   * an if on it takes is "is ready" (a read) or "has room for" (a write)
   * (blockscan). param and source are then -1 and BW_READY_NO_SOURCE. */
  int test;
  int test_write; /* with test: 1 for=write, 0 for=read */
  const char *api;
  bw_rule_origin origin;
} bw_ready_rule;

/* A better hint for the rules of one category when the callback reaching
 * the call was handed to a pool or loop of one API: on the bundled
 * runtime's pool, io names bw_run_blocking whatever pack the rule is in. */
typedef struct bw_hint_rule {
  bw_rule_category category;
  const char *api;  /* the entries' api ("blockwatch") */
  const char *hint; /* never NULL */
  bw_rule_origin origin;
} bw_hint_rule;

/* ---- errors ------------------------------------------------------------ */

typedef struct bw_rules_error {
  const char *file;
  unsigned line;         /* 1-based; 0 when the error is not about a line */
  unsigned column;       /* 1-based; 0 when the error is not about a column */
  const char *message;   /* e.g. "unknown key 'colour'" */
  const char *formatted; /* "file:line:column: error: message" */
} bw_rules_error;

/* Called once per error, during a load; the strings are valid only for the
 * duration of the call. */
typedef void (*bw_rules_error_fn)(void *ctx, const bw_rules_error *err);

/* ---- the rule set ------------------------------------------------------ */

typedef struct bw_rules bw_rules;

/* Creates an empty rule set with the default categories enabled (all but
 * "lock"). Returns NULL when out of memory. */
bw_rules *bw_rules_create(void);

/* Frees the set and everything it returned. NULL is a no-op. */
void bw_rules_free(bw_rules *rs);

/* Sets the callback that receives each error of later loads (NULL: errors
 * only go to the error list). */
void bw_rules_set_error_callback(bw_rules *rs, bw_rules_error_fn fn, void *ctx);

/* Loads the embedded default pack `pack` ("libc", "blockwatch", "libuv",
 * "glib", "cthreadpool", "libevent"), or every embedded pack when pack is
 * NULL. Returns 0, -ENOENT for an unknown pack name, -EINVAL on a parse
 * error (or when a pack was already loaded), -ENOMEM. */
int bw_rules_load_default(bw_rules *rs, const char *pack);

/* Loads a rule file; `include:` lines are resolved relative to its
 * directory. Returns 0, -EINVAL on parse errors, or the negative errno of
 * opening/reading the file (reported as an error too). */
int bw_rules_load_file(bw_rules *rs, const char *path);

/* Loads rules from memory. `name` is used in messages and as the default
 * api name (its base name without ".rules"; NULL means "<string>"); `text`
 * need not be NUL-terminated, and a NUL byte inside it is an error. `include:`
 * is resolved relative to the current directory (or to name's directory when
 * name contains a '/'). Returns as bw_rules_load_file(). */
int bw_rules_load_string(bw_rules *rs, const char *name, const char *text,
                         size_t len);

/* The errors of every load so far, in order; the strings live as long as
 * the set. bw_rules_error_at() returns NULL when i is out of range. */
size_t bw_rules_error_count(const bw_rules *rs);
const bw_rules_error *bw_rules_error_at(const bw_rules *rs, size_t i);

/* ---- embedded packs ---------------------------------------------------- */

/* Number of embedded packs and their names / texts, in a fixed order. */
size_t bw_rules_pack_count(void);
const char *bw_rules_pack_name(size_t i); /* NULL when out of range */
/* The text of an embedded pack (NUL-terminated), or NULL if unknown. */
const char *bw_rules_pack_text(const char *name);

/* ---- lookups (no allocation) -------------------------------------------- */

/* The blocking rule for `function` if it exists AND its category is
 * enabled, else NULL. This is the call tools normally want. */
const bw_blocking_rule *bw_rules_find_blocking(const bw_rules *rs,
                                               const char *function);

/* The blocking rule for `function` whether or not its category is enabled
 * (check with bw_rules_is_active()), else NULL. */
const bw_blocking_rule *bw_rules_lookup_blocking(const bw_rules *rs,
                                                 const char *function);

/* The entry rule for `function`, or NULL. */
const bw_entry_rule *bw_rules_find_entry(const bw_rules *rs,
                                         const char *function);

/* The post rule for `function`, or NULL. */
const bw_post_rule *bw_rules_find_post(const bw_rules *rs,
                                       const char *function);

/* The passes rule for `function`, or NULL. */
const bw_pass_rule *bw_rules_find_pass(const bw_rules *rs,
                                       const char *function);

/* The nonblocking rule for `function`, or NULL. */
const bw_nonblock_rule *bw_rules_find_nonblock(const bw_rules *rs,
                                               const char *function);

/* The ready rule for entry `function`, or NULL. */
const bw_ready_rule *bw_rules_find_ready(const bw_rules *rs,
                                         const char *function);

/* The hint rule for findings of category `cat` reached from a callback
 * handed to an entry of api `api`, or NULL. */
const bw_hint_rule *bw_rules_find_hint(const bw_rules *rs, const char *api,
                                       bw_rule_category cat);

/* The first allow rule whose pattern matches `function`, or NULL. */
const bw_allow_rule *bw_rules_find_allow(const bw_rules *rs,
                                         const char *function);

/* 1 when blocking is accepted inside `function` (an allow rule matches),
 * else 0. */
int bw_rules_is_allowed(const bw_rules *rs, const char *function);

/* 1 when `text` matches `pattern`, the glob syntax of allow rules: '*' any
 * run of characters, '?' any one character, everything else literal. Never
 * allocates or locks, so tools may call it from interposed functions (the
 * shim matches its worker_name option with it). */
int bw_rules_glob_match(const char *pattern, const char *text);

/* 1 when the rule's category is enabled in this set, else 0. */
int bw_rules_is_active(const bw_rules *rs, const bw_blocking_rule *rule);

/* ---- categories on/off ------------------------------------------------- */

/* Enables (on != 0) or disables a category. Returns 0 or -EINVAL. */
int bw_rules_set_category(bw_rules *rs, bw_rule_category cat, int on);

/* 1 when the category is enabled, else 0. */
int bw_rules_category_enabled(const bw_rules *rs, bw_rule_category cat);

/* ---- iteration (stable order: load order) ------------------------------ */

size_t bw_rules_blocking_count(const bw_rules *rs);
/* NULL when i is out of range. Includes rules of disabled categories. */
const bw_blocking_rule *bw_rules_blocking_at(const bw_rules *rs, size_t i);

size_t bw_rules_entry_count(const bw_rules *rs);
const bw_entry_rule *bw_rules_entry_at(const bw_rules *rs, size_t i);

size_t bw_rules_post_count(const bw_rules *rs);
const bw_post_rule *bw_rules_post_at(const bw_rules *rs, size_t i);

size_t bw_rules_pass_count(const bw_rules *rs);
const bw_pass_rule *bw_rules_pass_at(const bw_rules *rs, size_t i);

size_t bw_rules_nonblock_count(const bw_rules *rs);
const bw_nonblock_rule *bw_rules_nonblock_at(const bw_rules *rs, size_t i);

size_t bw_rules_ready_count(const bw_rules *rs);
const bw_ready_rule *bw_rules_ready_at(const bw_rules *rs, size_t i);

size_t bw_rules_hint_count(const bw_rules *rs);
const bw_hint_rule *bw_rules_hint_at(const bw_rules *rs, size_t i);

size_t bw_rules_allow_count(const bw_rules *rs);
const bw_allow_rule *bw_rules_allow_at(const bw_rules *rs, size_t i);

#ifdef __cplusplus
}
#endif

#endif /* BLOCKWATCH_RULES_H */
