/* inputs.c - compile_commands.json (read with jansson) and the command
 * line's files and directories, turned into parse inputs.
 *
 * Invariant: arguments kept from a compile command are only those that
 * affect parsing: the compiler name, the source file, -c, -o and the
 * dependency-file options (-M*, which would make libclang write files) are
 * dropped.
 */
#include "inputs.h"

#include "config.h"
#include "exclude.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void input_free(bwsc__tu_input *input) {
  free(input->file);
  free(input->directory);
  for (size_t i = 0; i < input->nargs; i++)
    free(input->args[i]);
  free(input->args);
}

void bwsc__inputs_free(bwsc__inputs *inputs) {
  for (size_t i = 0; i < inputs->count; i++)
    input_free(&inputs->items[i]);
  free(inputs->items);
  memset(inputs, 0, sizeof(*inputs));
}

char **bwsc__split_command(const char *command, size_t *count) {
  char **words = NULL;
  size_t n = 0, cap = 0;
  size_t len = strlen(command);
  char *word = bwsc__xmalloc(len + 1);
  const char *p = command;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\n')
      p++;
    if (!*p)
      break;
    size_t w = 0;
    char quote = 0;
    for (; *p; p++) {
      if (quote) {
        if (*p == quote)
          quote = 0;
        else if (*p == '\\' && quote == '"' && p[1])
          word[w++] = *++p;
        else
          word[w++] = *p;
      } else if (*p == '\'' || *p == '"') {
        quote = *p;
      } else if (*p == '\\' && p[1]) {
        word[w++] = *++p;
      } else if (*p == ' ' || *p == '\t' || *p == '\n') {
        break;
      } else {
        word[w++] = *p;
      }
    }
    word[w] = '\0';
    *BWSC__PUSH(words, n, cap) = bwsc__xstrdup(word);
  }
  free(word);
  *count = n;
  return words;
}

/* Joins dir and path unless path is absolute, then normalises "." and ".."
 * lexically (the file need not exist yet for the error message). */
static char *absolute(const char *dir, const char *path) {
  char cwd[PATH_MAX];
  if (!dir) {
    if (!getcwd(cwd, sizeof(cwd)))
      strcpy(cwd, ".");
    dir = cwd;
  }
  char *joined = path[0] == '/' ? bwsc__xstrdup(path)
                                : bwsc__xasprintf("%s/%s", dir, path);
  /* Collapse in place: components separated by '/'. */
  char *out = bwsc__xmalloc(strlen(joined) + 2);
  size_t o = 0;
  for (char *p = joined; *p;) {
    while (*p == '/')
      p++;
    char *end = strchr(p, '/');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == 0 || (len == 1 && p[0] == '.')) {
      /* skip */
    } else if (len == 2 && p[0] == '.' && p[1] == '.') {
      while (o > 0 && out[o - 1] != '/')
        o--;
      if (o > 0)
        o--;
    } else {
      out[o++] = '/';
      memcpy(out + o, p, len);
      o += len;
    }
    p += len;
  }
  if (o == 0)
    out[o++] = '/';
  out[o] = '\0';
  free(joined);
  return out;
}

static int is_dropped_with_value(const char *arg) {
  return strcmp(arg, "-o") == 0 || strcmp(arg, "-MF") == 0 ||
         strcmp(arg, "-MT") == 0 || strcmp(arg, "-MQ") == 0;
}

static int is_dropped(const char *arg) {
  return strcmp(arg, "-c") == 0 || strcmp(arg, "-MD") == 0 ||
         strcmp(arg, "-MMD") == 0 || strcmp(arg, "-M") == 0 ||
         strcmp(arg, "-MM") == 0 || strcmp(arg, "-MP") == 0 ||
         (strncmp(arg, "-o", 2) == 0 && arg[2]);
}

/* Options whose value is a path; a relative one is made absolute against
 * the command's directory. (libclang's -working-directory would do this,
 * but it changes the working directory of the whole process, which threads
 * parsing other TUs share.) */
static const char *const path_options[] = {
    "-I",        "-isystem",  "-iquote",  "-idirafter", "-include", "-imacros",
    "-isysroot", "--sysroot", "-iprefix", "-F",         NULL};

