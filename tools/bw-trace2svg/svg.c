/* svg.c - draws the timeline: a heading, one row of waiting items per pool,
 * one lane per thread with its blocked spans, one step chart per counter
 * (its 0 and maximum on its axis), and a time axis.
 *
 * Invariants: x positions come only from x_of(), so spans, counters and the
 * axis agree; every string from the trace goes through put_escaped().
 */
#include "svg.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#define MIN_MARGIN_LEFT                                                        \
  120.0 /* the label column grows to its longest label                         \
         */
#define MAX_MARGIN_LEFT 420.0
#define MARGIN_RIGHT 30.0
#define HEADER_H 64.0
#define LANE_H 20.0
#define LANE_GAP 6.0
#define COUNTER_H 44.0
#define AXIS_H 40.0
#define CHAR_W 6.5 /* rough width of one 11px character, for label fitting */

#define COLOR_BLOCKED "#d9534f"
#define COLOR_WAIT "#f0ad4e"
#define COLOR_COUNTER "#337ab7"
#define COLOR_TEXT "#222222"
#define COLOR_GRID "#dddddd"

typedef struct canvas {
  FILE *out;
  double width;
  double t_begin;
  double t_span; /* > 0 */
  double left;   /* x where the plot starts; row labels end just before */
  double plot_w;
} canvas;

static double x_of(const canvas *c, double t_us) {
  return c->left + (t_us - c->t_begin) / c->t_span * c->plot_w;
}

static void put_escaped(FILE *out, const char *s) {
  for (; s != NULL && *s; s++) {
    switch (*s) {
    case '&':
      fputs("&amp;", out);
      break;
    case '<':
      fputs("&lt;", out);
      break;
    case '>':
      fputs("&gt;", out);
      break;
    case '"':
      fputs("&quot;", out);
      break;
    case '\'':
      fputs("&apos;", out);
      break;
    default:
      /* XML 1.0 forbids most control characters even when escaped. */
      if ((unsigned char)*s >= 0x20 || *s == '\t' || *s == '\n')
        fputc(*s, out);
      break;
    }
  }
}

/* "250 ms", "1.5 s", "800 us": the unit follows the size of the value. */
static void format_duration(char *buf, size_t size, double us) {
  if (us >= 1e6)
    snprintf(buf, size, "%.3g s", us / 1e6);
  else if (us >= 1e3)
    snprintf(buf, size, "%.1f ms", us / 1e3);
  else
    snprintf(buf, size, "%.0f us", us);
}

/* A tick step of 1, 2 or 5 times a power of ten giving about 8 ticks. */
static double tick_step(double span_us) {
  double raw = span_us / 8.0;
  double mag = pow(10.0, floor(log10(raw)));
  if (raw / mag >= 5)
    return 5 * mag;
  if (raw / mag >= 2)
    return 2 * mag;
  return mag;
}

/* One rect with a tooltip; its "name duration" label goes inside when it
 * fits, and for waits (always_label) beside it otherwise. */
static void put_span(canvas *c, const t2s_span *s, double y, const char *cls,
                     const char *color, int always_label) {
  double x = x_of(c, s->start_us);
  double w = s->dur_us / c->t_span * c->plot_w;
  if (w < 1.0)
    w = 1.0; /* a short block must still be visible */
  char dur[32];
  format_duration(dur, sizeof dur, s->dur_us);
  fprintf(c->out,
          "  <rect class=\"span %s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
          "height=\"%.0f\" fill=\"%s\" stroke=\"#00000040\"><title>",
          cls, x, y, w, LANE_H, color);
  put_escaped(c->out, s->name);
  fprintf(c->out, " %s", dur);
  if (s->detail != NULL) {
    fputc(' ', c->out);
    put_escaped(c->out, s->detail);
  }
  fputs("</title></rect>\n", c->out);

  char label[160];
  snprintf(label, sizeof label, "%s %s", s->name ? s->name : "?", dur);
  double label_w = (double)strlen(label) * CHAR_W;
  if (label_w + 6 > w && !always_label && s->name != NULL &&
      (double)strlen(s->name) * CHAR_W + 6 <= w) {
    snprintf(label, sizeof label, "%s", s->name); /* drop the duration */
    label_w = (double)strlen(label) * CHAR_W;
  }
  if (label_w + 6 <= w) {
    fprintf(c->out,
            "  <text x=\"%.2f\" y=\"%.2f\" font-size=\"11\" fill=\"#ffffff\">",
            x + 3, y + LANE_H - 6);
    put_escaped(c->out, label);
    fputs("</text>\n", c->out);
  } else if (always_label) {
    /* Waits are the point of the picture: label them even when narrow, on
     * the side where the label fits. */
    int right = x + w + 4 + label_w <= c->width;
    fprintf(c->out,
            "  <text x=\"%.2f\" y=\"%.2f\" font-size=\"11\" "
            "text-anchor=\"%s\" fill=\"%s\">",
            right ? x + w + 4 : x - 4, y + LANE_H - 6, right ? "start" : "end",
            COLOR_TEXT);
    put_escaped(c->out, label);
    fputs("</text>\n", c->out);
  }
}

