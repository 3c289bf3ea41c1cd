/* report.c - the report: a sanitizer-style text summary on stderr and the
 * JSON file whose shape tests and tools read (docs/shim.md).
 *
 * Invariants:
 *  - One writer for both outputs; bwsh__report_final runs it at most once per
 *    process (exit, _exit, fatal signal or fail=1, whichever comes first).
 *  - The JSON file is written to "<path>.tmp.<pid>.<n>" opened with
 *    O_CREAT|O_EXCL|O_NOFOLLOW and renamed over the path: a reader never
 *    sees half a report, and no symlink, planted or stale, is followed.
 *  - Without report_path the file is blockwatch.<pid>.json; "%p" in
 *    report_path is replaced by the pid; otherwise a fork child given
 *    report_path writes "<report_path>.<pid>" (its own report).
 *  - A report_path without "%p" is shared by the processes that exec one
 *    another or run side by side (timeout, sh -c): a report is merged into
 *    the file found there when that file is of the same run ("run": the
 *    oldest ancestor started with the same options) or was written since
 *    this process started, under an flock on its directory; a file of an
 *    earlier run is replaced, and so is an earlier report (interim) of
 *    the same process in the merge.
 *  - Both outputs render one snapshot of the counters, taken once per
 *    report: the text and the JSON of a run give the same numbers.
 *  - Call sites come by blocked time (descending; ties by count, then
 *    function name), in both; the text's last line is the SUMMARY.
 *  - Quiet by default: the text summary is printed only when something
 *    blocked a worker (or verbosity >= 1).
 *  - Every frame names its module (file, build-id) and offset there, read
 *    from modules.c's table without a lock: a report written in a signal
 *    handler, or with symbolize=0 (the wrapper's, named once by bw-merge),
 *    gives no function, file or line but can still be named later.
 *  - In a signal handler nothing that can allocate is called: frames are
 *    unnamed (safe_only symbolization).
 *  - A final report of a process with a trace names it ("trace_file", an
 *    absolute path): the trace is written right after the report, and
 *    bw-merge names the callers a trace left unnamed from there.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "merge.h"
#include "policy.h"
#include "real.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static atomic_int final_done;
static atomic_int report_busy;
static int in_fork_child;
static BWSH__TLS __thread int in_signal;

/* Frames stay unnamed (module + offset only): in a signal handler, where
 * libdw cannot run, and with symbolize=0, where another process names
 * them once for every process of the run. */
static int unnamed(void) {
  return in_signal || !bwsh__opt.symbolize;
}

void bwsh__report_mark_fork_child(void) {
  in_fork_child = 1;
  atomic_store(&final_done, 0);
  atomic_store(&report_busy, 0);
}

void bwsh__report_set_in_signal(int on) {
  in_signal = on;
}

/* ---- files --------------------------------------------------------------- */

int bwsh__file_begin(const char *path, char *tmp, size_t tmpsize) {
  static atomic_uint serial;
  for (int attempt = 0; attempt < 8; attempt++) {
    int n = snprintf(tmp, tmpsize, "%s.tmp.%d.%u", path, (int)getpid(),
                     atomic_fetch_add(&serial, 1));
    if (n < 0 || (size_t)n >= tmpsize)
      return -1;
    int fd =
        open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0)
      return fd;
    if (errno != EEXIST) {
      /* Name the path the user gave, not the temporary one; path_check
       * says which part is wrong (the file or its directory) when it can. */
      int err = errno;
      if (bwsh__path_check("output", path) == 0)
        bwsh__log("warning: cannot write '%s': %s", path, strerror(err));
      return -1;
    }
  }
  bwsh__log("warning: cannot create a temporary file next to %s", path);
  return -1;
}

