/* exclude.c - matching files against the --exclude globs (see exclude.h).
 */
#include "exclude.h"

#include "util.h"

#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A glob without '/' against each component of file. */
static int component_matches(const char *pattern, const char *file) {
  int hit = 0;
  char *copy = bwsc__xstrdup(file), *save = NULL;
  for (char *part = strtok_r(copy, "/", &save); part && !hit;
       part = strtok_r(NULL, "/", &save))
    hit = fnmatch(pattern, part, 0) == 0;
  free(copy);
  return hit;
}

static int glob_matches(const bwsc__glob *glob, const char *file) {
  const char *pattern = glob->pattern;
  size_t len = strlen(pattern);
  if (!strchr(pattern, '/'))
    return component_matches(pattern, file);
  char cwd[PATH_MAX];
  const char *base = glob->base;
  if (!base)
    base = getcwd(cwd, sizeof(cwd)) ? cwd : ".";
  /* "vendor/" means everything under vendor. */
  const char *tail = pattern[len - 1] == '/' ? "*" : "";
  char *full = pattern[0] == '/'
                   ? bwsc__xasprintf("%s%s", pattern, tail)
                   : bwsc__xasprintf("%s/%s%s", strcmp(base, "/") ? base : "",
                                     pattern, tail);
  int hit = fnmatch(full, file, 0) == 0;
  free(full);
  return hit;
}

int bwsc__excluded(const bwsc__options *opts, const char *file) {
  for (size_t i = 0; file && i < opts->nexcludes; i++)
    if (glob_matches(&opts->excludes[i], file))
      return 1;
  return 0;
}
