/* table.h - the interposer table: every function libblockwatch.so wraps,
 * with what C must say about it and no rule can.
 *
 * Invariants:
 *  - This is the one list of wrapped functions; the enum of function ids,
 *    the real-function pointers (real.h), the names (policy.c) and the
 *    wrapper bodies (interpose.c) are generated from it.
 *  - What blocks is not here. Whether a function counts (its category) and
 *    which of its calls cannot block (zero timeouts, WNOHANG, IPC_NOWAIT,
 *    LOCK_NB, MSG_DONTWAIT, a descriptor or stream with O_NONBLOCK) are the
 *    rules' to say: the libc and blockwatch packs embedded in the shim, or
 *    a rules= file (policy.c). A function no loaded rule names does not
 *    count.
 *  - What stays here is what no rule condition can express (a condition
 *    tests one argument of the call, rules/include/blockwatch/rules.h):
 *      - the C signature, for the wrapper and its real function;
 *      - the canonical name, under which a fortified or internal form
 *        (__read_chk, _IO_getc) is reported and, when it has no rule of
 *        its own, looked up; where the fortified form's extra argument
 *        sits is in policy.c (chk_extra);
 *      - `check`, for getchar only: stdin's O_NONBLOCK state, which is not
 *        an argument;
 *      - for locks, that only a contended acquisition counts: the wrapper
 *        tries `trylock` first and times only the slow path.
 *  - BW_SHIM_FUNCS: X(ret, name, canon, params, args, check), made of
 *    BW_SHIM_PLAIN (libc's and the runtime's), BW_SHIM_GLIB (GLib's own
 *    waits), BW_SHIM_GLIB_VOID, BW_SHIM_GLIB_LOCKS and BW_SHIM_LOOPS
 *    (written by hand: a void result, a try-lock first, a loop runner);
 *      canon    the name reported, as a bare identifier;
 *      check    an expression over the parameters, 0 when the call cannot
 *               block whatever the rules say (1 for all but getchar).
 *  - BW_SHIM_LOCKS: X(name, type, trylock, (extra params), (extra args)).
 *  - BW_SHIM_BY_HAND: pthread_cond_wait/timedwait (two symbol versions) and
 *    sync (void), written out in interpose.c with the same begin/end
 *    helpers; they have ids and names like the others.
 */
#ifndef BW_SHIM_TABLE_H
#define BW_SHIM_TABLE_H

