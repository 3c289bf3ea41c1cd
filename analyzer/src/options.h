/* options.h - blockscan's command line.
 *
 * Invariant: the strings in bwsc__options point into argv (never freed); the
 * arrays are malloc'd and released by bwsc__options_free.
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

typedef struct bwsc__options {
  const char *build_dir; /* -p */
  const char **rules;    /* --rules, in order */
  size_t nrules;
  const char **enable, **disable; /* --enable / --disable categories */
  size_t nenable, ndisable;
  bwsc__format format;
  const char *output;         /* --output, NULL = stdout */
  unsigned jobs;              /* -j, 0 = number of CPUs */
  const char *baseline;       /* --baseline */
  const char *write_baseline; /* --write-baseline */
  const char *diff_rev;       /* --diff: only what changed since REV */
  const char *diff_file;      /* --diff-file: ... in this patch, "-" stdin */
  int summary;                /* --summary */
  int no_default_rules;       /* --no-default-rules */
  int low_confidence;         /* --confidence low: show low findings too */
  bwsc__color color;
  const char **paths; /* files or directories */
  size_t npaths;
  int have_extra;     /* "--" was given */
  const char **extra; /* compiler args after "--" */
  size_t nextra;
  int help, version, list_rules;
} bwsc__options;

/* Parses argv. Returns 0, or -1 after printing "blockscan: error: ..." to
 * stderr for a bad argument. */
int bwsc__options_parse(bwsc__options *opts, int argc, char **argv);

void bwsc__options_free(bwsc__options *opts);

/* Prints the usage text. */
void bwsc__options_usage(FILE *out);

#endif /* BLOCKSCAN_OPTIONS_H */