int bwsh__file_commit(int fd, const char *tmp, const char *path, int ok) {
  bwsh__fd_forget(fd);
  if (bwsh__real_close(fd) != 0)
    ok = 0;
  if (ok && rename(tmp, path) == 0)
    return 0;
  if (ok)
    bwsh__log("warning: could not write '%s': %s", path, strerror(errno));
  else
    bwsh__log("warning: could not write '%s'", path);
  unlink(tmp);
  return -1;
}

/* The file a given path names in this process (bwsh__path_expand: every
 * %p, %e and %%; a fork child's own file when there is no %p). */
void bwsh__output_path(const char *given, char *out, size_t size) {
  bwsh__path_expand(given, in_fork_child, out, size);
}

static void json_path(char *out, size_t size) {
  if (!bwsh__opt.report_path[0])
    snprintf(out, size, "blockwatch.%d.json", (int)getpid());
  else
    bwsh__output_path(bwsh__opt.report_path, out, size);
}

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the snapshot both renderers read ------------------------------------ */

/* Every number of one report, read once from the counters: the text and
 * the JSON render the same struct, so they cannot disagree. Static (no
 * allocation, a signal handler may write the report); report_busy makes
 * the writer the only user. */
typedef struct snapshot {
  bwsh__totals totals;
  int npools;
  bwsh__pool_report pools[BW_MAX_POOLS];
  uint64_t starvation_ns; /* sum of the pools' starvation delay */
  int nsites;
  bwsh__site_view sites[BW_MAX_SITES]; /* by blocked time, descending */
  uint64_t sites_dropped;
  int nother;                 /* functions called on other threads */
  int other_fns[BW_FN_COUNT]; /* BW_FN_*, by calls descending */
  int nloops;
  bwsh__loop_report loops[BW_MAX_LOOPS]; /* in the order they first ran */
} snapshot;

static snapshot snap;

/* Site order: blocked time descending, then count descending, then the
 * function name, then the caller (so that equal sites still sort the same
 * way every time). */
static int site_before(const bwsh__site_view *a, const bwsh__site_view *b) {
  if (a->blocked_ns != b->blocked_ns)
    return a->blocked_ns > b->blocked_ns;
  if (a->count != b->count)
    return a->count > b->count;
  int by_name = strcmp(bwsh__fn_name(a->fn), bwsh__fn_name(b->fn));
  if (by_name != 0)
    return by_name < 0;
  return (uintptr_t)(a->nframes ? a->frames[0] : 0) <
         (uintptr_t)(b->nframes ? b->frames[0] : 0);
}

/* Insertion sort in place: qsort may allocate, and a report of at most
 * BW_MAX_SITES sites is written once. */
static void sort_sites(bwsh__site_view *v, int n) {
  for (int i = 1; i < n; i++) {
    bwsh__site_view cur = v[i];
    int j = i - 1;
    for (; j >= 0 && site_before(&cur, &v[j]); j--)
      v[j + 1] = v[j];
    v[j + 1] = cur;
  }
}

/* The functions other threads called, most calls first (ties by name). */
static void sort_other(snapshot *s) {
  const uint64_t *by = s->totals.other_by_fn;
  s->nother = 0;
  for (int fn = 0; fn < BW_FN_COUNT; fn++) {
    if (by[fn] == 0)
      continue;
    int j = s->nother++;
    for (; j > 0; j--) {
      int prev = s->other_fns[j - 1];
      if (by[prev] > by[fn] ||
          (by[prev] == by[fn] &&
           strcmp(bwsh__fn_name(prev), bwsh__fn_name(fn)) <= 0))
        break;
      s->other_fns[j] = prev;
    }
    s->other_fns[j] = fn;
  }
}

