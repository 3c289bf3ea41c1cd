// peer_tbb.cpp - oneTBB's task_group as a bench contender (the one C++
// translation unit of the benchmark; everything else is C11).
//
// A pool is a task_arena of `workers` slots, one of them for the thread that
// enters it, and a global_control that lets TBB start that many threads on
// a machine with fewer CPUs (by default TBB caps its workers at CPUs - 1).
// Each measured round enters the arena from outside, runs the items in a
// task_group and waits for it; the entering thread helps while it waits,
// which is TBB's model. No timers (n/a).
#include "bench.h"

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <atomic>
#include <cerrno>
#include <new>

namespace {

struct tbb_peer {
  explicit tbb_peer(unsigned workers)
      : limit(tbb::global_control::max_allowed_parallelism, workers),
        arena(static_cast<int>(workers), 1) {
    arena.initialize();
  }
  tbb::global_control limit;
  tbb::task_arena arena;
};

void *tbb_open(unsigned workers, unsigned flags) {
  if (flags & BENCH_COMPENSATE) {
    errno = ENOTSUP;
    return nullptr;
  }
  try {
    return new tbb_peer(workers);
  } catch (...) {
    errno = ENOMEM;
    return nullptr;
  }
}

void tbb_close(void *pool) {
  delete static_cast<tbb_peer *>(pool);
}

int tbb_tiny(void *pool, size_t items, size_t rounds, uint64_t *ns) {
  tbb_peer *peer = static_cast<tbb_peer *>(pool);
  std::atomic<size_t> count{0};
  uint64_t start = bench_now_ns();
  for (size_t r = 0; r < rounds; r++) {
    peer->arena.execute([&] {
      tbb::task_group group;
      for (size_t i = 0; i < items; i++)
        group.run([&] { count.fetch_add(1, std::memory_order_relaxed); });
      group.wait();
    });
  }
  *ns = bench_now_ns() - start;
  return count.load() == items * rounds ? 0 : -EPROTO;
}

int tbb_sleepers(void *pool, size_t n, unsigned ms, bench_sleep_result *out) {
  tbb_peer *peer = static_cast<tbb_peer *>(pool);
  uint64_t probe_submit = 0;
  std::atomic<uint64_t> probe_start{0};
  uint64_t start = bench_now_ns();
  peer->arena.execute([&] {
    tbb::task_group group;
    for (size_t i = 0; i < n; i++)
      group.run([ms] { bench_sleep_ms(ms); });
    probe_submit = bench_now_ns();
    group.run([&] { probe_start.store(bench_now_ns()); });
    group.wait();
  });
  out->makespan_ns = bench_now_ns() - start;
  out->probe_wait_ns = probe_start.load() - probe_submit;
  return 0;
}

// One link: count, then run the next link in the same group.
struct chain_link {
  tbb::task_group *group;
  std::atomic<size_t> *count;
  size_t left;
  void operator()() const {
    count->fetch_add(1, std::memory_order_relaxed);
    if (left > 1)
      group->run(chain_link{group, count, left - 1});
  }
};

int tbb_chain(void *pool, size_t links, uint64_t *ns) {
  tbb_peer *peer = static_cast<tbb_peer *>(pool);
  std::atomic<size_t> count{0};
  uint64_t start = bench_now_ns();
  peer->arena.execute([&] {
    tbb::task_group group;
    group.run(chain_link{&group, &count, links});
    group.wait();
  });
  *ns = bench_now_ns() - start;
  return count.load() == links ? 0 : -EPROTO;
}

} // namespace

extern "C" const bench_peer bench_peer_tbb = {
    "oneTBB", 0,       tbb_open,     tbb_close,
    tbb_tiny, nullptr, tbb_sleepers, tbb_chain,
};
