/* traces.c - the traces the processes left unnamed (symbolize=0, as under
 * `blockwatch --`, or written from a fatal-signal handler), named in
 * place: each blocked-call slice whose "caller" is null gets the "caller"
 * and "at" the process would have written, from its module and offset.
 *
 * Invariants:
 *  - Only the traces the reports name ("trace_file") are read, each once
 *    however many reports name it.
 *  - A trace is read a line at a time, in the layout the shim writes
 *    (docs/shim.md): the line `{"traceEvents":[`, one event per line, each
 *    but the last followed by a comma, then a closing line that starts
 *    with `]`. Memory is one line's, whatever the trace's size. Anything
 *    else is no trace of the shim's: an error naming the file and line.
 *  - A line with nothing to name is copied byte for byte; a named one
 *    keeps every byte outside its "args", which become those the process
 *    writes ("function", "caller", "at").
 *  - The naming is the shim's (symbolize.c, bwsh__symbolize_file): the
 *    physical frame only, as the trace in the process names its callers,
 *    each distinct module + build-id + offset looked up once.
 *  - The new text goes to a temporary file beside the trace, renamed over
 *    it only when it is whole and something changed: on any error the
 *    trace stays as it was and the temporary file is removed.
 *  - A slice whose module is gone or was rebuilt keeps module, build_id
 *    and offset and gets a "note"; stderr says how many, per module.
 */
#include "merge.h"

/* The shim's merge.h (not this directory's): bwsh__symbolize_file. */
#include "../../shim/src/merge.h"
#include "../../shim/src/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What one module + build-id + offset is named. */
typedef struct name {
  char *caller, *at; /* caller NULL: not named, note says why */
  const char *note;
  char *module;
  long left; /* slices of the trace being read it left unnamed */
} name;

typedef struct names {
  json_t *index; /* "module@build_id@offset" -> its entry's number */
  name *list;
  size_t n, cap;
} names;

static name *lookup(names *ns, const char *module, const char *build_id,
                    const char *offset) {
  char *key = NULL;
  if (asprintf(&key, "%s@%s@%s", module, build_id ? build_id : "", offset) < 0)
    return NULL;
  json_t *hit = json_object_get(ns->index, key);
  if (hit) {
    free(key);
    return &ns->list[json_integer_value(hit)];
  }
  if (ns->n == ns->cap) {
    size_t cap = ns->cap ? 2 * ns->cap : 64;
    name *list = realloc(ns->list, cap * sizeof *list);
    if (!list) {
      free(key);
      return NULL;
    }
    ns->list = list;
    ns->cap = cap;
  }
  name *e = &ns->list[ns->n];
  *e = (name){.module = strdup(module)};
  char *end = NULL;
  unsigned long long off = strtoull(offset, &end, 16);
  bwsh__sym sym;
  e->note = "no offset";
  if (strncmp(offset, "0x", 2) == 0 && end && !*end && off != 0 &&
      bwsh__symbolize_file(module, build_id, (uintptr_t)off, &sym, 1,
                           &e->note) == 1) {
    e->caller = strdup(sym.function);
    if (sym.file[0] && asprintf(&e->at, "%s:%d", sym.file, sym.line) < 0)
      e->at = NULL;
  }
  if (!e->caller && !e->note)
    e->note = "cannot be named";
  json_object_set_new(ns->index, key, json_integer((json_int_t)ns->n++));
  free(key);
  return e;
}

/* ---- writing ------------------------------------------------------------- */

/* s as a JSON string, escaped as the shim escapes it (a byte that is not
 * UTF-8 as \u00XX); NULL as null. */
static void put_jstr(FILE *f, const char *s) {
  if (!s) {
    fputs("null", f);
    return;
  }
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    size_t n = 1;
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(f, "\\u%04x", *p);
    else if (*p < 0x80)
      fputc(*p, f);
    else if ((n = bwsh__utf8_len(p)) != 0)
      fwrite(p, 1, n, f);
    else
      fprintf(f, "\\u%04x", *p);
    p += n ? n : 1;
  }
  fputc('"', f);
}

/* ,"key":value for a string member of args (left out when absent). */
static void put_member(FILE *f, const char *key, json_t *args) {
  json_t *v = json_object_get(args, key);
  if (!v)
    return;
  fprintf(f, ",\"%s\":", key);
  put_jstr(f, json_string_value(v));
}

/* The args of a slice once named (e->caller set), or its unnamed ones with
 * the note saying why. */
static void put_args(FILE *f, json_t *args, const name *e) {
  fputs("{\"function\":", f);
  put_jstr(f, json_string_value(json_object_get(args, "function")));
  if (e->caller) {
    fputs(",\"caller\":", f);
    put_jstr(f, e->caller);
    if (e->at) {
      fputs(",\"at\":", f);
      put_jstr(f, e->at);
    }
  } else {
    fputs(",\"caller\":null", f);
    put_member(f, "module", args);
    put_member(f, "build_id", args);
    put_member(f, "offset", args);
    fputs(",\"note\":", f);
    put_jstr(f, e->note);
  }
  fputc('}', f);
}

