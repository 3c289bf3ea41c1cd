/* main.c - blockscan's driver: options, rules, inputs, facts (parsed,
 * cached or read from facts files), analysis, filters, output, exit status.
 *
 * Invariants: the exit status is 2 when anything went wrong (bad options,
 * rules, inputs, a TU that did not parse) even if findings were printed, else
 * 1 with findings, else 0; TU facts are stored by input index, so the
 * result does not depend on which thread parsed what.
 */
/* realpath() (for --srcroot) is XSI. */
#define _XOPEN_SOURCE 700
#include "analyze.h"
#include "config.h"
#include "diff.h"
#include "exclude.h"
#include "filter.h"
#include "inputs.h"
#include "options.h"
#include "parse.h"
#include "tus.h"
#include "list_rules.h"
#include "program.h"
#include "report.h"
#include "util.h"

#include <blockwatch/rules.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef BLOCKSCAN_VERSION
#define BLOCKSCAN_VERSION "0.0.0"
#endif

static unsigned cpu_count(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (unsigned)n : 1;
}

/* Progress, when asked: on a terminal one line rewritten in place, else
 * one "[n/N] file" line per TU (a CI log keeps them all). */
static bwsc__progress progress_of(const bwsc__options *opts) {
  if (opts->quiet)
    return BWSC__PROGRESS_OFF;
  if (isatty(STDERR_FILENO))
    return BWSC__PROGRESS_IN_PLACE;
  return opts->progress ? BWSC__PROGRESS_LINES : BWSC__PROGRESS_OFF;
}

/* ---- rules -------------------------------------------------------------- */

static void print_rules_error(void *ctx, const bw_rules_error *err) {
  (void)ctx;
  fprintf(stderr, "blockscan: %s\n", err->formatted);
}

/* Loads the embedded packs (unless --no-default-rules), then --rules
 * files, then --enable/--disable.
 * Returns NULL after printing an error. */
static bw_rules *load_rules(const bwsc__options *opts, bwsc__errors *errors) {
  bw_rules *rules = bw_rules_create();
  if (!rules) {
    fputs("blockscan: error: out of memory\n", stderr);
    return NULL;
  }
  bw_rules_set_error_callback(rules, print_rules_error, NULL);
  int ok = opts->no_default_rules || bw_rules_load_default(rules, NULL) == 0;
  for (size_t i = 0; ok && i < opts->nrules; i++) {
    if (bw_rules_load_file(rules, opts->rules[i]) != 0) {
      bwsc__errors_add(errors, opts->rules[i], 0, 0,
                       "cannot load this rules file (see above)");
      ok = 0;
    }
  }
  for (size_t i = 0; ok && i < opts->nenable + opts->ndisable; i++) {
    int on = i < opts->nenable;
    const char *name = on ? opts->enable[i] : opts->disable[i - opts->nenable];
    bw_rule_category cat;
    if (bw_rule_category_parse(name, &cat) != 0) {
      fprintf(stderr, "blockscan: error: unknown category '%s' (--%s)\n", name,
              on ? "enable" : "disable");
      ok = 0;
    } else {
      bw_rules_set_category(rules, cat, on);
    }
  }
  if (!ok) {
    bw_rules_free(rules);
    return NULL;
  }
  return rules;
}

/* ---- output -------------------------------------------------------------- */

static int write_report(const bwsc__options *opts, const bwsc__report *report,
                        FILE *out) {
  int rc = 0;
  switch (opts->format) {
  case BWSC__FORMAT_TEXT:
    bwsc__write_text(report, out);
    break;
  case BWSC__FORMAT_JSON:
    rc = bwsc__write_json(report, out);
    break;
  case BWSC__FORMAT_SARIF:
    rc = bwsc__write_sarif(report, out);
    break;
  }
  if (opts->summary)
    bwsc__write_summary(report,
                        opts->format == BWSC__FORMAT_TEXT ? out : stderr);
  return rc;
}

