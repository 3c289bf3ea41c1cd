/* sites.c - call sites: the caller chain of each counted blocking call,
 * kept in a fixed-size lock-free hash table.
 *
 * Invariants:
 *  - A site is keyed by a 64-bit hash of (function, first frame in the
 *    program's own code, what tells two users of that frame apart). The
 *    first frame is the return address into the caller when that lies
 *    outside the system libraries (modules.c), which costs a range check;
 *    else (libuv's uv_sleep calling nanosleep) the chain is unwound to the
 *    first frame below them, and the last library frame is kept as `via`.
 *    What tells users apart: the item function a foreign pool's trampoline
 *    runs (bwsh__self.item_fn), else on a worker named by options (a
 *    hand-written pool, whose items the shim cannot see) the next frame of
 *    the chain; the bundled runtime's workers keep the cheap key (the
 *    benchmark's +100 ns budget).
 *  - That next frame is unwound once per (function, caller, stack depth)
 *    of a thread, and then read back from the stack slot it lay in while
 *    that slot still holds it (chain_memo below; x86-64 only, elsewhere
 *    every such call unwinds). A memo never changes which key a call gets,
 *    only whether finding it took an unwind.
 *  - With item_fn, the call's verdict (items.c) and its key come from one
 *    unwind (bwsh__item_call), and a repeat from the same chain, checked
 *    frame by frame up to the frame the verdict rests on, takes both from
 *    a per-thread memo (item_memo below; x86-64 only, elsewhere one
 *    backtrace per call serves both).
 *  - A slot is claimed once with a compare-and-swap of its key and then
 *    only counted with relaxed atomic adds. The claimer captures the
 *    caller chain (backtrace, ~1 us) once, before it publishes `ready`;
 *    the reporter reads only ready slots. So a counted call costs two
 *    atomic adds, and a site's chain is the first one seen at that key.
 *  - Full table: the call is still counted in the totals, and in `dropped`.
 *  - Frames that lie inside libblockwatch.so itself are skipped, so frame 0
 *    is the caller of the blocking function, or of the library function
 *    that made it.
 *  - backtrace() allocates on its first call (it loads libgcc_s): the
 *    constructor primes it (bwsh__sites_init) before any wrapper counts.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shim.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <signal.h>
#include <string.h>

/* The memo of chains reads return addresses off the stack where the
 * x86-64 ABI puts them (a frame's CFA - 8); other targets unwind. */
#ifndef BWSH__CHAIN_MEMO
#if defined(__x86_64__) && defined(__GNUC__)
#define BWSH__CHAIN_MEMO 1
#else
#define BWSH__CHAIN_MEMO 0
#endif
#endif
#if BWSH__CHAIN_MEMO
#include <unwind.h>
#endif

typedef struct site {
  atomic_uint_least64_t key; /* 0 = free */
  atomic_int ready;
  int fn;
  int nframes;
  void *frames[BW_SITE_FRAMES];
  void *via; /* the last system-library frame above frames[0], or NULL */
  atomic_uint_least64_t count;
  atomic_uint_least64_t blocked_ns;
} site;

static site sites[BW_MAX_SITES];
static atomic_uint_least64_t dropped;
static atomic_int claimed; /* sites claimed since start or the last fork */
static uintptr_t self_lo, self_hi;

static int find_self(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  if ((uintptr_t)info->dlpi_addr != (uintptr_t)data)
    return 0;
  uintptr_t lo, hi;
  bwsh__load_span(info, &lo, &hi);
  if (hi != 0) {
    self_lo = lo;
    self_hi = hi;
  }
  return 1;
}

void bwsh__sites_init(void) {
  Dl_info info;
  if (dladdr((void *)&bwsh__sites_init, &info) && info.dli_fbase)
    dl_iterate_phdr(find_self, info.dli_fbase);
  void *prime[2];
  backtrace(prime, 2);
  bwsh__modules_scan();
}

/* raw[0..got) without the shim's own frames: at most n into frames. */
static int drop_own_frames(void *const *raw, int got, void **frames, int n) {
  int k = 0;
  for (int i = 0; i < got && k < n; i++) {
    uintptr_t pc = (uintptr_t)raw[i];
    if (pc >= self_lo && pc < self_hi)
      continue;
    frames[k++] = raw[i];
  }
  return k;
}

