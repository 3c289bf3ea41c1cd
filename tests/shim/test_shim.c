/* test_shim.c - integration tests of libblockwatch.so: real programs
 * (shim_target, runtime_target) run under LD_PRELOAD, their JSON reports
 * read back with jansson.
 *
 * Invariants: counts asserted are exact where the program's calls are
 * deterministic (see shim_target.c); timing is only bounded generously.
 * Under a sanitizer build the preloaded shim would need the sanitizer
 * runtime first in LD_PRELOAD: the whole binary skips (tests/shim/
 * CMakeLists.txt does not register it there) rather than lie.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "shim_run.h"
#ifdef HAVE_TRACE2SVG
#include "trace.h" /* tools/bw-trace2svg: the picture's reader */
#endif

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers --------------------------------------------------------------
 */

/* Runs shim_target <scenario> [arg] under the shim with `options`, and
 * loads the report written to report_path (NULL when none expected). */
static json_t *run_target(const char *scenario, const char *arg,
                          const char *options, const char *report_path,
                          shim_result *res) {
  char *argv[] = {SHIM_TARGET, (char *)scenario, (char *)arg, NULL};
  char *env[] = {shim_fmt("BLOCKWATCH_OPTIONS=%s", options), NULL};
  if (report_path)
    unlink(report_path);
  assert_int_equal(shim_run(argv, env, 1, 120, res), 0);
  assert_false(res->timedout);
  return report_path ? shim_load_json(report_path) : NULL;
}

static const char *path_of(const char *name) {
  static char bufs[8][600];
  static int next;
  return shim_tmpfile(bufs[next++ % 8], sizeof bufs[0], name);
}

static json_t *pool_at(json_t *report, size_t i) {
  return json_array_get(json_object_get(report, "pools"), i);
}

static double number(json_t *obj, const char *key) {
  json_t *v = json_object_get(obj, key);
  assert_true(json_is_number(v));
  return json_number_value(v);
}

#define WORKERS "worker_name=nothing-*,work-?"

/* ---- counting ---------------------------------------------------------------
 */

static void test_counts_exact_for_sleeps_pipes_and_polls(void **state) {
  (void)state;
  const char *p = path_of("counts.json");
  shim_result r;
  json_t *j =
      run_target("counts", NULL,
                 shim_fmt("report=json:report_path=%s:" WORKERS, p), p, &r);
  assert_non_null(j);
  assert_int_equal(r.status, 0);
  /* Per worker: 5 usleep, 3 nanosleep, 1 poll, 1 write, 2 reads. */
  assert_int_equal(shim_calls(j, "on_workers"), 24);
  /* Main: 1 usleep, 2 pthread_join. */
  assert_int_equal(shim_calls(j, "on_other_threads"), 3);
  assert_int_equal(shim_site_count(j, "usleep"), 10);
  assert_int_equal(shim_site_count(j, "nanosleep"), 6);
  assert_int_equal(shim_site_count(j, "poll"), 2);
  assert_int_equal(shim_site_count(j, "write"), 2);
  assert_int_equal(shim_site_count(j, "read"), 4);
  assert_int_equal(shim_site_count(j, "select"), 0);
  assert_int_equal(shim_site_count(j, "waitpid"), 0);
  json_t *pool = pool_at(j, 0);
  assert_non_null(pool);
  assert_string_equal(json_string_value(json_object_get(pool, "name")),
                      "nothing-*,work-?");
  assert_int_equal((int)number(pool, "workers"), 2);
  /* 10 x 2 ms of usleep alone. */
  assert_true(number(json_object_get(j, "blocking_calls"), "blocked_ms") >=
              20.0);
  json_decref(j);
  shim_result_free(&r);
}

static void test_call_sites_name_the_caller_with_file_and_line(void **state) {
  (void)state;
  const char *p = path_of("sites.json");
  shim_result r;
  json_t *j =
      run_target("counts", NULL,
                 shim_fmt("report=json:report_path=%s:" WORKERS, p), p, &r);
  assert_non_null(j);
  size_t i;
  json_t *site;
  int found = 0;
  json_array_foreach(json_object_get(j, "call_sites"), i, site) {
    /* Frame 0 is the caller; under a sanitizer its interceptor comes
     * first, so look along the chain. */
    size_t k;
    json_t *f;
    json_array_foreach(json_object_get(site, "frames"), k, f) {
      const char *fn = json_string_value(json_object_get(f, "function"));
      const char *file = json_string_value(json_object_get(f, "file"));
      if (fn && strcmp(fn, "counts_worker") == 0 && file &&
          strstr(file, "shim_target.c") &&
          json_integer_value(json_object_get(f, "line")) > 0) {
        found++;
        break;
      }
    }
  }
  /* usleep, nanosleep, poll, write, read sites. Under a sanitizer that
   * intercepts a function first, the shim's caller is the interceptor, and
   * the sites of that function merge into one. */
  assert_true(found >= (SAN_PRELOAD[0] ? 1 : 4));
  json_decref(j);
  shim_result_free(&r);
}

static void
test_without_worker_option_all_calls_are_other_threads(void **state) {
  (void)state;
  const char *p = path_of("other.json");
  shim_result r;
  json_t *j = run_target("counts", NULL,
                         shim_fmt("report=json:report_path=%s", p), p, &r);
  assert_non_null(j);
  assert_int_equal(shim_calls(j, "on_workers"), 0);
  assert_int_equal(shim_calls(j, "on_other_threads"), 27);
  assert_int_equal(json_array_size(json_object_get(j, "call_sites")), 0);
  json_decref(j);
  shim_result_free(&r);
}

static void test_descriptor_closed_inside_libc_is_forgotten(void **state) {
  (void)state;
  const char *p = path_of("fdreuse.json");
  shim_result r;
  json_t *j =
      run_target("fdreuse", NULL,
                 shim_fmt("report=json:report_path=%s:" WORKERS, p), p, &r);
  assert_non_null(j);
  assert_int_equal(shim_out_value(r.out, "reused"), 1);
  assert_int_equal(shim_out_value(r.out, "eagain"), 1);
  assert_int_equal(shim_site_count(j, "read"), 1);
  assert_int_equal(shim_calls(j, "on_workers"), 2);
  json_decref(j);
  shim_result_free(&r);
}