static int use_color(const bwsc__options *opts, FILE *out) {
  if (opts->color != BWSC__COLOR_AUTO)
    return opts->color == BWSC__COLOR_ALWAYS;
  const char *term = getenv("TERM");
  return out == stdout && isatty(fileno(out)) && !getenv("NO_COLOR") &&
         !(term && strcmp(term, "dumb") == 0);
}

/* ---- main ---------------------------------------------------------------- */

/* --extra-arg-before / --extra-arg around each TU's own arguments. */
static void add_extra_args(const bwsc__options *opts, bwsc__inputs *inputs) {
  if (!opts->nextra_before && !opts->nextra_after)
    return;
  for (size_t i = 0; i < inputs->count; i++) {
    bwsc__tu_input *input = &inputs->items[i];
    size_t n = opts->nextra_before + input->nargs + opts->nextra_after;
    char **args = bwsc__xcalloc(n + 1, sizeof(char *));
    size_t k = 0;
    for (size_t a = 0; a < opts->nextra_before; a++)
      args[k++] = bwsc__xstrdup(opts->extra_before[a]);
    for (size_t a = 0; a < input->nargs; a++)
      args[k++] = input->args[a];
    for (size_t a = 0; a < opts->nextra_after; a++)
      args[k++] = bwsc__xstrdup(opts->extra_after[a]);
    free(input->args);
    input->args = args;
    input->nargs = k;
  }
}

/* Each failed TU's diagnostics, then one line naming the TU itself: a
 * header's error does not say which TU included it. */
static void facts_errors(const bwsc__tu_facts *facts, size_t n,
                         bwsc__errors *errors) {
  for (size_t t = 0; t < n; t++) {
    for (size_t d = 0; d < facts[t].ndiags; d++) {
      const bwsc__diag_fact *diag = &facts[t].diags[d];
      bwsc__errors_add(errors, diag->loc.file, diag->loc.line, diag->loc.col,
                       diag->message);
    }
    if (facts[t].failed)
      bwsc__errors_add(errors, facts[t].file, 0, 0,
                       "this translation unit did not parse and is left out of "
                       "the analysis");
  }
}

/* Errors found before the analysis, each on its own line. */
static void print_errors(const bwsc__errors *errors) {
  for (size_t i = 0; i < errors->count; i++) {
    const bwsc__error *err = &errors->items[i];
    if (err->file && err->line)
      fprintf(stderr, "blockscan: error: %s:%u: %s\n", err->file, err->line,
              err->message);
    else if (err->file)
      fprintf(stderr, "blockscan: error: %s: %s\n", err->file, err->message);
    else
      fprintf(stderr, "blockscan: error: %s\n", err->message);
  }
}

/* What main() holds; all of it starts zeroed and is freed by run_free(),
 * the one way out, however far the run got. */
typedef struct run {
  bwsc__options opts;
  bwsc__config config;
  bwsc__errors errors;
  bwsc__inputs inputs;
  bwsc__changes changes;
  bw_rules *rules;
  FILE *out;
} run;

static void run_free(run *r) {
  if (r->out && r->out != stdout)
    fclose(r->out);
  bwsc__changes_free(&r->changes);
  bwsc__inputs_free(&r->inputs);
  bwsc__errors_free(&r->errors);
  bw_rules_free(r->rules);
  bwsc__config_free(&r->config);
  bwsc__options_free(&r->opts);
}