#define BW_SHIM_PLAIN(X)                                                       \
  /* sleeps: glibc's sleep/usleep do not go through nanosleep */               \
  X(unsigned, sleep, sleep, (unsigned s), (s), 1)                              \
  X(int, usleep, usleep, (useconds_t us), (us), 1)                             \
  X(int, nanosleep, nanosleep,                                                 \
    (const struct timespec *req, struct timespec *rem), (req, rem), 1)         \
  X(int, clock_nanosleep, clock_nanosleep,                                     \
    (clockid_t clk, int fl, const struct timespec *req, struct timespec *rem), \
    (clk, fl, req, rem), 1)                                                    \
  /* waits for events */                                                       \
  X(int, pause, pause, (void), (), 1)                                          \
  X(int, select, select,                                                       \
    (int n, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *tv),           \
    (n, rd, wr, ex, tv), 1)                                                    \
  X(int, pselect, pselect,                                                     \
    (int n, fd_set *rd, fd_set *wr, fd_set *ex, const struct timespec *ts,     \
     const sigset_t *mask),                                                    \
    (n, rd, wr, ex, ts, mask), 1)                                              \
  X(int, poll, poll, (struct pollfd * fds, nfds_t n, int tmo), (fds, n, tmo),  \
    1)                                                                         \
  X(int, __poll_chk, poll,                                                     \
    (struct pollfd * fds, nfds_t n, int tmo, size_t fdslen),                   \
    (fds, n, tmo, fdslen), 1)                                                  \
  X(int, ppoll, ppoll,                                                         \
    (struct pollfd * fds, nfds_t n, const struct timespec *ts,                 \
     const sigset_t *mask),                                                    \
    (fds, n, ts, mask), 1)                                                     \
  X(int, __ppoll_chk, ppoll,                                                   \
    (struct pollfd * fds, nfds_t n, const struct timespec *ts,                 \
     const sigset_t *mask, size_t fdslen),                                     \
    (fds, n, ts, mask, fdslen), 1)                                             \
  X(int, epoll_wait, epoll_wait,                                               \
    (int epfd, struct epoll_event *ev, int max, int tmo),                      \
    (epfd, ev, max, tmo), 1)                                                   \
  X(int, epoll_pwait, epoll_pwait,                                             \
    (int epfd, struct epoll_event *ev, int max, int tmo,                       \
     const sigset_t *mask),                                                    \
    (epfd, ev, max, tmo, mask), 1)                                             \
  X(int, epoll_pwait2, epoll_pwait2,                                           \
    (int epfd, struct epoll_event *ev, int max, const struct timespec *ts,     \
     const sigset_t *mask),                                                    \
    (epfd, ev, max, ts, mask), 1)                                              \
  X(int, sem_wait, sem_wait, (sem_t * s), (s), 1)                              \
  X(int, sem_timedwait, sem_timedwait, (sem_t * s, const struct timespec *ts), \
    (s, ts), 1)                                                                \
  X(int, sem_clockwait, sem_clockwait,                                         \
    (sem_t * s, clockid_t clk, const struct timespec *ts), (s, clk, ts), 1)    \
  X(int, semop, semop, (int id, struct sembuf *ops, size_t n), (id, ops, n),   \
    1)                                                                         \
  X(int, sigsuspend, sigsuspend, (const sigset_t *mask), (mask), 1)            \
  X(int, sigwait, sigwait, (const sigset_t *set, int *sig), (set, sig), 1)     \
  X(int, sigwaitinfo, sigwaitinfo, (const sigset_t *set, siginfo_t *info),     \
    (set, info), 1)                                                            \
  X(int, sigtimedwait, sigtimedwait,                                           \
    (const sigset_t *set, siginfo_t *info, const struct timespec *ts),         \
    (set, info, ts), 1)                                                        \
  X(int, pthread_barrier_wait, pthread_barrier_wait, (pthread_barrier_t * b),  \
    (b), 1)                                                                    \
  X(int, pthread_cond_clockwait, pthread_cond_clockwait,                       \
    (pthread_cond_t * c, pthread_mutex_t * m, clockid_t clk,                   \
     const struct timespec *ts),                                               \
    (c, m, clk, ts), 1)                                                        \
  X(ssize_t, mq_receive, mq_receive,                                           \
    (mqd_t q, char *msg, size_t len, unsigned *prio), (q, msg, len, prio), 1)  \
  X(ssize_t, mq_timedreceive, mq_timedreceive,                                 \
    (mqd_t q, char *msg, size_t len, unsigned *prio,                           \
     const struct timespec *ts),                                               \
    (q, msg, len, prio, ts), 1)                                                \
  X(int, mq_send, mq_send,                                                     \
    (mqd_t q, const char *msg, size_t len, unsigned prio),                     \
    (q, msg, len, prio), 1)                                                    \
  X(int, mq_timedsend, mq_timedsend,                                           \
    (mqd_t q, const char *msg, size_t len, unsigned prio,                      \
     const struct timespec *ts),                                               \
    (q, msg, len, prio, ts), 1)                                                \
  X(ssize_t, msgrcv, msgrcv,                                                   \
    (int id, void *msg, size_t sz, long type, int flg),                        \
    (id, msg, sz, type, flg), 1)                                               \
  X(int, msgsnd, msgsnd, (int id, const void *msg, size_t sz, int flg),        \
    (id, msg, sz, flg), 1)                                                     \
  /* threads and processes */                                                  \
  X(int, pthread_join, pthread_join, (pthread_t t, void **ret), (t, ret), 1)   \
  X(int, pthread_timedjoin_np, pthread_timedjoin_np,                           \
    (pthread_t t, void **ret, const struct timespec *ts), (t, ret, ts), 1)     \
  X(int, pthread_clockjoin_np, pthread_clockjoin_np,                           \
    (pthread_t t, void **ret, clockid_t clk, const struct timespec *ts),       \
    (t, ret, clk, ts), 1)                                                      \
  X(pid_t, wait, wait, (int *st), (st), 1)                                     \
  X(pid_t, waitpid, waitpid, (pid_t pid, int *st, int opt), (pid, st, opt), 1) \
  X(pid_t, wait3, wait3, (int *st, int opt, struct rusage *ru), (st, opt, ru), \
    1)                                                                         \
  X(pid_t, wait4, wait4, (pid_t pid, int *st, int opt, struct rusage *ru),     \
    (pid, st, opt, ru), 1)                                                     \
  X(int, waitid, waitid, (idtype_t idt, id_t id, siginfo_t * info, int opt),   \
    (idt, id, info, opt), 1)                                                   \
  X(int, system, system, (const char *cmd), (cmd), 1)                          \
  X(FILE *, popen, popen, (const char *cmd, const char *mode), (cmd, mode), 1) \
  X(int, pclose, pclose, (FILE * fp), (fp), 1)                                 \
  /* descriptor I/O: only descriptors without O_NONBLOCK */                    \
  X(ssize_t, read, read, (int fd, void *buf, size_t n), (fd, buf, n), 1)       \
  X(ssize_t, __read_chk, read, (int fd, void *buf, size_t n, size_t blen),     \
    (fd, buf, n, blen), 1)                                                     \
  X(ssize_t, write, write, (int fd, const void *buf, size_t n), (fd, buf, n),  \
    1)                                                                         \
  X(ssize_t, readv, readv, (int fd, const struct iovec *iov, int cnt),         \
    (fd, iov, cnt), 1)                                                         \
  X(ssize_t, writev, writev, (int fd, const struct iovec *iov, int cnt),       \
    (fd, iov, cnt), 1)                                                         \
  X(ssize_t, pread, pread, (int fd, void *buf, size_t n, off_t off),           \
    (fd, buf, n, off), 1)                                                      \
  X(ssize_t, __pread_chk, pread,                                               \
    (int fd, void *buf, size_t n, off_t off, size_t blen),                     \
    (fd, buf, n, off, blen), 1)                                                \
  X(ssize_t, pwrite, pwrite, (int fd, const void *buf, size_t n, off_t off),   \
    (fd, buf, n, off), 1)                                                      \
  X(ssize_t, recv, recv, (int fd, void *buf, size_t n, int fl),                \
    (fd, buf, n, fl), 1)                                                       \
  X(ssize_t, __recv_chk, recv,                                                 \
    (int fd, void *buf, size_t n, size_t blen, int fl),                        \
    (fd, buf, n, blen, fl), 1)                                                 \
  X(ssize_t, recvfrom, recvfrom,                                               \
    (int fd, void *buf, size_t n, int fl, __SOCKADDR_ARG sa,                   \
     socklen_t *salen),                                                        \
    (fd, buf, n, fl, sa, salen), 1)                                            \
  X(ssize_t, __recvfrom_chk, recvfrom,                                         \
    (int fd, void *buf, size_t n, size_t blen, int fl, struct sockaddr *sa,    \
     socklen_t *salen),                                                        \
    (fd, buf, n, blen, fl, sa, salen), 1)                                      \
  X(ssize_t, recvmsg, recvmsg, (int fd, struct msghdr *msg, int fl),           \
    (fd, msg, fl), 1)                                                          \
  X(ssize_t, send, send, (int fd, const void *buf, size_t n, int fl),          \
    (fd, buf, n, fl), 1)                                                       \
  X(ssize_t, sendto, sendto,                                                   \
    (int fd, const void *buf, size_t n, int fl, __CONST_SOCKADDR_ARG sa,       \
     socklen_t salen),                                                         \
    (fd, buf, n, fl, sa, salen), 1)                                            \
  X(ssize_t, sendmsg, sendmsg, (int fd, const struct msghdr *msg, int fl),     \
    (fd, msg, fl), 1)                                                          \
  X(int, accept, accept, (int fd, __SOCKADDR_ARG sa, socklen_t *salen),        \
    (fd, sa, salen), 1)                                                        \
  X(int, accept4, accept4,                                                     \
    (int fd, __SOCKADDR_ARG sa, socklen_t *salen, int fl),                     \
    (fd, sa, salen, fl), 1)                                                    \
  X(int, connect, connect, (int fd, __CONST_SOCKADDR_ARG sa, socklen_t salen), \
    (fd, sa, salen), 1)                                                        \
  X(int, fsync, fsync, (int fd), (fd), 1)                                      \
  X(int, fdatasync, fdatasync, (int fd), (fd), 1)                              \
  X(int, syncfs, syncfs, (int fd), (fd), 1)                                    \
  X(int, flock, flock, (int fd, int op), (fd, op), 1)                          \
  X(int, lockf, lockf, (int fd, int cmd, off_t len), (fd, cmd, len), 1)        \
  /* stdio reads */                                                            \
  X(char *, fgets, fgets, (char *s, int n, FILE *fp), (s, n, fp), 1)           \
  X(char *, __fgets_chk, fgets, (char *s, size_t size, int n, FILE *fp),       \
    (s, size, n, fp), 1)                                                       \
  X(char *, fgets_unlocked, fgets_unlocked, (char *s, int n, FILE *fp),        \
    (s, n, fp), 1)                                                             \
  X(char *, __fgets_unlocked_chk, fgets_unlocked,                              \
    (char *s, size_t size, int n, FILE *fp), (s, size, n, fp), 1)              \
  X(int, _IO_getc, getc, (FILE * fp), (fp), 1)                                 \
  X(int, getc_unlocked, getc_unlocked, (FILE * fp), (fp), 1)                   \
  X(int, getchar, getchar, (void), (), bwsh__file_blocks(stdin))               \
  X(int, getc, getc, (FILE * fp), (fp), 1)                                     \
  X(int, fgetc, fgetc, (FILE * fp), (fp), 1)                                   \
  X(size_t, fread, fread, (void *p, size_t sz, size_t n, FILE *fp),            \
    (p, sz, n, fp), 1)                                                         \
  X(size_t, __fread_chk, fread,                                                \
    (void *p, size_t psize, size_t sz, size_t n, FILE *fp),                    \
    (p, psize, sz, n, fp), 1)                                                  \
  X(ssize_t, getline, getline, (char **line, size_t *n, FILE *fp),             \
    (line, n, fp), 1)                                                          \
  X(ssize_t, getdelim, getdelim,                                               \
    (char **line, size_t *n, int delim, FILE *fp), (line, n, delim, fp), 1)    \
  X(ssize_t, __getdelim, getdelim,                                             \
    (char **line, size_t *n, int delim, FILE *fp), (line, n, delim, fp), 1)    \
  /* name resolution */                                                        \
  X(int, getaddrinfo, getaddrinfo,                                             \
    (const char *node, const char *svc, const struct addrinfo *hints,          \
     struct addrinfo **res),                                                   \
    (node, svc, hints, res), 1)                                                \
  X(struct hostent *, gethostbyname, gethostbyname, (const char *name),        \
    (name), 1)                                                                 \
  X(struct hostent *, gethostbyname2, gethostbyname2,                          \
    (const char *name, int af), (name, af), 1)                                 \
  X(int, gethostbyname_r, gethostbyname_r,                                     \
    (const char *name, struct hostent *ret, char *buf, size_t len,             \
     struct hostent **result, int *herr),                                      \
    (name, ret, buf, len, result, herr), 1)                                    \
  X(struct hostent *, gethostbyaddr, gethostbyaddr,                            \
    (const void *addr, socklen_t len, int type), (addr, len, type), 1)         \
  X(int, getnameinfo, getnameinfo,                                             \
    (const struct sockaddr *sa, socklen_t salen, char *host,                   \
     socklen_t hostlen, char *serv, socklen_t servlen, int fl),                \
    (sa, salen, host, hostlen, serv, servlen, fl), 1)                          \
  X(int, sched_yield, sched_yield, (void), (), 1)                              \
  /* the bundled runtime: sync-over-async */                                   \
  X(int, bw_wait, bw_wait, (bw_task * task, int64_t ms), (task, ms), 1)        \
  X(int, bw_wait_cancelable, bw_wait_cancelable,                               \
    (bw_task * task, int64_t ms, bw_cancel_token * tok), (task, ms, tok), 1)

