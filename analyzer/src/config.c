/* config.c - reading .blockscan: "KEY = VALUE" lines, '#' comments.
 *
 * Invariant: the whole file is checked before anything of it is applied,
 * so a bad file changes no option; each bad line is reported once, with
 * its number.
 */
#include "config.h"

#include "util.h"

#include <blockwatch/rules.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The keys a .blockscan may hold, as enum and names from one list. */
#define CONFIG_KEYS(X)                                                         \
  X(KEY_RULES, "rules")                                                        \
  X(KEY_ENABLE, "enable")                                                      \
  X(KEY_DISABLE, "disable")                                                    \
  X(KEY_EXCLUDE, "exclude")                                                    \
  X(KEY_CONFIDENCE, "confidence")

#define KEY_ENUM(key, name) key,
#define KEY_NAME(key, name) name,
typedef enum config_key { CONFIG_KEYS(KEY_ENUM) KEY_COUNT } config_key;
static const char *const key_names[] = {CONFIG_KEYS(KEY_NAME) NULL};

/* One "KEY = VALUE" line, checked. */
typedef struct entry {
  config_key key;
  char *value;
} entry;

static char *keep(bwsc__config *cfg, char *text) {
  *BWSC__PUSH(cfg->strings, cfg->nstrings, cfg->cap) = text;
  return text;
}

char *bwsc__find_in_parents(const char *dir, const char *name) {
  char *at = bwsc__xstrdup(dir);
  for (;;) {
    int root = strcmp(at, "/") == 0;
    char *candidate = bwsc__xasprintf("%s/%s", root ? "" : at, name);
    if (access(candidate, F_OK) == 0) {
      free(at);
      return candidate;
    }
    free(candidate);
    char *slash = strrchr(at, '/');
    if (root || !slash) {
      free(at);
      return NULL;
    }
    slash[slash == at ? 1 : 0] = '\0'; /* "/a" goes up to "/" */
  }
}

static int line_error(const char *path, unsigned line, const char *what,
                      const char *text) {
  fprintf(stderr, "blockscan: %s:%u: error: %s", path, line, what);
  if (text)
    fprintf(stderr, " '%s'", text);
  fputc('\n', stderr);
  return -1;
}

/* Trims the spaces around [*start, *end). */
static void trim(char **start, char **end) {
  while (*start < *end && isspace((unsigned char)**start))
    (*start)++;
  while (*end > *start && isspace((unsigned char)(*end)[-1]))
    (*end)--;
}

/* Checks one line; an entry is added for "KEY = VALUE". Returns 0, or -1
 * after printing what is wrong. */
static int parse_line(const char *path, unsigned number, char *line,
                      entry **entries, size_t *count, size_t *cap) {
  char *end = line + strlen(line);
  trim(&line, &end);
  *end = '\0';
  if (line == end || *line == '#')
    return 0;
  char *eq = memchr(line, '=', (size_t)(end - line));
  if (!eq)
    return line_error(path, number, "expected KEY = VALUE, got", line);
  char *name = line, *name_end = eq, *value = eq + 1;
  trim(&name, &name_end);
  trim(&value, &end);
  *name_end = '\0';
  *end = '\0';
  size_t k = 0;
  while (key_names[k] && strcmp(key_names[k], name) != 0)
    k++;
  if (!key_names[k])
    return line_error(path, number,
                      "unknown key (rules, enable, disable, exclude or "
                      "confidence):",
                      name);
  if (!*value)
    return line_error(path, number, "no value for", name);
  bw_rule_category category;
  if ((k == KEY_ENABLE || k == KEY_DISABLE) &&
      bw_rule_category_parse(value, &category) != 0)
    return line_error(path, number, "unknown category", value);
  if (k == KEY_CONFIDENCE && bwsc__confidence_parse(value) < 0)
    return line_error(path, number, "confidence must be high or low, not",
                      value);
  *BWSC__PUSH(*entries, *count, *cap) =
      (entry){(config_key)k, bwsc__xstrdup(value)};
  return 0;
}

/* Whether `name` is in the list. */
static int listed(const char *const *list, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(list[i], name) == 0)
      return 1;
  return 0;
}

/* Applies the checked entries: the file's rule files before the command
 * line's, and nothing the command line says otherwise. */
static void apply(bwsc__config *cfg, bwsc__options *opts, entry *entries,
                  size_t count) {
  const char **rules = NULL;
  size_t nrules = 0;
  for (size_t i = 0; i < count; i++) {
    char *value = keep(cfg, entries[i].value);
    switch (entries[i].key) {
    case KEY_RULES:
      if (value[0] != '/')
        value = keep(cfg, bwsc__xasprintf("%s/%s", cfg->dir, value));
      bwsc__options_push(&rules, &nrules, value);
      break;
    case KEY_ENABLE:
      if (!listed(opts->disable, opts->ndisable, value))
        bwsc__options_push(&opts->enable, &opts->nenable, value);
      break;
    case KEY_DISABLE:
      if (!listed(opts->enable, opts->nenable, value))
        bwsc__options_push(&opts->disable, &opts->ndisable, value);
      break;
    case KEY_EXCLUDE:
      bwsc__options_exclude(opts, value, cfg->dir);
      break;
    case KEY_CONFIDENCE:
      if (!opts->confidence_given)
        opts->low_confidence = bwsc__confidence_parse(value);
      break;
    case KEY_COUNT:
      break;
    }
  }
  for (size_t i = 0; i < opts->nrules; i++)
    bwsc__options_push(&rules, &nrules, opts->rules[i]);
  free((void *)opts->rules);
  opts->rules = rules;
  opts->nrules = nrules;
}

int bwsc__config_apply(bwsc__config *cfg, bwsc__options *opts,
                       const char *start) {
  memset(cfg, 0, sizeof(*cfg));
  if (!(cfg->path = bwsc__find_in_parents(start, ".blockscan")))
    return 0;
  cfg->dir = bwsc__xstrdup(cfg->path);
  char *slash = strrchr(cfg->dir, '/');
  slash[slash == cfg->dir ? 1 : 0] = '\0';
  FILE *in = fopen(cfg->path, "r");
  if (!in) {
    fprintf(stderr, "blockscan: %s: error: cannot read: %s\n", cfg->path,
            strerror(errno));
    return -1;
  }
  entry *entries = NULL;
  size_t count = 0, cap = 0;
  int failed = 0;
  char *line = NULL;
  size_t size = 0;
  unsigned number = 0;
  while (getline(&line, &size, in) >= 0)
    if (parse_line(cfg->path, ++number, line, &entries, &count, &cap) != 0)
      failed = 1;
  free(line);
  fclose(in);
  if (!failed) {
    apply(cfg, opts, entries, count);
  } else {
    for (size_t i = 0; i < count; i++)
      free(entries[i].value);
  }
  free(entries);
  return failed ? -1 : 0;
}

void bwsc__config_free(bwsc__config *cfg) {
  for (size_t i = 0; i < cfg->nstrings; i++)
    free(cfg->strings[i]);
  free(cfg->strings);
  free(cfg->path);
  free(cfg->dir);
  memset(cfg, 0, sizeof(*cfg));
}
