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
 *  - Quiet by default: the text summary is printed only when something
 *    blocked a worker (or verbosity >= 1).
 *  - In a signal handler nothing that can allocate is called: frames are
 *    raw addresses (safe_only symbolization).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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
      bwsh__log("warning: cannot write %s: %s", tmp, strerror(errno));
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
  bwsh__log("warning: could not write %s", path);
  unlink(tmp);
  return -1;
}

/* The file a given path names in this process: "%p" becomes the pid, and
 * without it a fork child appends ".<pid>" (its own file). */
void bwsh__output_path(const char *given, char *out, size_t size) {
  const char *pid_at = strstr(given, "%p");
  if (pid_at)
    snprintf(out, size, "%.*s%d%s", (int)(pid_at - given), given, (int)getpid(),
             pid_at + 2);
  else if (in_fork_child)
    snprintf(out, size, "%s.%d", given, (int)getpid());
  else
    snprintf(out, size, "%s", given);
}

static void json_path(char *out, size_t size) {
  if (!bwsh__opt.report_path[0])
    snprintf(out, size, "blockwatch.%d.json", (int)getpid());
  else
    bwsh__output_path(bwsh__opt.report_path, out, size);
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

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

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
                         {"compensated_workers", 0, p->compensated}};
  bwsh__out_str(o, "{");
  key(o, "name");
  bwsh__out_jstr(o, p->name);
  write_members(o, head, COUNT_OF(head), 1);
  write_object(o, "starvation_delay_ms", starvation, COUNT_OF(starvation));
  write_object(o, "queue_wait_ms", queue_wait, COUNT_OF(queue_wait));
  write_members(o, tail, COUNT_OF(tail), 1);
  bwsh__out_str(o, "}");
}

/* The most frames one caller frame expands to (itself and what was
 * inlined into it). */
#define MAX_INLINE 8

static void write_frame(bwsh__out *o, const bwsh__sym *sym, int first) {
  bwsh__out_str(o, first ? "{" : ",{");
  key(o, "function");
  bwsh__out_jstr(o, sym->function);
  bwsh__out_str(o, ",");
  key(o, "file");
  bwsh__out_jstr(o, sym->file[0] ? sym->file : NULL);
  bwsh__out_str(o, ",");
  key(o, "line");
  bwsh__out_i64(o, sym->line);
  bwsh__out_str(o, ",");
  key(o, "inlined");
  bwsh__out_str(o, sym->inlined ? "true" : "false");
  bwsh__out_str(o, "}");
}

static void write_site(bwsh__out *o, const bwsh__site_view *s, int safe_only) {
  bwsh__out_str(o, "{");
  key(o, "function");
  bwsh__out_jstr(o, bwsh__fn_name(s->fn));
  bwsh__out_str(o, ",");
  key(o, "count");
  bwsh__out_u64(o, s->count);
  bwsh__out_str(o, ",");
  key(o, "blocked_ms");
  bwsh__out_ms(o, s->blocked_ns);
  bwsh__out_str(o, ",");
  key(o, "frames");
  bwsh__out_str(o, "[");
  int shown = 0;
  for (int f = 0; f < s->nframes; f++) {
    bwsh__sym sym[MAX_INLINE];
    int n = bwsh__symbolize_inline(s->frames[f], sym, MAX_INLINE, safe_only);
    for (int k = 0; k < n; k++)
      write_frame(o, &sym[k], shown++ == 0);
  }
  bwsh__out_str(o, "]}");
}

