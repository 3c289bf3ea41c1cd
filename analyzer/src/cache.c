/* cache.c - the facts cache directory (see cache.h).
 *
 * Invariants: file hashes are memoised under `lock`, so a header included
 * by every TU is read once per run; entries are written atomically
 * (bwsc__facts_write), so two blockscan runs sharing a directory never see
 * half an entry; a file that cannot be read hashes to 0, which never
 * matches and is never stored.
 */
#include "cache.h"

#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef BLOCKSCAN_VERSION
#define BLOCKSCAN_VERSION "0.0.0"
#endif
#ifndef BLOCKSCAN_RESOURCE_DIR
#define BLOCKSCAN_RESOURCE_DIR ""
#endif

struct bwsc__cache {
  char *dir;
  uint64_t identity; /* this binary and the facts format */
  pthread_mutex_t lock;
  bwsc__strmap hashes; /* path -> index in `memo` */
  bwsc__dep *memo;     /* owns the paths the map's keys point to */
  size_t nmemo, capmemo;
  atomic_int write_failed; /* the note about it is printed once */
};

static uint64_t hash_string(uint64_t hash, const char *s) {
  /* The terminating NUL too, so ("ab","c") and ("a","bc") differ. */
  return bwsc__fnv1a_bytes(hash, s, strlen(s) + 1);
}

/* FNV-1a of a file's content, 0 when it cannot be read. */
static uint64_t hash_file(const char *path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0)
    return 0;
  uint64_t hash = BWSC__FNV_INIT;
  unsigned char chunk[65536];
  ssize_t n;
  while ((n = read(fd, chunk, sizeof(chunk))) > 0)
    hash = bwsc__fnv1a_bytes(hash, chunk, (size_t)n);
  close(fd);
  return n < 0 || hash == 0 ? 0 : hash;
}

/* Which blockscan made an entry: the binary itself (a rebuilt parser with
 * the same version number must not reuse its predecessor's facts), the
 * format, and clang's resource directory (it names clang's version). */
static uint64_t build_identity(void) {
  uint64_t hash = hash_string(BWSC__FNV_INIT, BLOCKSCAN_VERSION);
  hash = hash_string(hash, BLOCKSCAN_RESOURCE_DIR);
  hash ^= hash_file("/proc/self/exe");
  hash = bwsc__fnv1a_bytes(hash, "\1", 1);
  return hash ^ BWSC__FACTS_FORMAT;
}

bwsc__cache *bwsc__cache_open(const char *dir) {
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr,
            "blockscan: note: cannot create the cache '%s': %s; "
            "parsing everything\n",
            dir, strerror(errno));
    return NULL;
  }
  bwsc__cache *cache = bwsc__xcalloc(1, sizeof(*cache));
  cache->dir = bwsc__xstrdup(dir);
  cache->identity = build_identity();
  pthread_mutex_init(&cache->lock, NULL);
  return cache;
}

void bwsc__cache_close(bwsc__cache *cache) {
  if (!cache)
    return;
  for (size_t i = 0; i < cache->nmemo; i++)
    free(cache->memo[i].path);
  free(cache->memo);
  bwsc__strmap_free(&cache->hashes);
  pthread_mutex_destroy(&cache->lock);
  free(cache->dir);
  free(cache);
}

uint64_t bwsc__cache_file_hash(bwsc__cache *cache, const char *path) {
  size_t at;
  pthread_mutex_lock(&cache->lock);
  int known = bwsc__strmap_get(&cache->hashes, path, &at);
  uint64_t hash = known ? cache->memo[at].hash : 0;
  pthread_mutex_unlock(&cache->lock);
  if (known)
    return hash;
  hash = hash_file(path); /* outside the lock: other threads go on */
  pthread_mutex_lock(&cache->lock);
  if (!bwsc__strmap_get(&cache->hashes, path, &at)) {
    bwsc__dep *dep = BWSC__PUSH(cache->memo, cache->nmemo, cache->capmemo);
    dep->path = bwsc__xstrdup(path);
    dep->hash = hash;
    /* The map's keys point into memo entries' paths, which stay put when
     * memo grows (they are separate allocations). */
    bwsc__strmap_put(&cache->hashes, dep->path, cache->nmemo - 1);
  }
  pthread_mutex_unlock(&cache->lock);
  return hash;
}

