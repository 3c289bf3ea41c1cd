/* run.c - subprocess helper of the blockscan integration tests.
 *
 * Invariant: output goes to unlinked temporary files rather than pipes, so a
 * chatty child can never deadlock against a parent that waits first.
 */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int temp_fd(void) {
  char name[] = "/tmp/blockscan-test-XXXXXX";
  int fd = mkstemp(name);
  if (fd >= 0)
    unlink(name);
  return fd;
}

static char *slurp_fd(int fd) {
  off_t size = lseek(fd, 0, SEEK_END);
  char *buf = malloc(size > 0 ? (size_t)size + 1 : 1);
  if (!buf)
    return NULL;
  lseek(fd, 0, SEEK_SET);
  size_t got = 0;
  while (size > 0 && got < (size_t)size) {
    ssize_t n = read(fd, buf + got, (size_t)size - got);
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  buf[got] = '\0';
  return buf;
}

run_result run_tool_as_is(const char *cwd, const char *const *argv,
                          int seconds) {
  run_result result = {-1, NULL, NULL};
  int out = temp_fd(), err = temp_fd();
  pid_t pid = fork();
  if (pid == 0) {
    if ((cwd && chdir(cwd) != 0) || dup2(out, 1) < 0 || dup2(err, 2) < 0)
      _exit(127);
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  int status = 0;
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid)
      break;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec > seconds) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    struct timespec nap = {0, 10 * 1000 * 1000};
    nanosleep(&nap, NULL);
  }
  result.status =
      WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = slurp_fd(out);
  result.err = slurp_fd(err);
  close(out);
  close(err);
  return result;
}

static int is_blockscan(const char *path) {
  const char *slash = strrchr(path, '/');
  return strcmp(slash ? slash + 1 : path, "blockscan") == 0;
}

run_result run_tool(const char *cwd, const char *const *argv, int seconds) {
  size_t n = 0;
  int names_cache = 0;
  for (; argv[n]; n++)
    names_cache |= strncmp(argv[n], "--cache", 7) == 0;
  if (!is_blockscan(argv[0]) || names_cache)
    return run_tool_as_is(cwd, argv, seconds);
  const char **with = calloc(n + 2, sizeof(char *));
  if (!with)
    return (run_result){-1, NULL, NULL};
  with[0] = argv[0];
  with[1] = "--no-cache";
  for (size_t i = 1; i <= n; i++)
    with[i + 1] = argv[i];
  run_result result = run_tool_as_is(cwd, with, seconds);
  free(with);
  return result;
}

void run_free(run_result *result) {
  free(result->out);
  free(result->err);
}

char *read_file(const char *path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0)
    return NULL;
  char *text = slurp_fd(fd);
  close(fd);
  return text;
}

int contains(const char *haystack, const char *needle) {
  return haystack && strstr(haystack, needle) != NULL;
}
