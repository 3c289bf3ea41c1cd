/* shim_target - a program the shim tests run under LD_PRELOAD; argv[1]
 * picks a scenario with a known number of blocking calls.
 *
 * Invariants: every scenario does exactly the calls its comment counts
 * (tests/shim/test_shim.c asserts those numbers); worker threads name
 * themselves "work-<n>" before their first call, so the tests classify them
 * with worker_name=work-*; results go to stdout, one "key value" per line.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void name_self(int n) {
  char name[16];
  snprintf(name, sizeof name, "work-%d", n);
  pthread_setname_np(pthread_self(), name);
}

static void run_workers(int n, void *(*fn)(void *)) {
  pthread_t th[16];
  for (intptr_t i = 0; i < n; i++)
    pthread_create(&th[i], NULL, fn, (void *)i);
  for (int i = 0; i < n; i++)
    pthread_join(th[i], NULL); /* n calls on the main thread */
}

/* ---- counts: per worker 12 counted calls, main 1 + joins ---------------- */

/* Both counts workers are live at once (the report's "workers" is the
 * peak): each waits, without a blocking call, for the other to have made
 * its calls before it exits. */
static atomic_int counts_finished;

static void *counts_worker(void *arg) {
  name_self((int)(intptr_t)arg);
  for (int i = 0; i < 5; i++)
    usleep(2000); /* 5 */
  struct timespec ts = {0, 1000000};
  for (int i = 0; i < 3; i++)
    nanosleep(&ts, NULL); /* 3 */
  poll(NULL, 0, 1);       /* 1 */
  int p[2];
  if (pipe(p) != 0)
    abort();
  char buf[2] = {'a', 'b'};
  if (write(p[1], buf, 2) != 2) /* 1 */
    abort();
  for (int i = 0; i < 2; i++)
    if (read(p[0], buf, 1) != 1) /* 2 */
      abort();
  close(p[0]);
  close(p[1]);
  /* Not counted: a non-blocking pipe, a zero timeout, WNOHANG (each
   * excused by an "unless" condition of the libc pack alone). */
  if (pipe2(p, O_NONBLOCK) != 0)
    abort();
  for (int i = 0; i < 4; i++)
    if (read(p[0], buf, 1) != -1 || errno != EAGAIN)
      abort();
  if (write(p[1], buf, 1) != 1)
    abort();
  close(p[0]);
  close(p[1]);
  struct timeval zero = {0, 0};
  select(0, NULL, NULL, NULL, &zero);
  poll(NULL, 0, 0);
  waitpid(-1, NULL, WNOHANG);
  sleep(0);
  usleep(0);
  struct timespec none = {0, 0};
  nanosleep(&none, NULL);
  atomic_fetch_add(&counts_finished, 1);
  while (atomic_load(&counts_finished) < 2)
    ; /* spin: a blocking wait here would be counted */
  return NULL;
}

static int scenario_counts(void) {
  usleep(1000); /* 1 on main */
  run_workers(2, counts_worker);
  printf("done 1\n");
  return 0;
}

/* ---- locks: one contended mutex lock, one contended rdlock, one cond wait
 * per worker; 1000 uncontended lock/unlock pairs -------------------------- */

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t cond_mtx = PTHREAD_MUTEX_INITIALIZER;
static int go;

/* 1: about to lock mtx, 2: about to rdlock, 3: holds cond_mtx, about to
 * wait */
static atomic_int lock_step;

static void *locks_worker(void *arg) {
  name_self((int)(intptr_t)arg);
  atomic_store(&lock_step, 1);
  pthread_mutex_lock(&mtx); /* held by main: contended */
  pthread_mutex_unlock(&mtx);
  atomic_store(&lock_step, 2);
  pthread_rwlock_rdlock(&rw); /* write-held by main: contended */
  pthread_rwlock_unlock(&rw);
  pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;
  for (int i = 0; i < 1000; i++) {
    pthread_mutex_lock(&own);
    pthread_mutex_unlock(&own);
  }
  pthread_mutex_lock(&cond_mtx); /* may be contended: not asserted exactly */
  atomic_store(&lock_step, 3);
  while (!go)
    pthread_cond_wait(&cond, &cond_mtx);
  pthread_mutex_unlock(&cond_mtx);
  return NULL;
}

