/* table.h - samples per (row, column) and the plain-text tables printed
 * from them.
 *
 * A cell keeps every sample so that the printed figure is a median (robust
 * against the one run a noisy 2-core machine spoils) and the spread can be
 * shown. A cell's rc says why it has no samples: -ENOTSUP prints "n/a",
 * any other error "FAIL".
 */
#ifndef BW_BENCH_RUNTIME_TABLE_H
#define BW_BENCH_RUNTIME_TABLE_H

#include <stddef.h>

#define TABLE_MAX_SAMPLES 64
#define TABLE_MAX_ROWS 16
#define TABLE_MAX_COLS 10

typedef struct table_cell {
  double samples[TABLE_MAX_SAMPLES];
  size_t count;
  int rc; /* 0, or the first error an operation returned */
} table_cell;

typedef struct table {
  const char *corner; /* heading of the row-name column */
  size_t rows, cols;
  char row_names[TABLE_MAX_ROWS][48];
  const char *col_names[TABLE_MAX_COLS];
  table_cell cells[TABLE_MAX_ROWS][TABLE_MAX_COLS];
} table;

/* Adds a sample (rc 0) or records the failure (rc < 0) of one run. */
void table_add(table *t, size_t row, size_t col, int rc, double value);

/* The median of a cell; returns 0 and sets *out, or the cell's rc (or
 * -ENODATA when it has no samples). */
int table_median(const table *t, size_t row, size_t col, double *out);

/* Prints the medians, each multiplied by scale, with printf format fmt
 * (e.g. "%.1f"). */
void table_print(const table *t, double scale, const char *fmt);

/* Prints each cell's median divided by the median of column `base` in the
 * same row ("2.10x": the column takes 2.1 times as long as the base). */
void table_print_ratio(const table *t, size_t base);

#endif /* BW_BENCH_RUNTIME_TABLE_H */
