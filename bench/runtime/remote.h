/* remote.h - runs a bench peer in a child process of this same binary.
 *
 * Some peers can only be sized once per process (libuv reads
 * UV_THREADPOOL_SIZE at its first use), so the driver keeps one child per
 * (peer, worker count) and forwards each operation over a pipe, one text
 * line each way. The child times the operation itself: the pipe is never
 * inside a measurement.
 */
#ifndef BW_BENCH_RUNTIME_REMOTE_H
#define BW_BENCH_RUNTIME_REMOTE_H

#include "bench.h"

/* Starts `self --serve <peer> <workers> <flags>` with UV_THREADPOOL_SIZE set
 * to workers, and waits until it has opened its pool. Returns a handle that
 * the ops of bench_remote_wrap() take as their pool, or NULL with errno. */
void *bench_remote_open(const bench_peer *peer, unsigned workers,
                        unsigned flags);

/* A copy of `peer` whose operations forward to a child; an operation the
 * peer lacks stays NULL. open stays the peer's own: use bench_remote_open. */
bench_peer bench_remote_wrap(const bench_peer *peer);

/* The child's side: opens the named peer's pool and serves requests read
 * from stdin until "quit" or end of file. Returns the exit status. */
int bench_remote_serve(const char *name, unsigned workers, unsigned flags);

#endif /* BW_BENCH_RUNTIME_REMOTE_H */
