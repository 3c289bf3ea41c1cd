/* bw-trace2svg - turns the Chrome trace that libblockwatch.so writes with
 * BLOCKWATCH_OPTIONS=trace=FILE into an SVG timeline: workers as lanes,
 * blocked calls as spans, the starved items' queue waits, counters, a time
 * axis.
 *
 * Exit status: 0 written, 1 the SVG could not be written, 2 bad arguments
 * or a trace that cannot be read (as blockscan and blockwatch use 2 for
 * what the user gave them).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"
#include "trace.h"

static void usage(FILE *to) {
  fputs("usage: bw-trace2svg [-o OUT.svg] [--width PX] [--title TEXT] "
        "TRACE.json\n"
        "  Reads a Chrome trace-event JSON file (blockwatch's trace=FILE) and\n"
        "  writes an SVG timeline to OUT.svg (default: standard output).\n"
        "  --version prints the version. Exit status: 0 written, 1 the SVG\n"
        "  could not be written, 2 bad arguments or an unreadable trace.\n",
        to);
}

/* Strict: the whole string must be a number in 300..20000. */
static int parse_width(const char *s, unsigned *out) {
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < 300 || v > 20000)
    return -1;
  *out = (unsigned)v;
  return 0;
}

int main(int argc, char **argv) {
  const char *in = NULL, *out_path = NULL;
  t2s_svg_options opts = {0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int has_value = i + 1 < argc;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(a, "--version") == 0) {
      printf("bw-trace2svg %s\n", BW_VERSION);
      return 0;
    } else if (strcmp(a, "-o") == 0 && has_value) {
      out_path = argv[++i];
    } else if (strcmp(a, "--title") == 0 && has_value) {
      opts.title = argv[++i];
    } else if (strcmp(a, "--width") == 0 && has_value) {
      if (parse_width(argv[++i], &opts.width) != 0) {
        fprintf(stderr, "bw-trace2svg: bad --width '%s' (300..20000)\n",
                argv[i]);
        return 2;
      }
    } else if (a[0] == '-' && a[1] != '\0') {
      fprintf(stderr, "bw-trace2svg: unknown or incomplete option '%s'\n", a);
      usage(stderr);
      return 2;
    } else if (in == NULL) {
      in = a;
    } else {
      fprintf(stderr, "bw-trace2svg: more than one trace given ('%s')\n", a);
      return 2;
    }
  }
  if (in == NULL) {
    fputs("bw-trace2svg: no trace given\n", stderr);
    usage(stderr);
    return 2;
  }

  t2s_trace trace;
  char err[512];
  if (t2s_trace_load(in, &trace, err, sizeof err) != 0) {
    fprintf(stderr, "bw-trace2svg: %s\n", err);
    return 2;
  }
  FILE *out = out_path ? fopen(out_path, "w") : stdout;
  if (out == NULL) {
    fprintf(stderr, "bw-trace2svg: cannot write %s: %s\n", out_path,
            strerror(errno));
    t2s_trace_free(&trace);
    return 1;
  }
  int rc = t2s_svg_render(&trace, &opts, out);
  if (out != stdout && fclose(out) != 0)
    rc = -1;
  t2s_trace_free(&trace);
  if (rc != 0) {
    fprintf(stderr, "bw-trace2svg: writing %s failed\n",
            out_path ? out_path : "standard output");
    return 1;
  }
  return 0;
}
