/* The directives: building blocking, entry, posts, passes, nonblocking, ready,
 * hint and allow rules from a line parse.c has read, and carrying out include:,
 * enable: and disable:.
 *
 * Invariants:
 *  - A rule is added only after every field of its line checked out; the
 *    checks compare the scratch copies, so a bad line keeps nothing.
 *  - Duplicates are found against the committed rules and the ones this
 *    load added (bwrl__load_find_*), so they are caught across files.
 */
#include "rules_internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const bwrl__key_spec blocking_keys[] = {
    {"category", 0}, {"severity", 0}, {"message", 0}, {"hint", 0},
    {"unless", 1},   {"api", 0},      {"fds", 0},     {NULL, 0}};
static const bwrl__key_spec entry_keys[] = {
    {"arg", 0},    {"on", 0},  {"field", 0}, {"setter", 0},
    {"object", 0}, {"api", 0}, {"kind", 0},  {NULL, 0}};
static const bwrl__key_spec posts_keys[] = {{"from", 0}, {"api", 0}, {NULL, 0}};
static const bwrl__key_spec passes_keys[] = {
    {"arg", 0}, {"object", 0}, {"data", 0}, {"api", 0}, {NULL, 0}};
static const bwrl__key_spec nonblock_keys[] = {
    {"fd", 0},    {"when", 1}, {"otherwise", 0}, {"path", 0},
    {"under", 0}, {"api", 0},  {NULL, 0}};
static const bwrl__key_spec ready_keys[] = {{"param", 0}, {"source", 0},
                                            {"test", 0},  {"for", 0},
                                            {"api", 0},   {NULL, 0}};
static const bwrl__key_spec hint_keys[] = {{"api", 0}, {"hint", 0}, {NULL, 0}};
static const bwrl__key_spec allow_keys[] = {{"reason", 0}, {NULL, 0}};

/* ---- directives ---- */

/* Checks the subject of a rule line, a function name (or for allow rules a
 * pattern), and reads the line's fields; 0, or -EINVAL after reporting. */
static int read_rule(bwrl__line *lc, const bwrl__subject *subj, int pattern,
                     const bwrl__key_spec *keys, const char *kind) {
  char q[BWRL__QUOTE_BUF];
  if (pattern ? !bwrl__valid_pattern(subj->text, subj->len)
              : !bwrl__valid_ident(subj->text, subj->len)) {
    bwrl__fail(lc, subj->column, "invalid function %s '%s'",
               pattern ? "pattern" : "name",
               bwrl__quote(subj->text, subj->len, q));
    return -EINVAL;
  }
  return bwrl__read_fields(lc, keys, kind);
}