static int scenario_locks(void) {
  pthread_mutex_lock(&mtx);
  pthread_rwlock_wrlock(&rw);
  pthread_t th;
  pthread_create(&th, NULL, locks_worker, (void *)0);
  /* Release each lock only well after the worker went for it. */
  while (atomic_load(&lock_step) < 1)
    ;
  usleep(100000);
  pthread_mutex_unlock(&mtx);
  while (atomic_load(&lock_step) < 2)
    ;
  usleep(100000);
  pthread_rwlock_unlock(&rw);
  /* The worker holds cond_mtx from step 3 until its wait releases it, so
   * taking it here means the worker is inside pthread_cond_wait, however
   * slowly a loaded machine ran its 1000 pairs. */
  while (atomic_load(&lock_step) < 3)
    ;
  usleep(10000);
  pthread_mutex_lock(&cond_mtx);
  go = 1;
  pthread_cond_signal(&cond);
  pthread_mutex_unlock(&cond_mtx);
  pthread_join(th, NULL);
  printf("done 1\n");
  return 0;
}

/* ---- lone_locks: a process that never makes a thread. 1000 uncontended
 * pairs and a recursive mutex locked twice count nothing; an error-checking
 * mutex locked again (EDEADLK: held, by this thread) counts, and so does a
 * process-shared mutex that a child holds for 200 ms: 2 pthread_mutex_lock
 * on the main thread ------------------------------------------------------ */

static int scenario_lone_locks(void) {
  pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;
  for (int i = 0; i < 1000; i++) {
    pthread_mutex_lock(&own);
    pthread_mutex_unlock(&own);
  }
  pthread_mutexattr_t ma;
  pthread_mutexattr_init(&ma);
  pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
  pthread_mutex_t ec, rec;
  pthread_mutex_init(&ec, &ma);
  printf("errorcheck %d\n", pthread_mutex_lock(&ec));
  printf("errorcheck_again %d\n", pthread_mutex_lock(&ec)); /* EDEADLK */
  pthread_mutex_unlock(&ec);
  pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&rec, &ma);
  printf("recursive %d\n", pthread_mutex_lock(&rec));
  printf("recursive_again %d\n", pthread_mutex_lock(&rec));
  pthread_mutex_unlock(&rec);
  pthread_mutex_unlock(&rec);
  pthread_mutex_t *shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE,
                                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED)
    return 1;
  pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_NORMAL);
  pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
  pthread_mutex_init(shared, &ma);
  pthread_mutexattr_destroy(&ma);
  int held[2];
  if (pipe(held) != 0)
    return 1;
  pid_t pid = fork();
  if (pid == 0) {
    pthread_mutex_lock(shared);
    char c = 1;
    if (write(held[1], &c, 1) != 1)
      _exit(1);
    usleep(200000);
    pthread_mutex_unlock(shared);
    _exit(0);
  }
  char c;
  if (pid < 0 || read(held[0], &c, 1) != 1)
    return 1;
  printf("shared %d\n", pthread_mutex_lock(shared)); /* the child holds it */
  pthread_mutex_unlock(shared);
  int st;
  waitpid(pid, &st, 0);
  printf("child_status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  return 0;
}

/* ---- errno: every wrapped function's result, run on a worker ------------ */

#if defined(__x86_64__)
/* The pre-2.3.2 condition variable ABI, as an old binary links it: the
 * shim must forward to this version, not to the default one. */
int old_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                       const struct timespec *ts);
__asm__(".symver old_cond_timedwait, pthread_cond_timedwait@GLIBC_2.2.5");
int old_cond_destroy(pthread_cond_t *c); /* frees what the old ABI made */
__asm__(".symver old_cond_destroy, pthread_cond_destroy@GLIBC_2.2.5");
#endif

#define SHOW(name, expr)                                                       \
  do {                                                                         \
    errno = 0;                                                                 \
    long r_ = (long)(expr);                                                    \
    printf("%s %ld %d\n", name, r_, errno);                                    \
  } while (0)