static void snapshot_take(snapshot *s) {
  bwsh__totals_get(&s->totals);
  s->npools = bwsh__pool_count();
  if (s->npools > BW_MAX_POOLS)
    s->npools = BW_MAX_POOLS;
  s->starvation_ns = 0;
  for (int i = 0; i < s->npools; i++) {
    bwsh__pool_get(i, &s->pools[i]);
    s->starvation_ns += s->pools[i].starv_total;
  }
  s->nsites = 0;
  for (int i = 0; i < BW_MAX_SITES; i++)
    if (bwsh__site_get(i, &s->sites[s->nsites]))
      s->nsites++;
  sort_sites(s->sites, s->nsites);
  s->sites_dropped = bwsh__sites_dropped();
  sort_other(s);
  s->nloops = 0;
  for (int i = 0; i < BW_MAX_LOOPS; i++)
    if (bwsh__loop_get(i, &s->loops[s->nloops]))
      s->nloops++;
}

/* The most frames one caller frame expands to (itself and what was
 * inlined into it). */
#define MAX_INLINE 8

/* The worst site is the first (it blocked longest): its innermost frame,
 * where the blocking function was called, into *sym. 0 when none. */
static int worst_site(const snapshot *s, bwsh__sym *sym) {
  if (s->nsites == 0 || s->sites[0].nframes == 0)
    return 0;
  bwsh__sym frames[MAX_INLINE];
  bwsh__symbolize_inline(s->sites[0].frames[0], frames, MAX_INLINE, unnamed());
  *sym = frames[0];
  return 1;
}

/* ---- JSON ---------------------------------------------------------------- */

static void key(bwsh__out *o, const char *k) {
  bwsh__out_jstr(o, k);
  bwsh__out_bytes(o, ":", 1);
}

/* A number member of a JSON object: milliseconds (ms, from nanoseconds)
 * or a count. */
typedef struct member {
  const char *name;
  int ms;
  uint64_t value;
} member;

/* Writes n members, each after a comma (comma_first) or between them. */
static void write_members(bwsh__out *o, const member *m, size_t n,
                          int comma_first) {
  for (size_t i = 0; i < n; i++) {
    if (i > 0 || comma_first)
      bwsh__out_str(o, ",");
    key(o, m[i].name);
    if (m[i].ms)
      bwsh__out_ms(o, m[i].value);
    else
      bwsh__out_u64(o, m[i].value);
  }
}

/* ,"name":{members} */
static void write_object(bwsh__out *o, const char *name, const member *m,
                         size_t n) {
  bwsh__out_str(o, ",");
  key(o, name);
  bwsh__out_str(o, "{");
  write_members(o, m, n, 0);
  bwsh__out_str(o, "}");
}

static void write_pool(bwsh__out *o, const bwsh__pool_report *p) {
  const member head[] = {{"workers", 0, p->workers},
                         {"peak_blocked_workers", 0, p->peak_blocked},
                         {"all_blocked_ms", 1, p->all_blocked_ns}};
  const member starvation[] = {{"total", 1, p->starv_total},
                               {"max", 1, p->starv_max},
                               {"p99", 1, p->starv_p99},
                               {"items", 0, p->starv_items}};
  const member queue_wait[] = {{"max", 1, p->qwait_max},
                               {"p99", 1, p->qwait_p99},
                               {"timed_items", 0, p->timed_items}};
  const member tail[] = {{"items", 0, p->items},
                         {"compensated_workers", 0, p->compensated},
                         {"idle_waits", 0, p->idle_waits}};
  bwsh__out_str(o, "{");
  key(o, "name");
  bwsh__out_jstr(o, p->name);
  bwsh__out_str(o, ",");
  key(o, "kind");
  bwsh__out_jstr(o, bwsh__pool_kind_name(p->kind));
  write_members(o, head, COUNT_OF(head), 1);
  write_object(o, "starvation_delay_ms", starvation, COUNT_OF(starvation));
  write_object(o, "queue_wait_ms", queue_wait, COUNT_OF(queue_wait));
  write_members(o, tail, COUNT_OF(tail), 1);
  bwsh__out_str(o, "}");
}

