/* shim_run.c - run a program under the shim and read what it reported.
 *
 * Invariants: see shim_run.h. Output is captured through files, not pipes,
 * so a child that writes a lot can never block on a full pipe.
 */
#include "shim_run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static char tmpdir[512];

const char *shim_tmpdir(void) {
  if (!tmpdir[0]) {
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/bw-shim-test.XXXXXX",
             base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
      perror("mkdtemp");
      abort();
    }
  }
  return tmpdir;
}

const char *shim_tmpfile(char *buf, size_t size, const char *name) {
  snprintf(buf, size, "%s/%s", shim_tmpdir(), name);
  return buf;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return strdup("");
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  size_t got = fread(buf, 1, (size_t)n, f);
  buf[got] = '\0';
  fclose(f);
  return buf;
}

int shim_run(char *const argv[], char *const env_extra[], int preload,
             int timeout_s, shim_result *res) {
  memset(res, 0, sizeof *res);
  char out_path[600], err_path[600];
  static int serial;
  char name[64];
  snprintf(name, sizeof name, "out.%d", serial);
  shim_tmpfile(out_path, sizeof out_path, name);
  snprintf(name, sizeof name, "err.%d", serial++);
  shim_tmpfile(err_path, sizeof err_path, name);

  size_t n_env = 0, n_extra = 0;
  while (environ[n_env])
    n_env++;
  while (env_extra && env_extra[n_extra])
    n_extra++;
  char **env = calloc(n_env + n_extra + 2, sizeof *env);
  size_t k = 0;
  for (size_t i = 0; i < n_env; i++)
    if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 &&
        strncmp(environ[i], "BLOCKWATCH_OPTIONS=", 19) != 0)
      env[k++] = environ[i];
  for (size_t i = 0; i < n_extra; i++)
    env[k++] = env_extra[i];
  static char preload_var[600];
  if (preload) {
    /* A sanitizer runtime has to be loaded first (SAN_PRELOAD). */
    snprintf(preload_var, sizeof preload_var, "LD_PRELOAD=%s%s%s", SAN_PRELOAD,
             SAN_PRELOAD[0] ? ":" : "", SHIM_LIB);
    env[k++] = preload_var;
  }
  env[k] = NULL;

  pid_t pid = fork();
  if (pid < 0) {
    free(env);
    return -1;
  }
  if (pid == 0) {
    int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0)
      _exit(126);
    dup2(o, 1);
    dup2(e, 2);
    execve(argv[0], argv, env);
    _exit(127);
  }
  free(env);
  int st = 0;
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid)
      break;
    if (w < 0 && errno != EINTR)
      return -1;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec > timeout_s) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      res->timedout = 1;
      break;
    }
    struct timespec nap = {0, 10000000};
    nanosleep(&nap, NULL);
  }
  res->exited = WIFEXITED(st);
  res->status = WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st);
  res->out = slurp(out_path);
  res->err = slurp(err_path);
  if (res->timedout)
    fprintf(stderr, "child %s timed out\nstderr:\n%s\n", argv[0], res->err);
  return 0;
}

void shim_result_free(shim_result *res) {
  free(res->out);
  free(res->err);
  res->out = res->err = NULL;
}

json_t *shim_load_json(const char *path) {
  json_error_t err;
  json_t *j = json_load_file(path, 0, &err);
  if (!j)
    fprintf(stderr, "cannot load %s: %s (line %d)\n", path, err.text, err.line);
  return j;
}

long long shim_calls(json_t *report, const char *key) {
  json_t *v = json_object_get(json_object_get(report, "blocking_calls"), key);
  return json_is_integer(v) ? json_integer_value(v) : -1;
}

long long shim_site_count(json_t *report, const char *fn) {
  json_t *sites = json_object_get(report, "call_sites");
  long long sum = 0;
  size_t i;
  json_t *s;
  json_array_foreach(sites, i, s) {
    const char *f = json_string_value(json_object_get(s, "function"));
    if (!fn || (f && strcmp(f, fn) == 0))
      sum += json_integer_value(json_object_get(s, "count"));
  }
  return sum;
}

long long shim_out_value(const char *out, const char *key) {
  size_t klen = strlen(key);
  for (const char *p = out; p && *p;) {
    if (strncmp(p, key, klen) == 0 && p[klen] == ' ')
      return atoll(p + klen + 1);
    p = strchr(p, '\n');
    if (p)
      p++;
  }
  return -1;
}

char *shim_fmt(const char *f, ...) {
  static char bufs[8][2048];
  static int next;
  char *b = bufs[next++ % 8];
  va_list ap;
  va_start(ap, f);
  vsnprintf(b, sizeof bufs[0], f, ap);
  va_end(ap);
  return b;
}