static char *absolute_arg(const char *dir, const char *arg,
                          const char **pending_option) {
  if (*pending_option) {
    *pending_option = NULL;
    return arg[0] == '/' ? bwsc__xstrdup(arg) : absolute(dir, arg);
  }
  for (size_t i = 0; path_options[i]; i++) {
    const char *opt = path_options[i];
    size_t len = strlen(opt);
    if (strncmp(arg, opt, len) != 0)
      continue;
    const char *value = arg + len;
    if (*value == '=' && opt[1] == '-')
      value++;
    if (!*value) {
      *pending_option = opt; /* the path is the next word */
      return bwsc__xstrdup(arg);
    }
    if (value[0] == '/')
      return bwsc__xstrdup(arg);
    char *abs = absolute(dir, value);
    char *joined = bwsc__xasprintf("%.*s%s", (int)(value - arg), arg, abs);
    free(abs);
    return joined;
  }
  return bwsc__xstrdup(arg);
}

/* Keeps the parse-relevant words of a compile command (words[0] is the
 * compiler), with relative paths made absolute. */
static void keep_args(bwsc__tu_input *input, char **words, size_t nwords,
                      const char *file_as_written) {
  input->args = bwsc__xcalloc(nwords + 1, sizeof(char *));
  const char *pending = NULL;
  for (size_t i = 1; i < nwords; i++) {
    const char *arg = words[i];
    if (!pending && is_dropped_with_value(arg)) {
      i++;
      continue;
    }
    if (!pending && (is_dropped(arg) || strcmp(arg, file_as_written) == 0))
      continue;
    if (!pending && arg[0] != '-') {
      char *abs = absolute(input->directory, arg);
      int same = strcmp(abs, input->file) == 0;
      free(abs);
      if (same)
        continue;
    }
    input->args[input->nargs++] = absolute_arg(input->directory, arg, &pending);
  }
}

static int db_error(bwsc__errors *errors, const char *path, unsigned line,
                    unsigned col, const char *what) {
  char *message = bwsc__xasprintf("malformed compilation database: %s", what);
  bwsc__errors_add(errors, path, line, col, message);
  free(message);
  return -1;
}

int bwsc__compdb_load(const char *path, bwsc__inputs *out,
                      bwsc__errors *errors) {
  json_error_t jerr;
  json_t *root = json_load_file(path, 0, &jerr);
  if (!root) {
    if (access(path, R_OK) != 0) {
      char *message = bwsc__xasprintf("cannot read compilation database: %s",
                                      strerror(errno));
      bwsc__errors_add(errors, path, 0, 0, message);
      free(message);
      return -1;
    }
    return db_error(errors, path, (unsigned)jerr.line, (unsigned)jerr.column,
                    jerr.text);
  }
  if (!json_is_array(root)) {
    json_decref(root);
    return db_error(errors, path, 0, 0, "the top level is not an array");
  }
  /* A relative "directory" is taken relative to the database's own
   * directory, not to wherever blockscan was started. */
  char *db_path = absolute(NULL, path);
  char *slash = strrchr(db_path, '/');
  if (slash)
    slash[slash == db_path ? 1 : 0] = '\0';
  size_t i;
  json_t *entry;
  json_array_foreach(root, i, entry) {
    const char *dir = json_string_value(json_object_get(entry, "directory"));
    const char *file = json_string_value(json_object_get(entry, "file"));
    json_t *arguments = json_object_get(entry, "arguments");
    const char *command = json_string_value(json_object_get(entry, "command"));
    if (!json_is_object(entry) || !dir || !file ||
        (!json_is_array(arguments) && !command)) {
      char *what = bwsc__xasprintf(
          "entry %zu needs \"directory\", \"file\" and \"arguments\" or "
          "\"command\"",
          i);
      db_error(errors, path, 0, 0, what);
      free(what);
      free(db_path);
      json_decref(root);
      return -1;
    }
    char **words = NULL;
    size_t nwords = 0;
    if (json_is_array(arguments)) {
      words = bwsc__xcalloc(json_array_size(arguments) + 1, sizeof(char *));
      size_t a;
      json_t *word;
      json_array_foreach(arguments, a, word) {
        const char *text = json_string_value(word);
        words[nwords++] = bwsc__xstrdup(text ? text : "");
      }
    } else {
      words = bwsc__split_command(command, &nwords);
    }
    bwsc__tu_input *input = BWSC__PUSH(out->items, out->count, out->cap);
    input->directory = absolute(db_path, dir);
    input->file = absolute(input->directory, file);
    keep_args(input, words, nwords, file);
    for (size_t w = 0; w < nwords; w++)
      free(words[w]);
    free(words);
  }
  free(db_path);
  json_decref(root);
  return 0;
}

