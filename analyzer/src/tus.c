/* tus.c - getting every TU's facts: parallel parsing with the cache, facts
 * files (--facts), and writing one TU's facts (--emit-facts).
 *
 * Invariants: facts[i] belongs to inputs[i] whatever thread filled it;
 * a worker owns its parser (libclang index) and nothing else.
 */
#include "tus.h"

#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- parallel parsing ---------------------------------------------------- */

typedef struct pool_job {
  const bwsc__inputs *inputs;
  bwsc__tu_facts *facts;
  bwsc__cache *cache;
  atomic_size_t next; /* next input to take */
  atomic_size_t parsed, cached;
  atomic_size_t done; /* inputs gathered, for the progress line */
  bwsc__progress progress;
  const bwsc__report *where; /* srcroot, to print paths as reports do */
  /* The program the facts are merged into as they arrive, in input order
   * (NULL: not merged here); ready[i] once facts[i] is complete. */
  bwsc__program *prog;
  pthread_mutex_t merge_lock; /* guards prog and ready */
  unsigned char *ready;
} pool_job;

/* Input i's facts are complete: merges every TU's functions that is next
 * in input order, so that each TU gives back what the program will not
 * need while the others are still being read. */
static void merge_ready(pool_job *job, size_t i) {
  if (!job->prog)
    return;
  pthread_mutex_lock(&job->merge_lock);
  job->ready[i] = 1;
  while (job->prog->nadded < job->inputs->count &&
         job->ready[job->prog->nadded])
    bwsc__program_add_functions(job->prog, &job->facts[job->prog->nadded]);
  pthread_mutex_unlock(&job->merge_lock);
}

static void show_progress(pool_job *job, size_t i) {
  size_t done = atomic_fetch_add(&job->done, 1) + 1;
  const char *file = bwsc__report_path(job->where, job->inputs->items[i].file);
  /* One fprintf per line: stdio locks the stream, lines do not mix. */
  if (job->progress == BWSC__PROGRESS_IN_PLACE)
    fprintf(stderr, "\r[%zu/%zu] %s\033[K", done, job->inputs->count, file);
  else
    fprintf(stderr, "[%zu/%zu] %s\n", done, job->inputs->count, file);
}

/* Gets input i's facts: from the cache, else by parsing with *parser
 * (made on the first miss). */
static void gather_one(pool_job *job, size_t i, bwsc__parser **parser) {
  const bwsc__tu_input *input = &job->inputs->items[i];
  if (job->cache && bwsc__cache_lookup(job->cache, input, &job->facts[i])) {
    atomic_fetch_add(&job->cached, 1);
    return;
  }
  if (!*parser)
    *parser = bwsc__parser_new();
  bwsc__deps deps = {0};
  bwsc__parser_parse(*parser, input, &job->facts[i], job->cache ? &deps : NULL);
  if (job->cache)
    bwsc__cache_store(job->cache, input, &job->facts[i], &deps);
  bwsc__deps_free(&deps);
  /* Shared copies of the TU's strings (most are its headers'), and its
   * arrays trimmed: what a run of hundreds of TUs keeps is the merge's. */
  bwsc__facts_intern(&job->facts[i]);
  atomic_fetch_add(&job->parsed, 1);
}

static void *parse_worker(void *arg) {
  pool_job *job = arg;
  bwsc__parser *parser = NULL; /* created on the first miss */
  for (;;) {
    size_t i = atomic_fetch_add(&job->next, 1);
    if (i >= job->inputs->count)
      break;
    gather_one(job, i, &parser);
    merge_ready(job, i);
    if (job->progress != BWSC__PROGRESS_OFF)
      show_progress(job, i);
  }
  bwsc__parser_free(parser);
  return NULL;
}