static void write_json(int why) {
  char path[600], tmp[700];
  json_path(path, sizeof path);
  int fd = bwsh__file_begin(path, tmp, sizeof tmp);
  if (fd < 0)
    return;
  bwsh__out o = {.fd = fd};
  bwsh__totals t;
  bwsh__totals_get(&t);
  bwsh__out_str(&o, "{");
  key(&o, "pid");
  bwsh__out_i64(&o, getpid());
  bwsh__out_str(&o, ",");
  key(&o, "program");
  bwsh__out_jstr(&o, program_invocation_name);
  bwsh__out_str(&o, ",");
  key(&o, "interim");
  bwsh__out_str(&o, why == BW_WHY_INTERIM ? "true" : "false");
  bwsh__out_str(&o, ",\n");
  key(&o, "pools");
  bwsh__out_str(&o, "[");
  int n = bwsh__pool_count();
  for (int i = 0; i < n; i++) {
    bwsh__pool_report p;
    bwsh__pool_get(i, &p);
    bwsh__out_str(&o, i ? ",\n  " : "\n  ");
    write_pool(&o, &p);
  }
  bwsh__out_str(&o, "],\n");
  key(&o, "blocking_calls");
  bwsh__out_str(&o, "{\"on_workers\":");
  bwsh__out_u64(&o, t.calls_worker);
  bwsh__out_str(&o, ",\"on_other_threads\":");
  bwsh__out_u64(&o, t.calls_other);
  bwsh__out_str(&o, ",\"blocked_ms\":");
  bwsh__out_ms(&o, t.blocked_ns_worker);
  bwsh__out_str(&o, ",\"in_progress\":");
  bwsh__out_u64(&o, t.in_progress);
  bwsh__out_str(&o, ",\"in_progress_ms\":");
  bwsh__out_ms(&o, t.in_progress_ns);
  bwsh__out_str(&o, "},\n");
  key(&o, "call_sites");
  bwsh__out_str(&o, "[");
  int first = 1;
  for (int i = 0; i < BW_MAX_SITES; i++) {
    bwsh__site_view s;
    if (!bwsh__site_get(i, &s))
      continue;
    bwsh__out_str(&o, first ? "\n  " : ",\n  ");
    first = 0;
    write_site(&o, &s, in_signal);
  }
  bwsh__out_str(&o, "],\n");
  key(&o, "call_sites_dropped");
  bwsh__out_u64(&o, bwsh__sites_dropped());
  bwsh__out_str(&o, "}\n");
  bwsh__out_flush(&o);
  bwsh__file_commit(fd, tmp, path, !o.failed);
}

/* ---- text ---------------------------------------------------------------- */

/* "#N 0xPC in FUNCTION FILE:LINE", as the sanitizers print a frame; the
 * frames inlined at one address share it. */
static void log_frame(int index, void *pc, const bwsh__sym *sym) {
  if (in_signal) /* raw: the function is the address itself */
    bwsh__log("    #%d %p", index, pc);
  else if (sym->file[0])
    bwsh__log("    #%d %p in %s %s:%d", index, pc, sym->function, sym->file,
              sym->line);
  else
    bwsh__log("    #%d %p in %s", index, pc, sym->function);
}

static void write_text(int why) {
  bwsh__totals t;
  bwsh__totals_get(&t);
  if (t.calls_worker == 0 && bwsh__opt.verbosity < 1)
    return;
  const char *when = why == BW_WHY_INTERIM ? "interim report" : "report";
  bwsh__log("==== %s for pid %d (%s)", when, (int)getpid(),
            program_invocation_name);
  bwsh__log("%llu blocking call(s) on pool workers, %.3f ms blocked; %llu on "
            "other threads",
            (unsigned long long)t.calls_worker,
            (double)t.blocked_ns_worker / 1e6,
            (unsigned long long)t.calls_other);
  int n = bwsh__pool_count();
  for (int i = 0; i < n; i++) {
    bwsh__pool_report p;
    bwsh__pool_get(i, &p);
    bwsh__log(
        "pool '%s': %u workers, peak %u blocked, all blocked for %.3f ms, "
        "starvation delay %.3f ms over %llu item(s) (max %.3f ms)",
        p.name, p.workers, p.peak_blocked, (double)p.all_blocked_ns / 1e6,
        (double)p.starv_total / 1e6, (unsigned long long)p.starv_items,
        (double)p.starv_max / 1e6);
  }
  int shown = 0;
  for (int i = 0; i < BW_MAX_SITES && shown < 10; i++) {
    bwsh__site_view s;
    if (!bwsh__site_get(i, &s))
      continue;
    shown++;
    bwsh__log("%s() x%llu, %.3f ms blocked:", bwsh__fn_name(s.fn),
              (unsigned long long)s.count, (double)s.blocked_ns / 1e6);
    int index = 0;
    for (int f = 0; f < s.nframes; f++) {
      bwsh__sym sym[MAX_INLINE];
      int got = bwsh__symbolize_inline(s.frames[f], sym, MAX_INLINE, in_signal);
      for (int k = 0; k < got; k++)
        log_frame(index++, s.frames[f], &sym[k]);
    }
  }
  if (!(bwsh__opt.report & BW_REPORT_JSON))
    return;
  char path[600];
  json_path(path, sizeof path);
  bwsh__log("JSON report: %s", path);
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
    struct timespec ms = {0, 1000000};
    bwsh__self.depth++;
    nanosleep(&ms, NULL); /* passes straight through: depth is raised */
    bwsh__self.depth--;
  }
  bwsh__self.depth++;
  int saved = errno;
  if (bwsh__opt.report & BW_REPORT_TEXT)
    write_text(why);
  if (bwsh__opt.report & BW_REPORT_JSON)
    write_json(why);
  if (why != BW_WHY_INTERIM && bwsh__opt.trace_path[0])
    bwsh__trace_write();
  bwsh__symbolize_end();
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
