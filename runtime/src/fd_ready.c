/* fd_ready.c - bw_fd_ready: descriptor readiness through one epoll
 * instance per pool and one poller thread, so a wait holds no thread.
 *
 * Invariants:
 *  - A pending wait (an op) is armed in the epoll set with EPOLLONESHOT
 *    and sits in slots[fd].op; both change together under mu. The thread
 *    that takes an op out of its slot (claim_locked: the poller on an
 *    event, the op's timer, a later wait that finds it canceled or orphaned,
 *    or stop) is the only one that resolves its task.
 *  - slots[fd].registered: the epoll set may hold a registration of fd
 *    that no op arms. The poller leaves one behind (EPOLLONESHOT disarmed
 *    it), so the next wait on the descriptor re-arms it with one MOD
 *    instead of a DEL now and an ADD then; every other claim removes it. A
 *    closed file's registration goes with it (MOD then fails: ADD).
 *  - The epoll data is the descriptor and the op's sequence number, never a
 *    pointer: an event for an op someone else claimed (and freed) meanwhile
 *    finds another op, or none, in the slot, and is dropped.
 *  - An op holds a reference on its task; it is alive while its slot or its
 *    timer holds it (refs). A timer fires only while the poller exists: the
 *    pool's destroy stops the gate (firing every timer) before it stops the
 *    poller, and a timer that cannot be added is never in the heap.
 *  - The poller struct is made under create_mu on first use, never after
 *    destroy set offload_closed (under create_mu too). Destroy stops it
 *    (p->stop: every later wait gets ESHUTDOWN) and joins its thread; it is
 *    freed with the pool, after the workers were joined, since an item
 *    still running may be inside bw_fd_ready.
 *  - Lock order: gate_mu is never held when mu is taken (timers fire with
 *    gate_mu released); resolve runs with mu released.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "internal.h"

#define WAKE_KEY UINT64_MAX /* the eventfd's epoll data */
#define BATCH 256

typedef struct fd_op fd_op;
struct fd_op {
  bwrt__timer timer;
  bw_task *task;
  bwrt__poller *poller;
  fd_op *next; /* in a claimed batch */
  int fd;
  uint32_t seq;
  int revents;
  _Atomic int claimed;
  _Atomic unsigned refs; /* the slot's and the timer's */
};

typedef struct fd_slot {
  fd_op *op;
  int registered;
} fd_slot;

_Static_assert(sizeof(fd_op) <= BWRT__ALLOC_LARGE, "fd_op too big");

struct bwrt__poller {
  bw_pool *pool;
  pthread_mutex_t mu;
  int epfd, evfd;
  pthread_t thread;
  fd_slot *slots; /* indexed by descriptor; under mu */
  size_t nslots;
  uint32_t next_seq;
  int stop;
};

static pthread_mutex_t create_mu = PTHREAD_MUTEX_INITIALIZER;

static void op_release(fd_op *op) {
  if (atomic_fetch_sub_explicit(&op->refs, 1, memory_order_acq_rel) != 1)
    return;
  bw_task_release(op->task);
  bwrt__free(BWRT__ALLOC_LARGE_CLASS, op);
}

/* Takes op out of its slot, and its registration out of the epoll set
 * unless `fired` (see slots[].registered); 0 when someone else did. */
static int claim_locked(bwrt__poller *p, fd_op *op, int fired) {
  if ((size_t)op->fd >= p->nslots || p->slots[op->fd].op != op)
    return 0;
  fd_slot *slot = &p->slots[op->fd];
  slot->op = NULL;
  if (!fired) {
    (void)epoll_ctl(p->epfd, EPOLL_CTL_DEL, op->fd, NULL);
    slot->registered = 0;
  }
  atomic_store_explicit(&op->claimed, 1, memory_order_release);
  return 1;
}

