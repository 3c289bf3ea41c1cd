/* timeline_run.c - see timeline_run.h. */
#include <stddef.h>

#include "timeline_run.h"

#include <stdio.h>
#include <unistd.h>

#include "shim_run.h"

int timeline_run(char *trace, size_t size, int *sleep_line) {
  return timeline_run_with(trace, size, sleep_line, NULL);
}

int timeline_run_with(char *trace, size_t size, int *sleep_line,
                      const char *more) {
  shim_tmpfile(trace, size, "two-pools-trace.json");
  unlink(trace);
  char options[1400];
  snprintf(options, sizeof options,
           "BLOCKWATCH_OPTIONS=report=none:trace=%s%s%s", trace,
           more ? ":" : "", more ? more : "");
  char *argv[] = {TWO_POOLS_TARGET, NULL};
  char *env[] = {options, NULL};
  shim_result r;
  if (shim_run(argv, env, 1, 120, &r) != 0)
    return -1;
  int ok = r.exited && r.status == 0 && !r.timedout;
  *sleep_line = (int)shim_out_value(r.out, "sleep_line");
  if (!ok)
    fprintf(stderr, "two_pools_target failed (status %d):\n%s\n", r.status,
            r.err ? r.err : "");
  shim_result_free(&r);
  return ok && *sleep_line > 0 ? 0 : -1;
}
