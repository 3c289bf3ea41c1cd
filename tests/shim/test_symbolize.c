/* test_symbolize.c - frames named once, from module + offset: every frame
 * of a report carries its module, build-id and offset (a signal handler's
 * report too), symbolize=0 leaves naming (and libdw) to bw-merge, and the
 * names bw-merge gives, under `blockwatch --` or to files given to it, are
 * the ones the process gives itself; so are those the last process to
 * write a shared report_path gives the others'. The same for the trace:
 * with symbolize=0 (and from a signal handler) its slices' callers are
 * left as module + offset, without libdw in the process, and bw-merge
 * names them in the file the report's "trace_file" gives, in place.
 *
 * Invariants: the program run is sym_target (20 sites and an inlined one
 * on its "sym-worker"); reports are compared by their sites' function and
 * frames (names, files, lines, inlined), sorted, never by time; traces by
 * their slices' function, caller and at, sorted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "shim_run.h"

#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *tmp_path(const char *name) {
  static char bufs[4][600];
  static int next;
  return shim_tmpfile(bufs[next++ % 4], sizeof bufs[0], name);
}

/* Runs argv (under the shim when preload) with BLOCKWATCH_OPTIONS=options
 * and one more variable (NULL: none). */
static void run(char *const argv[], const char *options, const char *extra,
                int preload, shim_result *res) {
  char env0[1400];
  snprintf(env0, sizeof env0, "BLOCKWATCH_OPTIONS=%s", options);
  char *env[] = {env0, (char *)extra, NULL};
  assert_int_equal(shim_run(argv, env, preload, 120, res), 0);
  assert_false(res->timedout);
}

/* sym_target [mode] into json with extra options; its report. */
static json_t *run_target(const char *program, const char *mode,
                          const char *json, const char *extra,
                          shim_result *res) {
  char *argv[] = {(char *)program, (char *)mode, NULL};
  char options[1200];
  snprintf(options, sizeof options,
           "report=json:report_path=%s:worker_name=sym-*%s%s", json,
           extra ? ":" : "", extra ? extra : "");
  unlink(json);
  run(argv, options, NULL, 1, res);
  return shim_load_json(json);
}

static const char *str(json_t *v) {
  const char *s = json_string_value(v);
  return s ? s : "(null)";
}

/* Every site as one line (function, via, then each frame's name, file,
 * line, inlined), sorted, into buf. */
static const char *signature(json_t *report, char *buf, size_t size) {
  json_t *sites = json_object_get(report, "call_sites");
  size_t n = json_array_size(sites);
  char **lines = calloc(n ? n : 1, sizeof *lines);
  for (size_t i = 0; i < n; i++) {
    json_t *s = json_array_get(sites, i);
    char line[1024];
    size_t at = (size_t)snprintf(
        line, sizeof line, "%s via %s:", str(json_object_get(s, "function")),
        str(json_object_get(s, "via")));
    json_t *frames = json_object_get(s, "frames");
    for (size_t k = 0; k < json_array_size(frames) && at < sizeof line; k++) {
      json_t *f = json_array_get(frames, k);
      at += (size_t)snprintf(
          line + at, sizeof line - at, " %s@%s:%lld%s",
          str(json_object_get(f, "function")), str(json_object_get(f, "file")),
          (long long)json_integer_value(json_object_get(f, "line")),
          json_is_true(json_object_get(f, "inlined")) ? "(inlined)" : "");
    }
    lines[i] = strdup(line);
  }
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && strcmp(lines[j], lines[j - 1]) < 0; j--) {
      char *t = lines[j];
      lines[j] = lines[j - 1];
      lines[j - 1] = t;
    }
  size_t at = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n; i++) {
    if (at < size)
      at += (size_t)snprintf(buf + at, size - at, "%s\n", lines[i]);
    free(lines[i]);
  }
  free(lines);
  return buf;
}

/* The first line a command prints (NUL-terminated, newline cut). */
static void first_line(const char *cmd, char *out, size_t size) {
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  out[0] = '\0';
  if (!fgets(out, (int)size, p))
    out[0] = '\0';
  out[strcspn(out, "\n")] = '\0';
  pclose(p);
}

/* A named report of sym_target, as a single process writes it. */
static json_t *named_report(shim_result *res) {
  json_t *j = run_target(SYM_TARGET, NULL, tmp_path("named.json"), NULL, res);
  assert_non_null(j);
  assert_true(res->exited);
  assert_int_equal(res->status, 0);
  return j;
}