void bwsc__tus_gather(const bwsc__inputs *inputs, bwsc__tu_facts *facts,
                      unsigned jobs, bwsc__cache *cache, bwsc__tu_stats *stats,
                      bwsc__progress progress, const bwsc__report *where,
                      bwsc__program *prog) {
  pool_job job = {.inputs = inputs,
                  .facts = facts,
                  .cache = cache,
                  .progress = progress,
                  .where = where,
                  .prog = prog,
                  .ready = bwsc__xcalloc(inputs->count + 1, 1)};
  pthread_mutex_init(&job.merge_lock, NULL);
  if (jobs > inputs->count)
    jobs = (unsigned)inputs->count;
  if (jobs < 1)
    jobs = 1;
  pthread_t *threads = bwsc__xcalloc(jobs, sizeof(pthread_t));
  unsigned started = 0;
  for (unsigned t = 1; t < jobs; t++) {
    if (pthread_create(&threads[t], NULL, parse_worker, &job) != 0)
      break; /* fewer threads is still correct */
    started++;
  }
  parse_worker(&job);
  for (unsigned t = 1; t <= started; t++)
    pthread_join(threads[t], NULL);
  free(threads);
  free(job.ready);
  pthread_mutex_destroy(&job.merge_lock);
  if (progress == BWSC__PROGRESS_IN_PLACE && inputs->count)
    fputs("\r\033[K", stderr); /* the report starts on a clean line */
  stats->parsed += atomic_load(&job.parsed);
  stats->cached += atomic_load(&job.cached);
}

/* ---- facts files ----------------------------------------------------------
 */

typedef struct name_list {
  char **items;
  size_t count, cap;
} name_list;

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_facts_name(const char *name) {
  size_t len = strlen(name);
  return len > 8 && strcmp(name + len - 8, ".bwfacts") == 0;
}

/* Every *.bwfacts under dir, recursively. */
static void find_facts(const char *dir, name_list *out) {
  DIR *handle = opendir(dir);
  if (!handle)
    return;
  struct dirent *ent;
  while ((ent = readdir(handle)) != NULL) {
    if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
      continue;
    char *path = bwsc__xasprintf("%s/%s", dir, ent->d_name);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
      find_facts(path, out);
      free(path);
    } else if (is_facts_name(ent->d_name)) {
      *BWSC__PUSH(out->items, out->count, out->cap) = path;
    } else {
      free(path);
    }
  }
  closedir(handle);
}

static int compare_facts(const void *pa, const void *pb) {
  const bwsc__tu_facts *a = pa, *b = pb;
  return strcmp(a->file ? a->file : "", b->file ? b->file : "");
}

bwsc__tu_facts *bwsc__tus_load(const char *const *paths, size_t npaths,
                               size_t *count, bwsc__errors *errors) {
  name_list names = {0};
  for (size_t p = 0; p < npaths; p++) {
    struct stat st;
    if (stat(paths[p], &st) == 0 && S_ISDIR(st.st_mode)) {
      name_list found = {0};
      find_facts(paths[p], &found);
      if (found.count)
        qsort(found.items, found.count, sizeof(char *), compare_names);
      for (size_t i = 0; i < found.count; i++)
        *BWSC__PUSH(names.items, names.count, names.cap) = found.items[i];
      free(found.items);
    } else {
      *BWSC__PUSH(names.items, names.count, names.cap) =
          bwsc__xstrdup(paths[p]);
    }
  }
  bwsc__tu_facts *facts = bwsc__xcalloc(names.count + 1, sizeof(*facts));
  size_t n = 0;
  for (size_t i = 0; i < names.count; i++) {
    const char *why = NULL;
    if (bwsc__facts_read(names.items[i], 0, &facts[n], NULL, &why) == 0) {
      n++;
      continue;
    }
    char *message = bwsc__xasprintf("not a usable facts file: %s", why);
    bwsc__errors_add(errors, names.items[i], 0, 0, message);
    free(message);
  }
  /* A stable sort by file: qsort is not, so sort (file, position). */
  for (size_t i = 1; i < n; i++) {
    bwsc__tu_facts moving = facts[i];
    size_t j = i;
    while (j > 0 && compare_facts(&facts[j - 1], &moving) > 0) {
      facts[j] = facts[j - 1];
      j--;
    }
    facts[j] = moving;
  }
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    if (kept && compare_facts(&facts[kept - 1], &facts[i]) == 0)
      bwsc__facts_free(&facts[i]);
    else
      facts[kept++] = facts[i];
  }
  for (size_t i = 0; i < names.count; i++)
    free(names.items[i]);
  free(names.items);
  *count = kept;
  return facts;
}

/* ---- --emit-facts -------------------------------------------------------- */

static int is_source_name(const char *word) {
  static const char *const suffixes[] = {".c",   ".i",   ".cc",
                                         ".cpp", ".cxx", NULL};
  size_t len = strlen(word);
  for (size_t i = 0; suffixes[i]; i++) {
    size_t n = strlen(suffixes[i]);
    if (len > n && strcmp(word + len - n, suffixes[i]) == 0)
      return 1;
  }
  return 0;
}