static void test_locks_count_only_when_contended(void **state) {
  (void)state;
  const char *p = path_of("locks.json");
  shim_result r;
  json_t *j = run_target(
      "locks", NULL, shim_fmt("report=json:report_path=%s:lock=1:" WORKERS, p),
      p, &r);
  assert_non_null(j);
  assert_int_equal(shim_site_count(j, "pthread_rwlock_rdlock"), 1);
  /* The held mutex, plus at most the condition's mutex; never the 1000
   * uncontended pairs. */
  long long locks = shim_site_count(j, "pthread_mutex_lock");
  assert_in_range(locks, 1, 2);
  assert_true(shim_site_count(j, "pthread_cond_wait") >= 1);
  json_decref(j);
  shim_result_free(&r);

  /* lock is off by default: only the condition wait counts. */
  j = run_target("locks", NULL,
                 shim_fmt("report=json:report_path=%s:" WORKERS, p), p, &r);
  assert_non_null(j);
  assert_int_equal(shim_site_count(j, "pthread_mutex_lock"), 0);
  assert_int_equal(shim_site_count(j, "pthread_rwlock_rdlock"), 0);
  assert_true(shim_site_count(j, "pthread_cond_wait") >= 1);
  json_decref(j);
  shim_result_free(&r);
}

/* The count of fn in on_other_threads_by_function (0: not there). */
static long long other_calls_of(json_t *report, const char *fn) {
  json_t *by = json_object_get(json_object_get(report, "blocking_calls"),
                               "on_other_threads_by_function");
  for (size_t i = 0; i < json_array_size(by); i++) {
    json_t *row = json_array_get(by, i);
    if (strcmp(json_string_value(json_object_get(row, "function")), fn) == 0)
      return (long long)json_integer_value(json_object_get(row, "count"));
  }
  return 0;
}

/* In a process with one thread a free private mutex is locked without the
 * try first (policy.h): the results stay libc's and nothing uncontended
 * counts; a held one still takes the try: the error-checking relock counts
 * (held, by this thread), and so does the process-shared mutex another
 * process holds. */
static void test_lone_thread_locks_count_only_when_held(void **state) {
  (void)state;
  const char *p = path_of("lone_locks.json");
  shim_result plain, r;
  char *argv[] = {SHIM_TARGET, "lone_locks", NULL};
  assert_int_equal(shim_run(argv, NULL, 0, 60, &plain), 0);
  json_t *j =
      run_target("lone_locks", NULL,
                 shim_fmt("report=json:report_path=%s:lock=1", p), p, &r);
  assert_non_null(j);
  assert_int_equal(r.status, 0);
  assert_string_equal(plain.out, r.out);
  assert_int_equal(shim_out_value(r.out, "errorcheck_again"), EDEADLK);
  assert_int_equal(shim_out_value(r.out, "recursive_again"), 0);
  assert_int_equal(shim_out_value(r.out, "shared"), 0);
  assert_int_equal(shim_out_value(r.out, "child_status"), 0);
  assert_int_equal(other_calls_of(j, "pthread_mutex_lock"), 2);
  json_decref(j);
  shim_result_free(&plain);
  shim_result_free(&r);
}

static void test_worker_start_option_classifies_by_start_routine(void **state) {
  (void)state;
  if (SAN_PRELOAD[0]) {
    /* The sanitizer's pthread_create runs first and hands us its own
     * thread-start trampoline instead of the program's routine. */
    fprintf(stderr, "skipped under a sanitizer: start routine hidden\n");
    skip();
  }
  const char *p = path_of("start.json");
  shim_result r;
  json_t *j = run_target(
      "counts", NULL,
      shim_fmt("report=json:report_path=%s:worker_start=counts_worker", p), p,
      &r);
  assert_non_null(j);
  assert_int_equal(shim_calls(j, "on_workers"), 24);
  assert_int_equal(shim_calls(j, "on_other_threads"), 3);
  json_decref(j);
  shim_result_free(&r);
}

static void test_categories_option_limits_what_counts(void **state) {
  (void)state;
  const char *p = path_of("cats.json");
  shim_result r;
  json_t *j = run_target(
      "counts", NULL,
      shim_fmt("report=json:report_path=%s:categories=sleep:" WORKERS, p), p,
      &r);
  assert_non_null(j);
  /* Only the sleeps: 5 usleep + 3 nanosleep per worker, 1 usleep on main. */
  assert_int_equal(shim_calls(j, "on_workers"), 16);
  assert_int_equal(shim_calls(j, "on_other_threads"), 1);
  assert_int_equal(shim_site_count(j, "read"), 0);
  json_decref(j);
  shim_result_free(&r);
}

static void test_rules_file_option_is_loaded(void **state) {
  (void)state;
  const char *rules = path_of("mine.rules");
  FILE *f = fopen(rules, "w");
  assert_non_null(f);
  fputs("# sleeping is fine in this program\ndisable: sleep\n", f);
  fclose(f);
  const char *p = path_of("rules.json");
  shim_result r;
  json_t *j = run_target(
      "counts", NULL,
      shim_fmt("report=json:report_path=%s:rules=%s:" WORKERS, p, rules), p,
      &r);
  assert_non_null(j);
  /* 24 minus the 16 sleeps: poll, write, 2 reads per worker. */
  assert_int_equal(shim_calls(j, "on_workers"), 8);
  assert_int_equal(shim_site_count(j, "usleep"), 0);
  json_decref(j);
  shim_result_free(&r);
}

/* With default_rules=0 a rule file replaces the packs and alone says what
 * counts: its categories and "unless" conditions, and nothing else. Here
 * read() counts even on a non-blocking pipe, waitpid() with WNOHANG and
 * sleep(0) count, usleep() is moved to the lock category, and the calls no
 * rule names (nanosleep, poll, write, select) do not count. */
