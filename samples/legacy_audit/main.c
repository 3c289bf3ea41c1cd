/* legacy_audit - a small legacy-style service to audit with blockscan.
 *
 * What it shows: blocking that a reader would not see from the pool call.
 * main() queues jobs through legacy_queue_job() (a wrapper around bw_submit,
 * queue.c); the pool runs dispatch_job(), which calls a handler through a
 * function-pointer table (jobs.c); the handlers block two or three calls
 * further down (storage.c).
 *
 * What to expect from `blockscan --summary samples/legacy_audit` (with -p
 * pointing at a build): three blocking calls reachable from dispatch_job,
 * all in storage.c: usleep in settle_disk (blocking-sleep), fsync in
 * sync_to_disk and fgets in storage_first_line (both I/O). The mutex calls
 * are in the opt-in `lock` category; run_ping blocks nothing; main() and
 * storage_open() run on the main thread and are not reported.
 * blockscan.baseline records today's findings so that a CI run with
 * `--baseline samples/legacy_audit/blockscan.baseline` reports only new ones.
 *
 * The program itself runs in well under a second and exits 0.
 */
#include <stdio.h>

#include "jobs.h"
#include "queue.h"
#include "storage.h"

int main(void) {
  static legacy_job jobs[] = {
      {"flush", 1}, {"ping", 2},   {"flush", 3},
      {"ping", 4},  {"report", 5}, {"ping", 6},
  };
  const unsigned n = sizeof jobs / sizeof jobs[0];
  if (storage_open() != 0) {
    perror("legacy_audit: tmpfile");
    return 1;
  }
  for (unsigned i = 0; i < n; i++) {
    if (legacy_queue_job(dispatch_job, &jobs[i]) != 0) {
      fprintf(stderr, "legacy_audit: could not queue job %u\n", i);
      return 1;
    }
  }
  int rc = legacy_queue_drain(n);
  printf("legacy_audit: %u jobs done (%u pings)\n", n, jobs_pings());
  storage_close();
  return rc == 0 ? 0 : 1;
}