static void *errno_worker(void *arg) {
  (void)arg;
  name_self(0);
  char buf[64];
  size_t n = sizeof buf;
  volatile size_t vn = n; /* not a constant: fortify uses __*_chk */
  struct iovec iov = {buf, sizeof buf};
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
  struct timespec bad = {0, 2000000000L}, zero = {0, 0}, past = {1, 0};
  struct timeval tv0 = {0, 0};
  SHOW("read", read(-1, buf, vn));
  SHOW("write", write(-1, buf, vn));
  SHOW("readv", readv(-1, &iov, 1));
  SHOW("writev", writev(-1, &iov, 1));
  SHOW("pread", pread(-1, buf, vn, 0));
  SHOW("pwrite", pwrite(-1, buf, vn, 0));
  SHOW("recv", recv(-1, buf, vn, 0));
  SHOW("send", send(-1, buf, vn, 0));
  SHOW("recvfrom", recvfrom(-1, buf, vn, 0, NULL, NULL));
  SHOW("sendto", sendto(-1, buf, vn, 0, NULL, 0));
  SHOW("recvmsg", recvmsg(-1, &mh, 0));
  SHOW("sendmsg", sendmsg(-1, &mh, 0));
  SHOW("accept", accept(-1, NULL, NULL));
  SHOW("accept4", accept4(-1, NULL, NULL, 0));
  SHOW("connect", connect(-1, NULL, 0));
  SHOW("fsync", fsync(-1));
  SHOW("fdatasync", fdatasync(-1));
  SHOW("flock", flock(-1, LOCK_EX));
  SHOW("lockf", lockf(-1, F_LOCK, 0));
  SHOW("nanosleep", nanosleep(&bad, NULL));
  SHOW("clock_nanosleep", clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, NULL));
  SHOW("usleep", usleep(1));
  SHOW("sleep", sleep(0));
  SHOW("select", select(-1, NULL, NULL, NULL, &tv0));
  SHOW("pselect", pselect(-1, NULL, NULL, NULL, &bad, NULL));
  SHOW("poll", poll(NULL, 0, 1));
  SHOW("ppoll", ppoll(NULL, 0, &bad, NULL));
  struct epoll_event ev;
  SHOW("epoll_wait", epoll_wait(-1, &ev, 1, 1));
  SHOW("epoll_pwait", epoll_pwait(-1, &ev, 1, 1, NULL));
  SHOW("wait", wait(NULL));
  SHOW("waitpid", waitpid(-1, NULL, 0));
  siginfo_t si;
  SHOW("waitid", waitid(P_ALL, 0, &si, WEXITED));
  SHOW("msgrcv", msgrcv(-1, buf, 8, 0, 0));
  SHOW("msgsnd", msgsnd(-1, buf, 8, 0));
  sem_t sem;
  sem_init(&sem, 0, 1);
  SHOW("sem_wait", sem_wait(&sem));
  SHOW("sem_timedwait", sem_timedwait(&sem, &bad));
  pthread_mutex_t ec;
  pthread_mutexattr_t ma;
  pthread_mutexattr_init(&ma);
  pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
  pthread_mutex_init(&ec, &ma);
  SHOW("mutex_lock", pthread_mutex_lock(&ec));
  SHOW("mutex_lock_again", pthread_mutex_lock(&ec)); /* EDEADLK */
  pthread_cond_t c = PTHREAD_COND_INITIALIZER;
  SHOW("cond_timedwait", pthread_cond_timedwait(&c, &ec, &past));
  SHOW("cond_clockwait",
       pthread_cond_clockwait(&c, &ec, CLOCK_MONOTONIC, &zero));
#if defined(__x86_64__)
  pthread_cond_t oldc = PTHREAD_COND_INITIALIZER;
  SHOW("cond_timedwait_old", old_cond_timedwait(&oldc, &ec, &past));
  old_cond_destroy(&oldc);
