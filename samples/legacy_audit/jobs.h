/* jobs.h - the legacy program's job kinds, dispatched through a table.
 *
 * Invariant: a legacy_job lives until its handler called legacy_job_done().
 */
#ifndef LEGACY_JOBS_H
#define LEGACY_JOBS_H

typedef struct legacy_job {
  const char *kind; /* "report", "flush" or "ping" */
  int id;
} legacy_job;

/* The pool callback: looks the kind up in the handler table and runs it. */
void dispatch_job(void *ctx);

/* How many "ping" jobs ran (they are the only non-blocking kind). */
unsigned jobs_pings(void);

#endif /* LEGACY_JOBS_H */
