/* host_target.c - a program that looks at what the shim did to its host:
 * signal dispositions at start, signals raised with the default action,
 * its own handlers, and a report under a name that is not UTF-8.
 *
 * Invariants: every scenario prints "key value" lines on stdout (read by
 * test_host.c) and makes exactly the calls its comment says.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The signals the shim could ever take: the fatal ones and the interim
 * report's usual choices. */
static const int watched[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL,  SIGABRT,
                              SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2};

static int is_default(int sig) {
  struct sigaction old;
  return sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
         !(old.sa_flags & SA_SIGINFO);
}

/* "not_default N": how many watched signals are not SIG_DFL at start. */
static int scenario_dispositions(void) {
  int n = 0;
  for (size_t i = 0; i < sizeof watched / sizeof watched[0]; i++)
    if (!is_default(watched[i])) {
      printf("handled %d\n", watched[i]);
      n++;
    }
  printf("not_default %d\n", n);
  return 0;
}

/* One usleep(1000), then raises the signal numbered arg; if it survives,
 * moves the file `report` (when given) to "<report>.interim" and returns
 * 3. */
static int scenario_raise(const char *arg, const char *report) {
  usleep(1000);
  fflush(stdout);
  raise(atoi(arg));
  if (report) {
    char interim[700];
    snprintf(interim, sizeof interim, "%s.interim", report);
    printf("renamed %d\n", rename(report, interim));
  }
  return 3;
}

static volatile sig_atomic_t own_ran;

static void own_handler(int sig) {
  (void)sig;
  own_ran++;
}

/* Installs its own SIGTERM handler (sigaction), checks that it reads it
 * back and that it runs; puts SIG_DFL back with signal() and checks that
 * too; then raises SIGTERM, which kills it. One usleep(1000) first, so the
 * report has a call in it. */
static int scenario_own(void) {
  usleep(1000);
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = own_handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGTERM, NULL, &old);
  printf("reads_own %d\n", old.sa_handler == own_handler);
  raise(SIGTERM);
  printf("own_ran %d\n", (int)own_ran);
  void (*prev)(int) = signal(SIGTERM, SIG_DFL);
  printf("signal_returned_own %d\n", prev == own_handler);
  printf("default_again %d\n", is_default(SIGTERM));
  fflush(stdout);
  raise(SIGTERM);
  return 3;
}

/* One usleep(1000), then exit 0: a report under whatever argv[0] is. */
static int scenario_sleep(void) {
  usleep(1000);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  if (strcmp(argv[1], "dispositions") == 0)
    return scenario_dispositions();
  if (strcmp(argv[1], "raise") == 0 && argc > 2)
    return scenario_raise(argv[2], argc > 3 ? argv[3] : NULL);
  if (strcmp(argv[1], "own") == 0)
    return scenario_own();
  if (strcmp(argv[1], "sleep") == 0)
    return scenario_sleep();
  return 2;
}
