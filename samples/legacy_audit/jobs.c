/* jobs.c - job handlers reached only through a function-pointer table, the
 * shape that hides blocking calls from a reader following direct calls.
 *
 * Invariant: job_table ends with a {NULL, NULL} sentinel; an unknown kind is
 * counted as done and ignored.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "jobs.h"
#include "queue.h"
#include "storage.h"

typedef void (*job_handler)(const legacy_job *job);

static atomic_uint pings;

/* Blocks two calls down: storage_append -> sync_to_disk -> fsync, and
 * three down to the usleep in settle_disk. */
static void run_flush(const legacy_job *job) {
  char line[64];
  snprintf(line, sizeof line, "flush %d\n", job->id);
  storage_append(line);
}

/* Blocks one call down, on fgets. */
static void run_report(const legacy_job *job) {
  char first[64];
  if (storage_first_line(first, sizeof first) == 0)
    printf("report %d: storage starts with %s", job->id, first);
}

/* Does not block. */
static void run_ping(const legacy_job *job) {
  (void)job;
  atomic_fetch_add(&pings, 1);
}

static const struct {
  const char *kind;
  job_handler handler;
} job_table[] = {
    {"flush", run_flush},
    {"report", run_report},
    {"ping", run_ping},
    {NULL, NULL},
};

void dispatch_job(void *ctx) {
  const legacy_job *job = ctx;
  for (size_t i = 0; job_table[i].kind != NULL; i++) {
    if (strcmp(job_table[i].kind, job->kind) == 0) {
      job_table[i].handler(job);
      break;
    }
  }
  legacy_job_done();
}

unsigned jobs_pings(void) {
  return atomic_load(&pings);
}
