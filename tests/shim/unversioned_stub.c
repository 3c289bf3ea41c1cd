/* unversioned_stub.c - defines pthread_cond_wait and pthread_cond_timedwait
 * without a symbol version, as a sanitizer runtime (libtsan, libasan) does.
 * A program linked against it refers to the two functions unversioned, and
 * the dynamic linker binds an unversioned reference to the preloaded shim
 * by its own rule (the definition whose version index is 2), not to the
 * default version. Each forwards to glibc's current condition variables.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

static void *glibc_current(const char *name) {
  return dlvsym(RTLD_NEXT, name, "GLIBC_2.3.2");
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
  int (*fn)(pthread_cond_t *, pthread_mutex_t *);
  void *p = glibc_current("pthread_cond_wait");
  memcpy(&fn, &p, sizeof fn);
  return fn(c, m);
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                           const struct timespec *ts) {
  int (*fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
  void *p = glibc_current("pthread_cond_timedwait");
  memcpy(&fn, &p, sizeof fn);
  return fn(c, m, ts);
}
