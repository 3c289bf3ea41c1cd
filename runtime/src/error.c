/* error.c - bw_strerror: one table naming every error the runtime returns.
 *
 * The runtime returns negative errno values; this table gives them the
 * meaning they have in this API (which is narrower than strerror's). */
#include <errno.h>
#include <string.h>

#include "blockwatch/runtime.h"

#define BW_ERRNO_MAP(X)                                                        \
  X(0, "success")                                                              \
  X(EINVAL, "invalid argument")                                                \
  X(ENOMEM, "out of memory")                                                   \
  X(EAGAIN, "could not start a thread")                                        \
  X(ESHUTDOWN, "pool is being destroyed")                                      \
  X(ETIMEDOUT, "wait timed out")                                               \
  X(ECANCELED, "task or wait was canceled")                                    \
  X(EDEADLK, "wait would deadlock (waiting on itself)")                        \
  X(EALREADY, "task already completed")                                        \
  X(EPERM, "operation not allowed on this task or thread")                     \
  X(EBUSY, "an observer is already registered")

const char *bw_strerror(int err) {
  if (err < 0)
    err = -err;
  switch (err) {
#define BW_ERRNO_CASE(code, text)                                              \
  case code:                                                                   \
    return text;
    BW_ERRNO_MAP(BW_ERRNO_CASE)
#undef BW_ERRNO_CASE
  default:
    return "unknown error";
  }
}
