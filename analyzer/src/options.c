/* options.c - parsing blockscan's command line with getopt_long, from one
 * table that also writes --help.
 *
 * Invariants: every option is one row of `rows` (its name, value and help
 * text) and one case of set_option; numbers are parsed strictly (to the end
 * of the string); every error is one line naming the option and the
 * offending text.
 */
#include "options.h"

#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* Keys of the options: a short option's own letter, else a number past
 * every character. */
enum {
  OPT_RULES = 256,
  OPT_NO_DEFAULT_RULES,
  OPT_ENABLE,
  OPT_DISABLE,
  OPT_FORMAT,
  OPT_BASELINE,
  OPT_WRITE_BASELINE,
  OPT_DIFF,
  OPT_DIFF_FILE,
  OPT_SRCROOT,
  OPT_CACHE,
  OPT_NO_CACHE,
  OPT_STATS,
  OPT_EMIT_FACTS,
  OPT_FACTS,
  OPT_SUMMARY,
  OPT_CONFIDENCE,
  OPT_EXCLUDE,
  OPT_NO_CONFIG,
  OPT_PROGRESS,
  OPT_QUIET,
  OPT_LIST_RULES,
  OPT_COLOR,
  OPT_EXTRA_ARG,
  OPT_EXTRA_ARG_BEFORE,
  OPT_VERSION
};

/* One option: "--long" (its short letter, if any, is the key) or "-x" for
 * a short option alone; `value` names its value in --help (NULL: a flag);
 * a help text's later lines are indented under its first. The table ends
 * with a {NULL} sentinel and is in --help order. */
typedef struct option_row {
  const char *name;
  int key;
  int has_arg; /* no_argument, required_argument or optional_argument */
  const char *value;
  const char *help;
} option_row;

static const option_row rows[] = {
    {"-p", 'p', required_argument, "BUILD_DIR",
     "read BUILD_DIR/compile_commands.json (or a parent's)"},
    {"--rules", OPT_RULES, required_argument, "FILE",
     "add a rule file (repeatable)"},
    {"--no-default-rules", OPT_NO_DEFAULT_RULES, no_argument, NULL,
     "do not load the embedded packs (only --rules)"},
    {"--enable", OPT_ENABLE, required_argument, "CATEGORY",
     "report a category (e.g. lock)"},
    {"--disable", OPT_DISABLE, required_argument, "CATEGORY",
     "do not report a category"},
    {"--format", OPT_FORMAT, required_argument, "FORMAT",
     "text (default), json or sarif"},
    {"--output", 'o', required_argument, "FILE", "write the report to FILE"},
    {"--srcroot", OPT_SRCROOT, required_argument, "DIR",
     "print paths relative to DIR (SARIF: %SRCROOT%)"},
    {"-j", 'j', required_argument, "N",
     "parse N translation units at once (default: CPUs)"},
    {"--baseline", OPT_BASELINE, required_argument, "FILE",
     "report only findings not in FILE"},
    {"--write-baseline", OPT_WRITE_BASELINE, required_argument, "FILE",
     "write the findings' fingerprints to FILE"},
    {"--diff", OPT_DIFF, required_argument, "REV",
     "report only findings a change since REV touches"},
    {"--diff-file", OPT_DIFF_FILE, required_argument, "PATCH",
     "the same for a unified diff (- = stdin)"},
    {"--summary", OPT_SUMMARY, no_argument, NULL,
     "print counts per rule, directory and callback"},
    {"--confidence", OPT_CONFIDENCE, required_argument, "LEVEL",
     "high (default) or low: also the findings whose\n"
     "chain crosses a wide indirect call or a cold path"},
    {"--exclude", OPT_EXCLUDE, required_argument, "GLOB",
     "skip the files GLOB matches, as TUs and in\n"
     "findings (repeatable)"},
    {"--no-config", OPT_NO_CONFIG, no_argument, NULL,
     "read no .blockscan file"},
    {"--progress", OPT_PROGRESS, no_argument, NULL,
     "print [n/N] FILE on stderr as TUs are parsed,\n"
     "also when stderr is not a terminal"},
    {"--quiet", OPT_QUIET, no_argument, NULL,
     "no progress and no notes on stderr, errors only"},
    {"--list-rules", OPT_LIST_RULES, no_argument, NULL,
     "print every loaded rule (entries, posts, passes,\n"
     "ready, blocking, non-blocking, hints, allows) with\n"
     "its fields, and exit"},
    {"--color", OPT_COLOR, optional_argument, "WHEN",
     "never, always or auto (default: on a tty);\n"
     "--color alone means always"},
    {"--extra-arg", OPT_EXTRA_ARG, required_argument, "ARG",
     "add ARG after each TU's compiler arguments"},
    {"--extra-arg-before", OPT_EXTRA_ARG_BEFORE, required_argument, "ARG",
     "add ARG before each TU's compiler arguments\n"
     "(both as clang-tidy's, repeatable)"},
    {"--cache", OPT_CACHE, required_argument, "DIR",
     "keep parsed facts in DIR (default:\n"
     ".blockscan-cache beside the compilation database)"},
    {"--no-cache", OPT_NO_CACHE, no_argument, NULL,
     "parse every translation unit"},
    {"--stats", OPT_STATS, no_argument, NULL,
     "print how many TUs were parsed and reused"},
    {"--emit-facts", OPT_EMIT_FACTS, required_argument, "OUT",
     "write the facts of the one TU compiled by the\n"
     "command after -- to OUT, and exit"},
    {"--facts", OPT_FACTS, no_argument, NULL,
     "the paths are facts files or directories of them"},
    {"--help", 'h', no_argument, NULL, "this text"},
    {"--version", OPT_VERSION, no_argument, NULL, "print the version"},
    {NULL, 0, 0, NULL, NULL}};