/* ---- tests --------------------------------------------------------------- */

static void test_every_frame_carries_module_build_id_and_offset(void **state) {
  (void)state;
  shim_result res;
  json_t *j = named_report(&res);
  char exe[PATH_MAX], build_id[256], cmd[PATH_MAX + 5000];
  assert_non_null(realpath(SYM_TARGET, exe));
  snprintf(cmd, sizeof cmd, "readelf -n '%s' | sed -n 's/.*Build ID: *//p'",
           exe);
  first_line(cmd, build_id, sizeof build_id);
  assert_true(strlen(build_id) >= 16);
  json_t *sites = json_object_get(j, "call_sites");
  assert_int_equal(json_array_size(sites), 21);
  int own = 0;
  for (size_t i = 0; i < json_array_size(sites); i++) {
    json_t *frames = json_object_get(json_array_get(sites, i), "frames");
    for (size_t k = 0; k < json_array_size(frames); k++) {
      json_t *f = json_array_get(frames, k);
      const char *module = json_string_value(json_object_get(f, "module"));
      const char *offset = json_string_value(json_object_get(f, "offset"));
      assert_non_null(module);
      assert_non_null(offset);
      assert_true(strncmp(offset, "0x", 2) == 0);
      json_t *prev = k ? json_array_get(frames, k - 1) : NULL;
      if (strcmp(module, exe) != 0 ||
          strcmp(str(json_object_get(prev, "offset")), offset) == 0)
        continue;
      /* The program's own frame, the innermost at its address: addr2line
       * names it from the module and offset alone (the return address
       * less one). */
      own++;
      assert_string_equal(str(json_object_get(f, "build_id")), build_id);
      snprintf(cmd, sizeof cmd, "addr2line -f -e '%s' 0x%llx", module,
               strtoull(offset, NULL, 16) - 1);
      char fn[256];
      first_line(cmd, fn, sizeof fn);
      assert_string_equal(fn, str(json_object_get(f, "function")));
    }
  }
  assert_true(own >= 21);
  json_decref(j);
  shim_result_free(&res);
}

/* Runs bw-merge with args; its result. */
static void bw_merge(char *const args[], shim_result *res) {
  char *argv[16] = {BW_MERGE};
  int n = 1;
  for (int i = 0; args[i] && n < 15; i++)
    argv[n++] = args[i];
  argv[n] = NULL;
  assert_int_equal(shim_run(argv, NULL, 0, 120, res), 0);
  assert_false(res->timedout);
  assert_true(res->exited);
}

/* Every frame of report's call_sites, in order, into out (at most max):
 * how many. */
static size_t all_frames(json_t *report, json_t **out, size_t max) {
  json_t *sites = json_object_get(report, "call_sites");
  size_t n = 0;
  for (size_t i = 0; i < json_array_size(sites); i++) {
    json_t *frames = json_object_get(json_array_get(sites, i), "frames");
    for (size_t k = 0; k < json_array_size(frames) && n < max; k++)
      out[n++] = json_array_get(frames, k);
  }
  return n;
}

static json_t *frames[1024];

static void assert_unnamed(json_t *report) {
  size_t n = all_frames(report, frames, 1024);
  assert_true(n > 0);
  for (size_t i = 0; i < n; i++) {
    assert_true(json_is_null(json_object_get(frames[i], "function")));
    assert_true(json_is_string(json_object_get(frames[i], "module")));
  }
}

static void
test_signal_handler_report_is_named_by_bw_merge_as_in_process(void **state) {
  (void)state;
  shim_result named_res, dead, merged;
  json_t *named = named_report(&named_res);
  const char *dead_json = tmp_path("dead.json");
  json_t *unnamed =
      run_target(SYM_TARGET, "die", dead_json, "handle_fatal=1", &dead);
  assert_false(dead.exited); /* died of SIGTERM, the report written first */
  assert_non_null(unnamed);
  assert_unnamed(unnamed);
  const char *out = tmp_path("dead-named.json");
  char *args[] = {"--no-text", "-o", (char *)out, (char *)dead_json, NULL};
  bw_merge(args, &merged);
  json_t *j = shim_load_json(out);
  assert_non_null(j);
  static char a[65536], b[65536];
  assert_string_equal(
      signature(json_array_get(json_object_get(j, "processes"), 0), a,
                sizeof a),
      signature(named, b, sizeof b));
  json_decref(j);
  json_decref(unnamed);
  json_decref(named);
  shim_result_free(&named_res);
  shim_result_free(&dead);
  shim_result_free(&merged);
}

