/* report_sarif.c - SARIF 2.1.0 as GitHub code scanning accepts it.
 *
 * Invariants: tool.driver.rules holds one rule per category, in the
 * category order of <blockwatch/rules.h>, so ruleIndex is stable; every
 * location under the source root is a relative URI with uriBaseId
 * %SRCROOT% (defined in originalUriBaseIds), others are absolute file://
 * URIs; one result per blocking call site and rule; the chain of its best
 * callback is the one threadFlow of the one codeFlow; the submit sites of
 * its callbacks are relatedLocations with ids 1.., that callback's first,
 * and the message links to each by its id; a low-confidence finding has
 * level "note". The prose (names, help, messages) is report_sarif_text.c's.
 */
#include "report.h"

#include "report_sarif.h"
#include "util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifndef BLOCKSCAN_VERSION
#define BLOCKSCAN_VERSION "0.0.0"
#endif

#define INFORMATION_URI "https://github.com/blockwatch/blockwatch"
/* Each rule's help is an anchor of the repository's blockscan reference
 * (an installed copy has no stable URI that code scanning could open). */
#define HELP_URI INFORMATION_URI "/blob/main/docs/blockscan.md"

static json_t *text(const char *value) {
  json_t *obj = json_object();
  json_object_set_new(obj, "text", json_string(value ? value : ""));
  return obj;
}

/* Percent-encodes what may not appear raw in a URI path. */
static char *uri_path(const char *path) {
  size_t len = strlen(path);
  char *out = bwsc__xmalloc(len * 3 + 1);
  size_t o = 0;
  for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
        (*p >= '0' && *p <= '9') || strchr("/-._~+", *p)) {
      out[o++] = (char)*p;
    } else {
      static const char hex[] = "0123456789ABCDEF";
      out[o++] = '%';
      out[o++] = hex[*p >> 4];
      out[o++] = hex[*p & 15];
    }
  }
  out[o] = '\0';
  return out;
}

static json_t *physical(const bwsc__report *report, const bwsc__loc *loc) {
  json_t *artifact = json_object();
  const char *shown = bwsc__report_path(report, loc->file);
  char *encoded = uri_path(shown);
  if (loc->file && shown != loc->file) {
    json_object_set_new(artifact, "uri", json_string(encoded));
    json_object_set_new(artifact, "uriBaseId", json_string("%SRCROOT%"));
  } else {
    char *uri = bwsc__xasprintf("file://%s", encoded);
    json_object_set_new(artifact, "uri", json_string(uri));
    free(uri);
  }
  free(encoded);
  json_t *region = json_object();
  json_object_set_new(region, "startLine",
                      json_integer(loc->line ? loc->line : 1));
  if (loc->col)
    json_object_set_new(region, "startColumn", json_integer(loc->col));
  json_t *phys = json_object();
  json_object_set_new(phys, "artifactLocation", artifact);
  json_object_set_new(phys, "region", region);
  return phys;
}

static json_t *location(const bwsc__report *report, const bwsc__loc *loc,
                        const char *message) {
  json_t *obj = json_object();
  json_object_set_new(obj, "physicalLocation", physical(report, loc));
  if (message)
    json_object_set_new(obj, "message", text(message));
  return obj;
}

static const char *level_of(bw_rule_severity severity) {
  return severity == BW_SEVERITY_ERROR  ? "error"
         : severity == BW_SEVERITY_NOTE ? "note"
                                        : "warning";
}

/* The level of a category: its rules' severity when they all agree, else
 * the default, warning (a result names its own rule's level anyway). */
static const char *category_level(const bw_rules *rules, bw_rule_category cat) {
  size_t count = bw_rules_blocking_count(rules);
  int seen = -1;
  for (size_t i = 0; i < count; i++) {
    const bw_blocking_rule *rule = bw_rules_blocking_at(rules, i);
    if (rule->category != cat)
      continue;
    if (seen >= 0 && seen != (int)rule->severity)
      return "warning";
    seen = (int)rule->severity;
  }
  return seen < 0 ? "warning" : level_of((bw_rule_severity)seen);
}