/* The row's first column in --help: "-o, --output FILE", "--color[=WHEN]". */
static void left_column(const option_row *row, char *buf, size_t size) {
  int n = 0;
  if (row->key < 256 && row->name[1] == '-')
    n = snprintf(buf, size, "-%c, ", row->key);
  int optional = row->has_arg == optional_argument;
  snprintf(buf + n, size - (size_t)n, "%s%s%s%s", row->name,
           !row->value ? ""
           : optional  ? "[="
                       : " ",
           row->value ? row->value : "", optional ? "]" : "");
}

void bwsc__options_usage(FILE *out) {
  fputs("usage: blockscan [options] [files or directories...] [-- compiler "
        "args]\n"
        "\n"
        "Finds blocking calls reachable from thread-pool and event-loop "
        "callbacks.\n"
        "\n",
        out);
  /* The help texts line up two spaces past the longest first column. */
  int width = 0;
  char left[64];
  for (const option_row *row = rows; row->name; row++) {
    left_column(row, left, sizeof(left));
    if ((int)strlen(left) > width)
      width = (int)strlen(left);
  }
  for (const option_row *row = rows; row->name; row++) {
    left_column(row, left, sizeof(left));
    fprintf(out, "  %-*s  ", width, left);
    for (const char *p = row->help; *p; p++) {
      fputc(*p, out);
      if (*p == '\n')
        fprintf(out, "%*s", width + 4, "");
    }
    fputc('\n', out);
  }
  fputs("\n"
        "Long options may be shortened to a unique prefix (--conf low).\n"
        "A .blockscan file in the current directory or a parent adds rule\n"
        "files, categories, excludes and a confidence; the command line\n"
        "wins over it.\n"
        "\n"
        "Exit status: 0 no findings, 1 findings, 2 error.\n",
        out);
}

void bwsc__options_push(const char ***array, size_t *count, const char *value) {
  size_t cap = *count; /* grow by one: these lists are short */
  *array = bwsc__xrealloc((void *)*array, (cap + 1) * sizeof(char *));
  (*array)[(*count)++] = value;
}

void bwsc__options_exclude(bwsc__options *opts, const char *pattern,
                           const char *base) {
  size_t n = opts->nexcludes;
  opts->excludes =
      bwsc__xrealloc(opts->excludes, (n + 1) * sizeof(*opts->excludes));
  opts->excludes[n] = (bwsc__glob){pattern, base};
  opts->nexcludes = n + 1;
}

static int bad(const char *what, const char *text) {
  fprintf(stderr, "blockscan: error: %s: '%s'\n", what, text);
  return -1;
}

static int parse_jobs(const char *text, unsigned *out) {
  char *end = NULL;
  errno = 0;
  unsigned long n = strtoul(text, &end, 10);
  if (errno || !*text || *end || n == 0 || n > 1024 || text[0] == '-')
    return -1;
  *out = (unsigned)n;
  return 0;
}

/* A word an option accepts and the value it stands for; a table ends with
 * a {NULL} sentinel. */