int bwsh__capture_frames(void **frames, int n) {
  void *raw[BW_SITE_FRAMES + 16];
  int got = backtrace(raw, (int)(sizeof raw / sizeof raw[0]));
  return drop_own_frames(raw, got, frames, n);
}

/* The chain in raw[0..got) (the shim's own frames left out) from the
 * first frame outside the system libraries: at most n frames into frames, the
 * library frame nearest above the first one into *via (NULL: none; an
 * interposer's frame is never one). When every frame is a library's, the
 * chain is kept as it is. */
static int user_frames(void *const *raw, int got, void **frames, int n,
                       void **via) {
  int first = 0;
  *via = NULL;
  for (; first < got; first++) {
    int kind = bwsh__code_kind(raw[first]);
    if (kind == BW_CODE_PROGRAM)
      break;
    if (kind == BW_CODE_LIBRARY)
      *via = raw[first];
  }
  int k = 0;
  if (first == got) {
    first = 0;
    *via = NULL;
    /* No frame of the program's: its item function tail-called the
     * blocking one, or the unwinder lost it. A foreign pool's item
     * function stands first then (one past its entry, as the symbolizer
     * looks up the byte before a return address), so the site names it. */
    if (bwsh__self.item_fn && n > 0)
      frames[k++] = (char *)bwsh__self.item_fn + 1;
  }
  for (int i = first; i < got && k < n; i++)
    frames[k++] = raw[i];
  return k;
}

/* user_frames of this call's chain, unwound now. */
static int capture_user_frames(void **frames, int n, void **via) {
  void *raw[BW_SITE_FRAMES + 16];
  int got = bwsh__capture_frames(raw, (int)(sizeof raw / sizeof raw[0]));
  return user_frames(raw, got, frames, n, via);
}

static uint64_t hash_site(int fn, const void *frame, const void *user) {
  uint64_t h = (uint64_t)(uintptr_t)frame * 0x9e3779b97f4a7c15u;
  h ^= (uint64_t)(fn + 1) * 0xc2b2ae3d27d4eb4fu;
  h ^= (uint64_t)(uintptr_t)user * 0x165667b19e3779f9u;
  h ^= h >> 31;
  return h ? h : 1;
}

/* What a site is keyed by, and the chain when finding it took one. */
typedef struct site_key {
  uint64_t key;
  int nchain; /* -1: not unwound */
  void *chain[BW_SITE_FRAMES];
  void *via;
} site_key;

/* The memo of chains: on a worker named by options the key needs the
 * helper's caller (the frame above `caller`), which only an unwind finds
 * (~2 us, the whole stack). A thread mostly repeats a few calls from the
 * same place, so each thread keeps its last few answers, each with where
 * on the stack the unwind found them:
 *  - ret_slot: where the return address into the helper lies, the
 *    helper's stack pointer at its call minus 8. A call finds its own
 *    through the shim's frame pointers, reading only the shim's live
 *    frames: bwsh__call_begin reads it next above its own (the wrapper's,
 *    bwsh__call.caller_slot), else wrapper_ret_slot walks up to it; a
 *    memo serves only the same slot.
 *  - The helper's frame then sits where it did: at one return address a
 *    frame is either of fixed size (its CFA is its stack pointer plus a
 *    constant) or sized at run time (alloca, a VLA, realignment), and then
 *    it keeps a frame pointer in rbp, inside its own frame, that fixes its
 *    CFA. So when rbp lay inside the helper's frame at the unwind, the rbp
 *    the wrapper saved next to ret_slot must be the same too: that tells
 *    apart a helper that grew its alloca by exactly the depth its caller
 *    lost, over a stale copy of the old return address.
 *  - parent_slot: the helper's CFA - 8, then its live return address into
 *    its own caller; it must hold `parent`, the frame the key was made of.
 * So every read is of a live frame and a memo gives the key an unwind
 * would. A miss unwinds as before and takes a way, round robin. `busy`
 * keeps a signal handler's counted call out of a way that the interrupted
 * call is reading or writing (the handler's call unwinds instead). */