static void test_wrapper_names_frames_as_the_process_does(void **state) {
  (void)state;
  shim_result named_res, wrapped;
  json_t *named = named_report(&named_res);
  const char *out = tmp_path("wrapped.json");
  unlink(out);
  char *argv[] = {BLOCKWATCH_CMD, "--worker-name", "sym-*", "-o", (char *)out,
                  "--",           SYM_TARGET,      NULL};
  assert_int_equal(shim_run(argv, NULL, 0, 120, &wrapped), 0);
  assert_true(wrapped.exited);
  assert_int_equal(wrapped.status, 0);
  json_t *j = shim_load_json(out);
  assert_non_null(j);
  static char a[65536], b[65536];
  assert_string_equal(signature(j, a, sizeof a), signature(named, b, sizeof b));
  /* ... from the module and offset each frame still carries. */
  size_t n = all_frames(j, frames, 1024);
  for (size_t i = 0; i < n; i++)
    assert_true(json_is_string(json_object_get(frames[i], "offset")));
  /* The text summary names the worst site's line as the process does. */
  json_t *worst = json_object_get(json_object_get(named, "summary"), "worst");
  const char *at =
      shim_fmt("worst: %s at %s:%lld", str(json_object_get(worst, "function")),
               str(json_object_get(worst, "file")),
               (long long)json_integer_value(json_object_get(worst, "line")));
  assert_non_null(strstr(wrapped.err, at));
  assert_string_equal(
      str(json_object_get(
          json_object_get(json_object_get(j, "summary"), "worst"), "caller")),
      str(json_object_get(worst, "caller")));
  json_decref(j);
  json_decref(named);
  shim_result_free(&named_res);
  shim_result_free(&wrapped);
}

/* How many times the loader says it loaded libdw (LD_DEBUG=files). */
static int libdw_loads(const char *err) {
  int n = 0;
  for (const char *p = err; (p = strstr(p, "file=libdw.so")); p++)
    n++;
  return n;
}

static void test_symbolize_0_leaves_names_and_libdw_to_bw_merge(void **state) {
  (void)state;
  const char *json = tmp_path("nosym.json");
  char *argv[] = {SYM_TARGET, NULL};
  shim_result on, off;
  run(argv, shim_fmt("report=json:report_path=%s:worker_name=sym-*", json),
      "LD_DEBUG=files", 1, &on);
  assert_true(libdw_loads(on.err) > 0);
  run(argv,
      shim_fmt("report=json:report_path=%s:worker_name=sym-*:symbolize=0",
               json),
      "LD_DEBUG=files", 1, &off);
  assert_int_equal(off.status, 0);
  assert_null(strstr(off.err, "blockwatch: warning"));
  assert_int_equal(libdw_loads(off.err), 0);
  json_t *j = shim_load_json(json);
  assert_non_null(j);
  assert_unnamed(j);
  json_decref(j);
  /* Nor when it merges into a shared file what another left unnamed. */
  shim_result merged;
  unlink(json);
  char *two[] = {"/bin/sh", "-c",
                 shim_fmt("'%s' && '%s'", SYM_TARGET, SYM_TARGET), NULL};
  run(two,
      shim_fmt("report=json:report_path=%s:worker_name=sym-*:symbolize=0",
               json),
      "LD_DEBUG=files", 1, &merged);
  assert_int_equal(merged.status, 0);
  assert_int_equal(libdw_loads(merged.err), 0);
  j = shim_load_json(json);
  assert_non_null(j);
  assert_int_equal(json_array_size(json_object_get(j, "processes")), 3);
  assert_unnamed(j);
  json_decref(j);
  shim_result_free(&merged);
  shim_result_free(&on);
  shim_result_free(&off);
}

/* A frame of the module's, from a report or a merged file's totals. */
static json_t *own_frame(json_t *merged, const char *module) {
  size_t n = all_frames(merged, frames, 1024);
  for (size_t i = 0; i < n; i++)
    if (strcmp(str(json_object_get(frames[i], "module")), module) == 0)
      return frames[i];
  return NULL;
}