static void write_loop(bwsh__out *o, const bwsh__loop_report *l) {
  const member nums[] = {{"thread", 0, (uint64_t)l->tid},
                         {"blocking_calls", 0, l->calls},
                         {"blocked_ms", 1, l->blocked_ns},
                         {"longest_callback_ms", 1, l->longest_ns}};
  bwsh__out_str(o, "{");
  key(o, "kind");
  bwsh__out_jstr(o, bwsh__loop_kind_name(l->kind));
  write_members(o, nums, COUNT_OF(nums), 1);
  bwsh__out_str(o, "}");
}

/* A frame: its name (null when unnamed) and its module and offset. */
static void write_frame(bwsh__out *o, const bwsh__sym *sym, void *pc,
                        int first) {
  int named = !unnamed();
  bwsh__out_str(o, first ? "{" : ",{");
  key(o, "function");
  bwsh__out_jstr(o, named ? sym->function : NULL);
  bwsh__out_str(o, ",");
  key(o, "file");
  bwsh__out_jstr(o, named && sym->file[0] ? sym->file : NULL);
  bwsh__out_str(o, ",");
  key(o, "line");
  bwsh__out_i64(o, named ? sym->line : 0);
  bwsh__out_str(o, ",");
  key(o, "inlined");
  bwsh__out_str(o, sym->inlined ? "true" : "false");
  bwsh__module m;
  bwsh__module_of(pc, &m);
  bwsh__out_str(o, ",");
  key(o, "module");
  bwsh__out_jstr(o, m.path);
  bwsh__out_str(o, ",");
  key(o, "build_id");
  bwsh__out_jstr(o, m.build_id);
  bwsh__out_str(o, ",");
  key(o, "offset");
  bwsh__out_str(o, "\"");
  bwsh__out_hex(o, m.offset);
  bwsh__out_str(o, "\"}");
}

/* The library function the program called to make the blocking call
 * (libuv's uv_sleep for a nanosleep), as the symbolizer names it, in buf;
 * NULL when the program made the call itself. */
static const char *via_name(const bwsh__site_view *site, char *buf,
                            size_t size) {
  if (site->via == NULL)
    return NULL;
  if (unnamed())
    return NULL; /* "via_frame" says where, for whoever names it */
  bwsh__sym sym;
  bwsh__symbolize(site->via, &sym, 0);
  snprintf(buf, size, "%s", sym.function);
  return buf;
}

static void write_site(bwsh__out *o, const bwsh__site_view *s) {
  bwsh__out_str(o, "{");
  key(o, "function");
  bwsh__out_jstr(o, bwsh__fn_name(s->fn));
  const member counts[] = {{"count", 0, s->count},
                           {"blocked_ms", 1, s->blocked_ns}};
  write_members(o, counts, COUNT_OF(counts), 1);
  bwsh__out_str(o, ",");
  key(o, "via");
  char via[128];
  bwsh__out_jstr(o, via_name(s, via, sizeof via));
  if (s->via) {
    bwsh__sym sym;
    bwsh__symbolize(s->via, &sym, unnamed());
    bwsh__out_str(o, ",");
    key(o, "via_frame");
    write_frame(o, &sym, s->via, 1);
  }
  bwsh__out_str(o, ",");
  key(o, "hint");
  bwsh__out_jstr(o, bwsh__fn_hint(s->fn));
  bwsh__out_str(o, ",");
  key(o, "frames");
  bwsh__out_str(o, "[");
  int shown = 0;
  for (int f = 0; f < s->nframes; f++) {
    bwsh__sym sym[MAX_INLINE];
    int n = bwsh__symbolize_inline(s->frames[f], sym, MAX_INLINE, unnamed());
    for (int k = 0; k < n; k++)
      write_frame(o, &sym[k], s->frames[f], shown++ == 0);
  }
  bwsh__out_str(o, "]}");
}