/* GLib's own waits (GLib waits on futexes, never in pthread's functions):
 * generated like BW_SHIM_PLAIN. The GLib types are passed as they are, so
 * they are void * here (gboolean is int, gint64 int64_t, guint64
 * uint64_t): the shim needs no GLib header. The _unlocked timeout forms
 * have no rule of their own and are looked up under the locked form's. */
#define BW_SHIM_GLIB(X)                                                        \
  X(int, g_cond_wait_until, g_cond_wait_until,                                 \
    (void *cond, void *mutex, int64_t end), (cond, mutex, end), 1)             \
  X(void *, g_async_queue_pop, g_async_queue_pop, (void *q), (q), 1)           \
  X(void *, g_async_queue_pop_unlocked, g_async_queue_pop_unlocked, (void *q), \
    (q), 1)                                                                    \
  X(void *, g_async_queue_timeout_pop, g_async_queue_timeout_pop,              \
    (void *q, uint64_t us), (q, us), 1)                                        \
  X(void *, g_async_queue_timeout_pop_unlocked, g_async_queue_timeout_pop,     \
    (void *q, uint64_t us), (q, us), 1)                                        \
  X(void *, g_async_queue_timed_pop, g_async_queue_timed_pop,                  \
    (void *q, void *end), (q, end), 1)                                         \
  X(void *, g_async_queue_timed_pop_unlocked, g_async_queue_timed_pop,         \
    (void *q, void *end), (q, end), 1)                                         \
  X(void *, g_thread_join, g_thread_join, (void *thread), (thread), 1)