/* ---- reading ------------------------------------------------------------- */

typedef struct reader {
  const char *path, *who;
  long lineno;
  int failed; /* an error was said */
} reader;

static void error(reader *r, const char *what) {
  fprintf(stderr, "%s: %s:%ld: %s; the trace is left as it was\n", r->who,
          r->path, r->lineno, what);
  r->failed = 1;
}

/* The slice of event line `text` (n bytes, its comma cut) renamed into
 * out (a new line, to free; its comma not added): 1; 0 when it has
 * nothing to name; -1 (said) when the line is not what the shim writes. */
static int rename_line(names *ns, reader *r, const char *text, size_t n,
                       char **out, size_t *out_n) {
  json_error_t err;
  json_t *ev = json_loadb(text, n, 0, &err);
  if (!json_is_object(ev)) {
    char what[300];
    snprintf(what, sizeof what, "not an event: %s",
             ev ? "not a JSON object" : err.text);
    error(r, what);
    json_decref(ev);
    return -1;
  }
  json_t *args = json_object_get(ev, "args");
  const char *ph = json_string_value(json_object_get(ev, "ph"));
  const char *module = json_string_value(json_object_get(args, "module"));
  const char *offset = json_string_value(json_object_get(args, "offset"));
  if (!ph || strcmp(ph, "X") != 0 ||
      !json_is_null(json_object_get(args, "caller")) || !module || !offset) {
    json_decref(ev);
    return 0;
  }
  name *e = lookup(
      ns, module, json_string_value(json_object_get(args, "build_id")), offset);
  /* "args" is the event's last member, as the shim writes it: the text up
   * to its value stays, the event's closing brace follows the new one. A
   * ,"args":{ in the text is a member (JSON escapes the quotes inside a
   * string); the check below makes sure it is the event's own. */
  const char *at = strstr(text, ",\"args\":{");
  if (!e || !at || (size_t)(at - text) >= n) {
    error(r, e ? "an event whose \"args\" are not where the shim puts them"
               : "out of memory");
    json_decref(ev);
    return -1;
  }
  size_t keep = (size_t)(at - text) + strlen(",\"args\":");
  FILE *f = open_memstream(out, out_n);
  if (!f) {
    error(r, "out of memory");
    json_decref(ev);
    return -1;
  }
  fwrite(text, 1, keep, f);
  put_args(f, args, e);
  fputc('}', f);
  int ok = fclose(f) == 0;
  /* The new line is the old event with other args, or it is not written. */
  json_t *again = ok ? json_loadb(*out, *out_n, 0, &err) : NULL;
  json_t *named = json_object_get(again, "args");
  ok = json_is_object(named) && json_equal(json_object_get(named, "function"),
                                           json_object_get(args, "function"));
  if (ok) {
    json_object_del(again, "args");
    json_object_del(ev, "args");
    ok = json_equal(again, ev);
  }
  json_decref(again);
  json_decref(ev);
  if (!ok) {
    free(*out);
    *out = NULL;
    error(r, "an event whose \"args\" are not where the shim puts them");
    return -1;
  }
  if (!e->caller)
    e->left++;
  return 1;
}

/* The closing line (`],"displayTimeUnit":...}`) is the end of a JSON
 * object that opened with the first line. */
static int closing_line_ok(const char *line) {
  char *text = NULL;
  if (asprintf(&text, "{\"traceEvents\":[%s", line) < 0)
    return 0;
  json_t *j = json_loads(text, 0, NULL);
  free(text);
  int ok = json_is_object(j);
  json_decref(j);
  return ok;
}

enum { AFTER_OPEN, AFTER_COMMA, AFTER_LAST, AFTER_CLOSE };

/* Copies the trace from in to out, naming what it can; the number of
 * lines changed, or -1 (said). */
