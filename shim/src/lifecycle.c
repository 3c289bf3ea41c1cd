/* lifecycle.c - the shim's life in a process: constructor, destructor,
 * fork, the report signal and fatal signals.
 *
 * Invariants:
 *  - The constructor does every step that may allocate or take a loader
 *    lock (options, rules, dlsym of all real functions, priming backtrace,
 *    mapping the trace buffer) before bwsh__active is set; until then every
 *    wrapper goes straight to the real function.
 *  - The final report is written once, from bwsh__report_final, by whichever
 *    of these comes first: the destructor (exit() or return from main),
 *    _exit/_Exit (interpose.c), a fatal signal, fail=1.
 *  - No signal handler unless asked (handle_fatal, interim_signal). When
 *    asked, a handler is installed only where the disposition is SIG_DFL,
 *    and the program does not see it: its sigaction/signal calls (wrapped
 *    here, beside the handlers whose secret they keep) read SIG_DFL back,
 *    a handler of its own replaces the shim's as it is, SIG_DFL set again
 *    brings the shim's back. A fatal one puts SIG_DFL back and re-raises,
 *    so the process still dies of the same signal (core dump included).
 *  - When the embedded rule packs do not load, the constructor says so on
 *    stderr and stops there: bwsh__active stays 0, no handler, no trace, no
 *    report, no runtime observer (bwsh__stood_down).
 *  - A fork child resets every per-process counter (its report covers only
 *    what it did itself) and names its own report file.
 *  - A run's shared report file is read, merged and replaced by one writer
 *    at a time (an flock on its directory); what is read there is only
 *    mapped, never copied, and nothing of it is trusted but its shape.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "merge.h"
#include "policy.h"
#include "real.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- signals ------------------------------------------------------------- */

/* libc's own sigaction, under the name that is not interposed: what the
 * program's calls are passed on to (the next definition is libc's, or a
 * sanitizer's that is before us and calls us). No dlsym: it works before
 * the constructor ran. */
extern int __sigaction(int sig, const struct sigaction *act,
                       struct sigaction *old);
/* libc's signal() under its other name (not declared under _GNU_SOURCE). */
extern sighandler_t bsd_signal(int sig, sighandler_t h);

/* Per signal the shim handles (the handler it installs where the program
 * has SIG_DFL), whether that handler is in place now, and while it is the
 * disposition the program set and still reads back. handler[] is written
 * by the constructor before signals_on; taken[] and program_view[] only
 * under view_lock (a spin lock: sigaction is async-signal-safe, a mutex
 * would not be). */
static void (*handler[NSIG])(int);
static atomic_int taken[NSIG];
static struct sigaction program_view[NSIG];
static atomic_flag view_lock = ATOMIC_FLAG_INIT;
static atomic_int signals_on;
/* 1 when the program's sigaction calls reach ours first (no sanitizer
 * interposed before us): only then can SIG_DFL be taken again unseen. */
static int first_in_chain;

static void on_report_signal(int sig) {
  (void)sig;
  int saved = errno;
  if (!bwsh__is_own_process())
    return;
  bwsh__report_set_in_signal(1);
  bwsh__report_write(BW_WHY_INTERIM);
  bwsh__report_set_in_signal(0);
  errno = saved;
}

/* The final report, then the program's own disposition (SIG_DFL, as the
 * shim only takes that) back and the signal raised again: it is handled
 * as without the shim, the default action killing the process. */
static void on_fatal_signal(int sig) {
  bwsh__report_set_in_signal(1);
  if (bwsh__is_own_process())
    bwsh__report_final(BW_WHY_SIGNAL);
  atomic_store(&taken[sig], 0);
  bwsh__self.depth++;
  sigaction(sig, &program_view[sig], NULL);
  bwsh__self.depth--;
  raise(sig);
}

static int is_default(const struct sigaction *sa) {
  return sa->sa_handler == SIG_DFL; /* sa_sigaction shares its storage */
}

/* The shim's handler for sig in the kernel, through the first sigaction
 * in the chain (a sanitizer's, when one is preloaded, so that it still
 * delivers the signal its way); old gets what was there. */
static int put_handler(int sig, struct sigaction *old) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler[sig];
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  bwsh__self.depth++;
  int r = sigaction(sig, &sa, old);
  bwsh__self.depth--;
  return r;
}

