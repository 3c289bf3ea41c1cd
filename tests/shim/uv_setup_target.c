/* uv_setup_target - a main thread that blocks once, then starts libuv's
 * default loop, then blocks once more, for test_uv_setup.c.
 *
 * Invariants: the program's own blocking calls are the two usleep()s on the
 * main thread; the rest that could block (the signal lock's pipe, written
 * in libuv's one-time setup under uv_once) is libuv's. Prints "done 1" and
 * exits 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <unistd.h>
#include <uv.h>

int main(void) {
  usleep(1000); /* classifies the main thread before libuv runs at all */
  uv_loop_t *loop = uv_default_loop();
  uv_run(loop, UV_RUN_DEFAULT);
  uv_loop_close(loop);
  usleep(1000); /* the program's, after libuv: still counted */
  printf("done 1\n");
  return 0;
}
