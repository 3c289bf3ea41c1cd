/* table.c - medians and plain-text tables for the runtime benchmark.
 *
 * Column widths follow the longest heading so that the table stays aligned
 * whatever peers were built in.
 */
#include "table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void table_add(table *t, size_t row, size_t col, int rc, double value) {
  table_cell *cell = &t->cells[row][col];
  if (rc != 0) {
    if (cell->rc == 0)
      cell->rc = rc;
    return;
  }
  if (cell->count < TABLE_MAX_SAMPLES)
    cell->samples[cell->count++] = value;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int table_median(const table *t, size_t row, size_t col, double *out) {
  const table_cell *cell = &t->cells[row][col];
  if (cell->rc != 0)
    return cell->rc;
  if (cell->count == 0)
    return -ENODATA;
  double sorted[TABLE_MAX_SAMPLES];
  memcpy(sorted, cell->samples, cell->count * sizeof sorted[0]);
  qsort(sorted, cell->count, sizeof sorted[0], compare_double);
  size_t mid = cell->count / 2;
  *out = cell->count % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return 0;
}

static int name_width(const table *t) {
  int width = (int)strlen(t->corner);
  for (size_t r = 0; r < t->rows; r++)
    if ((int)strlen(t->row_names[r]) > width)
      width = (int)strlen(t->row_names[r]);
  return width;
}

static int col_width(const table *t, size_t col) {
  int width = (int)strlen(t->col_names[col]);
  return width < 10 ? 10 : width;
}

static void print_heading(const table *t) {
  printf("  %-*s", name_width(t), t->corner);
  for (size_t c = 0; c < t->cols; c++)
    printf("  %*s", col_width(t, c), t->col_names[c]);
  printf("\n");
}

/* The text for a cell without a median. */
static const char *missing(int rc) {
  return rc == -ENOTSUP ? "n/a" : "FAIL";
}

void table_print(const table *t, double scale, const char *fmt) {
  print_heading(t);
  for (size_t r = 0; r < t->rows; r++) {
    printf("  %-*s", name_width(t), t->row_names[r]);
    for (size_t c = 0; c < t->cols; c++) {
      char text[32];
      double median;
      int rc = table_median(t, r, c, &median);
      if (rc == 0)
        snprintf(text, sizeof text, fmt, median * scale);
      else
        snprintf(text, sizeof text, "%s", missing(rc));
      printf("  %*s", col_width(t, c), text);
    }
    printf("\n");
  }
}

void table_print_ratio(const table *t, size_t base) {
  print_heading(t);
  for (size_t r = 0; r < t->rows; r++) {
    double base_median;
    int base_rc = table_median(t, r, base, &base_median);
    printf("  %-*s", name_width(t), t->row_names[r]);
    for (size_t c = 0; c < t->cols; c++) {
      char text[32];
      double median;
      int rc = table_median(t, r, c, &median);
      if (rc == 0 && base_rc == 0 && base_median > 0)
        snprintf(text, sizeof text, "%.2fx", median / base_median);
      else
        snprintf(text, sizeof text, "%s", missing(rc ? rc : base_rc));
      printf("  %*s", col_width(t, c), text);
    }
    printf("\n");
  }
}