/* Facts, analysis, filters and the report; returns the exit status. */
static int analyse(run *r, const char *srcroot) {
  const bwsc__options *opts = &r->opts;
  bwsc__errors *errors = &r->errors;
  int diffing = opts->diff_rev || opts->diff_file;
  bwsc__tu_stats stats = {0};
  size_t ntus = 0;
  bwsc__tu_facts *facts = NULL;
  bwsc__program prog;
  bwsc__program_init(&prog);
  if (opts->facts) {
    facts = bwsc__tus_load(opts->paths, opts->npaths, &ntus, errors);
    stats.loaded = ntus;
  } else {
    ntus = r->inputs.count;
    facts = bwsc__xcalloc(ntus + 1, sizeof(bwsc__tu_facts));
    char *cache_dir = bwsc__cache_dir(opts);
    bwsc__cache *cache = cache_dir ? bwsc__cache_open(cache_dir) : NULL;
    free(cache_dir);
    bwsc__parse_init();
    bwsc__report where = {NULL, NULL, NULL, 0, srcroot, 0};
    bwsc__tus_gather(&r->inputs, facts, opts->jobs ? opts->jobs : cpu_count(),
                     cache, &stats, progress_of(opts), &where, &prog);
    bwsc__cache_close(cache);
  }
  if (opts->stats)
    fprintf(stderr,
            "blockscan: %zu translation unit%s: %zu parsed, %zu from the "
            "cache, %zu from facts files\n",
            ntus, ntus == 1 ? "" : "s", stats.parsed, stats.cached,
            stats.loaded);
  facts_errors(facts, ntus, errors);

  bwsc__program_finish(&prog, facts, ntus);
  bwsc__findings findings = {0};
  if (bwsc__analyze(&prog, r->rules, &findings) == 0 && !opts->quiet)
    fprintf(stderr,
            "blockscan: no callback handed to a pool or loop was found in %zu "
            "translation unit%s; APIs without rules are not seen (see "
            "--list-rules)\n",
            ntus, ntus == 1 ? "" : "s");
  bwsc__suppress_apply(&findings, facts, ntus);
  /* --exclude also covers findings in a header an analysed TU includes. */
  for (size_t i = 0; i < findings.count;) {
    if (bwsc__excluded(opts, findings.items[i].loc.file))
      bwsc__findings_remove(&findings, i);
    else
      i++;
  }
  bwsc__findings_sort(&findings);
  /* git has been running beside the analysis: its output is read now. */
  if (diffing) {
    bwsc__changes_finish(&r->changes, errors);
    bwsc__changes_filter(&r->changes, &findings);
  }
  size_t hidden = opts->low_confidence ? 0 : bwsc__findings_drop_low(&findings);
  if (hidden && !opts->quiet)
    fprintf(stderr,
            "blockscan: %zu blocking call%s reached with low confidence only "
            "%s not shown (--confidence low shows %s)\n",
            hidden, hidden == 1 ? "" : "s", hidden == 1 ? "is" : "are",
            hidden == 1 ? "it" : "them");

  if (opts->baseline && bwsc__baseline_apply(&findings, opts->baseline) != 0) {
    char *message =
        bwsc__xasprintf("cannot read baseline file: %s", strerror(errno));
    bwsc__errors_add(errors, opts->baseline, 0, 0, message);
    free(message);
  }
  if (opts->write_baseline &&
      bwsc__baseline_write(&findings, opts->write_baseline) != 0) {
    char *message =
        bwsc__xasprintf("cannot write baseline file: %s", strerror(errno));
    bwsc__errors_add(errors, opts->write_baseline, 0, 0, message);
    free(message);
  }

  /* Baselines hold one fingerprint per (site, callback), as they always
   * have, so they are applied and written before grouping. */
  bwsc__findings_group(&findings);

  int status = 0;
  bwsc__report report = {&findings, errors, r->rules, use_color(opts, r->out),
                         srcroot,   ntus};
  if (write_report(opts, &report, r->out) != 0)
    status = 2;
  FILE *out = r->out;
  r->out = NULL;
  if (out != stdout && fclose(out) != 0)
    status = 2;
  /* Errors also go to stderr when the report is a file or not text, in
   * the text report's own words: a reader (or an editor parsing
   * file:line) sees one form whatever the format. */
  if (errors->count && (out != stdout || opts->format != BWSC__FORMAT_TEXT)) {
    bwsc__findings none = {0};
    bwsc__report only_errors = {&none, errors, r->rules, 0, srcroot, 0};
    bwsc__write_text(&only_errors, stderr);
  }

  if (errors->count || status)
    status = 2;
  else if (findings.count)
    status = 1;

  bwsc__findings_free(&findings);
  bwsc__program_free(&prog);
  for (size_t i = 0; i < ntus; i++)
    bwsc__facts_free(&facts[i]);
  free(facts);
  return status;
}