static void add_blocking(bwrl__line *lc, const bwrl__subject *subj,
                         unsigned kcol) {
  char q[BWRL__QUOTE_BUF];
  if (read_rule(lc, subj, 0, blocking_keys, "blocking"))
    return;
  bw_blocking_rule tmp = {0};
  tmp.severity = BW_SEVERITY_WARNING;
  const bwrl__field *f = bwrl__get_field(lc, "category");
  if (f == NULL) {
    bwrl__fail(lc, kcol,
               "missing required key 'category' in blocking rule for '%s'",
               bwrl__quote(subj->text, subj->len, q));
    return;
  }
  if (bw_rule_category_parse(f->value, &tmp.category)) {
    bwrl__fail(lc, f->column, "unknown category '%s'",
               bwrl__quote(f->value, f->len, q));
    return;
  }
  if ((f = bwrl__get_field(lc, "severity")) != NULL) {
    if (strcmp(f->value, "note") == 0)
      tmp.severity = BW_SEVERITY_NOTE;
    else if (strcmp(f->value, "warning") == 0)
      tmp.severity = BW_SEVERITY_WARNING;
    else if (strcmp(f->value, "error") == 0)
      tmp.severity = BW_SEVERITY_ERROR;
    else {
      bwrl__fail(lc, f->column,
                 "unknown severity '%s' (expected note, warning or error)",
                 bwrl__quote(f->value, f->len, q));
      return;
    }
  }
  if (bwrl__parse_conditions(lc, "unless", tmp.unless, &tmp.n_unless))
    return;
  if ((f = bwrl__get_field(lc, "fds")) != NULL) {
    int arg;
    if (bwrl__parse_arg_index(f->value, f->len, &arg)) {
      bwrl__fail(lc, f->column, "bad value '%s' for 'fds' (expected 0 to %d)",
                 bwrl__quote(f->value, f->len, q), BWRL__MAX_ARG);
      return;
    }
    tmp.fds = arg + 1;
  }
  const bw_blocking_rule *old = bwrl__load_find_blocking(lc->ld, subj->text);
  if (old != NULL) {
    bwrl__fail(lc, subj->column,
               "duplicate blocking rule for '%s' (first defined at %s:%u)",
               subj->text, old->origin.file, old->origin.line);
    return;
  }
  tmp.function = bwrl__keep(lc, subj->text, subj->len);
  tmp.id = bw_rule_category_id(tmp.category);
  f = bwrl__get_field(lc, "api");
  tmp.api = f ? bwrl__keep(lc, f->value, f->len) : lc->api;
  f = bwrl__get_field(lc, "message");
  if (f != NULL) {
    tmp.message = bwrl__keep(lc, f->value, f->len);
  } else {
    /* Default: "sleep() sleeps on a pool or loop thread". */
    char msg[512];
    int n = snprintf(msg, sizeof(msg), "%s() %s", subj->text,
                     bw_rule_category_description(tmp.category));
    tmp.message = bwrl__keep(lc, msg, n < 0 ? 0 : (size_t)n);
  }
  f = bwrl__get_field(lc, "hint");
  tmp.hint = f ? bwrl__keep(lc, f->value, f->len)
               : bw_rule_category_hint(tmp.category);
  tmp.origin.file = lc->file;
  tmp.origin.line = lc->lineno;
  if (!tmp.function || !tmp.api || !tmp.message || !tmp.hint)
    return;
  bw_blocking_rule *rule = malloc(sizeof(*rule));
  if (rule == NULL) {
    lc->ld->oom = 1;
    return;
  }
  *rule = tmp;
  if (bwrl__vec_push(&lc->ld->rs->blocking, rule)) {
    free(rule);
    lc->ld->oom = 1;
    return;
  }
  if (bwrl__index_put(&lc->ld->new_blocking, rule->function, rule))
    lc->ld->oom = 1;
}

static int same_callback(const bw_entry_callback *a,
                         const bw_entry_callback *b) {
  if (a->kind != b->kind || a->arg != b->arg || a->object != b->object)
    return 0;
  if ((a->field == NULL) != (b->field == NULL) ||
      (a->field && strcmp(a->field, b->field) != 0))
    return 0;
  if ((a->setter == NULL) != (b->setter == NULL) ||
      (a->setter && strcmp(a->setter, b->setter) != 0))
    return 0;
  return 1;
}

static int parse_index_field(bwrl__line *lc, const bwrl__field *f, int *out) {
  char q[BWRL__QUOTE_BUF];
  if (bwrl__parse_arg_index(f->value, f->len, out)) {
    bwrl__fail(lc, f->column,
               "bad argument index '%s' for '%s' (expected 0 to %d)",
               bwrl__quote(f->value, f->len, q), f->key, BWRL__MAX_ARG);
    return -EINVAL;
  }
  return 0;
}

