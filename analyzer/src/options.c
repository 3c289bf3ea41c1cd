/* options.c - parsing blockscan's command line (clang-tidy conventions).
 *
 * Invariant: numbers are parsed strictly (to the end of the string); every
 * error names the option and the offending text.
 */
#include "options.h"

#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void bwsc__options_usage(FILE *out) {
  fputs("usage: blockscan [options] [files or directories...] [-- compiler "
        "args]\n"
        "\n"
        "Finds blocking calls reachable from thread-pool and event-loop "
        "callbacks.\n"
        "\n"
        "  -p BUILD_DIR           read BUILD_DIR/compile_commands.json (or a "
        "parent's)\n"
        "  --rules FILE           add a rule file (repeatable)\n"
        "  --no-default-rules     do not load the embedded packs (only "
        "--rules)\n"
        "  --enable CATEGORY      report a category (e.g. lock)\n"
        "  --disable CATEGORY     do not report a category\n"
        "  --format FORMAT        text (default), json or sarif\n"
        "  -o, --output FILE      write the report to FILE\n"
        "  -j N                   parse N translation units at once (default: "
        "CPUs)\n"
        "  --baseline FILE        report only findings not in FILE\n"
        "  --write-baseline FILE  write the findings' fingerprints to FILE\n"
        "  --diff REV             report only findings a change since REV "
        "touches\n"
        "  --diff-file PATCH      the same for a unified diff (- = stdin)\n"
        "  --summary              print counts per rule, directory and "
        "callback\n"
        "  --confidence LEVEL     high (default) or low: also the findings "
        "whose\n"
        "                         chain crosses a wide indirect call or a "
        "cold path\n"
        "  --list-rules           print the pool and loop APIs and the "
        "blocking\n"
        "                         functions the loaded rules know, and exit\n"
        "  --color=WHEN           never, always or auto (default: on a tty)\n"
        "  -h, --help             this text\n"
        "  --version              print the version\n"
        "\n"
        "Exit status: 0 no findings, 1 findings, 2 error.\n",
        out);
}

static void push(const char ***array, size_t *count, const char *value) {
  size_t cap = *count; /* grow by one: these lists are short */
  *array = bwsc__xrealloc((void *)*array, (cap + 1) * sizeof(char *));
  (*array)[(*count)++] = value;
}

static int bad(const char *what, const char *text) {
  fprintf(stderr, "blockscan: error: %s: '%s'\n", what, text);
  return -1;
}

/* Matches "--name", "--name=value" or (for short) "-xVALUE"; sets *value
 * to the inline value or the next argument. Returns 1 on match, -1 when
 * the value is missing. */
static int take(const char *name, int argc, char **argv, int *i,
                const char **value) {
  const char *arg = argv[*i];
  size_t len = strlen(name);
  if (strncmp(arg, name, len) != 0)
    return 0;
  if (arg[len] == '=' && name[1] == '-') {
    *value = arg + len + 1;
    return 1;
  }
  if (arg[len] != '\0') {
    if (name[1] == '-')
      return 0; /* "--rulesx" is not "--rules" */
    *value = arg + len;
    return 1;
  }
  if (*i + 1 >= argc)
    return -1;
  *value = argv[++*i];
  return 1;
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

/* The options that take a value, tried in table order (a {NULL}
 * sentinel ends it); --output and -o are one option. */
typedef enum value_option {
  OPT_BUILD_DIR,
  OPT_JOBS,
  OPT_RULES,
  OPT_ENABLE,
  OPT_DISABLE,
  OPT_FORMAT,
  OPT_OUTPUT,
  OPT_BASELINE,
  OPT_WRITE_BASELINE,
  OPT_COLOR,
  OPT_CONFIDENCE,
  OPT_DIFF,
  OPT_DIFF_FILE
} value_option;

static const struct {
  const char *name;
  value_option option;
} value_options[] = {
    {"-p", OPT_BUILD_DIR},        {"-j", OPT_JOBS},
    {"--rules", OPT_RULES},       {"--enable", OPT_ENABLE},
    {"--disable", OPT_DISABLE},   {"--format", OPT_FORMAT},
    {"--output", OPT_OUTPUT},     {"-o", OPT_OUTPUT},
    {"--baseline", OPT_BASELINE}, {"--write-baseline", OPT_WRITE_BASELINE},
    {"--color", OPT_COLOR},       {"--confidence", OPT_CONFIDENCE},
    {"--diff", OPT_DIFF},         {"--diff-file", OPT_DIFF_FILE},
    {NULL, OPT_BUILD_DIR}};

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

/* Stores the value of one option; 0, or -1 after printing the error. */
static int set_value(bwsc__options *opts, value_option option,
                     const char *value) {
  int v;
  switch (option) {
  case OPT_BUILD_DIR:
    opts->build_dir = value;
    return 0;
  case OPT_JOBS:
    if (parse_jobs(value, &opts->jobs) != 0)
      return bad("-j needs a number from 1 to 1024", value);
    return 0;
  case OPT_RULES:
    push(&opts->rules, &opts->nrules, value);
    return 0;
  case OPT_ENABLE:
    push(&opts->enable, &opts->nenable, value);
    return 0;
  case OPT_DISABLE:
    push(&opts->disable, &opts->ndisable, value);
    return 0;
  case OPT_FORMAT:
    if ((v = pick(formats, value)) < 0)
      return bad("--format must be text, json or sarif", value);
    opts->format = (bwsc__format)v;
    return 0;
  case OPT_OUTPUT:
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
  case OPT_DIFF_FILE:
    opts->diff_file = value;
    return 0;
  case OPT_COLOR:
    if ((v = pick(colors, value)) < 0)
      return bad("--color must be never, always or auto", value);
    opts->color = (bwsc__color)v;
    return 0;
  case OPT_CONFIDENCE:
    if ((v = pick(levels, value)) < 0)
      return bad("--confidence must be high or low", value);
    opts->low_confidence = v;
    return 0;
  }
  return 0;
}

int bwsc__options_parse(bwsc__options *opts, int argc, char **argv) {
  memset(opts, 0, sizeof(*opts));
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--") == 0) {
      opts->have_extra = 1;
      for (i++; i < argc; i++)
        push(&opts->extra, &opts->nextra, argv[i]);
      break;
    }
    if (arg[0] != '-' || arg[1] == '\0') {
      push(&opts->paths, &opts->npaths, arg);
      continue;
    }
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      opts->help = 1;
    } else if (strcmp(arg, "--version") == 0) {
      opts->version = 1;
    } else if (strcmp(arg, "--list-rules") == 0) {
      opts->list_rules = 1;
    } else if (strcmp(arg, "--summary") == 0) {
      opts->summary = 1;
    } else if (strcmp(arg, "--no-default-rules") == 0) {
      opts->no_default_rules = 1;
    } else {
      const char *value = NULL;
      int m = 0;
      size_t k = 0;
      while (value_options[k].name != NULL &&
             (m = take(value_options[k].name, argc, argv, &i, &value)) == 0)
        k++;
      if (value_options[k].name == NULL)
        return bad("unknown option", arg);
      if (m < 0)
        return bad("option needs a value", arg);
      if (set_value(opts, value_options[k].option, value) != 0)
        return -1;
    }
  }
  return 0;
}

void bwsc__options_free(bwsc__options *opts) {
  free((void *)opts->rules);
  free((void *)opts->enable);
  free((void *)opts->disable);
  free((void *)opts->paths);
  free((void *)opts->extra);
  memset(opts, 0, sizeof(*opts));
}
