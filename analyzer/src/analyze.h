/* analyze.h - from the merged program to findings: roots (entry call sites,
 * annotated functions, wrappers), reachability, blocking calls.
 *
 * Invariant: the findings borrow from `prog`, which must outlive them.
 */
#ifndef BLOCKSCAN_ANALYZE_H
#define BLOCKSCAN_ANALYZE_H

#include "finding.h"
#include "program.h"

#include <blockwatch/rules.h>

/* A call through a pointer that may reach more functions than this makes
 * the chains crossing it low confidence. Four: a small handler table or a
 * strategy picked by a flag stays high (a reviewer can check each), while a
 * vtable slot filled by every subclass (GObject's finalize, dispose) or a
 * protocol table shared by unrelated users is past it. */
#define BWSC__WIDE_TARGETS 4

/* Appends every blocking call reachable from a pool or loop callback to
 * *out, one per (call site, blocking function, callback), unsorted and
 * unfiltered except for allow rules and the rules' non-blocking argument
 * conditions. Returns how many callbacks were found. */
size_t bwsc__analyze(bwsc__program *prog, const bw_rules *rules,
                     bwsc__findings *out);

/* The fingerprint key of a function: its name, prefixed with its file's
 * base name when it is static (so it survives code moving and checkouts in
 * other directories, yet keeps same-name statics apart). Writes into buf. */
void bwsc__stable_name(const bwsc__node *node, char *buf, size_t size);

#endif /* BLOCKSCAN_ANALYZE_H */