/* The row label of the waits named `name`: "waiting items", and the pool
 * when the name carries one ("queue wait (exp)": "waiting items (exp)"). */
static void wait_row_label(const char *name, char *buf, size_t size) {
  const char *pool = name != NULL ? strchr(name, '(') : NULL;
  snprintf(buf, size, pool ? "waiting items %s" : "waiting items", pool);
}

/* 1 when waits[i] starts a row: no earlier wait has its name (in any
 * case, as the loader matches them). */
static int first_of_its_row(const t2s_trace *t, size_t i) {
  for (size_t k = 0; k < i; k++)
    if (strcasecmp(t->waits[k].name, t->waits[i].name) == 0)
      return 0;
  return 1;
}

static size_t wait_rows(const t2s_trace *t) {
  size_t rows = 0;
  for (size_t i = 0; i < t->n_waits; i++)
    rows += first_of_its_row(t, i);
  return rows;
}

/* The label a counter row shows. */
static void counter_label(const t2s_counter *ctr, char *buf, size_t size) {
  snprintf(buf, size, "%s (max %g)", ctr->name, ctr->max_value);
}

/* Wide enough for the longest row label at 12px, within bounds. */
static double label_column(const t2s_trace *t) {
  size_t longest = strlen("waiting items");
  for (size_t i = 0; i < t->n_waits; i++) {
    char label[300];
    wait_row_label(t->waits[i].name, label, sizeof label);
    if (strlen(label) > longest)
      longest = strlen(label);
  }
  for (size_t i = 0; i < t->n_lanes; i++) {
    if (strlen(t->lanes[i].name) > longest)
      longest = strlen(t->lanes[i].name);
  }
  for (size_t i = 0; i < t->n_counters; i++) {
    char label[300];
    counter_label(&t->counters[i], label, sizeof label);
    if (strlen(label) > longest)
      longest = strlen(label);
  }
  double w = (double)longest * 7.0 + 20;
  return w < MIN_MARGIN_LEFT   ? MIN_MARGIN_LEFT
         : w > MAX_MARGIN_LEFT ? MAX_MARGIN_LEFT
                               : w;
}

static void put_row_label(canvas *c, double y, const char *name) {
  fprintf(c->out,
          "  <text class=\"lane-label\" x=\"%.0f\" y=\"%.2f\" "
          "font-size=\"12\" text-anchor=\"end\" fill=\"%s\">",
          c->left - 8, y + LANE_H - 6, COLOR_TEXT);
  put_escaped(c->out, name);
  fputs("</text>\n", c->out);
}

static void put_row_background(canvas *c, double y, double h, size_t row) {
  fprintf(c->out,
          "  <rect class=\"lane-bg\" x=\"%.0f\" y=\"%.2f\" width=\"%.2f\" "
          "height=\"%.0f\" fill=\"%s\"/>\n",
          c->left, y, c->plot_w, h, row % 2 ? "#ffffff" : "#f4f4f4");
}

/* One row per name of waits (one per pool), in order of their first. */
static double put_waits(canvas *c, const t2s_trace *t, double y) {
  for (size_t i = 0; i < t->n_waits; i++) {
    if (!first_of_its_row(t, i))
      continue;
    char label[300];
    wait_row_label(t->waits[i].name, label, sizeof label);
    fputs(" <g class=\"waits\">\n", c->out);
    put_row_background(c, y, LANE_H, 1);
    put_row_label(c, y, label);
    for (size_t k = i; k < t->n_waits; k++)
      if (strcasecmp(t->waits[k].name, t->waits[i].name) == 0)
        put_span(c, &t->waits[k], y, "queue-wait", COLOR_WAIT, 1);
    fputs(" </g>\n", c->out);
    y += LANE_H + LANE_GAP;
  }
  return y;
}

static double put_lanes(canvas *c, const t2s_trace *t, double y) {
  for (size_t i = 0; i < t->n_lanes; i++) {
    const t2s_lane *lane = &t->lanes[i];
    fprintf(c->out, " <g class=\"lane\" data-tid=\"%lld\">\n",
            (long long)lane->tid);
    put_row_background(c, y, LANE_H, i);
    put_row_label(c, y, lane->name);
    for (size_t k = 0; k < lane->n_spans; k++)
      put_span(c, &lane->spans[k], y, "blocked", COLOR_BLOCKED, 0);
    fputs(" </g>\n", c->out);
    y += LANE_H + LANE_GAP;
  }
  return y;
}

