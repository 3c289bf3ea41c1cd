/* report_sarif.h - the prose of the SARIF report (report_sarif_text.c), for
 * the writer in report_sarif.c.
 *
 * Invariant: every function returns malloc'd strings the caller frees.
 */
#ifndef BLOCKSCAN_REPORT_SARIF_H
#define BLOCKSCAN_REPORT_SARIF_H

#include "report.h"

/* "blocking-sync-over-async" -> "BlockingSyncOverAsync". */
char *bwsc__sarif_rule_name(const char *id);

/* Category cat's help, in plain text and in Markdown, starting with
 * `intro` (its full description). */
void bwsc__sarif_help(const bwsc__report *report, bw_rule_category cat,
                      const char *intro, char **text, char **markdown);

/* A result's message: f's message, a "[submit site](1)" link (or one per
 * callback, "[cb_a](1), [cb_b](2)") to relatedLocations, then the hint. */
char *bwsc__sarif_message(const bwsc__finding *f);

#endif /* BLOCKSCAN_REPORT_SARIF_H */