static void add_entry(bwrl__line *lc, const bwrl__subject *subj,
                      unsigned kcol) {
  char q[BWRL__QUOTE_BUF];
  if (read_rule(lc, subj, 0, entry_keys, "entry"))
    return;
  bw_entry_callback cb = {0};
  cb.kind = BW_CALLBACK_ARG;
  cb.object = -1;
  const bwrl__field *arg = bwrl__get_field(lc, "arg");
  const bwrl__field *on = bwrl__get_field(lc, "on");
  const bwrl__field *fld = bwrl__get_field(lc, "field");
  const bwrl__field *setter = bwrl__get_field(lc, "setter");
  const bwrl__field *object = bwrl__get_field(lc, "object");
  const bwrl__field *kind = bwrl__get_field(lc, "kind");
  if (arg == NULL || on == NULL) {
    bwrl__fail(lc, kcol, "missing required key '%s' in entry rule for '%s'",
               arg == NULL ? "arg" : "on",
               bwrl__quote(subj->text, subj->len, q));
    return;
  }
  if (parse_index_field(lc, arg, &cb.arg))
    return;
  if (strcmp(on->value, "pool") == 0)
    cb.runs_on = BW_RUNS_ON_POOL;
  else if (strcmp(on->value, "loop") == 0)
    cb.runs_on = BW_RUNS_ON_LOOP;
  else {
    bwrl__fail(lc, on->column,
               "unknown value '%s' for 'on' (expected pool or loop)",
               bwrl__quote(on->value, on->len, q));
    return;
  }
  if (kind != NULL) {
    if (bw_pool_kind_parse(kind->value, &cb.pool_kind)) {
      bwrl__fail(lc, kind->column,
                 "unknown pool kind '%s' (expected general, offload or "
                 "blocking)",
                 bwrl__quote(kind->value, kind->len, q));
      return;
    }
    if (cb.runs_on != BW_RUNS_ON_POOL) {
      bwrl__fail(lc, kind->key_column, "'kind' is only valid with on=pool");
      return;
    }
  }
  if (fld != NULL && setter != NULL) {
    bwrl__fail(lc, setter->key_column,
               "'field' and 'setter' cannot be combined");
    return;
  }
  if (fld != NULL) {
    if (!bwrl__valid_ident(fld->value, fld->len)) {
      bwrl__fail(lc, fld->column, "invalid field name '%s'",
                 bwrl__quote(fld->value, fld->len, q));
      return;
    }
    cb.kind = BW_CALLBACK_FIELD;
  }
  if (setter != NULL) {
    if (!bwrl__valid_ident(setter->value, setter->len)) {
      bwrl__fail(lc, setter->column, "invalid function name '%s'",
                 bwrl__quote(setter->value, setter->len, q));
      return;
    }
    if (object == NULL) {
      bwrl__fail(lc, setter->key_column,
                 "'setter' needs 'object' (the argument "
                 "the callback was set on)");
      return;
    }
    cb.kind = BW_CALLBACK_SETTER;
  }
  if (object != NULL) {
    if (setter == NULL) {
      bwrl__fail(lc, object->key_column,
                 "'object' is only valid with 'setter'");
      return;
    }
    if (parse_index_field(lc, object, &cb.object))
      return;
  }
  const bwrl__field *api = bwrl__get_field(lc, "api");
  const char *api_name = api ? api->value : lc->api;
  /* Compare with the scratch copies first: nothing is kept on error. */
  cb.field = fld ? fld->value : NULL;
  cb.setter = setter ? setter->value : NULL;
  bw_entry_rule *rule = bwrl__load_find_entry(lc->ld, subj->text);
  if (rule != NULL) {
    if (strcmp(rule->api, api_name) != 0) {
      bwrl__fail(lc, api ? api->column : kcol,
                 "conflicting api '%s' for entry '%s' (first defined with api "
                 "'%s' at %s:%u)",
                 api_name, subj->text, rule->api,
                 rule->callbacks[0].origin.file,
                 rule->callbacks[0].origin.line);
      return;
    }
    for (size_t i = 0; i < rule->n_callbacks; i++) {
      if (same_callback(&rule->callbacks[i], &cb)) {
        bwrl__fail(lc, arg->key_column,
                   "duplicate callback arg=%d for entry '%s' (first defined at "
                   "%s:%u)",
                   cb.arg, subj->text, rule->callbacks[i].origin.file,
                   rule->callbacks[i].origin.line);
        return;
      }
    }
    if (rule->n_callbacks == BW_ENTRY_MAX_CALLBACKS) {
      bwrl__fail(lc, kcol, "too many callbacks for entry '%s' (at most %d)",
                 subj->text, BW_ENTRY_MAX_CALLBACKS);
      return;
    }
  }
  cb.field = fld ? bwrl__keep(lc, fld->value, fld->len) : NULL;
  cb.setter = setter ? bwrl__keep(lc, setter->value, setter->len) : NULL;
  cb.origin.file = lc->file;
  cb.origin.line = lc->lineno;
  if ((fld && !cb.field) || (setter && !cb.setter))
    return;
  if (rule != NULL) {
    rule->callbacks[rule->n_callbacks++] = cb;
    return;
  }
  rule = calloc(1, sizeof(*rule));
  if (rule == NULL) {
    lc->ld->oom = 1;
    return;
  }
  rule->function = bwrl__keep(lc, subj->text, subj->len);
  rule->api = api ? bwrl__keep(lc, api->value, api->len) : lc->api;
  rule->n_callbacks = 1;
  rule->callbacks[0] = cb;
  if (!rule->function || !rule->api ||
      bwrl__vec_push(&lc->ld->rs->entries, rule)) {
    free(rule);
    lc->ld->oom = 1;
    return;
  }
  if (bwrl__index_put(&lc->ld->new_entries, rule->function, rule))
    lc->ld->oom = 1;
}

