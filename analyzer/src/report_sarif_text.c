/* report_sarif_text.c - the prose of blockscan's SARIF: rule names, each
 * rule's help, result messages with links to the submit sites.
 *
 * Invariants: a rule's help quotes only hints of its own category (the
 * hint rules for it per API, then the hints of the blocking functions the
 * report found, sorted by function); text the packs wrote is escaped for
 * where it goes (Markdown in help.markdown, brackets in SARIF messages).
 */
#include "report_sarif.h"

#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Text grown by appending (the rules' help). */
typedef struct strbuf {
  char *text;
  size_t len, cap;
} strbuf;

static void append(strbuf *buf, const char *piece) {
  size_t n = strlen(piece);
  bwsc__grow((void **)&buf->text, &buf->cap, buf->len + n + 1, 1);
  memcpy(buf->text + buf->len, piece, n + 1);
  buf->len += n;
}

/* Markdown escapes for text the rule packs wrote (hints, names). */
static void append_md(strbuf *buf, const char *text) {
  for (; *text; text++) {
    char one[3] = {'\\', *text, '\0'};
    append(buf, strchr("\\`*_[]<>#|", *text) ? one : one + 1);
  }
}

/* "blocking-sync-over-async" -> "BlockingSyncOverAsync", the friendly
 * name code scanning and Azure DevOps show. */
char *bwsc__sarif_rule_name(const char *id) {
  char *name = bwsc__xstrdup(id);
  size_t o = 0;
  for (const char *p = id; *p; p++) {
    if (*p == '-')
      continue;
    int first = p == id || p[-1] == '-';
    name[o++] = first && *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;
  }
  name[o] = '\0';
  return name;
}

static int by_function(const void *a, const void *b) {
  const bw_blocking_rule *const *x = a, *const *y = b;
  return strcmp((*x)->function, (*y)->function);
}

/* The blocking rules of category `cat` that this report's findings hit,
 * sorted by function, each once. Returns a malloc'd array (*count long). */
static const bw_blocking_rule **hit_rules(const bwsc__report *report,
                                          bw_rule_category cat, size_t *count) {
  const bw_blocking_rule **hit = NULL;
  size_t n = 0, cap = 0;
  for (size_t i = 0; i < report->findings->count; i++) {
    const bw_blocking_rule *rule = report->findings->items[i].rule;
    if (rule->category != cat)
      continue;
    bwsc__grow((void **)&hit, &cap, n + 1, sizeof(*hit));
    hit[n++] = rule;
  }
  if (n)
    qsort(hit, n, sizeof(*hit), by_function);
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    if (!kept || hit[kept - 1] != hit[i])
      hit[kept++] = hit[i];
  }
  *count = kept;
  return hit;
}

/* 1 when entry e is the first loaded entry of its api (hint rules are per
 * api: each is said once). */
static int first_entry_of(const bw_rules *rules, size_t e) {
  const char *api = bw_rules_entry_at(rules, e)->api;
  for (size_t k = 0; k < e; k++) {
    const char *other = bw_rules_entry_at(rules, k)->api;
    if (other && strcmp(other, api) == 0)
      return 0;
  }
  return 1;
}

/* The help of category `cat`, in text and in Markdown: what the category
 * means, the hint rules the packs give for it per API, then each hint of
 * the blocking functions this report found, with the functions it is for.
 * Only the category's own rules speak here, never another category's. */
void bwsc__sarif_help(const bwsc__report *report, bw_rule_category cat,
                      const char *full, char **text_out, char **md_out) {
  strbuf text = {0}, md = {0};
  append(&text, full);
  append(&md, full);
  append(&text, "\n\nWhat to do instead:");
  append(&md, "\n\nWhat to do instead:\n");
  int said = 0;
  size_t nentries = bw_rules_entry_count(report->rules);
  for (size_t e = 0; e < nentries; e++) {
    const char *api = bw_rules_entry_at(report->rules, e)->api;
    if (!api || !first_entry_of(report->rules, e))
      continue;
    const bw_hint_rule *hint = bw_rules_find_hint(report->rules, api, cat);
    if (!hint)
      continue;
    append(&text, "\n- on a pool or loop of ");
    append(&text, api);
    append(&text, ": ");
    append(&text, hint->hint);
    append(&md, "\n- on a pool or loop of `");
    append(&md, api);
    append(&md, "`: ");
    append_md(&md, hint->hint);
    said = 1;
  }
  size_t nhit = 0;
  const bw_blocking_rule **hit = hit_rules(report, cat, &nhit);
  for (size_t i = 0; i < nhit; i++) {
    size_t first = 0; /* one line per hint, with all its functions */
    while (strcmp(hit[first]->hint, hit[i]->hint) != 0)
      first++;
    if (first < i)
      continue;
    append(&text, "\n- ");
    append(&md, "\n- ");
    for (size_t j = i; j < nhit; j++) {
      if (strcmp(hit[j]->hint, hit[i]->hint) != 0)
        continue;
      append(&text, j > i ? ", " : "");
      append(&text, hit[j]->function);
      append(&text, "()");
      append(&md, j > i ? ", `" : "`");
      append(&md, hit[j]->function);
      append(&md, "()`");
    }
    append(&text, ": ");
    append(&text, hit[i]->hint);
    append(&md, ": ");
    append_md(&md, hit[i]->hint);
    said = 1;
  }
  free(hit);
  if (!said) {
    append(&text, " use the non-blocking alternative of the call, or hand "
                  "the call to threads kept for blocking work.");
    append(&md, "Use the non-blocking alternative of the call, or hand the "
                "call to threads kept for blocking work.");
  }
  *text_out = text.text;
  *md_out = md.text;
}

/* SARIF message text: a literal bracket would start an embedded link. */
static void append_plain(strbuf *buf, const char *text) {
  for (; *text; text++) {
    char one[3] = {'\\', *text, '\0'};
    append(buf, strchr("[]", *text) ? one : one + 1);
  }
}

/* The most submit sites a message links to; relatedLocations has all. */
#define MAX_LINKS 10

/* "<message> [submit site](1). Hint: <hint>." with one link per callback's
 * submit site, whose relatedLocations id is its position plus one. */
char *bwsc__sarif_message(const bwsc__finding *f) {
  strbuf buf = {0};
  append_plain(&buf, f->message);
  if (f->nvias <= 1) {
    append(&buf, " [submit site](1)");
  } else {
    append(&buf, "; submit sites:");
    for (size_t v = 0; v < f->nvias && v < MAX_LINKS; v++) {
      char id[32];
      snprintf(id, sizeof(id), "](%zu)", v + 1);
      append(&buf, v ? ", [" : " [");
      append_plain(&buf, f->vias[v].callback);
      append(&buf, id);
    }
    if (f->nvias > MAX_LINKS)
      append(&buf, " and the others in the related locations");
  }
  append(&buf, ". Hint: ");
  append_plain(&buf, f->hint);
  if (buf.len && buf.text[buf.len - 1] != '.')
    append(&buf, ".");
  return buf.text;
}