#endif
  pthread_mutex_unlock(&ec);
  pthread_rwlock_t rwl = PTHREAD_RWLOCK_INITIALIZER;
  SHOW("rwlock_wrlock", pthread_rwlock_wrlock(&rwl));
  SHOW("rwlock_wrlock_again", pthread_rwlock_wrlock(&rwl));
  SHOW("rwlock_rdlock", pthread_rwlock_rdlock(&rwl));
  struct timespec abs_past = {0, 0};
  pthread_mutex_t tm = PTHREAD_MUTEX_INITIALIZER;
  SHOW("mutex_timedlock", pthread_mutex_timedlock(&tm, &abs_past));
  SHOW("mutex_timedlock_held", pthread_mutex_timedlock(&tm, &abs_past));
  SHOW("mutex_clocklock_held",
       pthread_mutex_clocklock(&tm, CLOCK_MONOTONIC, &abs_past));
  pthread_mutex_unlock(&tm);
  SHOW("rwlock_timedrdlock_held", pthread_rwlock_timedrdlock(&rwl, &abs_past));
  pthread_spinlock_t spin;
  pthread_spin_init(&spin, 0);
  SHOW("spin_lock", pthread_spin_lock(&spin));
  pthread_spin_unlock(&spin);
  SHOW("sem_clockwait", sem_clockwait(&sem, CLOCK_MONOTONIC, &abs_past));
  SHOW("semop", semop(-1, NULL, 0));
  sigset_t none;
  sigemptyset(&none);
  SHOW("sigtimedwait", sigtimedwait(&none, NULL, &zero));
  SHOW("wait3", wait3(NULL, 0, NULL));
  SHOW("wait4", wait4(-1, NULL, WNOHANG, NULL));
  SHOW("syncfs", syncfs(-1));
  SHOW("gethostbyaddr", gethostbyaddr(NULL, 0, 12345) == NULL);
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, 1);
  SHOW("barrier_wait", pthread_barrier_wait(&bar));
#if !defined(__SANITIZE_THREAD__) /* TSan's join of itself corrupts it */
  SHOW("join_self", pthread_join(pthread_self(), NULL));
#endif
  SHOW("sched_yield", sched_yield());
  struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV};
  struct addrinfo *res = NULL;
  SHOW("getaddrinfo", getaddrinfo("not-an-address", "1", &hints, &res));
  SHOW("system", system(NULL) != 0);
  SHOW("system_exit3", system("exit 3"));
  FILE *p = popen("printf 'x\\ny\\n'; exit 2", "r");
  SHOW("popen", p != NULL);
  SHOW("fgets", fgets(buf, (int)vn, p) != NULL);
  SHOW("getc", getc(p));
  SHOW("fgetc", fgetc(p));
  SHOW("fread", fread(buf, 1, vn, p));
  SHOW("pclose", pclose(p));
  FILE *f = tmpfile();
  SHOW("fgets_eof", fgets(buf, (int)vn, f) != NULL);
  SHOW("fgets_unlocked_eof", fgets_unlocked(buf, (int)vn, f) != NULL);
  SHOW("getc_unlocked_eof", getc_unlocked(f));
  char *line = NULL;
  size_t cap = 0;
  SHOW("getdelim_eof", getdelim(&line, &cap, ',', f));
  SHOW("getline_eof", getline(&line, &cap, f));
  free(line);
  fclose(f);
  return NULL;
}

static int scenario_errno(void) {
  run_workers(1, errno_worker);
  return 0;
}

/* ---- fork: parent worker 3 usleeps; child main 5 usleeps ---------------- */

static void *three_sleeps(void *arg) {
  name_self((int)(intptr_t)arg);
  for (int i = 0; i < 3; i++)
    usleep(1000);
  return NULL;
}

static int scenario_fork(void) {
  run_workers(1, three_sleeps);
  pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; i < 5; i++)
      usleep(1000);
    exit(0);
  }
  int st;
  waitpid(pid, &st, 0);
  printf("child %d\n", (int)pid);
  printf("child_status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  return 0;
}

/* ---- vfork: the child's _exit runs in our memory and must not use up the
 * parent's report; parent: 3 worker usleeps, 1 join, 1 waitpid ----------- */