/* Reports a `kind` rule for the subject already in `rules`, a vector of
 * rules whose first member is their name and whose origin is at byte
 * `origin_at` (allow, posts, nonblocking and ready rules, searched in
 * full: they are few or have no index during a load); 1 when there is
 * one. */
static int is_duplicate(bwrl__line *lc, const bwrl__subject *subj,
                        const bwrl__vec *rules, size_t origin_at,
                        const char *kind) {
  for (size_t i = 0; i < rules->n; i++) {
    const char *item = rules->items[i];
    const char *name = *(const char *const *)(const void *)item;
    if (strcmp(name, subj->text) == 0) {
      const bw_rule_origin *old = (const void *)(item + origin_at);
      bwrl__fail(lc, subj->column,
                 "duplicate %s rule for '%s' (first defined at %s:%u)", kind,
                 subj->text, old->file, old->line);
      return 1;
    }
  }
  return 0;
}

/* Appends a copy of the `size` bytes of `tmp` to `rules` (ld->oom set when
 * out of memory). */
static void push_rule(bwrl__line *lc, bwrl__vec *rules, const void *tmp,
                      size_t size) {
  void *rule = malloc(size);
  if (rule != NULL)
    memcpy(rule, tmp, size);
  if (rule == NULL || bwrl__vec_push(rules, rule)) {
    free(rule);
    lc->ld->oom = 1;
  }
}

/* The field `key` of a `kind` rule, or NULL after reporting it missing. */
static const bwrl__field *required(bwrl__line *lc, const bwrl__subject *subj,
                                   unsigned kcol, const char *key,
                                   const char *kind) {
  char q[BWRL__QUOTE_BUF];
  const bwrl__field *f = bwrl__get_field(lc, key);
  if (f == NULL)
    bwrl__fail(lc, kcol, "missing required key '%s' in %s rule for '%s'", key,
               kind, bwrl__quote(subj->text, subj->len, q));
  return f;
}

/* The argument index field `f` holds into *out: 0, or -1 after reporting a
 * bad value for key `key`. */
static int index_field(bwrl__line *lc, const bwrl__field *f, const char *key,
                       int *out) {
  char q[BWRL__QUOTE_BUF];
  if (bwrl__parse_arg_index(f->value, f->len, out) == 0)
    return 0;
  bwrl__fail(lc, f->column, "bad value '%s' for '%s' (expected 0 to %d)",
             bwrl__quote(f->value, f->len, q), key, BWRL__MAX_ARG);
  return -1;
}

/* Keeps the subject, the line's api= (or the file's) and where the line is
 * into a rule's `function`, `api` and `origin`; 0 when out of memory. */
static int keep_names(bwrl__line *lc, const bwrl__subject *subj,
                      const char **function, const char **api,
                      bw_rule_origin *origin) {
  const bwrl__field *f = bwrl__get_field(lc, "api");
  *function = bwrl__keep(lc, subj->text, subj->len);
  *api = f ? bwrl__keep(lc, f->value, f->len) : lc->api;
  origin->file = lc->file;
  origin->line = lc->lineno;
  return *function && *api;
}

/* posts:FN from=ENTRY - FN queues the callback ENTRY registered; the rule
 * only tells the walk not to follow FN as a call, so it keeps no more than
 * the names. */
static void add_posts(bwrl__line *lc, const bwrl__subject *subj,
                      unsigned kcol) {
  char q[BWRL__QUOTE_BUF];
  if (read_rule(lc, subj, 0, posts_keys, "posts"))
    return;
  const bwrl__field *from = required(lc, subj, kcol, "from", "posts");
  if (from == NULL)
    return;
  if (!bwrl__valid_ident(from->value, from->len)) {
    bwrl__fail(lc, from->column, "invalid function name '%s'",
               bwrl__quote(from->value, from->len, q));
    return;
  }
  bwrl__vec *posts = &lc->ld->rs->posts;
  if (is_duplicate(lc, subj, posts, offsetof(bw_post_rule, origin), "posts"))
    return;
  bw_post_rule tmp;
  tmp.from = bwrl__keep(lc, from->value, from->len);
  if (keep_names(lc, subj, &tmp.function, &tmp.api, &tmp.origin) && tmp.from)
    push_rule(lc, posts, &tmp, sizeof(tmp));
}