static long copy_named(names *ns, reader *r, FILE *in, FILE *out) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  long changed = 0;
  int state = AFTER_OPEN;
  while (!r->failed && (len = getline(&line, &cap, in)) >= 0) {
    r->lineno++;
    size_t n = (size_t)len;
    int newline = n > 0 && line[n - 1] == '\n';
    if (newline)
      line[--n] = '\0';
    if (r->lineno == 1) {
      if (strcmp(line, "{\"traceEvents\":[") != 0)
        error(r, "not a blockwatch trace (its first line is not "
                 "{\"traceEvents\":[)");
    } else if (state == AFTER_CLOSE) {
      if (n > 0)
        error(r, "text after the trace's closing line");
    } else if (line[0] == ']') {
      if (state == AFTER_COMMA)
        error(r, "a comma after the last event");
      else if (!closing_line_ok(line))
        error(r, "the trace's closing line is not JSON");
      state = AFTER_CLOSE;
    } else if (line[0] != '{' || state == AFTER_LAST) {
      error(r, state == AFTER_LAST ? "no comma between two events"
                                   : "not one event per line");
    } else {
      int comma = n > 1 && line[n - 1] == ',';
      size_t event_n = comma ? n - 1 : n;
      state = comma ? AFTER_COMMA : AFTER_LAST;
      if (line[event_n - 1] != '}') {
        error(r, "not a whole event (cut short?)");
        break;
      }
      char *named = NULL;
      size_t named_n = 0;
      int got = strstr(line, "\"caller\":null")
                    ? rename_line(ns, r, line, event_n, &named, &named_n)
                    : 0;
      if (got == 1) {
        changed += named_n != event_n || memcmp(named, line, event_n) != 0;
        fwrite(named, 1, named_n, out);
        fputs(comma ? ",\n" : "\n", out);
        free(named);
        continue;
      }
    }
    if (!r->failed) {
      fwrite(line, 1, n, out);
      if (newline)
        fputc('\n', out);
    }
  }
  free(line);
  if (!r->failed && ferror(in)) {
    char what[300];
    snprintf(what, sizeof what, "cannot read it: %s", strerror(errno));
    error(r, what);
  }
  if (!r->failed && r->lineno == 0)
    error(r, "an empty file, not a blockwatch trace");
  else if (!r->failed && state != AFTER_CLOSE)
    error(r, "the trace ends here, without its closing line (cut short?)");
  return r->failed ? -1 : changed;
}

/* Names the trace at path in place: 0 (named, or nothing to name), 1
 * when it cannot be read (said, as a warning), -1 when it is not a trace
 * of the shim's or cannot be rewritten (said). */
static int name_trace(names *ns, const char *path, const char *who) {
  FILE *in = fopen(path, "r");
  struct stat st;
  if (!in || fstat(fileno(in), &st) != 0) {
    fprintf(stderr, "%s: warning: cannot read the trace '%s': %s\n", who, path,
            strerror(errno));
    if (in)
      fclose(in);
    return 1;
  }
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp.bw-merge.%d", path, (int)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                st.st_mode & 0777);
  FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!out) {
    fprintf(stderr, "%s: warning: cannot write '%s' to name the trace: %s\n",
            who, tmp, strerror(errno));
    if (fd >= 0) {
      close(fd);
      unlink(tmp);
    }
    fclose(in);
    return -1;
  }
  reader r = {.path = path, .who = who};
  long changed = copy_named(ns, &r, in, out);
  fclose(in);
  int ok = changed >= 0, renamed = 0;
  if (fclose(out) != 0 && ok && changed > 0) {
    fprintf(stderr,
            "%s: warning: cannot write '%s': %s; the trace is left as it "
            "was\n",
            who, tmp, strerror(errno));
    ok = 0;
  }
  if (ok && changed > 0) {
    renamed = rename(tmp, path) == 0;
    if (!renamed)
      fprintf(stderr,
              "%s: warning: cannot replace '%s': %s; the trace is left as "
              "it was\n",
              who, path, strerror(errno));
    ok = renamed;
  }
  if (!renamed)
    unlink(tmp);
  /* One line per module and reason. */
  for (size_t i = 0; i < ns->n; i++) {
    name *e = &ns->list[i];
    long left = e->left;
    for (size_t k = i + 1; k < ns->n && left > 0; k++) {
      name *o = &ns->list[k];
      if (o->left > 0 && strcmp(o->note, e->note) == 0 &&
          strcmp(o->module, e->module) == 0) {
        left += o->left;
        o->left = 0;
      }
    }
    if (left > 0 && ok)
      fprintf(stderr,
              "%s: warning: %s: %ld slice(s) left unnamed (module + offset "
              "kept): %s: %s\n",
              who, path, left, e->module, e->note);
    e->left = 0;
  }
  return ok ? 0 : -1;
}

int bwm_name_traces(json_t *procs, const char *who) {
  json_t *seen = json_object();
  names ns = {.index = json_object()};
  int bad = 0;
  size_t i;
  json_t *report;
  json_array_foreach(procs, i, report) {
    const char *path = json_string_value(json_object_get(report, "trace_file"));
    if (!path || json_object_get(seen, path))
      continue;
    json_object_set_new(seen, path, json_true());
    bad += name_trace(&ns, path, who) < 0;
  }
  for (size_t k = 0; k < ns.n; k++) {
    free(ns.list[k].caller);
    free(ns.list[k].at);
    free(ns.list[k].module);
  }
  free(ns.list);
  json_decref(ns.index);
  json_decref(seen);
  return bad;
}
