/* remote.c - a bench peer in a child process, driven over two pipes.
 *
 * Protocol (one line each way, child answers every request):
 *   parent: "tiny <items> <rounds>" | "delays <n> <ms>" |
 *           "sleepers <n> <ms>" | "chain <links>" | "quit"
 *   child:  "<rc> <value1> <value2>"  (rc 0 or a negative errno)
 * The child starts by answering "<rc> 0 0" for opening its pool. A child
 * that dies makes every later request fail with -EPIPE, never hang: the
 * parent reads end of file.
 */
#include "remote.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct remote {
  pid_t pid;
  FILE *to_child;
  FILE *from_child;
} remote;

/* Sends one request line and reads the answer. */
static int call(remote *child, uint64_t *v1, uint64_t *v2, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int call(remote *child, uint64_t *v1, uint64_t *v2, const char *fmt,
                ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(child->to_child, fmt, ap);
  va_end(ap);
  fputc('\n', child->to_child);
  if (fflush(child->to_child) != 0)
    return -EPIPE;
  int rc;
  uint64_t a, b;
  if (fscanf(child->from_child, "%d %" SCNu64 " %" SCNu64, &rc, &a, &b) != 3)
    return -EPIPE;
  if (v1)
    *v1 = a;
  if (v2)
    *v2 = b;
  return rc;
}

/* environ plus UV_THREADPOOL_SIZE=<workers>, replacing any inherited one. */
static char **child_environ(unsigned workers, char *slot, size_t slot_size) {
  size_t n = 0;
  while (environ[n])
    n++;
  char **env = calloc(n + 2, sizeof *env);
  if (env == NULL)
    return NULL;
  size_t out = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "UV_THREADPOOL_SIZE=", 19) != 0)
      env[out++] = environ[i];
  snprintf(slot, slot_size, "UV_THREADPOOL_SIZE=%u", workers);
  env[out] = slot;
  return env;
}

void *bench_remote_open(const bench_peer *peer, unsigned workers,
                        unsigned flags) {
  int down[2], up[2];
  if (pipe(down) != 0)
    return NULL;
  if (pipe(up) != 0) {
    close(down[0]);
    close(down[1]);
    return NULL;
  }
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  char workers_arg[16], flags_arg[16], env_slot[48];
  snprintf(workers_arg, sizeof workers_arg, "%u", workers);
  snprintf(flags_arg, sizeof flags_arg, "%u", flags);
  char **env = child_environ(workers, env_slot, sizeof env_slot);
  remote *child = calloc(1, sizeof *child);
  int rc = (len > 0 && env && child) ? 0 : ENOMEM;
  if (rc == 0) {
    self[len] = '\0';
    char *argv[] = {self,        "--serve", (char *)peer->name,
                    workers_arg, flags_arg, NULL};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, down[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, up[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, down[1]);
    posix_spawn_file_actions_addclose(&actions, up[0]);
    rc = posix_spawn(&child->pid, self, &actions, NULL, argv, env);
    posix_spawn_file_actions_destroy(&actions);
  }
  free(env);
  close(down[0]);
  close(up[1]);
  if (rc == 0) {
    child->to_child = fdopen(down[1], "w");
    child->from_child = fdopen(up[0], "r");
    if (child->to_child == NULL || child->from_child == NULL)
      rc = ENOMEM; /* the streams leak on this path; the run ends anyway */
  }
  if (rc != 0) {
    close(down[1]);
    close(up[0]);
    free(child);
    errno = rc;
    return NULL;
  }
  int rc_open;
  uint64_t unused;
  if (fscanf(child->from_child, "%d %" SCNu64 " %" SCNu64, &rc_open, &unused,
             &unused) != 3)
    rc_open = -EPIPE;
  if (rc_open != 0) {
    fclose(child->to_child);
    fclose(child->from_child);
    waitpid(child->pid, NULL, 0);
    free(child);
    errno = -rc_open;
    return NULL;
  }
  return child;
}

static void remote_close(void *pool) {
  remote *child = pool;
  call(child, NULL, NULL, "quit");
  fclose(child->to_child);
  fclose(child->from_child);
  waitpid(child->pid, NULL, 0);
  free(child);
}

static int remote_tiny(void *pool, size_t items, size_t rounds, uint64_t *ns) {
  return call(pool, ns, NULL, "tiny %zu %zu", items, rounds);
}

static int remote_delays(void *pool, size_t n, unsigned ms, uint64_t *ns) {
  return call(pool, ns, NULL, "delays %zu %u", n, ms);
}

static int remote_sleepers(void *pool, size_t n, unsigned ms,
                           bench_sleep_result *out) {
  return call(pool, &out->makespan_ns, &out->probe_wait_ns, "sleepers %zu %u",
              n, ms);
}

static int remote_chain(void *pool, size_t links, uint64_t *ns) {
  return call(pool, ns, NULL, "chain %zu", links);
}

bench_peer bench_remote_wrap(const bench_peer *peer) {
  bench_peer wrapped = *peer;
  wrapped.close = remote_close;
  wrapped.tiny = peer->tiny ? remote_tiny : NULL;
  wrapped.delays = peer->delays ? remote_delays : NULL;
  wrapped.sleepers = peer->sleepers ? remote_sleepers : NULL;
  wrapped.chain = peer->chain ? remote_chain : NULL;
  return wrapped;
}

/* Runs one request line on the child's side; returns 1 for "quit". */
static int serve_one(const bench_peer *peer, void *pool, const char *line) {
  size_t a = 0, b = 0;
  unsigned ms = 0;
  uint64_t v1 = 0, v2 = 0;
  int rc = -EINVAL;
  bench_sleep_result slept = {0};
  if (strncmp(line, "quit", 4) == 0) {
    rc = 0;
  } else if (sscanf(line, "tiny %zu %zu", &a, &b) == 2 && peer->tiny) {
    rc = peer->tiny(pool, a, b, &v1);
  } else if (sscanf(line, "delays %zu %u", &a, &ms) == 2 && peer->delays) {
    rc = peer->delays(pool, a, ms, &v1);
  } else if (sscanf(line, "sleepers %zu %u", &a, &ms) == 2 && peer->sleepers) {
    rc = peer->sleepers(pool, a, ms, &slept);
    v1 = slept.makespan_ns;
    v2 = slept.probe_wait_ns;
  } else if (sscanf(line, "chain %zu", &a) == 1 && peer->chain) {
    rc = peer->chain(pool, a, &v1);
  }
  printf("%d %" PRIu64 " %" PRIu64 "\n", rc, v1, v2);
  fflush(stdout);
  return strncmp(line, "quit", 4) == 0;
}

int bench_remote_serve(const char *name, unsigned workers, unsigned flags) {
  const bench_peer *peer = NULL;
  for (size_t i = 0; bench_peers[i]; i++)
    if (strcmp(bench_peers[i]->name, name) == 0)
      peer = bench_peers[i];
  if (peer == NULL) {
    printf("%d 0 0\n", -ENOENT);
    return 2;
  }
  void *pool = peer->open(workers, flags);
  printf("%d 0 0\n", pool ? 0 : -errno);
  fflush(stdout);
  if (pool == NULL)
    return 1;
  char line[256];
  while (fgets(line, sizeof line, stdin))
    if (serve_one(peer, pool, line))
      break;
  peer->close(pool);
  return 0;
}