/* The values at the bottom (0) and top (top) of a counter row, just inside
 * the plot, with a tick each. %g rounds to 6 digits: no 250.18000000000001. */
static void put_counter_axis(canvas *c, double y, double top) {
  double base = y + COUNTER_H;
  double at[2] = {base, base - (COUNTER_H - 4)};
  double value[2] = {0, top};
  fputs("  <g class=\"counter-axis\">\n", c->out);
  for (int i = 0; i < 2; i++)
    fprintf(c->out,
            "   <line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
            "stroke=\"%s\"/>\n"
            "   <text class=\"counter-value\" x=\"%.2f\" y=\"%.2f\" "
            "font-size=\"9\" fill=\"%s\">%g</text>\n",
            c->left, at[i], c->left + 4, at[i], COLOR_TEXT, c->left + 6,
            i ? at[i] + 8 : at[i] - 2, COLOR_TEXT, value[i]);
  fputs("  </g>\n", c->out);
}

/* A step chart: the value holds from one point to the next. */
static double put_counters(canvas *c, const t2s_trace *t, double y) {
  for (size_t i = 0; i < t->n_counters; i++) {
    const t2s_counter *ctr = &t->counters[i];
    double top = ctr->max_value > 0 ? ctr->max_value : 1;
    double base = y + COUNTER_H;
    fputs(" <g class=\"counter-row\">\n", c->out);
    put_row_background(c, y, COUNTER_H, 1);
    char label[300];
    counter_label(ctr, label, sizeof label);
    put_row_label(c, y + COUNTER_H / 2 - LANE_H / 2 + 4, label);
    put_counter_axis(c, y, top);
    fprintf(c->out,
            "  <path class=\"counter\" fill=\"none\" stroke=\"%s\" "
            "stroke-width=\"1.5\" d=\"",
            COLOR_COUNTER);
    double prev_y = base;
    for (size_t k = 0; k < ctr->n_points; k++) {
      double px = x_of(c, ctr->points[k].ts_us);
      double py = base - ctr->points[k].value / top * (COUNTER_H - 4);
      if (k == 0)
        fprintf(c->out, "M%.2f %.2f", px, py);
      else
        fprintf(c->out, " L%.2f %.2f L%.2f %.2f", px, prev_y, px, py);
      prev_y = py;
    }
    if (ctr->n_points > 0)
      fprintf(c->out, " L%.2f %.2f", x_of(c, c->t_begin + c->t_span), prev_y);
    fputs("\"><title>", c->out);
    put_escaped(c->out, ctr->name);
    fprintf(c->out, ": %zu samples, max %g</title></path>\n </g>\n",
            ctr->n_points, ctr->max_value);
    y += COUNTER_H + LANE_GAP;
  }
  return y;
}

/* Tick labels: "0", "250 ms", "1.5 s". */
static void format_tick(char *buf, size_t size, double us) {
  if (us == 0)
    snprintf(buf, size, "0");
  else if (us >= 1e6)
    snprintf(buf, size, "%g s", us / 1e6);
  else if (us >= 1e3)
    snprintf(buf, size, "%g ms", us / 1e3);
  else
    snprintf(buf, size, "%g us", us);
}

/* Vertical grid lines, drawn before the rows so spans cover them. */
static void put_grid(canvas *c, double y_top, double y) {
  double step = tick_step(c->t_span);
  fputs(" <g class=\"grid\">\n", c->out);
  for (double t = 0; t <= c->t_span + step / 1e6; t += step) {
    double x = x_of(c, c->t_begin + t);
    fprintf(c->out,
            "  <line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
            "stroke=\"%s\"/>\n",
            x, y_top, x, y, COLOR_GRID);
  }
  fputs(" </g>\n", c->out);
}

static void put_axis(canvas *c, double y) {
  double step = tick_step(c->t_span);
  fputs(" <g class=\"axis\">\n", c->out);
  fprintf(c->out,
          "  <line x1=\"%.0f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
          "stroke=\"%s\"/>\n",
          c->left, y, c->left + c->plot_w, y, COLOR_TEXT);
  for (double t = 0; t <= c->t_span + step / 1e6; t += step) {
    double x = x_of(c, c->t_begin + t);
    char label[32];
    format_tick(label, sizeof label, t);
    fprintf(c->out,
            "  <line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
            "stroke=\"%s\"/>\n"
            "  <text class=\"tick\" x=\"%.2f\" y=\"%.2f\" font-size=\"11\" "
            "text-anchor=\"middle\" fill=\"%s\">%s</text>\n",
            x, y, x, y + 5, COLOR_TEXT, x, y + 18, COLOR_TEXT, label);
  }
  fprintf(c->out,
          "  <text x=\"%.2f\" y=\"%.2f\" font-size=\"11\" "
          "text-anchor=\"end\" fill=\"%s\">time since the first event</text>\n",
          c->left + c->plot_w, y + 34, COLOR_TEXT);
  fputs(" </g>\n", c->out);
}