/* Everything before the analysis: options, .blockscan, rules, inputs, the
 * change and the report file. Returns -1 to go on to the analysis, or the
 * exit status of a run that ends here. */
static int prepare(run *r, int argc, char **argv, const char **srcroot,
                   char *cwd, char *root) {
  bwsc__options *opts = &r->opts;
  if (bwsc__options_parse(opts, argc, argv) != 0) {
    fputs("blockscan: try 'blockscan --help'\n", stderr);
    return 2;
  }
  if (opts->help || opts->version) {
    if (opts->help)
      bwsc__options_usage(stdout);
    else
      printf("blockscan %s\n", BLOCKSCAN_VERSION);
    return 0;
  }
  if (opts->emit_facts) {
    if (opts->nextra)
      return bwsc__tus_emit(opts->emit_facts, opts->extra, opts->nextra);
    fputs("blockscan: error: --emit-facts needs a compile command after --\n",
          stderr);
    return 2;
  }
  /* Taken first: paths are printed relative to where the user ran
   * blockscan, and .blockscan is looked for from there. */
  *srcroot = getcwd(cwd, PATH_MAX) ? cwd : NULL;
  /* Read after the command line, which it must not override. */
  if (!opts->no_config && *srcroot &&
      bwsc__config_apply(&r->config, opts, *srcroot) != 0)
    return 2;
  /* --srcroot: paths are printed relative to it instead (and are SARIF's
   * %SRCROOT%). Made absolute, as the current directory is. */
  if (opts->srcroot) {
    if (!realpath(opts->srcroot, root)) {
      fprintf(stderr, "blockscan: error: --srcroot '%s': %s\n", opts->srcroot,
              strerror(errno));
      return 2;
    }
    *srcroot = root;
  }
  if (opts->npaths == 0 && !opts->build_dir && !opts->list_rules) {
    fputs("blockscan: error: no input files (give files, directories or "
          "-p BUILD_DIR)\n",
          stderr);
    return 2;
  }
  if (!(r->rules = load_rules(opts, &r->errors))) {
    print_errors(&r->errors);
    return 2;
  }
  if (opts->list_rules) {
    bwsc__list_rules(r->rules, stdout);
    return 0;
  }
  if (!opts->facts) {
    bwsc__inputs_collect(opts, &r->inputs, &r->errors);
    add_extra_args(opts, &r->inputs);
  }
  /* A --diff that cannot be read (a bad revision, no repository, a bad
   * patch) ends the run before any parsing. */
  if ((opts->diff_rev || opts->diff_file) &&
      bwsc__changes_load(&r->changes, opts, &r->inputs, &r->errors) != 0) {
    print_errors(&r->errors);
    return 2;
  }
  /* Opened before the analysis, which may take minutes: a report that
   * cannot be written should not cost them. */
  if (opts->output && !(r->out = fopen(opts->output, "w"))) {
    fprintf(stderr, "blockscan: error: cannot write '%s': %s\n", opts->output,
            strerror(errno));
    return 2;
  }
  if (!r->out)
    r->out = stdout;
  return -1;
}

int main(int argc, char **argv) {
  run r = {0};
  char cwd[PATH_MAX], root[PATH_MAX];
  const char *srcroot = NULL;
  int status = prepare(&r, argc, argv, &srcroot, cwd, root);
  if (status < 0)
    status = analyse(&r, srcroot);
  run_free(&r);
  return status;
}