typedef struct choice {
  const char *word;
  int value;
} choice;

static const choice formats[] = {{"text", BWSC__FORMAT_TEXT},
                                 {"json", BWSC__FORMAT_JSON},
                                 {"sarif", BWSC__FORMAT_SARIF},
                                 {NULL, 0}};
static const choice colors[] = {{"never", BWSC__COLOR_NEVER},
                                {"always", BWSC__COLOR_ALWAYS},
                                {"auto", BWSC__COLOR_AUTO},
                                {NULL, 0}};
static const choice levels[] = {{"high", 0}, {"low", 1}, {NULL, 0}};

/* The value of the choice spelt `word`, or -1. */
static int pick(const choice *choices, const char *word) {
  for (; choices->word != NULL; choices++) {
    if (strcmp(choices->word, word) == 0)
      return choices->value;
  }
  return -1;
}

int bwsc__confidence_parse(const char *word) {
  return pick(levels, word);
}

/* Stores one option; 0, or -1 after printing the error. */
static int set_option(bwsc__options *opts, int key, const char *value) {
  int v;
  switch (key) {
  case 'p':
    opts->build_dir = value;
    return 0;
  case 'j':
    if (parse_jobs(value, &opts->jobs) != 0)
      return bad("-j needs a number from 1 to 1024", value);
    return 0;
  case OPT_RULES:
    bwsc__options_push(&opts->rules, &opts->nrules, value);
    return 0;
  case OPT_NO_DEFAULT_RULES:
    opts->no_default_rules = 1;
    return 0;
  case OPT_ENABLE:
    bwsc__options_push(&opts->enable, &opts->nenable, value);
    return 0;
  case OPT_DISABLE:
    bwsc__options_push(&opts->disable, &opts->ndisable, value);
    return 0;
  case OPT_FORMAT:
    if ((v = pick(formats, value)) < 0)
      return bad("--format must be text, json or sarif", value);
    opts->format = (bwsc__format)v;
    return 0;
  case 'o':
    opts->output = value;
    return 0;
  case OPT_BASELINE:
    opts->baseline = value;
    return 0;
  case OPT_WRITE_BASELINE:
    opts->write_baseline = value;
    return 0;
  case OPT_DIFF:
    opts->diff_rev = value;
    return 0;
  case OPT_SRCROOT:
    opts->srcroot = value;
    return 0;
  case OPT_CACHE:
    opts->cache_dir = value;
    return 0;
  case OPT_NO_CACHE:
    opts->no_cache = 1;
    return 0;
  case OPT_STATS:
    opts->stats = 1;
    return 0;
  case OPT_EMIT_FACTS:
    opts->emit_facts = value;
    return 0;
  case OPT_FACTS:
    opts->facts = 1;
    return 0;
  case OPT_DIFF_FILE:
    opts->diff_file = value;
    return 0;
  case OPT_SUMMARY:
    opts->summary = 1;
    return 0;
  case OPT_CONFIDENCE:
    if ((v = pick(levels, value)) < 0)
      return bad("--confidence must be high or low", value);
    opts->low_confidence = v;
    opts->confidence_given = 1;
    return 0;
  case OPT_EXCLUDE:
    bwsc__options_exclude(opts, value, NULL);
    return 0;
  case OPT_NO_CONFIG:
    opts->no_config = 1;
    return 0;
  case OPT_PROGRESS:
    opts->progress = 1;
    return 0;
  case OPT_QUIET:
    opts->quiet = 1;
    return 0;
  case OPT_LIST_RULES:
    opts->list_rules = 1;
    return 0;
  case OPT_COLOR:
    if (!value) /* bare --color, as in grep and ls */
      value = "always";
    if ((v = pick(colors, value)) < 0)
      return bad("--color must be never, always or auto", value);
    opts->color = (bwsc__color)v;
    return 0;
  case OPT_EXTRA_ARG:
    bwsc__options_push(&opts->extra_after, &opts->nextra_after, value);
    return 0;
  case OPT_EXTRA_ARG_BEFORE:
    bwsc__options_push(&opts->extra_before, &opts->nextra_before, value);
    return 0;
  case 'h':
    opts->help = 1;
    return 0;
  case OPT_VERSION:
    opts->version = 1;
    return 0;
  }
  return 0;
}

/* Edit distance (insert, delete, substitute, swap two neighbours) between
 * two short option names, capped: names are never longer than 31. */