static void put_header(canvas *c, const t2s_trace *t, const char *title) {
  size_t spans = 0;
  double blocked_us = 0, longest_wait = 0;
  for (size_t i = 0; i < t->n_lanes; i++) {
    spans += t->lanes[i].n_spans;
    for (size_t k = 0; k < t->lanes[i].n_spans; k++)
      blocked_us += t->lanes[i].spans[k].dur_us;
  }
  for (size_t i = 0; i < t->n_waits; i++) {
    if (t->waits[i].dur_us > longest_wait)
      longest_wait = t->waits[i].dur_us;
  }
  char blocked[32], wait[32];
  format_duration(blocked, sizeof blocked, blocked_us);
  format_duration(wait, sizeof wait, longest_wait);
  fprintf(c->out,
          " <text class=\"title\" x=\"12\" y=\"24\" font-size=\"16\" "
          "font-weight=\"bold\" fill=\"%s\">",
          COLOR_TEXT);
  put_escaped(c->out, title);
  fprintf(c->out,
          "</text>\n <text class=\"summary\" x=\"12\" y=\"44\" "
          "font-size=\"12\" fill=\"%s\">%zu threads, %zu blocked spans "
          "(%s blocked in all)%s%s%s</text>\n",
          COLOR_TEXT, t->n_lanes, spans, blocked,
          t->n_waits ? "; longest queue wait " : "", t->n_waits ? wait : "",
          spans + t->n_waits == 0 ? "; nothing blocked" : "");
  /* Legend, top right; the wait entry only when the trace has waits. */
  double lx = c->width - MARGIN_RIGHT - 250;
  fprintf(c->out,
          " <g class=\"legend\">\n"
          "  <rect x=\"%.0f\" y=\"14\" width=\"12\" height=\"12\" "
          "fill=\"%s\"/>\n"
          "  <text x=\"%.0f\" y=\"24\" font-size=\"12\" fill=\"%s\">blocked "
          "call</text>\n",
          lx, COLOR_BLOCKED, lx + 16, COLOR_TEXT);
  if (t->n_waits > 0)
    fprintf(c->out,
            "  <rect x=\"%.0f\" y=\"14\" width=\"12\" height=\"12\" "
            "fill=\"%s\"/>\n"
            "  <text x=\"%.0f\" y=\"24\" font-size=\"12\" fill=\"%s\">item "
            "waiting in queue</text>\n",
            lx + 100, COLOR_WAIT, lx + 116, COLOR_TEXT);
  fputs(" </g>\n", c->out);
}

int t2s_svg_render(const t2s_trace *t, const t2s_svg_options *opts, FILE *out) {
  unsigned width = opts && opts->width ? opts->width : 1200;
  const char *title = opts && opts->title ? opts->title : "blockwatch timeline";
  canvas c = {.out = out,
              .width = width,
              .t_begin = t->t_begin,
              .t_span = t->t_end > t->t_begin ? t->t_end - t->t_begin : 1.0,
              .left = label_column(t)};
  c.plot_w = width - c.left - MARGIN_RIGHT;
  if (c.plot_w < 100)
    c.plot_w = 100;
  double rows_h = (double)wait_rows(t) * (LANE_H + LANE_GAP) +
                  (double)t->n_lanes * (LANE_H + LANE_GAP) +
                  (double)t->n_counters * (COUNTER_H + LANE_GAP);
  double height = HEADER_H + rows_h + AXIS_H + 10;

  fprintf(out,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" "
          "height=\"%.0f\" viewBox=\"0 0 %u %.0f\" "
          "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
          " <rect class=\"background\" width=\"100%%\" height=\"100%%\" "
          "fill=\"#ffffff\"/>\n",
          width, height, width, height);
  put_header(&c, t, title);
  put_grid(&c, HEADER_H, HEADER_H + rows_h + 2);
  double y = HEADER_H;
  y = put_waits(&c, t, y);
  y = put_lanes(&c, t, y);
  y = put_counters(&c, t, y);
  put_axis(&c, y + 2);
  fputs("</svg>\n", out);
  return ferror(out) ? -1 : 0;
}