/* Installs the handler only if the program has not chosen a disposition. */
static void install(int sig, void (*h)(int)) {
  struct sigaction old;
  if (__sigaction(sig, NULL, &old) != 0 || !is_default(&old))
    return;
  handler[sig] = h;
  if (put_handler(sig, NULL) == 0) {
    program_view[sig] = old;
    atomic_store(&taken[sig], 1);
  }
}

/* 1 when the sigaction the program's calls reach first is in this
 * library (and not a sanitizer's, preloaded before it). */
static int ours_comes_first(void) {
  Dl_info first, self;
  void *fn = dlsym(RTLD_DEFAULT, "sigaction");
  return fn && dladdr(fn, &first) && dladdr((void *)install, &self) &&
         first.dli_fbase == self.dli_fbase;
}

static void install_signals(void) {
  first_in_chain = ours_comes_first();
  if (bwsh__opt.report_signal > 0)
    install(bwsh__opt.report_signal, on_report_signal);
  if (bwsh__opt.fatal_signals) {
    static const int fatal[] = {SIGSEGV, SIGBUS,  SIGFPE, SIGILL,
                                SIGABRT, SIGTERM, SIGINT, SIGHUP};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
      if (fatal[i] != bwsh__opt.report_signal)
        install(fatal[i], on_fatal_signal);
  }
  atomic_store(&signals_on, 1);
}

/* The program's sigaction on a signal the shim handles. While the shim's
 * handler stands in for SIG_DFL the program reads its own disposition
 * back; a handler of the program's goes to the kernel as it is (flags and
 * mask included) and the shim stands aside; SIG_DFL set again brings the
 * shim's handler back, unseen (the classic crash handler: SIG_DFL, then
 * raise, gets its report). */
static int program_sigaction(int sig, const struct sigaction *act,
                             struct sigaction *old) {
  while (atomic_flag_test_and_set_explicit(&view_lock, memory_order_acquire))
    ;
  int r = 0;
  if (atomic_load(&taken[sig])) {
    if (old)
      *old = program_view[sig];
    if (act && is_default(act)) {
      program_view[sig] = *act;
    } else if (act) {
      r = __sigaction(sig, act, NULL);
      if (r == 0)
        atomic_store(&taken[sig], 0);
    }
  } else if (act && is_default(act) && first_in_chain) {
    r = put_handler(sig, old);
    if (r == 0) {
      program_view[sig] = *act;
      atomic_store(&taken[sig], 1);
    }
  } else {
    r = __sigaction(sig, act, old);
  }
  atomic_flag_clear_explicit(&view_lock, memory_order_release);
  return r;
}

static int watched(int sig) {
  return bwsh__self.depth == 0 && atomic_load(&signals_on) && sig > 0 &&
         sig < NSIG && handler[sig];
}

__attribute__((visibility("default"))) int
sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  if (!watched(sig))
    return __sigaction(sig, act, old);
  int saved = errno;
  int r = program_sigaction(sig, act, old);
  if (r == 0)
    errno = saved;
  return r;
}

/* signal() as glibc's (BSD semantics: SA_RESTART, the signal blocked in
 * its handler) for a signal the shim handles; glibc's own otherwise,
 * which calls its internal sigaction and would not be seen. */
__attribute__((visibility("default"))) sighandler_t signal(int sig,
                                                           sighandler_t h) {
  if (!watched(sig) || h == SIG_ERR)
    return bsd_signal(sig, h);
  struct sigaction act, old;
  memset(&act, 0, sizeof act);
  act.sa_handler = h;
  sigemptyset(&act.sa_mask);
  sigaddset(&act.sa_mask, sig);
  act.sa_flags = SA_RESTART;
  int saved = errno;
  if (program_sigaction(sig, &act, &old) != 0)
    return SIG_ERR;
  errno = saved;
  return old.sa_handler;
}

/* ---- the report file a run shares --------------------------------------- */

/* The buffers below are static (a signal handler may write the report, on
 * a thread's small stack) and filled only by the shim's own code and the
 * read system call itself: a sanitizer's read or snprintf interceptor
 * would record the shim's writes, and TSan, blind to the report's lock
 * in the uninstrumented shim, call two reports in a row a race. */