static void test_rules_file_alone_decides_what_counts(void **state) {
  (void)state;
  const char *rules = path_of("replace.rules");
  FILE *f = fopen(rules, "w");
  assert_non_null(f);
  fputs("blocking:read category=io message=\"any read\"\n"
        "blocking:waitpid category=process unless=\"arg2 has WUNTRACED=2\"\n"
        "blocking:sleep category=sleep\n"
        "blocking:usleep category=lock\n",
        f);
  fclose(f);
  const char *p = path_of("replace.json");
  shim_result r;
  json_t *j = run_target("counts", NULL,
                         shim_fmt("report=json:report_path=%s:default_rules=0:"
                                  "rules=%s:" WORKERS,
                                  p, rules),
                         p, &r);
  assert_non_null(j);
  assert_null(strstr(r.err, "warning"));
  /* Per worker: 2 blocking and 4 non-blocking reads. */
  assert_int_equal(shim_site_count(j, "read"), 12);
  assert_int_equal(shim_site_count(j, "waitpid"), 2);
  assert_int_equal(shim_site_count(j, "sleep"), 2);
  assert_int_equal(shim_site_count(j, "usleep"), 0); /* lock: off */
  assert_int_equal(shim_site_count(j, "nanosleep"), 0);
  assert_int_equal(shim_site_count(j, "poll"), 0);
  assert_int_equal(shim_site_count(j, "write"), 0);
  assert_int_equal(shim_site_count(j, "select"), 0);
  assert_int_equal(shim_calls(j, "on_workers"), 12 + 2 + 2);
  /* Main's usleep and pthread_joins: one off, the others unnamed. */
  assert_int_equal(shim_calls(j, "on_other_threads"), 0);
  json_decref(j);
  shim_result_free(&r);

  /* lock=1 turns the file's usleep on, and with none of the pack's
   * conditions usleep(0) counts too: 5 + 1 per worker, 1 on main. */
  j = run_target("counts", NULL,
                 shim_fmt("report=json:report_path=%s:default_rules=0:lock=1:"
                          "rules=%s:" WORKERS,
                          p, rules),
                 p, &r);
  assert_non_null(j);
  assert_int_equal(shim_site_count(j, "usleep"), 12);
  assert_int_equal(shim_calls(j, "on_workers"), 12 + 2 + 2 + 12);
  assert_int_equal(shim_calls(j, "on_other_threads"), 1);
  json_decref(j);
  shim_result_free(&r);

  /* The same file on top of the packs is refused (a pack's rule cannot be
   * redefined): the packs' conditions stand. */
  j = run_target(
      "counts", NULL,
      shim_fmt("report=json:report_path=%s:rules=%s:" WORKERS, p, rules), p,
      &r);
  assert_non_null(j);
  assert_non_null(strstr(r.err, "could not be loaded"));
  assert_int_equal(shim_site_count(j, "read"), 4);
  assert_int_equal(shim_site_count(j, "waitpid"), 0);
  assert_int_equal(shim_calls(j, "on_workers"), 24);
  json_decref(j);
  shim_result_free(&r);
}

/* An embedded pack that does not load is said on stderr, naming the pack
 * and the error, and the shim then stays out of the way: the program runs
 * as without it, and there is no report. */
static void test_embedded_pack_that_does_not_load_is_reported(void **state) {
  (void)state;
  const char *p = path_of("badpack.json");
  unlink(p);
  char *argv[] = {SHIM_TARGET, "counts", NULL};
  char *env[] = {
      shim_fmt("BLOCKWATCH_OPTIONS=report=both:report_path=%s:" WORKERS, p),
      shim_fmt("LD_PRELOAD=%s%s%s", SAN_PRELOAD, SAN_PRELOAD[0] ? ":" : "",
               BADPACK_SHIM_LIB),
      NULL};
  shim_result r;
  assert_int_equal(shim_run(argv, env, 0, 120, &r), 0);
  assert_false(r.timedout);
  assert_true(r.exited);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.out, "done 1\n");
  assert_non_null(strstr(r.err, "blockwatch: ERROR: the embedded rule pack "
                                "'no-such-pack' did not load"));
  /* One line from the shim, and no report. */
  const char *line = strstr(r.err, "blockwatch:");
  assert_null(strstr(line + 1, "blockwatch:"));
  assert_int_equal(access(p, F_OK), -1);
  shim_result_free(&r);
}

static void test_threshold_ignores_short_calls(void **state) {
  (void)state;
  const char *p = path_of("threshold.json");
  shim_result r;
  json_t *j = run_target(
      "counts", NULL,
      shim_fmt("report=json:report_path=%s:threshold_us=1000000:" WORKERS, p),
      p, &r);
  assert_non_null(j);
  assert_int_equal(shim_calls(j, "on_workers"), 0);
  json_decref(j);
  shim_result_free(&r);
}

/* ---- transparency -----------------------------------------------------------
 */

static void
test_results_and_errno_identical_with_and_without_shim(void **state) {
  (void)state;
  char *argv[] = {SHIM_TARGET, "errno", NULL};
  shim_result plain, under;
  assert_int_equal(shim_run(argv, NULL, 0, 60, &plain), 0);
  char *env[] = {shim_fmt("BLOCKWATCH_OPTIONS=report=none:lock=1:" WORKERS),
                 NULL};
  assert_int_equal(shim_run(argv, env, 1, 60, &under), 0);
  assert_int_equal(plain.status, 0);
  assert_int_equal(under.status, 0);
  assert_true(strlen(plain.out) > 500);
#if defined(__x86_64__)
  assert_non_null(
      strstr(plain.out, "cond_timedwait_old 110 0")); /* ETIMEDOUT */
#endif
  assert_string_equal(plain.out, under.out);
  assert_string_equal(under.err, "");
  shim_result_free(&plain);
  shim_result_free(&under);
}

static void test_bad_options_warn_once_and_keep_defaults(void **state) {
  (void)state;
  const char *p = path_of("badopt.json");
  shim_result r;
  json_t *j = run_target(
      "counts", NULL,
      shim_fmt("report=json:report_path=%s:bogus=1:threshold_us=abc:" WORKERS,
               p),
      p, &r);
  assert_non_null(j);
  assert_non_null(strstr(r.err, "blockwatch: warning: BLOCKWATCH_OPTIONS: "
                                "unknown option 'bogus'"));
  assert_non_null(strstr(r.err, "for 'threshold_us'"));
  const char *first = strstr(r.err, "'bogus'");
  assert_null(strstr(first + 1, "'bogus'"));
  assert_int_equal(shim_calls(j, "on_workers"), 24);
  /* Everything the shim printed is a "blockwatch:" line on stderr. */
  for (const char *l = r.err; *l; l = strchr(l, '\n') + 1) {
    assert_int_equal(strncmp(l, "blockwatch: ", 12), 0);
    if (!strchr(l, '\n'))
      break;
  }
  json_decref(j);
  shim_result_free(&r);
}

static void test_closed_stderr_gets_nothing_written(void **state) {
  (void)state;
  const char *p = path_of("closed.json");
  const char *victim = path_of("program-file.txt");
  shim_result r;
  json_t *j = run_target(
      "closed_stderr", victim,
      shim_fmt("report=both:verbosity=1:report_path=%s:" WORKERS, p), p, &r);
  assert_non_null(j);
  assert_int_equal(shim_out_value(r.out, "fd"), 2);
  assert_int_equal(shim_calls(j, "on_workers"), 3);
  FILE *f = fopen(victim, "r");
  assert_non_null(f);
  char buf[256] = {0};
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  assert_int_equal(n, 0);
  json_decref(j);
  shim_result_free(&r);
}