static void test_rebuilt_or_gone_module_keeps_offset_and_a_note(void **state) {
  (void)state;
  char copy[600], cmd[1400];
  snprintf(copy, sizeof copy, "%s", tmp_path("sym_copy"));
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", SYM_TARGET, copy);
  assert_int_equal(system(cmd), 0);
  shim_result res, merged;
  const char *json = tmp_path("copy.json");
  json_t *j = run_target(copy, NULL, json, "symbolize=0", &res);
  assert_non_null(j);
  json_decref(j);
  char exe[PATH_MAX];
  assert_non_null(realpath(copy, exe));
  /* The same path in a report of another build (its build-id changed in
   * a copy of the report), read after one of this build: named in the
   * first, not in the second. */
  j = shim_load_json(json);
  size_t n = all_frames(j, frames, 1024);
  for (size_t i = 0; i < n; i++)
    if (strcmp(str(json_object_get(frames[i], "module")), exe) == 0)
      json_object_set_new(frames[i], "build_id",
                          json_string("00112233445566778899"));
  const char *other = tmp_path("other-build.json");
  assert_int_equal(json_dump_file(j, other, 0), 0);
  json_decref(j);
  const char *both = tmp_path("both-named.json");
  char *both_args[] = {"--no-text",  "-o",          (char *)both,
                       (char *)json, (char *)other, NULL};
  bw_merge(both_args, &merged);
  j = shim_load_json(both);
  json_t *procs = json_object_get(j, "processes");
  assert_int_equal(json_array_size(procs), 2);
  json_t *f = own_frame(json_array_get(procs, 0), exe);
  assert_non_null(f);
  assert_true(json_is_string(json_object_get(f, "function")));
  f = own_frame(json_array_get(procs, 1), exe);
  assert_non_null(f);
  assert_true(json_is_null(json_object_get(f, "function")));
  assert_non_null(strstr(str(json_object_get(f, "note")), "build-id"));
  json_decref(j);
  shim_result_free(&merged);
  /* Another build in its place: the frame is not named from it. */
  snprintf(cmd, sizeof cmd, "cp /bin/true '%s'", copy);
  assert_int_equal(system(cmd), 0);
  const char *out = tmp_path("copy-named.json");
  char *args[] = {"--no-text", "-o", (char *)out, (char *)json, NULL};
  bw_merge(args, &merged);
  j = shim_load_json(out);
  f = own_frame(j, exe);
  assert_non_null(f);
  assert_true(json_is_null(json_object_get(f, "function")));
  assert_true(json_is_string(json_object_get(f, "offset")));
  assert_non_null(strstr(str(json_object_get(f, "note")), "build-id"));
  json_decref(j);
  shim_result_free(&merged);
  /* Gone: the same, with the text summary saying so. */
  unlink(copy);
  char *text_args[] = {"-o", (char *)out, (char *)json, NULL};
  bw_merge(text_args, &merged);
  j = shim_load_json(out);
  f = own_frame(j, exe);
  assert_non_null(f);
  assert_true(json_is_null(json_object_get(f, "function")));
  assert_non_null(strstr(str(json_object_get(f, "note")), "not found"));
  assert_non_null(strstr(merged.err, shim_fmt("(%s+0x", exe)));
  json_decref(j);
  shim_result_free(&merged);
  shim_result_free(&res);
}

static void test_last_writer_names_a_signal_handlers_report(void **state) {
  (void)state;
  shim_result named_res, res;
  json_t *named = named_report(&named_res);
  const char *json = tmp_path("shared.json");
  unlink(json);
  /* The first process dies of SIGTERM, its report written in the signal
   * handler (unnamed); the second merges into the same file and names it. */
  char *argv[] = {"/bin/sh", "-c",
                  shim_fmt("'%s' die; '%s'", SYM_TARGET, SYM_TARGET), NULL};
  run(argv,
      shim_fmt("report=json:report_path=%s:worker_name=sym-*:handle_fatal=1",
               json),
      NULL, 1, &res);
  json_t *j = shim_load_json(json);
  assert_non_null(j);
  json_t *procs = json_object_get(j, "processes");
  static char a[65536], b[65536];
  signature(named, b, sizeof b);
  int with_sites = 0;
  for (size_t i = 0; i < json_array_size(procs); i++) {
    json_t *p = json_array_get(procs, i);
    if (json_array_size(json_object_get(p, "call_sites")) == 0)
      continue;
    with_sites++;
    assert_string_equal(signature(p, a, sizeof a), b);
    assert_string_equal(
        str(json_object_get(
            json_object_get(json_object_get(p, "summary"), "worst"), "caller")),
        "nap");
  }
  assert_int_equal(with_sites, 2);
  /* The totals' sites are the processes', named too. */
  assert_int_equal(json_array_size(json_object_get(j, "call_sites")), 42);
  size_t n = all_frames(j, frames, 1024);
  for (size_t i = 0; i < n; i++)
    assert_true(json_is_string(json_object_get(frames[i], "function")));
  json_decref(j);
  json_decref(named);
  shim_result_free(&named_res);
  shim_result_free(&res);
}

