/* options.h - blockscan's command line.
 *
 * Invariant: the strings in bwsc__options point into argv or into a
 * bwsc__config that outlives the options (never freed here); the arrays
 * are malloc'd and released by bwsc__options_free.
 */
#ifndef BLOCKSCAN_OPTIONS_H
#define BLOCKSCAN_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

typedef enum bwsc__format {
  BWSC__FORMAT_TEXT,
  BWSC__FORMAT_JSON,
  BWSC__FORMAT_SARIF
} bwsc__format;

typedef enum bwsc__color {
  BWSC__COLOR_AUTO,
  BWSC__COLOR_NEVER,
  BWSC__COLOR_ALWAYS
} bwsc__color;

/* An --exclude glob and the directory a relative one is taken from (NULL:
 * the current directory). */
typedef struct bwsc__glob {
  const char *pattern;
  const char *base;
} bwsc__glob;

typedef struct bwsc__options {
  const char *build_dir; /* -p */
  const char **rules;    /* --rules, in order */
  size_t nrules;
  const char **enable, **disable; /* --enable / --disable categories */
  size_t nenable, ndisable;
  bwsc__format format;
  const char *output;         /* --output, NULL = stdout */
  const char *srcroot;        /* --srcroot, NULL = the current directory */
  unsigned jobs;              /* -j, 0 = number of CPUs */
  const char *baseline;       /* --baseline */
  const char *write_baseline; /* --write-baseline */
  const char *diff_rev;       /* --diff: only what changed since REV */
  const char *diff_file;      /* --diff-file: ... in this patch, "-" stdin */
  int summary;                /* --summary */
  int no_default_rules;       /* --no-default-rules */
  int low_confidence;         /* --confidence low: show low findings too */
  int confidence_given;       /* --confidence was on the command line */
  bwsc__color color;
  bwsc__glob *excludes; /* --exclude, in order */
  size_t nexcludes;
  int progress;  /* --progress: [n/N] lines even when stderr is no tty */
  int quiet;     /* --quiet: no progress and no notes */
  int no_config; /* --no-config: no .blockscan is read */
  /* clang-tidy's --extra-arg-before / --extra-arg: compiler arguments put
   * before / after every translation unit's own. */
  const char **extra_before, **extra_after;
  size_t nextra_before, nextra_after;
  const char **paths; /* files or directories */
  size_t npaths;
  int have_extra;     /* "--" was given */
  const char **extra; /* compiler args after "--" */
  size_t nextra;
  int help, version, list_rules;
  const char *cache_dir;  /* --cache */
  int no_cache;           /* --no-cache */
  int stats;              /* --stats: parsed and cached TU counts */
  const char *emit_facts; /* --emit-facts: write one TU's facts */
  int facts;              /* --facts: the paths are facts files */
} bwsc__options;

/* Parses argv (getopt_long: unique prefixes of long options, --opt=value
 * and --opt value). Returns 0, or -1 after printing one
 * "blockscan: error: ..." line to stderr naming the bad argument. */
int bwsc__options_parse(bwsc__options *opts, int argc, char **argv);

/* Appends to one of the options' lists. */
void bwsc__options_push(const char ***array, size_t *count, const char *value);

/* Appends an --exclude glob; `base` as in bwsc__glob. */
void bwsc__options_exclude(bwsc__options *opts, const char *pattern,
                           const char *base);

/* The value of a --confidence word ("high" 0, "low" 1), or -1. */
int bwsc__confidence_parse(const char *word);

void bwsc__options_free(bwsc__options *opts);

/* Prints the usage text. */
void bwsc__options_usage(FILE *out);

#endif /* BLOCKSCAN_OPTIONS_H */