/* Functions of the BW_SHIM_PLAIN form written out by hand in interpose.c:
 *  - GLib's waits with a void result;
 *  - GLib's locks (void): tried first with their try-lock, which gives
 *    TRUE when it took the lock (BW_SHIM_TRYLOCKS), and timed only when
 *    that failed, as pthread's are;
 *  - the loop runners, which never count themselves: while one runs, its
 *    thread is a loop thread and what its callbacks call counts
 *    (loops.c). */
#define BW_SHIM_GLIB_VOID(X)                                                   \
  X(void, g_cond_wait, g_cond_wait, (void *cond, void *mutex), (cond, mutex),  \
    1)                                                                         \
  X(void, g_usleep, g_usleep, (unsigned long us), (us), 1)
/* The last column of a GLib lock names its try-lock. */
#define BW_SHIM_GLIB_LOCKS(X)                                                  \
  X(void, g_mutex_lock, g_mutex_lock, (void *lk), (lk), g_mutex_trylock)       \
  X(void, g_rec_mutex_lock, g_rec_mutex_lock, (void *lk), (lk),                \
    g_rec_mutex_trylock)                                                       \
  X(void, g_rw_lock_writer_lock, g_rw_lock_writer_lock, (void *lk), (lk),      \
    g_rw_lock_writer_trylock)                                                  \
  X(void, g_rw_lock_reader_lock, g_rw_lock_reader_lock, (void *lk), (lk),      \
    g_rw_lock_reader_trylock)