/* ---- the trace ------------------------------------------------------------
 */

/* The blocked-call slices of a trace as sorted lines "function caller at"
 * into buf (a caller left unnamed reads "(null)"); how many. */
static size_t slices(json_t *trace, char *buf, size_t size) {
  json_t *events = json_object_get(trace, "traceEvents");
  size_t n = 0, at = 0;
  static char *lines[4096];
  for (size_t i = 0; i < json_array_size(events) && n < 4096; i++) {
    json_t *e = json_array_get(events, i);
    if (strcmp(str(json_object_get(e, "cat")), "blocking") != 0)
      continue;
    json_t *args = json_object_get(e, "args");
    lines[n++] =
        strdup(shim_fmt("%s %s %s", str(json_object_get(args, "function")),
                        str(json_object_get(args, "caller")),
                        str(json_object_get(args, "at"))));
  }
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && strcmp(lines[j], lines[j - 1]) < 0; j--) {
      char *t = lines[j];
      lines[j] = lines[j - 1];
      lines[j - 1] = t;
    }
  buf[0] = '\0';
  for (size_t i = 0; i < n; i++) {
    if (at < size)
      at += (size_t)snprintf(buf + at, size - at, "%s\n", lines[i]);
    free(lines[i]);
  }
  return n;
}

/* Every blocked-call slice of trace left unnamed: "caller" null, its
 * module and offset there, "at" not; how many. */
static size_t assert_trace_unnamed(json_t *trace) {
  json_t *events = json_object_get(trace, "traceEvents");
  size_t n = 0;
  for (size_t i = 0; i < json_array_size(events); i++) {
    json_t *e = json_array_get(events, i);
    if (strcmp(str(json_object_get(e, "cat")), "blocking") != 0)
      continue;
    json_t *args = json_object_get(e, "args");
    assert_true(json_is_null(json_object_get(args, "caller")));
    assert_null(json_object_get(args, "at"));
    assert_true(json_is_string(json_object_get(args, "module")));
    assert_true(strncmp(str(json_object_get(args, "offset")), "0x", 2) == 0);
    n++;
  }
  return n;
}

/* The trace sym_target writes when it names its callers itself (plain
 * LD_PRELOAD, symbolize=1): its slices' lines into buf. */
static void named_trace(char *buf, size_t size) {
  const char *trace = tmp_path("named-trace.json");
  unlink(trace);
  shim_result res;
  json_t *j = run_target(SYM_TARGET, NULL, tmp_path("named-t.json"),
                         shim_fmt("trace=%s", trace), &res);
  json_decref(j);
  j = shim_load_json(trace);
  assert_non_null(j);
  assert_int_equal(slices(j, buf, size), 21);
  assert_null(strstr(buf, "(null)"));
  json_decref(j);
  shim_result_free(&res);
}

/* The whole text of a file (to free); NULL when it cannot be read. */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *buf = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&buf, &n);
  char chunk[8192];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
    fwrite(chunk, 1, got, m);
  fclose(m);
  fclose(f);
  return buf;
}