/* The command as a one-entry compilation database, read back through
 * bwsc__compdb_load: the flags then mean exactly what they mean in a
 * database (-c, -o and -M* dropped, relative paths resolved). */
static int command_input(const char *const *command, size_t nwords,
                         bwsc__inputs *inputs, bwsc__errors *errors) {
  const char *source = NULL;
  for (size_t i = 1; i < nwords; i++)
    if (command[i][0] != '-' && is_source_name(command[i]) &&
        strcmp(command[i - 1], "-o") != 0)
      source = command[i];
  if (!source) {
    fputs("blockscan: error: --emit-facts: the command after -- compiles no "
          "source file (*.c)\n",
          stderr);
    return -1;
  }
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof(cwd)))
    strcpy(cwd, ".");
  json_t *args = json_array();
  for (size_t i = 0; i < nwords; i++)
    json_array_append_new(args, json_string(command[i]));
  json_t *db = json_pack("[{s:s, s:s, s:o}]", "directory", cwd, "file", source,
                         "arguments", args);
  const char *tmpdir = getenv("TMPDIR");
  char *path = bwsc__xasprintf("%s/blockscan-emit-XXXXXX",
                               tmpdir && *tmpdir ? tmpdir : "/tmp");
  int fd = mkstemp(path);
  int rc = -1;
  if (fd < 0 || json_dumpfd(db, fd, 0) != 0) {
    fprintf(stderr, "blockscan: error: --emit-facts: cannot write '%s': %s\n",
            path, strerror(errno));
  } else {
    rc = bwsc__compdb_load(path, inputs, errors);
  }
  if (fd >= 0) {
    close(fd);
    unlink(path);
  }
  free(path);
  json_decref(db);
  return rc;
}

/* A path in a make rule: spaces and '#' escaped, '$' doubled. */
static void put_make_path(FILE *out, const char *path) {
  for (const char *p = path; *p; p++) {
    if (*p == ' ' || *p == '#')
      fputc('\\', out);
    else if (*p == '$')
      fputc('$', out);
    fputc(*p, out);
  }
}

static int write_depfile(const char *out, const bwsc__deps *deps) {
  char *path = bwsc__xasprintf("%s.d", out);
  FILE *file = fopen(path, "w");
  free(path);
  if (!file)
    return -1;
  put_make_path(file, out);
  fputc(':', file);
  for (size_t i = 0; i < deps->count; i++) {
    fputs(" \\\n  ", file);
    put_make_path(file, deps->items[i].path);
  }
  fputc('\n', file);
  return fclose(file);
}

int bwsc__tus_emit(const char *out, const char *const *command, size_t nwords) {
  bwsc__inputs inputs = {0};
  bwsc__errors errors = {0};
  int status = 0;
  if (command_input(command, nwords, &inputs, &errors) != 0 ||
      inputs.count != 1) {
    for (size_t i = 0; i < errors.count; i++)
      fprintf(stderr, "blockscan: error: %s\n", errors.items[i].message);
    bwsc__errors_free(&errors);
    bwsc__inputs_free(&inputs);
    return 2;
  }
  bwsc__parse_init();
  bwsc__parser *parser = bwsc__parser_new();
  bwsc__tu_facts facts;
  bwsc__deps deps = {0};
  bwsc__parser_parse(parser, &inputs.items[0], &facts, &deps);
  bwsc__parser_free(parser);
  for (size_t i = 0; i < facts.ndiags; i++) {
    const bwsc__diag_fact *diag = &facts.diags[i];
    fprintf(stderr, "%s:%u:%u: error: %s\n",
            diag->loc.file ? diag->loc.file : facts.file, diag->loc.line,
            diag->loc.col, diag->message);
  }
  if (facts.failed)
    status = 2;
  if (bwsc__facts_write(out, &facts, NULL, 0) != 0 ||
      write_depfile(out, &deps) != 0) {
    fprintf(stderr, "blockscan: error: cannot write '%s': %s\n", out,
            strerror(errno));
    status = 2;
  }
  bwsc__deps_free(&deps);
  bwsc__facts_free(&facts);
  bwsc__errors_free(&errors);
  bwsc__inputs_free(&inputs);
  return status;
}