static size_t distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 31 || lb > 31)
    return (size_t)-1;
  size_t d[32][32];
  for (size_t i = 0; i <= la; i++)
    d[i][0] = i;
  for (size_t j = 0; j <= lb; j++)
    d[0][j] = j;
  for (size_t i = 1; i <= la; i++) {
    for (size_t j = 1; j <= lb; j++) {
      size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < best)
        best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best)
        best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  }
  return d[la][lb];
}

/* Explains a long option getopt did not take: ambiguous, misspelt (with
 * the nearest name) or unknown. */
static int unknown_long(const char *arg) {
  char typed[32];
  size_t len = strcspn(arg + 2, "=");
  snprintf(typed, sizeof(typed), "%.*s", (int)(len < 31 ? len : 31), arg + 2);
  const option_row *nearest = NULL, *first = NULL;
  size_t best = (size_t)-1, prefixed = 0;
  for (const option_row *row = rows; row->name; row++) {
    if (row->name[1] != '-')
      continue;
    if (strncmp(row->name + 2, typed, strlen(typed)) == 0 && prefixed++ == 0)
      first = row;
    size_t d = distance(typed, row->name + 2);
    if (d < best) {
      best = d;
      nearest = row;
    }
  }
  if (prefixed > 1) {
    fprintf(stderr, "blockscan: error: option '--%s' is ambiguous:", typed);
    for (const option_row *row = first; row->name; row++)
      if (row->name[1] == '-' &&
          strncmp(row->name + 2, typed, strlen(typed)) == 0)
        fprintf(stderr, " %s", row->name);
    fputc('\n', stderr);
    return -1;
  }
  if (nearest && best <= 2 && best * 3 <= strlen(typed)) {
    fprintf(stderr,
            "blockscan: error: unknown option: '--%s'; did you mean '%s'?\n",
            typed, nearest->name);
    return -1;
  }
  return bad("unknown option", arg);
}

int bwsc__options_parse(bwsc__options *opts, int argc, char **argv) {
  memset(opts, 0, sizeof(*opts));
  /* Everything after the first "--" is the compiler's: getopt never
   * sees it, so an "-o" there stays the compiler's. */
  int dashdash = 1;
  while (dashdash < argc && strcmp(argv[dashdash], "--") != 0)
    dashdash++;
  if (dashdash < argc) {
    opts->have_extra = 1;
    for (int i = dashdash + 1; i < argc; i++)
      bwsc__options_push(&opts->extra, &opts->nextra, argv[i]);
  }

  struct option longs[sizeof(rows) / sizeof(rows[0])];
  char shorts[64] = "-:"; /* operands in order; ':' for a missing value */
  size_t nlongs = 0, nshorts = 2;
  for (const option_row *row = rows; row->name; row++) {
    if (row->key < 256) {
      shorts[nshorts++] = (char)row->key;
      if (row->has_arg == required_argument)
        shorts[nshorts++] = ':';
    }
    if (row->name[1] == '-')
      longs[nlongs++] =
          (struct option){row->name + 2, row->has_arg, NULL, row->key};
  }
  shorts[nshorts] = '\0';
  longs[nlongs] = (struct option){NULL, 0, NULL, 0};

  optind = 0; /* glibc: start over, for a second parse in one process */
  opterr = 0; /* our messages, one line each */
  int key;
  while ((key = getopt_long(dashdash, argv, shorts, longs, NULL)) != -1) {
    const char *arg = argv[optind - 1];
    if (key == 1) {
      bwsc__options_push(&opts->paths, &opts->npaths, optarg);
    } else if (key == ':') {
      return bad("option needs a value", arg);
    } else if (key == '?') {
      if (strncmp(arg, "--", 2) != 0) {
        char letter[3] = {'-', (char)optopt, '\0'};
        return bad("unknown option", optopt ? letter : arg);
      }
      if (optopt != 0)
        return bad("option takes no value", arg);
      return unknown_long(arg);
    } else if (set_option(opts, key, optarg) != 0) {
      return -1;
    }
  }
  return 0;
}

void bwsc__options_free(bwsc__options *opts) {
  free((void *)opts->rules);
  free((void *)opts->enable);
  free((void *)opts->disable);
  free(opts->excludes);
  free((void *)opts->extra_before);
  free((void *)opts->extra_after);
  free((void *)opts->paths);
  free((void *)opts->extra);
  memset(opts, 0, sizeof(*opts));
}