static int poll_of_epoll(uint32_t ev) {
  return ((ev & EPOLLIN) ? POLLIN : 0) | ((ev & EPOLLOUT) ? POLLOUT : 0) |
         ((ev & EPOLLPRI) ? POLLPRI : 0) | ((ev & EPOLLERR) ? POLLERR : 0) |
         ((ev & EPOLLHUP) ? POLLHUP : 0);
}

static uint32_t epoll_of_poll(int events) {
  return ((events & POLLIN) ? EPOLLIN : 0u) |
         ((events & POLLOUT) ? EPOLLOUT : 0u) |
         ((events & POLLPRI) ? EPOLLPRI : 0u);
}

/* Completes (revents >= 0) or cancels a claimed op with the reason
 * bw_task_error reports (revents < 0, a negative errno), drops the slot's
 * ref. */
static void finish(fd_op *op, int revents) {
  if (revents >= 0)
    (void)bw_task_complete(op->task, (void *)(intptr_t)revents);
  else
    (void)bw_task_cancel_with(op->task, revents);
  op_release(op);
}

static void *poller_main(void *arg) {
  bwrt__poller *p = arg;
  char name[16];
  snprintf(name, sizeof(name), "%.10s.poll", p->pool->name);
  pthread_setname_np(pthread_self(), name);
  bwrt__set_thread_role(BW_ROLE_POLLER);
  struct epoll_event evs[BATCH];
  int stop = 0;
  while (!stop) {
    int n = epoll_wait(p->epfd, evs, BATCH, -1);
    if (n < 0)
      continue; /* EINTR: signals are blocked here, but be safe */
    fd_op *done = NULL;
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < n; i++) {
      uint64_t key = evs[i].data.u64;
      if (key == WAKE_KEY) {
        uint64_t v;
        (void)!read(p->evfd, &v, sizeof(v));
        continue;
      }
      size_t fd = (uint32_t)key;
      fd_op *op = fd < p->nslots ? p->slots[fd].op : NULL;
      if (op == NULL || op->seq != (uint32_t)(key >> 32) ||
          !claim_locked(p, op, 1))
        continue;
      op->revents = poll_of_epoll(evs[i].events);
      op->next = done;
      done = op;
    }
    stop = p->stop;
    pthread_mutex_unlock(&p->mu);
    while (done != NULL) {
      fd_op *next = done->next;
      finish(done, done->revents);
      done = next;
    }
  }
  return NULL;
}

static void poller_free(bwrt__poller *p) {
  if (p->epfd >= 0)
    close(p->epfd);
  if (p->evfd >= 0)
    close(p->evfd);
  pthread_mutex_destroy(&p->mu);
  free(p->slots);
  free(p);
}

/* The pool's poller, made on first use. NULL with errno set. */
static bwrt__poller *poller_of(bw_pool *pool) {
  bwrt__poller *p = atomic_load_explicit(&pool->poller, memory_order_acquire);
  if (p != NULL)
    return p;
  pthread_mutex_lock(&create_mu);
  p = atomic_load_explicit(&pool->poller, memory_order_acquire);
  if (p != NULL ||
      atomic_load_explicit(&pool->offload_closed, memory_order_relaxed)) {
    pthread_mutex_unlock(&create_mu);
    if (p == NULL)
      errno = ESHUTDOWN; /* a blocking job's call during destroy */
    return p;
  }
  int err = ENOMEM;
  p = calloc(1, sizeof(*p));
  if (p != NULL) {
    p->pool = pool;
    pthread_mutex_init(&p->mu, NULL);
    p->epfd = epoll_create1(EPOLL_CLOEXEC);
    p->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = WAKE_KEY};
    err = errno;
    if (p->epfd < 0 || p->evfd < 0 ||
        epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->evfd, &ev) != 0) {
      err = errno;
      poller_free(p);
      p = NULL;
    } else if (bwrt__thread_start(&p->thread, poller_main, p) != 0) {
      err = EAGAIN;
      poller_free(p);
      p = NULL;
    } else {
      atomic_store_explicit(&pool->poller, p, memory_order_release);
    }
  }
  pthread_mutex_unlock(&create_mu);
  if (p == NULL)
    errno = err;
  return p;
}