/* GitHub's problem.severity for a SARIF level. */
static const char *problem_severity(const char *level) {
  return strcmp(level, "error") == 0     ? "error"
         : strcmp(level, "warning") == 0 ? "warning"
                                         : "recommendation";
}

static json_t *rule_properties(bw_rule_category cat, const char *level) {
  json_t *tags = json_array();
  json_array_append_new(tags, json_string("blocking"));
  json_array_append_new(tags, json_string("concurrency"));
  json_array_append_new(tags, json_string("performance"));
  json_array_append_new(tags, json_string(bw_rule_category_name(cat)));
  json_t *props = json_object();
  json_object_set_new(props, "tags", tags);
  /* Results of the default confidence, high; the low-confidence ones
   * (--confidence low) are notes that say so in their own properties. */
  json_object_set_new(props, "precision", json_string("high"));
  json_object_set_new(props, "problem.severity",
                      json_string(problem_severity(level)));
  return props;
}

static json_t *driver_rules(const bwsc__report *report) {
  json_t *rules = json_array();
  for (int c = 0; c < BW_CATEGORY_COUNT; c++) {
    bw_rule_category cat = (bw_rule_category)c;
    json_t *rule = json_object();
    const char *id = bw_rule_category_id(cat);
    const char *desc = bw_rule_category_description(cat);
    json_object_set_new(rule, "id", json_string(id));
    char *name = bwsc__sarif_rule_name(id);
    json_object_set_new(rule, "name", json_string(name));
    free(name);
    char *shortd = bwsc__xasprintf("Blocking call: %s.", desc);
    json_object_set_new(rule, "shortDescription", text(shortd));
    free(shortd);
    char *full = bwsc__xasprintf(
        "A call that %s, reachable from a thread-pool or event-loop "
        "callback: while it blocks, the worker or loop runs nothing else.",
        desc);
    json_object_set_new(rule, "fullDescription", text(full));
    char *uri = bwsc__xasprintf("%s#%s", HELP_URI, id);
    json_object_set_new(rule, "helpUri", json_string(uri));
    free(uri);
    char *help_text, *help_md;
    bwsc__sarif_help(report, cat, full, &help_text, &help_md);
    free(full);
    json_t *help = json_object();
    json_object_set_new(help, "text", json_string(help_text));
    json_object_set_new(help, "markdown", json_string(help_md));
    json_object_set_new(rule, "help", help);
    free(help_text);
    free(help_md);
    const char *level = category_level(report->rules, cat);
    json_t *config = json_object();
    json_object_set_new(config, "level", json_string(level));
    json_object_set_new(rule, "defaultConfiguration", config);
    json_object_set_new(rule, "properties", rule_properties(cat, level));
    json_array_append_new(rules, rule);
  }
  return rules;
}

