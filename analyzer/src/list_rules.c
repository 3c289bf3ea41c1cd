/* list_rules.c - `blockscan --list-rules`: every loaded rule, one line each
 * (see list_rules.h for the shape of the lines). */
#include "list_rules.h"

/* A value in double quotes, with `"` and `\` escaped as the rule files'
 * quoted values take them. */
static void put_quoted(const char *text, FILE *out) {
  fputc('"', out);
  for (const char *p = text; *p; p++) {
    if (*p == '"' || *p == '\\')
      fputc('\\', out);
    fputc(*p, out);
  }
  fputc('"', out);
}

/* One condition as a rule file spells it ("arg2 has O_NONBLOCK=0x800");
 * values past 9 in hex, as flags and ioctl numbers are written. */
static void put_cond(const bw_rule_cond *cond, FILE *out) {
  if (cond->kind == BW_COND_PATH_UNDER || cond->kind == BW_COND_MADE_BY) {
    fprintf(out, "arg%d is %s %s", cond->arg,
            cond->kind == BW_COND_MADE_BY ? "made-by" : "under", cond->name);
    return;
  }
  if (cond->kind == BW_COND_HAS_ROOM) {
    fprintf(out, "arg%d has room for arg%lld", cond->arg, cond->value);
    return;
  }
  if (cond->kind != BW_COND_EQUALS && cond->kind != BW_COND_HAS_FLAG) {
    fprintf(out, "arg%d %s", cond->arg, bw_cond_kind_name(cond->kind));
    return;
  }
  fprintf(out, "arg%d%s%s %s %s%s", cond->arg, cond->field ? "->" : "",
          cond->field ? cond->field : "",
          cond->kind == BW_COND_EQUALS ? "is" : "has",
          cond->name ? cond->name : "", cond->name ? "=" : "");
  if (cond->value > 9)
    fprintf(out, "0x%llx", (unsigned long long)cond->value);
  else
    fprintf(out, "%lld", cond->value);
}

static void put_conds(const char *key, const bw_rule_cond *conds, size_t n,
                      FILE *out) {
  for (size_t c = 0; c < n; c++) {
    fprintf(out, " %s=\"", key);
    put_cond(&conds[c], out);
    fputc('"', out);
  }
}

/* "arg=2 on=pool kind=offload", "arg=1 field=exit_cb on=loop",
 * "object=0 setter=g_source_set_callback arg=1 on=loop". */
static void put_callback(const bw_entry_callback *cb, FILE *out) {
  if (cb->kind == BW_CALLBACK_SETTER)
    fprintf(out, "object=%d setter=%s ", cb->object, cb->setter);
  fprintf(out, "arg=%d", cb->arg);
  if (cb->kind == BW_CALLBACK_FIELD)
    fprintf(out, " field=%s", cb->field);
  fprintf(out, " on=%s", bw_runs_on_name(cb->runs_on));
  if (cb->runs_on == BW_RUNS_ON_POOL && cb->pool_kind != BW_POOL_GENERAL)
    fprintf(out, " kind=%s", bw_pool_kind_name(cb->pool_kind));
}

static void list_entries(const bw_rules *rules, FILE *out) {
  size_t count = bw_rules_entry_count(rules);
  for (size_t i = 0; i < count; i++) {
    const bw_entry_rule *entry = bw_rules_entry_at(rules, i);
    fprintf(out, "entry %s (%s)", entry->function, entry->api);
    for (size_t c = 0; c < entry->n_callbacks; c++) {
      fputs(c ? ", " : " ", out);
      put_callback(&entry->callbacks[c], out);
    }
    fputc('\n', out);
  }
  count = bw_rules_post_count(rules);
  for (size_t i = 0; i < count; i++) {
    const bw_post_rule *post = bw_rules_post_at(rules, i);
    fprintf(out, "posts %s from %s (%s)\n", post->function, post->from,
            post->api);
  }
  count = bw_rules_pass_count(rules);
  for (size_t i = 0; i < count; i++) {
    const bw_pass_rule *pass = bw_rules_pass_at(rules, i);
    fprintf(out, "passes %s arg=%d", pass->function, pass->callback);
    if (pass->object >= 0)
      fprintf(out, " object=%d", pass->object);
    if (pass->data >= 0)
      fprintf(out, " data=%d", pass->data);
    fprintf(out, " (%s)\n", pass->api);
  }
  count = bw_rules_ready_count(rules);
  for (size_t i = 0; i < count; i++) {
    const bw_ready_rule *ready = bw_rules_ready_at(rules, i);
    fprintf(out, "ready %s", ready->function);
    if (ready->param >= 0)
      fprintf(out, " param=%d", ready->param);
    if (ready->source == BW_READY_SOURCE_RESULT)
      fprintf(out, " source=result");
    else if (ready->source >= 0)
      fprintf(out, " source=%d", ready->source);
    if (ready->test >= 0)
      fprintf(out, " test=%d for=%s", ready->test,
              ready->test_write ? "write" : "read");
    fprintf(out, " (%s)\n", ready->api);
  }
}

static void list_blocking(const bw_rules *rules, FILE *out) {
  size_t count = bw_rules_blocking_count(rules);
  for (size_t i = 0; i < count; i++) {
    const bw_blocking_rule *rule = bw_rules_blocking_at(rules, i);
    fprintf(out, "blocking %s %s (%s) category=%s severity=%s", rule->function,
            rule->id, rule->api, bw_rule_category_name(rule->category),
            bw_rule_severity_name(rule->severity));
    put_conds("unless", rule->unless, rule->n_unless, out);
    if (rule->fds)
      fprintf(out, " fds=%d", rule->fds - 1);
    fputs(" hint=", out);
    put_quoted(rule->hint, out);
    fputc('\n', out);
  }
  count = bw_rules_nonblock_count(rules);
  for (size_t i = 0; i < count; i++) {
    const bw_nonblock_rule *rule = bw_rules_nonblock_at(rules, i);
    fprintf(out, "nonblocking %s fd=", rule->function);
    if (rule->fd_arg < 0)
      fputs("result", out);
    else
      fprintf(out, "%d", rule->fd_arg);
    if (rule->path_prefix)
      fprintf(out, " path=%d under=%s", rule->path_arg, rule->path_prefix);
    put_conds("when", rule->when, rule->n_when, out);
    fprintf(out, "%s (%s)\n",
            rule->otherwise_blocking ? " otherwise=blocking" : "", rule->api);
  }
}

static void list_advice(const bw_rules *rules, FILE *out) {
  size_t count = bw_rules_hint_count(rules);
  for (size_t i = 0; i < count; i++) {
    const bw_hint_rule *hint = bw_rules_hint_at(rules, i);
    fprintf(out, "hint %s api=%s hint=", bw_rule_category_name(hint->category),
            hint->api);
    put_quoted(hint->hint, out);
    fputc('\n', out);
  }
  count = bw_rules_allow_count(rules);
  for (size_t i = 0; i < count; i++) {
    const bw_allow_rule *allow = bw_rules_allow_at(rules, i);
    fprintf(out, "allow %s", allow->pattern);
    if (allow->reason[0]) {
      fputs(" reason=", out);
      put_quoted(allow->reason, out);
    }
    fputc('\n', out);
  }
}

void bwsc__list_rules(const bw_rules *rules, FILE *out) {
  list_entries(rules, out);
  list_blocking(rules, out);
  list_advice(rules, out);
}