#define BW_SHIM_LOOPS(X)                                                       \
  X(int, uv_run, uv_run, (void *loop, int mode), (loop, mode), 1)              \
  X(void, g_main_loop_run, g_main_loop_run, (void *loop), (loop), 1)           \
  X(int, g_main_context_iteration, g_main_context_iteration,                   \
    (void *ctx, int may_block), (ctx, may_block), 1)                           \
  X(int, event_base_loop, event_base_loop, (void *base, int flags),            \
    (base, flags), 1)                                                          \
  X(int, event_base_dispatch, event_base_dispatch, (void *base), (base), 1)

/* Every function of the X(ret, name, canon, params, args, check) form:
 * the ones interpose.c generates (BW_SHIM_GENERATED), then the ones it
 * writes out. */
#define BW_SHIM_GENERATED(X) BW_SHIM_PLAIN(X) BW_SHIM_GLIB(X)
#define BW_SHIM_FUNCS(X)                                                       \
  BW_SHIM_GENERATED(X)                                                         \
  BW_SHIM_GLIB_VOID(X) BW_SHIM_GLIB_LOCKS(X) BW_SHIM_LOOPS(X)

/* Descriptor bookkeeping (not counted): X(ret, name, params, args, before,
 * after) - `before` runs ahead of the real call, `after` with its result in
 * `r`; both forget what the descriptor cache knew (state.c). */