static json_t *result(const bwsc__report *report, const bwsc__finding *f) {
  json_t *obj = json_object();
  json_object_set_new(obj, "ruleId", json_string(f->rule->id));
  json_object_set_new(obj, "ruleIndex", json_integer(f->rule->category));
  json_object_set_new(
      obj, "level", json_string(f->low ? "note" : level_of(f->rule->severity)));
  char *message = bwsc__sarif_message(f);
  json_object_set_new(obj, "message", text(message));
  free(message);
  json_t *locations = json_array();
  json_array_append_new(locations, location(report, &f->loc, NULL));
  json_object_set_new(obj, "locations", locations);

  json_t *flow_locations = json_array();
  for (size_t s = 0; s < f->nchain; s++) {
    char *step = bwsc__report_step(f, s);
    json_t *tfl = json_object();
    json_object_set_new(tfl, "location",
                        location(report, &f->chain[s].loc, step));
    free(step);
    json_array_append_new(flow_locations, tfl);
  }
  if (f->nchain) {
    json_t *thread_flow = json_object();
    json_object_set_new(thread_flow, "locations", flow_locations);
    json_t *thread_flows = json_array();
    json_array_append_new(thread_flows, thread_flow);
    json_t *code_flow = json_object();
    json_object_set_new(code_flow, "threadFlows", thread_flows);
    json_t *code_flows = json_array();
    json_array_append_new(code_flows, code_flow);
    json_object_set_new(obj, "codeFlows", code_flows);
  } else {
    json_decref(flow_locations);
  }

  /* Every callback's submit site, this finding's own first (id 1). */
  json_t *related_list = json_array();
  size_t nvias = f->nvias ? f->nvias : 1;
  for (size_t v = 0; v < nvias; v++) {
    const char *callback = f->nvias ? f->vias[v].callback : f->callback;
    const char *entry = f->nvias ? f->vias[v].entry : f->entry;
    char *submit =
        bwsc__xasprintf("callback '%s' handed to '%s' here", callback, entry);
    json_t *related = location(
        report, f->nvias ? &f->vias[v].submit_loc : &f->submit_loc, submit);
    free(submit);
    json_object_set_new(related, "id", json_integer((json_int_t)v + 1));
    json_array_append_new(related_list, related);
  }
  json_object_set_new(obj, "relatedLocations", related_list);

  json_t *prints = json_object();
  json_object_set_new(prints, "blockscanFingerprint/v1",
                      json_string(f->fingerprint));
  json_object_set_new(prints, "blockscanSite/v1",
                      json_string(f->site_fingerprint));
  json_object_set_new(obj, "partialFingerprints", prints);
  json_t *props = json_object();
  json_object_set_new(props, "confidence",
                      json_string(f->low ? "low" : "high"));
  json_object_set_new(obj, "properties", props);
  return obj;
}

/* A variable of the environment, or the fallback's, or NULL when neither
 * is set to something. */
static const char *env_or(const char *name, const char *fallback) {
  const char *value = getenv(name);
  if ((!value || !*value) && fallback)
    value = getenv(fallback);
  return value && *value ? value : NULL;
}

/* The organization of an Azure DevOps collection URI:
 * https://dev.azure.com/ORG/ or https://ORG.visualstudio.com/. */
static char *ado_organization(const char *uri) {
  if (strncmp(uri, "https://", 8) != 0)
    return NULL;
  const char *host = uri + 8;
  size_t len = strcspn(host, "/");
  static const char vs[] = ".visualstudio.com";
  if (len == 13 && strncmp(host, "dev.azure.com", 13) == 0) {
    const char *org = host + 14;
    size_t n = host[len] ? strcspn(org, "/") : 0;
    return n ? bwsc__xasprintf("%.*s", (int)n, org) : NULL;
  }
  if (len > sizeof(vs) - 1 &&
      strncmp(host + len - (sizeof(vs) - 1), vs, sizeof(vs) - 1) == 0)
    return bwsc__xasprintf("%.*s", (int)(len - (sizeof(vs) - 1)), host);
  return NULL;
}

/* run.automationDetails. In an Azure DevOps pipeline (TF_BUILD=True and
 * its predefined variables set) it is the pipeline's identity, which
 * Advanced Security's ingestion requires; elsewhere "blockscan/", the
 * category under which code scanning keeps blockscan's analysis. */