/* "summary": what the text's SUMMARY line says. */
static void write_summary(bwsh__out *o, const snapshot *s) {
  const member nums[] = {{"on_workers", 0, s->totals.calls_worker},
                         {"blocked_ms", 1, s->totals.blocked_ns_worker},
                         {"starvation_delay_ms", 1, s->starvation_ns}};
  key(o, "summary");
  bwsh__out_str(o, "{");
  write_members(o, nums, COUNT_OF(nums), 0);
  bwsh__out_str(o, ",");
  key(o, "worst");
  bwsh__sym sym;
  if (worst_site(s, &sym)) {
    bwsh__out_str(o, "{");
    key(o, "function");
    bwsh__out_jstr(o, bwsh__fn_name(s->sites[0].fn));
    bwsh__out_str(o, ",");
    key(o, "caller");
    bwsh__out_jstr(o, unnamed() ? NULL : sym.function);
    bwsh__out_str(o, ",");
    key(o, "file");
    bwsh__out_jstr(o, !unnamed() && sym.file[0] ? sym.file : NULL);
    bwsh__out_str(o, ",");
    key(o, "line");
    bwsh__out_i64(o, sym.line);
    bwsh__out_str(o, "}");
  } else {
    bwsh__out_str(o, "null");
  }
  bwsh__out_str(o, "}");
}

/* ,"run":"<id>" for a report to a shared file, from a process a run
 * began before (the one that began it compares its own id with the
 * file's when it writes). */
static void write_run(bwsh__out *o) {
  char run[64];
  if (bwsh__report_shared() && bwsh__run_id(run, sizeof run)) {
    bwsh__out_str(o, ",");
    key(o, "run");
    bwsh__out_jstr(o, run);
  }
}

/* The written report in tmp to path: renamed over it, or merged with the
 * file there when the run shares it. */
static void commit_json(int fd, const char *tmp, const char *path, int ok) {
  if (!bwsh__report_shared() || !ok) {
    bwsh__file_commit(fd, tmp, path, ok);
    return;
  }
  bwsh__fd_forget(fd);
  if (bwsh__real_close(fd) == 0) {
    /* The last writer names what the others left unnamed. */
    bwsh__merge_naming(!unnamed());
    bwsh__commit_shared(tmp, path);
  } else {
    bwsh__log("warning: could not write '%s'", path);
    unlink(tmp);
  }
}

