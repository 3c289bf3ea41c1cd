/* bw-merge - one report for many processes: merges blockwatch JSON reports
 * (files given, or those of a process tree it runs) into one file and one
 * text summary. `blockwatch --` runs programs through it.
 *
 *   bw-merge [-o FILE] [--quiet|--no-text] REPORT...
 *   bw-merge --run [--preload LIBS] [--options OPTS] [-o FILE]
 *            [--quiet|--no-text] -- PROGRAM [ARGS...]
 *
 * Invariants:
 *  - With --run, bw-merge itself runs without the shim: LD_PRELOAD and
 *    BLOCKWATCH_OPTIONS are set in the child only, and every process of
 *    the tree writes its report into a private directory (report_path
 *    DIR/%p.json), removed at the end.
 *  - Nothing is printed while the program runs; the summary comes once,
 *    on stderr, after the program ended.
 *  - The exit status is the program's; a program killed by a signal gets
 *    bw-merge killed by the same signal (without a core of its own).
 *    Usage and input errors exit 2, naming the file and line; given report
 *    files, so does a trace one names ("trace_file") that is no trace of
 *    the shim's, after everything else is done.
 *  - The traces the reports name are named in place (traces.c) before
 *    the summary is printed.
 */
#include "merge.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(FILE *f) {
  fputs("usage: bw-merge [-o FILE] [--quiet|--no-text] REPORT...\n"
        "       bw-merge --run [--preload LIBS] [--options OPTS] [-o FILE]\n"
        "                [--quiet|--no-text] -- PROGRAM [ARGS...]\n",
        f);
}

typedef struct args {
  const char *out;     /* -o: the merged JSON */
  int text;            /* 0 none, 1 only with findings (--quiet), 2 always */
  int run;             /* --run */
  const char *preload; /* the child's LD_PRELOAD */
  const char *options; /* the child's BLOCKWATCH_OPTIONS */
  char **rest;         /* reports, or the program and its arguments */
} args;

static int parse(int argc, char **argv, args *a) {
  *a = (args){.text = 2, .preload = "", .options = ""};
  int i = 1;
  for (; i < argc; i++) {
    const char *s = argv[i];
    int has_value = i + 1 < argc;
    if (strcmp(s, "--") == 0) {
      i++;
      break;
    } else if (strcmp(s, "-o") == 0 && has_value) {
      a->out = argv[++i];
    } else if (strcmp(s, "--quiet") == 0) {
      a->text = 1;
    } else if (strcmp(s, "--no-text") == 0) {
      a->text = 0;
    } else if (strcmp(s, "--run") == 0) {
      a->run = 1;
    } else if (strcmp(s, "--preload") == 0 && has_value) {
      a->preload = argv[++i];
    } else if (strcmp(s, "--options") == 0 && has_value) {
      a->options = argv[++i];
    } else if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
      usage(stdout);
      exit(0);
    } else if (s[0] == '-') {
      fprintf(stderr, "bw-merge: unknown option or missing value: '%s'\n", s);
      return -1;
    } else {
      break;
    }
  }
  a->rest = argv + i;
  if (!*a->rest) {
    fprintf(stderr, "bw-merge: no %s given\n", a->run ? "program" : "report");
    return -1;
  }
  return 0;
}

/* ---- running the tree ---------------------------------------------------- */

static volatile sig_atomic_t child_pid;

static void forward(int sig) {
  if (child_pid > 0)
    kill(child_pid, sig);
}

/* The signals a caller sends to stop a run: forwarded to the program
 * (timeout, kill); those a terminal sends to the whole group (^C, ^\)
 * reach the program by themselves and leave bw-merge to report. */
static const int forwarded[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
static const int ignored[] = {SIGINT, SIGQUIT};
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static int child_main(const args *a, const char *dir, const sigset_t *old) {
  static char opts[8192];
  int n =
      snprintf(opts, sizeof opts, "%s%sreport=json:report_path='%s/%%p.json'",
               a->options, a->options[0] ? ":" : "", dir);
  if (n < 0 || (size_t)n >= sizeof opts || strchr(dir, '\'')) {
    fprintf(stderr, "blockwatch: options too long or a ' in '%s'\n", dir);
    return 2;
  }
  if (a->preload[0])
    setenv("LD_PRELOAD", a->preload, 1);
  setenv("BLOCKWATCH_OPTIONS", opts, 1);
  sigprocmask(SIG_SETMASK, old, NULL);
  execvp(a->rest[0], a->rest);
  int err = errno;
  fprintf(stderr, "blockwatch: %s: %s\n", a->rest[0], strerror(err));
  return err == ENOENT ? 127 : 126;
}

/* Runs the program; its wait status. */
static int run_tree(const args *a, const char *dir) {
  sigset_t block, old;
  sigemptyset(&block);
  for (size_t i = 0; i < COUNT_OF(forwarded); i++)
    sigaddset(&block, forwarded[i]);
  for (size_t i = 0; i < COUNT_OF(ignored); i++)
    sigaddset(&block, ignored[i]);
  sigprocmask(SIG_BLOCK, &block, &old);
  pid_t pid = fork();
  if (pid < 0) {
    perror("bw-merge: fork");
    return -1;
  }
  if (pid == 0)
    _exit(child_main(a, dir, &old));
  child_pid = pid;
  struct sigaction sa = {.sa_handler = forward};
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < COUNT_OF(forwarded); i++)
    sigaction(forwarded[i], &sa, NULL);
  for (size_t i = 0; i < COUNT_OF(ignored); i++)
    signal(ignored[i], SIG_IGN);
  sigprocmask(SIG_SETMASK, &old, NULL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  return status;
}

/* ---- collecting ---------------------------------------------------------- */

typedef struct entry {
  char path[1024];
  struct timespec mtime;
} entry;

static int oldest_first(const void *a, const void *b) {
  const entry *x = a, *y = b;
  if (x->mtime.tv_sec != y->mtime.tv_sec)
    return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
  if (x->mtime.tv_nsec != y->mtime.tv_nsec)
    return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
  return strcmp(x->path, y->path);
}

/* The reports in dir, oldest first, into procs; every file removed, then
 * dir. A file that is not a report (a process killed while writing) is
 * named and left out. */
static void collect(const char *dir, json_t *procs) {
  DIR *d = opendir(dir);
  entry *list = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      list = realloc(list, cap * sizeof *list);
    }
    entry *it = &list[n];
    int len = snprintf(it->path, sizeof it->path, "%s/%s", dir, e->d_name);
    if (len < 0 || (size_t)len >= sizeof it->path)
      continue; /* dir is mkdtemp's, the names the shim's: never so long */
    struct stat st;
    if (stat(it->path, &st) != 0)
      continue;
    it->mtime = st.st_mtim;
    size_t name = strlen(e->d_name);
    if (name > 5 && strcmp(e->d_name + name - 5, ".json") == 0 &&
        !strstr(e->d_name, ".tmp."))
      n++;
    else
      unlink(it->path);
  }
  if (d)
    closedir(d);
  if (n > 0) /* list is NULL otherwise, which qsort may not be given */
    qsort(list, n, sizeof *list, oldest_first);
  for (size_t i = 0; i < n; i++) {
    char err[1200];
    if (bwm_add_file(procs, list[i].path, err, sizeof err) != 0)
      fprintf(stderr, "blockwatch: warning: left out %s\n", err);
    unlink(list[i].path);
  }
  free(list);
  rmdir(dir);
}