static json_t *automation_details(void) {
  json_t *details = json_object();
  const char *tf_build = getenv("TF_BUILD");
  const char *collection = env_or("SYSTEM_COLLECTIONURI", NULL);
  const char *project = env_or("SYSTEM_TEAMPROJECTID", NULL);
  const char *definition = env_or("BUILD_DEFINITIONID", "SYSTEM_DEFINITIONID");
  const char *definition_name = env_or("BUILD_DEFINITIONNAME", NULL);
  const char *build = env_or("BUILD_BUILDID", NULL);
  const char *phase = env_or("SYSTEM_PHASEID", "SYSTEM_JOBID");
  const char *phase_name = env_or("SYSTEM_PHASENAME", "SYSTEM_JOBNAME");
  const char *branch = env_or("BUILD_SOURCEBRANCH", NULL);
  char *org = collection ? ado_organization(collection) : NULL;
  if (!tf_build ||
      (strcasecmp(tf_build, "true") != 0 && strcmp(tf_build, "1") != 0) ||
      !org || !project || !definition || !definition_name || !build || !phase ||
      !phase_name || !branch) {
    free(org);
    json_object_set_new(details, "id", json_string("blockscan/"));
    return details;
  }
  char *id = bwsc__xasprintf(
      "azuredevops/pipeline/build/%s/%s/%s/%s/%s%s/%s", org, project,
      definition, phase, strncmp(branch, "refs/", 5) == 0 ? "" : "refs/heads/",
      branch, build);
  free(org);
  json_object_set_new(details, "id", json_string(id));
  free(id);
  json_t *props = json_object();
  json_object_set_new(props, "azuredevops/pipeline/build/buildDefinitionId",
                      json_string(definition));
  json_object_set_new(props, "azuredevops/pipeline/build/buildDefinitionName",
                      json_string(definition_name));
  json_object_set_new(props, "azuredevops/pipeline/build/phaseId",
                      json_string(phase));
  json_object_set_new(props, "azuredevops/pipeline/build/phaseName",
                      json_string(phase_name));
  json_object_set_new(details, "properties", props);
  return details;
}

int bwsc__write_sarif(const bwsc__report *report, FILE *out) {
  json_t *driver = json_object();
  json_object_set_new(driver, "name", json_string("blockscan"));
  json_object_set_new(driver, "fullName",
                      json_string("blockscan " BLOCKSCAN_VERSION
                                  " (blockwatch's analyzer of blocking calls "
                                  "on pool and loop threads)"));
  json_object_set_new(driver, "version", json_string(BLOCKSCAN_VERSION));
  json_object_set_new(driver, "semanticVersion",
                      json_string(BLOCKSCAN_VERSION));
  json_object_set_new(driver, "informationUri", json_string(INFORMATION_URI));
  json_object_set_new(driver, "rules", driver_rules(report));
  json_t *tool = json_object();
  json_object_set_new(tool, "driver", driver);

  json_t *run = json_object();
  json_object_set_new(run, "tool", tool);
  json_object_set_new(run, "automationDetails", automation_details());
  if (report->srcroot) {
    char *encoded = uri_path(report->srcroot);
    char *root_uri = bwsc__xasprintf("file://%s/", encoded);
    free(encoded);
    json_t *base = json_object();
    json_object_set_new(base, "uri", json_string(root_uri));
    free(root_uri);
    json_t *bases = json_object();
    json_object_set_new(bases, "%SRCROOT%", base);
    json_object_set_new(run, "originalUriBaseIds", bases);
  }
  json_t *results = json_array();
  for (size_t i = 0; i < report->findings->count; i++)
    json_array_append_new(results, result(report, &report->findings->items[i]));
  json_object_set_new(run, "results", results);
  if (report->errors->count) {
    /* Parse failures become tool notifications, not results. */
    json_t *notes = json_array();
    for (size_t i = 0; i < report->errors->count; i++) {
      const bwsc__error *err = &report->errors->items[i];
      json_t *note = json_object();
      json_object_set_new(note, "level", json_string("error"));
      json_object_set_new(note, "message", text(err->message));
      if (err->file) {
        bwsc__loc loc = {err->file, err->line, err->col};
        json_t *locs = json_array();
        json_array_append_new(locs, location(report, &loc, NULL));
        json_object_set_new(note, "locations", locs);
      }
      json_array_append_new(notes, note);
    }
    json_t *invocation = json_object();
    json_object_set_new(invocation, "executionSuccessful", json_false());
    json_object_set_new(invocation, "toolExecutionNotifications", notes);
    json_t *invocations = json_array();
    json_array_append_new(invocations, invocation);
    json_object_set_new(run, "invocations", invocations);
  }
  json_t *runs = json_array();
  json_array_append_new(runs, run);

  json_t *root = json_object();
  json_object_set_new(
      root, "$schema",
      json_string("https://json.schemastore.org/sarif-2.1.0.json"));
  json_object_set_new(root, "version", json_string("2.1.0"));
  json_object_set_new(root, "runs", runs);
  int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  fputc('\n', out);
  json_decref(root);
  return rc == 0 ? 0 : -1;
}
