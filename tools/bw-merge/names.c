/* names.c - the frames the processes left unnamed (written with
 * symbolize=0, as under `blockwatch --`, or from a signal handler), named
 * once, offline, from their module file and offset.
 *
 * Invariants:
 *  - The naming is the shim's own (shim/src/symbolize.c, compiled in
 *    here): the same libdw calls on the same file give the same function,
 *    file, line and inlined frames as the process would have written.
 *  - Each distinct module file is opened once (symbolize.c keeps it until
 *    bwm_names_end, so the traces' naming, traces.c, reuses it) and each
 *    distinct module + offset looked up once (the cache below), so N
 *    processes with the same sites cost one lookup per site.
 *  - A frame whose module is gone or was rebuilt since (its build-id is
 *    not the report's) keeps its module and offset and gets a "note",
 *    never a name from another build.
 *  - A frame that has a name is left as it is.
 */
#include "merge.h"

/* The shim's merge.h (not this directory's): bwsh__symbolize_file. */
#include "../../shim/src/merge.h"

#include <stdlib.h>
#include <string.h>

/* symbolize.c raises the shim's re-entrancy depth around libdw; here it
 * is only a counter nobody reads. */
BWSH__HIDDEN BWSH__TLS __thread bwsh__thread bwsh__self;

#define MAX_INLINE 8 /* as report.c: frames one address expands to */

/* The named frames of one module + offset (a new array), or NULL with
 * *note set. */
static json_t *lookup_frames(json_t *frame, const char **note) {
  const char *module = json_string_value(json_object_get(frame, "module"));
  const char *offset = json_string_value(json_object_get(frame, "offset"));
  const char *build_id = json_string_value(json_object_get(frame, "build_id"));
  char *end;
  uintptr_t off = offset ? (uintptr_t)strtoull(offset, &end, 16) : 0;
  *note = "no module or offset";
  if (!module || !offset || *end || off == 0)
    return NULL;
  bwsh__sym sym[MAX_INLINE];
  int n = bwsh__symbolize_file(module, build_id, off, sym, MAX_INLINE, note);
  if (n == 0)
    return NULL;
  json_t *out = json_array();
  for (int i = 0; i < n; i++)
    json_array_append_new(
        out,
        json_pack("{s:s,s:s?,s:i,s:b,s:O,s:O,s:O}", "function", sym[i].function,
                  "file", sym[i].file[0] ? sym[i].file : NULL, "line",
                  sym[i].line, "inlined", sym[i].inlined, "module",
                  json_object_get(frame, "module"), "build_id",
                  json_object_get(frame, "build_id"), "offset",
                  json_object_get(frame, "offset")));
  return out;
}

/* The frames of frame: the cached ones, looked up on first use. "note"
 * (a string) when it cannot be named. */
static const char *text(json_t *frame, const char *key) {
  const char *s = json_string_value(json_object_get(frame, key));
  return s ? s : "";
}

static json_t *frames_of(json_t *cache, json_t *frame) {
  char key[1200];
  snprintf(key, sizeof key, "%s@%s@%s", text(frame, "module"),
           text(frame, "build_id"), text(frame, "offset"));
  json_t *hit = json_object_get(cache, key);
  if (hit)
    return hit;
  const char *note;
  json_t *named = lookup_frames(frame, &note);
  json_object_set_new(cache, key, named ? named : json_string(note));
  return json_object_get(cache, key);
}

static int unnamed(json_t *frame) {
  return json_is_object(frame) &&
         json_is_null(json_object_get(frame, "function"));
}

/* frames[] with every unnamed frame replaced by its named ones. */
static void name_array(json_t *cache, json_t *frames) {
  json_t *out = json_array();
  size_t i;
  json_t *f;
  json_array_foreach(frames, i, f) {
    json_t *named = unnamed(f) ? frames_of(cache, f) : NULL;
    if (json_is_array(named)) {
      json_array_extend(out, named);
    } else {
      if (json_is_string(named))
        json_object_set(f, "note", named);
      json_array_append(out, f);
    }
  }
  json_array_clear(frames);
  json_array_extend(frames, out);
  json_decref(out);
}

/* "via" from "via_frame": the library function's own name (its physical
 * frame, as the shim names a via). */
static void name_via(json_t *cache, json_t *site) {
  json_t *frame = json_object_get(site, "via_frame");
  if (!unnamed(frame))
    return;
  json_t *named = frames_of(cache, frame);
  if (json_is_array(named)) {
    json_t *physical = json_array_get(named, json_array_size(named) - 1);
    json_object_set(site, "via", json_object_get(physical, "function"));
    json_object_update(frame, physical);
  } else if (json_is_string(named)) {
    json_object_set(frame, "note", named);
  }
}

/* summary.worst from the worst site's first frame, as the shim fills it. */
static void name_worst(json_t *report) {
  json_t *worst = json_object_get(json_object_get(report, "summary"), "worst");
  json_t *first = json_array_get(
      json_object_get(json_array_get(json_object_get(report, "call_sites"), 0),
                      "frames"),
      0);
  if (!json_is_object(worst) ||
      !json_is_null(json_object_get(worst, "caller")) ||
      !json_is_string(json_object_get(first, "function")))
    return;
  json_object_set(worst, "caller", json_object_get(first, "function"));
  json_object_set(worst, "file", json_object_get(first, "file"));
  json_object_set(worst, "line", json_object_get(first, "line"));
}

void bwm_name_frames(json_t *procs) {
  json_t *cache = json_object();
  size_t i, k;
  json_t *report, *site;
  json_array_foreach(procs, i, report) {
    json_array_foreach(json_object_get(report, "call_sites"), k, site) {
      name_array(cache, json_object_get(site, "frames"));
      name_via(cache, site);
    }
    name_worst(report);
  }
  json_decref(cache);
}

void bwm_names_end(void) {
  bwsh__symbolize_files_end();
}
