/* report.h - writing the findings: text (clang style), JSON, SARIF 2.1.0,
 * the --summary tables and baselines.
 *
 * Invariants: writers print findings in list order (the caller sorts);
 * file paths are printed relative to the current directory when the file is
 * under it, so golden files do not depend on where the tree is checked out.
 */
#ifndef BLOCKSCAN_REPORT_H
#define BLOCKSCAN_REPORT_H

#include "finding.h"

#include <stdio.h>

typedef struct bwsc__report {
  const bwsc__findings *findings;
  const bwsc__errors *errors;
  const bw_rules *rules;
  int color;           /* text: ANSI colours */
  const char *srcroot; /* absolute directory that paths are relative to */
  size_t ntus;         /* translation units analysed (0: not said) */
} bwsc__report;

/* The path to print for `file`: relative to srcroot when under it. Returns
 * a pointer into file or to a static "<unknown>". */
const char *bwsc__report_path(const bwsc__report *report, const char *file);

/* What step s of f's chain does, for a note: "'a' calls 'b'", "'a' calls
 * through 'ops->run' to 'b' (one of 6 possible targets)", "... in an
 * assertion's failure branch", "..., which never returns". The last step's
 * callee is the blocking function. Returns a malloc'd string. */
char *bwsc__report_step(const bwsc__finding *f, size_t s);

void bwsc__write_text(const bwsc__report *report, FILE *out);
/* Return 0, or -1 when jansson could not write. */
int bwsc__write_json(const bwsc__report *report, FILE *out);
int bwsc__write_sarif(const bwsc__report *report, FILE *out);

/* Counts per rule, per directory and the top callbacks. */
void bwsc__write_summary(const bwsc__report *report, FILE *out);

/* Baselines. A baseline file starts with the comment line
 * "# blockscan baseline: fingerprint rule function callback", then has one
 * "<fingerprint> <rule> <function> <callback>" line per finding as the
 * analysis gives it (one per callback: write and apply before
 * bwsc__findings_group, so baselines of older versions still hold), fields
 * separated by one space: the 16 lower-case hex digits of the fingerprint,
 * the rule id ("blocking-sleep"), the blocking function and the callback
 * it is reached from. Returns 0, or -1 when the file cannot be written. */
int bwsc__baseline_write(const bwsc__findings *findings, const char *path);
/* Removes the findings whose fingerprint is in the file. Only a line's
 * first field (up to a space, tab or newline) is read, and only when it is
 * 16 characters long; other lines, empty lines and lines starting with '#'
 * are skipped. Each line removes at most one finding, so new copies of a
 * baselined problem still show. Returns 0 or -1 when the file cannot be
 * read. */
int bwsc__baseline_apply(bwsc__findings *findings, const char *path);

#endif /* BLOCKSCAN_REPORT_H */