static void write_json(const snapshot *s, int why) {
  char path[600], tmp[700];
  json_path(path, sizeof path);
  int fd = bwsh__file_begin(path, tmp, sizeof tmp);
  if (fd < 0)
    return;
  bwsh__out o = {.fd = fd};
  const bwsh__totals *t = &s->totals;
  bwsh__out_str(&o, "{");
  key(&o, "pid");
  bwsh__out_i64(&o, getpid());
  bwsh__out_str(&o, ",");
  key(&o, "program");
  bwsh__out_jstr(&o, program_invocation_name);
  bwsh__out_str(&o, ",");
  key(&o, "interim");
  bwsh__out_str(&o, why == BW_WHY_INTERIM ? "true" : "false");
  write_run(&o);
  static char trace[4800]; /* static: a signal stack is small */
  if (why != BW_WHY_INTERIM && bwsh__trace_file(trace, sizeof trace)) {
    /* The trace written after this report, for bw-merge to name. */
    bwsh__out_str(&o, ",");
    key(&o, "trace_file");
    bwsh__out_jstr(&o, trace);
  }
  bwsh__out_str(&o, ",\n");
  key(&o, "pools");
  bwsh__out_str(&o, "[");
  for (int i = 0; i < s->npools; i++) {
    bwsh__out_str(&o, i ? ",\n  " : "\n  ");
    write_pool(&o, &s->pools[i]);
  }
  bwsh__out_str(&o, "],\n");
  key(&o, "loops");
  bwsh__out_str(&o, "[");
  for (int i = 0; i < s->nloops; i++) {
    bwsh__out_str(&o, i ? ",\n  " : "\n  ");
    write_loop(&o, &s->loops[i]);
  }
  bwsh__out_str(&o, "],\n");
  const member calls[] = {{"on_workers", 0, t->calls_worker},
                          {"on_other_threads", 0, t->calls_other},
                          {"on_blocking_threads", 0, t->calls_blocking},
                          {"blocked_ms", 1, t->blocked_ns_worker},
                          {"in_progress", 0, t->in_progress},
                          {"in_progress_ms", 1, t->in_progress_ns}};
  key(&o, "blocking_calls");
  bwsh__out_str(&o, "{");
  write_members(&o, calls, COUNT_OF(calls), 0);
  bwsh__out_str(&o, ",");
  key(&o, "on_other_threads_by_function");
  bwsh__out_str(&o, "[");
  for (int i = 0; i < s->nother; i++) {
    int fn = s->other_fns[i];
    bwsh__out_str(&o, i ? ",{" : "{");
    key(&o, "function");
    bwsh__out_jstr(&o, bwsh__fn_name(fn));
    const member count[] = {{"count", 0, t->other_by_fn[fn]}};
    write_members(&o, count, 1, 1);
    bwsh__out_str(&o, "}");
  }
  bwsh__out_str(&o, "]},\n");
  key(&o, "call_sites");
  bwsh__out_str(&o, "[");
  for (int i = 0; i < s->nsites; i++) {
    bwsh__out_str(&o, i ? ",\n  " : "\n  ");
    write_site(&o, &s->sites[i]);
  }
  bwsh__out_str(&o, "],\n");
  key(&o, "call_sites_dropped");
  bwsh__out_u64(&o, s->sites_dropped);
  bwsh__out_str(&o, ",\n");

  write_summary(&o, s);
  bwsh__out_str(&o, "}\n");
  bwsh__out_flush(&o);
  commit_json(fd, tmp, path, !o.failed);
}

/* ---- text ---------------------------------------------------------------- */

/* Milliseconds with three decimals, rounded as bwsh__out_ms rounds them
 * (integer arithmetic), so that the text shows the JSON's digits. */
typedef struct ms_text {
  char s[32];
} ms_text;

static ms_text ms(uint64_t ns) {
  ms_text m;
  uint64_t thousandths = ns / 1000u + (ns % 1000u >= 500u);
  snprintf(m.s, sizeof m.s, "%llu.%03llu",
           (unsigned long long)(thousandths / 1000u),
           (unsigned long long)(thousandths % 1000u));
  return m;
}

/* "#N 0xPC in FUNCTION FILE:LINE", as the sanitizers print a frame; the
 * frames inlined at one address share it. Unnamed: "#N 0xPC (MODULE+0xOFF)",
 * as they print a frame without symbols. */
static void log_frame(int index, void *pc, const bwsh__sym *sym) {
  bwsh__module m;
  if (unnamed() && bwsh__module_of(pc, &m))
    bwsh__log("    #%d %p (%s+0x%lx)", index, pc, m.path,
              (unsigned long)m.offset);
  else if (unnamed())
    bwsh__log("    #%d %p", index, pc);
  else if (sym->file[0])
    bwsh__log("    #%d %p in %s %s:%d", index, pc, sym->function, sym->file,
              sym->line);
  else
    bwsh__log("    #%d %p in %s", index, pc, sym->function);
}

/* A site: its counts, its frames (inlined ones expanded) and the fix hint
 * of the rule that made its function count. */
static void log_site(const bwsh__site_view *s) {
  char buf[128];
  const char *via = via_name(s, buf, sizeof buf);
  bwsh__log("%s()%s%s%s x%llu, %s ms blocked:", bwsh__fn_name(s->fn),
            via ? " via " : "", via ? via : "", via ? "()" : "",
            (unsigned long long)s->count, ms(s->blocked_ns).s);
  int index = 0;
  for (int f = 0; f < s->nframes; f++) {
    bwsh__sym sym[MAX_INLINE];
    int n = bwsh__symbolize_inline(s->frames[f], sym, MAX_INLINE, unnamed());
    for (int k = 0; k < n; k++)
      log_frame(index++, s->frames[f], &sym[k]);
  }
  const char *hint = bwsh__fn_hint(s->fn);
  if (hint)
    bwsh__log("    hint: %s", hint);
}