/* clang-tidy's rule: the database is in the build directory or one of its
 * parents. Returns a malloc'd path or NULL. */
static char *find_database(const char *start) {
  char *dir = absolute(NULL, start);
  char *found = bwsc__find_in_parents(dir, "compile_commands.json");
  free(dir);
  return found;
}

static void add_fixed(bwsc__inputs *out, const char *file,
                      const bwsc__options *opts) {
  bwsc__tu_input *input = BWSC__PUSH(out->items, out->count, out->cap);
  input->file = bwsc__xstrdup(file);
  /* "-- cc -c file.c -o file.o", as CMake hands clang-tidy: a whole
   * compile command, trimmed as a database's is. */
  if (opts->nextra && opts->extra[0][0] != '-') {
    keep_args(input, (char **)opts->extra, opts->nextra, file);
    return;
  }
  input->args = bwsc__xcalloc(opts->nextra + 1, sizeof(char *));
  for (size_t i = 0; i < opts->nextra; i++)
    input->args[input->nargs++] = bwsc__xstrdup(opts->extra[i]);
}

static void copy_input(bwsc__inputs *out, const bwsc__tu_input *from) {
  bwsc__tu_input *input = BWSC__PUSH(out->items, out->count, out->cap);
  input->file = bwsc__xstrdup(from->file);
  input->directory = from->directory ? bwsc__xstrdup(from->directory) : NULL;
  input->args = bwsc__xcalloc(from->nargs + 1, sizeof(char *));
  for (size_t i = 0; i < from->nargs; i++)
    input->args[input->nargs++] = bwsc__xstrdup(from->args[i]);
}

