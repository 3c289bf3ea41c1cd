/* run_child.c - fork/exec with a pipe for stdout and a deadline.
 *
 * Invariants: the read end is drained until EOF before waiting, so a child
 * that writes more than a pipe buffer never deadlocks; stderr is inherited so
 * the child's diagnostics land in the test log.
 */
#include "run_child.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int append(child_result *res, const char *buf, size_t n) {
  char *bigger = realloc(res->out, res->len + n + 1);
  if (bigger == NULL)
    return -1;
  res->out = bigger;
  memcpy(res->out + res->len, buf, n);
  res->len += n;
  res->out[res->len] = '\0';
  return 0;
}

int run_child(char *const argv[], char *const env[], const char *cwd,
              int timeout_s, child_result *res) {
  memset(res, 0, sizeof *res);
  res->status = -1;
  if (append(res, "", 0) != 0)
    return -1;
  int fds[2];
  if (pipe(fds) != 0)
    return -1;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    for (size_t i = 0; env != NULL && env[i] != NULL; i++)
      putenv(env[i]);
    if (cwd != NULL && chdir(cwd) != 0)
      _exit(126);
    execv(argv[0], argv);
    _exit(127);
  }
  close(fds[1]);
  time_t deadline = time(NULL) + timeout_s;
  int timed_out = 0;
  for (;;) {
    struct pollfd p = {.fd = fds[0], .events = POLLIN};
    int ready = poll(&p, 1, 200);
    if (ready < 0 && errno != EINTR)
      break;
    if (ready > 0) {
      char buf[4096];
      ssize_t n = read(fds[0], buf, sizeof buf);
      if (n <= 0)
        break; /* EOF: the child closed stdout (normally: it exited) */
      if (append(res, buf, (size_t)n) != 0)
        break;
    }
    if (time(NULL) > deadline) {
      kill(pid, SIGKILL);
      timed_out = 1;
      break;
    }
  }
  close(fds[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!timed_out && WIFEXITED(status))
    res->status = WEXITSTATUS(status);
  return 0;
}