static void
test_wrapper_names_the_trace_and_the_process_never_loads_libdw(void **state) {
  (void)state;
  static char want[65536], got[65536];
  named_trace(want, sizeof want);
  char trace[600], out[600], ld[600];
  snprintf(trace, sizeof trace, "%s", tmp_path("wrapped-trace.json"));
  snprintf(out, sizeof out, "%s", tmp_path("wrapped-t.json"));
  snprintf(ld, sizeof ld, "%s", tmp_path("ld-debug"));
  unlink(trace);
  char env0[700];
  snprintf(env0, sizeof env0, "LD_DEBUG_OUTPUT=%s", ld);
  char *env[] = {"LD_DEBUG=files", env0, NULL};
  char *argv[] = {
      BLOCKWATCH_CMD, "--worker-name", "sym-*", "--trace", trace, "-o", out,
      "--",           SYM_TARGET,      NULL};
  shim_result res;
  assert_int_equal(shim_run(argv, env, 0, 120, &res), 0);
  assert_true(res.exited);
  assert_int_equal(res.status, 0);
  json_t *merged = shim_load_json(out);
  assert_non_null(merged);
  json_t *proc = json_array_get(json_object_get(merged, "processes"), 0);
  char real[PATH_MAX];
  assert_non_null(realpath(trace, real));
  assert_string_equal(str(json_object_get(proc, "trace_file")), real);
  /* Not among the totals: it is a process's own. */
  assert_null(json_object_get(merged, "trace_file"));
  /* The program's process loaded no libdw (the loader's own record of
   * every file it opened, one file per process). */
  long long pid = json_integer_value(json_object_get(proc, "pid"));
  char *loads = slurp(shim_fmt("%s.%lld", ld, pid));
  assert_non_null(loads);
  assert_non_null(strstr(loads, "file="));
  assert_null(strstr(loads, "file=libdw.so"));
  free(loads);
  /* The trace, named by bw-merge afterwards, is the one the process
   * writes when it names its callers itself ... */
  json_t *t = shim_load_json(trace);
  assert_non_null(t);
  assert_int_equal(slices(t, got, sizeof got), 21);
  assert_string_equal(got, want);
  /* ... each slice at its site's line: the report's first frame there. */
  json_t *sites = json_object_get(merged, "call_sites");
  for (size_t i = 0; i < json_array_size(sites); i++) {
    json_t *f0 =
        json_array_get(json_object_get(json_array_get(sites, i), "frames"), 0);
    const char *at =
        shim_fmt(" %s:%lld\n", str(json_object_get(f0, "file")),
                 (long long)json_integer_value(json_object_get(f0, "line")));
    assert_non_null(strstr(got, at));
  }
  assert_non_null(strstr(got, "nanosleep napper "));
  assert_non_null(strstr(got, "usleep site_7 "));
  json_decref(t);
  json_decref(merged);
  shim_result_free(&res);
}

static void test_symbolize_0_trace_is_named_by_bw_merge(void **state) {
  (void)state;
  static char want[65536], got[65536];
  named_trace(want, sizeof want);
  const char *trace = tmp_path("raw-trace.json");
  const char *json = tmp_path("raw-t.json");
  unlink(trace);
  char *argv[] = {SYM_TARGET, NULL};
  shim_result res, merged;
  run(argv,
      shim_fmt("report=json:report_path=%s:worker_name=sym-*:symbolize=0:"
               "trace=%s",
               json, trace),
      "LD_DEBUG=files", 1, &res);
  assert_int_equal(res.status, 0);
  assert_int_equal(libdw_loads(res.err), 0);
  json_t *t = shim_load_json(trace);
  assert_non_null(t);
  assert_int_equal(assert_trace_unnamed(t), 21);
  json_decref(t);
  const char *out = tmp_path("raw-merged.json");
  char *args[] = {"--no-text", "-o", (char *)out, (char *)json, NULL};
  bw_merge(args, &merged);
  assert_int_equal(merged.status, 0);
  assert_null(strstr(merged.err, "warning"));
  t = shim_load_json(trace);
  assert_non_null(t);
  assert_int_equal(slices(t, got, sizeof got), 21);
  assert_string_equal(got, want);
  json_decref(t);
  shim_result_free(&merged);
  /* Named already: a second bw-merge leaves the file as it is. */
  char *before = slurp(trace);
  struct stat st0, st1;
  assert_int_equal(stat(trace, &st0), 0);
  bw_merge(args, &merged);
  assert_int_equal(merged.status, 0);
  char *after = slurp(trace);
  assert_int_equal(stat(trace, &st1), 0);
  assert_string_equal(after, before);
  assert_int_equal(st0.st_ino, st1.st_ino);
  free(before);
  free(after);
  shim_result_free(&merged);
  shim_result_free(&res);
}

