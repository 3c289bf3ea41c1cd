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
 *  - No signal handler unless asked (handle_fatal, interim_signal): a host
 *    that reads its dispositions at start finds them as without the shim.
 *    When asked, a handler is installed only where the program left the
 *    default disposition, and a fatal one restores the default and
 *    re-raises, so the process still dies of the same signal (core dump
 *    included).
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

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- signals ------------------------------------------------------------- */

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

static void on_fatal_signal(int sig) {
  bwsh__report_set_in_signal(1);
  if (bwsh__is_own_process())
    bwsh__report_final(BW_WHY_SIGNAL);
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Installs handler for sig only if the program has not chosen one. */
static void install(int sig, void (*handler)(int)) {
  struct sigaction old;
  if (sigaction(sig, NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
      (old.sa_flags & SA_SIGINFO))
    return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(sig, &sa, NULL);
}

static void install_signals(void) {
  if (bwsh__opt.report_signal > 0)
    install(bwsh__opt.report_signal, on_report_signal);
  if (!bwsh__opt.fatal_signals)
    return;
  static const int fatal[] = {SIGSEGV, SIGBUS,  SIGFPE, SIGILL,
                              SIGABRT, SIGTERM, SIGINT, SIGHUP};
  for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
    if (fatal[i] != bwsh__opt.report_signal)
      install(fatal[i], on_fatal_signal);
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
