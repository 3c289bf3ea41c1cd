/* sections.c - runs the measurements (a) to (d) over every contender.
 *
 * Invariants: a contender's pool is opened before and closed after the
 * samples that use it, never inside one; column 0 of every table is
 * blockwatch (ratios are taken against it); a contender that lacks an
 * operation gets -ENOTSUP in its cells, one that fails gets the error, and
 * the section goes on with the others.
 */
#include "sections.h"

#include "bench.h"
#include "remote.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

typedef enum op { OP_TINY, OP_DELAYS, OP_SLEEPERS, OP_CHAIN } op;

typedef struct contender {
  bench_peer ops;
  void *pool;
} contender;

static int has_op(const bench_peer *peer, op which) {
  switch (which) {
  case OP_TINY:
    return peer->tiny != NULL;
  case OP_DELAYS:
    return peer->delays != NULL;
  case OP_SLEEPERS:
    return peer->sleepers != NULL;
  case OP_CHAIN:
    return peer->chain != NULL;
  }
  return 0;
}

/* Whether --peers selected this peer (blockwatch, entry 0, always is). */
static int selected(const bench_options *o, size_t index) {
  if (o->peers == NULL || index == 0)
    return 1;
  size_t len = strlen(bench_peers[index]->name);
  for (const char *at = o->peers; *at; at += strcspn(at, ",")) {
    at += *at == ',';
    if (strncmp(at, bench_peers[index]->name, len) == 0 &&
        (at[len] == ',' || at[len] == '\0'))
      return 1;
  }
  return 0;
}

/* The columns of a section: every general pool (one with tiny items; the
 * n/a cells say what it lacks) and any other peer that has the operation
 * (blockwatch's own chain variants). */
static size_t section_columns(const bench_options *o, table *t,
                              const bench_peer **peers, op which) {
  size_t n = 0;
  for (size_t i = 0; bench_peers[i] && n < TABLE_MAX_COLS; i++) {
    if (bench_peers[i]->tiny == NULL && !has_op(bench_peers[i], which))
      continue;
    if (!selected(o, i))
      continue;
    peers[n] = bench_peers[i];
    t->col_names[n] = bench_peers[i]->name;
    n++;
  }
  t->cols = n;
  return n;
}

/* Opens a pool; a remote peer gets its child process. Returns 0 or -errno
 * and says what failed on stderr. */
static int contender_open(contender *c, const bench_peer *peer,
                          unsigned workers, unsigned flags) {
  errno = 0;
  if (peer->remote) {
    c->ops = bench_remote_wrap(peer);
    c->pool = bench_remote_open(peer, workers, flags);
  } else {
    c->ops = *peer;
    c->pool = peer->open(workers, flags);
  }
  if (c->pool != NULL)
    return 0;
  int rc = errno ? -errno : -EIO;
  if (rc != -ENOTSUP)
    fprintf(stderr, "bench: %s: opening a %u-worker pool failed: %s\n",
            peer->name, workers, strerror(-rc));
  return rc;
}

static void contender_close(contender *c) {
  if (c->pool != NULL)
    c->ops.close(c->pool);
  c->pool = NULL;
}

static void report_failure(const char *peer, const char *what, int rc) {
  fprintf(stderr, "bench: %s: %s failed: %s\n", peer, what, strerror(-rc));
}

/* The pause before a sample: the settle time, plus the cooldown of the
 * contender sampled just before (its spinning threads must not tax this
 * one). *prev is updated to `next`. */
static void settle(const bench_options *o, const bench_peer **prev,
                   const bench_peer *next) {
  unsigned ms = o->settle_ms;
  if (*prev != NULL && *prev != next)
    ms += (*prev)->cooldown_ms;
  bench_sleep_ms(ms);
  *prev = next;
}

/* Column visited at position j of repetition rep: a rotation. */
static size_t rotated(unsigned rep, size_t j, size_t n) {
  return (rep + j) % n;
}

