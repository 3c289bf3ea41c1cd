/* cpu_spread.c - moves the calling thread off one CPU, for a helper that
 * the scheduler woke on the CPU of the thread it came to help; and the
 * runtime's own yield, by which a caller lets such a helper run.
 *
 * Why: when Linux judges the last-level cache busy it may skip the search
 * for an idle CPU and place a woken thread on the waker's CPU. A parallel
 * loop's helper placed there shares that CPU with its caller, who computes
 * without yielding, and runs nothing until the caller is preempted or the
 * load balancer moves it, milliseconds later, while another CPU idles
 * (measured on a 2-CPU KVM guest: a third of the loops ran on the caller
 * alone). Leaving the CPU out of the thread's mask makes the kernel move
 * it at once; putting the mask back does not move it again.
 *
 * Invariants: the thread's affinity mask is the same after the call as
 * before (a mask that has no other CPU is not touched); nothing allocates.
 * A mask that another thread sets for this one between the two system
 * calls is overwritten by the one read first: a program that pins a pool's
 * workers should do so before it runs parallel loops on them.
 */
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

int bwrt__leave_cpu(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getcpu() != cpu)
    return 0;
  cpu_set_t mine, away;
  if (sched_getaffinity(0, sizeof mine, &mine) != 0)
    return 0;
  away = mine;
  CPU_CLR(cpu, &away);
  if (CPU_COUNT(&away) == 0)
    return 0;
  if (sched_setaffinity(0, sizeof away, &away) != 0)
    return 0;
  (void)sched_setaffinity(0, sizeof mine, &mine);
  return 1;
}

_Thread_local unsigned long bwrt__tls_yields;

void bwrt__yield(void) {
  bwrt__tls_yields++;
  (void)syscall(SYS_sched_yield);
}
