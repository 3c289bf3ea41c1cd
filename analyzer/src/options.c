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
        "  --output FILE          write the report to FILE\n"
        "  -j N                   parse N translation units at once (default: "
        "CPUs)\n"
        "  --baseline FILE        report only findings not in FILE\n"
        "  --write-baseline FILE  write the findings' fingerprints to FILE\n"
        "  --summary              print counts per rule, directory and "
        "callback\n"
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

int bwsc__options_parse(bwsc__options *opts, int argc, char **argv) {
  memset(opts, 0, sizeof(*opts));
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const char *value = NULL;
    int m;
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
    } else if (strcmp(arg, "--summary") == 0) {
      opts->summary = 1;
    } else if (strcmp(arg, "--no-default-rules") == 0) {
      opts->no_default_rules = 1;
    } else if ((m = take("-p", argc, argv, &i, &value)) != 0) {
      if (m < 0)
        return bad("option needs a value", arg);
      opts->build_dir = value;
    } else if ((m = take("-j", argc, argv, &i, &value)) != 0) {
      if (m < 0)
        return bad("option needs a value", arg);
      if (parse_jobs(value, &opts->jobs) != 0)
        return bad("-j needs a number from 1 to 1024", value);
    } else if ((m = take("--rules", argc, argv, &i, &value)) != 0) {
      if (m < 0)
        return bad("option needs a value", arg);
      push(&opts->rules, &opts->nrules, value);
    } else if ((m = take("--enable", argc, argv, &i, &value)) != 0) {
      if (m < 0)
        return bad("option needs a value", arg);
      push(&opts->enable, &opts->nenable, value);
    } else if ((m = take("--disable", argc, argv, &i, &value)) != 0) {
      if (m < 0)
        return bad("option needs a value", arg);
      push(&opts->disable, &opts->ndisable, value);
    } else if ((m = take("--format", argc, argv, &i, &value)) != 0) {
      if (m < 0)
        return bad("option needs a value", arg);
      if (strcmp(value, "text") == 0)
        opts->format = BWSC__FORMAT_TEXT;
      else if (strcmp(value, "json") == 0)
        opts->format = BWSC__FORMAT_JSON;
      else if (strcmp(value, "sarif") == 0)
        opts->format = BWSC__FORMAT_SARIF;
      else
        return bad("--format must be text, json or sarif", value);
    } else if ((m = take("--output", argc, argv, &i, &value)) != 0 ||
               (m = take("-o", argc, argv, &i, &value)) != 0) {
      if (m < 0)
        return bad("option needs a value", arg);
      opts->output = value;
    } else if ((m = take("--baseline", argc, argv, &i, &value)) != 0) {
      if (m < 0)
        return bad("option needs a value", arg);
      opts->baseline = value;
    } else if ((m = take("--write-baseline", argc, argv, &i, &value)) != 0) {
      if (m < 0)
        return bad("option needs a value", arg);
      opts->write_baseline = value;
    } else if ((m = take("--color", argc, argv, &i, &value)) != 0) {
      if (m < 0)
        return bad("option needs a value", arg);
      if (strcmp(value, "never") == 0)
        opts->color = BWSC__COLOR_NEVER;
      else if (strcmp(value, "always") == 0)
        opts->color = BWSC__COLOR_ALWAYS;
      else if (strcmp(value, "auto") == 0)
        opts->color = BWSC__COLOR_AUTO;
      else
        return bad("--color must be never, always or auto", value);
    } else {
      return bad("unknown option", arg);
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
