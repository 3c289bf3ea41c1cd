/* modules.c - which code is the program's own: the address ranges of the
 * libraries a call site is never filed under (libc, the pool and loop
 * libraries, sanitizer runtimes, the shim and the bundled runtime).
 *
 * Invariants:
 *  - The table only grows: a range is appended under `scanning` and
 *    published by the release store of `count`; readers take no lock and
 *    see a prefix of the table. A library unloaded later keeps its range
 *    (its addresses are not reused by program code often enough to pay a
 *    removal protocol for).
 *  - A scan walks the loader's list (dl_iterate_phdr, which takes the
 *    loader's lock): it runs at start and when a new call site is about to
 *    be claimed (a library loaded since may hold its caller), never on the
 *    path of a call whose site is known. After a fork the table holds.
 *  - The program itself (the module with an empty name) is never a system
 *    module, so a program that links libuv statically files its sites
 *    under libuv's code: the names are all there is to go by.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shim.h"

#include <link.h>
#include <string.h>

#define MAX_RANGES 96

typedef struct range {
  uintptr_t lo, hi;
  int kind; /* BW_CODE_LIBRARY or BW_CODE_INTERPOSER */
} range;

static range ranges[MAX_RANGES];
static atomic_int count;
static atomic_int scanning;

/* Libraries whose frames are the means of a blocking call, not its
 * cause: a call site is the first frame below them. Prefixes of the file
 * name, so every soname version matches; the first match wins, so the
 * runtime comes before the shim. The interposers (sanitizer runtimes, the
 * shim) stand between the program and the function it called, so they are
 * never the `via` of a site either. */
typedef struct lib_name {
  const char *prefix;
  int kind;
} lib_name;

#define LIB(p)                                                                 \
  { p, BW_CODE_LIBRARY }
#define INTERPOSER(p)                                                          \
  { p, BW_CODE_INTERPOSER }
static const lib_name system_libs[] = {
    LIB("libc.so"),
    LIB("libc-"),
    LIB("libpthread"),
    LIB("libm.so"),
    LIB("librt.so"),
    LIB("libdl.so"),
    LIB("ld-linux"),
    LIB("libstdc++"),
    LIB("libgcc_s"),
    LIB("libuv.so"),
    LIB("libglib-2.0"),
    LIB("libgio-2.0"),
    LIB("libgobject-2.0"),
    LIB("libgthread-2.0"),
    LIB("libevent"),
    LIB("libgomp"),
    LIB("libtbb"),
    LIB("libblockwatch-runtime"),
    INTERPOSER("libblockwatch"),
    INTERPOSER("libasan"),
    INTERPOSER("libtsan"),
    INTERPOSER("libubsan"),
    INTERPOSER("liblsan"),
    INTERPOSER("libclang_rt."),
};
#undef LIB
#undef INTERPOSER

/* The kind of code of the module at path (BW_CODE_PROGRAM: none of the
 * above). */
static int kind_of_name(const char *path) {
  if (path == NULL || path[0] == '\0')
    return BW_CODE_PROGRAM;
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  for (size_t i = 0; i < sizeof system_libs / sizeof system_libs[0]; i++) {
    const char *p = system_libs[i].prefix;
    if (strncmp(base, p, strlen(p)) == 0)
      return system_libs[i].kind;
  }
  return BW_CODE_PROGRAM;
}

static int known(uintptr_t lo, int n) {
  for (int i = 0; i < n; i++)
    if (ranges[i].lo == lo)
      return 1;
  return 0;
}

static int add_module(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  int kind = kind_of_name(info->dlpi_name);
  if (kind == 0)
    return 0;
  int n = atomic_load_explicit(&count, memory_order_relaxed);
  for (int i = 0; i < info->dlpi_phnum && n < MAX_RANGES; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
      continue;
    uintptr_t lo = (uintptr_t)info->dlpi_addr + ph->p_vaddr;
    if (known(lo, n))
      continue;
    ranges[n].lo = lo;
    ranges[n].hi = lo + ph->p_memsz;
    ranges[n].kind = kind;
    n++;
    atomic_store_explicit(&count, n, memory_order_release);
  }
  return 0;
}

void bwsh__modules_scan(void) {
  if (atomic_exchange_explicit(&scanning, 1, memory_order_acquire))
    return; /* another thread is at it: its table is good enough */
  dl_iterate_phdr(add_module, NULL);
  atomic_store_explicit(&scanning, 0, memory_order_release);
}

int bwsh__code_kind(const void *pc) {
  uintptr_t a = (uintptr_t)pc;
  int n = atomic_load_explicit(&count, memory_order_acquire);
  for (int i = 0; i < n; i++)
    if (a >= ranges[i].lo && a < ranges[i].hi)
      return ranges[i].kind;
  return BW_CODE_PROGRAM;
}
