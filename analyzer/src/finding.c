/* finding.c - sorting and freeing findings and errors.
 *
 * Invariant: the sort key is total over what is printed, so output is the
 * same whatever order the TUs were parsed in.
 */
#include "finding.h"

#include "util.h"

#include <stdlib.h>
#include <string.h>

static int compare_str(const char *a, const char *b) {
  return strcmp(a ? a : "", b ? b : "");
}

static int compare_loc(const bw__loc *a, const bw__loc *b) {
  int c = compare_str(a->file, b->file);
  if (c)
    return c;
  if (a->line != b->line)
    return a->line < b->line ? -1 : 1;
  if (a->col != b->col)
    return a->col < b->col ? -1 : 1;
  return 0;
}

static int compare_finding(const void *pa, const void *pb) {
  const bw__finding *a = pa, *b = pb;
  int c = compare_loc(&a->loc, &b->loc);
  if (!c)
    c = compare_str(a->rule->id, b->rule->id);
  if (!c)
    c = compare_str(a->callee, b->callee);
  if (!c)
    c = compare_str(a->callback, b->callback);
  if (!c)
    c = compare_loc(&a->callback_loc, &b->callback_loc);
  if (!c)
    c = compare_loc(&a->submit_loc, &b->submit_loc);
  if (!c)
    c = strcmp(a->fingerprint, b->fingerprint);
  return c;
}

static void finding_free(bw__finding *finding) {
  free(finding->chain);
  free(finding->message);
}

void bw__findings_sort(bw__findings *list) {
  if (!list->count)
    return;
  qsort(list->items, list->count, sizeof(bw__finding), compare_finding);
  size_t out = 1;
  for (size_t i = 1; i < list->count; i++) {
    if (compare_finding(&list->items[out - 1], &list->items[i]) == 0)
      finding_free(&list->items[i]);
    else
      list->items[out++] = list->items[i];
  }
  list->count = out;
}

void bw__findings_remove(bw__findings *list, size_t i) {
  finding_free(&list->items[i]);
  memmove(&list->items[i], &list->items[i + 1],
          (list->count - i - 1) * sizeof(bw__finding));
  list->count--;
}

void bw__findings_free(bw__findings *list) {
  for (size_t i = 0; i < list->count; i++)
    finding_free(&list->items[i]);
  free(list->items);
  memset(list, 0, sizeof(*list));
}

void bw__errors_add(bw__errors *list, const char *file, unsigned line,
                    unsigned col, const char *message) {
  bw__error *err = BW__PUSH(list->items, list->count, list->cap);
  err->file = file ? bw__xstrdup(file) : NULL;
  err->line = line;
  err->col = col;
  err->message = bw__xstrdup(message);
}

void bw__errors_free(bw__errors *list) {
  for (size_t i = 0; i < list->count; i++) {
    free(list->items[i].file);
    free(list->items[i].message);
  }
  free(list->items);
  memset(list, 0, sizeof(*list));
}
