/* main.c - bw_bench_analyzer: blockscan against `clang -fsyntax-only` over
 * the translation units of a compilation database, with 1 and 2 jobs.
 *
 * Invariants: both tools get the same files with the same flags (the
 * database entries as blockscan reads them, through bwsc__compdb_load, plus
 * -w); every configuration runs `runs` times and the median wall time is
 * printed; the clang side runs N processes at once for -j N, the way a build
 * would. A third row parses the same TUs with libclang in-process and
 * extracts nothing: what blockscan costs beyond parsing. A fourth runs clang
 * once per TU on an empty file: the share of the clang row that is process
 * start-up (loading LLVM) rather than parsing. Three more run blockscan
 * with a cache: filled from empty (the cold run a user sees), again with
 * nothing changed, and again with one TU's entry removed, which costs what
 * an edit of one .c file costs (that TU parsed and stored, every other
 * entry read and its files' hashes checked) without touching the corpus.
 */
#include "inputs.h"
#include "util.h"

#include <clang-c/Index.h>

#include <dirent.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One timed run: wall-clock seconds, and CPU seconds (user + system) of
 * every process or thread that did the work, which load from elsewhere on
 * the machine disturbs much less; the peak resident memory of the largest
 * process in MB (0 for the in-process parse-only row, which shares the
 * benchmark's own). */
typedef struct sample {
  double wall, cpu, peak_mb;
} sample;

static double peak_of(const struct rusage *ru) {
  return (double)ru->ru_maxrss / 1024.0; /* ru_maxrss is in KB on Linux */
}

static double cpu_of(const struct rusage *ru) {
  return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6 +
         (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
}

/* Spawns argv with stdout/stderr to /dev/null; returns the pid or -1. */
static pid_t spawn_quiet(char *const *argv) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

/* Counts a child's failure once (exit status other than 0 and 1). */
static int reap(pid_t pid, int ok_status_max, double *cpu, double *peak) {
  int status = 0;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) != pid)
    return 1;
  *cpu += cpu_of(&ru);
  if (peak_of(&ru) > *peak)
    *peak = peak_of(&ru);
  return !WIFEXITED(status) || WEXITSTATUS(status) > ok_status_max;
}

/* clang -fsyntax-only over every input, `jobs` processes at a time; with
 * `empty` set, the same number of processes each parse that empty file
 * without the entries' flags (start-up cost only). */
static sample run_clang(const char *clang, const bwsc__inputs *inputs,
                        const char *empty, unsigned jobs, int *failures) {
  double cpu = 0, peak = 0;
  double start = now_s();
  size_t next = 0, running = 0;
  pid_t *pids = bwsc__xcalloc(jobs, sizeof(pid_t));
  while (next < inputs->count || running) {
    while (running < jobs && next < inputs->count) {
      const bwsc__tu_input *in = &inputs->items[next++];
      char **argv = bwsc__xcalloc(in->nargs + 5, sizeof(char *));
      size_t n = 0;
      argv[n++] = (char *)clang;
      argv[n++] = "-fsyntax-only";
      for (size_t i = 0; !empty && i < in->nargs; i++)
        argv[n++] = in->args[i];
      argv[n++] = "-w";
      argv[n++] = empty ? (char *)empty : in->file;
      pid_t pid = spawn_quiet(argv);
      free(argv);
      if (pid < 0) {
        (*failures)++;
        continue;
      }
      for (unsigned slot = 0; slot < jobs; slot++)
        if (!pids[slot]) {
          pids[slot] = pid;
          break;
        }
      running++;
    }
    if (!running)
      break;
    int status = 0;
    struct rusage ru;
    pid_t done = wait4(-1, &status, 0, &ru);
    cpu += cpu_of(&ru);
    if (peak_of(&ru) > peak)
      peak = peak_of(&ru);
    for (unsigned slot = 0; slot < jobs; slot++)
      if (pids[slot] == done) {
        pids[slot] = 0;
        running--;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
          (*failures)++;
      }
  }
  free(pids);
  return (sample){now_s() - start, cpu, peak};
}

/* blockscan -p over the database; with `cache` NULL, --no-cache. */
static sample run_blockscan(const char *blockscan, const char *build_dir,
                            unsigned jobs, const char *cache, int *failures) {
  char jobs_text[16];
  snprintf(jobs_text, sizeof(jobs_text), "%u", jobs);
  char *argv[] = {(char *)blockscan,
                  "-p",
                  (char *)build_dir,
                  "-j",
                  jobs_text,
                  "--format",
                  "json",
                  cache ? "--cache" : "--no-cache",
                  (char *)cache,
                  NULL};
  double start = now_s(), cpu = 0, peak = 0;
  pid_t pid = spawn_quiet(argv);
  if (pid < 0 || reap(pid, 1, &cpu, &peak))
    (*failures)++;
  return (sample){now_s() - start, cpu, peak};
}