static void test_report_replaces_a_symlink_never_follows_it(void **state) {
  (void)state;
  const char *p = path_of("link.json");
  const char *victim = path_of("victim.txt");
  FILE *f = fopen(victim, "w");
  fputs("victim", f);
  fclose(f);
  unlink(p);
  assert_int_equal(symlink(victim, p), 0);
  char *argv[] = {SHIM_TARGET, "counts", NULL};
  char *env[] = {shim_fmt("BLOCKWATCH_OPTIONS=report=json:report_path=%s", p),
                 NULL};
  shim_result r;
  assert_int_equal(shim_run(argv, env, 1, 60, &r), 0);
  struct stat st;
  assert_int_equal(lstat(p, &st), 0);
  assert_true(S_ISREG(st.st_mode));
  f = fopen(victim, "r");
  char buf[32] = {0};
  assert_true(fread(buf, 1, sizeof buf - 1, f) > 0);
  fclose(f);
  assert_string_equal(buf, "victim");
  shim_result_free(&r);
}

/* ---- process life
 * ------------------------------------------------------------ */

static void test_fork_child_reports_separately(void **state) {
  (void)state;
  const char *p = path_of("fork.json");
  shim_result r;
  json_t *j = run_target(
      "fork", NULL, shim_fmt("report=json:report_path=%s:" WORKERS, p), p, &r);
  assert_non_null(j);
  assert_int_equal(shim_out_value(r.out, "child_status"), 0);
  assert_int_equal(shim_calls(j, "on_workers"), 3);
  assert_int_equal(shim_calls(j, "on_other_threads"), 2); /* join, waitpid */
  long long child = shim_out_value(r.out, "child");
  json_t *c = shim_load_json(shim_fmt("%s.%lld", p, child));
  assert_non_null(c);
  assert_int_equal(json_integer_value(json_object_get(c, "pid")), child);
  assert_int_equal(shim_calls(c, "on_workers"), 0);
  assert_int_equal(shim_calls(c, "on_other_threads"), 5);
  json_decref(c);
  json_decref(j);
  shim_result_free(&r);
}

static void test_vfork_child_exit_leaves_parent_report(void **state) {
  (void)state;
  const char *p = path_of("vfork.json");
  shim_result r;
  json_t *j = run_target(
      "vfork", NULL, shim_fmt("report=json:report_path=%s:" WORKERS, p), p, &r);
  assert_non_null(j);
  assert_int_equal(shim_out_value(r.out, "child_status"), 5);
  assert_int_equal(json_integer_value(json_object_get(j, "pid")),
                   json_integer_value(json_object_get(j, "pid")));
  assert_int_equal(shim_calls(j, "on_workers"), 3);
  assert_int_equal(shim_calls(j, "on_other_threads"), 2);
  json_decref(j);
  shim_result_free(&r);
}

static void test_pid_in_report_path(void **state) {
  (void)state;
  shim_result r;
  run_target("fork", NULL,
             shim_fmt("report=json:report_path=%s/pid-%%p.json:" WORKERS,
                      shim_tmpdir()),
             NULL, &r);
  long long child = shim_out_value(r.out, "child");
  json_t *c =
      shim_load_json(shim_fmt("%s/pid-%lld.json", shim_tmpdir(), child));
  assert_non_null(c);
  assert_int_equal(shim_calls(c, "on_other_threads"), 5);
  json_decref(c);
  shim_result_free(&r);
}

static void test_exec_image_writes_its_own_report(void **state) {
  (void)state;
  const char *p = path_of("exec.json");
  shim_result r;
  json_t *j = run_target(
      "exec", NULL, shim_fmt("report=json:report_path=%s:" WORKERS, p), p, &r);
  assert_non_null(j);
  assert_int_equal(json_integer_value(json_object_get(j, "pid")),
                   shim_out_value(r.out, "pid"));
  assert_int_equal(shim_out_value(r.out, "done"), 1);
  /* The counts scenario's numbers: the pre-exec image's 2 sleeps are not
   * carried over. */
  assert_int_equal(shim_calls(j, "on_workers"), 24);
  assert_int_equal(shim_calls(j, "on_other_threads"), 3);
  json_decref(j);
  shim_result_free(&r);
}

static void test_signal_interim_report_and_eintr_kept(void **state) {
  (void)state;
  const char *p = path_of("signal.json");
  shim_result r;
  json_t *j = run_target(
      "signal", p,
      shim_fmt("report=json:report_path=%s:interim_signal=SIGUSR2:" WORKERS, p),
      p, &r);
  assert_non_null(j);
  assert_non_null(strstr(r.out, "nanosleep -1 EINTR"));
  assert_int_equal(shim_out_value(r.out, "renamed"), 0);
  json_t *interim = shim_load_json(shim_fmt("%s.interim", p));
  assert_non_null(interim);
  assert_true(json_is_true(json_object_get(interim, "interim")));
  assert_int_equal(shim_calls(interim, "on_workers"), 4);
  assert_true(json_is_false(json_object_get(j, "interim")));
  assert_int_equal(shim_calls(j, "on_workers"), 4);
  json_decref(interim);
  json_decref(j);
  shim_result_free(&r);
}

static void test_exit_paths_write_the_report(void **state) {
  (void)state;
  static const struct {
    const char *how;
    int exited, status;
  } cases[] = {{"_exit", 1, 7}, {"_Exit", 1, 8}, {"abort", 0, SIGABRT}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *p = path_of("exit.json");
    shim_result r;
    json_t *j = run_target(
        "exit", cases[i].how,
        shim_fmt("report=json:report_path=%s:handle_fatal=1:" WORKERS, p), p,
        &r);
    assert_non_null(j);
    assert_int_equal(r.exited, cases[i].exited);
    assert_int_equal(r.status, cases[i].status);
    assert_int_equal(shim_calls(j, "on_workers"), 3);
    json_decref(j);
    shim_result_free(&r);
  }
}

static void test_hung_worker_is_reported_on_sigterm(void **state) {
  (void)state;
  const char *p = path_of("hang.json");
  shim_result r;
  json_t *j = run_target(
      "hang", NULL,
      shim_fmt("report=json:report_path=%s:handle_fatal=1:" WORKERS, p), p, &r);
  assert_non_null(j);
  assert_false(r.exited);
  assert_int_equal(r.status, SIGTERM);
  json_t *calls = json_object_get(j, "blocking_calls");
  assert_int_equal(shim_calls(j, "on_workers"), 1);
  assert_int_equal(shim_calls(j, "in_progress"), 1);
  assert_true(number(calls, "in_progress_ms") >= 100.0);
  assert_int_equal(shim_site_count(j, "sleep"), 1);
  json_t *pool = pool_at(j, 0);
  assert_true(number(pool, "all_blocked_ms") >= 100.0);
  json_decref(j);
  shim_result_free(&r);
}

