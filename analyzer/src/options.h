/* options.h - blockscan's command line.
 *
 * Invariant: the strings in bw__options point into argv (never freed); the
 * arrays are malloc'd and released by bw__options_free.
 */
#ifndef BLOCKSCAN_OPTIONS_H
#define BLOCKSCAN_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

typedef enum bw__format {
  BW__FORMAT_TEXT,
  BW__FORMAT_JSON,
  BW__FORMAT_SARIF
} bw__format;

typedef enum bw__color {
  BW__COLOR_AUTO,
  BW__COLOR_NEVER,
  BW__COLOR_ALWAYS
} bw__color;

typedef struct bw__options {
  const char *build_dir; /* -p */
  const char **rules;    /* --rules, in order */
  size_t nrules;
  const char **enable, **disable; /* --enable / --disable categories */
  size_t nenable, ndisable;
  bw__format format;
  const char *output;         /* --output, NULL = stdout */
  unsigned jobs;              /* -j, 0 = number of CPUs */
  const char *baseline;       /* --baseline */
  const char *write_baseline; /* --write-baseline */
  int summary;                /* --summary */
  int no_default_rules;       /* --no-default-rules */
  bw__color color;
  const char **paths; /* files or directories */
  size_t npaths;
  int have_extra;     /* "--" was given */
  const char **extra; /* compiler args after "--" */
  size_t nextra;
  int help, version;
} bw__options;

/* Parses argv. Returns 0, or -1 after printing "blockscan: error: ..." to
 * stderr for a bad argument. */
int bw__options_parse(bw__options *opts, int argc, char **argv);

void bw__options_free(bw__options *opts);

/* Prints the usage text. */
void bw__options_usage(FILE *out);

#endif /* BLOCKSCAN_OPTIONS_H */