/* Reads up to size-1 bytes of a /proc file into buf (NUL-terminated);
 * the length, or -1. */
static long read_proc(const char *path, char *buf, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  size_t n = 0;
  long r;
  while (n + 1 < size && (r = syscall(SYS_read, fd, buf + n, size - 1 - n)) > 0)
    n += (size_t)r;
  bwsh__real_close(fd);
  buf[n] = '\0';
  return (long)n;
}

/* The parent and the start time (clock ticks after boot) of pid, from
 * /proc/<pid>/stat (fields 4 and 22, counted after the ")" of the name). */
static int proc_stat(int pid, int *ppid, unsigned long long *start) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  if (read_proc(path, buf, sizeof buf) <= 0)
    return -1;
  const char *p = strrchr(buf, ')');
  if (!p)
    return -1;
  return sscanf(p + 2,
                "%*c %d %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
                "%*s %*s %*s %*s %*s %*s %llu",
                ppid, start) == 2
             ? 0
             : -1;
}

/* The "BLOCKWATCH_OPTIONS=..." entry of /proc/<pid>/environ (the
 * environment it was started with) into out; 0 when found. */
static char environ_buf[65536];
static int proc_options(int pid, char *out, size_t size) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/environ", pid);
  long n = read_proc(path, environ_buf, sizeof environ_buf);
  for (long i = 0; i < n; i += (long)strlen(environ_buf + i) + 1)
    if (strncmp(environ_buf + i, "BLOCKWATCH_OPTIONS=", 19) == 0) {
      size_t k = 0;
      for (const char *c = environ_buf + i; *c && k + 1 < size; c++)
        out[k++] = *c;
      out[k] = '\0';
      return 0;
    }
  return -1;
}

/* The run this process belongs to, as "<pid>.<start>" of its oldest
 * ancestor in an unbroken line of processes started with the same
 * BLOCKWATCH_OPTIONS (a timeout, a shell, a test runner under the shim),
 * else of itself: the processes of one run share it, a later run of the
 * same command does not. 1 when that is an ancestor, 0 when itself. */
int bwsh__run_id(char *out, size_t size) {
  static char mine[4096], theirs[4096];
  unsigned long long start = 0, s;
  int pid = (int)getpid(), root = pid, ppid;
  int have = proc_options(pid, mine, sizeof mine) == 0;
  for (int depth = 0; depth < 64 && proc_stat(pid, &ppid, &s) == 0; depth++) {
    root = pid;
    start = s;
    if (!have || ppid <= 1 || proc_options(ppid, theirs, sizeof theirs) != 0 ||
        strcmp(mine, theirs) != 0)
      break;
    pid = ppid;
  }
  snprintf(out, size, "%d.%llu", root, start);
  return root != (int)getpid();
}

/* When this process started, on the clock file times are stamped with
 * (set by the constructor). */
static struct timespec started;
static int forked; /* a fork child: its report has a file of its own */

/* A report_path without "%p" ("%%p" is a '%' and a 'p'), outside a fork
 * child (which has a file of its own): a file for every process that
 * reads the same options. Interim reports too: a later report of the same
 * process replaces its entry. */
int bwsh__report_shared(void) {
  const char *p = bwsh__opt.report_path;
  if (!p[0] || forked)
    return 0;
  for (; *p; p++) {
    if (p[0] == '%' && p[1] == 'p')
      return 0;
    if (p[0] == '%' && p[1] == '%')
      p++;
  }
  return 1;
}

/* An flock on the directory of path (no lock file left behind), waited
 * for at most ~2 s: the writers hold it only to read and rename. -1 when
 * there is none; the merge goes on without it. */
static int lock_directory(const char *path) {
  char dir[600];
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else
    snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path),
             path);
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  for (int spins = 0; fd >= 0 && spins < 2000; spins++) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
      return fd;
    if (errno != EWOULDBLOCK)
      break;
    struct timespec pause = {0, 1000000};
    nanosleep(&pause, NULL);
  }
  if (fd >= 0)
    bwsh__real_close(fd);
  return -1;
}

/* The regular file at path, mapped (its size in *n; in *recent whether it
 * was written since this process started); NULL when there is none. */
