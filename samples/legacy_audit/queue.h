/* queue.h - the legacy program's own job queue: a thin wrapper over the
 * bundled pool, the kind every old code base grows.
 *
 * Invariant: every job handed to legacy_queue_job() runs on a pool worker,
 * so blockscan treats this wrapper as a pool entry of its own.
 */
#ifndef LEGACY_QUEUE_H
#define LEGACY_QUEUE_H

/* Runs fn(ctx) on the default pool. Returns 0 or a negative errno. */
int legacy_queue_job(void (*fn)(void *ctx), void *ctx);

/* Marks one queued job as finished (called by each job at its end). */
void legacy_job_done(void);

/* Waits, on the calling thread, until `count` jobs have called
 * legacy_job_done(). For main() only: it blocks. */
int legacy_queue_drain(unsigned count);

#endif /* LEGACY_QUEUE_H */