#if BWSH__CHAIN_MEMO
enum { MEMO_WAYS = 4, MEMO_SHIM_FRAMES = 8 };

typedef struct chain_memo {
  void *caller; /* NULL: a free way */
  void *parent;
  void *const *ret_slot;
  void *const *parent_slot;
  void *fp;     /* the helper's rbp at its call, when checked */
  int check_fp; /* 0: the helper's frame is of fixed size */
  int fn;
  uint64_t key;
} chain_memo;

static BWSH__TLS __thread struct {
  chain_memo way[MEMO_WAYS];
  unsigned next;
  volatile sig_atomic_t busy;
} memos;

/* The slot of the return address into `caller`, found up the shim's own
 * frame pointers (it is built with them): each step reads a frame whose
 * return address lies in the shim, so a live frame of ours. NULL when the
 * chain leaves the shim, or runs long, before it meets `caller`. The
 * reads are of return-address and saved-rbp slots, which no sanitizer
 * poisons; the attribute keeps ASan from checking frames it did not lay
 * out. */
__attribute__((no_sanitize_address)) static void *const *
wrapper_ret_slot(const void *caller) {
  void *const *fp = __builtin_frame_address(0);
  for (int i = 0; i < MEMO_SHIM_FRAMES; i++) {
    uintptr_t ret = (uintptr_t)fp[1];
    if (ret == (uintptr_t)caller)
      return &fp[1];
    void *const *up = fp[0];
    if (ret < self_lo || ret >= self_hi || up <= fp ||
        (uintptr_t)up - (uintptr_t)fp > 65536)
      return NULL;
    fp = up;
  }
  return NULL;
}

__attribute__((no_sanitize_address)) static int
memo_find(int fn, void *caller, void *const *ret_slot, uint64_t *key) {
  if (ret_slot == NULL || memos.busy)
    return 0;
  memos.busy = 1;
  atomic_signal_fence(memory_order_seq_cst);
  int hit = 0;
  for (int i = 0; i < MEMO_WAYS && !hit; i++) {
    const chain_memo *m = &memos.way[i];
    if (m->caller != caller || m->ret_slot != ret_slot || m->fn != fn)
      continue;
    if (m->check_fp && ret_slot[-1] != m->fp)
      continue;
    if (*m->parent_slot != m->parent)
      continue;
    *key = m->key;
    hit = 1;
  }
  atomic_signal_fence(memory_order_seq_cst);
  memos.busy = 0;
  return hit;
}

/* One walk up to the helper's caller: the shim's frames, then the frame
 * at `caller` (the helper), then the one at `parent`. In the walk's
 * callback a context's CFA is that of the frame below it (libgcc fills it
 * in while stepping from the callee): the helper's stack pointer at its
 * call, whose word below holds the return address into the helper; the
 * record checks that before it keeps anything. */
typedef struct memo_walk {
  void *caller, *parent;
  uintptr_t sp, fp, cfa; /* the helper's stack pointer, rbp and CFA */
  int depth, done;       /* done: 1 the walk matched, -1 it did not */
} memo_walk;

static _Unwind_Reason_Code memo_step(struct _Unwind_Context *ctx, void *arg) {
  memo_walk *w = arg;
  uintptr_t ip = _Unwind_GetIP(ctx);
  if (++w->depth > BW_SITE_FRAMES + 16)
    return _URC_END_OF_STACK;
  if (w->sp == 0) {
    if (ip >= self_lo && ip < self_hi)
      return _URC_NO_REASON;
    if ((void *)ip != w->caller) {
      w->done = -1;
      return _URC_END_OF_STACK;
    }
    w->sp = _Unwind_GetCFA(ctx);
    w->fp = _Unwind_GetGR(ctx, 6); /* DWARF register 6: rbp */
    return _URC_NO_REASON;
  }
  w->cfa = _Unwind_GetCFA(ctx);
  w->done = (void *)ip == w->parent ? 1 : -1;
  return _URC_END_OF_STACK;
}

