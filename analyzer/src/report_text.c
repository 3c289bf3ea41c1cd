/* report_text.c - the clang-style text report and the --summary tables.
 *
 * Invariant: one warning line per finding (a blocking call site and rule),
 * followed by its notes in a fixed order: the chain of its best callback
 * (its last step, the blocking call's own line, only when it is cold), that
 * callback's submit site, the hint.
 */
#include "report.h"

#include "util.h"

#include <stdlib.h>
#include <string.h>

#define BOLD "\033[1m"
#define MAGENTA "\033[1;35m"
#define CYAN "\033[1;36m"
#define RED "\033[1;31m"
#define RESET "\033[0m"

const char *bwsc__report_path(const bwsc__report *report, const char *file) {
  if (!file)
    return "<unknown>";
  const char *root = report->srcroot;
  size_t len = root ? strlen(root) : 0;
  if (len && strncmp(file, root, len) == 0 && file[len] == '/')
    return file + len + 1;
  return file;
}

static void location(const bwsc__report *report, FILE *out,
                     const bwsc__loc *loc) {
  if (report->color)
    fputs(BOLD, out);
  fprintf(out, "%s:%u:%u: ", bwsc__report_path(report, loc->file), loc->line,
          loc->col);
}

static void label(const bwsc__report *report, FILE *out, const char *color,
                  const char *text) {
  if (report->color)
    fprintf(out, "%s%s:" RESET BOLD " ", color, text);
  else
    fprintf(out, "%s: ", text);
}

static void end_line(const bwsc__report *report, FILE *out) {
  if (report->color)
    fputs(RESET, out);
  fputc('\n', out);
}

char *bwsc__report_step(const bwsc__finding *f, size_t s) {
  const bwsc__step *step = &f->chain[s];
  const char *to = s + 1 < f->nchain ? f->chain[s + 1].function : f->callee;
  char targets[64] = "";
  if (step->through && step->ntargets > 1)
    snprintf(targets, sizeof(targets), " (one of %zu possible targets)",
             step->ntargets);
  const char *cold =
      step->cold == BWSC__COLD_ASSERT     ? " in an assertion's failure branch"
      : step->cold == BWSC__COLD_NORETURN ? ", which never returns"
      : step->cold == BWSC__COLD_ONCE     ? " in a once-only initialisation"
                                          : "";
  if (step->through)
    return bwsc__xasprintf("'%s' calls through '%s' to '%s'%s%s",
                           step->function, step->through, to, targets, cold);
  return bwsc__xasprintf("'%s' calls '%s'%s", step->function, to, cold);
}

void bwsc__write_text(const bwsc__report *report, FILE *out) {
  for (size_t i = 0; i < report->errors->count; i++) {
    const bwsc__error *err = &report->errors->items[i];
    if (report->color)
      fputs(BOLD, out);
    if (err->file && err->line)
      fprintf(out, "%s:%u:%u: ", bwsc__report_path(report, err->file),
              err->line, err->col);
    else if (err->file)
      fprintf(out, "%s: ", bwsc__report_path(report, err->file));
    label(report, out, RED, "error");
    fputs(err->message, out);
    end_line(report, out);
  }
  for (size_t i = 0; i < report->findings->count; i++) {
    const bwsc__finding *f = &report->findings->items[i];
    const char *severity = bw_rule_severity_name(f->rule->severity);
    location(report, out, &f->loc);
    label(report, out,
          f->rule->severity == BW_SEVERITY_ERROR     ? RED
          : f->rule->severity == BW_SEVERITY_WARNING ? MAGENTA
                                                     : CYAN,
          severity ? severity : "warning");
    fprintf(out, "%s [%s%s]", f->message, f->rule->id,
            f->low ? ", low confidence" : "");
    end_line(report, out);
    /* The last step is the blocking call: a note only to say it is cold. */
    for (size_t s = 0; s + 1 < f->nchain || (s < f->nchain && f->chain[s].cold);
         s++) {
      location(report, out, &f->chain[s].loc);
      label(report, out, CYAN, "note");
      char *step = bwsc__report_step(f, s);
      fputs(step, out);
      free(step);
      end_line(report, out);
    }
    location(report, out, &f->submit_loc);
    label(report, out, CYAN, "note");
    if (strcmp(f->entry, "annotate") == 0)
      fprintf(out, "callback '%s' is annotated as a pool callback here",
              f->callback);
    else
      fprintf(out, "callback '%s' handed to '%s' here", f->callback, f->entry);
    end_line(report, out);
    location(report, out, &f->loc);
    label(report, out, CYAN, "note");
    fprintf(out, "hint: %s", f->hint);
    end_line(report, out);
  }
}

