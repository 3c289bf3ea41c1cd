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

static int compare_loc(const bwsc__loc *a, const bwsc__loc *b) {
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
  const bwsc__finding *a = pa, *b = pb;
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

static void finding_free(bwsc__finding *finding) {
  free(finding->chain);
  free(finding->message);
}

void bwsc__findings_sort(bwsc__findings *list) {
  if (!list->count)
    return;
  qsort(list->items, list->count, sizeof(bwsc__finding), compare_finding);
  size_t out = 1;
  for (size_t i = 1; i < list->count; i++) {
    if (compare_finding(&list->items[out - 1], &list->items[i]) == 0)
      finding_free(&list->items[i]);
    else
      list->items[out++] = list->items[i];
  }
  list->count = out;
}

void bwsc__findings_remove(bwsc__findings *list, size_t i) {
  finding_free(&list->items[i]);
  memmove(&list->items[i], &list->items[i + 1],
          (list->count - i - 1) * sizeof(bwsc__finding));
  list->count--;
}

void bwsc__findings_free(bwsc__findings *list) {
  for (size_t i = 0; i < list->count; i++)
    finding_free(&list->items[i]);
  free(list->items);
  memset(list, 0, sizeof(*list));
}

void bwsc__errors_add(bwsc__errors *list, const char *file, unsigned line,
                      unsigned col, const char *message) {
  bwsc__error *err = BWSC__PUSH(list->items, list->count, list->cap);
  err->file = file ? bwsc__xstrdup(file) : NULL;
  err->line = line;
  err->col = col;
  err->message = bwsc__xstrdup(message);
}

void bwsc__errors_free(bwsc__errors *list) {
  for (size_t i = 0; i < list->count; i++) {
    free(list->items[i].file);
    free(list->items[i].message);
  }
  free(list->items);
  memset(list, 0, sizeof(*list));
}