__attribute__((no_sanitize_address)) static void
memo_record(int fn, void *caller, const void *parent, void *const *ret_slot,
            uint64_t key) {
  if (ret_slot == NULL || memos.busy)
    return;
  memos.busy = 1;
  atomic_signal_fence(memory_order_seq_cst);
  memo_walk w = {.caller = caller, .parent = (void *)parent};
  _Unwind_Backtrace(memo_step, &w);
  void *const *parent_slot = (void *const *)(w.cfa - sizeof(void *));
  int ok = w.done == 1 && w.sp - sizeof(void *) == (uintptr_t)ret_slot &&
           ret_slot < parent_slot && *parent_slot == parent;
  int check_fp = ok && w.fp >= w.sp && w.fp < w.cfa;
  if (check_fp)
    ok = (uintptr_t)ret_slot[-1] == w.fp; /* the rbp the wrapper pushed */
  if (ok) {
    chain_memo *m = &memos.way[memos.next++ % MEMO_WAYS];
    *m = (chain_memo){.caller = caller,
                      .parent = (void *)parent,
                      .ret_slot = ret_slot,
                      .parent_slot = parent_slot,
                      .fp = (void *)w.fp,
                      .check_fp = check_fp,
                      .fn = fn,
                      .key = key};
  }
  atomic_signal_fence(memory_order_seq_cst);
  memos.busy = 0;
}
#else
static void *const *wrapper_ret_slot(const void *caller) {
  (void)caller;
  return NULL;
}

static int memo_find(int fn, void *caller, void *const *ret_slot,
                     uint64_t *key) {
  (void)fn, (void)caller, (void)ret_slot, (void)key;
  return 0;
}

static void memo_record(int fn, void *caller, const void *parent,
                        void *const *ret_slot, uint64_t key) {
  (void)fn, (void)caller, (void)parent, (void)ret_slot, (void)key;
}
#endif

#if BWSH__CHAIN_MEMO
/* The memo of item verdicts (item_fn): a call's verdict is a function of
 * its frames up to the last one bwsh__item_chain looked at, and its site
 * key of its first two, so a way keeps, for each of those frames from the
 * helper's on, where its return address lay, that address and (when its
 * rbp lay inside its frame: one sized at run time may keep a frame pointer
 * there) the rbp its callee saved next to it. A repeat is served only
 * while every one of them still holds: by the argument of chain_memo,
 * frame by frame, each read is of a live frame and the chain is the one
 * the unwind saw, so an idle wait and an item's wait that share their
 * nearest frames still part where their chains part. A frame whose rbp
 * its callee did not save next to the return address (most code built
 * without frame pointers keeps none there) ends what can be checked: a
 * verdict that needs frames past it is not kept, and such a call unwinds
 * each time, once for the verdict and its key. */
enum { ITEM_WAYS = 4, ITEM_WALK = 48 };

typedef struct item_memo {
  void *caller; /* NULL: a free way */
  int fn, n, in_item;
  uint64_t key;
  void *const *slot[ITEM_WALK];
  void *pc[ITEM_WALK];
  void *fp[ITEM_WALK]; /* NULL: not checked */
} item_memo;

static BWSH__TLS __thread struct {
  item_memo way[ITEM_WAYS];
  unsigned next;
} item_memos;

/* One unwind: each frame's return address, stack pointer at its call and
 * rbp there, nearest the call first (the shim's own frames included). */
typedef struct item_walk {
  int got;
  void *ip[ITEM_WALK];
  uintptr_t sp[ITEM_WALK], fp[ITEM_WALK];
} item_walk;

static _Unwind_Reason_Code item_step(struct _Unwind_Context *ctx, void *arg) {
  item_walk *w = arg;
  uintptr_t ip = _Unwind_GetIP(ctx);
  if (ip == 0 || w->got == ITEM_WALK)
    return _URC_END_OF_STACK;
  w->ip[w->got] = (void *)ip;
  w->sp[w->got] = _Unwind_GetCFA(ctx);
  w->fp[w->got] = _Unwind_GetGR(ctx, 6); /* DWARF register 6: rbp */
  w->got++;
  return _URC_NO_REASON;
}