static int scenario_vfork(void) {
  pid_t pid = vfork();
  if (pid == 0)
    _exit(5);
  int st;
  waitpid(pid, &st, 0);
  run_workers(1, three_sleeps);
  printf("child_status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  return 0;
}

/* ---- exec: two sleeps, then the same pid becomes the counts scenario ---- */

static int scenario_exec(const char *self) {
  usleep(1000);
  usleep(1000);
  printf("pid %d\n", (int)getpid());
  fflush(stdout);
  execl(self, self, "counts", (char *)NULL);
  return 127;
}

/* ---- signal: SIGUSR2 interim report; EINTR kept -------------------------- */

static atomic_int intr_done;

static void on_usr1(int sig) {
  (void)sig;
}

static void *intr_worker(void *arg) {
  name_self((int)(intptr_t)arg);
  for (int i = 0; i < 3; i++)
    usleep(1000);
  struct timespec ts = {20, 0};
  errno = 0;
  int r = nanosleep(&ts, NULL); /* interrupted by SIGUSR1 */
  printf("nanosleep %d %s\n", r, errno == EINTR ? "EINTR" : "other");
  atomic_store(&intr_done, 1);
  return NULL;
}

static int scenario_signal(const char *report_path) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1; /* no SA_RESTART: nanosleep returns EINTR */
  sigaction(SIGUSR1, &sa, NULL);
  pthread_t th;
  pthread_create(&th, NULL, intr_worker, (void *)0);
  while (!atomic_load(&intr_done)) {
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL);
    if (!atomic_load(&intr_done))
      pthread_kill(th, SIGUSR1);
  }
  pthread_join(th, NULL);
  raise(SIGUSR2); /* the shim writes an interim report */
  char interim[600];
  snprintf(interim, sizeof interim, "%s.interim", report_path);
  printf("renamed %d\n", rename(report_path, interim));
  return 0;
}

/* ---- exits -------------------------------------------------------------- */

static int scenario_exit(const char *how) {
  run_workers(1, three_sleeps);
  fflush(stdout);
  if (strcmp(how, "_exit") == 0)
    _exit(7);
  if (strcmp(how, "_Exit") == 0)
    _Exit(8);
  if (strcmp(how, "abort") == 0)
    abort();
  return 9;
}

/* ---- fdreuse: a descriptor closed inside libc (fclose) whose number comes
 * back non-blocking from a creator the shim does not wrap (eventfd): the
 * cached "blocking" answer must be gone. Counted: 1 write, 1 read. -------- */

static void *fdreuse_worker(void *arg) {
  name_self((int)(intptr_t)arg);
  int p[2];
  if (pipe(p) != 0)
    abort();
  char c = 'x';
  if (write(p[1], &c, 1) != 1 || read(p[0], &c, 1) != 1)
    abort();
  int old = p[0];
  fclose(fdopen(p[0], "r"));
  int efd = eventfd(0, EFD_NONBLOCK);
  uint64_t v;
  ssize_t r = read(efd, &v, sizeof v); /* EAGAIN: must not count */
  printf("reused %d\n", efd == old);
  printf("eagain %d\n", r == -1 && errno == EAGAIN);
  close(efd);
  close(p[1]);
  return NULL;
}

static int scenario_fdreuse(void) {
  pthread_t th;
  pthread_create(&th, NULL, fdreuse_worker, (void *)0);
  pthread_join(th, NULL);
  return 0;
}

/* ---- hang: a worker stuck in sleep(30) when SIGTERM ends the program --- */

static atomic_int stuck_ready;

static void *stuck_worker(void *arg) {
  name_self((int)(intptr_t)arg);
  atomic_store(&stuck_ready, 1);
  sleep(30);
  return NULL;
}

static int scenario_hang(void) {
  pthread_t th;
  pthread_create(&th, NULL, stuck_worker, (void *)0);
  while (!atomic_load(&stuck_ready))
    ; /* spin: main's calls are not what this scenario counts */
  struct timespec ts = {0, 300000000};
  nanosleep(&ts, NULL);
  raise(SIGTERM); /* the shim reports, then the default action kills us */
  return 3;
}

/* ---- closed stderr: descriptor 2 reused for a file of the program ------- */

