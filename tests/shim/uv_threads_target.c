/* uv_threads_target - libuv programs that block nowhere but in libuv's
 * own pool with no uv_queue_work (uv_pool_target's "clean" is the one with
 * it), for the pool-thread tests (test_pool_threads.c).
 *
 * Invariants: "fs" starts the pool with file system requests only (uv_fs_open,
 * _write, _read, _close with callbacks: they run on the pool) on a file in the
 * directory argv[2]; "dns" with one
 * uv_getaddrinfo of "localhost"; "own" starts a thread of its own with
 * uv_thread_create that makes one blocking call (usleep), joins it, and
 * makes the "dns" request too. Each prints "done N" (requests finished)
 * and exits 0 when all finished.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

static int done, want;

/* ---- fs: open, write, read back, close, each from the last's callback -- */

static uv_fs_t fs_req;
static char path[512], data[] = "pool", back[sizeof data];
static uv_buf_t buf;

static void fs_closed(uv_fs_t *req) {
  uv_fs_req_cleanup(req);
  done++;
}

static void fs_read(uv_fs_t *req) {
  int fd = (int)(intptr_t)req->data;
  uv_fs_req_cleanup(req);
  done++;
  uv_fs_close(req->loop, &fs_req, fd, fs_closed);
}

static void fs_written(uv_fs_t *req) {
  int fd = (int)(intptr_t)req->data;
  uv_fs_req_cleanup(req);
  done++;
  buf = uv_buf_init(back, sizeof back);
  fs_req.data = (void *)(intptr_t)fd;
  uv_fs_read(req->loop, &fs_req, fd, &buf, 1, 0, fs_read);
}

static void fs_opened(uv_fs_t *req) {
  int fd = (int)req->result;
  uv_fs_req_cleanup(req);
  done++;
  if (fd < 0)
    return;
  buf = uv_buf_init(data, sizeof data);
  fs_req.data = (void *)(intptr_t)fd;
  uv_fs_write(req->loop, &fs_req, fd, &buf, 1, 0, fs_written);
}

/* ---- dns ---------------------------------------------------------------- */

static uv_getaddrinfo_t dns_req;

static void resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res) {
  (void)req;
  if (status == 0)
    uv_freeaddrinfo(res);
  done++;
}

/* ---- own: the program's own thread -------------------------------------- */

static void own_thread(void *arg) {
  (void)arg;
  usleep(20 * 1000);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "dns";
  uv_loop_t *loop = uv_default_loop();
  if (strcmp(mode, "fs") == 0) {
    const char *dir = argc > 2 ? argv[2] : ".";
    snprintf(path, sizeof path, "%s/uv_threads.%d", dir, (int)getpid());
    uv_fs_open(loop, &fs_req, path, O_RDWR | O_CREAT | O_TRUNC, 0600,
               fs_opened);
    want = 4;
  } else if (strcmp(mode, "dns") == 0) {
    uv_getaddrinfo(loop, &dns_req, resolved, "localhost", NULL, NULL);
    want = 1;
  } else if (strcmp(mode, "own") == 0) {
    uv_thread_t t;
    if (uv_thread_create(&t, own_thread, NULL) != 0)
      return 2;
    uv_getaddrinfo(loop, &dns_req, resolved, "localhost", NULL, NULL);
    want = 1;
    uv_thread_join(&t);
  }
  uv_run(loop, UV_RUN_DEFAULT);
  if (path[0])
    unlink(path);
  printf("done %d\n", done);
  return done == want ? 0 : 1;
}