static int has_c_suffix(const char *name) {
  size_t len = strlen(name);
  return len > 2 && strcmp(name + len - 2, ".c") == 0;
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* All *.c under dir, recursively, in name order (used without a database). */
static void add_tree(bwsc__inputs *out, const char *dir,
                     const bwsc__options *opts) {
  DIR *handle = opendir(dir);
  if (!handle)
    return;
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *ent;
  while ((ent = readdir(handle)) != NULL) {
    if (ent->d_name[0] == '.')
      continue;
    *BWSC__PUSH(names, n, cap) = bwsc__xasprintf("%s/%s", dir, ent->d_name);
  }
  closedir(handle);
  if (n)
    qsort(names, n, sizeof(char *), compare_names);
  for (size_t i = 0; i < n; i++) {
    struct stat st;
    if (stat(names[i], &st) == 0) {
      if (S_ISDIR(st.st_mode))
        add_tree(out, names[i], opts);
      else if (S_ISREG(st.st_mode) && has_c_suffix(names[i]))
        add_fixed(out, names[i], opts);
    }
    free(names[i]);
  }
  free(names);
}

static int under_dir(const char *file, const char *dir) {
  size_t len = strlen(dir);
  if (len == 1 && dir[0] == '/')
    return 1;
  return strncmp(file, dir, len) == 0 && file[len] == '/';
}

/* Sorting key: the file, then the position in input order, so that the
 * first command of a file wins whatever qsort does with equal keys. */
typedef struct ordered {
  bwsc__tu_input input;
  size_t order;
} ordered;

static int compare_ordered(const void *pa, const void *pb) {
  const ordered *a = pa, *b = pb;
  int c = strcmp(a->input.file, b->input.file);
  if (c)
    return c;
  return a->order < b->order ? -1 : a->order > b->order;
}

/* Sorts by file and drops later duplicates. */
static void sort_unique(bwsc__inputs *inputs) {
  if (!inputs->count)
    return;
  ordered *items = bwsc__xcalloc(inputs->count, sizeof(ordered));
  for (size_t i = 0; i < inputs->count; i++) {
    items[i].input = inputs->items[i];
    items[i].order = i;
  }
  qsort(items, inputs->count, sizeof(ordered), compare_ordered);
  size_t out = 0;
  for (size_t i = 0; i < inputs->count; i++) {
    if (out && strcmp(inputs->items[out - 1].file, items[i].input.file) == 0)
      input_free(&items[i].input);
    else
      inputs->items[out++] = items[i].input;
  }
  inputs->count = out;
  free(items);
}

void bwsc__inputs_collect(const bwsc__options *opts, bwsc__inputs *out,
                          bwsc__errors *errors) {
  memset(out, 0, sizeof(*out));
  bwsc__inputs db = {0};
  int have_db = 0;
  char *db_path = NULL;
  if (opts->build_dir) {
    struct stat st;
    if (stat(opts->build_dir, &st) == 0 && S_ISREG(st.st_mode)) {
      db_path = bwsc__xstrdup(opts->build_dir); /* -p path/to/the.json */
    } else if (stat(opts->build_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
      bwsc__errors_add(errors, opts->build_dir, 0, 0,
                       "build directory not found (-p)");
    } else if (!(db_path = find_database(opts->build_dir))) {
      bwsc__errors_add(errors, opts->build_dir, 0, 0,
                       "no compile_commands.json in this directory or its "
                       "parents (-p)");
    }
  } else if (!opts->have_extra) {
    /* No -p and no "--": look next to the first input, as clang-tidy. */
    const char *start = opts->npaths ? opts->paths[0] : ".";
    struct stat st;
    char *dir = NULL;
    if (stat(start, &st) == 0 && S_ISDIR(st.st_mode)) {
      dir = bwsc__xstrdup(start);
    } else {
      dir = bwsc__xstrdup(start);
      char *slash = strrchr(dir, '/');
      if (slash)
        *slash = '\0';
      else
        strcpy(dir, ".");
    }
    db_path = find_database(dir);
    free(dir);
    /* Without flags, macros and include paths the build sets are missing:
     * findings may be missing with them, so say so. */
    if (!db_path && !opts->quiet)
      fputs("blockscan: note: no compile_commands.json next to the inputs "
            "or in a parent: files are parsed without the build's flags "
            "(give -p BUILD_DIR, or the flags after --)\n",
            stderr);
  }
  if (db_path)
    have_db = bwsc__compdb_load(db_path, &db, errors) == 0;
  free(db_path);
  sort_unique(&db);

  if (opts->npaths == 0 && have_db) {
    for (size_t i = 0; i < db.count; i++)
      copy_input(out, &db.items[i]);
  }
  for (size_t p = 0; p < opts->npaths; p++) {
    char *path = absolute(NULL, opts->paths[p]);
    struct stat st;
    if (stat(path, &st) != 0) {
      char *message =
          bwsc__xasprintf("no such file or directory: '%s'", opts->paths[p]);
      bwsc__errors_add(errors, opts->paths[p], 0, 0, message);
      free(message);
    } else if (S_ISDIR(st.st_mode)) {
      if (have_db) {
        for (size_t i = 0; i < db.count; i++)
          if (under_dir(db.items[i].file, path))
            copy_input(out, &db.items[i]);
      } else {
        add_tree(out, path, opts);
      }
    } else {
      int found = 0;
      for (size_t i = 0; have_db && !opts->have_extra && i < db.count; i++) {
        if (strcmp(db.items[i].file, path) == 0) {
          copy_input(out, &db.items[i]);
          found = 1;
          break;
        }
      }
      if (!found)
        add_fixed(out, path, opts);
    }
    free(path);
  }
  bwsc__inputs_free(&db);
  sort_unique(out);
  /* --exclude: the TUs it names are not parsed at all. */
  size_t kept = 0;
  for (size_t i = 0; i < out->count; i++) {
    if (bwsc__excluded(opts, out->items[i].file))
      input_free(&out->items[i]);
    else
      out->items[kept++] = out->items[i];
  }
  out->count = kept;
}