__attribute__((no_sanitize_address)) static int
item_memo_find(int fn, void *caller, void *const *ret_slot, uint64_t *key,
               int *in_item) {
  if (ret_slot == NULL || memos.busy)
    return 0;
  memos.busy = 1;
  atomic_signal_fence(memory_order_seq_cst);
  int hit = 0;
  for (int w = 0; w < ITEM_WAYS && !hit; w++) {
    const item_memo *m = &item_memos.way[w];
    if (m->caller != caller || m->slot[0] != ret_slot || m->fn != fn)
      continue;
    int i = 0;
    while (i < m->n && *m->slot[i] == m->pc[i] &&
           (m->fp[i] == NULL || m->slot[i][-1] == m->fp[i]))
      i++;
    if (i < m->n)
      continue;
    *key = m->key;
    *in_item = m->in_item;
    hit = 1;
  }
  atomic_signal_fence(memory_order_seq_cst);
  memos.busy = 0;
  return hit;
}

/* Keeps the verdict of walk w (in_item, decided at frame `last`) and its
 * key, when the frames it rests on can be checked (see above). */
__attribute__((no_sanitize_address)) static void
item_memo_record(int fn, void *caller, void *const *ret_slot,
                 const item_walk *w, int last, uint64_t key, int in_item) {
  if (ret_slot == NULL || memos.busy)
    return;
  int s0 = 0;
  while (s0 < w->got && (uintptr_t)w->ip[s0] >= self_lo &&
         (uintptr_t)w->ip[s0] < self_hi)
    s0++;
  if (s0 == w->got || w->ip[s0] != caller ||
      w->sp[s0] - sizeof(void *) != (uintptr_t)ret_slot)
    return;
  int need = last > s0 + 1 ? last : s0 + 1; /* the key's two frames */
  if (need >= w->got)
    need = w->got - 1;
  memos.busy = 1;
  atomic_signal_fence(memory_order_seq_cst);
  item_memo m = {.caller = caller, .fn = fn, .in_item = in_item, .key = key};
  int ok = 1;
  for (int i = s0; i <= need && ok; i++) {
    void *const *slot = (void *const *)(w->sp[i] - sizeof(void *));
    ok = *slot == w->ip[i];
    if (ok && i < need) { /* the next frame's slot rests on this one's CFA */
      uintptr_t cfa = w->sp[i + 1];
      ok = cfa > w->sp[i] && cfa - w->sp[i] <= 65536;
      if (ok && w->fp[i] >= w->sp[i] && w->fp[i] < cfa) {
        ok = (uintptr_t)slot[-1] == w->fp[i];
        m.fp[m.n] = (void *)w->fp[i];
      }
    }
    m.slot[m.n] = slot;
    m.pc[m.n++] = w->ip[i];
  }
  if (ok)
    item_memos.way[item_memos.next++ % ITEM_WAYS] = m;
  atomic_signal_fence(memory_order_seq_cst);
  memos.busy = 0;
}
#endif

static inline __attribute__((always_inline)) void
key_of(int fn, void *caller, void *const *slot, int unwind, site_key *k) {
  const void *user = bwsh__self.item_fn;
  int by_chain = user == NULL && bwsh__self.classified_by_option;
  k->nchain = -1;
  k->via = NULL;
  /* The memo serves only a caller in the program's code: then the unwind
   * below would key by that very caller and the frame above it. */
  int program = bwsh__code_kind(caller) == BW_CODE_PROGRAM;
  int memo = by_chain && !unwind && program;
  void *const *ret_slot = NULL;
  if (memo)
    ret_slot = slot && *slot == caller ? slot : wrapper_ret_slot(caller);
  if (memo && memo_find(fn, caller, ret_slot, &k->key))
    return;
  void *passed = caller;
  if (unwind || by_chain || !program) {
    k->nchain = capture_user_frames(k->chain, BW_SITE_FRAMES, &k->via);
    if (k->nchain > 0)
      caller = k->chain[0];
    if (by_chain && k->nchain > 1)
      user = k->chain[1];
  }
  k->key = hash_site(fn, caller, user);
  if (memo && k->nchain > 1 && caller == passed)
    memo_record(fn, caller, user, ret_slot, k->key);
}

