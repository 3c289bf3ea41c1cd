/* procs_target.c - the programs of a process tree under the shim: each
 * mode does a known number of blocking calls on a worker thread named
 * "procs-worker" (worker_name=procs-*), so that every report can be told
 * apart and the totals checked.
 *
 * Invariants: "block N" makes exactly N usleep calls on the worker and none
 * on main but the join; "fork" is "block 3" in the parent and "block 2" in
 * its fork child; "interim" is "block 1", a SIGUSR2 (the shim's interim
 * report, with interim_signal=SIGUSR2), then "block 2"; "to_file FILE" checks
 * that a child's output redirected to FILE is exactly what the child wrote (as
 * libuv's spawn_stdout_and_stderr_to_file does); nothing is printed but what
 * each mode says.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *worker(void *arg) {
  int n = *(int *)arg;
  pthread_setname_np(pthread_self(), "procs-worker");
  for (int i = 0; i < n; i++)
    usleep(2000);
  return NULL;
}

static int block(int n) {
  pthread_t t;
  if (pthread_create(&t, NULL, worker, &n) != 0)
    return 1;
  pthread_join(t, NULL);
  return 0;
}

static int fork_and_block(void) {
  pid_t pid = fork();
  if (pid < 0)
    return 1;
  if (pid == 0)
    _exit(block(2)); /* _exit: the shim still writes the child's report */
  int r = block(3);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  return r || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

/* A child with stdout and stderr on FILE writes one line to each; the
 * file must hold exactly those two lines when it is gone. */
static int to_file(const char *self, const char *file) {
  int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return 1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    execl(self, self, "hello", (char *)NULL);
    _exit(127);
  }
  close(fd);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  char buf[4096];
  FILE *f = fopen(file, "r");
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f)
    fclose(f);
  buf[n] = '\0';
  const char *want = "hello out\nhello err\n";
  if (strcmp(buf, want) != 0) {
    printf("file holds:\n%s", buf);
    return 1;
  }
  return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

static int hello(void) {
  block(1);
  fputs("hello out\n", stdout);
  fflush(stdout);
  fputs("hello err\n", stderr);
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "block") == 0 && argc > 2)
    return block(atoi(argv[2]));
  if (strcmp(mode, "fork") == 0)
    return fork_and_block();
  if (strcmp(mode, "interim") == 0)
    return block(1) || raise(SIGUSR2) || block(2);
  if (strcmp(mode, "to_file") == 0 && argc > 2)
    return to_file(argv[0], argv[2]);
  if (strcmp(mode, "hello") == 0)
    return hello();
  fprintf(stderr,
          "usage: procs_target block N | fork | interim | to_file FILE\n");
  return 2;
}
