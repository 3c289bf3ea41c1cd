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
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "policy.h"
#include "real.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* ---- fork ---------------------------------------------------------------- */

static void after_fork_child(void) {
  bwsh__self.depth++;
  bwsh__state_after_fork();
  bwsh__pools_after_fork();
  bwsh__sites_after_fork();
  bwsh__trace_after_fork();
  bwsh__report_mark_fork_child();
  bwsh__self.depth--;
}

/* ---- constructor / destructor -------------------------------------------- */

__attribute__((constructor(101))) static void shim_init(void) {
  bwsh__self.depth++;
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