/* The verdict on the chain raw[0..got) (the shim's frames included) and,
 * on a worker named by options with no foreign item function, the key
 * key_of would give it (0 else: bwsh__site_add makes one). */
static int item_of_chain(int fn, void *caller, void *const *raw, int got,
                         uint64_t *key, int *last) {
  int in_item = bwsh__item_chain(raw, got, last);
  *key = 0;
  if (bwsh__self.item_fn == NULL) {
    enum { RAW = BW_SITE_FRAMES + 16 }; /* what backtrace gives key_of */
    void *own[RAW], *chain[2], *via;
    int k = drop_own_frames(raw, got < RAW ? got : RAW, own, RAW);
    int n = user_frames(own, k, chain, 2, &via);
    *key = hash_site(fn, n > 0 ? chain[0] : caller, n > 1 ? chain[1] : NULL);
  }
  return in_item;
}

int bwsh__item_call(int fn, void *caller, void *const *caller_slot,
                    uint64_t *key) {
  int last;
#if BWSH__CHAIN_MEMO
  /* As key_of: the memo serves a caller in the program's code only. */
  void *const *ret_slot = NULL;
  if (bwsh__code_kind(caller) == BW_CODE_PROGRAM)
    ret_slot = caller_slot && *caller_slot == caller ? caller_slot
                                                     : wrapper_ret_slot(caller);
  int in_item;
  if (item_memo_find(fn, caller, ret_slot, key, &in_item))
    return in_item;
  item_walk w = {.got = 0};
  _Unwind_Backtrace(item_step, &w);
  in_item = item_of_chain(fn, caller, w.ip, w.got, key, &last);
  item_memo_record(fn, caller, ret_slot, &w, last, *key, in_item);
  return in_item;
#else
  (void)caller_slot;
  void *raw[48];
  int got = backtrace(raw, (int)(sizeof raw / sizeof raw[0]));
  return item_of_chain(fn, caller, raw, got, key, &last);
#endif
}

static void fill_site(site *s, int fn, void *caller, const site_key *k) {
  s->fn = fn;
  int want = (int)bwsh__opt.frames;
  site_key own;
  if (k->nchain < 0) { /* a cheap key: the chain is taken now, once */
    own.nchain = capture_user_frames(own.chain, BW_SITE_FRAMES, &own.via);
    k = &own;
  }
  s->nframes = k->nchain < want ? k->nchain : want;
  memcpy(s->frames, k->chain, (size_t)s->nframes * sizeof(void *));
  s->via = k->via;
  if (s->nframes == 0 && caller) {
    s->frames[0] = caller; /* no unwinder: at least the caller */
    s->nframes = 1;
  }
}

/* The site this thread last counted at by a key of (fn, caller, item
 * function) alone: a repeat goes there with no hash and no probe, while
 * the slot still holds that key (a fork child clears the table) and the
 * caller is still the program's code. Never taken reentrantly: a counted
 * call raises bwsh__self.depth around its site_add, so a signal handler
 * that interrupts it is not counted. */
static BWSH__TLS __thread struct {
  void *caller;
  const void *user;
  int fn, site;
  uint64_t key;
} last_site = {.site = -1};

static inline void count_at(site *s, uint64_t count, uint64_t blocked_ns) {
  atomic_fetch_add_explicit(&s->count, count, memory_order_relaxed);
  if (blocked_ns) /* 0 from a call counted as it begins */
    atomic_fetch_add_explicit(&s->blocked_ns, blocked_ns, memory_order_relaxed);
}