/* ---- --summary ----------------------------------------------------------- */

typedef struct tally {
  char *key;
  size_t count;
} tally;

typedef struct tallies {
  tally *items;
  size_t count, cap;
  bwsc__strmap index;
} tallies;

static void bump(tallies *t, const char *key) {
  size_t i;
  if (!bwsc__strmap_get(&t->index, key, &i)) {
    tally *item = BWSC__PUSH(t->items, t->count, t->cap);
    item->key = bwsc__xstrdup(key);
    i = t->count - 1;
    /* The map borrows item->key: a heap string that stays put when the
     * items array grows. */
    bwsc__strmap_put(&t->index, item->key, i);
  }
  t->items[i].count++;
}

static int by_count(const void *pa, const void *pb) {
  const tally *a = pa, *b = pb;
  if (a->count != b->count)
    return a->count > b->count ? -1 : 1;
  return strcmp(a->key, b->key);
}

static void print_tallies(FILE *out, const char *title, tallies *t,
                          size_t limit) {
  if (t->count)
    qsort(t->items, t->count, sizeof(tally), by_count);
  fprintf(out, "%s:\n", title);
  for (size_t i = 0; i < t->count && i < limit; i++)
    fprintf(out, "  %6zu  %s\n", t->items[i].count, t->items[i].key);
  for (size_t i = 0; i < t->count; i++)
    free(t->items[i].key);
  free(t->items);
  bwsc__strmap_free(&t->index);
}

void bwsc__write_summary(const bwsc__report *report, FILE *out) {
  tallies rules = {0}, dirs = {0}, callbacks = {0};
  for (size_t i = 0; i < report->findings->count; i++) {
    const bwsc__finding *f = &report->findings->items[i];
    bump(&rules, f->rule->id);
    char *dir = bwsc__xstrdup(bwsc__report_path(report, f->loc.file));
    char *slash = strrchr(dir, '/');
    if (slash)
      *slash = '\0';
    else
      strcpy(dir, ".");
    bump(&dirs, dir);
    free(dir);
    /* Every callback reaching the site counts, not only the one shown. */
    for (size_t v = 0; v < (f->nvias ? f->nvias : 1); v++) {
      const char *name = f->nvias ? f->vias[v].callback : f->callback;
      const bwsc__loc *loc =
          f->nvias ? &f->vias[v].callback_loc : &f->callback_loc;
      char *cb = bwsc__xasprintf(
          "%s (%s:%u)", name, bwsc__report_path(report, loc->file), loc->line);
      bump(&callbacks, cb);
      free(cb);
    }
  }
  fprintf(out, "blockscan summary: %zu finding%s, %zu error%s",
          report->findings->count, report->findings->count == 1 ? "" : "s",
          report->errors->count, report->errors->count == 1 ? "" : "s");
  if (report->ntus)
    fprintf(out, " in %zu translation unit%s", report->ntus,
            report->ntus == 1 ? "" : "s");
  fputc('\n', out);
  print_tallies(out, "by rule", &rules, (size_t)-1);
  print_tallies(out, "by directory", &dirs, (size_t)-1);
  print_tallies(out, "top callbacks", &callbacks, 10);
}