/* Removes the cache's entries: all of them, or only the first one. */
static void clear_cache(const char *dir, int only_one) {
  DIR *handle = opendir(dir);
  if (!handle)
    return;
  struct dirent *ent;
  while ((ent = readdir(handle)) != NULL) {
    if (ent->d_name[0] == '.')
      continue;
    char *path = bwsc__xasprintf("%s/%s", dir, ent->d_name);
    int removed = unlink(path) == 0;
    free(path);
    if (removed && only_one)
      break;
  }
  closedir(handle);
}

/* The floor under blockscan: libclang parsing the same TUs in-process with
 * the same flags and threads, extracting nothing. */
typedef struct parse_job {
  const bwsc__inputs *inputs;
  atomic_size_t next;
  atomic_int failures;
} parse_job;

static void *parse_only_worker(void *arg) {
  parse_job *job = arg;
  CXIndex index = clang_createIndex(0, 0);
  for (;;) {
    size_t i = atomic_fetch_add(&job->next, 1);
    if (i >= job->inputs->count)
      break;
    const bwsc__tu_input *in = &job->inputs->items[i];
    const char **args = bwsc__xcalloc(in->nargs + 4, sizeof(char *));
    size_t n = 0;
    for (size_t a = 0; a < in->nargs; a++)
      args[n++] = in->args[a];
    args[n++] = "-isystem";
    args[n++] = BENCH_RESOURCE_DIR;
    args[n++] = "-w";
    CXTranslationUnit tu = NULL;
    if (clang_parseTranslationUnit2(
            index, in->file, args, (int)n, NULL, 0,
            CXTranslationUnit_IgnoreNonErrorsFromIncludedFiles,
            &tu) != CXError_Success)
      atomic_fetch_add(&job->failures, 1);
    if (tu)
      clang_disposeTranslationUnit(tu);
    free(args);
  }
  clang_disposeIndex(index);
  return NULL;
}