/* bwsh__site_add past the last site: the key, the probe, a claim. */
static __attribute__((noinline)) int
site_add_keyed(int fn, void *caller, void *const *caller_slot, uint64_t key,
               uint64_t count, uint64_t blocked_ns, const void *user,
               int by_chain) {
  site_key k;
  if (key) { /* found with the item_fn verdict */
    k.key = key;
    k.nchain = -1;
    k.via = NULL;
  } else {
    key_of(fn, caller, caller_slot, 0, &k);
  }
  int rescanned = 0;
  for (unsigned probe = 0; probe < BW_MAX_SITES; probe++) {
    site *s = &sites[(k.key + probe) % BW_MAX_SITES];
    uint64_t cur = atomic_load_explicit(&s->key, memory_order_acquire);
    if (cur == 0 && !rescanned && k.nchain < 0) {
      /* A new site from a caller taken for the program's: a library
       * loaded since the last scan may hold it. */
      rescanned = 1;
      bwsh__modules_scan();
      if (bwsh__code_kind(caller) != BW_CODE_PROGRAM) {
        key_of(fn, caller, NULL, 1, &k);
        probe = (unsigned)-1; /* start over with the new key */
        continue;
      }
    }
    if (cur == 0) {
      uint64_t expected = 0;
      if (atomic_compare_exchange_strong(&s->key, &expected, k.key)) {
        atomic_fetch_add_explicit(&claimed, 1, memory_order_relaxed);
        fill_site(s, fn, caller, &k);
        atomic_store_explicit(&s->ready, 1, memory_order_release);
        cur = k.key;
      } else {
        cur = expected;
      }
    }
    if (cur == k.key) {
      count_at(s, count, blocked_ns);
      int i = (int)(s - sites);
      if (k.nchain < 0 && !by_chain) { /* keyed by (fn, caller, user) */
        last_site.caller = caller;
        last_site.user = user;
        last_site.fn = fn;
        last_site.site = i;
        last_site.key = k.key;
      }
      return i;
    }
  }
  atomic_fetch_add_explicit(&dropped, count, memory_order_relaxed);
  return -1;
}

int bwsh__site_add(int fn, void *caller, void *const *caller_slot, uint64_t key,
                   uint64_t count, uint64_t blocked_ns) {
  const void *user = bwsh__self.item_fn;
  int by_chain = user == NULL && bwsh__self.classified_by_option;
  int i = last_site.site;
  if (!by_chain && i >= 0 && last_site.caller == caller && last_site.fn == fn &&
      last_site.user == user &&
      atomic_load_explicit(&sites[i].key, memory_order_relaxed) ==
          last_site.key &&
      bwsh__code_kind(caller) == BW_CODE_PROGRAM) {
    count_at(&sites[i], count, blocked_ns);
    return i;
  }
  return site_add_keyed(fn, caller, caller_slot, key, count, blocked_ns, user,
                        by_chain);
}

void bwsh__site_add_ns(int i, uint64_t blocked_ns) {
  if (i >= 0 && i < BW_MAX_SITES)
    atomic_fetch_add_explicit(&sites[i].blocked_ns, blocked_ns,
                              memory_order_relaxed);
}

void *bwsh__site_frame0(int i, void *fallback) {
  if (i < 0 || i >= BW_MAX_SITES)
    return fallback;
  site *s = &sites[i];
  if (!atomic_load_explicit(&s->ready, memory_order_acquire) || s->nframes == 0)
    return fallback;
  return s->frames[0];
}

int bwsh__site_get(int i, bwsh__site_view *out) {
  site *s = &sites[i];
  if (!atomic_load_explicit(&s->ready, memory_order_acquire))
    return 0;
  out->fn = s->fn;
  out->nframes = s->nframes;
  memcpy(out->frames, s->frames, sizeof out->frames);
  out->via = s->via;
  out->count = atomic_load_explicit(&s->count, memory_order_relaxed);
  out->blocked_ns = atomic_load_explicit(&s->blocked_ns, memory_order_relaxed);
  return out->count > 0;
}

uint64_t bwsh__sites_dropped(void) {
  return atomic_load(&dropped);
}

void bwsh__sites_after_fork(void) {
  /* Claimed sites only, and no look at the table when there are none:
   * touching its pages costs every child that execs at once a fault each. */
  if (atomic_exchange(&claimed, 0) == 0)
    return;
  for (int i = 0; i < BW_MAX_SITES; i++)
    if (atomic_load_explicit(&sites[i].key, memory_order_relaxed) != 0)
      memset(&sites[i], 0, sizeof sites[i]);
  atomic_store(&dropped, 0);
}