/* What the count "on workers" holds, as the text says it after the count:
 * " on pool workers", " in event-loop callbacks" (the loop threads'), or
 * both with each one's count (": 2 on pool workers, 3 in ..."). */
static const char *where_counted(const snapshot *s, char *buf, size_t size) {
  uint64_t in_loops = 0, all = s->totals.calls_worker;
  for (int i = 0; i < s->nloops; i++)
    in_loops += s->loops[i].calls;
  if (in_loops == 0)
    return " on pool workers";
  if (in_loops >= all)
    return " in event-loop callbacks";
  snprintf(buf, size, ": %llu on pool workers, %llu in event-loop callbacks",
           (unsigned long long)(all - in_loops), (unsigned long long)in_loops);
  return buf;
}

/* The closing line, last in the text report (sanitizers end with one):
 * the worst site named by its blocking function and where it was called
 * (or, without a line, the function it was called from). */
static void log_summary(const snapshot *s) {
  const bwsh__totals *t = &s->totals;
  char worst[512] = "none";
  bwsh__sym sym;
  if (worst_site(s, &sym) && sym.file[0])
    snprintf(worst, sizeof worst, "%s at %s:%d", bwsh__fn_name(s->sites[0].fn),
             sym.file, sym.line);
  else if (s->nsites > 0 && s->sites[0].nframes > 0)
    snprintf(worst, sizeof worst, "%s in %s", bwsh__fn_name(s->sites[0].fn),
             sym.function);
  char buf[96];
  bwsh__log("SUMMARY: blockwatch: %llu blocking call%s%s (%s ms), "
            "starvation delay %s ms; worst: %s",
            (unsigned long long)t->calls_worker,
            t->calls_worker == 1 ? "" : "s", where_counted(s, buf, sizeof buf),
            ms(t->blocked_ns_worker).s, ms(s->starvation_ns).s, worst);
}

/* "other threads: read() x120, write() x4, ... (and 3 more functions)":
 * the top 5 in one line; the JSON has them all. */
static void log_other_threads(const snapshot *s) {
  if (s->nother == 0)
    return;
  char line[512];
  size_t n = 0;
  int shown = s->nother < 5 ? s->nother : 5;
  for (int i = 0; i < shown && n < sizeof line; i++) {
    int fn = s->other_fns[i];
    int w = snprintf(line + n, sizeof line - n, "%s%s() x%llu", i ? ", " : "",
                     bwsh__fn_name(fn),
                     (unsigned long long)s->totals.other_by_fn[fn]);
    n += w > 0 ? (size_t)w : 0;
  }
  if (s->nother > shown && n < sizeof line)
    snprintf(line + n, sizeof line - n, " (and %d more function%s)",
             s->nother - shown, s->nother - shown == 1 ? "" : "s");
  bwsh__log("  on other threads: %s", line);
}