static sample run_parse_only(const bwsc__inputs *inputs, unsigned jobs,
                             int *failures) {
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  parse_job job = {inputs, 0, 0};
  pthread_t threads[2];
  double start = now_s();
  for (unsigned t = 1; t < jobs; t++)
    pthread_create(&threads[t], NULL, parse_only_worker, &job);
  parse_only_worker(&job);
  for (unsigned t = 1; t < jobs; t++)
    pthread_join(threads[t], NULL);
  *failures += atomic_load(&job.failures);
  double wall = now_s() - start;
  getrusage(RUSAGE_SELF, &after);
  return (sample){wall, cpu_of(&after) - cpu_of(&before), 0};
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *values, size_t n) {
  qsort(values, n, sizeof(double), compare_double);
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

static size_t count_lines(const bwsc__inputs *inputs) {
  size_t lines = 0;
  for (size_t i = 0; i < inputs->count; i++) {
    FILE *in = fopen(inputs->items[i].file, "r");
    if (!in)
      continue;
    int c;
    while ((c = getc(in)) != EOF)
      lines += c == '\n';
    fclose(in);
  }
  return lines;
}

static void usage(void) {
  fputs("usage: bw_bench_analyzer -p BUILD_DIR [-r RUNS]\n"
        "Times blockscan -p BUILD_DIR against clang -fsyntax-only over the\n"
        "same database, with -j 1 and -j 2; prints medians and ratios.\n"
        "Exit status: 0, 1 if a run failed (the note says which), 2 usage.\n",
        stderr);
}

int main(int argc, char **argv) {
  const char *build_dir = NULL;
  int runs = 5;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-p") == 0 && i + 1 < argc) {
      build_dir = argv[++i];
    } else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
      char *end = NULL;
      long n = strtol(argv[++i], &end, 10);
      if (*end || n < 1 || n > 100) {
        fprintf(stderr, "bw_bench_analyzer: bad -r '%s'\n", argv[i]);
        return 2;
      }
      runs = (int)n;
    } else {
      usage();
      return 2;
    }
  }
  if (!build_dir) {
    usage();
    return 2;
  }
  char *db = bwsc__xasprintf("%s/compile_commands.json", build_dir);
  bwsc__inputs inputs = {0};
  bwsc__errors errors = {0};
  if (bwsc__compdb_load(db, &inputs, &errors) != 0) {
    fprintf(stderr, "bw_bench_analyzer: %s: %s\n", db, errors.items[0].message);
    return 2;
  }
  free(db);
  /* One entry per file, as blockscan does. */
  size_t unique = 0;
  for (size_t i = 0; i < inputs.count; i++) {
    int seen = 0;
    for (size_t j = 0; j < unique && !seen; j++)
      seen = strcmp(inputs.items[j].file, inputs.items[i].file) == 0;
    if (!seen) {
      bwsc__tu_input tmp = inputs.items[unique];
      inputs.items[unique++] = inputs.items[i];
      inputs.items[i] = tmp;
    }
  }
  bwsc__inputs dupes = {inputs.items + unique, inputs.count - unique, 0};
  inputs.count = unique;

  printf("corpus: %s/compile_commands.json: %zu translation units, %zu lines "
         "of C in the main files\n",
         build_dir, inputs.count, count_lines(&inputs));
  printf("clang:  %s\nruns:   %d per configuration (median shown)\n\n",
         BENCH_CLANG, runs);

  /* As blockscan does (see analyzer/src/parse.h). */
  setenv("LIBCLANG_DISABLE_CRASH_RECOVERY", "1", 0);
  char empty[] = "/tmp/bw_bench_empty_XXXXXX.c";
  int empty_fd = mkstemps(empty, 2);
  if (empty_fd < 0) {
    perror("bw_bench_analyzer: mkstemps");
    return 2;
  }
  close(empty_fd);

  char cache[] = "/tmp/bw_bench_cache_XXXXXX";
  if (!mkdtemp(cache)) {
    perror("bw_bench_analyzer: mkdtemp");
    return 2;
  }

  enum {
    CLANG,
    BLOCKSCAN,
    PARSE_ONLY,
    STARTUP,
    COLD,
    UNCHANGED,
    ONE_CHANGED,
    NTOOLS
  };
  static const char *const names[NTOOLS] = {"clang -fsyntax-only",
                                            "blockscan (parse+analyse)",
                                            "libclang parse only",
                                            "clang start-up (empty TU)",
                                            "blockscan, cache filled (cold)",
                                            "re-run, nothing changed",
                                            "re-run, one TU changed"};
  double wall[NTOOLS][2], cpu[NTOOLS][2]; /* medians: [tool][jobs-1] */
  double peak[NTOOLS][2] = {{0}};         /* the largest of the runs */
  int failures[NTOOLS] = {0};
  /* Runs are interleaved (every configuration once per round) so that a
   * burst of load from elsewhere on the machine hits all of them alike. */
  double *walls[NTOOLS][2], *cpus[NTOOLS][2];
  for (int t = 0; t < NTOOLS; t++)
    for (int j = 0; j < 2; j++) {
      walls[t][j] = bwsc__xcalloc((size_t)runs, sizeof(double));
      cpus[t][j] = bwsc__xcalloc((size_t)runs, sizeof(double));
    }
  for (int r = 0; r < runs; r++) {
    for (unsigned jobs = 1; jobs <= 2; jobs++) {
      sample got[NTOOLS];
      got[CLANG] =
          run_clang(BENCH_CLANG, &inputs, NULL, jobs, &failures[CLANG]);
      got[BLOCKSCAN] = run_blockscan(BENCH_BLOCKSCAN, build_dir, jobs, NULL,
                                     &failures[BLOCKSCAN]);
      clear_cache(cache, 0);
      got[COLD] = run_blockscan(BENCH_BLOCKSCAN, build_dir, jobs, cache,
                                &failures[COLD]);
      got[UNCHANGED] = run_blockscan(BENCH_BLOCKSCAN, build_dir, jobs, cache,
                                     &failures[UNCHANGED]);
      clear_cache(cache, 1);
      got[ONE_CHANGED] = run_blockscan(BENCH_BLOCKSCAN, build_dir, jobs, cache,
                                       &failures[ONE_CHANGED]);
      got[PARSE_ONLY] = run_parse_only(&inputs, jobs, &failures[PARSE_ONLY]);
      got[STARTUP] =
          run_clang(BENCH_CLANG, &inputs, empty, jobs, &failures[STARTUP]);
      for (int t = 0; t < NTOOLS; t++) {
        walls[t][jobs - 1][r] = got[t].wall;
        cpus[t][jobs - 1][r] = got[t].cpu;
        if (got[t].peak_mb > peak[t][jobs - 1])
          peak[t][jobs - 1] = got[t].peak_mb;
      }
    }
  }
  unlink(empty);
  clear_cache(cache, 0);
  rmdir(cache);
  for (int t = 0; t < NTOOLS; t++)
    for (int j = 0; j < 2; j++) {
      wall[t][j] = median(walls[t][j], (size_t)runs);
      cpu[t][j] = median(cpus[t][j], (size_t)runs);
      free(walls[t][j]);
      free(cpus[t][j]);
    }

  printf("%-34s %9s %9s %9s %9s %9s %9s %9s\n", "", "wall -j1", "wall -j2",
         "j1/j2", "cpu -j1", "cpu -j2", "MB -j1", "MB -j2");
  for (int t = 0; t < NTOOLS; t++) {
    printf("%-34s %9.3f %9.3f %9.2f %9.3f %9.3f", names[t], wall[t][0],
           wall[t][1], wall[t][0] / wall[t][1], cpu[t][0], cpu[t][1]);
    for (int j = 0; j < 2; j++) {
      if (peak[t][j] > 0)
        printf(" %9.0f", peak[t][j]);
      else
        printf(" %9s", "-");
    }
    printf("\n");
  }
  printf("%-34s %9.2f %9.2f %9s %9.2f %9.2f\n", "blockscan / clang",
         wall[BLOCKSCAN][0] / wall[CLANG][0],
         wall[BLOCKSCAN][1] / wall[CLANG][1], "",
         cpu[BLOCKSCAN][0] / cpu[CLANG][0], cpu[BLOCKSCAN][1] / cpu[CLANG][1]);
  /* clang's parsing alone: its row minus the start-up row. blockscan pays
   * its own start-up once, so this ratio is the harsher one. */
  printf("%-34s %9.2f %9.2f %9s %9.2f %9.2f\n",
         "blockscan / (clang - start-up)",
         wall[BLOCKSCAN][0] / (wall[CLANG][0] - wall[STARTUP][0]),
         wall[BLOCKSCAN][1] / (wall[CLANG][1] - wall[STARTUP][1]), "",
         cpu[BLOCKSCAN][0] / (cpu[CLANG][0] - cpu[STARTUP][0]),
         cpu[BLOCKSCAN][1] / (cpu[CLANG][1] - cpu[STARTUP][1]));
  printf("%-34s %9.2f %9.2f %9s %9.2f %9.2f\n", "blockscan / parse only",
         wall[BLOCKSCAN][0] / wall[PARSE_ONLY][0],
         wall[BLOCKSCAN][1] / wall[PARSE_ONLY][1], "",
         cpu[BLOCKSCAN][0] / cpu[PARSE_ONLY][0],
         cpu[BLOCKSCAN][1] / cpu[PARSE_ONLY][1]);
  for (int t = UNCHANGED; t <= ONE_CHANGED; t++)
    printf("%-34s %9.2f %9.2f %9s %9.2f %9.2f\n",
           t == UNCHANGED ? "unchanged re-run / cold" : "one-TU re-run / cold",
           wall[t][0] / wall[COLD][0], wall[t][1] / wall[COLD][1], "",
           cpu[t][0] / cpu[COLD][0], cpu[t][1] / cpu[COLD][1]);
  printf("(seconds, medians; cpu = user + system of the processes or threads "
         "doing the work; MB = the largest peak resident set of one process "
         "over the runs, - when measured in-process)\n");
  int cache_failures =
      failures[COLD] + failures[UNCHANGED] + failures[ONE_CHANGED];
  if (cache_failures)
    printf("\nnote: %d blockscan run(s) with the cache reported errors\n",
           cache_failures);
  if (failures[CLANG] || failures[BLOCKSCAN] || failures[PARSE_ONLY] ||
      failures[STARTUP])
    printf("\nnote: %d clang run(s), %d blockscan run(s), %d parse-only "
           "TU(s) and %d empty-TU run(s) reported errors (a TU that does not "
           "parse costs both tools alike, but the corpus is not what was "
           "meant to be measured)\n",
           failures[CLANG], failures[BLOCKSCAN], failures[PARSE_ONLY],
           failures[STARTUP]);
  inputs.count += dupes.count;
  bwsc__inputs_free(&inputs);
  bwsc__errors_free(&errors);
  /* Figures with a failed run in them are not figures of the corpus. */
  return failures[CLANG] || failures[BLOCKSCAN] || failures[PARSE_ONLY] ||
                 failures[STARTUP] || cache_failures
             ? 1
             : 0;
}