/* passes:FN arg=C object=A data=D - FN calls its callback argument C with
 * its argument A first and its argument D last; at least one of the two,
 * neither the callback itself. */
static void add_passes(bwrl__line *lc, const bwrl__subject *subj,
                       unsigned kcol) {
  char q[BWRL__QUOTE_BUF];
  if (read_rule(lc, subj, 0, passes_keys, "passes"))
    return;
  const bwrl__field *arg = required(lc, subj, kcol, "arg", "passes");
  bw_pass_rule tmp;
  tmp.object = tmp.data = -1;
  if (arg == NULL || index_field(lc, arg, "arg", &tmp.callback))
    return;
  const bwrl__field *object = bwrl__get_field(lc, "object");
  const bwrl__field *data = bwrl__get_field(lc, "data");
  if ((object && index_field(lc, object, "object", &tmp.object)) ||
      (data && index_field(lc, data, "data", &tmp.data)))
    return;
  if (!object && !data) {
    bwrl__fail(lc, kcol, "passes rule for '%s' needs 'object' or 'data'",
               bwrl__quote(subj->text, subj->len, q));
    return;
  }
  if (tmp.object == tmp.callback || tmp.data == tmp.callback) {
    bwrl__fail(lc, (tmp.object == tmp.callback ? object : data)->column,
               "'%s' is the callback argument %d itself",
               tmp.object == tmp.callback ? "object" : "data", tmp.callback);
    return;
  }
  bwrl__vec *passes = &lc->ld->rs->passes;
  if (is_duplicate(lc, subj, passes, offsetof(bw_pass_rule, origin), "passes"))
    return;
  if (keep_names(lc, subj, &tmp.function, &tmp.api, &tmp.origin))
    push_rule(lc, passes, &tmp, sizeof(tmp));
}

/* "path=N under=PREFIX" of a nonblocking rule into *rule: 0, or -1 after
 * reporting (one without the other, a bad index). */
static int read_path(bwrl__line *lc, bw_nonblock_rule *rule) {
  const bwrl__field *path = bwrl__get_field(lc, "path");
  const bwrl__field *under = bwrl__get_field(lc, "under");
  if (!path && !under)
    return 0;
  if (!path || !under) {
    bwrl__fail(lc, (path ? path : under)->key_column, "'%s' needs '%s'",
               path ? "path" : "under", path ? "under" : "path");
    return -1;
  }
  if (index_field(lc, path, "path", &rule->path_arg))
    return -1;
  rule->path_prefix = bwrl__keep(lc, under->value, under->len);
  return rule->path_prefix ? 0 : -1;
}

/* nonblocking:FN fd=N|result when="..." - FN makes its descriptor argument
 * N (or the one it returns) non-blocking when every condition holds (and,
 * with path=, the path is under a memory-backed file system). */
static void add_nonblock(bwrl__line *lc, const bwrl__subject *subj,
                         unsigned kcol) {
  char q[BWRL__QUOTE_BUF];
  if (read_rule(lc, subj, 0, nonblock_keys, "nonblocking"))
    return;
  bw_nonblock_rule tmp = {0};
  const bwrl__field *fd = required(lc, subj, kcol, "fd", "nonblocking");
  if (fd == NULL)
    return;
  if (strcmp(fd->value, "result") == 0) {
    tmp.fd_arg = -1;
  } else if (bwrl__parse_arg_index(fd->value, fd->len, &tmp.fd_arg)) {
    bwrl__fail(lc, fd->column,
               "bad value '%s' for 'fd' (expected 0 to %d, or result)",
               bwrl__quote(fd->value, fd->len, q), BWRL__MAX_ARG);
    return;
  }
  if (bwrl__parse_conditions(lc, "when", tmp.when, &tmp.n_when))
    return;
  const bwrl__field *otherwise = bwrl__get_field(lc, "otherwise");
  if (otherwise && strcmp(otherwise->value, "blocking") != 0) {
    bwrl__fail(lc, otherwise->column,
               "unknown value '%s' for 'otherwise' (expected blocking)",
               bwrl__quote(otherwise->value, otherwise->len, q));
    return;
  }
  if (otherwise && tmp.n_when == 0) {
    bwrl__fail(lc, otherwise->key_column,
               "'otherwise' needs a 'when' condition");
    return;
  }
  tmp.otherwise_blocking = otherwise != NULL;
  if (read_path(lc, &tmp))
    return;
  bwrl__vec *rules = &lc->ld->rs->nonblocks;
  if (is_duplicate(lc, subj, rules, offsetof(bw_nonblock_rule, origin),
                   "nonblocking"))
    return;
  if (keep_names(lc, subj, &tmp.function, &tmp.api, &tmp.origin))
    push_rule(lc, rules, &tmp, sizeof(tmp));
}