static void test_signal_handler_trace_is_named_by_bw_merge(void **state) {
  (void)state;
  static char want[65536], got[65536];
  named_trace(want, sizeof want);
  const char *trace = tmp_path("dead-trace.json");
  const char *json = tmp_path("dead-t.json");
  unlink(trace);
  shim_result dead, merged;
  json_t *j = run_target(SYM_TARGET, "die", json,
                         shim_fmt("handle_fatal=1:trace=%s", trace), &dead);
  assert_false(dead.exited); /* died of SIGTERM, the trace written first */
  assert_non_null(j);
  json_decref(j);
  json_t *t = shim_load_json(trace);
  assert_non_null(t);
  assert_int_equal(assert_trace_unnamed(t), 21);
  json_decref(t);
  const char *out = tmp_path("dead-t-merged.json");
  char *args[] = {"--no-text", "-o", (char *)out, (char *)json, NULL};
  bw_merge(args, &merged);
  assert_int_equal(merged.status, 0);
  t = shim_load_json(trace);
  assert_non_null(t);
  assert_int_equal(slices(t, got, sizeof got), 21);
  assert_string_equal(got, want);
  json_decref(t);
  shim_result_free(&merged);
  shim_result_free(&dead);
}

/* A run of a copy of sym_target with symbolize=0 and a trace: the report
 * into json, the trace into trace. */
static void raw_trace_of_copy(const char *copy, const char *json,
                              const char *trace) {
  assert_int_equal(system(shim_fmt("cp '%s' '%s'", SYM_TARGET, copy)), 0);
  unlink(trace);
  shim_result res;
  json_t *j = run_target(copy, NULL, json,
                         shim_fmt("symbolize=0:trace=%s", trace), &res);
  assert_non_null(j);
  assert_int_equal(res.status, 0);
  json_decref(j);
  shim_result_free(&res);
}

/* Each process of a shared report_path names its own trace; the totals
 * name none. */
static void test_trace_file_is_each_processs_own(void **state) {
  (void)state;
  char json[600], dir[600];
  snprintf(json, sizeof json, "%s", tmp_path("shared-t.json"));
  snprintf(dir, sizeof dir, "%s", shim_tmpdir());
  unlink(json);
  char *argv[] = {"/bin/sh", "-c",
                  shim_fmt("'%s' && '%s'", SYM_TARGET, SYM_TARGET), NULL};
  shim_result res;
  run(argv,
      shim_fmt("report=json:report_path=%s:worker_name=sym-*:trace=%s/t.%%p."
               "json",
               json, dir),
      NULL, 1, &res);
  assert_int_equal(res.status, 0);
  json_t *j = shim_load_json(json);
  assert_non_null(j);
  assert_null(json_object_get(j, "trace_file"));
  json_t *procs = json_object_get(j, "processes");
  int traced = 0;
  for (size_t i = 0; i < json_array_size(procs); i++) {
    json_t *p = json_array_get(procs, i);
    const char *t = json_string_value(json_object_get(p, "trace_file"));
    assert_non_null(t);
    assert_true(t[0] == '/');
    long long pid = json_integer_value(json_object_get(p, "pid"));
    assert_non_null(strstr(t, shim_fmt("/t.%lld.json", pid)));
    traced += access(t, R_OK) == 0;
  }
  assert_int_equal(traced, 3); /* the shell's too */
  json_decref(j);
  shim_result_free(&res);
}

static void test_trace_of_a_gone_module_keeps_module_and_offset(void **state) {
  (void)state;
  char copy[600], exe[PATH_MAX];
  snprintf(copy, sizeof copy, "%s", tmp_path("sym_gone"));
  const char *json = tmp_path("gone-t.json");
  const char *trace = tmp_path("gone-trace.json");
  raw_trace_of_copy(copy, json, trace);
  assert_non_null(realpath(copy, exe));
  unlink(copy);
  shim_result merged;
  const char *out = tmp_path("gone-merged.json");
  char *args[] = {"--no-text", "-o", (char *)out, (char *)json, NULL};
  bw_merge(args, &merged);
  /* A warning, not an error: the report is merged, the status is 0. */
  assert_int_equal(merged.status, 0);
  char real[PATH_MAX];
  assert_non_null(realpath(trace, real));
  assert_non_null(strstr(
      merged.err,
      shim_fmt("bw-merge: warning: %s: 21 slice(s) left unnamed", real)));
  assert_non_null(strstr(
      merged.err, shim_fmt("%s: module not found or not readable", exe)));
  json_t *t = shim_load_json(trace);
  assert_non_null(t);
  assert_int_equal(assert_trace_unnamed(t), 21);
  json_t *events = json_object_get(t, "traceEvents");
  for (size_t i = 0; i < json_array_size(events); i++) {
    json_t *a = json_object_get(json_array_get(events, i), "args");
    if (json_object_get(a, "module"))
      assert_non_null(strstr(str(json_object_get(a, "note")), "not found"));
  }
  json_decref(t);
  t = shim_load_json(out);
  assert_non_null(t);
  json_decref(t);
  shim_result_free(&merged);
}