static int grow_locked(bwrt__poller *p, size_t fd) {
  if (fd < p->nslots)
    return 0;
  size_t n = p->nslots ? p->nslots : 64;
  while (n <= fd)
    n *= 2;
  fd_slot *slots = realloc(p->slots, n * sizeof(*slots));
  if (slots == NULL)
    return -ENOMEM;
  for (size_t i = p->nslots; i < n; i++)
    slots[i] = (fd_slot){NULL, 0};
  p->slots = slots;
  p->nslots = n;
  return 0;
}

/* Registers op. Returns 0, 1 when the descriptor is always ready (a
 * regular file: epoll refuses it), or a negative errno. *stale gets a
 * previous op of the slot that this call claimed: canceled by its caller,
 * or orphaned (its file was closed, so the number could be registered
 * again). */
static int register_locked(bwrt__poller *p, fd_op *op, uint32_t events,
                           fd_op **stale) {
  *stale = NULL;
  if (p->stop)
    return -ESHUTDOWN;
  if (op->fd == p->epfd || op->fd == p->evfd)
    return -EBADF; /* the runtime's own: not the caller's descriptor */
  fd_slot *slot = (size_t)op->fd < p->nslots ? &p->slots[op->fd] : NULL;
  fd_op *old = slot != NULL ? slot->op : NULL;
  if (old != NULL && bw_task_state_get(old->task) != BW_TASK_PENDING &&
      claim_locked(p, old, 0)) {
    *stale = old;
    old = NULL;
  }
  op->seq = p->next_seq++;
  struct epoll_event ev = {.events = events | EPOLLONESHOT,
                           .data.u64 =
                               (uint64_t)op->seq << 32 | (uint32_t)op->fd};
  /* Re-arm what a fired wait left; with a pending wait in the slot, ADD
   * tells whether its file is still the one registered (EEXIST). */
  int rc = -1;
  if (slot != NULL && slot->registered && old == NULL)
    rc = epoll_ctl(p->epfd, EPOLL_CTL_MOD, op->fd, &ev);
  if (rc != 0 && epoll_ctl(p->epfd, EPOLL_CTL_ADD, op->fd, &ev) != 0) {
    if (errno == EEXIST)
      return -EBUSY;
    return errno == EPERM ? 1 : -errno;
  }
  /* Grown only for a descriptor epoll took: a wild number costs nothing. */
  if (grow_locked(p, (size_t)op->fd) != 0) {
    (void)epoll_ctl(p->epfd, EPOLL_CTL_DEL, op->fd, NULL);
    return -ENOMEM;
  }
  slot = &p->slots[op->fd];
  if (old != NULL) { /* registered again: old's file is gone */
    atomic_store_explicit(&old->claimed, 1, memory_order_release);
    *stale = old;
  }
  slot->op = op;
  slot->registered = 1;
  return 0;
}

static void op_timer_fire(bwrt__timer *tm, int canceled) {
  fd_op *op = BWRT__CONTAINER_OF(tm, fd_op, timer);
  /* The gate cancels its timers only when the pool is going. */
  int why = canceled ? -ESHUTDOWN : -ETIMEDOUT;
  if (!atomic_load_explicit(&op->claimed, memory_order_acquire)) {
    pthread_mutex_lock(&op->poller->mu);
    int mine = claim_locked(op->poller, op, 0);
    pthread_mutex_unlock(&op->poller->mu);
    if (mine)
      finish(op, why);
  }
  op_release(op); /* the timer's reference */
}

/* Done before its deadline: the gate may take the timer out early. */
static int op_timer_resolved(const bwrt__timer *tm) {
  const fd_op *op = BWRT__CONTAINER_OF(tm, fd_op, timer);
  return atomic_load_explicit(&op->claimed, memory_order_acquire) ||
         bw_task_state_get(op->task) != BW_TASK_PENDING;
}