void bench_section_tiny(const bench_options *o, table *t) {
  const bench_peer *prev = NULL; /* sampled last, for settle() */
  const bench_peer *peers[TABLE_MAX_COLS];
  size_t n = section_columns(o, t, peers, OP_TINY);
  t->corner = "ns per item";
  t->rows = 4;
  for (size_t w = 0; w < 2; w++)
    for (size_t s = 0; s < 2; s++)
      snprintf(t->row_names[w * 2 + s], sizeof t->row_names[0],
               "%zu items, %u workers", o->sizes[s], o->workers[w]);
  for (size_t w = 0; w < 2; w++) {
    fprintf(stderr, "bench: (a) tiny items on %u workers\n", o->workers[w]);
    contender cs[TABLE_MAX_COLS] = {0};
    int open_rc[TABLE_MAX_COLS];
    for (size_t k = 0; k < n; k++)
      open_rc[k] = contender_open(&cs[k], peers[k], o->workers[w], 0);
    /* rep 0 is a warm-up whose samples are dropped */
    for (unsigned rep = 0; rep <= o->reps; rep++) {
      for (size_t s = 0; s < 2; s++) {
        size_t items = o->sizes[s];
        size_t rounds = o->items_per_run / items ? o->items_per_run / items : 1;
        for (size_t j = 0; j < n; j++) {
          size_t k = rotated(rep, j, n);
          size_t row = w * 2 + s;
          if (open_rc[k] != 0) {
            table_add(t, row, k, open_rc[k], 0);
            continue;
          }
          uint64_t ns = 0;
          settle(o, &prev, peers[k]);
          int rc = cs[k].ops.tiny(cs[k].pool, items, rounds, &ns);
          if (rc != 0)
            report_failure(peers[k]->name, "tiny items", rc);
          if (rep > 0 || rc != 0)
            table_add(t, row, k, rc, (double)ns / (double)(items * rounds));
        }
      }
    }
    for (size_t k = 0; k < n; k++)
      contender_close(&cs[k]);
  }
}

void bench_section_delays(const bench_options *o, table *t) {
  const bench_peer *prev = NULL; /* sampled last, for settle() */
  const bench_peer *peers[TABLE_MAX_COLS];
  size_t n = section_columns(o, t, peers, OP_DELAYS);
  t->corner = "makespan ms";
  t->rows = 2;
  for (size_t r = 0; r < 2; r++)
    snprintf(t->row_names[r], sizeof t->row_names[0], "%zu x %u ms delay",
             o->delay_counts[r], o->delay_ms);
  fprintf(stderr, "bench: (b) delays, %u runs per count and contender\n",
          o->delay_reps);
  contender cs[TABLE_MAX_COLS] = {0};
  int open_rc[TABLE_MAX_COLS];
  for (size_t k = 0; k < n; k++)
    open_rc[k] = peers[k]->delays
                     ? contender_open(&cs[k], peers[k], o->sleep_workers, 0)
                     : -ENOTSUP;
  for (unsigned rep = 0; rep < o->delay_reps; rep++) {
    for (size_t r = 0; r < 2; r++) {
      for (size_t j = 0; j < n; j++) {
        size_t k = rotated(rep, j, n);
        if (open_rc[k] != 0) {
          table_add(t, r, k, open_rc[k], 0);
          continue;
        }
        uint64_t ns = 0;
        settle(o, &prev, peers[k]);
        int rc =
            cs[k].ops.delays(cs[k].pool, o->delay_counts[r], o->delay_ms, &ns);
        if (rc != 0)
          report_failure(peers[k]->name, "delays", rc);
        table_add(t, r, k, rc, (double)ns / 1e6);
      }
    }
  }
  for (size_t k = 0; k < n; k++)
    contender_close(&cs[k]);
}

/* One row of (c): a peer and the flags its pool is opened with. */
typedef struct sleeper_row {
  const bench_peer *peer;
  unsigned flags;
} sleeper_row;