/* "source=result|N" of a ready rule into *rule: 0, or -1 after reporting
 * (a bad value, a `param` with an argument's source or none without). */
static int read_source(bwrl__line *lc, const bwrl__subject *subj, unsigned kcol,
                       bw_ready_rule *rule) {
  char q[BWRL__QUOTE_BUF];
  const bwrl__field *source = bwrl__get_field(lc, "source");
  const bwrl__field *param = bwrl__get_field(lc, "param");
  const bwrl__field *test = bwrl__get_field(lc, "test");
  const bwrl__field *dir = bwrl__get_field(lc, "for");
  rule->source = BW_READY_NO_SOURCE;
  rule->param = -1;
  rule->test = -1;
  if (test || dir) {
    const bwrl__field *other = param ? param : source;
    if (!test) {
      bwrl__fail(lc, dir->key_column, "'for' needs 'test=N'");
      return -1;
    }
    if (other) {
      bwrl__fail(lc, other->key_column,
                 "'%s' with 'test': a readiness test has no callback",
                 other == param ? "param" : "source");
      return -1;
    }
    if (!required(lc, subj, kcol, "for", "ready") ||
        index_field(lc, test, "test", &rule->test))
      return -1;
    if (strcmp(dir->value, "read") != 0 && strcmp(dir->value, "write") != 0) {
      bwrl__fail(lc, dir->column,
                 "bad value '%s' for 'for' (expected read or write)",
                 bwrl__quote(dir->value, dir->len, q));
      return -1;
    }
    rule->test_write = strcmp(dir->value, "write") == 0;
    return 0;
  }
  if (source && strcmp(source->value, "result") == 0)
    rule->source = BW_READY_SOURCE_RESULT;
  else if (source &&
           bwrl__parse_arg_index(source->value, source->len, &rule->source)) {
    bwrl__fail(lc, source->column,
               "bad value '%s' for 'source' (expected 0 to %d, or result)",
               bwrl__quote(source->value, source->len, q), BWRL__MAX_ARG);
    return -1;
  }
  if (rule->source >= 0) {
    if (param) {
      bwrl__fail(lc, param->key_column,
                 "'param' with 'source=%d': the parameter is the source "
                 "maker's (its source=result rule)",
                 rule->source);
      return -1;
    }
    return 0;
  }
  if (!required(lc, subj, kcol, "param", "ready"))
    return -1;
  return index_field(lc, param, "param", &rule->param);
}

/* ready:ENTRY param=N - the callback ENTRY registers runs when a
 * descriptor is ready, and receives it as its parameter N; with
 * source=result, a function that makes such a source; with source=M, an
 * entry registering the callback of the source in its argument M. */
static void add_ready(bwrl__line *lc, const bwrl__subject *subj,
                      unsigned kcol) {
  if (read_rule(lc, subj, 0, ready_keys, "ready"))
    return;
  bw_ready_rule tmp = {0};
  if (read_source(lc, subj, kcol, &tmp))
    return;
  bwrl__vec *rules = &lc->ld->rs->readies;
  if (is_duplicate(lc, subj, rules, offsetof(bw_ready_rule, origin), "ready"))
    return;
  if (keep_names(lc, subj, &tmp.function, &tmp.api, &tmp.origin))
    push_rule(lc, rules, &tmp, sizeof(tmp));
}

/* The category the subject names into *cat: 0, or -1 after an "unknown
 * category" error at the subject. */
static int subject_category(bwrl__line *lc, const bwrl__subject *subj,
                            bw_rule_category *cat) {
  char q[BWRL__QUOTE_BUF];
  if (bw_rule_category_parse(subj->text, cat) == 0)
    return 0;
  bwrl__fail(lc, subj->column, "unknown category '%s'",
             bwrl__quote(subj->text, subj->len, q));
  return -1;
}

/* hint:CATEGORY api=API hint="..." - the hint of CATEGORY's findings on
 * API's pools and loops. */
