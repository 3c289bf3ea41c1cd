/* svg.h - renders a t2s_trace as a standalone SVG timeline.
 *
 * Invariants: the output is well-formed XML (every text taken from the trace
 * is escaped), uses presentation attributes rather than CSS so any renderer
 * shows the same picture, and marks its parts with classes that tests look
 * for: "lane" groups (one per thread), "span blocked" rects, "span
 * queue-wait" rects, "counter" paths and the "axis" group.
 */
#ifndef T2S_SVG_H
#define T2S_SVG_H

#include <stdio.h>

#include "trace.h"

typedef struct t2s_svg_options {
  unsigned width;    /* total width in px; 0 means 1200 */
  const char *title; /* heading; NULL means "blockwatch timeline" */
} t2s_svg_options;

/* Writes the SVG document to out. Returns 0, or -1 when writing failed. */
int t2s_svg_render(const t2s_trace *trace, const t2s_svg_options *opts,
                   FILE *out);

#endif /* T2S_SVG_H */