void bench_section_sleepers(const bench_options *o, table *t) {
  const bench_peer *prev = NULL; /* sampled last, for settle() */
  sleeper_row rows[TABLE_MAX_ROWS];
  size_t n = 0;
  for (size_t i = 0; bench_peers[i] && n + 2 < TABLE_MAX_ROWS; i++) {
    const bench_peer *peer = bench_peers[i];
    if (peer->tiny == NULL || !selected(o, i))
      continue;
    if (i == 0) {
      /* blockwatch: with compensation; with only starvation injection (a
       * worker every starvation period, like .NET's gate); and fixed. */
      rows[n++] = (sleeper_row){peer, BENCH_COMPENSATE | BENCH_ELASTIC};
      snprintf(t->row_names[n - 1], sizeof t->row_names[0], "%s +compensation",
               peer->name);
      rows[n++] = (sleeper_row){peer, BENCH_ELASTIC};
      snprintf(t->row_names[n - 1], sizeof t->row_names[0], "%s +injection",
               peer->name);
    }
    rows[n++] = (sleeper_row){peer, 0};
    snprintf(t->row_names[n - 1], sizeof t->row_names[0], "%s%s", peer->name,
             i == 0 ? " (fixed size)" : "");
  }
  t->rows = n;
  t->cols = 2;
  t->corner = "2-worker pool";
  t->col_names[0] = "makespan ms";
  t->col_names[1] = "probe wait ms";
  unsigned reps = o->comp_reps > o->ref_reps ? o->comp_reps : o->ref_reps;
  fprintf(stderr,
          "bench: (c) %zu x sleep(%u ms): %u runs with compensation, %u "
          "without (each about %.1f s)\n",
          o->sleepers, o->sleep_ms, o->comp_reps, o->ref_reps,
          (double)o->sleepers * o->sleep_ms / o->sleep_workers / 1000.0);
  for (unsigned rep = 0; rep < reps; rep++) {
    for (size_t j = 0; j < n; j++) {
      size_t r = rotated(rep, j, n);
      const sleeper_row *row = &rows[r];
      unsigned wanted =
          (row->flags & BENCH_COMPENSATE) ? o->comp_reps : o->ref_reps;
      if (rep >= wanted)
        continue;
      if (row->peer->sleepers == NULL) {
        table_add(t, r, 0, -ENOTSUP, 0);
        table_add(t, r, 1, -ENOTSUP, 0);
        continue;
      }
      /* A fresh pool per run: compensation's spare threads from the last
       * run must not make the next one look cheaper. */
      contender c = {0};
      int rc = contender_open(&c, row->peer, o->sleep_workers, row->flags);
      bench_sleep_result res = {0};
      if (rc == 0) {
        bench_sleep_ms(20); /* the new pool's threads start and park */
        settle(o, &prev, row->peer);
        rc = c.ops.sleepers(c.pool, o->sleepers, o->sleep_ms, &res);
        if (rc != 0)
          report_failure(t->row_names[r], "sleepers", rc);
        contender_close(&c);
      }
      table_add(t, r, 0, rc, (double)res.makespan_ns / 1e6);
      table_add(t, r, 1, rc, (double)res.probe_wait_ns / 1e6);
    }
  }
}

void bench_section_chain(const bench_options *o, table *t) {
  const bench_peer *prev = NULL; /* sampled last, for settle() */
  const bench_peer *peers[TABLE_MAX_COLS];
  size_t n = section_columns(o, t, peers, OP_CHAIN);
  t->corner = "ns per link";
  t->rows = 2;
  for (size_t w = 0; w < 2; w++)
    snprintf(t->row_names[w], sizeof t->row_names[0], "%zu links, %u workers",
             o->chain_links, o->workers[w]);
  for (size_t w = 0; w < 2; w++) {
    fprintf(stderr, "bench: (d) chains on %u workers\n", o->workers[w]);
    contender cs[TABLE_MAX_COLS] = {0};
    int open_rc[TABLE_MAX_COLS];
    for (size_t k = 0; k < n; k++)
      open_rc[k] = peers[k]->chain
                       ? contender_open(&cs[k], peers[k], o->workers[w], 0)
                       : -ENOTSUP;
    for (unsigned rep = 0; rep <= o->reps; rep++) { /* rep 0: warm-up */
      for (size_t j = 0; j < n; j++) {
        size_t k = rotated(rep, j, n);
        if (open_rc[k] != 0) {
          table_add(t, w, k, open_rc[k], 0);
          continue;
        }
        uint64_t ns = 0;
        settle(o, &prev, peers[k]);
        int rc = cs[k].ops.chain(cs[k].pool, o->chain_links, &ns);
        if (rc != 0)
          report_failure(peers[k]->name, "chain", rc);
        if (rep > 0 || rc != 0)
          table_add(t, w, k, rc, (double)ns / (double)o->chain_links);
      }
    }
    for (size_t k = 0; k < n; k++)
      contender_close(&cs[k]);
  }
}