/* ---- output -------------------------------------------------------------- */

/* A value as compact JSON (milliseconds keep their digits: 15 are more
 * than a report's numbers have). */
static void put_compact(FILE *f, json_t *v) {
  json_dumpf(v, f, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_ENCODE_ANY);
}

/* The shim's layout: a line per top-level member, a line per element of
 * an array of objects; processes[] entries laid out the same way. */
static void put_report(FILE *f, json_t *report) {
  const char *key;
  json_t *v;
  int first = 1;
  fputc('{', f);
  json_object_foreach(report, key, v) {
    fputs(first ? "" : ",\n", f);
    first = 0;
    json_t *k = json_string(key);
    put_compact(f, k);
    json_decref(k);
    fputc(':', f);
    if (json_is_array(v) && json_is_object(json_array_get(v, 0))) {
      size_t i;
      json_t *e;
      fputc('[', f);
      json_array_foreach(v, i, e) {
        fputs(i ? ",\n  " : "\n  ", f);
        if (strcmp(key, "processes") == 0)
          put_report(f, e);
        else
          put_compact(f, e);
      }
      fputc(']', f);
    } else {
      put_compact(f, v);
    }
  }
  fputc('}', f);
}

static int write_json(json_t *merged, const char *path) {
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
  FILE *f = fopen(tmp, "w");
  if (f) {
    put_report(f, merged);
    fputc('\n', f);
  }
  if (!f || fclose(f) != 0 || rename(tmp, path) != 0) {
    fprintf(stderr, "blockwatch: warning: cannot write '%s': %s\n", path,
            strerror(errno));
    unlink(tmp);
    return -1;
  }
  return 0;
}

/* Dies of sig as the program did; a status if that does not happen. */
static int die_like(int sig) {
  struct rlimit none = {0, 0};
  setrlimit(RLIMIT_CORE, &none); /* the program's core, not ours */
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  raise(sig);
  return 128 + sig;
}

int main(int argc, char **argv) {
  args a;
  if (parse(argc, argv, &a) != 0) {
    usage(stderr);
    return 2;
  }
  json_t *procs = json_array();
  int status = 0;
  if (a.run) {
    const char *tmpdir = getenv("TMPDIR");
    char dir[900];
    snprintf(dir, sizeof dir, "%s/blockwatch.XXXXXX",
             tmpdir && tmpdir[0] ? tmpdir : "/tmp");
    if (!mkdtemp(dir)) {
      fprintf(stderr, "blockwatch: cannot create '%s': %s\n", dir,
              strerror(errno));
      return 2;
    }
    /* Absolute (TMPDIR may not be), so that a process that changes
     * directory still writes its report there. */
    char full[PATH_MAX];
    status = run_tree(&a, realpath(dir, full) ? full : dir);
    collect(dir, procs);
  } else {
    for (char **p = a.rest; *p; p++) {
      char err[1200];
      if (bwm_add_file(procs, *p, err, sizeof err) != 0) {
        fprintf(stderr, "bw-merge: %s\n", err);
        return 2;
      }
    }
  }
  bwm_name_frames(procs);
  int bad_traces = bwm_name_traces(procs, a.run ? "blockwatch" : "bw-merge");
  bwm_names_end();
  json_t *merged = bwm_merge(procs);
  if (a.out)
    write_json(merged, a.out);
  if (json_array_size(procs) > 0 &&
      (a.text == 2 || (a.text == 1 && bwm_findings(merged))))
    bwm_print(stderr, merged, a.out);
  json_decref(merged);
  json_decref(procs);
  if (!a.run)
    return bad_traces ? 2 : 0;
  if (status < 0)
    return 2;
  if (WIFSIGNALED(status))
    return die_like(WTERMSIG(status));
  return WEXITSTATUS(status);
}