#define BW_SHIM_FDS(X)                                                         \
  X(int, close, (int fd), (fd), bwsh__fd_forget(fd), bwsh__fd_forget(fd))      \
  X(int, dup, (int fd), (fd), (void)0, bwsh__fd_forget(r))                     \
  X(int, dup2, (int fd, int nfd), (fd, nfd), (void)0, bwsh__fd_forget(nfd))    \
  X(int, dup3, (int fd, int nfd, int fl), (fd, nfd, fl), (void)0,              \
    bwsh__fd_forget(nfd))                                                      \
  X(int, pipe, (int fds[2]), (fds), (void)0, forget_pair(r, fds))              \
  X(int, pipe2, (int fds[2], int fl), (fds, fl), (void)0, forget_pair(r, fds)) \
  X(int, socket, (int dom, int type, int proto), (dom, type, proto), (void)0,  \
    bwsh__fd_forget(r))                                                        \
  X(int, socketpair, (int dom, int type, int proto, int fds[2]),               \
    (dom, type, proto, fds), (void)0, forget_pair(r, fds))                     \
  /* closes that happen inside libc */                                         \
  X(int, fclose, (FILE * fp), (fp), forget_file(fp), (void)0)                  \
  X(int, closedir, (DIR * d), (d), forget_dir(d), (void)0)                     \
  X(int, close_range, (unsigned first, unsigned last, int fl),                 \
    (first, last, fl), (void)0, forget_range(r, first, last, fl))              \
  /* the fortified opens (_FORTIFY_SOURCE, no mode argument) */                \
  X(int, __open_2, (const char *path, int fl), (path, fl), (void)0,            \
    bwsh__fd_forget(r))                                                        \
  X(int, __open64_2, (const char *path, int fl), (path, fl), (void)0,          \
    bwsh__fd_forget(r))                                                        \
  X(int, __openat_2, (int dfd, const char *path, int fl), (dfd, path, fl),     \
    (void)0, bwsh__fd_forget(r))                                               \
  X(int, __openat64_2, (int dfd, const char *path, int fl), (dfd, path, fl),   \
    (void)0, bwsh__fd_forget(r))

/* X(name, type, trylock, (extra params), (extra args)): the extra ones
 * follow the lock pointer (a timeout), each list in parentheses starting
 * with its comma. */
#define BW_SHIM_LOCKS(X)                                                       \
  X(pthread_mutex_lock, pthread_mutex_t, pthread_mutex_trylock, (), ())        \
  X(pthread_mutex_timedlock, pthread_mutex_t, pthread_mutex_trylock,           \
    (, const struct timespec *ts), (, ts))                                     \
  X(pthread_mutex_clocklock, pthread_mutex_t, pthread_mutex_trylock,           \
    (, clockid_t clk, const struct timespec *ts), (, clk, ts))                 \
  X(pthread_rwlock_rdlock, pthread_rwlock_t, pthread_rwlock_tryrdlock, (), ()) \
  X(pthread_rwlock_timedrdlock, pthread_rwlock_t, pthread_rwlock_tryrdlock,    \
    (, const struct timespec *ts), (, ts))                                     \
  X(pthread_rwlock_clockrdlock, pthread_rwlock_t, pthread_rwlock_tryrdlock,    \
    (, clockid_t clk, const struct timespec *ts), (, clk, ts))                 \
  X(pthread_rwlock_wrlock, pthread_rwlock_t, pthread_rwlock_trywrlock, (), ()) \
  X(pthread_rwlock_timedwrlock, pthread_rwlock_t, pthread_rwlock_trywrlock,    \
    (, const struct timespec *ts), (, ts))                                     \
  X(pthread_rwlock_clockwrlock, pthread_rwlock_t, pthread_rwlock_trywrlock,    \
    (, clockid_t clk, const struct timespec *ts), (, clk, ts))                 \
  X(pthread_spin_lock, pthread_spinlock_t, pthread_spin_trylock, (), ())

/* Counted functions written out by hand in interpose.c (two symbol
 * versions, a void result): X(name). */
#define BW_SHIM_BY_HAND(X)                                                     \
  X(pthread_cond_wait)                                                         \
  X(pthread_cond_timedwait)                                                    \
  X(sync)

/* Removes one level of parentheses: BW_EXPAND (a, b) is a, b. */
#define BW_EXPAND(...) __VA_ARGS__

/* The try-lock functions the lock wrappers call first (not wrapped). */
#define BW_SHIM_TRYLOCKS(X)                                                    \
  X(pthread_mutex_trylock, pthread_mutex_t)                                    \
  X(pthread_rwlock_tryrdlock, pthread_rwlock_t)                                \
  X(pthread_rwlock_trywrlock, pthread_rwlock_t)                                \
  X(pthread_spin_trylock, pthread_spinlock_t)                                  \
  X(g_mutex_trylock, void)                                                     \
  X(g_rec_mutex_trylock, void)                                                 \
  X(g_rw_lock_writer_trylock, void)                                            \
  X(g_rw_lock_reader_trylock, void)

#endif /* BW_SHIM_TABLE_H */