static void *map_file(const char *path, size_t *n, int *recent) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return NULL;
  struct stat st;
  void *p = NULL;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    *recent = st.st_mtim.tv_sec > started.tv_sec ||
              (st.st_mtim.tv_sec == started.tv_sec &&
               st.st_mtim.tv_nsec >= started.tv_nsec);
    p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    *n = (size_t)st.st_size;
  }
  bwsh__real_close(fd);
  return p == MAP_FAILED ? NULL : p;
}

/* Merges the report in tmp with the one at path into a third file that
 * replaces path. 0 when done; -1 when there was nothing to merge with (or
 * the merge failed), tmp left as it was. */
static int merge_into(const char *tmp, const char *path) {
  size_t nprev = 0, nmine = 0;
  int recent = 0, unused;
  void *prev = map_file(path, &nprev, &recent);
  void *mine = prev ? map_file(tmp, &nmine, &unused) : NULL;
  int r = -1;
  char out_tmp[700];
  int fd = mine ? bwsh__file_begin(path, out_tmp, sizeof out_tmp) : -1;
  if (fd >= 0) {
    bwsh__out o = {.fd = fd};
    char run[64];
    bwsh__run_id(run, sizeof run);
    int ok =
        bwsh__merge_write(&o, (bwsh__span){prev, nprev},
                          (bwsh__span){mine, nmine}, recent ? NULL : run) == 0;
    bwsh__out_flush(&o);
    if (ok)
      r = bwsh__file_commit(fd, out_tmp, path, !o.failed);
    else {
      bwsh__fd_forget(fd);
      bwsh__real_close(fd);
      unlink(out_tmp);
    }
  }
  if (mine)
    munmap(mine, nmine);
  if (prev)
    munmap(prev, nprev);
  return r;
}

void bwsh__commit_shared(const char *tmp, const char *path) {
  int lock = lock_directory(path);
  if (merge_into(tmp, path) != 0 && rename(tmp, path) != 0)
    bwsh__log("warning: could not write '%s': %s", path, strerror(errno));
  unlink(tmp); /* gone already when renamed */
  if (lock >= 0)
    bwsh__real_close(lock); /* the flock goes with the descriptor */
}

/* ---- fork ---------------------------------------------------------------- */

static void after_fork_child(void) {
  bwsh__self.depth++;
  forked = 1;
  bwsh__state_after_fork();
  bwsh__pools_after_fork();
  bwsh__sites_after_fork();
  bwsh__symbolize_after_fork();
  bwsh__trace_after_fork();
  bwsh__report_mark_fork_child();
  bwsh__self.depth--;
}

/* ---- constructor / destructor -------------------------------------------- */

__attribute__((constructor(101))) static void shim_init(void) {
  bwsh__self.depth++;
  clock_gettime(CLOCK_REALTIME_COARSE, &started);
  bwsh__own_pid_set();
  bwsh__log_init();
  bwsh__resolve_all();
  const char *env = getenv("BLOCKWATCH_OPTIONS");
  bwsh__options_parse(env);
  if (bwsh__opt.help)
    bwsh__options_help();
  bwsh__options_check_paths(); /* now, not when the report fails at exit */
  if (bwsh__policy_init() != 0) {
    /* No rules, nothing known to block: stay out of the way (no report,
     * no handlers, no trace; every wrapper passes straight through). */
    atomic_store(&bwsh__stood_down, 1);
    bwsh__self.depth--;
    return;
  }
  bwsh__state_init();
  bwsh__symbolize_init();
  bwsh__sites_init();
  bwsh__trace_init();
  bwsh__pool_gate_init(bwsh__now_ns()); /* knows the trace and sample_items */
  pthread_atfork(NULL, NULL, after_fork_child);
  install_signals();
  if (bwsh__opt.verbosity >= 2)
    bwsh__log("active in pid %d (%s)", (int)getpid(), program_invocation_name);
  atomic_store(&bwsh__active, 1);
  bwsh__self.depth--;
}

__attribute__((destructor(101))) static void shim_fini(void) {
  bwsh__report_final(BW_WHY_EXIT);
  if (bwsh__opt.fail == BW_FAIL_REPORT && bwsh__has_findings()) {
    fflush(NULL); /* _exit skips the stdio flush exit() would still do */
    bwsh__real_exit_now(bwsh__opt.exitcode);
  }
}
