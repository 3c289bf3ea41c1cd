// peer_tbb.cpp - oneTBB's task_group as a bench contender (the one C++
// translation unit of the benchmark; everything else is C11).
//
// A pool is a task_arena of `workers` slots, one of them for the thread that
// enters it, and a global_control that lets TBB start enough threads on a
// machine with fewer CPUs (by default TBB caps its workers at CPUs - 1).
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
      : limit(tbb::global_control::max_allowed_parallelism, workers + 1),
        arena(static_cast<int>(workers), 1) {
    arena.initialize();
  }
  // The smallest live global_control wins and the oneTBB-enq pool (open at
  // the same time) needs `workers` threads besides ours: allow workers + 1
  // here too; the arena's own size keeps this one at `workers`.
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

// ---- oneTBB-enq: fire-and-forget task_arena::enqueue -----------------
// The same items handed to TBB's workers with task_arena::enqueue (TBB's
// QueueUserWorkItem): the submitting thread never runs an item, as with
// blockwatch, libuv, GLib and C-Thread-Pool, and waits on a latch. Set
// beside the task_group figures it shows how much of TBB's lead comes from
// the waiting thread running the items itself.

struct enq_peer {
  explicit enq_peer(unsigned workers)
      : limit(tbb::global_control::max_allowed_parallelism, workers + 1),
        arena(static_cast<int>(workers), 0) {
    arena.initialize();
  }
  tbb::global_control limit; // workers + the outside thread
  tbb::task_arena arena;     // every slot for a worker, none for us
};

struct enq_round {
  std::atomic<size_t> count{0};
  size_t target = 0;
  size_t links_left = 0;
  bench_latch *latch = nullptr;
  tbb::task_arena *arena = nullptr;
  uint64_t probe_submit = 0;
  std::atomic<uint64_t> probe_start{0};
  // `target` is read before the increment: after the last item counted,
  // the submitter may return and the round (on its stack) be gone.
  void count_one() {
    size_t goal = target;
    if (count.fetch_add(1, std::memory_order_acq_rel) + 1 == goal)
      bench_latch_open(latch);
  }
};

void *enq_open(unsigned workers, unsigned flags) {
  if (flags & BENCH_COMPENSATE) {
    errno = ENOTSUP;
    return nullptr;
  }
  try {
    return new enq_peer(workers);
  } catch (...) {
    errno = ENOMEM;
    return nullptr;
  }
}

void enq_close(void *pool) {
  delete static_cast<enq_peer *>(pool);
}

int enq_tiny(void *pool, size_t items, size_t rounds, uint64_t *ns) {
  enq_peer *peer = static_cast<enq_peer *>(pool);
  enq_round round;
  round.latch = bench_latch_create();
  if (round.latch == nullptr)
    return -ENOMEM;
  round.target = items;
  uint64_t start = bench_now_ns();
  for (size_t r = 0; r < rounds; r++) {
    round.count.store(0, std::memory_order_relaxed);
    bench_latch_reset(round.latch);
    for (size_t i = 0; i < items; i++)
      peer->arena.enqueue([&round] { round.count_one(); });
    bench_latch_wait(round.latch);
  }
  *ns = bench_now_ns() - start;
  bench_latch_destroy(round.latch);
  return 0;
}

int enq_sleepers(void *pool, size_t n, unsigned ms, bench_sleep_result *out) {
  enq_peer *peer = static_cast<enq_peer *>(pool);
  enq_round round;
  round.latch = bench_latch_create();
  if (round.latch == nullptr)
    return -ENOMEM;
  round.target = n + 1;
  uint64_t start = bench_now_ns();
  for (size_t i = 0; i < n; i++)
    peer->arena.enqueue([&round, ms] {
      bench_sleep_ms(ms);
      round.count_one();
    });
  round.probe_submit = bench_now_ns();
  peer->arena.enqueue([&round] {
    round.probe_start.store(bench_now_ns());
    round.count_one();
  });
  bench_latch_wait(round.latch);
  out->makespan_ns = bench_now_ns() - start;
  out->probe_wait_ns = round.probe_start.load() - round.probe_submit;
  bench_latch_destroy(round.latch);
  return 0;
}

// One link: enqueue the next link, or open the latch after the last.
void enq_link(enq_round *round) {
  if (--round->links_left == 0) {
    bench_latch_open(round->latch);
    return;
  }
  round->arena->enqueue([round] { enq_link(round); });
}

int enq_chain(void *pool, size_t links, uint64_t *ns) {
  enq_peer *peer = static_cast<enq_peer *>(pool);
  enq_round round;
  round.latch = bench_latch_create();
  if (round.latch == nullptr)
    return -ENOMEM;
  round.links_left = links;
  round.arena = &peer->arena;
  uint64_t start = bench_now_ns();
  peer->arena.enqueue([&round] { enq_link(&round); });
  bench_latch_wait(round.latch);
  *ns = bench_now_ns() - start;
  bench_latch_destroy(round.latch);
  return 0;
}

} // namespace

extern "C" const bench_peer bench_peer_tbb_enqueue = {
    "oneTBB-enq", 0,         enq_open, enq_close, enq_tiny, nullptr,
    enq_sleepers, enq_chain, 0,
};

extern "C" const bench_peer bench_peer_tbb = {
    "oneTBB",     0,         tbb_open, tbb_close, tbb_tiny, nullptr,
    tbb_sleepers, tbb_chain, 0,
};
