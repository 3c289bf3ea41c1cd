/* marked.c - the marked-line check of marked.h.
 *
 * Invariant: fixtures stay under MAX_LINES lines; a warning outside the
 * range is ignored, never written past the array.
 */
#include "marked.h"

#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINES 256
#define TIMEOUT 120

/* Marks warned[n] for each "<file>:<n>:<col>: warning: " line of `out`. */
static void warned_lines(const char *out, const char *file,
                         unsigned char *warned) {
  size_t flen = strlen(file);
  for (const char *p = out; *p;) {
    unsigned line = 0, col = 0;
    int used = 0;
    if (strncmp(p, file, flen) == 0 && p[flen] == ':' &&
        sscanf(p + flen, ":%u:%u: warning: %n", &line, &col, &used) == 2 &&
        used > 0 && line < MAX_LINES)
      warned[line] = 1;
    const char *end = strchr(p, '\n');
    if (!end)
      break;
    p = end + 1;
  }
}

/* How many marked lines of `text` (the fixture `file`) disagree with
 * `warned`; prints each. */
static int mismatches(const char *file, const char *text,
                      const unsigned char *warned) {
  int bad = 0;
  const char *p = text;
  for (unsigned line = 1; p && *p && line < MAX_LINES; line++) {
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    int expect = memmem(p, len, "/* expect", 9) != NULL;
    int quiet = memmem(p, len, "/* not reported", 15) != NULL;
    if (expect != warned[line] && (expect || quiet)) {
      fprintf(stderr, "%s:%u: %s\n", file, line,
              expect ? "expected a finding, got none"
                     : "reported, but must not be");
      bad++;
    }
    p = end ? end + 1 : NULL;
  }
  return bad;
}

int marked_mismatches(const char *exe, const char *dir,
                      const char *const *files, const char *const *extra,
                      int *status) {
  const char *argv[24] = {exe};
  size_t n = 1;
  for (size_t i = 0; files[i] && i < 8; i++)
    argv[n++] = files[i];
  for (size_t i = 0; extra && extra[i] && i < 8; i++)
    argv[n++] = extra[i];
  argv[n++] = "--color=never";
  argv[n++] = "--";
  argv[n] = NULL;
  run_result r = run_tool(dir, argv, TIMEOUT);
  unsigned char warned[MAX_LINES] = {0};
  warned_lines(r.out, files[0], warned);
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", dir, files[0]);
  char *text = read_file(path);
  int bad = text ? mismatches(files[0], text, warned) : 1;
  if (!text)
    fprintf(stderr, "%s: cannot read the fixture\n", path);
  free(text);
  if (bad)
    fprintf(stderr, "blockscan output:\n%s%s", r.out, r.err);
  *status = r.status;
  run_free(&r);
  return bad;
}