static void test_fail_now_stops_at_first_worker_block(void **state) {
  (void)state;
  const char *p = path_of("fail.json");
  shim_result r;
  json_t *j = run_target(
      "counts", NULL, shim_fmt("report=json:report_path=%s:fail=1:" WORKERS, p),
      p, &r);
  assert_non_null(j);
  assert_true(r.exited);
  assert_int_equal(r.status, 66);
  assert_non_null(strstr(r.err, "blocking call usleep() on a pool worker"));
  assert_non_null(strstr(r.err, "counts_worker"));
  assert_int_equal(shim_calls(j, "on_workers"), 1);
  json_decref(j);
  shim_result_free(&r);
}

static void test_fail_report_exits_nonzero_only_with_findings(void **state) {
  (void)state;
  const char *p = path_of("failrep.json");
  shim_result r;
  json_t *j = run_target(
      "counts", NULL,
      shim_fmt("report=json:report_path=%s:fail=report:exitcode=3:" WORKERS, p),
      p, &r);
  assert_non_null(j);
  assert_int_equal(r.status, 3);
  assert_int_equal(shim_out_value(r.out, "done"), 1); /* stdout flushed */
  assert_int_equal(shim_calls(j, "on_workers"), 24);
  json_decref(j);
  shim_result_free(&r);
  j = run_target("counts", NULL,
                 shim_fmt("report=json:report_path=%s:fail=report", p), p, &r);
  assert_non_null(j);
  assert_int_equal(r.status, 0);
  json_decref(j);
  shim_result_free(&r);
}

static void test_torture_many_threads_fork_no_lost_counts(void **state) {
  (void)state;
  const char *p = path_of("torture.json");
  shim_result r;
  json_t *j =
      run_target("torture", NULL,
                 shim_fmt("report=json:report_path=%s:" WORKERS, p), p, &r);
  assert_non_null(j);
  long long calls = shim_out_value(r.out, "calls");
  assert_true(calls >= 100000);
  assert_int_equal(shim_calls(j, "on_workers"), calls);
  assert_int_equal(shim_site_count(j, "write"), calls);
  assert_int_equal(shim_out_value(r.out, "child_status"), 0);
  json_t *c =
      shim_load_json(shim_fmt("%s.%lld", p, shim_out_value(r.out, "child")));
  assert_non_null(c);
  assert_int_equal(shim_calls(c, "on_workers"), 0);
  assert_int_equal(shim_calls(c, "on_other_threads"), 1);
  json_decref(c);
  json_decref(j);
  shim_result_free(&r);
}

static void
test_report_signals_during_counted_calls_lose_nothing(void **state) {
  (void)state;
  const char *p = path_of("storm.json");
  shim_result r;
  json_t *j = run_target(
      "storm", NULL,
      shim_fmt("report=json:report_path=%s:interim_signal=SIGUSR2:" WORKERS, p),
      p, &r);
  assert_non_null(j);
  assert_int_equal(r.status, 0);
  long long calls = shim_out_value(r.out, "calls");
  assert_true(calls > 0);
  assert_true(shim_out_value(r.out, "signals") >= 1);
  assert_int_equal(shim_calls(j, "on_workers"), calls);
  assert_int_equal(shim_site_count(j, "write"), calls);
  json_decref(j);
  shim_result_free(&r);
}

/* ---- the wrapper command
 * ------------------------------------------------------ */

/* The wrapper appends the shim to LD_PRELOAD: under a sanitizer build the
 * sanitizer runtime is already there, first. */
static char *const *san_env(void) {
  static char var[600];
  static char *env[2];
  if (!SAN_PRELOAD[0])
    return NULL;
  snprintf(var, sizeof var, "LD_PRELOAD=%s", SAN_PRELOAD);
  env[0] = var;
  return env;
}

/* Skips the calling test under TSan, saying why. */
static void skip_under_tsan(const char *why) {
  if (strstr(SAN_PRELOAD, "libtsan")) {
    fprintf(stderr, "skipped under TSan: %s\n", why);
    skip();
  }
}

static void test_wrapper_runs_program_with_shim_and_keeps_status(void **state) {
  (void)state;
  skip_under_tsan("libtsan preloaded into the wrapper's /bin/sh crashes it");
  const char *p = path_of("wrapper.json");
  unlink(p);
  char *argv[] = {BLOCKWATCH_CMD,  "-o",     (char *)p,
                  "--worker-name", "work-*", "--",
                  SHIM_TARGET,     "counts", NULL};
  shim_result r;
  assert_int_equal(shim_run(argv, san_env(), 0, 60, &r), 0);
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.err, "blockwatch: ==== report"));
  json_t *j = shim_load_json(p);
  assert_non_null(j);
  assert_int_equal(shim_calls(j, "on_workers"), 24);
  json_decref(j);
  shim_result_free(&r);

  char *argv2[] = {BLOCKWATCH_CMD, "--quiet", SHIM_TARGET,
                   "exit",         "_exit",   NULL};
  assert_int_equal(shim_run(argv2, san_env(), 0, 60, &r), 0);
  assert_int_equal(r.status, 7);
  shim_result_free(&r);

  char *argv3[] = {BLOCKWATCH_CMD, "--fail",    "--worker-name", "work-*",
                   "--",           SHIM_TARGET, "counts",        NULL};
  assert_int_equal(shim_run(argv3, san_env(), 0, 60, &r), 0);
  assert_int_equal(r.status, 66);
  shim_result_free(&r);
}

/* The shell's statuses for a program that is missing or cannot be run, so a
 * caller tells "not found" from "failed" as it does with env or timeout. */
