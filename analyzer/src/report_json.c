/* report_json.c - the JSON report (version 2) and baselines.
 *
 * Invariant: key names are a contract read by other tools and tests:
 * {"version":2,"findings":[{"file","line","column","rule","function",
 * "category","severity","message","hint","callback":{"name","file","line"},
 * "submit":{"entry","file","line","column"},"chain":[{"function","file",
 * "line","column"}],"fingerprint"}],"errors":[{"file","line","column",
 * "message"}]}. "function" is the blocking function; "caller" (added) is
 * the function that calls it; "runs_on" (added) is "pool" or "loop". Add
 * keys, never rename them.
 * Version 2: a finding is one blocking call site and rule; the keys of
 * version 1 describe its best callback (high confidence first, then the
 * shortest chain). Added: "confidence" ("high" or "low"), "site_fingerprint",
 * "callbacks" (every callback reaching the site, that one first: "name",
 * "file", "line", "submit", "runs_on", "confidence", "chain_length",
 * "fingerprint"), and per chain step "through" and "targets" when the call
 * goes through a function pointer, "cold" when it is on a cold path
 * ("assertion", "noreturn", or "once": in a once-only initialisation);
 * "pool_kind" ("offload") on a finding and a callback whose pool is not a
 * general one.
 */
#include "report.h"

#include "util.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static json_t *str(const char *text) {
  return json_string(text ? text : "");
}

static void set_loc(json_t *obj, const bwsc__report *report,
                    const bwsc__loc *loc, int with_column) {
  json_object_set_new(obj, "file", str(bwsc__report_path(report, loc->file)));
  json_object_set_new(obj, "line", json_integer(loc->line));
  if (with_column)
    json_object_set_new(obj, "column", json_integer(loc->col));
}

static json_t *finding_json(const bwsc__report *report,
                            const bwsc__finding *f) {
  json_t *obj = json_object();
  set_loc(obj, report, &f->loc, 1);
  json_object_set_new(obj, "rule", str(f->rule->id));
  json_object_set_new(obj, "function", str(f->callee));
  json_object_set_new(obj, "caller", str(f->function));
  json_object_set_new(obj, "category",
                      str(bw_rule_category_name(f->rule->category)));
  json_object_set_new(obj, "severity",
                      str(bw_rule_severity_name(f->rule->severity)));
  json_object_set_new(obj, "message", str(f->message));
  json_object_set_new(obj, "hint", str(f->hint));
  json_object_set_new(obj, "runs_on", str(bw_runs_on_name(f->runs_on)));
  if (f->pool_kind != BW_POOL_GENERAL)
    json_object_set_new(obj, "pool_kind", str(bw_pool_kind_name(f->pool_kind)));
  json_t *cb = json_object();
  json_object_set_new(cb, "name", str(f->callback));
  set_loc(cb, report, &f->callback_loc, 0);
  json_object_set_new(obj, "callback", cb);
  json_t *submit = json_object();
  json_object_set_new(submit, "entry", str(f->entry));
  set_loc(submit, report, &f->submit_loc, 1);
  json_object_set_new(obj, "submit", submit);
  json_t *chain = json_array();
  for (size_t s = 0; s < f->nchain; s++) {
    const bwsc__step *at = &f->chain[s];
    json_t *step = json_object();
    json_object_set_new(step, "function", str(at->function));
    set_loc(step, report, &at->loc, 1);
    if (at->through) {
      json_object_set_new(step, "through", str(at->through));
      json_object_set_new(step, "targets",
                          json_integer((json_int_t)at->ntargets));
    }
    if (at->cold)
      json_object_set_new(step, "cold",
                          str(at->cold == BWSC__COLD_ASSERT     ? "assertion"
                              : at->cold == BWSC__COLD_NORETURN ? "noreturn"
                                                                : "once"));
    json_array_append_new(chain, step);
  }
  json_object_set_new(obj, "chain", chain);
  json_object_set_new(obj, "fingerprint", str(f->fingerprint));
  json_object_set_new(obj, "confidence", str(f->low ? "low" : "high"));
  json_object_set_new(obj, "site_fingerprint", str(f->site_fingerprint));
  json_t *callbacks = json_array();
  for (size_t v = 0; v < f->nvias; v++) {
    const bwsc__via *via = &f->vias[v];
    json_t *one = json_object();
    json_object_set_new(one, "name", str(via->callback));
    set_loc(one, report, &via->callback_loc, 0);
    json_t *at = json_object();
    json_object_set_new(at, "entry", str(via->entry));
    set_loc(at, report, &via->submit_loc, 1);
    json_object_set_new(one, "submit", at);
    json_object_set_new(one, "runs_on", str(bw_runs_on_name(via->runs_on)));
    if (via->pool_kind != BW_POOL_GENERAL)
      json_object_set_new(one, "pool_kind",
                          str(bw_pool_kind_name(via->pool_kind)));
    json_object_set_new(one, "confidence", str(via->low ? "low" : "high"));
    json_object_set_new(one, "chain_length",
                        json_integer((json_int_t)via->nchain));
    json_object_set_new(one, "fingerprint", str(via->fingerprint));
    json_array_append_new(callbacks, one);
  }
  json_object_set_new(obj, "callbacks", callbacks);
  return obj;
}

int bwsc__write_json(const bwsc__report *report, FILE *out) {
  json_t *root = json_object();
  json_object_set_new(root, "version", json_integer(2));
  json_t *findings = json_array();
  for (size_t i = 0; i < report->findings->count; i++)
    json_array_append_new(findings,
                          finding_json(report, &report->findings->items[i]));
  json_object_set_new(root, "findings", findings);
  json_t *errors = json_array();
  for (size_t i = 0; i < report->errors->count; i++) {
    const bwsc__error *err = &report->errors->items[i];
    json_t *obj = json_object();
    json_object_set_new(obj, "file", str(bwsc__report_path(report, err->file)));
    json_object_set_new(obj, "line", json_integer(err->line));
    json_object_set_new(obj, "column", json_integer(err->col));
    json_object_set_new(obj, "message", str(err->message));
    json_array_append_new(errors, obj);
  }
  json_object_set_new(root, "errors", errors);
  int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  fputc('\n', out);
  json_decref(root);
  return rc == 0 ? 0 : -1;
}

int bwsc__baseline_write(const bwsc__findings *findings, const char *path) {
  FILE *out = fopen(path, "w");
  if (!out)
    return -1;
  fputs("# blockscan baseline: fingerprint rule function callback\n", out);
  for (size_t i = 0; i < findings->count; i++) {
    const bwsc__finding *f = &findings->items[i];
    fprintf(out, "%s %s %s %s\n", f->fingerprint, f->rule->id, f->callee,
            f->callback);
  }
  return fclose(out) == 0 ? 0 : -1;
}

int bwsc__baseline_apply(bwsc__findings *findings, const char *path) {
  FILE *in = fopen(path, "r");
  if (!in)
    return -1;
  char line[1024];
  while (fgets(line, sizeof(line), in)) {
    if (line[0] == '#' || line[0] == '\n')
      continue;
    char print[17];
    size_t len = strcspn(line, " \t\n");
    if (len != 16)
      continue;
    memcpy(print, line, 16);
    print[16] = '\0';
    for (size_t i = 0; i < findings->count; i++) {
      if (strcmp(findings->items[i].fingerprint, print) == 0) {
        bwsc__findings_remove(findings, i);
        break;
      }
    }
  }
  fclose(in);
  return 0;
}