/* bw-merge given the report naming trace, whose text is `text`: its
 * status must be 2, its stderr name the trace and `what`, and the trace
 * be left as it was. */
static void assert_bad_trace(const char *json, const char *trace,
                             const char *text, const char *what) {
  FILE *f = fopen(trace, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  shim_result merged;
  const char *out = tmp_path("bad-merged.json");
  unlink(out);
  char *args[] = {"--no-text", "-o", (char *)out, (char *)json, NULL};
  bw_merge(args, &merged);
  assert_int_equal(merged.status, 2);
  char real[PATH_MAX];
  assert_non_null(realpath(trace, real));
  assert_non_null(strstr(merged.err, shim_fmt("bw-merge: %s:", real)));
  assert_non_null(strstr(merged.err, what));
  assert_non_null(strstr(merged.err, "the trace is left as it was"));
  char *now = slurp(trace);
  assert_string_equal(now, text);
  free(now);
  /* The rest is done all the same. */
  json_t *j = shim_load_json(out);
  assert_non_null(j);
  json_decref(j);
  shim_result_free(&merged);
}

static void test_malformed_trace_is_an_error_naming_the_file(void **state) {
  (void)state;
  char copy[600];
  char json[600], trace[600]; /* tmp_path's buffers are reused */
  snprintf(copy, sizeof copy, "%s", tmp_path("sym_bad"));
  snprintf(json, sizeof json, "%s", tmp_path("bad-t.json"));
  snprintf(trace, sizeof trace, "%s", tmp_path("bad-trace.json"));
  raw_trace_of_copy(copy, json, trace);
  char *text = slurp(trace);
  assert_non_null(text);
  /* Cut short in the middle of a slice, after one whole line of them. */
  char *cut = strstr(text, "\"caller\":null");
  assert_non_null(cut);
  cut = strstr(cut + 1, "\"caller\":null");
  assert_non_null(cut);
  *cut = '\0';
  assert_bad_trace(json, trace, text, "not a whole event (cut short?)");
  /* A slice to name that is not JSON. */
  char *broken = strdup(text);
  memcpy(strstr(broken, "\"caller\":null") - 1, "}", 1);
  assert_bad_trace(json, trace, broken, "not an event");
  free(broken);
  /* Cut at a line's end: no closing line. */
  *strrchr(text, '\n') = '\0';
  assert_bad_trace(json, trace, shim_fmt("%s\n", text), "cut short");
  assert_bad_trace(json, trace, "not a trace\n", ":1: not a blockwatch trace");
  assert_bad_trace(json, trace, "", "an empty file");
  free(text);
  unlink(copy);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_frame_carries_module_build_id_and_offset),
      cmocka_unit_test(
          test_signal_handler_report_is_named_by_bw_merge_as_in_process),
      cmocka_unit_test(test_wrapper_names_frames_as_the_process_does),
      cmocka_unit_test(test_symbolize_0_leaves_names_and_libdw_to_bw_merge),
      cmocka_unit_test(test_rebuilt_or_gone_module_keeps_offset_and_a_note),
      cmocka_unit_test(test_last_writer_names_a_signal_handlers_report),
      cmocka_unit_test(
          test_wrapper_names_the_trace_and_the_process_never_loads_libdw),
      cmocka_unit_test(test_symbolize_0_trace_is_named_by_bw_merge),
      cmocka_unit_test(test_signal_handler_trace_is_named_by_bw_merge),
      cmocka_unit_test(test_trace_file_is_each_processs_own),
      cmocka_unit_test(test_trace_of_a_gone_module_keeps_module_and_offset),
      cmocka_unit_test(test_malformed_trace_is_an_error_naming_the_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
