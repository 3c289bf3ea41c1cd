/* sync_over_async - a request handler that blocks on an async operation (the
 * .Result pattern) vs the same handler written with a continuation.
 *
 * What it shows (seed: "Blocking Threads vs Awaiting"): fetch_async() starts
 * an asynchronous lookup that holds no thread (a bw_delay standing in for
 * I/O). The blocking handler calls bw_wait on it from inside a work item, so
 * the worker sits idle for the whole lookup and requests queue behind it:
 * about requests / workers x latency. The continuation handler hands the rest
 * of its work to bw_then and returns, so every lookup overlaps and the batch
 * takes about one latency.
 *
 * What to expect (default: 16 requests, 100 ms lookups, 2 workers): the
 * blocking version takes roughly 800 ms, the bw_then version roughly 100 ms.
 * One blocking call: bw_wait in handle_request_blocking (rule
 * sync-over-async); nothing in the bw_then version.
 *
 * Usage: sync_over_async [--full]   (--full: 100 requests, 1 s lookups)
 */
#include <blockwatch/runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/sample_util.h"

typedef struct request {
  bw_pool *pool;
  unsigned latency_ms;
  uintptr_t key;
  bw_task *done; /* completion source: completed with the response */
} request;

/* The value a lookup yields; computing it does not block. */
static uintptr_t value_of(uintptr_t key) {
  return key * 2 + 1;
}

/* Starts the lookup of `key`: a task that completes when the "I/O" is done,
 * driven by the pool's timer, holding no worker meanwhile. */
static bw_task *fetch_async(bw_pool *pool, unsigned ms) {
  return bw_delay(pool, ms);
}

/* Sync over async: blocks this worker until the lookup is done. */
static void handle_request_blocking(void *arg) {
  request *req = arg;
  bw_task *lookup = fetch_async(req->pool, req->latency_ms);
  void *response = NULL;
  if (lookup != NULL && bw_wait(lookup, -1) == 0)
    response = (void *)value_of(req->key);
  if (lookup != NULL)
    bw_task_release(lookup);
  bw_task_complete(req->done, response);
}

/* The rest of the handler, run by the pool once the lookup completed. */
static void *finish_request(bw_task *lookup, void *arg) {
  (void)lookup;
  request *req = arg;
  bw_task_complete(req->done, (void *)value_of(req->key));
  return NULL;
}

/* The same handler with a continuation: returns at once. */
static void handle_request_async(void *arg) {
  request *req = arg;
  bw_task *lookup = fetch_async(req->pool, req->latency_ms);
  bw_task *rest = lookup ? bw_then(lookup, finish_request, req) : NULL;
  if (rest == NULL) {
    bw_task_complete(req->done, NULL);
  } else {
    bw_task_release(rest);
  }
  if (lookup != NULL)
    bw_task_release(lookup);
}

static int run(const char *label, const char *pool_name,
               void (*handler)(void *), unsigned n, unsigned latency_ms) {
  bw_pool_config cfg = {.name = pool_name, .min_workers = 2};
  bw_pool *pool = bw_pool_create(&cfg);
  request *reqs = calloc(n, sizeof *reqs);
  bw_task **dones = calloc(n, sizeof *dones);
  if (pool == NULL || reqs == NULL || dones == NULL) {
    perror("sync_over_async");
    return 1;
  }
  double t0 = sample_now_ms();
  for (unsigned i = 0; i < n; i++) {
    reqs[i] = (request){.pool = pool, .latency_ms = latency_ms, .key = i};
    reqs[i].done = dones[i] = bw_completion_create(pool);
    if (bw_submit(pool, handler, &reqs[i]) != 0)
      bw_task_complete(dones[i], NULL); /* counted as a wrong result */
  }
  /* The main thread is no worker: waiting here starves nobody. */
  bw_task *all = bw_when_all(dones, n);
  int rc = all ? bw_wait(all, -1) : -1;
  double elapsed = sample_now_ms() - t0;

  int wrong = 0;
  for (unsigned i = 0; i < n; i++) {
    if ((uintptr_t)bw_task_result(dones[i]) != value_of(i))
      wrong++;
    bw_task_release(dones[i]);
  }
  bw_pool_stats st;
  bw_pool_stats_get(pool, &st);
  printf("%-22s %u requests x %u ms lookup: %8.1f ms, pool threads %u "
         "(%llu injected)%s\n",
         label, n, latency_ms, elapsed, st.workers,
         (unsigned long long)st.threads_injected,
         wrong ? ", WRONG RESULTS" : "");
  if (all != NULL)
    bw_task_release(all);
  bw_pool_destroy(pool);
  free(reqs);
  free(dones);
  return rc == 0 && wrong == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  static const char *const known[] = {"--full", NULL};
  const char *bad = sample_unknown_flag(argc, argv, known);
  if (bad != NULL) {
    fprintf(stderr, "sync_over_async: unknown argument '%s'\n", bad);
    fprintf(stderr, "usage: sync_over_async [--full]\n");
    return 2;
  }
  int full = sample_has_flag(argc, argv, "--full");
  unsigned n = full ? 100 : 16;
  unsigned latency_ms = full ? 1000 : 100;
  if (run("bw_wait (.Result):", "sync-wait", handle_request_blocking, n,
          latency_ms) != 0)
    return 1;
  if (run("bw_then:", "sync-then", handle_request_async, n, latency_ms) != 0)
    return 1;
  printf("arithmetic: blocking ~ %u requests / 2 workers x %u ms = %u ms; "
         "bw_then ~ %u ms\n",
         n, latency_ms, (n + 1) / 2 * latency_ms, latency_ms);
  return 0;
}
