/* peers.c - the table of contenders compiled into this benchmark.
 *
 * CMake defines BENCH_HAVE_<PEER> for each peer whose Debian package it
 * found; the others are listed as missing so that the output says why a
 * column is absent. blockwatch comes first: ratios are taken against it.
 */
#include "bench.h"

#include <stddef.h>

extern const bench_peer bench_peer_blockwatch;
extern const bench_peer bench_peer_blockwatch_then;
extern const bench_peer bench_peer_blockwatch_submit;
extern const bench_peer bench_peer_libuv;
extern const bench_peer bench_peer_glib;
extern const bench_peer bench_peer_thpool;
extern const bench_peer bench_peer_openmp;
extern const bench_peer bench_peer_tbb;
extern const bench_peer bench_peer_tbb_enqueue;

const bench_peer *const bench_peers[] = {
    &bench_peer_blockwatch,
#ifdef BENCH_HAVE_LIBUV
    &bench_peer_libuv,
#endif
#ifdef BENCH_HAVE_GLIB
    &bench_peer_glib,
#endif
#ifdef BENCH_HAVE_THPOOL
    &bench_peer_thpool,
#endif
#ifdef BENCH_HAVE_OPENMP
    &bench_peer_openmp,
#endif
#ifdef BENCH_HAVE_TBB
    &bench_peer_tbb,
    &bench_peer_tbb_enqueue,
#endif
    &bench_peer_blockwatch_then,
    &bench_peer_blockwatch_submit,
    NULL,
};

const char *const bench_missing_peers[] = {
#ifndef BENCH_HAVE_LIBUV
    "libuv (apt-get install libuv1-dev)",
#endif
#ifndef BENCH_HAVE_GLIB
    "GLib (apt-get install libglib2.0-dev)",
#endif
#ifndef BENCH_HAVE_THPOOL
    "C-Thread-Pool (apt-get install cthreadpool-dev)",
#endif
#ifndef BENCH_HAVE_OPENMP
    "OpenMP (a compiler with -fopenmp and libgomp)",
#endif
#ifndef BENCH_HAVE_TBB
    "oneTBB (apt-get install libtbb-dev g++)",
#endif
    NULL,
};
