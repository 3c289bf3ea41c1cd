// offload_tbb.cpp - oneTBB's parallel_for for bw_bench_offload's loop
// section (offload.c), built only when oneTBB is found.
//
// The arena has `workers` slots, one of them for the entering thread, as in
// peer_tbb.cpp; the body is offload.c's: fold each index into a local sum
// and add it to the shared one once per range.
#include "bench.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>

extern "C" int bench_tbb_parallel_for(unsigned workers, size_t n, size_t loops,
                                      uint64_t *ns, uint64_t *sum) {
  try {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                              workers + 1);
    tbb::task_arena arena(static_cast<int>(workers), 1);
    arena.initialize();
    std::atomic<uint64_t> total{0};
    uint64_t start = bench_now_ns();
    for (size_t r = 0; r < loops; r++) {
      arena.execute([&] {
        tbb::parallel_for(tbb::blocked_range<size_t>(0, n),
                          [&](const tbb::blocked_range<size_t> &range) {
                            uint64_t s = 0;
                            for (size_t i = range.begin(); i < range.end(); i++)
                              s += static_cast<uint64_t>(i) * 2654435761u;
                            total.fetch_add(s, std::memory_order_relaxed);
                          });
      });
    }
    *ns = bench_now_ns() - start;
    *sum = total.load();
    return 0;
  } catch (...) {
    return -ENOMEM;
  }
}