static void test_wrapper_exits_127_and_126_like_a_shell(void **state) {
  (void)state;
  const char *not_exec = path_of("not_executable");
  FILE *f = fopen(not_exec, "w");
  assert_non_null(f);
  fputs("#!/bin/sh\nexit 0\n", f);
  fclose(f);
  assert_int_equal(chmod(not_exec, 0644), 0);
  struct {
    const char *prog;
    int status;
    const char *says;
  } cases[] = {
      {"blockwatch-no-such-program", 127, "command not found"},
      {"./no/such/dir/prog", 127, "command not found"},
      {not_exec, 126, "permission denied"},
      {"/", 126, "is a directory"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *argv[] = {BLOCKWATCH_CMD, "--", (char *)cases[i].prog, NULL};
    shim_result r;
    assert_int_equal(shim_run(argv, NULL, 0, 60, &r), 0);
    assert_int_equal(r.status, cases[i].status);
    assert_non_null(strstr(r.err, cases[i].says));
    assert_non_null(strstr(r.err, cases[i].prog));
    shim_result_free(&r);
  }
}

static void test_wrapper_says_static_binaries_cannot_be_watched(void **state) {
  (void)state;
  char *argv[] = {BLOCKWATCH_CMD, "--", SHIM_STATIC_TARGET, NULL};
  shim_result r;
  assert_int_equal(shim_run(argv, NULL, 0, 60, &r), 0);
  assert_non_null(strstr(r.err, "statically linked"));
  assert_int_equal(r.status, 0);
  shim_result_free(&r);
}

/* ---- the bundled runtime: observer, starvation, compensation, trace
 * ---------- */

static json_t *run_runtime(const char *target, const char *mode,
                           const char *options, const char *p, shim_result *r) {
  char *argv[] = {(char *)target, (char *)mode, NULL};
  char *env[] = {shim_fmt("BLOCKWATCH_OPTIONS=report=json:report_path=%s%s%s",
                          p, options[0] ? ":" : "", options),
                 NULL};
  unlink(p);
  assert_int_equal(shim_run(argv, env, 1, 120, r), 0);
  assert_false(r->timedout);
  assert_int_equal(r->status, 0);
  return shim_load_json(p);
}

static void check_starvation(const char *target) {
  const char *p = path_of("starve.json");
  shim_result r;
  json_t *j = run_runtime(target, "starve", "", p, &r);
  assert_non_null(j);
  double probe = (double)shim_out_value(r.out, "probe_wait_ms");
  /* 6 sleepers of 200 ms on 2 workers: the probe waits ~600 ms. */
  assert_true(probe >= 500.0);
  assert_int_equal(shim_calls(j, "on_workers"), 6);
  assert_int_equal(shim_site_count(j, "usleep"), 6);
  json_t *pool = pool_at(j, 0);
  assert_non_null(pool);
  assert_string_equal(json_string_value(json_object_get(pool, "name")), "exp");
  assert_int_equal((int)number(pool, "workers"), 2);
  assert_int_equal((int)number(pool, "peak_blocked_workers"), 2);
  json_t *starv = json_object_get(pool, "starvation_delay_ms");
  double max = number(starv, "max");
  /* The probe waited only while both workers slept: its starvation delay
   * is its queue wait, give or take scheduling (generous bounds). */
  assert_true(fabs(max - probe) <= 50.0 + 0.2 * probe);
  assert_true(number(pool, "all_blocked_ms") >= 0.8 * probe);
  /* Sleepers 3-4 waited one round of sleeps (~probe/3), 5-6 two rounds,
   * the probe three. They were queued before any worker blocked, so with
   * the default sample_items most were never timed: the overlap with the
   * all-blocked intervals must still be exact. (Sleeper 2 may starve a
   * little too when the second worker starts late, as under ASan.) */
  assert_true(number(starv, "items") >= 5 && number(starv, "items") <= 6);
  double total = number(starv, "total");
  assert_true(fabs(total - 3.0 * probe) <= 100.0 + 0.2 * 3.0 * probe);
  assert_true(number(json_object_get(pool, "queue_wait_ms"), "max") >= max);
  /* The six sleepers and the probe, each counted once. */
  assert_int_equal((int)number(pool, "items"), 7);
  json_decref(j);
  shim_result_free(&r);
}

/* Item numbers are kept per thread group and summed for the report: 20000
 * items over 4 workers come out exactly, and nothing blocked means no
 * starvation (the lock-free path for items no all-blocked interval
 * overlapped). */
/* sample_items: the option's value, or 0 for the default (16). */
static void check_many_items(const char *target, unsigned sample_items) {
  const char *p = path_of("many.json");
  shim_result r;
  json_t *j = run_runtime(
      target, "many",
      sample_items ? shim_fmt("sample_items=%u", sample_items) : "", p, &r);
  assert_non_null(j);
  json_t *pool = pool_at(j, 0);
  assert_non_null(pool);
  assert_string_equal(json_string_value(json_object_get(pool, "name")), "many");
  assert_int_equal((int)number(pool, "items"), 20000);
  assert_int_equal((int)number(pool, "workers"), 4);
  json_t *qw = json_object_get(pool, "queue_wait_ms");
  assert_true(number(qw, "max") > 0.0);
  assert_true(number(qw, "p99") <= number(qw, "max"));
  /* No worker ever blocks, so the only timed items are the sampled ones:
   * one in sample_items of the submitting thread's (the runtime may time
   * a few more, never fewer). */
  unsigned every = sample_items ? sample_items : 16;
  double timed = number(qw, "timed_items");
  assert_true(timed >= 20000.0 / every);
  if (every == 1)
    assert_int_equal((int)timed, 20000);
  else
    assert_true(timed <= 2 * 20000.0 / every);
  json_t *starv = json_object_get(pool, "starvation_delay_ms");
  assert_int_equal((int)number(starv, "items"), 0);
  assert_int_equal((int)number(pool, "peak_blocked_workers"), 0);
  json_decref(j);
  shim_result_free(&r);
}

static void test_item_counts_add_up_over_workers_shared_runtime(void **state) {
  (void)state;
  check_many_items(RUNTIME_TARGET, 0);
  check_many_items(RUNTIME_TARGET, 1);
  check_many_items(RUNTIME_TARGET, 4);
}

static void test_item_counts_add_up_over_workers_static_runtime(void **state) {
  (void)state;
  check_many_items(RUNTIME_STATIC_TARGET, 0);
}

static void
test_starvation_delay_matches_probe_wait_shared_runtime(void **state) {
  (void)state;
  check_starvation(RUNTIME_TARGET);
}

static void
test_starvation_delay_matches_probe_wait_static_runtime(void **state) {
  (void)state;
  check_starvation(RUNTIME_STATIC_TARGET);
}

static void test_compensation_starts_spare_workers(void **state) {
  (void)state;
  skip_under_tsan("the shim calls notify_blocked from inside TSan's usleep "
                  "interceptor, where TSan ignores the runtime's locking and "
                  "reports false races");
  const char *p = path_of("comp.json");
  shim_result r;
  json_t *j = run_runtime(RUNTIME_TARGET, "compensate", "compensate=1", p, &r);
  assert_non_null(j);
  json_t *pool = pool_at(j, 0);
  assert_true(number(pool, "compensated_workers") >= 1);
  /* Spare workers took the probe long before 3 rounds of sleepers. */
  assert_true(shim_out_value(r.out, "probe_wait_ms") < 400);
  json_decref(j);
  shim_result_free(&r);
}

#ifdef STARVATION_PROBE
/* "  probe waited X ms" from samples/starvation_probe (-1 when missing). */
static double probe_waited_ms(const char *out) {
  const char *at = out ? strstr(out, "probe waited ") : NULL;
  return at ? strtod(at + strlen("probe waited "), NULL) : -1.0;
}

/* bw_run_blocking's threads block by design: their calls are counted under
 * their own heading, never as worker blocking; the descriptor poller's and
 * the idle runtime threads' waits are not counted at all. */
static void test_blocking_threads_have_their_own_heading(void **state) {
  (void)state;
  const char *p = path_of("offload.json");
  shim_result r;
  json_t *j = run_runtime(RUNTIME_TARGET, "offload", "", p, &r);
  assert_non_null(j);
  assert_int_equal(shim_out_value(r.out, "ready"), POLLIN);
  json_t *calls = json_object_get(j, "blocking_calls");
  assert_int_equal(shim_calls(j, "on_workers"), 0);
  assert_int_equal(number(calls, "on_blocking_threads"), 3);
  json_t *by = json_object_get(calls, "on_other_threads_by_function");
  for (size_t i = 0; i < json_array_size(by); i++) {
    const char *fn =
        json_string_value(json_object_get(json_array_get(by, i), "function"));
    if (strncmp(fn, "epoll_", 6) == 0)
      fail_msg("the poller's %s was counted as another thread's call", fn);
  }
  assert_int_equal(json_array_size(json_object_get(j, "call_sites")), 0);
  json_decref(j);
  shim_result_free(&r);
}

/* Parallel loops from the main thread and from an item: the runtime's
 * yields while a caller waits for its helpers are the runtime's own, and
 * nothing else in them blocks; neither a worker's call nor another
 * thread's is counted for them. */
static void test_parallel_loops_are_the_runtimes_own(void **state) {
  (void)state;
  const char *p = path_of("loops.json");
  shim_result r;
  json_t *j = run_runtime(RUNTIME_TARGET, "loops", "", p, &r);
  assert_non_null(j);
  assert_int_equal(shim_out_value(r.out, "sum_ok"), 1);
  json_t *calls = json_object_get(j, "blocking_calls");
  assert_int_equal(shim_calls(j, "on_workers"), 0);
  json_t *by = json_object_get(calls, "on_other_threads_by_function");
  for (size_t i = 0; i < json_array_size(by); i++) {
    const char *fn =
        json_string_value(json_object_get(json_array_get(by, i), "function"));
    if (strcmp(fn, "sched_yield") == 0)
      fail_msg("the runtime's own yield was counted as the program's");
  }
  assert_int_equal(json_array_size(json_object_get(j, "call_sites")), 0);
  json_decref(j);
  shim_result_free(&r);
}

/* The sample's compensation-off pool (no BW_POOL_COMPENSATE): 16 items
 * that sleep 250 ms on 2 workers, then a probe. */
static json_t *run_probe_off(const char *options, const char *p,
                             shim_result *r) {
  return run_runtime(STARVATION_PROBE, "--off-only", options, p, r);
}

static void test_compensate_option_works_on_any_pool(void **state) {
  (void)state;
  skip_under_tsan("the shim calls notify_blocked from inside TSan's "
                  "nanosleep interceptor (see the test above)");
  const char *p = path_of("probe-off.json");
  shim_result r;
  /* Without the option: the probe waits out the sleepers (~2 s). */
  json_t *j = run_probe_off("", p, &r);
  assert_non_null(j);
  assert_string_equal(json_string_value(json_object_get(pool_at(j, 0), "name")),
                      "probe-off");
  assert_int_equal((int)number(pool_at(j, 0), "compensated_workers"), 0);
  double off = probe_waited_ms(r.out);
  assert_true(off >= 1000.0);
  json_decref(j);
  shim_result_free(&r);
  /* With it, the shim's notify_blocked makes the runtime start spares even
   * though the program never asked for compensation. */
  j = run_probe_off("compensate=1", p, &r);
  assert_non_null(j);
  assert_true(number(pool_at(j, 0), "compensated_workers") >= 1);
  double on = probe_waited_ms(r.out);
  assert_true(on >= 0.0);
  assert_true(on < 500.0);
  json_decref(j);
  shim_result_free(&r);
}
#endif

static void test_sync_over_async_wait_counted_once(void **state) {
  (void)state;
  const char *p = path_of("syncwait.json");
  shim_result r;
  json_t *j = run_runtime(RUNTIME_TARGET, "syncwait", "", p, &r);
  assert_non_null(j);
  assert_int_equal(shim_out_value(r.out, "bw_wait"), 0);
  assert_int_equal(shim_out_value(r.out, "bw_wait_poll"), 1);
  assert_int_equal(shim_site_count(j, "bw_wait"), 1);
  /* Its own condition wait inside the runtime is not counted again. */
  assert_int_equal(shim_site_count(j, "pthread_cond_wait"), 0);
  assert_int_equal(shim_site_count(j, "pthread_cond_timedwait"), 0);
  assert_int_equal(shim_calls(j, "on_workers"), 1);
  json_decref(j);
  shim_result_free(&r);
}

/* The queue-length counter of pool "exp": 1 when its values went up and
 * later came down again (items starting lower it), and it ends at 0. */
static int queue_counter_rises_then_falls(json_t *events) {
  size_t i;
  json_t *e;
  double peak = 0, last = -1;
  int fell = 0;
  json_array_foreach(events, i, e) {
    const char *name = json_string_value(json_object_get(e, "name"));
    if (!name || strcmp(name, "queue length (exp)") != 0)
      continue;
    double v =
        json_number_value(json_object_get(json_object_get(e, "args"), "value"));
    if (v > peak)
      peak = v;
    else if (v < peak)
      fell = 1;
    last = v;
  }
  return peak >= 2 && fell && last == 0;
}

static void test_trace_is_a_chrome_trace(void **state) {
  (void)state;
  const char *p = path_of("trace-report.json");
  const char *t = path_of("trace.json");
  unlink(t);
  shim_result r;
  json_t *j =
      run_runtime(RUNTIME_TARGET, "starve", shim_fmt("trace=%s", t), p, &r);
  assert_non_null(j);
  double probe = (double)shim_out_value(r.out, "probe_wait_ms");
  json_t *trace = shim_load_json(t);
  assert_non_null(trace);
  json_t *events = json_object_get(trace, "traceEvents");
  assert_true(json_is_array(events));
  size_t i;
  json_t *e;
  int slices = 0, counters = 0, names = 0, waits = 0;
  double longest_wait_ms = 0;
  json_array_foreach(events, i, e) {
    const char *ph = json_string_value(json_object_get(e, "ph"));
    const char *name = json_string_value(json_object_get(e, "name"));
    assert_non_null(ph);
    assert_non_null(name);
    assert_true(json_is_integer(json_object_get(e, "pid")));
    if (strcmp(ph, "b") == 0 && strcmp(name, "queue wait (exp)") == 0) {
      /* A starved item: its wait, from its enqueue, on the pool's lane
       * (the "e" that ends it is checked in test_timeline.c). */
      waits++;
      assert_string_equal(json_string_value(json_object_get(e, "cat")),
                          "queue");
      json_t *args = json_object_get(e, "args");
      assert_string_equal(json_string_value(json_object_get(args, "pool")),
                          "exp");
      double starved = number(args, "starvation_ms");
      double dur_ms = number(args, "wait_ms");
      assert_true(starved >= 1.0);
      assert_true(starved <= dur_ms + 0.01);
      if (dur_ms > longest_wait_ms)
        longest_wait_ms = dur_ms;
    } else if (strcmp(ph, "X") == 0) {
      slices++;
      assert_string_equal(name, "usleep");
      assert_true(json_number_value(json_object_get(e, "dur")) >= 150000.0);
      assert_true(json_is_number(json_object_get(e, "ts")));
    } else if (strcmp(ph, "C") == 0) {
      counters++;
    } else if (strcmp(ph, "M") == 0 && strcmp(name, "thread_name") == 0) {
      names++;
    }
  }
  assert_int_equal(slices, 6);
  assert_true(counters >= 12);
  assert_true(names >= 2);
  /* Sleepers 3-6 and the probe waited while both workers slept; on a slow
   * run sleeper 2 may too (worker 1 blocked before worker 2 woke up), so
   * only the bounds are exact: at least the probe, at most every item. */
  assert_true(waits >= 1 && waits <= 7);
  /* The longest is the probe's (it measured its own wait). */
  assert_true(fabs(longest_wait_ms - probe) <= 50.0 + 0.2 * probe);
  assert_true(queue_counter_rises_then_falls(events));

#ifdef HAVE_TRACE2SVG
  /* bw-trace2svg reads the waits as waits, not as a thread's spans. */
  t2s_trace model;
  char err[256];
  assert_int_equal(t2s_trace_load(t, &model, err, sizeof err), 0);
  assert_int_equal((int)model.n_waits, waits);
  double longest_us = 0;
  for (size_t k = 0; k < model.n_waits; k++)
    if (model.waits[k].dur_us > longest_us)
      longest_us = model.waits[k].dur_us;
  assert_true(fabs(longest_us / 1000.0 - longest_wait_ms) < 0.01);
  t2s_trace_free(&model);
#endif
  json_decref(trace);
  json_decref(j);
  shim_result_free(&r);
}

/* A program whose references to pthread_cond_wait/timedwait carry no
 * symbol version - every program built with -fsanitize=thread or =address,
 * whose runtime defines them unversioned - is bound by the dynamic linker
 * to the shim's definition of version index 2. That must be the current
 * condition variables (GLIBC_2.3.2): with the old ones (GLIBC_2.2.5) first
 * in exports.map, such a wait went to glibc's compat wrapper on a current
 * condition variable, and the signals never reached it (pool workers
 * parked for good under TSan: an intermittent hang and a flaky
 * peak_blocked_workers). */
static void test_unversioned_cond_waits_reach_current_condvars(void **state) {
  (void)state;
  char *argv[] = {UNVERSIONED_TARGET, NULL};
  shim_result r;
  assert_int_equal(shim_run(argv, NULL, 1, 60, &r), 0);
  assert_false(r.timedout);
  assert_non_null(strstr(r.out, "woken 2"));
  assert_int_equal(r.status, 0);
  shim_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_counts_exact_for_sleeps_pipes_and_polls),
      cmocka_unit_test(test_call_sites_name_the_caller_with_file_and_line),
      cmocka_unit_test(test_without_worker_option_all_calls_are_other_threads),
      cmocka_unit_test(test_descriptor_closed_inside_libc_is_forgotten),
      cmocka_unit_test(test_locks_count_only_when_contended),
      cmocka_unit_test(test_lone_thread_locks_count_only_when_held),
      cmocka_unit_test(test_worker_start_option_classifies_by_start_routine),
      cmocka_unit_test(test_categories_option_limits_what_counts),
      cmocka_unit_test(test_rules_file_option_is_loaded),
      cmocka_unit_test(test_rules_file_alone_decides_what_counts),
      cmocka_unit_test(test_embedded_pack_that_does_not_load_is_reported),
      cmocka_unit_test(test_threshold_ignores_short_calls),
      cmocka_unit_test(test_results_and_errno_identical_with_and_without_shim),
      cmocka_unit_test(test_bad_options_warn_once_and_keep_defaults),
      cmocka_unit_test(test_closed_stderr_gets_nothing_written),
      cmocka_unit_test(test_report_replaces_a_symlink_never_follows_it),
      cmocka_unit_test(test_fork_child_reports_separately),
      cmocka_unit_test(test_vfork_child_exit_leaves_parent_report),
      cmocka_unit_test(test_pid_in_report_path),
      cmocka_unit_test(test_exec_image_writes_its_own_report),
      cmocka_unit_test(test_signal_interim_report_and_eintr_kept),
      cmocka_unit_test(test_exit_paths_write_the_report),
      cmocka_unit_test(test_hung_worker_is_reported_on_sigterm),
      cmocka_unit_test(test_fail_now_stops_at_first_worker_block),
      cmocka_unit_test(test_fail_report_exits_nonzero_only_with_findings),
      cmocka_unit_test(test_torture_many_threads_fork_no_lost_counts),
      cmocka_unit_test(test_report_signals_during_counted_calls_lose_nothing),
      cmocka_unit_test(test_wrapper_runs_program_with_shim_and_keeps_status),
      cmocka_unit_test(test_wrapper_exits_127_and_126_like_a_shell),
      cmocka_unit_test(test_wrapper_says_static_binaries_cannot_be_watched),
      cmocka_unit_test(test_starvation_delay_matches_probe_wait_shared_runtime),
      cmocka_unit_test(test_item_counts_add_up_over_workers_shared_runtime),
      cmocka_unit_test(test_item_counts_add_up_over_workers_static_runtime),
      cmocka_unit_test(test_starvation_delay_matches_probe_wait_static_runtime),
      cmocka_unit_test(test_compensation_starts_spare_workers),
#ifdef STARVATION_PROBE
      cmocka_unit_test(test_compensate_option_works_on_any_pool),
      cmocka_unit_test(test_blocking_threads_have_their_own_heading),
      cmocka_unit_test(test_parallel_loops_are_the_runtimes_own),
#endif
      cmocka_unit_test(test_sync_over_async_wait_counted_once),
      cmocka_unit_test(test_unversioned_cond_waits_reach_current_condvars),
      cmocka_unit_test(test_trace_is_a_chrome_trace),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