static void write_text(const snapshot *s, int why) {
  const bwsh__totals *t = &s->totals;
  if (t->calls_worker == 0 && bwsh__opt.verbosity < 1)
    return;
  const char *when = why == BW_WHY_INTERIM ? "interim report" : "report";
  bwsh__log("==== %s for pid %d (%s)", when, (int)getpid(),
            program_invocation_name);
  char buf[96];
  bwsh__log("%llu blocking call(s)%s, %s ms blocked; %llu on other threads",
            (unsigned long long)t->calls_worker,
            where_counted(s, buf, sizeof buf), ms(t->blocked_ns_worker).s,
            (unsigned long long)t->calls_other);
  log_other_threads(s);
  if (t->calls_blocking)
    bwsh__log("  on bw_run_blocking threads: %llu (threads kept apart from the "
              "workers to block: not worker blocking)",
              (unsigned long long)t->calls_blocking);
  for (int i = 0; i < s->npools; i++) {
    const bwsh__pool_report *p = &s->pools[i];
    char idle[64] = "";
    if (p->idle_waits)
      snprintf(idle, sizeof idle, "; %llu idle wait(s) not counted",
               (unsigned long long)p->idle_waits);
    bwsh__log("pool '%s': %u workers, peak %u blocked, all blocked for %s ms, "
              "starvation delay %s ms over %llu item(s) (max %s ms); kind %s%s",
              p->name, p->workers, p->peak_blocked, ms(p->all_blocked_ns).s,
              ms(p->starv_total).s, (unsigned long long)p->starv_items,
              ms(p->starv_max).s, bwsh__pool_kind_name(p->kind), idle);
  }
  for (int i = 0; i < s->nloops; i++) {
    const bwsh__loop_report *l = &s->loops[i];
    char thread[32] = "the main thread";
    if (l->tid != (int)getpid())
      snprintf(thread, sizeof thread, "thread %d", l->tid);
    bwsh__log("loop %s on %s: %llu blocking call(s) in callbacks, %s ms "
              "blocked; longest callback %s ms",
              bwsh__loop_kind_name(l->kind), thread,
              (unsigned long long)l->calls, ms(l->blocked_ns).s,
              ms(l->longest_ns).s);
  }
  for (int i = 0; i < s->nsites && i < 10; i++)
    log_site(&s->sites[i]);
  if (s->nsites > 10)
    bwsh__log("... %d more call site(s)%s", s->nsites - 10,
              bwsh__opt.report & BW_REPORT_JSON ? ", in the JSON report" : "");
  if (bwsh__opt.report & BW_REPORT_JSON) {
    char path[600];
    json_path(path, sizeof path);
    bwsh__log("JSON report: %s", path);
  }
  log_summary(s);
}

void bwsh__report_write(int why) {
  /* One report at a time (report_busy holds the writer's tid). An interim
   * report that finds one in progress is skipped; a final one waits for
   * another thread's to end (at most ~2 s), but never for its own thread's
   * (a fatal signal inside the report), which would never end. */
  int me = bwsh__self.tid ? bwsh__self.tid : (int)syscall(SYS_gettid);
  for (int spins = 0;; spins++) {
    int expected = 0;
    if (atomic_compare_exchange_strong(&report_busy, &expected, me))
      break;
    if (why == BW_WHY_INTERIM || expected == me || spins >= 2000)
      return;
    struct timespec pause = {0, 1000000};
    bwsh__self.depth++;
    nanosleep(&pause, NULL); /* passes straight through: depth is raised */
    bwsh__self.depth--;
  }
  bwsh__self.depth++;
  int saved = errno;
  if (!in_signal)
    bwsh__modules_scan(); /* a library loaded since names its frames too */
  snapshot_take(&snap);
  if (bwsh__opt.report & BW_REPORT_TEXT)
    write_text(&snap, why);
  if (bwsh__opt.report & BW_REPORT_JSON)
    write_json(&snap, why);
  if (why != BW_WHY_INTERIM && bwsh__opt.trace_path[0])
    bwsh__trace_write(in_signal);
  bwsh__symbolize_end();
  bwsh__symbolize_files_end();
  errno = saved;
  bwsh__self.depth--;
  atomic_store(&report_busy, 0);
}

void bwsh__report_final(int why) {
  if (!atomic_load(&bwsh__active) || atomic_exchange(&final_done, 1))
    return;
  bwsh__report_write(why);
}

int bwsh__has_findings(void) {
  bwsh__totals t;
  bwsh__totals_get(&t);
  return t.calls_worker > 0;
}