bw_task *bw_fd_ready(bw_pool *pool, int fd, int events, int64_t timeout_ms) {
  if (fd < 0) {
    errno = EBADF;
    return NULL;
  }
  if ((events & (POLLIN | POLLOUT | POLLPRI)) == 0 ||
      (events & ~(POLLIN | POLLOUT | POLLPRI | POLLERR | POLLHUP)) != 0) {
    errno = EINVAL;
    return NULL;
  }
  pool = bwrt__pool_resolve(pool);
  if (pool == NULL)
    return NULL;
  bwrt__poller *p = poller_of(pool);
  if (p == NULL)
    return NULL;
  fd_op *op = bwrt__alloc(BWRT__ALLOC_LARGE_CLASS);
  bw_task *task = op != NULL ? bw_completion_create(pool) : NULL;
  if (task == NULL) {
    if (op != NULL)
      bwrt__free(BWRT__ALLOC_LARGE_CLASS, op);
    errno = ENOMEM;
    return NULL;
  }
  op->task = bw_task_retain(task);
  op->poller = p;
  op->next = NULL;
  op->fd = fd;
  op->revents = 0;
  op->timer.fire = op_timer_fire;
  op->timer.resolved = op_timer_resolved;
  atomic_init(&op->claimed, 0);
  atomic_init(&op->refs, timeout_ms >= 0 ? 2u : 1u);
  if (timeout_ms >= 0) {
    uint64_t ms = (uint64_t)timeout_ms;
    if (ms > UINT64_MAX / 2000000u) /* keep the deadline from overflowing */
      ms = UINT64_MAX / 2000000u;
    op->timer.deadline_ns = bwrt__now_ns() + ms * 1000000u;
  }
  fd_op *stale;
  pthread_mutex_lock(&p->mu);
  int rc = register_locked(p, op, epoll_of_poll(events), &stale);
  pthread_mutex_unlock(&p->mu);
  if (stale != NULL)
    finish(stale, -EBADF); /* its descriptor was closed and reused */
  if (rc != 0) {
    atomic_store_explicit(&op->refs, 1, memory_order_relaxed);
    if (rc == 1) { /* always ready, as poll() says of regular files */
      finish(op, events & (POLLIN | POLLOUT));
      return task;
    }
    op_release(op);
    bw_task_release(task);
    errno = -rc;
    return NULL;
  }
  if (timeout_ms >= 0 && bwrt__gate_add_timer(pool, &op->timer) != 0) {
    /* The pool is going: no timer will end this wait, so stop does. */
    op_release(op);
  }
  return task;
}

void bwrt__poller_stop(bw_pool *pool) {
  pthread_mutex_lock(&create_mu);
  atomic_store_explicit(&pool->offload_closed, 1, memory_order_relaxed);
  bwrt__poller *p = atomic_load_explicit(&pool->poller, memory_order_acquire);
  pthread_mutex_unlock(&create_mu);
  if (p == NULL)
    return;
  fd_op *pending = NULL;
  pthread_mutex_lock(&p->mu);
  p->stop = 1;
  for (size_t fd = 0; fd < p->nslots; fd++) {
    fd_op *op = p->slots[fd].op;
    if (op != NULL && claim_locked(p, op, 0)) {
      op->next = pending;
      pending = op;
    }
  }
  pthread_mutex_unlock(&p->mu);
  uint64_t one = 1;
  (void)!write(p->evfd, &one, sizeof(one));
  pthread_join(p->thread, NULL);
  while (pending != NULL) {
    fd_op *next = pending->next;
    finish(pending, -ESHUTDOWN);
    pending = next;
  }
}

void bwrt__poller_free(bw_pool *pool) {
  bwrt__poller *p = atomic_load_explicit(&pool->poller, memory_order_relaxed);
  if (p == NULL)
    return;
  atomic_store_explicit(&pool->poller, NULL, memory_order_relaxed);
  poller_free(p);
}