static int scenario_closed_stderr(const char *file) {
  close(2);
  int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  printf("fd %d\n", fd);
  run_workers(1, three_sleeps);
  return 0;
}

/* ---- torture: many threads, many calls, a fork in the middle ----------- */

enum { TORTURE_THREADS = 8, TORTURE_CALLS = 40000 };
static int devnull;
static atomic_int torture_started;

static void *torture_worker(void *arg) {
  name_self((int)(intptr_t)arg);
  char c = 0;
  atomic_fetch_add(&torture_started, 1);
  for (int i = 0; i < TORTURE_CALLS; i++)
    if (write(devnull, &c, 1) != 1)
      abort();
  return NULL;
}

static int scenario_torture(void) {
  devnull = open("/dev/null", O_WRONLY);
  pthread_t th[TORTURE_THREADS];
  for (intptr_t i = 0; i < TORTURE_THREADS; i++)
    pthread_create(&th[i], NULL, torture_worker, (void *)i);
  while (atomic_load(&torture_started) < TORTURE_THREADS)
    sched_yield();
  pid_t pid = fork();
  if (pid == 0) {
    usleep(1000);
    _exit(0);
  }
  int st = -1;
  waitpid(pid, &st, 0);
  for (int i = 0; i < TORTURE_THREADS; i++)
    pthread_join(th[i], NULL);
  printf("calls %d\n", TORTURE_THREADS * TORTURE_CALLS);
  printf("child %d\n", (int)pid);
  printf("child_status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  return 0;
}

/* ---- signal storm: SIGUSR2 (interim reports) sent to workers while they
 * make counted calls: no deadlock, no lost count ----------------------- */

enum { STORM_THREADS = 4, STORM_CALLS = 150000 };
static atomic_int storm_done;

static void *storm_worker(void *arg) {
  name_self((int)(intptr_t)arg);
  char c = 0;
  for (int i = 0; i < STORM_CALLS; i++)
    if (write(devnull, &c, 1) != 1)
      abort();
  atomic_fetch_add(&storm_done, 1);
  return NULL;
}

static int scenario_storm(void) {
  devnull = open("/dev/null", O_WRONLY);
  pthread_t th[STORM_THREADS];
  for (intptr_t i = 0; i < STORM_THREADS; i++)
    pthread_create(&th[i], NULL, storm_worker, (void *)i);
  int sent = 0;
  for (int k = 0; atomic_load(&storm_done) < STORM_THREADS; k++) {
    if (atomic_load(&storm_done) == 0) {
      pthread_kill(th[k % STORM_THREADS], SIGUSR2);
      sent++;
    }
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  for (int i = 0; i < STORM_THREADS; i++)
    pthread_join(th[i], NULL);
  printf("calls %d\n", STORM_THREADS * STORM_CALLS);
  printf("signals %d\n", sent);
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc < 2)
    return 2;
  const char *s = argv[1];
  const char *arg = argc > 2 ? argv[2] : "";
  if (strcmp(s, "counts") == 0)
    return scenario_counts();
  if (strcmp(s, "locks") == 0)
    return scenario_locks();
  if (strcmp(s, "lone_locks") == 0)
    return scenario_lone_locks();
  if (strcmp(s, "errno") == 0)
    return scenario_errno();
  if (strcmp(s, "fork") == 0)
    return scenario_fork();
  if (strcmp(s, "vfork") == 0)
    return scenario_vfork();
  if (strcmp(s, "exec") == 0)
    return scenario_exec(argv[0]);
  if (strcmp(s, "signal") == 0)
    return scenario_signal(arg);
  if (strcmp(s, "exit") == 0)
    return scenario_exit(arg);
  if (strcmp(s, "fdreuse") == 0)
    return scenario_fdreuse();
  if (strcmp(s, "hang") == 0)
    return scenario_hang();
  if (strcmp(s, "closed_stderr") == 0)
    return scenario_closed_stderr(arg);
  if (strcmp(s, "storm") == 0)
    return scenario_storm();
  if (strcmp(s, "torture") == 0)
    return scenario_torture();
  if (strcmp(s, "idle") == 0)
    return 0;
  return 2;
}