static void add_hint(bwrl__line *lc, const bwrl__subject *subj, unsigned kcol) {
  char q[BWRL__QUOTE_BUF];
  bw_rule_category cat;
  if (subject_category(lc, subj, &cat))
    return;
  if (bwrl__read_fields(lc, hint_keys, "hint"))
    return;
  const bwrl__field *api = bwrl__get_field(lc, "api");
  const bwrl__field *hint = bwrl__get_field(lc, "hint");
  if (api == NULL || hint == NULL) {
    bwrl__fail(lc, kcol, "missing required key '%s' in hint rule for '%s'",
               api == NULL ? "api" : "hint", subj->text);
    return;
  }
  if (!bwrl__valid_ident(api->value, api->len)) {
    bwrl__fail(lc, api->column, "invalid api name '%s'",
               bwrl__quote(api->value, api->len, q));
    return;
  }
  const bw_hint_rule *old = bw_rules_find_hint(lc->ld->rs, api->value, cat);
  if (old != NULL) {
    bwrl__fail(lc, subj->column,
               "duplicate hint rule for '%s' on api '%s' (first defined at "
               "%s:%u)",
               subj->text, api->value, old->origin.file, old->origin.line);
    return;
  }
  bw_hint_rule *rule = malloc(sizeof(*rule));
  if (rule == NULL) {
    lc->ld->oom = 1;
    return;
  }
  rule->category = cat;
  rule->api = bwrl__keep(lc, api->value, api->len);
  rule->hint = bwrl__keep(lc, hint->value, hint->len);
  rule->origin.file = lc->file;
  rule->origin.line = lc->lineno;
  if (!rule->api || !rule->hint || bwrl__vec_push(&lc->ld->rs->hints, rule)) {
    free(rule);
    lc->ld->oom = 1;
  }
}

static void add_allow(bwrl__line *lc, const bwrl__subject *subj,
                      unsigned kcol) {
  (void)kcol;
  if (read_rule(lc, subj, 1, allow_keys, "allow"))
    return;
  bwrl__vec *allows = &lc->ld->rs->allows;
  if (is_duplicate(lc, subj, allows, offsetof(bw_allow_rule, origin), "allow"))
    return;
  const bwrl__field *reason = bwrl__get_field(lc, "reason");
  bw_allow_rule *rule = malloc(sizeof(*rule));
  if (rule == NULL) {
    lc->ld->oom = 1;
    return;
  }
  rule->pattern = bwrl__keep(lc, subj->text, subj->len);
  rule->reason = reason ? bwrl__keep(lc, reason->value, reason->len) : "";
  rule->origin.file = lc->file;
  rule->origin.line = lc->lineno;
  if (!rule->pattern || !rule->reason || bwrl__vec_push(allows, rule)) {
    free(rule);
    lc->ld->oom = 1;
  }
}

static void do_include(bwrl__line *lc, const bwrl__subject *subj,
                       unsigned kcol) {
  (void)kcol;
  if (bwrl__expect_end(lc, "include"))
    return;
  size_t before = lc->ld->n_errors;
  bwrl__load_include(lc->ld, lc->dir, subj->text, lc->file, lc->lineno,
                     subj->column);
  /* Errors inside the included file were already reported there. */
  if (lc->ld->n_errors != before)
    lc->failed = 1;
}

static void do_category(bwrl__line *lc, const bwrl__subject *subj, int on) {
  bw_rule_category cat;
  if (subject_category(lc, subj, &cat))
    return;
  if (bwrl__expect_end(lc, on ? "enable" : "disable"))
    return;
  lc->ld->rs->enabled[cat] = (unsigned char)on;
}

static void do_enable(bwrl__line *lc, const bwrl__subject *subj,
                      unsigned kcol) {
  (void)kcol;
  do_category(lc, subj, 1);
}

static void do_disable(bwrl__line *lc, const bwrl__subject *subj,
                       unsigned kcol) {
  (void)kcol;
  do_category(lc, subj, 0);
}

const bwrl__directive bwrl__directives[] = {
    {"blocking", "function name", add_blocking},
    {"entry", "function name", add_entry},
    {"posts", "function name", add_posts},
    {"passes", "function name", add_passes},
    {"nonblocking", "function name", add_nonblock},
    {"ready", "function name", add_ready},
    {"hint", "category", add_hint},
    {"allow", "function pattern", add_allow},
    {"include", "file name", do_include},
    {"enable", "category", do_enable},
    {"disable", "category", do_disable},
    {NULL, NULL, NULL}};