static uint64_t entry_key(const bwsc__cache *cache,
                          const bwsc__tu_input *input) {
  uint64_t key = cache->identity;
  key = hash_string(key, input->file);
  key = hash_string(key, input->directory ? input->directory : "");
  for (size_t i = 0; i < input->nargs; i++)
    key = hash_string(key, input->args[i]);
  return key;
}

static char *entry_path(const bwsc__cache *cache, uint64_t key) {
  return bwsc__xasprintf("%s/%016llx.bwfacts", cache->dir,
                         (unsigned long long)key);
}

int bwsc__cache_lookup(bwsc__cache *cache, const bwsc__tu_input *input,
                       bwsc__tu_facts *out) {
  uint64_t key = entry_key(cache, input);
  char *path = entry_path(cache, key);
  bwsc__deps deps = {0};
  const char *why = NULL;
  int hit = 0;
  if (bwsc__facts_read(path, key, out, &deps, &why) != 0) {
    if (strcmp(why, "missing") != 0)
      fprintf(stderr,
              "blockscan: note: ignoring the cache entry '%s' (%s); parsing "
              "'%s' again\n",
              path, why, input->file);
  } else {
    hit = 1;
    for (size_t i = 0; hit && i < deps.count; i++)
      hit = bwsc__cache_file_hash(cache, deps.items[i].path) ==
            deps.items[i].hash;
    if (!hit)
      bwsc__facts_free(out);
  }
  bwsc__deps_free(&deps);
  free(path);
  return hit;
}

void bwsc__cache_store(bwsc__cache *cache, const bwsc__tu_input *input,
                       const bwsc__tu_facts *facts, bwsc__deps *deps) {
  if (facts->failed)
    return; /* a missing header may appear: no deps would say so */
  for (size_t i = 0; i < deps->count; i++)
    if (!(deps->items[i].hash =
              bwsc__cache_file_hash(cache, deps->items[i].path)))
      return;
  uint64_t key = entry_key(cache, input);
  char *path = entry_path(cache, key);
  if (bwsc__facts_write(path, facts, deps, key) != 0 &&
      atomic_exchange(&cache->write_failed, 1) == 0)
    fprintf(stderr, "blockscan: note: cannot write the cache entry '%s': %s\n",
            path, strerror(errno));
  free(path);
}

/* The directory holding the compilation database blockscan reads, found
 * the way inputs.c finds the database: -p names it (or a directory at or
 * below it), else it sits at or above the first input. */
static char *database_dir(const bwsc__options *opts) {
  const char *start = opts->build_dir;
  if (!start && opts->have_extra)
    return NULL;
  if (!start)
    start = opts->npaths ? opts->paths[0] : ".";
  char *dir = bwsc__xstrdup(start);
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    char *slash = strrchr(dir, '/');
    if (slash)
      *slash = '\0';
    else
      strcpy(dir, ".");
    if (opts->build_dir)
      return dir; /* -p path/to/compile_commands.json */
  }
  if (dir[0] != '/') {
    char cwd[PATH_MAX];
    const char *here = getcwd(cwd, sizeof(cwd)) ? cwd : ".";
    char *joined = strcmp(dir, ".") == 0 ? bwsc__xstrdup(here)
                                         : bwsc__xasprintf("%s/%s", here, dir);
    free(dir);
    dir = joined;
  }
  for (;;) {
    char *db = bwsc__xasprintf("%s/compile_commands.json", dir);
    int found = access(db, F_OK) == 0;
    free(db);
    if (found)
      return dir;
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) {
      free(dir);
      return NULL;
    }
    *slash = '\0';
  }
}

char *bwsc__cache_dir(const bwsc__options *opts) {
  if (opts->no_cache)
    return NULL;
  if (opts->cache_dir)
    return bwsc__xstrdup(opts->cache_dir);
  char *db_dir = database_dir(opts);
  if (!db_dir)
    return NULL;
  char *dir = bwsc__xasprintf("%s/.blockscan-cache", db_dir);
  free(db_dir);
  return dir;
}
